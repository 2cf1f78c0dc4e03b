package fabric

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

func cqOpen(t testing.TB, d *Domain, attr *CQAttr) *CQ {
	t.Helper()
	c, err := d.OpenCQ(attr)
	if err != nil {
		t.Fatalf("OpenCQ(%+v): %v", attr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCQOpenAttr(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, nil)
	if a := c.Attr(); a.Size != 1024 || a.Format != CQFormatContext || a.WaitObj != WaitUnspec {
		t.Fatalf("default attr %+v", a)
	}
	for _, size := range []uint64{1, 64, 65536} {
		cqOpen(t, d, &CQAttr{Size: size, Format: CQFormatTagged})
	}
	for _, tc := range []struct {
		attr CQAttr
		want error
	}{
		{CQAttr{Format: 99}, ErrInval},
		{CQAttr{WaitObj: 99}, ErrInval},
		{CQAttr{WaitObj: WaitSet}, ErrInval}, // no WaitSet attribute
		{CQAttr{WaitCond: 7, WaitObj: WaitUnspec}, ErrInval},
		{CQAttr{Flags: FlagSend}, ErrInval},
		{CQAttr{Size: 1 << 40}, ErrInval},
		{CQAttr{Flags: FlagPeer}, ErrInval},
		{CQAttr{Peer: &cqRecorder{}}, ErrInval},
	} {
		_, err := d.OpenCQ(&tc.attr)
		if !errors.Is(err, tc.want) {
			t.Errorf("OpenCQ(%+v) = %v, want %v", tc.attr, err, tc.want)
		}
		var oe *OpError
		if !errors.As(err, &oe) || oe.Op != "fi_cq_open" || oe.Provider != fakeProvName {
			t.Errorf("OpenCQ error %#v is not an fi_cq_open OpError", err)
		}
	}
	// FI_AFFINITY is accepted and ignored.
	cqOpen(t, d, &CQAttr{Flags: FlagAffinity, SignalingVector: 1})
}

func TestCQReadEmptyAndFormats(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, &CQAttr{Format: CQFormatMsg})
	ent := make([]CQEntry, 2)
	if n, err := c.Read(ent); n != 0 || err != ErrAgain {
		t.Fatalf("empty read = %d, %v", n, err)
	}
	var ee CQErrEntry
	if err := c.ReadErr(&ee); err != ErrAgain {
		t.Fatalf("empty readerr = %v", err)
	}
	c.owner().Write("x", FlagRecv|FlagMsg|FlagCompletion, 5, []byte("hello"), 7, 8, 1)
	n, err := c.Read(ent)
	if n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if got := ent[0]; got.OpContext != "x" || got.Flags != FlagRecv|FlagMsg || got.Len != 5 || got.Buf != nil ||
		got.Data != 0 || got.Tag != 0 {
		t.Fatalf("FI_CQ_FORMAT_MSG entry %+v", got)
	}
}

func TestCQErrorOrderingAndOverrun(t *testing.T) {
	// Only a domain without resource management lets its CQs overrun.
	f := fakeFabric(t, 0)
	d, err := f.OpenDomain(&Info{FabricAttr: &FabricAttr{ProvName: fakeProvName},
		DomainAttr: &DomainAttr{Name: "fake", ResourceMgmt: RMDisabled}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	c := cqOpen(t, d, &CQAttr{Size: 3, Format: CQFormatTagged})
	o := c.owner()
	o.Write(1, FlagSend, 0, nil, 0, 0, AddrNotAvail)
	o.WriteErr(&CQErrEntry{OpContext: 2, Err: ErrCanceled, ProvErrno: -125, ErrData: []byte{9}})
	o.Write(3, FlagSend, 0, nil, 0, 0, AddrNotAvail)
	if err := o.Write(4, FlagSend, 0, nil, 0, 0, AddrNotAvail); err != ErrOverrun {
		t.Fatalf("write to a full CQ: %v", err)
	}
	ent := make([]CQEntry, 4)
	if n, err := c.Read(ent); n != 1 || err != nil || ent[0].OpContext != 1 {
		t.Fatalf("read before error: %d %v", n, err)
	}
	if _, err := c.Read(ent); err != ErrAvail {
		t.Fatalf("error at head: %v", err)
	}
	ee := CQErrEntry{}
	if err := c.ReadErr(&ee); err != nil || ee.OpContext != 2 || ee.Err != ErrCanceled || len(ee.ErrData) != 1 {
		t.Fatalf("readerr: %v %+v", err, ee)
	}
	if s := c.StrError(ee.ProvErrno, ee.ErrData); s != "Operation canceled" {
		t.Fatalf("StrError = %q", s)
	}
	if n, err := c.Read(ent); n != 1 || err != nil || ent[0].OpContext != 3 {
		t.Fatalf("read after error: %d %v", n, err)
	}
	if n, err := c.Read(ent); n != 0 || err != ErrOverrun {
		t.Fatalf("drained overrun CQ: %d %v", n, err)
	}
}

func TestCQReadNilDrivesProgress(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, nil)
	ep := &fakeEP{cq: c.owner()}
	if err := c.bindEndpoint(ep); err != nil {
		t.Fatal(err)
	}
	defer c.unbindEndpoint(ep)
	if n, err := c.Read(nil); n != 0 || err != ErrAgain || ep.progress.Load() != 1 {
		t.Fatalf("nil read of empty CQ: %d %v progress=%d", n, err, ep.progress.Load())
	}
	ep.pending.Store(1)
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Fatalf("nil read producing a completion: %d %v", n, err)
	}
	if n, err := c.Read(make([]CQEntry, 1)); n != 1 || err != nil {
		t.Fatalf("the completion was lost: %d %v", n, err)
	}
}

func TestCQReadFromSource(t *testing.T) {
	d := fakeDomain(t, CapSource|CapSourceErr)
	c := cqOpen(t, d, &CQAttr{Format: CQFormatData})
	c.owner().Write("known", FlagRecv, 1, nil, 0, 0, 42)
	w, ok := c.owner().(interface {
		WriteUnknownSrc(any, Flags, uint64, []byte, uint64, uint64, []byte) error
	})
	if !ok {
		t.Fatal("the CQ owner has no WriteUnknownSrc")
	}
	w.WriteUnknownSrc("unknown", FlagRecv|FlagMsg, 3, nil, 0, 0, []byte{127, 0, 0, 1})
	ent := make([]CQEntry, 2)
	src := make([]Addr, 2)
	if _, err := c.ReadFrom(ent[:1], src[:1]); err != nil || src[0] != 42 {
		t.Fatalf("readfrom: %v %v", err, src)
	}
	if _, err := c.ReadFrom(ent[:1], src[:1]); err != ErrAvail {
		t.Fatalf("unknown source with FI_SOURCE_ERR: %v", err)
	}
	var ee CQErrEntry
	if err := c.ReadErr(&ee); err != nil || ee.Err != ErrAddrNotAvail || string(ee.ErrData) != "\x7f\x00\x00\x01" {
		t.Fatalf("FI_EADDRNOTAVAIL entry: %v %+v", err, ee)
	}
	if _, err := c.ReadFrom(ent[:1], src[:1]); err != ErrAgain {
		t.Fatalf("after the error: %v", err)
	}
	if _, err := c.ReadFrom(ent, nil); err != ErrInval {
		t.Fatalf("readfrom without src slice: %v", err)
	}
}

func TestCQSReadTimeoutAndThreshold(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, &CQAttr{WaitObj: WaitUnspec, WaitCond: CQCondThreshold})
	start := time.Now()
	n, err := c.SRead(make([]CQEntry, 1), 0, 200*time.Millisecond)
	el := time.Since(start)
	if n != 0 || err != ErrAgain {
		t.Fatalf("sread timeout = %d, %v", n, err)
	}
	if el < 190*time.Millisecond || el > 1500*time.Millisecond {
		t.Fatalf("sread(200 ms) returned after %v", el)
	}
	ent := make([]CQEntry, 4)
	res := make(chan int, 1)
	go func() {
		n, _ := c.SRead(ent, 2, 5*time.Second)
		res <- n
	}()
	time.Sleep(5 * time.Millisecond)
	c.owner().Write(1, 0, 0, nil, 0, 0, 0)
	select {
	case n := <-res:
		t.Fatalf("sread returned %d below its threshold", n)
	case <-time.After(30 * time.Millisecond):
	}
	c.owner().Write(2, 0, 0, nil, 0, 0, 0)
	select {
	case n := <-res:
		if n != 2 {
			t.Fatalf("sread returned %d, want 2", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("threshold reached but sread blocked")
	}
	// Timeout 0 is a single check.
	start = time.Now()
	if _, err := c.SRead(ent, 0, 0); err != ErrAgain || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("sread(0) = %v after %v", err, time.Since(start))
	}
	if _, err := c.SRead(nil, 0, 0); err != ErrInval {
		t.Fatalf("sread(nil) = %v", err)
	}
	if _, err := c.SReadFrom(ent, make([]Addr, 1), 0, 0); err != ErrInval {
		t.Fatalf("sreadfrom with a short src = %v", err)
	}
}

func TestCQSignalBeforeSRead(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, &CQAttr{Size: 1, WaitObj: WaitUnspec, Format: CQFormatContext})
	if err := c.Signal(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.SRead(make([]CQEntry, 1), 0, 2*time.Second)
	if !errors.Is(err, ErrAgain) {
		t.Fatalf("sread after signal: %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("signalled sread took %v", el)
	}
	none := cqOpen(t, d, &CQAttr{WaitObj: WaitNone})
	if err := none.Signal(); !isOpErr(err, "fi_cq_signal", ErrNoSys) {
		t.Fatalf("signal on FI_WAIT_NONE: %v", err)
	}
	if _, err := none.SRead(make([]CQEntry, 1), 0, -1); !isOpErr(err, "fi_cq_sread", ErrNoSys) {
		t.Fatalf("sread on FI_WAIT_NONE: %v", err)
	}
	if _, err := none.SReadFrom(make([]CQEntry, 1), nil, 0, -1); !isOpErr(err, "fi_cq_sreadfrom", ErrNoSys) {
		t.Fatalf("sreadfrom on FI_WAIT_NONE: %v", err)
	}
}

func TestCQSReadContext(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, &CQAttr{WaitObj: WaitUnspec})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.SReadContext(ctx, make([]CQEntry, 1), 0)
	if !errors.Is(err, ErrAgain) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline error %v must match ErrAgain and DeadlineExceeded", err)
	}
	if el := time.Since(start); el < 45*time.Millisecond || el > 2*time.Second {
		t.Fatalf("SReadContext(50ms) returned after %v", el)
	}
	var we *WaitError
	if !errors.As(err, &we) || !we.Timeout() || we.Op != "fi_cq_sread" {
		t.Fatalf("deadline error %#v is not a timed-out fi_cq_sread WaitError", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel2() }()
	_, err = c.SReadContext(ctx2, make([]CQEntry, 1), 0)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrCanceled) {
		t.Fatalf("cancel error %v", err)
	}
	_, err = c.SReadFromContext(ctx2, make([]CQEntry, 1), nil, 0) // already cancelled
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("SReadFromContext with a cancelled context: %v", err)
	}
	c.owner().Write("now", 0, 0, nil, 0, 0, 0)
	ent := make([]CQEntry, 1)
	if n, err := c.SReadContext(context.Background(), ent, 0); n != 1 || err != nil || ent[0].OpContext != "now" {
		t.Fatalf("SReadContext with an entry: %d %v", n, err)
	}
}

