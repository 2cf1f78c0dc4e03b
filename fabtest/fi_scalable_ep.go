package fabtest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// scalableCases lists the fi_endpoint(3) "SCALABLE ENDPOINTS" behaviours
// (fi_scalable_ep, fi_scalable_ep_bind, fi_tx_context, fi_rx_context) with
// fi_av(3) rx_ctx_bits and fi_rx_addr, in the order they run. They run
// where the provider reports more than one context per endpoint
// (domain_attr.max_ep_tx_ctx/max_ep_rx_ctx) and FI_NAMED_RX_CTX.
var scalableCases = []testCase{
	{"fi_getinfo/scalable_ctx_counts", sepGetinfoCtxCounts},
	{"fi_scalable_ep/contexts_reach_named_rx_contexts", sepContextsReachNamedRxContexts},
	{"fi_scalable_ep/tx_contexts_source_is_endpoint", sepTxContextsSource},
	{"fi_scalable_ep/ordinary_endpoint_reaches_rx_context_0", sepOrdinaryEndpointReachesRxContext0},
	{"fi_scalable_ep/ordinary_endpoint_names_rx_context", sepOrdinaryEndpointNamesRxContext},
	{"fi_scalable_ep/contexts_own_cqs_and_op_flags", sepContextsOwnCQsAndOpFlags},
	{"fi_scalable_ep/contexts_own_counters", sepContextsOwnCounters},
	{"fi_scalable_ep/contexts_in_parallel_goroutines", sepContextsInParallelGoroutines},
	{"fi_scalable_ep/zero_alloc_context_send_recv", sepZeroAllocContextSendRecv},
	{"fi_scalable_ep/av_bound_after_contexts", sepAVBoundAfterContexts},
	{"fi_scalable_ep/close_rx_context_cancels_receives", sepCloseRxContextCancelsReceives},
	{"fi_scalable_ep/context_index_out_of_range_EINVAL", sepContextIndexOutOfRangeEINVAL},
	{"fi_scalable_ep/context_index_twice_EBUSY", sepContextIndexTwiceEBUSY},
	{"fi_scalable_ep/more_contexts_than_max_EINVAL", sepMoreContextsThanMaxEINVAL},
	{"fi_scalable_ep/close_with_open_contexts_EBUSY", sepCloseWithOpenContextsEBUSY},
	{"fi_scalable_ep/context_wrong_direction_ENOSYS", sepContextWrongDirectionENOSYS},
	{"fi_scalable_ep/context_bind_wrong_object", sepContextBindWrongObject},
	{"fi_scalable_ep/bind_validation", sepBindValidation},
	{"fi_scalable_ep/context_attr_beyond_endpoint_EINVAL", sepContextAttrBeyondEndpointEINVAL},
	{"fi_av/rx_addr_index_beyond_rx_ctx_bits", sepRxAddrIndexBeyondRxCtxBits},
	{"fi_scalable_ep/rx_index_beyond_peer_contexts_not_delivered", sepRxIndexBeyondPeerContexts},
}

// sepEnv is a scalable endpoint with its contexts, each context bound to
// a CQ of its own, the AV bound and everything enabled.
type sepEnv struct {
	*env
	sep        *fabric.ScalableEndpoint
	sav        *fabric.AV // AV with rx_ctx_bits, bound to sep
	bits       int
	tx, rx     []*fabric.Endpoint
	txcq, rxcq []*fabric.CQ
	addr       []byte
}

// sepInfo returns the target's info for a scalable endpoint with nTx
// transmit and nRx receive contexts, or skips when the provider does not
// offer that many, or named receive contexts.
func (tg Target) sepInfo(t testing.TB, nTx, nRx int, caps fabric.Caps) *fabric.Info {
	t.Helper()
	if tg.EPType == fabric.EPMsg {
		t.Skipf("%v: scalable endpoints are connectionless here", tg.EPType)
	}
	info := tg.info(t, fabric.CapNamedRxCtx|caps)
	da := info.DomainAttr
	if da.MaxEPTxCtx < uint64(nTx) || da.MaxEPRxCtx < uint64(nRx) {
		t.Skipf("%s: max_ep_tx_ctx %d, max_ep_rx_ctx %d", tg.Provider, da.MaxEPTxCtx, da.MaxEPRxCtx)
	}
	info.EPAttr.TxCtxCnt, info.EPAttr.RxCtxCnt = uint64(nTx), uint64(nRx)
	return info
}

// sepBits is the rx_ctx_bits of the cases' AVs.
const sepBits = 3

// closeFirst makes the cleanup close eps before what was opened so far
// (objects bound to them after openSEP).
func closeFirst(t testing.TB, eps ...*fabric.Endpoint) {
	t.Cleanup(func() {
		for _, ep := range eps {
			closeOK(t, "context", ep.Close())
		}
	})
}

// openSEP opens a scalable endpoint with nTx/nRx contexts on its own
// fabric and domain; with noEnable the contexts are opened but nothing is
// bound or enabled.
func (tg Target) openSEP(t testing.TB, nTx, nRx int, noEnable bool) *sepEnv {
	t.Helper()
	return tg.openSEPCaps(t, nTx, nRx, noEnable, 0)
}

