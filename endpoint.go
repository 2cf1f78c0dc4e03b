package fabric

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

// Msg describes a message transfer for the *Msg calls (struct fi_msg,
// fi_msg_tagged, fi_msg_rma). Unused fields are ignored.
type Msg struct {
	IOV     [][]byte // local buffers; the caller owns them until the completion
	Desc    []MRDesc // memory descriptors of IOV (MR.Desc), nil or one per buffer
	Addr    Addr     // destination (sends, RMA) or source filter (receives)
	Context any      // operation context reported in the completion
	Data    uint64   // remote CQ data (with FI_REMOTE_CQ_DATA)
	Tag     uint64   // tagged operations
	Ignore  uint64   // tagged receives
	RMA     []RMAIOV // remote regions (RMA)
}

// Endpoint is an active endpoint (fi_endpoint): created disabled, bound to
// CQs, counters, an AV or EQ, then enabled. Data-transfer calls never block:
// they return ErrAgain when resources are exhausted, after which reading the
// bound CQ makes progress. Buffers passed to data calls belong to the
// provider until the operation's completion (or, for Inject calls, until
// the call returns).
type Endpoint struct {
	lc     lifecycle
	dom    *Domain
	info   *Info
	p      provider.Endpoint
	tagged provider.Tagged
	inj    provider.Injector  // pe's plain-inject fast path, or nil
	bsend  provider.BufSender // pe's one-buffer send fast path, or nil
	rma    provider.RMA
	atomic provider.Atomic
	conn   provider.Connector
	prov   string
	epType EPType
	caps   Caps

	mu      sync.Mutex // control path: bind, enable, close
	enabled atomic.Bool
	txCQ    *CQ
	rxCQ    *CQ
	cntrs   [provider.NumCntrs]*Cntr
	av      *AV
	eq      *EQ
	srxObj  *SRX
	stxObj  *STX
	rq      *srx.Queue // receive queue: own, or the shared SRX's
	ownRQ   bool
	peerRX  bool // bound to an imported (FI_PEER) SRX: receives are posted to the owner
	res     provider.Resources

	txSel, rxSel bool // FI_SELECTIVE_COMPLETION on the tx/rx CQ binding
	txOpFlags    atomic.Uint64
	rxOpFlags    atomic.Uint64
	maxMsg       uint64
	injectSize   uint64
	txIOVLimit   int
	rxIOVLimit   int
	rmaIOVLimit  int
	cqDataSize   uint64

	parent *Endpoint         // alias parent
	aliasT bool              // alias for transmit (true) or receive
	sep    *ScalableEndpoint // owning scalable endpoint of a tx/rx context

	sepTx    bool // a transmit context (else a receive context) of sep
	sepIndex int  // the context's index in sep
	noTx     bool // a receive context: transmit calls return ErrNoSys

	avCancel func() // stops AV insert notifications

	xfer     provider.TransferPeer // FI_PEER_TRANSFER: the peer linked to this main endpoint
	xferMain *Endpoint             // the main endpoint this peer's endpoint is linked to (held open)
	bufRecv  *bufRecv              // FI_BUFFERED_RECV (bufrecv.go), or nil
}

// OpenEndpoint opens an active endpoint (fi_endpoint). info is usually one
// returned by GetInfo, or the Info of an FI_CONNREQ event.
func (d *Domain) OpenEndpoint(info *Info) (*Endpoint, error) {
	if d == nil {
		return nil, ErrInval
	}
	const op = "fi_endpoint"
	if info == nil || info.EPAttr == nil {
		return nil, opErr(op, d.prov.Name(), ErrInval)
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr(op, d.prov.Name(), err)
	}
	ci := info.Dup()
	pinfo := ci
	if pep, ok := ci.Handle.(*PassiveEndpoint); ok {
		// An endpoint opened from an info whose handle is a passive
		// endpoint adopts its address; the provider sees its own object.
		pinfo = ci.Dup()
		pinfo.Handle = pep.p
	}
	pe, err := d.d.Endpoint(pinfo)
	if err != nil {
		d.lc.release()
		return nil, opErr(op, d.prov.Name(), err)
	}
	br, err := newBufRecv(ci, pe)
	if err != nil {
		_ = pe.Close()
		d.lc.release()
		return nil, opErr(op, d.prov.Name(), err)
	}
	ep := newEndpoint(d, ci, pe)
	ep.bufRecv = br
	return ep, nil
}