func TestCQWaitFDPoll(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, &CQAttr{WaitObj: WaitFD})
	fd, err := c.WaitFD()
	if err != nil || fd < 0 {
		t.Fatalf("WaitFD = %d, %v", fd, err)
	}
	if err := c.TryWait(); err != nil {
		t.Fatalf("trywait on an empty CQ: %v", err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("wait fd readable on an empty CQ")
	}
	c.owner().Write("x", 0, 0, nil, 0, 0, 0)
	if ok, err := sys.PollReadable(fd, 1000); !ok || err != nil {
		t.Fatalf("wait fd not readable after a completion: %v", err)
	}
	if err := c.TryWait(); err != ErrAgain {
		t.Fatalf("trywait with a completion: %v", err)
	}
	for _, tc := range []struct {
		w    WaitObj
		want error
	}{{WaitNone, ErrNoData}, {WaitUnspec, ErrNoSys}, {WaitMutexCond, ErrNoSys}, {WaitYield, ErrNoSys}} {
		o := cqOpen(t, d, &CQAttr{WaitObj: tc.w})
		if _, err := o.WaitFD(); !errors.Is(err, tc.want) {
			t.Errorf("%v: WaitFD = %v, want %v", tc.w, err, tc.want)
		}
	}
	none := cqOpen(t, d, &CQAttr{WaitObj: WaitNone})
	if err := none.TryWait(); err != ErrInval {
		t.Fatalf("trywait on FI_WAIT_NONE: %v", err)
	}
}