// openSEPCaps is openSEP asking for caps too (skipping where the
// provider does not claim them).
func (tg Target) openSEPCaps(t testing.TB, nTx, nRx int, noEnable bool, caps fabric.Caps) *sepEnv {
	t.Helper()
	info := tg.sepInfo(t, nTx, nRx, caps)
	e := tg.open(t, envOpts{caps: fabric.CapNamedRxCtx | caps, noEnable: true})
	// Every scalable endpoint of these cases has at most 1<<sepBits
	// receive contexts, so that all their AVs agree.
	s := &sepEnv{env: e, bits: sepBits}
	var err error
	if s.sav, err = e.dom.OpenAV(&fabric.AVAttr{Type: info.DomainAttr.AVType, RxCtxBits: s.bits}); err != nil {
		t.Fatalf("OpenAV: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "av", s.sav.Close()) })
	if s.sep, err = e.dom.OpenScalableEndpoint(info); err != nil {
		t.Fatalf("fi_scalable_ep: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "scalable endpoint", s.sep.Close()) })
	for i := 0; i < nTx; i++ {
		ep, err := s.sep.TxContext(i, nil)
		if err != nil {
			t.Fatalf("fi_tx_context %d: %v", i, err)
		}
		t.Cleanup(func() { closeOK(t, "tx context", ep.Close()) })
		s.tx = append(s.tx, ep)
	}
	for i := 0; i < nRx; i++ {
		ep, err := s.sep.RxContext(i, nil)
		if err != nil {
			t.Fatalf("fi_rx_context %d: %v", i, err)
		}
		t.Cleanup(func() { closeOK(t, "rx context", ep.Close()) })
		s.rx = append(s.rx, ep)
	}
	if s.addr, err = s.sep.Name(); err != nil {
		t.Fatalf("fi_getname: %v", err)
	}
	if noEnable {
		return s
	}
	if err := s.sep.Bind(s.sav, 0); err != nil {
		t.Fatalf("fi_scalable_ep_bind: %v", err)
	}
	defer closeFirst(t, append(append([]*fabric.Endpoint(nil), s.tx...), s.rx...)...)
	for _, ep := range s.tx {
		cq := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
		if err := ep.BindCQ(cq, fabric.FlagTransmit); err != nil {
			t.Fatalf("tx context bind cq: %v", err)
		}
		if err := ep.Enable(); err != nil {
			t.Fatalf("tx context enable: %v", err)
		}
		s.txcq = append(s.txcq, cq)
	}
	for _, ep := range s.rx {
		cq := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
		if err := ep.BindCQ(cq, fabric.FlagRecv); err != nil {
			t.Fatalf("rx context bind cq: %v", err)
		}
		if err := ep.Enable(); err != nil {
			t.Fatalf("rx context enable: %v", err)
		}
		s.rxcq = append(s.rxcq, cq)
	}
	if err := s.sep.Enable(); err != nil {
		t.Fatalf("fi_enable(sep): %v", err)
	}
	return s
}

// insertSEP inserts addr into s's AV (with rx_ctx_bits).
func (s *sepEnv) insertSEP(addr []byte) fabric.Addr {
	s.t.Helper()
	fa := make([]fabric.Addr, 1)
	if n, err := s.sav.Insert([][]byte{addr}, fa, 0); err != nil || n != 1 {
		s.t.Fatalf("AV insert: %d %v", n, err)
	}
	return fa[0]
}

func sepGetinfoCtxCounts(t *testing.T, tg Target) {
	connectionless(t, tg)
	info := tg.info(t, 0)
	da := info.DomainAttr
	if da.MaxEPTxCtx <= 1 && da.MaxEPRxCtx <= 1 {
		t.Skipf("%s has no scalable endpoints", tg.Provider)
	}
	if info.EPAttr.TxCtxCnt != 1 || info.EPAttr.RxCtxCnt != 1 {
		t.Errorf("default tx/rx_ctx_cnt %d/%d, want 1/1", info.EPAttr.TxCtxCnt, info.EPAttr.RxCtxCnt)
	}
	h := tg.hints(fabric.CapNamedRxCtx)
	h.EPAttr.TxCtxCnt, h.EPAttr.RxCtxCnt = da.MaxEPTxCtx, da.MaxEPRxCtx
	infos, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
	if err != nil {
		t.Fatalf("GetInfo with tx/rx_ctx_cnt at the maximum: %v", err)
	}
	if got := infos[0].EPAttr; got.TxCtxCnt != da.MaxEPTxCtx || got.RxCtxCnt != da.MaxEPRxCtx {
		t.Errorf("tx/rx_ctx_cnt %d/%d, want the requested %d/%d", got.TxCtxCnt, got.RxCtxCnt, da.MaxEPTxCtx, da.MaxEPRxCtx)
	}
	if infos[0].Caps&fabric.CapNamedRxCtx == 0 {
		t.Errorf("caps %v lack FI_NAMED_RX_CTX", infos[0].Caps)
	}
	for _, more := range []func(*fabric.Info){
		func(i *fabric.Info) { i.EPAttr.TxCtxCnt = da.MaxEPTxCtx + 1 },
		func(i *fabric.Info) { i.EPAttr.RxCtxCnt = da.MaxEPRxCtx + 1 },
	} {
		h := tg.hints(0)
		more(h)
		if _, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h); !errors.Is(err, fabric.ErrNoData) {
			t.Errorf("GetInfo with more contexts than the maximum: %v, want ErrNoData", err)
		}
	}
}

// sendTo posts buf from tx to dest, retrying while ErrAgain.
func sendTo(t *testing.T, what string, tx *fabric.Endpoint, txcq *fabric.CQ, buf []byte, dest fabric.Addr, ctx any) {
	t.Helper()
	retry(t, what, func() error { return tx.Send(buf, nil, dest, ctx) }, txcq)
}

func sepContextsReachNamedRxContexts(t *testing.T, tg Target) {
	a := tg.openSEP(t, 2, 2, false)
	b := tg.openSEP(t, 2, 3, false)
	ab := a.insertSEP(b.addr)
	ba := b.insertSEP(a.addr)
	bufs := make([][]byte, len(b.rx))
	for j, rx := range b.rx {
		bufs[j] = make([]byte, 64)
		if err := rx.Recv(bufs[j], nil, fabric.AddrUnspec, j); err != nil {
			t.Fatalf("recv on rx context %d: %v", j, err)
		}
	}
	// tx context i of a sends to rx context j of b: each message lands in
	// rx context j's CQ, and nowhere else.
	for j := range b.rx {
		i := j % len(a.tx)
		msg := []byte(fmt.Sprintf("tx %d to rx %d", i, j))
		sendTo(t, "send", a.tx[i], a.txcq[i], msg, fabric.RxAddr(ab, j, a.bits), i)
		ent, ee := waitCQ(t, b.rxcq[j], a.txcq[i])
		if ee != nil {
			t.Fatalf("rx context %d: error completion %+v", j, *ee)
		}
		if ent.OpContext != j || !bytes.Equal(bufs[j][:ent.Len], msg) {
			t.Fatalf("rx context %d got ctx %v %q, want %q", j, ent.OpContext, bufs[j][:ent.Len], msg)
		}
		sent, ee := waitCQ(t, a.txcq[i])
		if ee != nil || sent.OpContext != i {
			t.Fatalf("tx context %d completion %+v %+v", i, sent, ee)
		}
		for k := range b.rxcq {
			if k != j {
				expectEmpty(t, b.rxcq[k], scaled(2*time.Millisecond))
			}
		}
		if err := b.rx[j].Recv(bufs[j], nil, fabric.AddrUnspec, j); err != nil {
			t.Fatal(err)
		}
	}
	// The other way, with the source: b's transmit contexts send from
	// b's address, which a's AV knows as ab.
	buf := make([]byte, 64)
	if err := a.rx[1].Recv(buf, nil, fabric.AddrUnspec, "a1"); err != nil {
		t.Fatal(err)
	}
	sendTo(t, "send back", b.tx[1], b.txcq[1], []byte("back"), fabric.RxAddr(ba, 1, b.bits), nil)
	ent, src := waitFrom(t, "rx context 1 of a", a.rxcq[1], b.txcq[1])
	if string(buf[:ent.Len]) != "back" {
		t.Fatalf("got %q", buf[:ent.Len])
	}
	if a.info.Caps&fabric.CapSource != 0 && src != ab {
		t.Errorf("source %v, want %v (the scalable endpoint's address in the AV)", src, ab)
	}
}

// sepTxContextsSource: with FI_SOURCE, a message sent from any transmit
// context of a scalable endpoint is reported with the scalable endpoint's
// fi_addr as its source (fi_endpoint(3): the endpoint has one address for
// all its contexts), by an ordinary endpoint and by a receive context of
// another scalable endpoint (whose AV has rx_ctx_bits), for the first
// message of each context (a large one, where the provider has protocols
// by size) and for the next ones; and a receive directed at that fi_addr
// (FI_DIRECTED_RECV, where claimed) takes them.
func sepTxContextsSource(t *testing.T, tg Target) {
	const nTx = 3
	a := tg.openSEPCaps(t, nTx, 1, false, fabric.CapSource)
	b := tg.openSEPCaps(t, 1, 2, false, fabric.CapSource)
	o := tg.open(t, envOpts{caps: fabric.CapSource})
	fromO := o.insert(a.addr) // a as the ordinary endpoint's AV knows it
	fromB := b.insertSEP(a.addr)
	toO := a.insertSEP(o.addr)
	toB := fabric.RxAddr(a.insertSEP(b.addr), 1, a.bits)
	large := int(min(a.info.EPAttr.MaxMsgSize, b.info.EPAttr.MaxMsgSize, o.info.EPAttr.MaxMsgSize, 100000))
	buf := make([]byte, large)
	msg := func(i, k int) []byte {
		m := []byte(fmt.Sprintf("tx %d msg %d", i, k))
		if k == 0 {
			m = append(m, bytes.Repeat([]byte{byte(i)}, large-len(m))...)
		}
		return m
	}
	check := func(what string, rx *fabric.Endpoint, rxcq *fabric.CQ, dest, want fabric.Addr, i, k int) {
		t.Helper()
		if err := rx.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		m := msg(i, k)
		sendTo(t, "send", a.tx[i], a.txcq[i], m, dest, nil)
		ent, src := waitFrom(t, what, rxcq, a.txcq[i])
		if !bytes.Equal(buf[:ent.Len], m) {
			t.Fatalf("%s got %d bytes, want %q (%d bytes)", what, ent.Len, m[:min(len(m), 16)], len(m))
		}
		if src != want {
			t.Errorf("%s: message %d (%d bytes) from tx context %d has source %v, want %v (the scalable endpoint)",
				what, k, len(m), i, src, want)
		}
		if _, ee := waitCQ(t, a.txcq[i]); ee != nil {
			t.Fatalf("tx context %d: send completion %+v", i, *ee)
		}
	}
	for k := 0; k < 3; k++ {
		for i := 0; i < nTx; i++ {
			check("ordinary endpoint", o.ep, o.rxcq, toO, fromO, i, k)
			check("rx context 1 of a scalable endpoint", b.rx[1], b.rxcq[1], toB, fromB, i, k)
		}
	}
	if !tg.claims(fabric.CapSource | fabric.CapDirectedRecv) {
		return
	}
	d := tg.open(t, envOpts{caps: fabric.CapSource | fabric.CapDirectedRecv})
	fromD := d.insert(a.addr)
	toD := a.insertSEP(d.addr)
	for i := 0; i < nTx; i++ {
		if err := d.ep.Recv(buf, nil, fromD, nil); err != nil {
			t.Fatal(err)
		}
		m := []byte(fmt.Sprintf("directed from %d", i))
		sendTo(t, "send", a.tx[i], a.txcq[i], m, toD, nil)
		ent, src := waitFrom(t, "directed receive", d.rxcq, a.txcq[i])
		if !bytes.Equal(buf[:ent.Len], m) || src != fromD {
			t.Fatalf("directed receive from %v got %q from %v, want %q", fromD, buf[:ent.Len], src, m)
		}
		if _, ee := waitCQ(t, a.txcq[i]); ee != nil {
			t.Fatalf("tx context %d: send completion %+v", i, *ee)
		}
	}
}

func sepOrdinaryEndpointReachesRxContext0(t *testing.T, tg Target) {
	s := tg.openSEP(t, 1, 2, false)
	o := tg.open(t, envOpts{})
	dest := o.insert(s.addr)
	buf := make([]byte, 32)
	if err := s.rx[0].Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	sendTo(t, "ordinary send", o.ep, o.txcq, []byte("plain"), dest, nil)
	ent, ee := waitCQ(t, s.rxcq[0], o.txcq)
	if ee != nil || string(buf[:ent.Len]) != "plain" {
		t.Fatalf("rx context 0: %+v %+v %q", ent, ee, buf[:ent.Len])
	}
	// And a transmit context reaches the ordinary endpoint (rx index 0).
	back := s.insertSEP(o.addr)
	if err := o.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	sendTo(t, "context to ordinary endpoint", s.tx[0], s.txcq[0], []byte("ctx"), back, nil)
	ent, src := waitFrom(t, "ordinary endpoint", o.rxcq, s.txcq[0])
	if string(buf[:ent.Len]) != "ctx" {
		t.Fatalf("ordinary endpoint got %q", buf[:ent.Len])
	}
	// Its source is the scalable endpoint's address, where the provider
	// can tell (FI_SOURCE).
	if o.info.Caps&fabric.CapSource != 0 && src != dest {
		t.Errorf("source %v, want %v (the scalable endpoint in the AV)", src, dest)
	}
}

func sepCloseRxContextCancelsReceives(t *testing.T, tg Target) {
	s := tg.openSEP(t, 1, 2, false)
	for k := 0; k < 2; k++ {
		if err := s.rx[1].Recv(make([]byte, 8), nil, fabric.AddrUnspec, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.rx[1].Close(); err != nil {
		t.Fatalf("close rx context 1: %v", err)
	}
	for k := 0; k < 2; k++ {
		_, ee := waitCQ(t, s.rxcq[1])
		if ee == nil || !errors.Is(ee.Err, fabric.ErrCanceled) || ee.OpContext != k {
			t.Fatalf("receive %d after closing its context: %+v; want FI_ECANCELED", k, ee)
		}
	}
	// The other contexts go on.
	self := s.insertSEP(s.addr)
	buf := make([]byte, 8)
	if err := s.rx[0].Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	sendTo(t, "send", s.tx[0], s.txcq[0], []byte("on"), self, nil)
	if ent, ee := waitCQ(t, s.rxcq[0], s.txcq[0]); ee != nil || string(buf[:ent.Len]) != "on" {
		t.Fatalf("%+v %+v", ent, ee)
	}
}

func sepContextsOwnCQsAndOpFlags(t *testing.T, tg Target) {
	s := tg.openSEP(t, 2, 1, true)
	// Context 0 completes only what asks (selective completion, no
	// default FI_COMPLETION); context 1 completes every send.
	if err := s.sep.Bind(s.sav, 0); err != nil {
		t.Fatal(err)
	}
	s.tx[0].Close()
	attr := &fabric.TxAttr{OpFlags: 0}
	tx0, err := s.sep.TxContext(0, attr)
	if err != nil {
		t.Fatalf("reopen tx context 0: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "tx context", tx0.Close()) })
	if attr.InjectSize != s.info.TxAttr.InjectSize {
		t.Errorf("attr written back: inject_size %d, want %d", attr.InjectSize, s.info.TxAttr.InjectSize)
	}
	cq0 := s.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	cq1 := s.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	rcq := s.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	if err := tx0.BindCQ(cq0, fabric.FlagTransmit|fabric.FlagSelectiveCompletion); err != nil {
		t.Fatal(err)
	}
	if err := s.tx[1].BindCQ(cq1, fabric.FlagTransmit); err != nil {
		t.Fatal(err)
	}
	if err := s.rx[0].BindCQ(rcq, fabric.FlagRecv); err != nil {
		t.Fatal(err)
	}
	closeFirst(t, tx0, s.tx[1], s.rx[0])
	for _, ep := range []*fabric.Endpoint{tx0, s.tx[1], s.rx[0]} {
		if err := ep.Enable(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.tx[1].SetOpsFlags(fabric.FlagTransmit | fabric.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	if f, _ := tx0.OpsFlags(fabric.FlagTransmit); f != 0 {
		t.Errorf("tx context 0 op flags %v changed with context 1's", f)
	}
	self := s.insertSEP(s.addr)
	buf := make([]byte, 16)
	for k, tx := range []*fabric.Endpoint{tx0, s.tx[1]} {
		if err := s.rx[0].Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return tx.Send([]byte("x"), nil, self, k) }, cq0, cq1)
		if _, ee := waitCQ(t, rcq, cq0, cq1); ee != nil {
			t.Fatalf("receive: %+v", *ee)
		}
	}
	ent, ee := waitCQ(t, cq1, cq0)
	if ee != nil || ent.OpContext != 1 {
		t.Fatalf("tx context 1 completion %+v %+v", ent, ee)
	}
	expectEmpty(t, cq0, scaled(2*time.Millisecond))
	expectEmpty(t, cq1, scaled(2*time.Millisecond))
}

func sepContextsOwnCounters(t *testing.T, tg Target) {
	s := tg.openSEP(t, 2, 2, true)
	if err := s.sep.Bind(s.sav, 0); err != nil {
		t.Fatal(err)
	}
	var cntrs []*fabric.Cntr
	bindAll := func(ep *fabric.Endpoint, flags fabric.Flags) {
		c, err := s.dom.OpenCntr(nil)
		if !supported(t, "fi_cntr_open", err) {
			t.Skip("no counters")
		}
		t.Cleanup(func() { closeOK(t, "cntr", c.Close()) })
		cq := s.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		cqFlags := fabric.FlagTransmit
		if flags == fabric.FlagRecv {
			cqFlags = fabric.FlagRecv
		}
		if err := ep.BindCQ(cq, cqFlags); err != nil {
			t.Fatal(err)
		}
		if err := ep.BindCntr(c, flags); err != nil {
			t.Fatalf("bind counter %v: %v", flags, err)
		}
		closeFirst(t, ep)
		if err := ep.Enable(); err != nil {
			t.Fatal(err)
		}
		cntrs = append(cntrs, c)
	}
	bindAll(s.tx[0], fabric.FlagSend)
	bindAll(s.tx[1], fabric.FlagSend)
	bindAll(s.rx[0], fabric.FlagRecv)
	bindAll(s.rx[1], fabric.FlagRecv)
	self := s.insertSEP(s.addr)
	buf := make([]byte, 16)
	if err := s.rx[1].Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return s.tx[1].Send([]byte("c"), nil, fabric.RxAddr(self, 1, s.bits), nil) })
	if err := cntrs[3].Wait(1, scaled(5*time.Second)); err != nil {
		t.Fatalf("rx context 1 counter: %v", err)
	}
	if err := cntrs[1].Wait(1, scaled(5*time.Second)); err != nil {
		t.Fatalf("tx context 1 counter: %v", err)
	}
	for _, k := range []int{0, 2} {
		if v, err := cntrs[k].Read(); v != 0 || err != nil {
			t.Errorf("counter of context %d counted %d (%v)", k, v, err)
		}
	}
}

func sepContextsInParallelGoroutines(t *testing.T, tg Target) {
	const n, msgs = 4, 200
	a := tg.openSEP(t, n, n, false)
	if th := a.info.DomainAttr.Threading; th == fabric.ThreadDomain || th == fabric.ThreadCompletion {
		// Contexts are as independent as endpoints: these models
		// serialise a domain's (or a completion's) objects.
		t.Skipf("%v: the domain's objects are used by one thread at a time", th)
	}
	b := tg.openSEP(t, n, n, false)
	ab := a.insertSEP(b.addr)
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	// got[i] counts rx context i's messages: datagram senders keep at
	// most a window ahead of their receiver (nothing flow-controls them).
	var got [n]atomic.Int64
	// rxDone[i] is set when rx context i's receiver returns (done or
	// failed): its sender stops waiting for it.
	var rxDone [n]atomic.Bool
	// posted[i] is set once rx context i has its first window of receives
	// posted: its sender starts then (a first datagram sent before that
	// could arrive with no receive posted and be dropped).
	var posted [n]atomic.Bool
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() { // receiver of rx context i of b
			defer wg.Done()
			defer rxDone[i].Store(true)
			// A window of receives stays posted, more than the sender
			// keeps in flight: a datagram arriving with no receive
			// posted may be dropped (FI_EP_DGRAM), and with automatic
			// progress it is. Receives match in posting order, so
			// message k lands in buffer k%window.
			const window = 32
			var bufs [window][64]byte
			post := func(k int) bool {
				if err := b.rx[i].Recv(bufs[k%window][:], nil, fabric.AddrUnspec, nil); err != nil {
					errs <- err
					return false
				}
				return true
			}
			for k := 0; k < min(window, msgs); k++ {
				if !post(k) {
					return
				}
			}
			posted[i].Store(true)
			ent := make([]fabric.CQEntry, 1)
			for k := 0; k < msgs; k++ {
				if _, err := b.rxcq[i].SRead(ent, 1, scaled(10*time.Second)); err != nil {
					errs <- fmt.Errorf("rx context %d message %d: %w", i, k, err)
					return
				}
				buf := bufs[k%window][:]
				if want := fmt.Sprintf("%d:%d", i, k); string(buf[:ent[0].Len]) != want {
					errs <- fmt.Errorf("rx context %d got %q, want %q", i, buf[:ent[0].Len], want)
					return
				}
				got[i].Add(1)
				if k+window < msgs && !post(k+window) {
					return
				}
			}
		}()
		go func() { // sender on tx context i of a, to rx context i of b
			defer wg.Done()
			ent := make([]fabric.CQEntry, 1)
			dest := fabric.RxAddr(ab, i, a.bits)
			for k := 0; k < msgs; k++ {
				deadline := time.Now().Add(scaled(10 * time.Second))
				for !posted[i].Load() || got[i].Load() < int64(k-16) {
					if rxDone[i].Load() {
						return // the receiver failed: its error is reported
					}
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("tx context %d: rx context %d took no message for 10 s", i, i)
						return
					}
					time.Sleep(10 * time.Microsecond)
				}
				msg := []byte(fmt.Sprintf("%d:%d", i, k))
				for {
					err := a.tx[i].Send(msg, nil, dest, nil)
					if err == nil {
						break
					}
					if !errors.Is(err, fabric.ErrAgain) {
						errs <- err
						return
					}
					a.txcq[i].Read(nil)
				}
				if _, err := a.txcq[i].SRead(ent, 1, scaled(10*time.Second)); err != nil {
					errs <- fmt.Errorf("tx context %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func sepAVBoundAfterContexts(t *testing.T, tg Target) {
	s := tg.openSEP(t, 1, 1, true)
	cq := s.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	closeFirst(t, s.tx[0])
	if err := s.tx[0].BindCQ(cq, fabric.FlagTransmit); err != nil {
		t.Fatal(err)
	}
	isErr(t, "enable before the AV", s.tx[0].Enable(), fabric.ErrNoAV)
	isErr(t, "enable sep before the AV", s.sep.Enable(), fabric.ErrNoAV)
	if err := s.sep.Bind(s.sav, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.tx[0].Enable(); err != nil {
		t.Fatalf("enable with the AV bound through the sep: %v", err)
	}
	isErr(t, "close the AV in use", s.sav.Close(), fabric.ErrBusy)
}

func sepContextIndexOutOfRangeEINVAL(t *testing.T, tg Target) {
	s := tg.openSEP(t, 2, 2, true)
	for _, i := range []int{-1, 2, 100} {
		_, err := s.sep.TxContext(i, nil)
		isErr(t, fmt.Sprintf("fi_tx_context(%d)", i), err, fabric.ErrInval)
		_, err = s.sep.RxContext(i, nil)
		isErr(t, fmt.Sprintf("fi_rx_context(%d)", i), err, fabric.ErrInval)
	}
}

func sepContextIndexTwiceEBUSY(t *testing.T, tg Target) {
	s := tg.openSEP(t, 2, 2, true)
	_, err := s.sep.TxContext(1, nil)
	isErr(t, "fi_tx_context of an open index", err, fabric.ErrBusy)
	_, err = s.sep.RxContext(0, nil)
	isErr(t, "fi_rx_context of an open index", err, fabric.ErrBusy)
	// Once closed, the index opens again.
	if err := s.rx[0].Close(); err != nil {
		t.Fatal(err)
	}
	ep, err := s.sep.RxContext(0, nil)
	if err != nil {
		t.Fatalf("reopen rx context 0: %v", err)
	}
	closeOK(t, "rx context", ep.Close())
}

func sepMoreContextsThanMaxEINVAL(t *testing.T, tg Target) {
	info := tg.sepInfo(t, 2, 2, 0)
	e := tg.open(t, envOpts{caps: fabric.CapNamedRxCtx, noEnable: true})
	for _, more := range []func(*fabric.Info){
		func(i *fabric.Info) { i.EPAttr.TxCtxCnt = e.info.DomainAttr.MaxEPTxCtx + 1 },
		func(i *fabric.Info) { i.EPAttr.RxCtxCnt = e.info.DomainAttr.MaxEPRxCtx + 1 },
		func(i *fabric.Info) { i.EPAttr.TxCtxCnt = fabric.SharedContext },
	} {
		bad := info.Dup()
		more(bad)
		if s, err := e.dom.OpenScalableEndpoint(bad); !errors.Is(err, fabric.ErrInval) {
			if err == nil {
				s.Close()
			}
			t.Errorf("fi_scalable_ep tx/rx_ctx_cnt %d/%d: %v, want ErrInval", bad.EPAttr.TxCtxCnt, bad.EPAttr.RxCtxCnt, err)
		}
	}
}

func sepCloseWithOpenContextsEBUSY(t *testing.T, tg Target) {
	info := tg.sepInfo(t, 1, 1, 0)
	e := tg.open(t, envOpts{caps: fabric.CapNamedRxCtx, noEnable: true})
	s, err := e.dom.OpenScalableEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.TxContext(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	rx, err := s.RxContext(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	isErr(t, "close with two contexts", s.Close(), fabric.ErrBusy)
	if err := tx.Close(); err != nil {
		t.Fatal(err)
	}
	isErr(t, "close with a receive context", s.Close(), fabric.ErrBusy)
	isErr(t, "close the domain under the sep", e.dom.Close(), fabric.ErrBusy)
	if err := rx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close after the contexts: %v", err)
	}
	isErr(t, "second close", s.Close(), fabric.ErrClosed)
	_, err = s.TxContext(0, nil)
	isErr(t, "fi_tx_context after close", err, fabric.ErrClosed)
}

func sepContextWrongDirectionENOSYS(t *testing.T, tg Target) {
	s := tg.openSEP(t, 1, 1, false)
	self := s.insertSEP(s.addr)
	isErr(t, "recv on a transmit context", s.tx[0].Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil), fabric.ErrNoSys)
	isErr(t, "send on a receive context", s.rx[0].Send([]byte("x"), nil, self, nil), fabric.ErrNoSys)
	isErr(t, "inject on a receive context", s.rx[0].Inject([]byte("x"), self), fabric.ErrNoSys)
	// Nothing was lost: the contexts still work.
	buf := make([]byte, 8)
	if err := s.rx[0].Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	sendTo(t, "send", s.tx[0], s.txcq[0], []byte("ok"), self, nil)
	if ent, ee := waitCQ(t, s.rxcq[0], s.txcq[0]); ee != nil || string(buf[:ent.Len]) != "ok" {
		t.Fatalf("%+v %+v", ent, ee)
	}
}

func sepContextBindWrongObject(t *testing.T, tg Target) {
	s := tg.openSEP(t, 1, 1, true)
	cq := s.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	isErr(t, "receive CQ on a transmit context", s.tx[0].BindCQ(cq, fabric.FlagRecv), fabric.ErrBadFlags)
	isErr(t, "transmit CQ on a receive context", s.rx[0].BindCQ(cq, fabric.FlagTransmit), fabric.ErrBadFlags)
	isErr(t, "AV on a context", s.tx[0].BindAV(s.sav), fabric.ErrInval)
	if c, err := s.dom.OpenCntr(nil); supported(t, "fi_cntr_open", err) {
		t.Cleanup(func() { closeOK(t, "cntr", c.Close()) })
		isErr(t, "recv counter on a transmit context", s.tx[0].BindCntr(c, fabric.FlagRecv), fabric.ErrBadFlags)
		isErr(t, "send counter on a receive context", s.rx[0].BindCntr(c, fabric.FlagSend), fabric.ErrBadFlags)
	}
	if srx, err := s.dom.OpenSRX(nil, nil); supported(t, "fi_srx_context", err) {
		t.Cleanup(func() { closeOK(t, "srx", srx.Close()) })
		isErr(t, "SRX on a receive context", s.rx[0].BindSRX(srx), fabric.ErrInval)
	}
	if stx, err := s.dom.OpenSTX(nil); supported(t, "fi_stx_context", err) {
		t.Cleanup(func() { closeOK(t, "stx", stx.Close()) })
		isErr(t, "STX on a transmit context", s.tx[0].Bind(stx, 0), fabric.ErrInval)
		isErr(t, "STX on a receive context", s.rx[0].Bind(stx, 0), fabric.ErrInval)
	}
	// The right bindings still work after the refusals.
	closeFirst(t, s.tx[0])
	if err := s.tx[0].BindCQ(cq, fabric.FlagTransmit); err != nil {
		t.Fatal(err)
	}
}

func sepBindValidation(t *testing.T, tg Target) {
	s := tg.openSEP(t, 1, 1, true)
	isErr(t, "bind nil AV", s.sep.Bind(nil, 0), fabric.ErrInval)
	isErr(t, "bind with flags", s.sep.Bind(s.sav, fabric.FlagRecv), fabric.ErrBadFlags)
	other := tg.open(t, envOpts{noEnable: true})
	isErr(t, "bind an AV of another domain", s.sep.Bind(other.av, 0), fabric.ErrDomain)
	if err := s.sep.Bind(s.sav, 0); err != nil {
		t.Fatal(err)
	}
	isErr(t, "bind a second AV", s.sep.Bind(s.av, 0), fabric.ErrInval)
}

func sepContextAttrBeyondEndpointEINVAL(t *testing.T, tg Target) {
	s := tg.openSEP(t, 2, 2, true)
	s.tx[1].Close()
	s.rx[1].Close()
	ti, ri := s.info.TxAttr, s.info.RxAttr
	for _, a := range []*fabric.TxAttr{
		{InjectSize: ti.InjectSize + 1},
		{Size: ti.Size + 1},
		{IOVLimit: ti.IOVLimit + 1},
		{Caps: fabric.CapAtomic | ^ti.Caps&fabric.CapRMA},
	} {
		if _, err := s.sep.TxContext(1, a); !errors.Is(err, fabric.ErrInval) {
			t.Errorf("fi_tx_context with %+v: %v, want ErrInval", *a, err)
		}
	}
	for _, a := range []*fabric.RxAttr{{Size: ri.Size + 1}, {IOVLimit: ri.IOVLimit + 1}} {
		if _, err := s.sep.RxContext(1, a); !errors.Is(err, fabric.ErrInval) {
			t.Errorf("fi_rx_context with %+v: %v, want ErrInval", *a, err)
		}
	}
	// Smaller ones are granted and written back.
	a := &fabric.TxAttr{InjectSize: 1, OpFlags: fabric.FlagCompletion}
	tx, err := s.sep.TxContext(1, a)
	if err != nil {
		t.Fatalf("fi_tx_context with a smaller inject size: %v", err)
	}
	defer tx.Close()
	if a.InjectSize != 1 || a.Size != ti.Size || a.OpFlags != fabric.FlagCompletion {
		t.Errorf("attributes written back %+v", *a)
	}
	if f, _ := tx.OpsFlags(fabric.FlagTransmit); f != fabric.FlagCompletion {
		t.Errorf("op flags %v, want the context's FI_COMPLETION", f)
	}
}

func sepRxAddrIndexBeyondRxCtxBits(t *testing.T, tg Target) {
	s := tg.openSEP(t, 1, 2, false)
	self := s.insertSEP(s.addr)
	if got := fabric.RxAddr(self, 1<<s.bits, s.bits); got != fabric.AddrNotAvail {
		t.Fatalf("fi_rx_addr with index 2^rx_ctx_bits: %v, want FI_ADDR_NOTAVAIL", got)
	}
	if got := fabric.RxAddr(self, -1, s.bits); got != fabric.AddrNotAvail {
		t.Fatalf("fi_rx_addr with index -1: %v", got)
	}
	isErr(t, "send to FI_ADDR_NOTAVAIL", s.tx[0].Send([]byte("x"), nil, fabric.RxAddr(self, 1<<s.bits, s.bits), nil), fabric.ErrInval)
	// Within the bits, the address names the context.
	if got := fabric.RxAddr(self, 1, s.bits); got == fabric.AddrNotAvail || got == self {
		t.Fatalf("fi_rx_addr(1): %v", got)
	}
}

// sepProcCtx is the number of context pairs of the cross-process case.
const sepProcCtx = 2

// processSEPContexts exchanges messages between the contexts of
// scalable endpoints in two processes: the peer process sends its address
// to receive context 0, then echoes what each of its receive contexts i
// gets from transmit context i back to receive context i here.
func processSEPContexts(t *testing.T, tg Target) {
	s := tg.openSEP(t, sepProcCtx, sepProcCtx, false)
	bufs := make([][]byte, sepProcCtx)
	for i := range bufs {
		bufs[i] = make([]byte, 256)
		if err := s.rx[i].Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	const iters = 20
	wait := startHelper(t, tg, "sep-echo", s.addr, iters)
	defer wait()
	got, ee := waitCQ(t, s.rxcq[0])
	if ee != nil {
		t.Fatalf("name message: %+v", *ee)
	}
	peer := s.insertSEP(append([]byte(nil), bufs[0][:got.Len]...))
	if err := s.rx[0].Recv(bufs[0], nil, fabric.AddrUnspec, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < sepProcCtx; i++ {
		for k := 0; k < iters; k++ {
			msg := pattern(make([]byte, 1+k*11), i*iters+k)
			sendTo(t, "send", s.tx[i], s.txcq[i], msg, fabric.RxAddr(peer, i, s.bits), nil)
			if _, ee := waitCQ(t, s.txcq[i]); ee != nil {
				t.Fatalf("send %d/%d: %+v", i, k, *ee)
			}
			got, ee := waitCQ(t, s.rxcq[i], s.txcq[i])
			if ee != nil || got.OpContext != i || !bytes.Equal(bufs[i][:got.Len], msg) {
				t.Fatalf("echo %d/%d on rx context %d: %+v %+v", i, k, i, got, ee)
			}
			if err := s.rx[i].Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// helperSEPEcho is the peer process of processSEPContexts.
func helperSEPEcho(t *testing.T, tg Target, peer []byte, iters int) {
	s := tg.openSEP(t, sepProcCtx, sepProcCtx, false)
	parent := s.insertSEP(peer)
	bufs := make([][]byte, sepProcCtx)
	for i := range bufs {
		bufs[i] = make([]byte, 256)
		if err := s.rx[i].Recv(bufs[i], nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
	}
	sendTo(t, "send name", s.tx[0], s.txcq[0], s.addr, parent, nil)
	waitCQ(t, s.txcq[0])
	for i := 0; i < sepProcCtx; i++ {
		for k := 0; k < iters; k++ {
			got, ee := waitCQ(t, s.rxcq[i])
			if ee != nil {
				t.Fatalf("echo recv %d/%d: %+v", i, k, *ee)
			}
			msg := append([]byte(nil), bufs[i][:got.Len]...)
			if err := s.rx[i].Recv(bufs[i], nil, fabric.AddrUnspec, nil); err != nil {
				t.Fatal(err)
			}
			sendTo(t, "echo", s.tx[i], s.txcq[i], msg, fabric.RxAddr(parent, i, s.bits), nil)
			waitCQ(t, s.txcq[i])
		}
	}
}

// sepRxIndexBeyondPeerContexts sends to a receive context index within
// rx_ctx_bits that the peer does not have: none of the peer's contexts
// gets it, and a reliable endpoint completes the send in error. Over tcp
// the index names a port that anyone may hold, so only the first half
// is checked there.
func sepRxIndexBeyondPeerContexts(t *testing.T, tg Target) {
	a := tg.openSEP(t, 1, 1, false)
	b := tg.openSEP(t, 1, 2, false)
	ab := a.insertSEP(b.addr)
	for i, rx := range b.rx {
		if err := rx.Recv(make([]byte, 16), nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	dest := fabric.RxAddr(ab, 1<<a.bits-1, a.bits)
	err := a.tx[0].Send([]byte("nobody"), nil, dest, "beyond")
	if err != nil && !errors.Is(err, fabric.ErrAgain) {
		return // refused at once: nothing was sent
	}
	if err == nil && tg.EPType == fabric.EPRDM && tg.Provider != "tcp" {
		_, ee := waitCQ(t, a.txcq[0], b.rxcq...)
		if ee == nil || ee.OpContext != "beyond" {
			t.Fatalf("send to a receive context the peer lacks: %+v, want an error completion", ee)
		}
	}
	for _, cq := range b.rxcq {
		expectEmpty(t, cq, scaled(5*time.Millisecond), a.txcq[0])
	}
}

// sepZeroAllocContextSendRecv: a send from a transmit context to a named
// receive context, its receive and both CQ reads allocate nothing in the
// steady state.
func sepZeroAllocContextSendRecv(t *testing.T, tg Target) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	a := tg.openSEP(t, 2, 2, false)
	b := tg.openSEP(t, 2, 2, false)
	dest := fabric.RxAddr(a.insertSEP(b.addr), 1, a.bits)
	sbuf, rbuf := make([]byte, 64), make([]byte, 64)
	ent := make([]fabric.CQEntry, 1)
	ctx := new(int)
	deadline := time.Now().Add(scaled(10 * time.Second))
	round := func() {
		if err := b.rx[1].Recv(rbuf, nil, fabric.AddrUnspec, ctx); err != nil {
			panic(err)
		}
		for a.tx[1].Send(sbuf, nil, dest, ctx) != nil {
			a.txcq[1].Read(ent)
		}
		for n, _ := a.txcq[1].Read(ent); n != 1; n, _ = a.txcq[1].Read(ent) {
			if time.Now().After(deadline) {
				panic("no send completion")
			}
		}
		for n, _ := b.rxcq[1].Read(ent); n != 1; n, _ = b.rxcq[1].Read(ent) {
			if time.Now().After(deadline) {
				panic("no receive completion")
			}
		}
	}
	for i := 0; i < 50; i++ {
		round()
	}
	if n := testing.AllocsPerRun(200, round); n != 0 {
		t.Fatalf("context send+recv+CQ reads allocate %v times per round", n)
	}
}

// sepOrdinaryEndpointNamesRxContext: an endpoint that is not scalable,
// bound to an AV with rx_ctx_bits, reaches receive context i of a
// scalable endpoint at fi_rx_addr(addr, i), and only that one.
func sepOrdinaryEndpointNamesRxContext(t *testing.T, tg Target) {
	s := tg.openSEP(t, 1, 3, false)
	o := tg.open(t, envOpts{noEnable: true})
	av, err := o.dom.OpenAV(&fabric.AVAttr{Type: o.info.DomainAttr.AVType, RxCtxBits: sepBits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "av", av.Close()) })
	ep, err := o.dom.OpenEndpoint(o.info)
	if err != nil {
		t.Fatal(err)
	}
	closeFirst(t, ep)
	if err := ep.BindCQ(o.txcq, fabric.FlagTransmit); err != nil {
		t.Fatal(err)
	}
	if err := ep.BindCQ(o.rxcq, fabric.FlagRecv); err != nil {
		t.Fatal(err)
	}
	if err := ep.BindAV(av); err != nil {
		t.Fatal(err)
	}
	if err := ep.Enable(); err != nil {
		t.Fatal(err)
	}
	fa := make([]fabric.Addr, 1)
	if _, err := av.Insert([][]byte{s.addr}, fa, 0); err != nil {
		t.Fatal(err)
	}
	bufs := make([][]byte, len(s.rx))
	for i, rx := range s.rx {
		bufs[i] = make([]byte, 32)
		if err := rx.Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{2, 0, 1} {
		msg := []byte(fmt.Sprintf("to %d", i))
		sendTo(t, "send", ep, o.txcq, msg, fabric.RxAddr(fa[0], i, sepBits), nil)
		ent, ee := waitCQ(t, s.rxcq[i], o.txcq)
		if ee != nil || ent.OpContext != i || !bytes.Equal(bufs[i][:ent.Len], msg) {
			t.Fatalf("receive context %d: %+v %+v %q", i, ent, ee, bufs[i][:ent.Len])
		}
	}
}
