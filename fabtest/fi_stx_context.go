package fabtest

import (
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// stxCases are the shared transmit contexts of fi_endpoint(3) ("Shared
// Contexts", fi_stx_context, ep_attr.tx_ctx_cnt = FI_SHARED_CONTEXT) and
// their reporting by fi_getinfo(3).
var stxCases = []testCase{
	{"fi_stx_context/getinfo_reports_shared_context", stxGetinfoReportsSharedContext},
	{"fi_stx_context/endpoints_complete_on_their_own_cqs", stxEndpointsCompleteOnTheirOwnCQs},
	{"fi_stx_context/msg_endpoints_share_one_stx", stxMsgEndpointsShareOneSTX},
	{"fi_stx_context/with_srx_endpoints_reach_each_other", stxWithSRXEndpointsReachEachOther},
	{"fi_stx_context/bind_errors", stxBindErrors},
	{"fi_stx_context/close_bound_EBUSY_nothing_lost", stxCloseBoundEBUSYNothingLost},
}

// stxClaimed skips targets whose domain shares no transmit context
// (max_ep_stx_ctx 0), after checking that they refuse fi_stx_context.
func stxClaimed(t *testing.T, tg Target) *env {
	t.Helper()
	e := tg.open(t, envOpts{noEnable: true})
	if e.info.DomainAttr.MaxEPStxCtx == 0 {
		_, err := e.dom.OpenSTX(nil)
		isErr(t, "fi_stx_context without max_ep_stx_ctx", err, fabric.ErrNoSys)
		t.Skip("the provider reports no shared transmit contexts (max_ep_stx_ctx 0)")
	}
	return e
}

// sharedTxInfo asks info for a shared transmit context.
func sharedTxInfo(info *fabric.Info) { info.EPAttr.TxCtxCnt = fabric.SharedContext }

// openSTX opens a shared transmit context on e's domain, closed at cleanup.
func (e *env) openSTX(attr *fabric.TxAttr) *fabric.STX {
	e.t.Helper()
	x, err := e.dom.OpenSTX(attr)
	if err != nil {
		e.t.Fatalf("fi_stx_context: %v", err)
	}
	e.t.Cleanup(func() { closeOK(e.t, "stx", x.Close()) })
	return x
}

// stxEndpoint opens an endpoint for a shared transmit context on e's
// domain with its own CQ for both directions, bound to e's AV (or EQ),
// closed at cleanup. It is not bound to a context nor enabled.
func (e *env) stxEndpoint(info *fabric.Info) (*fabric.Endpoint, *fabric.CQ) {
	e.t.Helper()
	cq := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
	ep, err := e.dom.OpenEndpoint(info)
	if err != nil {
		e.t.Fatalf("fi_endpoint with tx_ctx_cnt FI_SHARED_CONTEXT: %v", err)
	}
	e.t.Cleanup(func() { closeOK(e.t, "endpoint", ep.Close()) })
	if err := ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
		e.t.Fatal(err)
	}
	if e.av != nil {
		if err := ep.BindAV(e.av); err != nil {
			e.t.Fatal(err)
		}
	}
	if e.eq != nil {
		if err := ep.BindEQ(e.eq); err != nil {
			e.t.Fatal(err)
		}
	}
	return ep, cq
}

// fi_getinfo: hints with ep_attr.tx_ctx_cnt (and rx_ctx_cnt) set to
// FI_SHARED_CONTEXT return infos that say so, from domains that report
// max_ep_stx_ctx (max_ep_srx_ctx); an endpoint opened from one takes a
// shared context.
func stxGetinfoReportsSharedContext(t *testing.T, tg Target) {
	stxClaimed(t, tg)
	for _, rx := range []bool{false, true} {
		h := tg.hints(0)
		sharedTxInfo(h)
		if rx {
			sharedRxInfo(h)
		}
		infos, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
		if err != nil {
			t.Fatalf("fi_getinfo with tx_ctx_cnt FI_SHARED_CONTEXT (rx too: %v): %v", rx, err)
		}
		for _, in := range infos {
			if in.EPAttr.TxCtxCnt != fabric.SharedContext || in.DomainAttr.MaxEPStxCtx == 0 {
				t.Errorf("info %s/%v: tx_ctx_cnt %d, max_ep_stx_ctx %d", in.FabricAttr.ProvName,
					in.EPAttr.Type, in.EPAttr.TxCtxCnt, in.DomainAttr.MaxEPStxCtx)
			}
			if rx && (in.EPAttr.RxCtxCnt != fabric.SharedContext || in.DomainAttr.MaxEPSrxCtx == 0) {
				t.Errorf("info %s/%v: rx_ctx_cnt %d, max_ep_srx_ctx %d", in.FabricAttr.ProvName,
					in.EPAttr.Type, in.EPAttr.RxCtxCnt, in.DomainAttr.MaxEPSrxCtx)
			}
			if !rx && in.EPAttr.RxCtxCnt == fabric.SharedContext {
				t.Errorf("info %s/%v: rx_ctx_cnt FI_SHARED_CONTEXT not asked for", in.FabricAttr.ProvName, in.EPAttr.Type)
			}
		}
	}
}