func TestCQCloseLifecycle(t *testing.T) {
	d := fakeDomain(t, 0)
	c, err := d.OpenCQ(&CQAttr{WaitObj: WaitUnspec})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("domain close with an open CQ: %v", err)
	}
	ep := &fakeEP{}
	if err := c.bindEndpoint(ep); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("close with a bound endpoint: %v", err)
	}
	// Still usable after the failed close.
	c.owner().Write(1, 0, 0, nil, 0, 0, 0)
	if n, err := c.Read(make([]CQEntry, 1)); n != 1 || err != nil {
		t.Fatalf("read after a refused close: %d %v", n, err)
	}
	c.unbindEndpoint(ep)
	// Close unblocks a blocked SRead.
	res := make(chan error, 1)
	go func() {
		_, err := c.SRead(make([]CQEntry, 1), 0, -1)
		res <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case err := <-res:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("sread on close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close did not unblock sread")
	}
	if err := c.Close(); !errors.Is(err, ErrClosed) || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := c.Read(make([]CQEntry, 1)); err != ErrClosed {
		t.Fatalf("read after close: %v", err)
	}
	if err := c.ReadErr(&CQErrEntry{}); err != ErrClosed {
		t.Fatalf("readerr after close: %v", err)
	}
	if err := c.bindEndpoint(ep); err != ErrClosed {
		t.Fatalf("bind after close: %v", err)
	}
	if err := c.Signal(); err != ErrClosed {
		t.Fatalf("signal after close: %v", err)
	}
	if _, err := c.WaitFD(); !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitFD after close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("domain close after the CQ closed: %v", err)
	}
	if _, err := d.OpenCQ(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("OpenCQ on a closed domain: %v", err)
	}
	var nilCQ *CQ
	if _, err := nilCQ.Read(nil); err != ErrInval {
		t.Fatalf("nil CQ: %v", err)
	}
}

