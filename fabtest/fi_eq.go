package fabtest

import (
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// eqCases lists the fi_eq(3) behaviours, in the order they run.
var eqCases = []testCase{
	{"fi_eq/write_read_peek_readerr", eqWriteReadPeekReaderr},
	{"fi_eq/open_close_sizes", eqOpenCloseSizes},
	{"fi_eq/write_peek_alternation_fifo_fid_context", eqWritePeekAlternationFifoFidContext},
	{"fi_eq/size_holds_size_events_then_EOVERRUN", eqSizeHoldsSizeEventsThenEOVERRUN},
	{"fi_eq/sread_timeout_immediate_peek_infinite", eqSreadTimeoutImmediatePeekInfinite},
	{"fi_eq/wait_none_blocking_calls_fail_at_once", eqWaitNoneBlockingCallsFailAtOnce},
	{"fi_eq/wait_fd_trywait_and_readiness", eqWaitFdTrywaitAndReadiness},
}

func eqWriteReadPeekReaderr(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	eq, err := e.fab.OpenEQ(&fabric.EQAttr{Size: 8, WaitObj: fabric.WaitUnspec})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { eq.Close() }()
	if err := eq.Write(&fabric.EQEntry{Event: fabric.EventNotify}); err == nil {
		t.Fatal("fi_eq_write accepted on an EQ opened without FI_WRITE")
	}
	eq.Close()
	eq, err = e.fab.OpenEQ(&fabric.EQAttr{Size: 8, WaitObj: fabric.WaitUnspec, Flags: fabric.FlagWrite})
	if err != nil {
		t.Fatal(err)
	}
	ctx := new(int)
	for i := 0; i < 3; i++ {
		if err := eq.Write(&fabric.EQEntry{Event: fabric.EventNotify, Context: ctx, Data: uint64(i)}); err != nil {
			t.Fatalf("eq write: %v", err)
		}
	}
	p, err := eq.Read(fabric.FlagPeek)
	if err != nil || p.Data != 0 {
		t.Fatalf("peek: %+v %v", p, err)
	}
	for i := 0; i < 3; i++ {
		ev, err := eq.Read(0)
		if err != nil || ev.Event != fabric.EventNotify || ev.Context != ctx || ev.Data != uint64(i) {
			t.Fatalf("eq read %d: %+v %v", i, ev, err)
		}
	}
	_, err = eq.Read(0)
	isErr(t, "empty eq", err, fabric.ErrAgain)
	err = eq.ReadErr(&fabric.EQErrEntry{})
	isErr(t, "empty eq readerr", err, fabric.ErrAgain)
}

func eqOpenCloseSizes(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	for size := uint64(1); size <= 65536; size *= 2 {
		for _, w := range []fabric.WaitObj{fabric.WaitUnspec, fabric.WaitNone} {
			q, err := e.fab.OpenEQ(&fabric.EQAttr{Size: size, WaitObj: w})
			if err != nil {
				t.Fatalf("fi_eq_open(size %d, wait %v): %v", size, w, err)
			}
			if got := q.Attr().Size; got < size {
				t.Fatalf("EQ size %d reported as %d", size, got)
			}
			if err := q.Close(); err != nil {
				t.Fatalf("close size %d: %v", size, err)
			}
		}
	}
}

func eqWritePeekAlternationFifoFidContext(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	q := e.openEQ(&fabric.EQAttr{Size: 8, WaitObj: fabric.WaitUnspec, Flags: fabric.FlagWrite})
	ctxs := make([]*int, 5)
	for i := range ctxs {
		ctxs[i] = new(int)
		if err := q.Write(&fabric.EQEntry{Event: fabric.EventNotify, FID: e.fab, Context: ctxs[i], Data: uint64(i)}); err != nil {
			t.Fatalf("fi_eq_write %d: %v", i, err)
		}
	}
	for i := 0; i < 10; i++ {
		flags := fabric.Flags(0)
		if i%2 == 0 {
			flags = fabric.FlagPeek
		}
		ev, err := q.Read(flags)
		k := i / 2
		if err != nil || ev.Event != fabric.EventNotify || ev.FID != e.fab || ev.Context != ctxs[k] || ev.Data != uint64(k) {
			t.Fatalf("read %d (flags %v): %+v %v; want event %d", i, flags, ev, err, k)
		}
	}
	_, err := q.Read(0)
	isErr(t, "read of a drained EQ", err, fabric.ErrAgain)
	_, err = q.Read(fabric.FlagPeek)
	isErr(t, "peek of a drained EQ", err, fabric.ErrAgain)
	isErr(t, "readerr with no error", q.ReadErr(&fabric.EQErrEntry{}), fabric.ErrAgain)
	_, err = q.Read(fabric.FlagRecv)
	isErr(t, "read with a bad flag", err, fabric.ErrBadFlags)
}

func eqSizeHoldsSizeEventsThenEOVERRUN(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	const size = 32
	q := e.openEQ(&fabric.EQAttr{Size: size, Flags: fabric.FlagWrite})
	for i := 0; i < size; i++ {
		if err := q.Write(&fabric.EQEntry{Event: fabric.EventNotify, Data: uint64(i)}); err != nil {
			t.Fatalf("write %d of %d: %v", i, size, err)
		}
	}
	isErr(t, "write beyond the size", q.Write(&fabric.EQEntry{Event: fabric.EventNotify}), fabric.ErrOverrun)
	for i := 0; i < size; i++ {
		ev, err := q.Read(0)
		if err != nil || ev.Data != uint64(i) {
			t.Fatalf("read %d after overrun: %+v %v", i, ev, err)
		}
	}
	_, err := q.Read(0)
	isErr(t, "read after draining an overrun EQ", err, fabric.ErrOverrun)
}

func eqSreadTimeoutImmediatePeekInfinite(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	q := e.openEQ(&fabric.EQAttr{WaitObj: fabric.WaitUnspec, Flags: fabric.FlagWrite})
	start := time.Now()
	_, err := q.SRead(100*time.Millisecond, 0)
	el := time.Since(start)
	isErr(t, "sread on an empty EQ", err, fabric.ErrAgain)
	if el < 75*time.Millisecond || el > scaled(time.Second) {
		t.Fatalf("sread(100 ms) returned after %v", el)
	}
	if err := q.Write(&fabric.EQEntry{Event: fabric.EventNotify, Data: 7}); err != nil {
		t.Fatal(err)
	}
	for _, flags := range []fabric.Flags{fabric.FlagPeek, fabric.FlagPeek, 0} {
		start = time.Now()
		ev, err := q.SRead(2*time.Second, flags)
		if err != nil || ev.Data != 7 {
			t.Fatalf("sread(flags %v) with an event queued: %+v %v", flags, ev, err)
		}
		if el := time.Since(start); el > scaled(100*time.Millisecond) {
			t.Fatalf("sread with an event queued took %v", el)
		}
	}
	_, err = q.Read(0)
	isErr(t, "read after the consuming sread", err, fabric.ErrAgain)
	// A negative timeout waits until an event arrives.
	go func() {
		time.Sleep(20 * time.Millisecond)
		q.Write(&fabric.EQEntry{Event: fabric.EventNotify, Data: 8})
	}()
	done := make(chan error, 1)
	go func() {
		ev, err := q.SRead(-1, 0)
		if err == nil && ev.Data != 8 {
			err = errors.New("wrong event")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sread(-1): %v", err)
		}
	case <-time.After(scaled(5 * time.Second)):
		t.Fatal("sread(-1) did not wake for a written event")
	}
}

func eqWaitNoneBlockingCallsFailAtOnce(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	q := e.openEQ(&fabric.EQAttr{WaitObj: fabric.WaitNone})
	start := time.Now()
	if _, err := q.SRead(time.Second, 0); err == nil || errors.Is(err, fabric.ErrAgain) {
		t.Fatalf("fi_eq_sread on FI_WAIT_NONE: %v; want an error other than a timeout", err)
	}
	cq := e.openCQ(&fabric.CQAttr{WaitObj: fabric.WaitNone})
	if _, err := cq.SRead(make([]fabric.CQEntry, 1), 0, time.Second); err == nil || errors.Is(err, fabric.ErrAgain) {
		t.Fatalf("fi_cq_sread on FI_WAIT_NONE: %v; want an error other than a timeout", err)
	}
	if c, err := e.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitNone}); supported(t, "fi_cntr_open(FI_WAIT_NONE)", err) {
		defer c.Close()
		if err := c.Wait(1, time.Second); err == nil || errors.Is(err, fabric.ErrTimedOut) {
			t.Fatalf("fi_cntr_wait on FI_WAIT_NONE: %v; want an error other than a timeout", err)
		}
	}
	if el := time.Since(start); el > scaled(200*time.Millisecond) {
		t.Fatalf("blocking calls on FI_WAIT_NONE objects took %v", el)
	}
}