// OpenEndpoint2 opens an active endpoint with flags (fi_endpoint2). With
// flags 0 it is OpenEndpoint. The one flag fi_endpoint2 defines is
// FlagPeerTransfer (fi_peer(3) "FI_PEER_TRANSFER"): an owner provider sets
// up a peer transfer context with a provider whose Info.Mode asks for
// ModePeerTransfer. That needs the fi_peer_transfer_context, which this
// form cannot carry: OpenTransferEndpoint is the call; here
// FlagPeerTransfer returns ErrNoSys, as fi_endpoint2 does in C for a
// provider without the call; any other flag returns ErrBadFlags. Nothing
// is opened in either case.
func (d *Domain) OpenEndpoint2(info *Info, flags Flags) (*Endpoint, error) {
	if d == nil {
		return nil, ErrInval
	}
	switch {
	case flags&^FlagPeerTransfer != 0:
		return nil, opErr("fi_endpoint2", d.prov.Name(), ErrBadFlags)
	case flags != 0:
		return nil, opErr("fi_endpoint2", d.prov.Name(), ErrNoSys)
	}
	return d.OpenEndpoint(info)
}

// maxRxQueue is the largest receive queue an endpoint's own queue holds
// (rx_attr.size and FI_OPT_RX_SIZE).
const maxRxQueue = 1 << 20

// newRQ returns the endpoint's own receive queue of the given depth.
func (e *Endpoint) newRQ(size int) *srx.Queue {
	return srx.New(srx.Config{
		Size:     size,
		Directed: e.caps&CapDirectedRecv != 0,
		Tagged:   e.caps&CapTagged != 0,
		// FI_RM_ENABLED: receives reserve room in the receive CQ.
		ResourceMgmt: e.dom.rmEnabled(),
	})
}

// newEndpoint wraps a provider endpoint; the caller holds d.lc for it.
func newEndpoint(d *Domain, ci *Info, pe provider.Endpoint) *Endpoint {
	ep := &Endpoint{dom: d, info: ci, p: pe, prov: d.prov.Name(), epType: ci.EPAttr.Type, caps: ci.Caps}
	ep.tagged, _ = pe.(provider.Tagged)
	ep.inj, _ = pe.(provider.Injector)
	ep.bsend, _ = pe.(provider.BufSender)
	ep.rma, _ = pe.(provider.RMA)
	ep.atomic, _ = pe.(provider.Atomic)
	ep.conn, _ = pe.(provider.Connector)
	ep.maxMsg = ci.EPAttr.MaxMsgSize
	if ci.TxAttr != nil {
		ep.txOpFlags.Store(uint64(ci.TxAttr.OpFlags))
		ep.injectSize = ci.TxAttr.InjectSize
		ep.txIOVLimit = sizeLimit(ci.TxAttr.IOVLimit)
		ep.rmaIOVLimit = sizeLimit(ci.TxAttr.RMAIOVLimit)
	}
	if ci.RxAttr != nil {
		ep.rxOpFlags.Store(uint64(ci.RxAttr.OpFlags))
		ep.rxIOVLimit = sizeLimit(ci.RxAttr.IOVLimit)
	}
	if ci.DomainAttr != nil {
		ep.cqDataSize = ci.DomainAttr.CQDataSize
	}
	size := 0
	if ci.RxAttr != nil {
		size = int(min(ci.RxAttr.Size, maxRxQueue))
	}
	ep.rq = ep.newRQ(size)
	ep.ownRQ = true
	// Counters bound to the domain's memory regions progress it.
	d.addEndpointSource(pe)
	return ep
}

// sizeLimit clamps an attribute's limit (an iov_limit) to 1 ... 1<<20.
func sizeLimit(v uint64) int { return int(max(1, min(v, 1<<20))) }

// Info returns a copy of the info the endpoint was opened with.
func (ep *Endpoint) Info() *Info {
	if ep == nil {
		return nil
	}
	return ep.info.Dup()
}

// Domain returns the endpoint's domain.
func (ep *Endpoint) Domain() *Domain {
	if ep == nil {
		return nil
	}
	return ep.dom
}

func (ep *Endpoint) root() *Endpoint {
	if ep.parent != nil {
		return ep.parent
	}
	return ep
}

// Bindable is an object an endpoint binds to (fi_ep_bind): *CQ, *Cntr,
// *AV, *EQ, *SRX or *STX. The set is closed: the interface has an
// unexported method, so Bind's argument is checked by the compiler
// instead of at run time.
type Bindable interface {
	bindable()
}

func (*CQ) bindable()   {}
func (*Cntr) bindable() {}
func (*AV) bindable()   {}
func (*EQ) bindable()   {}
func (*SRX) bindable()  {}
func (*STX) bindable()  {}

