package fabtest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// stxProcEPs and stxProcPer are the endpoints on the peer process's STX
// and the messages each sends in the cross-process STX case.
const stxProcEPs, stxProcPer = 3, 8

// processSTXEndpoints: in the peer process stxProcEPs endpoints share one
// STX (and one SRX where the provider has them); each sends stxProcPer
// messages, carrying its name, here. Every message arrives, each
// endpoint's in order where msg_order has FI_ORDER_SAS; a reply to each
// endpoint completes on that endpoint's own CQ there (checked by the peer).
func processSTXEndpoints(t *testing.T, tg Target) {
	connectionless(t, tg)
	stxClaimed(t, tg)
	e := tg.open(t, envOpts{})
	bufs := make([][]byte, stxProcEPs*stxProcPer)
	for i := range bufs {
		bufs[i] = make([]byte, 512)
		if err := e.ep.Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	wait := startHelper(t, tg, "stx-send", e.addr, stxProcPer)
	defer wait()
	sas := e.info.TxAttr.MsgOrder&fabric.OrderSAS != 0
	var next [stxProcEPs]int
	var dst [stxProcEPs]fabric.Addr
	for range bufs {
		got, ee := waitCQ(t, e.rxcq, e.txcq)
		if ee != nil {
			t.Fatalf("receive: %+v", *ee)
		}
		b := bufs[got.OpContext.(int)][:got.Len]
		if len(b) < 3 || b[0] != 'x' || int(b[1]) >= stxProcEPs {
			t.Fatalf("receive: %q", b)
		}
		i, k := int(b[1]), int(b[2])
		if sas && k != next[i] {
			t.Fatalf("endpoint %d: message %d arrived before %d (msg_order has FI_ORDER_SAS)", i, k, next[i])
		}
		if k == 0 {
			dst[i] = e.insert(append([]byte(nil), b[3:]...))
		}
		next[i]++
	}
	for i, c := range next {
		if c != stxProcPer {
			t.Fatalf("endpoint %d: %d messages arrived, want %d", i, c, stxProcPer)
		}
	}
	expectEmpty(t, e.rxcq, scaled(20*time.Millisecond), e.txcq) // 20 ms: nothing more
	for i := range dst {
		msg := []byte{'r', byte(i)}
		retry(t, "reply", func() error { return e.ep.Send(msg, nil, dst[i], i) }, e.txcq)
		if got, ee := waitCQ(t, e.txcq); ee != nil || got.OpContext != i {
			t.Fatalf("reply to endpoint %d: %+v %+v", i, got, ee)
		}
	}
}

// processSTXMsgEndpoints is processSTXEndpoints for FI_EP_MSG: the peer
// process's endpoints on one STX connect here one after the other; each
// one's messages arrive on its own connection, in order, and the reply on
// each connection completes on that endpoint's CQ there.
func processSTXMsgEndpoints(t *testing.T, tg Target) {
	msgOnly(t, tg)
	stxClaimed(t, tg)
	l := tg.listen(t, envOpts{})
	wait := startHelper(t, tg, "stx-send", l.name, stxProcPer)
	defer wait()
	var bs [stxProcEPs]*env
	bufs := make([][]byte, stxProcEPs*stxProcPer)
	for i := range bs {
		bs[i] = tg.accept(t, l, envOpts{}, nil)
		for k := 0; k < stxProcPer; k++ {
			j := i*stxProcPer + k
			bufs[j] = make([]byte, 512)
			if err := bs[i].ep.Recv(bufs[j], nil, fabric.AddrUnspec, j); err != nil {
				t.Fatal(err)
			}
		}
		if ev, ee := waitEvent(t, bs[i].eq); ee != nil || ev.Event != fabric.EventConnected {
			t.Fatalf("accept %d: %+v %+v", i, ev, ee)
		}
	}
	// Every receive is posted: tell the peer to send.
	retry(t, "go", func() error { return bs[0].ep.Send([]byte("g"), nil, fabric.AddrUnspec, "go") }, bs[0].txcq)
	if got, ee := waitCQ(t, bs[0].txcq); ee != nil || got.OpContext != "go" {
		t.Fatalf("go: %+v %+v", got, ee)
	}
	for i, b := range bs {
		for k := 0; k < stxProcPer; k++ {
			got, ee := waitCQ(t, b.rxcq, b.txcq)
			if ee != nil {
				t.Fatalf("connection %d receive %d: %+v", i, k, *ee)
			}
			m := bufs[got.OpContext.(int)][:got.Len]
			if len(m) < 3 || m[0] != 'x' || int(m[1]) != i || int(m[2]) != k {
				t.Fatalf("connection %d receive %d: %q", i, k, m)
			}
		}
		expectEmpty(t, b.rxcq, scaled(20*time.Millisecond), b.txcq)
		msg := []byte{'r', byte(i)}
		retry(t, "reply", func() error { return b.ep.Send(msg, nil, fabric.AddrUnspec, i) }, b.txcq)
		if got, ee := waitCQ(t, b.txcq); ee != nil || got.OpContext != i {
			t.Fatalf("reply on connection %d: %+v %+v", i, got, ee)
		}
	}
	for _, b := range bs {
		if err := b.ep.Shutdown(0); err != nil {
			t.Fatal(err)
		}
	}
}

// helperSTXSend is the peer process of processSTXEndpoints and
// processSTXMsgEndpoints.
func helperSTXSend(t *testing.T, tg Target, peer []byte, per int) {
	r := stxClaimed(t, tg)
	x := r.openSTX(nil)
	info := r.info.Dup()
	sharedTxInfo(info)
	var srx *fabric.SRX
	if r.info.DomainAttr.MaxEPSrxCtx != 0 {
		sharedRxInfo(info)
		var err error
		if srx, err = r.dom.OpenSRX(nil, nil); err != nil {
			t.Fatalf("fi_srx_context: %v", err)
		}
		t.Cleanup(func() { closeOK(t, "srx", srx.Close()) })
	}
	var eps [stxProcEPs]*fabric.Endpoint
	var cqs [stxProcEPs]*fabric.CQ
	var names [stxProcEPs][]byte
	for i := range eps {
		eps[i], cqs[i] = r.stxEndpoint(info)
		if err := eps[i].BindSTX(x); err != nil {
			t.Fatalf("bind stx: %v", err)
		}
		if srx != nil {
			if err := eps[i].BindSRX(srx); err != nil {
				t.Fatalf("bind srx: %v", err)
			}
		}
		if tg.EPType != fabric.EPMsg {
			if err := eps[i].Enable(); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if names[i], err = eps[i].Name(); err != nil {
			t.Fatal(err)
		}
	}
	dst := fabric.AddrUnspec
	if tg.EPType == fabric.EPMsg {
		// Connect one after the other, then wait for the parent's go.
		for i, ep := range eps {
			if err := ep.Connect(peer, nil); err != nil {
				t.Fatalf("fi_connect %d: %v", i, err)
			}
			if ev, ee := waitEvent(t, r.eq); ee != nil || ev.Event != fabric.EventConnected || ev.FID != ep {
				t.Fatalf("connect %d: %+v %+v", i, ev, ee)
			}
		}
		gbuf := make([]byte, 8)
		var err error
		if srx != nil {
			err = srx.Recv(gbuf, nil, fabric.AddrUnspec, "go")
		} else {
			err = eps[0].Recv(gbuf, nil, fabric.AddrUnspec, "go")
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, ee := waitCQ(t, cqs[0]); ee != nil || got.OpContext != "go" || string(gbuf[:got.Len]) != "g" {
			t.Fatalf("go: %+v %+v", got, ee)
		}
	} else {
		dst = r.insert(peer)
	}
	// One receive for each endpoint's reply: on the SRX, or on each.
	rbufs := make([][]byte, stxProcEPs)
	for i := range rbufs {
		rbufs[i] = make([]byte, 16)
		var err error
		if srx != nil {
			err = srx.Recv(rbufs[i], nil, fabric.AddrUnspec, 100+i)
		} else {
			err = eps[i].Recv(rbufs[i], nil, fabric.AddrUnspec, 100+i)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	all := cqs[:]
	for k := 0; k < per; k++ {
		for i, ep := range eps {
			msg := append([]byte{'x', byte(i), byte(k)}, names[i]...)
			ctx := fmt.Sprintf("ep%d-%d", i, k)
			retry(t, "send", func() error { return ep.Send(msg, nil, dst, ctx) }, all...)
		}
	}
	// Each endpoint's sends complete on its own CQ, in order, and so does
	// the reply to it.
	sent := [stxProcEPs]int{}
	replied := [stxProcEPs]bool{}
	for left := stxProcEPs * (per + 1); left > 0; left-- {
		i, got, ee := waitAnyCQ(t, all)
		if ee != nil {
			t.Fatalf("endpoint %d: %+v", i, *ee)
		}
		if got.Flags&fabric.FlagRecv != 0 {
			j := got.OpContext.(int) - 100
			b := rbufs[j][:got.Len]
			if !bytes.Equal(b, []byte{'r', byte(i)}) || replied[i] {
				t.Fatalf("endpoint %d: reply %q (buffer %d, twice: %v)", i, b, j, replied[i])
			}
			replied[i] = true
			continue
		}
		if want := fmt.Sprintf("ep%d-%d", i, sent[i]); got.OpContext != want || got.Flags&fabric.FlagSend == 0 {
			t.Fatalf("endpoint %d: completion %+v, want the send %q", i, got, want)
		}
		sent[i]++
	}
	if tg.EPType == fabric.EPMsg {
		for range eps {
			if ev, ee := waitEvent(t, r.eq); ee != nil || ev.Event != fabric.EventShutdown {
				t.Fatalf("want FI_SHUTDOWN from the parent, got %+v %+v", ev, ee)
			}
		}
	}
}

// waitAnyCQ waits (bounded) for a completion on any of cqs and returns
// which one had it.
func waitAnyCQ(t testing.TB, cqs []*fabric.CQ) (int, fabric.CQEntry, *fabric.CQErrEntry) {
	t.Helper()
	ent := make([]fabric.CQEntry, 1)
	deadline := time.Now().Add(scaled(10 * time.Second))
	for time.Now().Before(deadline) {
		for i, cq := range cqs {
			n, err := cq.Read(ent)
			if n == 1 {
				return i, ent[0], nil
			}
			if errors.Is(err, fabric.ErrAvail) {
				var ee fabric.CQErrEntry
				if err := cq.ReadErr(&ee); err != nil {
					t.Fatalf("ReadErr after ErrAvail: %v", err)
				}
				return i, fabric.CQEntry{}, &ee
			}
			if err != nil && !errors.Is(err, fabric.ErrAgain) {
				t.Fatalf("cq.Read: %v", err)
			}
		}
	}
	t.Fatal("no completion on any CQ within the bound")
	return 0, fabric.CQEntry{}, nil
}
