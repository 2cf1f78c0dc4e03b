package fabric

import (
	"sync"

	"github.com/gofabric/fabric/internal/sepctx"
	"github.com/gofabric/fabric/internal/stx"
	"github.com/gofabric/fabric/provider"
)

// ScalableEndpoint is a scalable endpoint (fi_scalable_ep): one transport
// address with several transmit and receive contexts, each an *Endpoint
// with its own CQs, counters and operation flags, usable from its own
// goroutine without a lock shared with the other contexts. The number of
// contexts is the Info's EPAttr.TxCtxCnt and RxCtxCnt, at most the
// domain's MaxEPTxCtx and MaxEPRxCtx (GetInfo refuses more).
//
// The sequence is that of fi_endpoint(3): OpenScalableEndpoint, Bind an AV
// (implicitly bound to every context, opened before or after), open the
// contexts with TxContext and RxContext, bind each to its CQs and
// counters, Enable each context (and the scalable endpoint), then
// transfer data on the contexts. The scalable endpoint itself carries no
// data. A peer targets receive context i with RxAddr(addr, i,
// rxCtxBits) when its AV has AVAttr.RxCtxBits set and the Info asked for
// CapNamedRxCtx; without receive context bits every message goes to
// receive context 0, which is also where endpoints that are not scalable
// reach the scalable endpoint's address.
//
// Providers that cannot honour scalable endpoints report MaxEPTxCtx and
// MaxEPRxCtx of 1, and OpenScalableEndpoint returns ErrNoSys for them.
type ScalableEndpoint struct {
	lc   lifecycle
	dom  *Domain
	info *Info
	p    provider.ScalableEndpoint

	mu      sync.Mutex // av, tx, rx, enabled
	av      *AV
	tx, rx  []*Endpoint // open contexts by index
	enabled bool
}

// OpenScalableEndpoint opens a scalable endpoint (fi_scalable_ep). info is
// usually one returned by GetInfo with EPAttr.TxCtxCnt and RxCtxCnt set to
// the numbers of contexts wanted (0 means 1). Errors (wrapped in
// *OpError): ErrInval for a nil info or counts beyond the domain's
// MaxEPTxCtx/MaxEPRxCtx or FI_SHARED_CONTEXT, ErrNoSys where the provider
// has no scalable endpoints, and the provider's errors (ErrAddrInUse when
// the addresses of the receive contexts cannot be reserved).
func (d *Domain) OpenScalableEndpoint(info *Info) (*ScalableEndpoint, error) {
	if d == nil {
		return nil, ErrInval
	}
	const op = "fi_scalable_ep"
	if info == nil || info.EPAttr == nil {
		return nil, opErr(op, d.prov.Name(), ErrInval)
	}
	sd, ok := d.d.(provider.ScalableDomain)
	if !ok {
		return nil, opErr(op, d.prov.Name(), ErrNoSys)
	}
	ci := info.Dup()
	ea := ci.EPAttr
	if ea.TxCtxCnt == 0 {
		ea.TxCtxCnt = 1
	}
	if ea.RxCtxCnt == 0 {
		ea.RxCtxCnt = 1
	}
	if ea.TxCtxCnt == SharedContext || ea.RxCtxCnt == SharedContext {
		return nil, opErr(op, d.prov.Name(), ErrInval)
	}
	if da := d.info.DomainAttr; da != nil && (ea.TxCtxCnt > max(da.MaxEPTxCtx, 1) || ea.RxCtxCnt > max(da.MaxEPRxCtx, 1)) {
		return nil, opErr(op, d.prov.Name(), ErrInval)
	}
	if ci.TxAttr == nil {
		ci.TxAttr = &TxAttr{}
	}
	if ci.RxAttr == nil {
		ci.RxAttr = &RxAttr{}
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr(op, d.prov.Name(), err)
	}
	p, err := sd.ScalableEndpoint(ci)
	if err != nil {
		d.lc.release()
		return nil, opErr(op, d.prov.Name(), err)
	}
	return &ScalableEndpoint{dom: d, info: ci, p: p, tx: make([]*Endpoint, ea.TxCtxCnt),
		rx: make([]*Endpoint, ea.RxCtxCnt)}, nil
}

// Info returns a copy of the info the scalable endpoint was opened with.
func (s *ScalableEndpoint) Info() *Info {
	if s == nil {
		return nil
	}
	return s.info.Dup()
}

