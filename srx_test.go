package fabric

import (
	"errors"
	"sync"
	"testing"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

// srxTestCQ records completions written by the SRX and its peers.
type srxTestCQ struct {
	mu  sync.Mutex
	ok  []CQEntry
	err []CQErrEntry
}

func (c *srxTestCQ) Write(ctx any, flags Flags, length uint64, buf []byte, data, tag uint64, src Addr) error {
	c.mu.Lock()
	c.ok = append(c.ok, CQEntry{OpContext: ctx, Flags: flags, Len: length, Buf: buf, Data: data, Tag: tag})
	c.mu.Unlock()
	return nil
}

func (c *srxTestCQ) WriteErr(e *CQErrEntry) error {
	c.mu.Lock()
	c.err = append(c.err, *e)
	c.mu.Unlock()
	return nil
}

func (c *srxTestCQ) take() ([]CQEntry, []CQErrEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok, er := c.ok, c.err
	c.ok, c.err = nil, nil
	return ok, er
}

// srxTestDeliver plays a peer provider delivering an expected message.
func srxTestDeliver(t *testing.T, own provider.SRXOwner, cq provider.CQOwner, tagged bool, tag uint64, payload []byte) {
	t.Helper()
	var e *provider.RxEntry
	var err error
	if tagged {
		e, err = own.GetTag(3, uint64(len(payload)), tag)
	} else {
		e, err = own.GetMsg(3, uint64(len(payload)))
	}
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	n, olen := srx.Deliver(e, payload)
	srx.Complete(cq, nil, e, n, olen, 3)
	own.FreeEntry(e)
}

func srxTestOpen(t *testing.T, d *Domain, attr *RxAttr) (*SRX, *srxTestCQ) {
	t.Helper()
	s, err := d.OpenSRX(attr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cq := &srxTestCQ{}
	s.setCompletion(cq, nil, false)
	return s, cq
}

func TestSRXRecv(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	s, cq := srxTestOpen(t, d, nil)
	if s.queue() == nil || s.owner() != provider.SRXOwner(s.queue()) || s.domain() != d || s.Domain() != d {
		t.Fatal("hooks")
	}
	buf := make([]byte, 16)
	if err := s.Recv(buf, nil, AddrUnspec, "r1"); err != nil {
		t.Fatal(err)
	}
	a, b := make([]byte, 2), make([]byte, 4)
	if err := s.TRecvV([][]byte{a, b}, nil, AddrUnspec, 0x10, 0xf, "t1"); err != nil {
		t.Fatal(err)
	}
	srxTestDeliver(t, s.owner(), cq, false, 0, []byte("hello"))
	srxTestDeliver(t, s.owner(), cq, true, 0x1a, []byte("abcdef"))
	ok, er := cq.take()
	if len(ok) != 2 || len(er) != 0 {
		t.Fatalf("%+v %+v", ok, er)
	}
	if ok[0].OpContext != "r1" || ok[0].Len != 5 || string(buf[:5]) != "hello" || ok[0].Flags != FlagRecv|FlagMsg {
		t.Fatalf("untagged %+v", ok[0])
	}
	if ok[1].OpContext != "t1" || ok[1].Tag != 0x1a || string(a)+string(b) != "abcdef" || ok[1].Flags != FlagRecv|FlagTagged {
		t.Fatalf("tagged %+v", ok[1])
	}
}

func TestSRXPeekClaim(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	s, cq := srxTestOpen(t, d, nil)
	// No message: FI_ENOMSG.
	if err := s.TRecvMsg(&RecvMsg{Addr: AddrUnspec, Tag: 7, Context: "p"}, FlagPeek); err != nil {
		t.Fatal(err)
	}
	if _, er := cq.take(); len(er) != 1 || er[0].Err != ErrNoMsg {
		t.Fatalf("peek miss: %+v", er)
	}
	// Unexpected message from a peer, then peek|claim and claim.
	peer := &srxTestPeer{own: s.owner(), cq: cq}
	peer.sendUnexpected(t, 7, []byte("claim me"))
	ctx := new(int)
	if err := s.TRecvMsg(&RecvMsg{Addr: AddrUnspec, Tag: 7, Context: ctx}, FlagPeek|FlagClaim); err != nil {
		t.Fatal(err)
	}
	if ok, _ := cq.take(); len(ok) != 1 || ok[0].Len != 8 || ok[0].OpContext != ctx {
		t.Fatalf("peek|claim %+v", ok)
	}
	buf := make([]byte, 8)
	if err := s.TRecvMsg(&RecvMsg{IOV: [][]byte{buf}, Addr: AddrUnspec, Context: ctx}, FlagClaim); err != nil {
		t.Fatal(err)
	}
	if ok, _ := cq.take(); len(ok) != 1 || string(buf) != "claim me" || ok[0].Flags&FlagClaim == 0 {
		t.Fatalf("claim %+v %q", ok, buf)
	}
}

type srxTestPeer struct {
	own provider.SRXOwner
	cq  provider.CQOwner
}

func (p *srxTestPeer) sendUnexpected(t *testing.T, tag uint64, payload []byte) {
	t.Helper()
	e, err := p.own.GetTag(1, uint64(len(payload)), tag)
	if err != provider.ENOENT {
		t.Fatalf("expected ENOENT, got %v", err)
	}
	e.Peer = p
	e.PeerContext = payload
	if err := p.own.QueueTag(e); err != nil {
		t.Fatal(err)
	}
}

func (p *srxTestPeer) StartMsg(e *provider.RxEntry) error { return p.StartTag(e) }
func (p *srxTestPeer) StartTag(e *provider.RxEntry) error {
	n, olen := srx.Deliver(e, e.PeerContext.([]byte))
	srx.Complete(p.cq, nil, e, n, olen, 1)
	p.own.FreeEntry(e)
	return nil
}
func (p *srxTestPeer) DiscardMsg(e *provider.RxEntry) error { p.own.FreeEntry(e); return nil }
func (p *srxTestPeer) DiscardTag(e *provider.RxEntry) error { p.own.FreeEntry(e); return nil }

func TestSRXArgs(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	s, cq := srxTestOpen(t, d, &RxAttr{Caps: CapMsg | CapMultiRecv, Size: 2, IOVLimit: 2})
	if err := s.TRecv(make([]byte, 4), nil, AddrUnspec, 0, 0, nil); !errors.Is(err, ErrNoSys) {
		t.Fatalf("tagged receive without FI_TAGGED: %v", err)
	}
	if err := s.RecvMsg(&RecvMsg{}, FlagInject); !errors.Is(err, ErrBadFlags) {
		t.Fatalf("bad flags: %v", err)
	}
	if err := s.RecvV(make([][]byte, 3), nil, AddrUnspec, nil); !errors.Is(err, ErrInval) {
		t.Fatalf("iov limit: %v", err)
	}
	if err := s.RecvMsg(nil, 0); !errors.Is(err, ErrInval) {
		t.Fatalf("nil msg: %v", err)
	}
	if err := s.TRecvMsg(nil, 0); !errors.Is(err, ErrInval) {
		t.Fatalf("nil tagged msg: %v", err)
	}
	s.Recv(make([]byte, 4), nil, AddrUnspec, 1)
	s.Recv(make([]byte, 4), nil, AddrUnspec, 2)
	if err := s.Recv(make([]byte, 4), nil, AddrUnspec, 3); err != ErrAgain {
		t.Fatalf("rx queue full: %v", err)
	}
	if err := s.Cancel(2); err != nil {
		t.Fatal(err)
	}
	if _, er := cq.take(); len(er) != 1 || er[0].Err != ErrCanceled || er[0].OpContext != 2 {
		t.Fatalf("cancel completion %+v", er)
	}
	if err := s.Cancel(2); err != ErrNoEnt {
		t.Fatalf("second cancel: %v", err)
	}
	// Multi-recv through RecvMsg, with FI_OPT_MIN_MULTI_RECV.
	if v, err := s.GetOpt(OptEndpoint, OptMinMultiRecv); err != nil || v != srx.DefaultMinMultiRecv {
		t.Fatalf("getopt %d %v", v, err)
	}
	if err := s.SetOpt(OptEndpoint, OptMinMultiRecv, 4); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.GetOpt(OptEndpoint, OptMinMultiRecv); v != 4 {
		t.Fatalf("min multi recv %d", v)
	}
	if _, err := s.GetOpt(OptEndpoint, OptCMDataSize); !errors.Is(err, ErrNoProtoOpt) {
		t.Fatalf("unknown option: %v", err)
	}
	if err := s.SetOpt(1, OptMinMultiRecv, 1); !errors.Is(err, ErrNoProtoOpt) {
		t.Fatalf("unknown level: %v", err)
	}
	s.Cancel(1)
	cq.take()
	mb := make([]byte, 12)
	if err := s.RecvMsg(&RecvMsg{IOV: [][]byte{mb}, Addr: AddrUnspec, Context: "multi"}, FlagMultiRecv|FlagCompletion); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		srxTestDeliver(t, s.owner(), cq, false, 0, []byte("abcd"))
	}
	ok, _ := cq.take()
	if len(ok) != 3 || ok[2].Flags&FlagMultiRecv == 0 || string(mb) != "abcdabcdabcd" {
		t.Fatalf("multi-recv %+v", ok)
	}
}

func TestSRXSelectiveCompletion(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	s, cq := srxTestOpen(t, d, nil)
	s.setCompletion(cq, nil, true)
	s.Recv(make([]byte, 4), nil, AddrUnspec, "quiet")
	s.RecvMsg(&RecvMsg{IOV: [][]byte{make([]byte, 4)}, Addr: AddrUnspec, Context: "loud"}, FlagCompletion)
	srxTestDeliver(t, s.owner(), cq, false, 0, []byte("a"))
	srxTestDeliver(t, s.owner(), cq, false, 0, []byte("b"))
	if ok, _ := cq.take(); len(ok) != 1 || ok[0].OpContext != "loud" {
		t.Fatalf("selective completion %+v", ok)
	}
}

func TestSRXPeerImport(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	ownerQ := srx.New(srx.Config{Tagged: true})
	s, err := d.OpenSRX(&RxAttr{OpFlags: FlagPeer}, &PeerSRX{Owner: ownerQ})
	if err != nil {
		t.Fatal(err)
	}
	if s.queue() != nil || s.owner() != provider.SRXOwner(ownerQ) {
		t.Fatal("peer import hooks")
	}
	if err := s.Recv(make([]byte, 4), nil, AddrUnspec, nil); !errors.Is(err, ErrNoSys) {
		t.Fatalf("recv on a peer SRX: %v", err)
	}
	if err := s.TRecvMsg(&RecvMsg{}, FlagPeek); !errors.Is(err, ErrNoSys) {
		t.Fatalf("trecvmsg on a peer SRX: %v", err)
	}
	if err := s.Cancel(nil); !errors.Is(err, ErrNoSys) {
		t.Fatalf("cancel on a peer SRX: %v", err)
	}
	if _, err := s.GetOpt(OptEndpoint, OptMinMultiRecv); !errors.Is(err, ErrNoSys) {
		t.Fatalf("getopt on a peer SRX: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.OpenSRX(&RxAttr{OpFlags: FlagPeer}, nil); !errors.Is(err, ErrInval) {
		t.Fatalf("FI_PEER without context: %v", err)
	}
	if _, err := d.OpenSRX(&RxAttr{OpFlags: FlagPeer}, &PeerSRX{}); !errors.Is(err, ErrInval) {
		t.Fatalf("FI_PEER without owner: %v", err)
	}
	if _, err := d.OpenSRX(nil, &PeerSRX{Owner: ownerQ}); !errors.Is(err, ErrInval) {
		t.Fatalf("owner without FI_PEER: %v", err)
	}
}

func TestSRXClose(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	s, err := d.OpenSRX(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cq := &srxTestCQ{}
	s.setCompletion(cq, nil, false)
	if err := d.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("domain close with an SRX: %v", err)
	}
	if err := s.bindEndpoint(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("close while bound: %v", err)
	}
	s.Recv(make([]byte, 4), nil, AddrUnspec, "pending")
	s.unbindEndpoint()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, er := cq.take(); len(er) != 1 || er[0].Err != ErrCanceled {
		t.Fatalf("close completions %+v", er)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if err := s.Recv(make([]byte, 4), nil, AddrUnspec, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("recv after close: %v", err)
	}
	if err := s.Cancel(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("cancel after close: %v", err)
	}
	if err := s.SetOpt(OptEndpoint, OptMinMultiRecv, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("setopt after close: %v", err)
	}
}

func TestSRXZeroAllocs(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	s, _ := srxTestOpen(t, d, nil)
	own := s.owner()
	buf := make([]byte, 64)
	ctx := new(int)
	m := &RecvMsg{IOV: [][]byte{buf}, Addr: AddrUnspec, Context: ctx, Tag: 5}
	if a := testing.AllocsPerRun(1000, func() {
		if err := s.Recv(buf, nil, AddrUnspec, ctx); err != nil {
			t.Fatal(err)
		}
		e, err := own.GetMsg(1, 8)
		if err != nil {
			t.Fatal(err)
		}
		own.FreeEntry(e)
		if err := s.TRecvMsg(m, FlagCompletion); err != nil {
			t.Fatal(err)
		}
		if e, err = own.GetTag(1, 8, 5); err != nil {
			t.Fatal(err)
		}
		own.FreeEntry(e)
	}); a != 0 {
		t.Fatalf("%v allocs per SRX receive", a)
	}
}
