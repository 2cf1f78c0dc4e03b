package fabric

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

func cntrOpen(t testing.TB, d *Domain, attr *CntrAttr) *Cntr {
	t.Helper()
	c, err := d.OpenCntr(attr)
	if err != nil {
		t.Fatalf("OpenCntr(%+v): %v", attr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCntrOpenAttr(t *testing.T) {
	d := fakeDomain(t, 0)
	cntrOpen(t, d, nil)
	for _, tc := range []struct {
		attr CntrAttr
		want error
	}{
		{CntrAttr{Events: 1}, ErrNoSys},
		{CntrAttr{WaitObj: WaitSet}, ErrInval},
		{CntrAttr{WaitObj: 31}, ErrInval},
		{CntrAttr{Flags: FlagSend}, ErrInval},
		{CntrAttr{Flags: FlagPeer}, ErrInval},
		{CntrAttr{Peer: &cntrRecorder{}}, ErrInval},
	} {
		if _, err := d.OpenCntr(&tc.attr); !errors.Is(err, tc.want) {
			t.Errorf("OpenCntr(%+v) = %v, want %v", tc.attr, err, tc.want)
		}
	}
}

// The fabtests cntr_test sequence over several counters.
func TestCntrSetAddErr(t *testing.T) {
	d := fakeDomain(t, 0)
	cs := make([]*Cntr, 10)
	for i := range cs {
		cs[i] = cntrOpen(t, d, nil)
	}
	for i, c := range cs {
		v := uint64(i)
		if err := c.Set(v); err != nil {
			t.Fatal(err)
		}
		c.SetErr(2 * v)
		c.Add(v)
		c.AddErr(v)
	}
	for i, c := range cs {
		v := uint64(i)
		if r, err := c.Read(); r != 2*v || err != nil {
			t.Fatalf("cntr %d: read %d %v", i, r, err)
		}
		if r, err := c.ReadErr(); r != 3*v || err != nil {
			t.Fatalf("cntr %d: readerr %d %v", i, r, err)
		}
	}
}

func TestCntrWait(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cntrOpen(t, d, &CntrAttr{WaitObj: WaitUnspec})
	ep := &fakeEP{cntr: c.owner()}
	if err := c.bindEndpoint(ep); err != nil {
		t.Fatal(err)
	}
	defer c.unbindEndpoint(ep)
	// Progress of the bound endpoint satisfies the wait.
	ep.pending.Store(3)
	if err := c.Wait(3, time.Second); err != nil {
		t.Fatalf("wait satisfied by progress: %v", err)
	}
	start := time.Now()
	if err := c.Wait(10, 100*time.Millisecond); err != ErrTimedOut {
		t.Fatalf("wait timeout: %v", err)
	}
	if el := time.Since(start); el < 95*time.Millisecond || el > 1500*time.Millisecond {
		t.Fatalf("wait(100ms) took %v", el)
	}
	res := make(chan error, 1)
	go func() { res <- c.Wait(5, -1) }()
	time.Sleep(10 * time.Millisecond)
	c.owner().Inc()
	c.Add(1)
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait not woken at the threshold")
	}
	go func() { res <- c.Wait(100, -1) }()
	time.Sleep(10 * time.Millisecond)
	c.owner().IncErr()
	select {
	case err := <-res:
		if err != ErrAvail {
			t.Fatalf("error change: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an error increment did not unblock the wait")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := c.WaitContext(ctx, 100)
	var we *WaitError
	if !errors.Is(err, ErrTimedOut) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &we) ||
		we.Op != "fi_cntr_wait" || !we.Timeout() {
		t.Fatalf("WaitContext deadline: %v", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := c.WaitContext(ctx2, 100); !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitContext with a cancelled context: %v", err)
	}
	if err := c.WaitContext(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	// The zero attributes wait; WaitNone must be asked for.
	zero := cntrOpen(t, d, nil)
	if err := zero.Wait(1, 0); err != ErrTimedOut {
		t.Fatalf("zero-attr counter: wait(0) = %v", err)
	}
	none := cntrOpen(t, d, &CntrAttr{WaitObj: WaitNone})
	if err := none.Wait(0, 10*time.Millisecond); !isOpErr(err, "fi_cntr_wait", ErrNoSys) {
		t.Fatalf("wait on FI_WAIT_NONE: %v", err)
	}
}

func TestCntrWaitFD(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cntrOpen(t, d, &CntrAttr{WaitObj: WaitFD})
	fd, err := c.WaitFD()
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("readable before any change")
	}
	c.owner().Inc()
	if ok, _ := sys.PollReadable(fd, 1000); !ok {
		t.Fatal("not readable after an increment")
	}
	if err := c.TryWait(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("readable after TryWait")
	}
	none := cntrOpen(t, d, &CntrAttr{WaitObj: WaitNone})
	if _, err := none.WaitFD(); !errors.Is(err, ErrNoData) {
		t.Fatalf("WaitFD on FI_WAIT_NONE: %v", err)
	}
}

func TestCntrCloseLifecycle(t *testing.T) {
	d := fakeDomain(t, 0)
	c, err := d.OpenCntr(&CntrAttr{WaitObj: WaitYield})
	if err != nil {
		t.Fatal(err)
	}
	ep := &fakeEP{}
	c.bindEndpoint(ep)
	if err := c.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("close with a bound endpoint: %v", err)
	}
	c.unbindEndpoint(ep)
	if err := c.bindMR(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("close with a bound MR: %v", err)
	}
	c.unbindMR()
	res := make(chan error, 1)
	go func() { res <- c.Wait(1, -1) }()
	time.Sleep(10 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if err != ErrClosed {
			t.Fatalf("wait on close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close did not unblock wait")
	}
	if err := c.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := c.Read(); err != ErrClosed {
		t.Fatalf("read after close: %v", err)
	}
	if err := c.Set(1); err != ErrClosed {
		t.Fatalf("set after close: %v", err)
	}
}

type cntrRecorder struct{ inc, incErr atomic.Int64 }

func (r *cntrRecorder) Inc()    { r.inc.Add(1) }
func (r *cntrRecorder) IncErr() { r.incErr.Add(1) }

func TestCntrPeerImport(t *testing.T) {
	d := fakeDomain(t, 0)
	owner := &cntrRecorder{}
	pc, err := d.OpenCntr(&CntrAttr{Flags: FlagPeer, Peer: owner})
	if err != nil {
		t.Fatal(err)
	}
	if pc.owner() != provider.CntrOwner(owner) {
		t.Fatal("an FI_PEER counter must hand the owner's counter to providers")
	}
	ep := &fakeEP{cntr: pc.owner()}
	pc.bindEndpoint(ep)
	ep.pending.Store(4)
	if v, err := pc.Read(); v != 0 || err != nil {
		t.Fatalf("peer counter read = %d %v", v, err)
	}
	if owner.inc.Load() != 4 {
		t.Fatalf("owner counted %d", owner.inc.Load())
	}
	for name, err := range map[string]error{
		"readerr": func() error { _, err := pc.ReadErr(); return err }(),
		"add":     pc.Add(1), "set": pc.Set(1), "adderr": pc.AddErr(1), "seterr": pc.SetErr(1),
		"wait": pc.Wait(1, 0), "trywait": pc.TryWait(),
	} {
		if !errors.Is(err, ErrNoSys) {
			t.Errorf("%s on a peer counter: %v", name, err)
		}
	}
	pc.unbindEndpoint(ep)
	if err := pc.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCntrAllocs(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cntrOpen(t, d, &CntrAttr{WaitObj: WaitUnspec})
	ep := &fakeEP{}
	c.bindEndpoint(ep)
	defer c.unbindEndpoint(ep)
	o := c.owner()
	f := func() {
		o.Inc()
		o.IncErr()
		c.Read()
		c.ReadErr()
	}
	if n := testing.AllocsPerRun(1000, f); n != 0 {
		t.Fatalf("counter Inc/Read allocate %v times", n)
	}
}