// cqRecorder is an owner CQ (fi_peer(3) owner side).
type cqRecorder struct {
	ok   []CQEntry
	errs []CQErrEntry
}

func (r *cqRecorder) Write(ctx any, flags Flags, length uint64, buf []byte, data, tag uint64, src Addr) error {
	r.ok = append(r.ok, CQEntry{OpContext: ctx, Flags: flags, Len: length, Buf: buf, Data: data, Tag: tag})
	return nil
}

func (r *cqRecorder) WriteErr(e *CQErrEntry) error {
	r.errs = append(r.errs, *e)
	return nil
}

func TestCQPeerImport(t *testing.T) {
	d := fakeDomain(t, 0)
	owner := &cqRecorder{}
	pcq, err := d.OpenCQ(&CQAttr{Flags: FlagPeer, Peer: owner, Format: CQFormatTagged})
	if err != nil {
		t.Fatal(err)
	}
	if pcq.owner() != provider.CQOwner(owner) {
		t.Fatal("an FI_PEER CQ must hand the owner's CQ to providers")
	}
	ep := &fakeEP{cq: pcq.owner()}
	if err := pcq.bindEndpoint(ep); err != nil {
		t.Fatal(err)
	}
	ep.pending.Store(2)
	if n, err := pcq.Read(nil); n != 0 || err != ErrAgain {
		t.Fatalf("peer CQ read(nil) = %d %v", n, err)
	}
	if len(owner.ok) != 2 || owner.ok[0].OpContext != "ep" || owner.ok[0].Flags != FlagSend|FlagMsg {
		t.Fatalf("owner received %+v", owner.ok)
	}
	if n, err := pcq.Read(make([]CQEntry, 4)); n != 0 || err != ErrAgain || ep.progress.Load() != 2 {
		t.Fatalf("peer CQ read = %d %v, progress %d", n, err, ep.progress.Load())
	}
	var ee CQErrEntry
	if err := pcq.ReadErr(&ee); err != ErrNoSys {
		t.Fatalf("readerr on a peer CQ: %v", err)
	}
	if _, err := pcq.SRead(make([]CQEntry, 1), 0, 10*time.Millisecond); !isOpErr(err, "fi_cq_sread", ErrNoSys) {
		t.Fatalf("sread on a peer CQ: %v", err)
	}
	if _, err := pcq.SReadContext(context.Background(), make([]CQEntry, 1), 0); !isOpErr(err, "fi_cq_sread", ErrNoSys) {
		t.Fatalf("SReadContext on a peer CQ: %v", err)
	}
	if err := pcq.Signal(); !isOpErr(err, "fi_cq_signal", ErrNoSys) {
		t.Fatalf("signal on a peer CQ: %v", err)
	}
	if _, err := pcq.WaitFD(); !errors.Is(err, ErrNoSys) {
		t.Fatalf("WaitFD on a peer CQ: %v", err)
	}
	if err := pcq.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("close of a bound peer CQ: %v", err)
	}
	pcq.unbindEndpoint(ep)
	if n := pcq.pset.Len(); n != 0 {
		t.Fatalf("unbind left %d sources", n)
	}
	if err := pcq.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pcq.Read(nil); err != ErrClosed {
		t.Fatalf("read of a closed peer CQ: %v", err)
	}
}