// Several endpoints on one STX: an endpoint opened for a shared transmit
// context does not enable without one (FI_ENOCQ), binds exactly one; each
// one's operations complete on its own CQ with its own context, never on
// another's, and a receiver sees each one's messages from that endpoint in
// order when the context orders sends (FI_ORDER_SAS).
func stxEndpointsCompleteOnTheirOwnCQs(t *testing.T, tg Target) {
	connectionless(t, tg)
	r := stxClaimed(t, tg)
	x := r.openSTX(nil)
	info := r.info.Dup()
	sharedTxInfo(info)
	const n, per = 3, 4
	var eps [n]*fabric.Endpoint
	var cqs [n]*fabric.CQ
	for i := range eps {
		eps[i], cqs[i] = r.stxEndpoint(info)
		isErr(t, "enable without the STX", eps[i].Enable(), fabric.ErrNoCQ)
		if err := eps[i].BindSTX(x); err != nil {
			t.Fatalf("bind stx: %v", err)
		}
		isErr(t, "bind a second STX", eps[i].BindSTX(x), fabric.ErrInval)
		if err := eps[i].Enable(); err != nil {
			t.Fatalf("enable with the STX: %v", err)
		}
	}
	s := tg.open(t, envOpts{})
	var dst [n]fabric.Addr // s knows every endpoint (they share no address)
	for i, ep := range eps {
		name, err := ep.Name()
		if err != nil {
			t.Fatal(err)
		}
		dst[i] = s.insert(name)
	}
	sAddr := r.insert(s.addr)
	bufs := make([][]byte, n*per)
	for i := range bufs {
		bufs[i] = make([]byte, 16)
		if err := s.ep.Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatalf("recv: %v", err)
		}
	}
	// Post round-robin across the endpoints: k-th message of endpoint i.
	for k := 0; k < per; k++ {
		for i, ep := range eps {
			msg := []byte{byte('a' + i), byte('0' + k)}
			ctx := fmt.Sprintf("ep%d-%d", i, k)
			retry(t, "send", func() error { return ep.Send(msg, nil, sAddr, ctx) }, cqs[i], s.rxcq)
		}
	}
	for i := range eps {
		for k := 0; k < per; k++ {
			others := []*fabric.CQ{s.rxcq}
			got, ee := waitCQ(t, cqs[i], others...)
			if ee != nil {
				t.Fatalf("endpoint %d send %d: %+v", i, k, ee)
			}
			if want := fmt.Sprintf("ep%d-%d", i, k); got.OpContext != want || got.Flags&fabric.FlagSend == 0 {
				t.Fatalf("endpoint %d: completion %+v, want context %q (a send)", i, got, want)
			}
		}
	}
	for i := range cqs {
		expectEmpty(t, cqs[i], scaled(20*time.Millisecond)) // 20 ms: no one else's completion
	}
	next := [n]int{}
	for range bufs {
		got, ee := waitCQ(t, s.rxcq)
		if ee != nil {
			t.Fatalf("receive: %+v", ee)
		}
		b := bufs[got.OpContext.(int)][:got.Len]
		if len(b) != 2 || b[0] < 'a' || int(b[0]-'a') >= n {
			t.Fatalf("receive: %q", b)
		}
		i, k := int(b[0]-'a'), int(b[1]-'0')
		if x.Attr().MsgOrder&fabric.OrderSAS != 0 && k != next[i] {
			t.Fatalf("endpoint %d: message %d arrived before %d (msg_order has FI_ORDER_SAS)", i, k, next[i])
		}
		next[i]++
	}
	for i, c := range next {
		if c != per {
			t.Fatalf("endpoint %d: %d messages arrived, want %d", i, c, per)
		}
	}
}

