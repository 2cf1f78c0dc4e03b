package fabric

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/sys"
)

func eqOpen(t testing.TB, f *Fabric, attr *EQAttr) *EQ {
	t.Helper()
	e, err := f.OpenEQ(attr)
	if err != nil {
		t.Fatalf("OpenEQ(%+v): %v", attr, err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestEQOpenAttr(t *testing.T) {
	f := fakeFabric(t, 0)
	e := eqOpen(t, f, nil)
	if a := e.Attr(); a.Size != 1024 || a.WaitObj != WaitUnspec {
		t.Fatalf("default attr %+v", a)
	}
	for _, size := range []uint64{1, 2, 64, 65536} {
		eqOpen(t, f, &EQAttr{Size: size, WaitObj: WaitUnspec})
	}
	for _, tc := range []struct {
		attr EQAttr
		want error
	}{
		{EQAttr{Flags: FlagSend}, ErrInval},
		{EQAttr{WaitObj: WaitSet}, ErrInval},
		{EQAttr{WaitObj: 12}, ErrInval},
		{EQAttr{Size: 1 << 40}, ErrInval},
	} {
		if _, err := f.OpenEQ(&tc.attr); !errors.Is(err, tc.want) {
			t.Errorf("OpenEQ(%+v) = %v, want %v", tc.attr, err, tc.want)
		}
	}
}

func TestEQWriteReadPeek(t *testing.T) {
	f := fakeFabric(t, 0)
	e := eqOpen(t, f, &EQAttr{Flags: FlagWrite, WaitObj: WaitUnspec})
	if _, err := e.Read(0); err != ErrAgain {
		t.Fatalf("empty read: %v", err)
	}
	var ee EQErrEntry
	if err := e.ReadErr(&ee); err != ErrAgain {
		t.Fatalf("readerr with no error: %v", err)
	}
	fid := new(int)
	for i := 0; i < 3; i++ {
		if err := e.Write(&EQEntry{Event: EventMRComplete, FID: fid, Context: i, Data: uint64(100 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		p, err := e.Read(FlagPeek)
		if err != nil || p.Context != i {
			t.Fatalf("peek %d: %+v %v", i, p, err)
		}
		ev, err := e.Read(0)
		if err != nil || ev.Event != EventMRComplete || ev.FID != fid || ev.Context != i || ev.Data != uint64(100+i) {
			t.Fatalf("read %d: %+v %v", i, ev, err)
		}
	}
	if _, err := e.Read(FlagSend); err != ErrBadFlags {
		t.Fatalf("bad flags: %v", err)
	}
	nw := eqOpen(t, f, nil)
	for _, entry := range []*EQEntry{{}, nil} {
		if err := nw.Write(entry); !isOpErr(err, "fi_eq_write", ErrInval) {
			t.Fatalf("fi_eq_write(%v) without FI_WRITE: %v, want an *OpError naming fi_eq_write matching ErrInval", entry, err)
		}
	}
	if err := e.Write(nil); !isOpErr(err, "fi_eq_write", ErrInval) {
		t.Fatalf("fi_eq_write(nil): %v", err)
	}
	closed, err := f.OpenEQ(&EQAttr{Flags: FlagWrite})
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if err := closed.Write(&EQEntry{}); !isOpErr(err, "fi_eq_write", ErrClosed) {
		t.Fatalf("fi_eq_write after close: %v", err)
	}
}

func TestEQErrorsFromProvider(t *testing.T) {
	f := fakeFabric(t, 0)
	e := eqOpen(t, f, nil)
	w := e.writer()
	w.Write(&EQEntry{Event: EventConnected, Context: "c"})
	w.WriteErr(&EQErrEntry{Context: "ep", Err: ErrConnRefused, ErrData: []byte("reject data")})
	if ev, err := e.Read(0); err != nil || ev.Event != EventConnected {
		t.Fatal(ev, err)
	}
	if _, err := e.Read(0); err != ErrAvail {
		t.Fatalf("error at head: %v", err)
	}
	ee := EQErrEntry{ErrData: make([]byte, 64)}
	if err := e.ReadErr(&ee); err != nil || ee.Err != ErrConnRefused || string(ee.ErrData) != "reject data" {
		t.Fatalf("readerr: %v %+v", err, ee)
	}
	if s := e.StrError(-int(ErrConnRefused), nil); s != "Connection refused" {
		t.Fatalf("StrError = %q", s)
	}
}

func TestEQSRead(t *testing.T) {
	f := fakeFabric(t, 0)
	e := eqOpen(t, f, &EQAttr{WaitObj: WaitUnspec, Flags: FlagWrite})
	start := time.Now()
	if _, err := e.SRead(200*time.Millisecond, 0); err != ErrAgain {
		t.Fatalf("sread timeout: %v", err)
	}
	if el := time.Since(start); el < 190*time.Millisecond || el > 1500*time.Millisecond {
		t.Fatalf("sread(200ms) took %v", el)
	}
	e.Write(&EQEntry{Event: EventNotify, Context: 1})
	start = time.Now()
	if ev, err := e.SRead(2*time.Second, FlagPeek); err != nil || ev.Context != 1 {
		t.Fatalf("sread peek: %v", err)
	}
	if el := time.Since(start); el > 50*time.Millisecond {
		t.Fatalf("sread with a queued event took %v", el)
	}
	if ev, err := e.SRead(-1, 0); err != nil || ev.Context != 1 {
		t.Fatalf("sread after peek: %+v %v", ev, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := e.SReadContext(ctx, 0)
	var we *WaitError
	if !errors.Is(err, ErrAgain) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &we) ||
		we.Op != "fi_eq_sread" {
		t.Fatalf("SReadContext deadline: %v", err)
	}
	res := make(chan error, 1)
	go func() {
		_, err := e.SRead(-1, 0)
		res <- err
	}()
	time.Sleep(10 * time.Millisecond)
	e.writer().Write(&EQEntry{Event: EventShutdown})
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sread not woken by an event")
	}
	none := eqOpen(t, f, &EQAttr{WaitObj: WaitNone})
	if _, err := none.SRead(10*time.Millisecond, 0); !isOpErr(err, "fi_eq_sread", ErrNoSys) {
		t.Fatalf("sread on FI_WAIT_NONE: %v", err)
	}
}

func TestEQWaitFDAndLifecycle(t *testing.T) {
	f := fakeFabric(t, 0)
	e, err := f.OpenEQ(&EQAttr{WaitObj: WaitFD})
	if err != nil {
		t.Fatal(err)
	}
	fd, err := e.WaitFD()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.TryWait(); err != nil {
		t.Fatal(err)
	}
	e.writer().Write(&EQEntry{Event: EventConnReq})
	if ok, _ := sys.PollReadable(fd, 1000); !ok {
		t.Fatal("wait fd not readable after an event")
	}
	if err := e.TryWait(); err != ErrAgain {
		t.Fatalf("trywait with an event: %v", err)
	}
	if err := f.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("fabric close with an open EQ: %v", err)
	}
	ep := &fakeEP{}
	if err := e.bindEndpoint(ep); err != nil {
		t.Fatal(err)
	}
	if e.fabric() != f {
		t.Fatal("fabric() hook")
	}
	if err := e.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("close with a bound endpoint: %v", err)
	}
	// Reads drive the bound endpoint's progress.
	e.Read(0)
	e.Read(0)
	if ep.progress.Load() == 0 {
		t.Fatal("EQ reads did not drive progress")
	}
	e.unbindEndpoint(ep)
	res := make(chan error, 1)
	e.Read(0) // drain the CONNREQ
	go func() {
		_, err := e.SRead(-1, 0)
		res <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if err != ErrClosed {
			t.Fatalf("sread on close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close did not unblock sread")
	}
	if err := e.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := e.Read(0); err != ErrClosed {
		t.Fatalf("read after close: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("fabric close: %v", err)
	}
}