func TestCQAllocs(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, &CQAttr{Format: CQFormatTagged})
	ep := &fakeEP{cq: c.owner()}
	c.bindEndpoint(ep)
	defer c.unbindEndpoint(ep)
	ent := make([]CQEntry, 4)
	ctx := new(int)
	o := c.owner()
	round := func() {
		o.Write(ctx, FlagRecv|FlagTagged, 8, nil, 0, 1, AddrNotAvail)
		c.Read(ent)
	}
	round()
	if n := testing.AllocsPerRun(1000, round); n != 0 {
		t.Fatalf("Write+Read allocates %v times", n)
	}
	if n := testing.AllocsPerRun(1000, func() { c.Read(ent) }); n != 0 {
		t.Fatalf("empty Read allocates %v times", n)
	}
	if n := testing.AllocsPerRun(1000, func() { c.Read(nil) }); n != 0 {
		t.Fatalf("Read(nil) allocates %v times", n)
	}
}

func TestCQLegacyErrData(t *testing.T) {
	f := fakeFabric(t, Version(1, 4))
	d, err := f.OpenDomain(&Info{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c := cqOpen(t, d, nil)
	c.owner().WriteErr(&CQErrEntry{Err: ErrIO, ErrData: []byte("legacy")})
	ee := CQErrEntry{ErrData: make([]byte, 2)}
	if err := c.ReadErr(&ee); err != nil || string(ee.ErrData) != "legacy" {
		t.Fatalf("API 1.4 err_data must be provider owned: %v %q", err, ee.ErrData)
	}
}

// A CQ of a domain with resource management (FI_RM_ENABLED, or
// FI_RM_UNSPEC: the providers' default) never overruns: entries nobody
// reserved are kept beyond its size (provider.CQReserver).
func TestCQResourceMgmtNoOverrun(t *testing.T) {
	d := fakeDomain(t, 0)
	c := cqOpen(t, d, &CQAttr{Size: 2, Format: CQFormatContext})
	o := c.owner()
	for i := 0; i < 5; i++ {
		if err := o.Write(i, FlagSend, 0, nil, 0, 0, AddrNotAvail); err != nil {
			t.Fatalf("write %d to a size-2 CQ: %v", i, err)
		}
	}
	ent := make([]CQEntry, 8)
	if n, err := c.Read(ent); n != 5 || err != nil || ent[4].OpContext != 4 {
		t.Fatalf("read = %d, %v; want the 5 completions", n, err)
	}
	if _, err := c.Read(ent); err != ErrAgain {
		t.Fatalf("read of the drained CQ = %v, want ErrAgain", err)
	}
}