// Bind binds the scalable endpoint to an address vector
// (fi_scalable_ep_bind); the AV is implicitly bound to every transmit and
// receive context, those already open and those opened later. flags must
// be 0 (ErrBadFlags). ErrInval for a nil AV or a second AV, ErrDomain for
// an AV of another domain, ErrOpBadState once a context is enabled.
func (s *ScalableEndpoint) Bind(av *AV, flags Flags) error {
	if s == nil {
		return ErrInval
	}
	const op = "fi_scalable_ep_bind"
	prov := s.dom.prov.Name()
	if av == nil {
		return opErr(op, prov, ErrInval)
	}
	if flags != 0 {
		return opErr(op, prov, ErrBadFlags)
	}
	if av.domain() != s.dom {
		return opErr(op, prov, ErrDomain)
	}
	s.mu.Lock()
	if s.lc.isClosed() {
		s.mu.Unlock()
		return opErr(op, prov, ErrClosed)
	}
	if s.av != nil {
		s.mu.Unlock()
		return opErr(op, prov, ErrInval)
	}
	ctxs := s.contexts()
	for _, ep := range ctxs {
		if ep.enabled.Load() {
			s.mu.Unlock()
			return opErr(op, prov, ErrOpBadState)
		}
	}
	if err := av.bindEndpoint(); err != nil {
		s.mu.Unlock()
		return opErr(op, prov, err)
	}
	s.av = av
	s.mu.Unlock()
	// Outside s.mu: a context's lock is taken before s.mu (Close).
	for _, ep := range ctxs {
		if err := ep.bindSepAV(av); err != nil {
			return opErr(op, prov, err)
		}
	}
	return nil
}

// contexts returns the open contexts; s.mu is held.
func (s *ScalableEndpoint) contexts() []*Endpoint {
	var all []*Endpoint
	for _, l := range [2][]*Endpoint{s.tx, s.rx} {
		for _, ep := range l {
			if ep != nil {
				all = append(all, ep)
			}
		}
	}
	return all
}

// TxContext opens transmit context index, 0 <= index < EPAttr.TxCtxCnt
// (fi_tx_context). attr may be nil to inherit the scalable endpoint's
// TxAttr; otherwise its zero fields inherit, its Caps must be a subset of
// the scalable endpoint's, InjectSize, Size and IOVLimit at most the
// scalable endpoint's, and OpFlags are the context's default operation
// flags. The attributes in effect are written back to attr. The context
// transmits only: receive calls on it return ErrNoSys. Errors (wrapped):
// ErrInval for an index out of range or attributes beyond the scalable
// endpoint's, ErrBusy for an index already open, ErrClosed.
func (s *ScalableEndpoint) TxContext(index int, attr *TxAttr) (*Endpoint, error) {
	if s == nil {
		return nil, ErrInval
	}
	return s.context(index, true, attr, nil)
}

// RxContext opens receive context index, 0 <= index < EPAttr.RxCtxCnt
// (fi_rx_context). attr may be nil to inherit the scalable endpoint's
// RxAttr; the rules of TxContext apply to its Caps, Size and IOVLimit, and
// its OpFlags are the context's default receive flags. The context
// receives only: transmit calls on it return ErrNoSys. Errors as
// TxContext.
func (s *ScalableEndpoint) RxContext(index int, attr *RxAttr) (*Endpoint, error) {
	if s == nil {
		return nil, ErrInval
	}
	return s.context(index, false, nil, attr)
}

// within reports whether a requested limit v (0: inherit) is within base.
func within(v, base uint64) bool { return v == 0 || base == 0 || v <= base }

// orInherit returns v, or base when v is 0.
func orInherit[T comparable](v, base T) T {
	var zero T
	if v == zero {
		return base
	}
	return v
}

// ctxTxAttr merges a transmit context's requested attributes with the
// scalable endpoint's; ok is false if they exceed them.
func ctxTxAttr(base *TxAttr, a *TxAttr) (TxAttr, bool) {
	r := *base
	if a == nil {
		return r, true
	}
	if a.Caps&^base.Caps != 0 || !within(a.InjectSize, base.InjectSize) || !within(a.Size, base.Size) ||
		!within(a.IOVLimit, base.IOVLimit) || !within(a.RMAIOVLimit, base.RMAIOVLimit) {
		return r, false
	}
	r.Caps = orInherit(a.Caps, base.Caps)
	r.InjectSize = orInherit(a.InjectSize, base.InjectSize)
	r.Size = orInherit(a.Size, base.Size)
	r.IOVLimit = orInherit(a.IOVLimit, base.IOVLimit)
	r.RMAIOVLimit = orInherit(a.RMAIOVLimit, base.RMAIOVLimit)
	r.MsgOrder = orInherit(a.MsgOrder, base.MsgOrder)
	r.CompOrder = orInherit(a.CompOrder, base.CompOrder)
	r.OpFlags = a.OpFlags
	return r, true
}