func eqWaitFdTrywaitAndReadiness(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	q, err := e.fab.OpenEQ(&fabric.EQAttr{WaitObj: fabric.WaitFD, Flags: fabric.FlagWrite})
	skipIfNotSupported(t, "fi_eq_open with FI_WAIT_FD", err)
	defer q.Close()
	fd, err := q.WaitFD()
	if err != nil || fd < 0 {
		t.Fatalf("FI_GETWAIT: %d %v", fd, err)
	}
	if err := q.TryWait(); err != nil {
		t.Fatalf("fi_trywait on an empty EQ: %v", err)
	}
	if r, ok := fdReadable(fd); ok && r {
		t.Fatal("wait fd readable on an empty EQ after fi_trywait")
	}
	if err := q.Write(&fabric.EQEntry{Event: fabric.EventNotify}); err != nil {
		t.Fatal(err)
	}
	if r, ok := fdReadable(fd); ok && !r {
		t.Fatal("wait fd not readable after fi_eq_write")
	}
	isErr(t, "fi_trywait with an event queued", q.TryWait(), fabric.ErrAgain)
	none := e.openEQ(&fabric.EQAttr{WaitObj: fabric.WaitNone})
	if _, err := none.WaitFD(); err == nil {
		t.Fatal("FI_GETWAIT on a FI_WAIT_NONE EQ succeeded")
	}
}

// openEQ opens an EQ on e's fabric, closed at cleanup.
func (e *env) openEQ(attr *fabric.EQAttr) *fabric.EQ {
	e.t.Helper()
	q, err := e.fab.OpenEQ(attr)
	if err != nil {
		e.t.Fatalf("OpenEQ(%+v): %v", attr, err)
	}
	e.t.Cleanup(func() { closeOK(e.t, "eq", q.Close()) })
	return q
}