// Bind associates the endpoint with a CQ, counter, AV, EQ, shared receive
// context or shared transmit context (fi_ep_bind). Flags follow
// fi_endpoint(3): for a CQ, FI_TRANSMIT and/or FI_RECV, optionally with
// FI_SELECTIVE_COMPLETION; for a counter, any of FI_SEND, FI_RECV,
// FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE; 0 for the others.
// An endpoint binds at most one CQ or counter per kind of operation, and
// must be bound before Enable. BindCQ, BindCntr, BindAV, BindEQ and
// BindSRX and BindSTX are the typed forms (BindSTX gives the rules for a
// shared transmit context). A nil object (or a typed nil) gives ErrInval.
func (ep *Endpoint) Bind(obj Bindable, flags Flags) error {
	if ep == nil {
		return ErrInval
	}
	const op = "fi_ep_bind"
	e := ep.root()
	if ep.parent != nil {
		return opErr(op, e.prov, ErrOpBadState)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lc.isClosed() {
		return opErr(op, e.prov, ErrClosed)
	}
	if e.enabled.Load() {
		return opErr(op, e.prov, ErrOpBadState)
	}
	var err error
	if e.sep != nil {
		if err = e.sepBindCheck(obj, flags); err != nil {
			return opErr(op, e.prov, err)
		}
	}
	switch o := obj.(type) {
	case *CQ:
		err = e.bindCQ(o, flags)
	case *Cntr:
		err = e.bindCntr(o, flags)
	case *AV:
		err = e.bindAV(o, flags)
	case *EQ:
		err = e.bindEQ(o, flags)
	case *SRX:
		err = e.bindSRX(o, flags)
	case *STX:
		err = e.bindSTX(o, flags)
	default:
		err = ErrInval
	}
	return opErr(op, e.prov, err)
}

// BindCQ is Bind for a completion queue.
func (ep *Endpoint) BindCQ(cq *CQ, flags Flags) error { return ep.Bind(cq, flags) }

// BindCntr is Bind for a counter.
func (ep *Endpoint) BindCntr(c *Cntr, flags Flags) error { return ep.Bind(c, flags) }

// BindAV is Bind for an address vector.
func (ep *Endpoint) BindAV(av *AV) error { return ep.Bind(av, 0) }

// BindEQ is Bind for an event queue.
func (ep *Endpoint) BindEQ(eq *EQ) error { return ep.Bind(eq, 0) }

// BindSRX is Bind for a shared receive context.
func (ep *Endpoint) BindSRX(s *SRX) error { return ep.Bind(s, 0) }

func (e *Endpoint) bindCQ(cq *CQ, flags Flags) error {
	if cq == nil {
		return ErrInval
	}
	if cq.domain() != e.dom {
		return ErrDomain
	}
	if flags&^(FlagTransmit|FlagRecv|FlagSelectiveCompletion) != 0 {
		return ErrBadFlags
	}
	if flags&(FlagTransmit|FlagRecv) == 0 {
		return ErrBadFlags
	}
	if (flags&FlagTransmit != 0 && e.txCQ != nil) || (flags&FlagRecv != 0 && e.rxCQ != nil) {
		return ErrInval
	}
	if e.txCQ != cq && e.rxCQ != cq {
		if err := cq.bindEndpoint(e.p); err != nil {
			return err
		}
	}
	sel := flags&FlagSelectiveCompletion != 0
	if flags&FlagTransmit != 0 {
		e.txCQ, e.txSel = cq, sel
	}
	if flags&FlagRecv != 0 {
		e.rxCQ, e.rxSel = cq, sel
	}
	return nil
}

var cntrBindFlags = [provider.NumCntrs]Flags{
	provider.CntrSend:        FlagSend,
	provider.CntrRecv:        FlagRecv,
	provider.CntrRead:        FlagRead,
	provider.CntrWrite:       FlagWrite,
	provider.CntrRemoteRead:  FlagRemoteRead,
	provider.CntrRemoteWrite: FlagRemoteWrite,
}

func (e *Endpoint) bindCntr(c *Cntr, flags Flags) error {
	if c == nil {
		return ErrInval
	}
	if c.domain() != e.dom {
		return ErrDomain
	}
	const all = FlagSend | FlagRecv | FlagRead | FlagWrite | FlagRemoteRead | FlagRemoteWrite
	if flags == 0 || flags&^all != 0 {
		return ErrBadFlags
	}
	if flags&(FlagRemoteRead|FlagRemoteWrite) != 0 && e.caps&CapRMAEvent == 0 {
		return ErrInval
	}
	for i, f := range cntrBindFlags {
		if flags&f != 0 && e.cntrs[i] != nil {
			return ErrInval
		}
	}
	already := false
	for _, b := range e.cntrs {
		if b == c {
			already = true
		}
	}
	if !already {
		if err := c.bindEndpoint(e.p); err != nil {
			return err
		}
	}
	for i, f := range cntrBindFlags {
		if flags&f != 0 {
			e.cntrs[i] = c
		}
	}
	return nil
}

func (e *Endpoint) bindAV(av *AV, flags Flags) error {
	if av == nil {
		return ErrInval
	}
	if flags != 0 {
		return ErrBadFlags
	}
	if e.epType == EPMsg {
		return ErrInval
	}
	if av.domain() != e.dom {
		return ErrDomain
	}
	if e.av != nil {
		return ErrInval
	}
	if err := av.bindEndpoint(); err != nil {
		return err
	}
	e.av = av
	return nil
}

func (e *Endpoint) bindEQ(eq *EQ, flags Flags) error {
	if eq == nil {
		return ErrInval
	}
	if flags != 0 {
		return ErrBadFlags
	}
	if eq.fabric() != e.dom.fabric {
		return ErrDomain
	}
	if e.eq != nil {
		return ErrInval
	}
	if err := eq.bindEndpoint(e.p); err != nil {
		return err
	}
	e.eq = eq
	return nil
}

func (e *Endpoint) bindSRX(s *SRX, flags Flags) error {
	if s == nil {
		return ErrInval
	}
	if flags != 0 {
		return ErrBadFlags
	}
	if s.domain() != e.dom {
		return ErrDomain
	}
	if e.srxObj != nil {
		return ErrInval
	}
	if e.info.EPAttr.RxCtxCnt != SharedContext {
		return ErrInval
	}
	if err := s.bindEndpoint(); err != nil {
		return err
	}
	e.srxObj = s
	return nil
}

// Enable transitions the endpoint to the enabled state (fi_enable). It
// returns ErrNoAV for a connectionless endpoint without an AV, ErrNoCQ
// when transmit or receive operations have nowhere to report completions,
// ErrNoEQ for a connection-oriented endpoint without an EQ.
func (ep *Endpoint) Enable() error {
	if ep == nil {
		return ErrInval
	}
	const op = "fi_enable"
	e := ep.root()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lc.isClosed() {
		return opErr(op, e.prov, ErrClosed)
	}
	if e.enabled.Load() {
		return nil
	}
	return opErr(op, e.prov, e.enableLocked())
}

func (e *Endpoint) enableLocked() error {
	if e.epType != EPMsg && e.av == nil {
		return ErrNoAV
	}
	if e.epType == EPMsg && e.eq == nil {
		return ErrNoEQ
	}
	txCaps := CapMsg | CapTagged | CapRMA | CapAtomic
	// A context of a scalable endpoint needs only its own direction's.
	needTx, needRx := e.sep == nil || e.sepTx, e.sep == nil || !e.sepTx
	if e.caps&txCaps != 0 {
		if needTx && e.txCQ == nil && e.cntrs[provider.CntrSend] == nil && e.cntrs[provider.CntrWrite] == nil &&
			e.cntrs[provider.CntrRead] == nil {
			return ErrNoCQ
		}
		if needRx && e.rxCQ == nil && e.cntrs[provider.CntrRecv] == nil && e.caps&(CapMsg|CapTagged) != 0 {
			return ErrNoCQ
		}
	}
	if e.info.EPAttr.RxCtxCnt == SharedContext && e.srxObj == nil {
		return ErrNoRX
	}
	if e.needSTX() {
		return ErrNoCQ
	}
	res := provider.Resources{}
	if e.txCQ != nil {
		res.TxCQ = e.xferWrap(e.txCQ.owner())
		if e.txSel {
			res.TxFlags |= FlagSelectiveCompletion
		}
	}
	if e.rxCQ != nil {
		res.RxCQ = e.xferWrap(e.rxCQ.owner())
		if e.rxSel {
			res.RxFlags |= FlagSelectiveCompletion
		}
	}
	for i, c := range e.cntrs {
		if c != nil {
			res.Cntrs[i] = c.owner()
		}
	}
	if e.av != nil {
		res.AV = e.av.view()
		if e.sep == nil {
			res.AV = e.dom.namedRxView(res.AV) // scalable.go
		}
	}
	if e.eq != nil {
		res.EQ = fidWriter{w: e.eq.writer(), prov: e.p, root: e}
	}
	res.MR = e.dom.mrKeys()
	if e.stxObj != nil {
		res.TxCredits = e.stxObj.credits
	}
	res.Source = e.caps&CapSource != 0
	res.SourceErr = e.caps&CapSourceErr != 0
	if e.srxObj != nil {
		if e.ownRQ {
			e.rq.Close()
		}
		var cq provider.CQOwner
		if e.rxCQ != nil {
			cq = res.RxCQ
		}
		e.srxObj.setCompletion(cq, res.Cntrs[provider.CntrRecv], e.rxSel)
		res.SRX = e.srxObj.owner()
		e.rq = e.srxObj.queue()
		e.ownRQ = false
		e.peerRX = e.rq == nil
	} else {
		res.SRX = e.rq
		res.OwnSRX = e.ownRQ
	}
	if e.ownRQ {
		var cq provider.CQOwner
		if e.rxCQ != nil {
			cq = res.RxCQ
		}
		e.rq.SetCompletion(cq, res.Cntrs[provider.CntrRecv])
	}
	if e.bufRecv != nil {
		if err := e.enableBufRecv(); err != nil {
			return err
		}
	}
	e.res = res
	if err := e.p.Enable(&e.res); err != nil {
		return err
	}
	if l, ok := e.p.(provider.AVListener); ok && e.av != nil {
		e.avCancel = e.av.onInsert(l.AddrInserted)
	}
	e.enabled.Store(true)
	return nil
}

// Close closes the endpoint (fi_close). It returns ErrBusy while aliases of
// it are open. Receives still posted complete with ErrCanceled.
func (ep *Endpoint) Close() error {
	if ep == nil {
		return ErrInval
	}
	const op = "fi_close"
	if ep.parent != nil {
		if err := ep.lc.beginClose(); err != nil {
			return opErr(op, ep.prov, err)
		}
		ep.parent.lc.release()
		return nil
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if err := ep.lc.beginClose(); err != nil {
		return opErr(op, ep.prov, err)
	}
	ep.enabled.Store(false)
	// Stop the provider (and its progress) first, then flush the receive
	// queue: posted receives complete with FI_ECANCELED.
	err := ep.p.Close()
	ep.dom.removeEndpointSource(ep.p)
	if ep.ownRQ && ep.rq != nil {
		ep.rq.Close()
	}
	if ep.txCQ != nil {
		ep.txCQ.unbindEndpoint(ep.p)
	}
	if ep.rxCQ != nil && ep.rxCQ != ep.txCQ {
		ep.rxCQ.unbindEndpoint(ep.p)
	}
	seen := map[*Cntr]bool{}
	for _, c := range ep.cntrs {
		if c != nil && !seen[c] {
			seen[c] = true
			c.unbindEndpoint(ep.p)
		}
	}
	if ep.avCancel != nil {
		ep.avCancel()
	}
	if ep.av != nil {
		ep.av.unbindEndpoint()
	}
	if ep.eq != nil {
		ep.eq.unbindEndpoint(ep.p)
	}
	ep.unbindSTX()
	if ep.srxObj != nil {
		ep.srxObj.unbindEndpoint()
	}
	if ep.sep != nil {
		ep.sep.contextClosed(ep)
	}
	if ep.xferMain != nil {
		ep.xferMain.lc.release()
	}
	ep.dom.lc.release()
	return opErr(op, ep.prov, err)
}

// Alias creates an alias of the endpoint (fi_ep_alias): a second handle
// whose operations use different default flags. flags must hold exactly
// one of FI_TRANSMIT or FI_RECV, plus the operation flags to apply.
func (ep *Endpoint) Alias(flags Flags) (*Endpoint, error) {
	if ep == nil {
		return nil, ErrInval
	}
	const op = "fi_ep_alias"
	e := ep.root()
	dir := flags & (FlagTransmit | FlagRecv)
	if dir != FlagTransmit && dir != FlagRecv {
		return nil, opErr(op, e.prov, ErrInval)
	}
	if err := e.lc.hold(); err != nil {
		return nil, opErr(op, e.prov, err)
	}
	a := &Endpoint{parent: e, aliasT: dir == FlagTransmit, dom: e.dom, info: e.info, p: e.p,
		tagged: e.tagged, inj: e.inj, bsend: e.bsend, rma: e.rma, atomic: e.atomic, conn: e.conn, prov: e.prov, epType: e.epType, caps: e.caps,
		maxMsg: e.maxMsg, injectSize: e.injectSize, txIOVLimit: e.txIOVLimit, rxIOVLimit: e.rxIOVLimit,
		rmaIOVLimit: e.rmaIOVLimit, cqDataSize: e.cqDataSize}
	a.txOpFlags.Store(e.txOpFlags.Load())
	a.rxOpFlags.Store(e.rxOpFlags.Load())
	opFlags := flags &^ (FlagTransmit | FlagRecv)
	if dir == FlagTransmit {
		a.txOpFlags.Store(uint64(opFlags))
	} else {
		a.rxOpFlags.Store(uint64(opFlags))
	}
	return a, nil
}

// OpsFlags returns the default operation flags for transmit or receive
// operations (fi_control FI_GETOPSFLAG); which must be exactly one of
// FI_TRANSMIT or FI_RECV.
func (ep *Endpoint) OpsFlags(which Flags) (Flags, error) {
	if ep == nil {
		return 0, ErrInval
	}
	if ep.lc.isClosed() || ep.root().lc.isClosed() {
		return 0, opErr("fi_control", ep.prov, ErrClosed)
	}
	switch which & (FlagTransmit | FlagRecv) {
	case FlagTransmit:
		return Flags(ep.txOpFlags.Load()), nil
	case FlagRecv:
		return Flags(ep.rxOpFlags.Load()), nil
	}
	return 0, opErr("fi_control", ep.prov, ErrInval)
}

// SetOpsFlags sets the default operation flags (fi_control FI_SETOPSFLAG):
// flags holds exactly one of FI_TRANSMIT or FI_RECV plus the new flags.
func (ep *Endpoint) SetOpsFlags(flags Flags) error {
	if ep == nil {
		return ErrInval
	}
	if ep.lc.isClosed() || ep.root().lc.isClosed() {
		return opErr("fi_control", ep.prov, ErrClosed)
	}
	v := uint64(flags &^ (FlagTransmit | FlagRecv))
	switch flags & (FlagTransmit | FlagRecv) {
	case FlagTransmit:
		ep.txOpFlags.Store(v)
		return nil
	case FlagRecv:
		ep.rxOpFlags.Store(v)
		return nil
	}
	return opErr("fi_control", ep.prov, ErrInval)
}

// Name returns the endpoint's address (fi_getname).
func (ep *Endpoint) Name() ([]byte, error) {
	if ep == nil {
		return nil, ErrInval
	}
	e := ep.root()
	if e.lc.isClosed() {
		return nil, opErr("fi_getname", e.prov, ErrClosed)
	}
	b, err := e.p.Name()
	return b, opErr("fi_getname", e.prov, err)
}

// GetName copies the endpoint's address into buf (fi_getname with a
// buffer). It returns the address length; if buf is too small it returns
// the needed length and ErrTooSmall.
func (ep *Endpoint) GetName(buf []byte) (int, error) {
	if ep == nil {
		return 0, ErrInval
	}
	b, err := ep.Name()
	if err != nil {
		return 0, err
	}
	if len(buf) < len(b) {
		return len(b), opErr("fi_getname", ep.prov, ErrTooSmall)
	}
	return copy(buf, b), nil
}

// SetName sets the endpoint's address before it is enabled (fi_setname).
func (ep *Endpoint) SetName(addr []byte) error {
	if ep == nil {
		return ErrInval
	}
	e := ep.root()
	if e.lc.isClosed() {
		return opErr("fi_setname", e.prov, ErrClosed)
	}
	n, ok := e.p.(provider.Namer)
	if !ok {
		return opErr("fi_setname", e.prov, ErrNoSys)
	}
	if len(addr) == 0 {
		return opErr("fi_setname", e.prov, ErrInval)
	}
	return opErr("fi_setname", e.prov, n.SetName(addr))
}

// Peer returns the address of the connected peer (fi_getpeer).
func (ep *Endpoint) Peer() ([]byte, error) {
	if ep == nil {
		return nil, ErrInval
	}
	e := ep.root()
	if e.conn == nil {
		return nil, opErr("fi_getpeer", e.prov, ErrNoSys)
	}
	b, err := e.conn.Peer()
	return b, opErr("fi_getpeer", e.prov, err)
}

// Connect initiates a connection (fi_connect) with optional connection
// data; the result arrives on the bound EQ. It enables the endpoint.
func (ep *Endpoint) Connect(addr []byte, data []byte) error {
	if ep == nil {
		return ErrInval
	}
	e := ep.root()
	if e.conn == nil {
		return opErr("fi_connect", e.prov, ErrNoSys)
	}
	if err := e.Enable(); err != nil {
		return err
	}
	return opErr("fi_connect", e.prov, e.conn.Connect(addr, data))
}

// Accept accepts a connection request (fi_accept); the endpoint must have
// been opened from the FI_CONNREQ event's Info. It enables the endpoint.
func (ep *Endpoint) Accept(data []byte) error {
	if ep == nil {
		return ErrInval
	}
	e := ep.root()
	if e.conn == nil {
		return opErr("fi_accept", e.prov, ErrNoSys)
	}
	if err := e.Enable(); err != nil {
		return err
	}
	return opErr("fi_accept", e.prov, e.conn.Accept(data))
}

// Shutdown closes a connection (fi_shutdown).
func (ep *Endpoint) Shutdown(flags Flags) error {
	if ep == nil {
		return ErrInval
	}
	e := ep.root()
	if e.conn == nil {
		return opErr("fi_shutdown", e.prov, ErrNoSys)
	}
	if !e.enabled.Load() {
		return opErr("fi_shutdown", e.prov, ErrOpBadState)
	}
	return opErr("fi_shutdown", e.prov, e.conn.Shutdown(flags))
}

// Cancel cancels an outstanding operation with the given context
// (fi_cancel). A cancelled receive completes with an error entry whose Err
// is ErrCanceled. It returns ErrNoEnt if no such operation is outstanding.
func (ep *Endpoint) Cancel(ctx any) error {
	if ep == nil {
		return ErrInval
	}
	e := ep.root()
	if e.lc.isClosed() {
		return ErrClosed
	}
	if !e.enabled.Load() {
		return ErrOpBadState
	}
	if e.rq != nil {
		if err := e.rq.Cancel(ctx); err == nil {
			return nil
		}
	}
	return e.p.Cancel(ctx)
}

// GetOpt returns an endpoint option (fi_getopt) at level OptEndpoint:
// OptMinMultiRecv, OptCMDataSize, OptTxSize and OptRxSize (the queue
// depths in effect), OptSendBufSize and OptRecvBufSize where the provider
// has sockets (the size the kernel reports), OptBufferedMin and
// OptBufferedLimit on an endpoint with ModeBufferedRecv (see
// RecvContext), and provider options. Unknown options return
// ErrNoProtoOpt, and so do OptHMEMP2P and OptXPUTrigger (see OptHMEMP2P).
func (ep *Endpoint) GetOpt(level, name int) (uint64, error) {
	if ep == nil {
		return 0, ErrInval
	}
	e := ep.root()
	if e.lc.isClosed() {
		return 0, opErr("fi_getopt", e.prov, ErrClosed)
	}
	if level != OptEndpoint {
		return 0, opErr("fi_getopt", e.prov, ErrNoProtoOpt)
	}
	if name == OptMinMultiRecv && e.caps&CapMultiRecv != 0 {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.rq == nil {
			return 0, opErr("fi_getopt", e.prov, ErrNoSys)
		}
		return e.rq.MinMultiRecv(), nil
	}
	switch name {
	case OptHMEMP2P, OptXPUTrigger:
		return 0, opErr("fi_getopt", e.prov, ErrNoProtoOpt)
	case OptBufferedMin, OptBufferedLimit:
		v, err := e.getBufOpt(name)
		return v, opErr("fi_getopt", e.prov, err)
	case OptTxSize, OptRxSize:
		e.mu.Lock()
		defer e.mu.Unlock()
		if name == OptTxSize && e.info.TxAttr != nil {
			return e.info.TxAttr.Size, nil
		}
		if name == OptRxSize && e.info.RxAttr != nil {
			return e.info.RxAttr.Size, nil
		}
		return 0, opErr("fi_getopt", e.prov, ErrNoProtoOpt)
	}
	if h, ok := e.p.(provider.OptionHandler); ok {
		v, err := h.GetOpt(name)
		return v, opErr("fi_getopt", e.prov, err)
	}
	return 0, opErr("fi_getopt", e.prov, ErrNoProtoOpt)
}

// SetOpt sets an endpoint option (fi_setopt). OptMinMultiRecv applies to
// receives posted afterwards. OptTxSize and OptRxSize resize the transmit
// and receive queues before Enable (ErrOpBadState afterwards, ErrInval
// for 0 or more than the provider's maximum); the receive queue is the
// endpoint's own, so OptRxSize works on every provider unless a shared
// receive context is bound (ErrOpBadState: the SRX's depth applies), and
// OptTxSize where the provider queues transmits (tcp; ErrNoProtoOpt
// elsewhere). OptSendBufSize and OptRecvBufSize set the socket buffers
// (SO_SNDBUF / SO_RCVBUF) of the tcp and udp providers, at any time.
// OptBufferedMin and OptBufferedLimit apply to an endpoint with
// ModeBufferedRecv, before Enable (see RecvContext). OptCMDataSize is read-only, and OptHMEMP2P and OptXPUTrigger return
// ErrNoProtoOpt (see OptHMEMP2P).
func (ep *Endpoint) SetOpt(level, name int, v uint64) error {
	if ep == nil {
		return ErrInval
	}
	e := ep.root()
	if e.lc.isClosed() {
		return opErr("fi_setopt", e.prov, ErrClosed)
	}
	if level != OptEndpoint {
		return opErr("fi_setopt", e.prov, ErrNoProtoOpt)
	}
	if name == OptMinMultiRecv && e.caps&CapMultiRecv != 0 {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.rq == nil {
			return opErr("fi_setopt", e.prov, ErrNoSys)
		}
		e.rq.SetMinMultiRecv(v)
		return nil
	}
	switch name {
	case OptHMEMP2P, OptXPUTrigger:
		return opErr("fi_setopt", e.prov, ErrNoProtoOpt)
	case OptBufferedMin, OptBufferedLimit:
		return opErr("fi_setopt", e.prov, e.setBufOpt(name, v))
	case OptTxSize, OptRxSize:
		return opErr("fi_setopt", e.prov, e.setQueueSize(name, v))
	}
	if name == OptCMDataSize {
		// Read-only where supported.
		if h, ok := e.p.(provider.OptionHandler); ok {
			if _, err := h.GetOpt(name); err == nil {
				return opErr("fi_setopt", e.prov, ErrNoProtoOpt)
			}
		}
	}
	if h, ok := e.p.(provider.OptionHandler); ok {
		return opErr("fi_setopt", e.prov, h.SetOpt(name, v))
	}
	return opErr("fi_setopt", e.prov, ErrNoProtoOpt)
}

// setQueueSize is SetOpt(OptTxSize / OptRxSize).
func (e *Endpoint) setQueueSize(name int, v uint64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.enabled.Load() {
		return ErrOpBadState
	}
	if v == 0 {
		return ErrInval
	}
	if name == OptRxSize {
		if e.info.RxAttr == nil {
			return ErrNoProtoOpt
		}
		if !e.ownRQ || e.srxObj != nil || e.info.EPAttr.RxCtxCnt == SharedContext {
			return ErrOpBadState
		}
		if v > maxRxQueue {
			return ErrInval
		}
		if h, ok := e.p.(provider.OptionHandler); ok {
			// A provider that sizes its own receive side takes the
			// value too; ENOPROTOOPT means only the queue counts.
			if err := h.SetOpt(name, v); err != nil && !errors.Is(err, provider.ENOPROTOOPT) {
				return err
			}
		}
		e.rq.Close()
		e.rq = e.newRQ(int(v))
		e.info.RxAttr.Size = v
		return nil
	}
	if e.info.TxAttr == nil {
		return ErrNoProtoOpt
	}
	h, ok := e.p.(provider.OptionHandler)
	if !ok {
		return ErrNoProtoOpt
	}
	if err := h.SetOpt(name, v); err != nil {
		return err
	}
	e.info.TxAttr.Size = v
	return nil
}

// GetOptBytes is fi_getopt with a caller buffer holding a native size_t:
// a buffer shorter than 8 bytes yields ErrTooSmall and the needed length.
func (ep *Endpoint) GetOptBytes(level, name int, buf []byte) (int, error) {
	if ep == nil {
		return 0, ErrInval
	}
	v, err := ep.GetOpt(level, name)
	if err != nil {
		return 0, err
	}
	if len(buf) < 8 {
		return 8, opErr("fi_getopt", ep.prov, ErrTooSmall)
	}
	binary.NativeEndian.PutUint64(buf, v)
	return 8, nil
}

// SetOptBytes is fi_setopt with a native size_t value; any other length
// returns ErrInval.
func (ep *Endpoint) SetOptBytes(level, name int, val []byte) error {
	if ep == nil {
		return ErrInval
	}
	if len(val) != 8 {
		if level != OptEndpoint {
			return opErr("fi_setopt", ep.prov, ErrNoProtoOpt)
		}
		return opErr("fi_setopt", ep.prov, ErrInval)
	}
	return ep.SetOpt(level, name, binary.NativeEndian.Uint64(val))
}
