package fabtest

import (
	"errors"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// ownerSRX is a test SRX owner (the owner side of fi_peer(3) PEER SRX): it
// hands out application buffers to the peer provider and queues unexpected
// messages the peer reports.
type ownerSRX struct {
	mu        sync.Mutex
	bufs      [][]byte
	ctxs      []any
	queued    []*provider.RxEntry
	freed     int
	getCalls  int
	unspecCBs int
}

func (o *ownerSRX) post(buf []byte, ctx any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bufs = append(o.bufs, buf)
	o.ctxs = append(o.ctxs, ctx)
}

func (o *ownerSRX) GetMsg(addr fabric.Addr, size uint64) (*provider.RxEntry, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.getCalls++
	e := &provider.RxEntry{Addr: addr, MsgSize: size, Flags: fabric.FlagMsg | fabric.FlagRecv, Complete: true}
	if len(o.bufs) == 0 {
		return e, provider.ENOENT
	}
	e.SetBuf(o.bufs[0])
	e.Context = o.ctxs[0]
	o.bufs, o.ctxs = o.bufs[1:], o.ctxs[1:]
	return e, nil
}

func (o *ownerSRX) GetTag(addr fabric.Addr, size, tag uint64) (*provider.RxEntry, error) {
	return nil, provider.ENOSYS
}

func (o *ownerSRX) QueueMsg(e *provider.RxEntry) error {
	if e.Peer == nil {
		return provider.EINVAL
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queued = append(o.queued, e)
	return nil
}

func (o *ownerSRX) QueueTag(e *provider.RxEntry) error { return provider.ENOSYS }

func (o *ownerSRX) ForeachUnspecAddr(getAddr func(e *provider.RxEntry) fabric.Addr) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.unspecCBs++
}

func (o *ownerSRX) FreeEntry(e *provider.RxEntry) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.freed++
}

func (o *ownerSRX) takeQueued() *provider.RxEntry {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.queued) == 0 {
		return nil
	}
	e := o.queued[0]
	o.queued = o.queued[1:]
	return e
}

func sharedRxInfo(info *fabric.Info) { info.EPAttr.RxCtxCnt = fabric.SharedContext }