// FI_EP_MSG: several connected endpoints on one STX, each sending to its
// own peer and completing on its own CQ.
func stxMsgEndpointsShareOneSTX(t *testing.T, tg Target) {
	msgOnly(t, tg)
	r := stxClaimed(t, tg)
	x := r.openSTX(nil)
	l := tg.listen(t, envOpts{})
	info := r.info.Dup()
	sharedTxInfo(info)
	const n = 3
	var eps [n]*fabric.Endpoint
	var cqs [n]*fabric.CQ
	var peers [n]*env
	for i := range eps {
		eps[i], cqs[i] = r.stxEndpoint(info)
		isErr(t, "enable without the STX", eps[i].Enable(), fabric.ErrNoCQ)
		if err := eps[i].BindSTX(x); err != nil {
			t.Fatalf("bind stx: %v", err)
		}
		if err := eps[i].Connect(l.name, nil); err != nil {
			t.Fatalf("fi_connect: %v", err)
		}
		peers[i] = tg.accept(t, l, envOpts{}, nil)
		for _, c := range []struct {
			eq *fabric.EQ
			ep *fabric.Endpoint
		}{{peers[i].eq, peers[i].ep}, {r.eq, eps[i]}} {
			ev, ee := waitEvent(t, c.eq)
			if ee != nil || ev.Event != fabric.EventConnected || ev.FID != c.ep {
				t.Fatalf("want FI_CONNECTED for %p, got %+v %+v", c.ep, ev, ee)
			}
		}
	}
	isErr(t, "close the STX while bound", x.Close(), fabric.ErrBusy)
	for i, p := range peers {
		buf := make([]byte, 8)
		if err := p.ep.Recv(buf, nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
		msg := []byte{'m', byte('0' + i)}
		retry(t, "send", func() error { return eps[i].Send(msg, nil, fabric.AddrUnspec, i) }, cqs[i], p.rxcq)
		got, ee := waitCQ(t, cqs[i], p.rxcq)
		if ee != nil || got.OpContext != i {
			t.Fatalf("endpoint %d send: %+v %+v", i, got, ee)
		}
		got, ee = waitCQ(t, p.rxcq)
		if ee != nil || got.OpContext != i || string(buf[:got.Len]) != string(msg) {
			t.Fatalf("peer %d receive: %+v %+v %q", i, got, ee, buf[:got.Len])
		}
	}
	for i := range cqs {
		expectEmpty(t, cqs[i], scaled(20*time.Millisecond))
	}
}

// Endpoints sharing both an STX and an SRX (the fabtests fi_shared_ctx
// layout) reach each other: receives posted on the SRX serve every one,
// each receive completes on the CQ of the endpoint the message arrived at,
// each send on the CQ of the endpoint that sent it.
func stxWithSRXEndpointsReachEachOther(t *testing.T, tg Target) {
	connectionless(t, tg)
	r := stxClaimed(t, tg)
	if r.info.DomainAttr.MaxEPSrxCtx == 0 {
		t.Skip("the provider reports no shared receive contexts")
	}
	x := r.openSTX(nil)
	srx, err := r.dom.OpenSRX(nil, nil)
	if err != nil {
		t.Fatalf("fi_srx_context: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "srx", srx.Close()) })
	info := r.info.Dup()
	sharedTxInfo(info)
	sharedRxInfo(info)
	const n = 3
	var eps [n]*fabric.Endpoint
	var cqs [n]*fabric.CQ
	var addrs [n]fabric.Addr
	for i := range eps {
		eps[i], cqs[i] = r.stxEndpoint(info)
		if err := eps[i].BindSTX(x); err != nil {
			t.Fatal(err)
		}
		isErr(t, "enable without the SRX", eps[i].Enable(), fabric.ErrNoRX)
		if err := eps[i].BindSRX(srx); err != nil {
			t.Fatal(err)
		}
		if err := eps[i].Enable(); err != nil {
			t.Fatal(err)
		}
		name, err := eps[i].Name()
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = r.insert(name)
	}
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, 16)
		if err := srx.Recv(bufs[i], nil, fabric.AddrUnspec, 100+i); err != nil {
			t.Fatal(err)
		}
	}
	all := cqs[:]
	for i := range eps {
		to := (i + 1) % n
		msg := []byte{'s', byte('0' + i)}
		retry(t, "send", func() error { return eps[i].Send(msg, nil, addrs[to], i) }, all...)
		got, ee := waitCQ(t, cqs[i], all...)
		if ee != nil || got.OpContext != i || got.Flags&fabric.FlagSend == 0 {
			t.Fatalf("endpoint %d send: %+v %+v", i, got, ee)
		}
		got, ee = waitCQ(t, cqs[to], all...)
		if ee != nil || got.Flags&fabric.FlagRecv == 0 {
			t.Fatalf("endpoint %d receive: %+v %+v", to, got, ee)
		}
		b := bufs[got.OpContext.(int)-100][:got.Len]
		if string(b) != string(msg) {
			t.Fatalf("endpoint %d received %q, want %q", to, b, msg)
		}
	}
}

// fi_ep_bind with an STX: the errors of fi_endpoint(3), and a context
// granted only what the provider can do (fi_stx_context).
func stxBindErrors(t *testing.T, tg Target) {
	r := stxClaimed(t, tg)
	x := r.openSTX(nil)
	if got, want := x.Attr(), *r.info.TxAttr; got.Size != want.Size || got.Caps != want.Caps ||
		got.MsgOrder != want.MsgOrder || got.InjectSize != want.InjectSize {
		t.Fatalf("fi_stx_context(NULL attr) granted %+v, want the domain's %+v", got, want)
	}
	info := r.info.Dup()
	sharedTxInfo(info)
	ep, _ := r.stxEndpoint(info)

	// An endpoint with its own transmit context takes no STX.
	plain := r.bareEndpoint()
	isErr(t, "bind an STX to an endpoint with tx_ctx_cnt 1", plain.BindSTX(x), fabric.ErrInval)

	var nilSTX *fabric.STX
	isErr(t, "bind a nil STX", ep.BindSTX(nilSTX), fabric.ErrInval)
	isErr(t, "bind with flags", ep.Bind(x, fabric.FlagTransmit), fabric.ErrBadFlags)

	// An STX of another domain.
	o := tg.open(t, envOpts{noEnable: true})
	ox := o.openSTX(nil)
	isErr(t, "bind an STX of another domain", ep.BindSTX(ox), fabric.ErrDomain)

	// An STX smaller than the endpoint's transmit attributes.
	small := *r.info.TxAttr
	small.Size = max(1, r.info.TxAttr.Size/2)
	if small.Size < r.info.TxAttr.Size {
		sx := r.openSTX(&small)
		isErr(t, "bind an STX with a smaller size", ep.BindSTX(sx), fabric.ErrInval)
	}
	if r.info.TxAttr.IOVLimit > 1 {
		few := *r.info.TxAttr
		few.IOVLimit = 1
		sx := r.openSTX(&few)
		isErr(t, "bind an STX with a smaller iov_limit", ep.BindSTX(sx), fabric.ErrInval)
	}

	// The provider grants no more than it can.
	big := *r.info.TxAttr
	big.Size = 1 << 40
	if sx, err := r.dom.OpenSTX(&big); err == nil {
		sx.Close()
		t.Fatal("fi_stx_context with size 2^40 succeeded")
	} else {
		isErr(t, "fi_stx_context with size 2^40", err, fabric.ErrInval)
	}

	// A closed STX binds nothing.
	cx, err := r.dom.OpenSTX(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cx.Close(); err != nil {
		t.Fatal(err)
	}
	isErr(t, "close an STX twice", cx.Close(), fabric.ErrClosed)
	isErr(t, "bind a closed STX", ep.BindSTX(cx), fabric.ErrClosed)

	// After all that the endpoint still binds one and only one.
	if err := ep.BindSTX(x); err != nil {
		t.Fatalf("bind stx after the refusals: %v", err)
	}
	isErr(t, "bind the STX twice", ep.BindSTX(x), fabric.ErrInval)
	isErr(t, "bind another STX", ep.BindSTX(r.openSTX(nil)), fabric.ErrInval)
}

// fi_close of an STX while endpoints are bound returns FI_EBUSY and
// changes nothing: the endpoints keep sending; once they are closed the
// STX closes.
func stxCloseBoundEBUSYNothingLost(t *testing.T, tg Target) {
	connectionless(t, tg)
	r := stxClaimed(t, tg)
	x, err := r.dom.OpenSTX(nil)
	if err != nil {
		t.Fatal(err)
	}
	info := r.info.Dup()
	sharedTxInfo(info)
	ep, cq := r.stxEndpoint(info)
	if err := ep.BindSTX(x); err != nil {
		t.Fatal(err)
	}
	if err := ep.Enable(); err != nil {
		t.Fatal(err)
	}
	isErr(t, "close a bound STX", x.Close(), fabric.ErrBusy)
	s := tg.open(t, envOpts{})
	dst := r.insert(s.addr)
	buf := make([]byte, 8)
	if err := s.ep.Recv(buf, nil, fabric.AddrUnspec, "r"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send after the refused close", func() error { return ep.Send([]byte("after"), nil, dst, "s") }, cq, s.rxcq)
	if got, ee := waitCQ(t, cq, s.rxcq); ee != nil || got.OpContext != "s" {
		t.Fatalf("send: %+v %+v", got, ee)
	}
	if got, ee := waitCQ(t, s.rxcq); ee != nil || string(buf[:got.Len]) != "after" {
		t.Fatalf("receive: %+v %+v", got, ee)
	}
	isErr(t, "close a bound STX again", x.Close(), fabric.ErrBusy)
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatalf("close the STX after its endpoint: %v", err)
	}
	isErr(t, "second close", x.Close(), fabric.ErrClosed)
}