// ctxRxAttr is ctxTxAttr for receive contexts.
func ctxRxAttr(base *RxAttr, a *RxAttr) (RxAttr, bool) {
	r := *base
	if a == nil {
		return r, true
	}
	if a.Caps&^base.Caps != 0 || !within(a.Size, base.Size) || !within(a.IOVLimit, base.IOVLimit) ||
		!within(a.TotalBufferedRecv, base.TotalBufferedRecv) {
		return r, false
	}
	r.Caps = orInherit(a.Caps, base.Caps)
	r.Size = orInherit(a.Size, base.Size)
	r.IOVLimit = orInherit(a.IOVLimit, base.IOVLimit)
	r.MsgOrder = orInherit(a.MsgOrder, base.MsgOrder)
	r.CompOrder = orInherit(a.CompOrder, base.CompOrder)
	r.TotalBufferedRecv = orInherit(a.TotalBufferedRecv, base.TotalBufferedRecv)
	r.OpFlags = a.OpFlags
	return r, true
}

func (s *ScalableEndpoint) context(index int, tx bool, ta *TxAttr, ra *RxAttr) (*Endpoint, error) {
	op, slots := "fi_rx_context", s.rx
	if tx {
		op, slots = "fi_tx_context", s.tx
	}
	prov := s.dom.prov.Name()
	if index < 0 || index >= len(slots) {
		return nil, opErr(op, prov, ErrInval)
	}
	ci := s.info.Dup()
	ci.Handle = nil
	var tattr TxAttr
	var rattr RxAttr
	var ok bool
	if tx {
		if tattr, ok = ctxTxAttr(s.info.TxAttr, ta); !ok {
			return nil, opErr(op, prov, ErrInval)
		}
		ci.TxAttr = &tattr
		if ta != nil && ta.Caps != 0 {
			ci.Caps = ta.Caps | ci.Caps&SecondaryCaps
		}
	} else {
		if rattr, ok = ctxRxAttr(s.info.RxAttr, ra); !ok {
			return nil, opErr(op, prov, ErrInval)
		}
		ci.RxAttr = &rattr
		if ra != nil && ra.Caps != 0 {
			ci.Caps = ra.Caps | ci.Caps&SecondaryCaps
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slots[index] != nil {
		return nil, opErr(op, prov, ErrBusy)
	}
	if err := s.lc.hold(); err != nil {
		return nil, opErr(op, prov, err)
	}
	var p provider.Endpoint
	var err error
	if tx {
		a := tattr
		p, err = s.p.TxContext(index, &a)
	} else {
		a := rattr
		p, err = s.p.RxContext(index, &a)
	}
	if err != nil {
		s.lc.release()
		return nil, opErr(op, prov, err)
	}
	if err := s.dom.lc.hold(); err != nil {
		p.Close()
		s.lc.release()
		return nil, opErr(op, prov, err)
	}
	ep := newEndpoint(s.dom, ci, p)
	ep.sep, ep.sepTx, ep.sepIndex = s, tx, index
	if tx {
		// A transmit context has no receive queue of its own to post to.
		ep.peerRX = true
	} else {
		// A receive context transmits nothing (ErrNoSys).
		ep.noTx = true
		ep.tagged, ep.inj, ep.bsend, ep.rma, ep.atomic = nil, nil, nil, nil, nil
	}
	if s.av != nil {
		if err := ep.bindSepAV(s.av); err != nil {
			ep.sep = nil
			ep.Close()
			s.lc.release()
			return nil, opErr(op, prov, err)
		}
	}
	slots[index] = ep
	if tx && ta != nil {
		*ta = tattr
	}
	if !tx && ra != nil {
		*ra = rattr
	}
	return ep, nil
}

// bindSepAV binds the scalable endpoint's AV to the context e.
func (e *Endpoint) bindSepAV(av *AV) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.av == av || e.lc.isClosed() {
		return nil
	}
	return e.bindAV(av, 0)
}

// sepBindCheck applies the rules of fi_ep_bind on a context of a scalable
// endpoint: its AV comes from the scalable endpoint (ErrInval), a
// transmit context binds CQs for FI_TRANSMIT and counters for FI_SEND,
// FI_READ, FI_WRITE only, a receive context CQs for FI_RECV and counters
// for FI_RECV, FI_REMOTE_READ, FI_REMOTE_WRITE only (ErrBadFlags), and
// shared receive and transmit contexts bind to neither (ErrInval).
func (e *Endpoint) sepBindCheck(obj Bindable, flags Flags) error {
	switch obj.(type) {
	case *AV, *SRX, *STX:
		return ErrInval
	case *CQ:
		bad := FlagRecv
		if !e.sepTx {
			bad = FlagTransmit
		}
		if flags&bad != 0 {
			return ErrBadFlags
		}
	case *Cntr:
		bad := FlagRecv | FlagRemoteRead | FlagRemoteWrite
		if !e.sepTx {
			bad = FlagSend | FlagRead | FlagWrite
		}
		if flags&bad != 0 {
			return ErrBadFlags
		}
	}
	return nil
}

// namedRxView is the AV view of an endpoint that is not a context of a
// scalable endpoint: with rx_ctx_bits, an address from RxAddr reaches
// the named receive context of a peer's scalable endpoint where the
// provider can tell its address (provider.RxCtxAddresser); otherwise v.
func (d *Domain) namedRxView(v provider.AVView) provider.AVView {
	if ra, ok := d.prov.(provider.RxCtxAddresser); ok {
		return sepctx.NewNamedAV(v, ra.RxCtxAddr)
	}
	return v
}

// contextClosed drops the closed context e from its scalable endpoint.
func (s *ScalableEndpoint) contextClosed(e *Endpoint) {
	s.mu.Lock()
	slots := s.rx
	if e.sepTx {
		slots = s.tx
	}
	if e.sepIndex < len(slots) && slots[e.sepIndex] == e {
		slots[e.sepIndex] = nil
	}
	s.mu.Unlock()
	s.lc.release()
}

// Enable enables the scalable endpoint (fi_enable). Its contexts are
// enabled one by one with Endpoint.Enable, before or after it; a second
// Enable does nothing. ErrNoAV without a bound AV.
func (s *ScalableEndpoint) Enable() error {
	if s == nil {
		return ErrInval
	}
	const op = "fi_enable"
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lc.isClosed() {
		return opErr(op, s.dom.prov.Name(), ErrClosed)
	}
	if s.enabled {
		return nil
	}
	if s.av == nil {
		return opErr(op, s.dom.prov.Name(), ErrNoAV)
	}
	if err := s.p.Enable(s.av.view()); err != nil {
		return opErr(op, s.dom.prov.Name(), err)
	}
	s.enabled = true
	return nil
}

// Name returns the scalable endpoint's address (fi_getname), which its
// contexts share: a peer inserts it into its AV and reaches receive
// context i at RxAddr(addr, i, rxCtxBits).
func (s *ScalableEndpoint) Name() ([]byte, error) {
	if s == nil {
		return nil, ErrInval
	}
	if s.lc.isClosed() {
		return nil, opErr("fi_getname", s.dom.prov.Name(), ErrClosed)
	}
	b, err := s.p.Name()
	return b, opErr("fi_getname", s.dom.prov.Name(), err)
}

// Close closes the scalable endpoint (fi_close). It returns ErrBusy while
// transmit or receive contexts are open, ErrClosed the second time.
func (s *ScalableEndpoint) Close() error {
	if s == nil {
		return ErrInval
	}
	if err := s.lc.beginClose(); err != nil {
		return opErr("fi_close", s.dom.prov.Name(), err)
	}
	err := s.p.Close()
	s.mu.Lock()
	if s.av != nil {
		s.av.unbindEndpoint()
		s.av = nil
	}
	s.mu.Unlock()
	s.dom.lc.release()
	return opErr("fi_close", s.dom.prov.Name(), err)
}

// STX is a shared transmit context (fi_stx_context).
type STX struct {
	lc  lifecycle
	dom *Domain
	p   provider.SharedTx
	// credits is the context's queue (its tx size), shared by the
	// endpoints bound to it (provider.TxCredits).
	credits *stx.Credits
}

// OpenSTX opens a shared transmit context (fi_stx_context). Providers that
// cannot share transmit contexts return ErrNoSys.
func (d *Domain) OpenSTX(attr *TxAttr) (*STX, error) {
	if d == nil {
		return nil, ErrInval
	}
	sd, ok := d.d.(provider.SharedTxDomain)
	if !ok {
		return nil, opErr("fi_stx_context", d.prov.Name(), ErrNoSys)
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr("fi_stx_context", d.prov.Name(), err)
	}
	p, err := sd.SharedTx(d.stxAttr(attr))
	if err != nil {
		d.lc.release()
		return nil, opErr("fi_stx_context", d.prov.Name(), err)
	}
	return &STX{dom: d, p: p, credits: stx.NewCredits(p.Attr().Size)}, nil
}

// Close closes the shared transmit context; ErrBusy while endpoints use it.
func (x *STX) Close() error {
	if x == nil {
		return ErrInval
	}
	if err := x.lc.beginClose(); err != nil {
		return opErr("fi_close", x.dom.prov.Name(), err)
	}
	err := x.p.Close()
	x.dom.lc.release()
	return opErr("fi_close", x.dom.prov.Name(), err)
}