func init() {
	register("fi_srx_context/shared_rx_serves_every_bound_endpoint", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("covered by the connection-oriented suite")
		}
		r := tg.open(t, envOpts{noEnable: true})
		srx, err := r.dom.OpenSRX(nil, nil)
		if err != nil {
			t.Fatalf("fi_srx_context: %v", err)
		}
		t.Cleanup(func() { closeOK(t, "srx", srx.Close()) })
		info := r.info.Dup()
		sharedRxInfo(info)
		var eps [2]*fabric.Endpoint
		var cqs [2]*fabric.CQ
		var addrs [2][]byte
		for i := range eps {
			cqs[i] = r.openCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
			ep, err := r.dom.OpenEndpoint(info)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { closeOK(t, "endpoint", ep.Close()) })
			if err := ep.BindCQ(cqs[i], fabric.FlagTransmit|fabric.FlagRecv); err != nil {
				t.Fatal(err)
			}
			if err := ep.BindAV(r.av); err != nil {
				t.Fatal(err)
			}
			isErr(t, "enable without the SRX", ep.Enable(), fabric.ErrNoRX)
			if err := ep.BindSRX(srx); err != nil {
				t.Fatalf("bind srx: %v", err)
			}
			if err := ep.Enable(); err != nil {
				t.Fatal(err)
			}
			eps[i] = ep
			if addrs[i], err = ep.Name(); err != nil {
				t.Fatal(err)
			}
		}
		isErr(t, "close SRX while bound", srx.Close(), fabric.ErrBusy)
		bufs := [][]byte{make([]byte, 16), make([]byte, 16)}
		for i, b := range bufs {
			if err := srx.Recv(b, nil, fabric.AddrUnspec, i); err != nil {
				t.Fatalf("srx recv: %v", err)
			}
		}
		s := tg.open(t, envOpts{})
		for i := range eps {
			dst := s.insert(addrs[i])
			msg := []byte{'m', byte('0' + i)}
			retry(t, "send", func() error { return s.ep.Send(msg, nil, dst, nil) }, s.txcq)
			waitCQ(t, s.txcq)
			got, ee := waitCQ(t, cqs[i], s.txcq)
			if ee != nil || got.OpContext != i || string(bufs[i][:got.Len]) != string(msg) {
				t.Fatalf("endpoint %d: %+v %+v %q", i, got, ee, bufs[i][:got.Len])
			}
		}
	})
	register("fi_peer/import_srx_expected_unexpected_discard", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("covered by the connection-oriented suite")
		}
		r := tg.open(t, envOpts{noEnable: true})
		if _, err := r.dom.OpenSRX(&fabric.RxAttr{OpFlags: fabric.FlagPeer}, nil); !errors.Is(err, fabric.ErrInval) {
			t.Fatalf("FI_PEER SRX without an owner: %v", err)
		}
		owner := &ownerSRX{}
		psrx, err := r.dom.OpenSRX(&fabric.RxAttr{OpFlags: fabric.FlagPeer}, &fabric.PeerSRX{Owner: owner})
		if err != nil {
			t.Fatalf("import SRX: %v", err)
		}
		t.Cleanup(func() { closeOK(t, "srx", psrx.Close()) })
		isErr(t, "posting on an imported SRX", psrx.Recv(make([]byte, 4), nil, fabric.AddrUnspec, nil), fabric.ErrNoSys)
		info := r.info.Dup()
		sharedRxInfo(info)
		cq := r.openCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
		ep, err := r.dom.OpenEndpoint(info)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOK(t, "endpoint", ep.Close()) })
		for _, b := range []error{ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv), ep.BindAV(r.av), ep.BindSRX(psrx), ep.Enable()} {
			if b != nil {
				t.Fatal(b)
			}
		}
		isErr(t, "recv on the peer's endpoint", ep.Recv(make([]byte, 4), nil, fabric.AddrUnspec, nil), fabric.ErrNoSys)
		addr, _ := ep.Name()
		s := tg.open(t, envOpts{})
		dst := s.insert(addr)
		send := func(m string) {
			retry(t, "send", func() error { return s.ep.Send([]byte(m), nil, dst, nil) }, s.txcq)
			waitCQ(t, s.txcq)
		}
		// Expected path: the owner has a buffer when the message arrives.
		buf := make([]byte, 16)
		owner.post(buf, "expected")
		send("hello")
		got, ee := waitCQ(t, cq, s.txcq)
		if ee != nil || got.OpContext != "expected" || string(buf[:got.Len]) != "hello" {
			t.Fatalf("expected path: %+v %+v %q", got, ee, buf[:got.Len])
		}
		// Unexpected path: no buffer; the peer queues the message with the owner.
		send("later")
		var q *provider.RxEntry
		deadline := time.Now().Add(scaled(2 * time.Second))
		for q == nil && time.Now().Before(deadline) {
			cq.Read(nil)
			q = owner.takeQueued()
		}
		if q == nil || q.MsgSize != 5 || q.Peer == nil {
			t.Fatalf("unexpected message not queued with the owner: %+v", q)
		}
		late := make([]byte, 16)
		q.SetBuf(late)
		q.Context = "late"
		q.Flags = fabric.FlagMsg | fabric.FlagRecv
		q.Complete = true
		if err := q.Peer.StartMsg(q); err != nil {
			t.Fatalf("start_msg: %v", err)
		}
		got, ee = waitCQ(t, cq)
		if ee != nil || got.OpContext != "late" || string(late[:got.Len]) != "later" {
			t.Fatalf("unexpected path: %+v %+v %q", got, ee, late[:got.Len])
		}
		// Discard: no completion.
		send("drop")
		q = nil
		deadline = time.Now().Add(scaled(2 * time.Second))
		for q == nil && time.Now().Before(deadline) {
			cq.Read(nil)
			q = owner.takeQueued()
		}
		if q == nil {
			t.Fatal("second unexpected message not queued")
		}
		if err := q.Peer.DiscardMsg(q); err != nil {
			t.Fatalf("discard_msg: %v", err)
		}
		expectEmpty(t, cq, scaled(10*time.Millisecond))
		owner.mu.Lock()
		freed := owner.freed
		owner.mu.Unlock()
		if freed < 3 {
			t.Fatalf("free_entry called %d times; want one per message (3)", freed)
		}
	})
}
