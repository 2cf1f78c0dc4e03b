package fabric

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Methods of nil CQ, Cntr and EQ pointers return ErrInval (or a zero
// value) and never panic.
func TestWaitableNilReceivers(t *testing.T) {
	ctx := context.Background()
	ent := make([]CQEntry, 1)
	var cq *CQ
	var cntr *Cntr
	var eq *EQ
	errs := map[string]error{
		"CQ.Read":             second(cq.Read(ent)),
		"CQ.ReadFrom":         second(cq.ReadFrom(ent, make([]Addr, 1))),
		"CQ.ReadErr":          cq.ReadErr(&CQErrEntry{}),
		"CQ.SRead":            second(cq.SRead(ent, 0, 0)),
		"CQ.SReadFrom":        second(cq.SReadFrom(ent, nil, 0, 0)),
		"CQ.SReadContext":     second(cq.SReadContext(ctx, ent, 0)),
		"CQ.SReadFromContext": second(cq.SReadFromContext(ctx, ent, nil, 0)),
		"CQ.Signal":           cq.Signal(),
		"CQ.WaitFD":           second(cq.WaitFD()),
		"CQ.TryWait":          cq.TryWait(),
		"CQ.Close":            cq.Close(),
		"Cntr.Read":           second(cntr.Read()),
		"Cntr.ReadErr":        second(cntr.ReadErr()),
		"Cntr.Add":            cntr.Add(1),
		"Cntr.Set":            cntr.Set(1),
		"Cntr.AddErr":         cntr.AddErr(1),
		"Cntr.SetErr":         cntr.SetErr(1),
		"Cntr.Wait":           cntr.Wait(1, 0),
		"Cntr.WaitContext":    cntr.WaitContext(ctx, 1),
		"Cntr.WaitFD":         second(cntr.WaitFD()),
		"Cntr.TryWait":        cntr.TryWait(),
		"Cntr.Close":          cntr.Close(),
		"EQ.Read":             second(eq.Read(0)),
		"EQ.ReadErr":          eq.ReadErr(&EQErrEntry{}),
		"EQ.SRead":            second(eq.SRead(0, 0)),
		"EQ.SReadContext":     second(eq.SReadContext(ctx, 0)),
		"EQ.Write":            eq.Write(&EQEntry{}),
		"EQ.WaitFD":           second(eq.WaitFD()),
		"EQ.TryWait":          eq.TryWait(),
		"EQ.Close":            eq.Close(),
	}
	for name, err := range errs {
		if err != ErrInval {
			t.Errorf("%s on nil: %v, want ErrInval", name, err)
		}
	}
	if cq.Attr() != (CQAttr{}) || cntr.Attr() != (CntrAttr{}) || eq.Attr() != (EQAttr{}) {
		t.Error("Attr of nil objects is not the zero value")
	}
	if cq.Owner() != nil || cntr.Owner() != nil {
		t.Error("Owner of nil objects is not nil")
	}
	if cq.StrError(5, nil) == "" || eq.StrError(5, nil) == "" {
		t.Error("StrError of nil objects is empty")
	}
	if fd, _ := cq.WaitFD(); fd != -1 {
		t.Errorf("WaitFD of a nil CQ = %d", fd)
	}
}

func second[T any](_ T, err error) error { return err }

// The zero attributes (and nil) open objects that block: the default wait
// object is WaitUnspec.
func TestWaitableZeroAttrBlocks(t *testing.T) {
	d := fakeDomain(t, 0)
	for _, attr := range []*CQAttr{nil, {}} {
		c := cqOpen(t, d, attr)
		if _, err := c.SRead(make([]CQEntry, 1), 0, 0); err != ErrAgain {
			t.Fatalf("SRead(0) on a zero-attr CQ: %v", err)
		}
		go func() {
			time.Sleep(10 * time.Millisecond)
			c.owner().Write("late", 0, 0, nil, 0, 0, AddrNotAvail)
		}()
		ent := make([]CQEntry, 1)
		if n, err := c.SRead(ent, 0, 5*time.Second); n != 1 || err != nil || ent[0].OpContext != "late" {
			t.Fatalf("blocking SRead on a zero-attr CQ: %d %v", n, err)
		}
	}
	for _, attr := range []*CntrAttr{nil, {}} {
		c := cntrOpen(t, d, attr)
		go func() {
			time.Sleep(10 * time.Millisecond)
			c.Add(2)
		}()
		if err := c.Wait(2, 5*time.Second); err != nil {
			t.Fatalf("blocking Wait on a zero-attr counter: %v", err)
		}
	}
	f := fakeFabric(t, 0)
	for _, attr := range []*EQAttr{nil, {}} {
		e := eqOpen(t, f, attr)
		start := time.Now()
		if _, err := e.SRead(20*time.Millisecond, 0); err != ErrAgain || time.Since(start) < 15*time.Millisecond {
			t.Fatalf("SRead(20ms) on a zero-attr EQ: %v after %v", err, time.Since(start))
		}
		go func() {
			time.Sleep(10 * time.Millisecond)
			e.writer().Write(&EQEntry{Event: EventShutdown, Context: "bye"})
		}()
		if ev, err := e.SRead(5*time.Second, 0); err != nil || ev.Context != "bye" {
			t.Fatalf("blocking SRead on a zero-attr EQ: %+v %v", ev, err)
		}
	}
}

// Blocking calls on objects opened with WaitNone name the call in an
// *OpError matching ErrNoSys, and do not block.
func TestWaitableWaitNoneErrors(t *testing.T) {
	d := fakeDomain(t, 0)
	ctx := context.Background()
	cq := cqOpen(t, d, &CQAttr{WaitObj: WaitNone})
	cntr := cntrOpen(t, d, &CntrAttr{WaitObj: WaitNone})
	eq := eqOpen(t, fakeFabric(t, 0), &EQAttr{WaitObj: WaitNone})
	ent := make([]CQEntry, 1)
	for _, tc := range []struct {
		op  string
		err error
	}{
		{"fi_cq_sread", second(cq.SRead(ent, 0, -1))},
		{"fi_cq_sread", second(cq.SReadContext(ctx, ent, 0))},
		{"fi_cq_sreadfrom", second(cq.SReadFrom(ent, nil, 0, -1))},
		{"fi_cq_sreadfrom", second(cq.SReadFromContext(ctx, ent, nil, 0))},
		{"fi_cq_signal", cq.Signal()},
		{"fi_cntr_wait", cntr.Wait(1, -1)},
		{"fi_cntr_wait", cntr.WaitContext(ctx, 1)},
		{"fi_eq_sread", second(eq.SRead(-1, 0))},
		{"fi_eq_sread", second(eq.SReadContext(ctx, 0))},
	} {
		if !isOpErr(tc.err, tc.op, ErrNoSys) {
			t.Errorf("%s on WaitNone: %#v, want an *OpError for %s matching ErrNoSys", tc.op, tc.err, tc.op)
		}
	}
	// The error text names the call.
	_, err := eq.SRead(-1, 0)
	if want := "fi_eq_sread (fake): Function not implemented"; err == nil || err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
}

// A context that ends gives a *WaitError with both identities; a context
// cancelled before the call returns at once.
func TestWaitableWaitError(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.SReadFromContext(ctx, make([]CQEntry, 1), make([]Addr, 1), 0)
	var we *WaitError
	if !errors.As(err, &we) || we.Op != "fi_cq_sreadfrom" || we.Errno != ErrCanceled || we.Timeout() ||
		!errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled SReadFromContext: %#v", err)
	}
	if got, want := err.Error(), "fi_cq_sreadfrom: context canceled: "+ErrCanceled.Error(); got != want {
		t.Fatalf("error text %q, want %q", got, want)
	}
}

// WaitObj's zero value is WaitUnspec; every value keeps libfabric's name.
func TestWaitObjZeroAndNames(t *testing.T) {
	var zero WaitObj
	if zero != WaitUnspec {
		t.Fatalf("zero WaitObj is %v", zero)
	}
	for w, name := range map[WaitObj]string{WaitUnspec: "FI_WAIT_UNSPEC", WaitNone: "FI_WAIT_NONE",
		WaitSet: "FI_WAIT_SET", WaitFD: "FI_WAIT_FD", WaitMutexCond: "FI_WAIT_MUTEX_COND",
		WaitYield: "FI_WAIT_YIELD", WaitPollFD: "FI_WAIT_POLLFD"} {
		if w.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(w), w.String(), name)
		}
	}
}
