package fabric

import (
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// FI_PEER_TRANSFER (fi_peer(3)): a peer provider whose Info.Mode asks for
// ModePeerTransfer (an offload provider) sends and receives over an
// endpoint of the main provider. The main provider (the application or
// composite holding both) opens the peer's endpoint with
// Domain.OpenTransferEndpoint, passing its own endpoint, not yet enabled,
// in the context; the peer sets its callbacks (peer.TransferPeer) before
// the open returns. From then on every transfer posted on the main
// endpoint with a *peer.TransferOp context is the peer's: its completion,
// successful or not, goes to the peer's Complete or CompErr (with the main
// *Endpoint as ep and TransferOp.Context as the entry's context) and never
// to the main endpoint's CQs. Everything else on the main endpoint
// completes as usual. Counters bound to the main endpoint count the
// peer's transfers too.

// OpenTransferEndpoint opens an endpoint of a provider that asks for
// FI_PEER_TRANSFER (fi_endpoint with the mode bit and a
// fi_peer_transfer_context): info must have ModePeerTransfer in Mode;
// ctx.EP must be an *Endpoint of another domain (the main provider's),
// not yet enabled, and not linked to another peer. The domain's provider
// must implement transfer imports and set ctx.Peer before it returns. The
// main endpoint cannot be closed before the returned endpoint (ErrBusy).
// Errors (wrapped in *OpError naming fi_endpoint): ErrInval for a nil
// info or context, a bad ctx.EP, info without ModePeerTransfer, a
// provider that does not import transfers (fi_peer(3): a provider that
// does not support a peer object fails with -FI_EINVAL) or a peer that
// left ctx.Peer nil; ErrClosed for a closed domain or main endpoint; the
// provider's own error when it cannot meet ctx.Info's restrictions.
func (d *Domain) OpenTransferEndpoint(info *Info, ctx *peer.TransferContext) (*Endpoint, error) {
	if d == nil {
		return nil, ErrInval
	}
	const op = "fi_endpoint"
	prov := d.prov.Name()
	if info == nil || info.EPAttr == nil || info.Mode&ModePeerTransfer == 0 || ctx == nil {
		return nil, opErr(op, prov, ErrInval)
	}
	main, ok := ctx.EP.(*Endpoint)
	if !ok || main == nil || main.dom == d || main.parent != nil || main.sep != nil {
		return nil, opErr(op, prov, ErrInval)
	}
	td, ok := d.d.(provider.TransferDomain)
	if !ok {
		return nil, opErr(op, prov, ErrInval)
	}
	main.mu.Lock()
	defer main.mu.Unlock()
	if err := main.lc.hold(); err != nil {
		return nil, opErr(op, prov, err)
	}
	if main.enabled.Load() || main.xfer != nil {
		main.lc.release()
		return nil, opErr(op, prov, ErrInval)
	}
	if err := d.lc.hold(); err != nil {
		main.lc.release()
		return nil, opErr(op, prov, err)
	}
	ci := info.Dup()
	pctx := *ctx
	pctx.Peer = nil
	pe, err := td.TransferEndpoint(ci.Dup(), &pctx)
	if err == nil && pctx.Peer == nil {
		pe.Close()
		err = ErrInval
	}
	if err != nil {
		d.lc.release()
		main.lc.release()
		return nil, opErr(op, prov, err)
	}
	ctx.Peer = pctx.Peer
	main.xfer = pctx.Peer
	ep := newEndpoint(d, ci, pe)
	ep.xferMain = main
	return ep, nil
}

// xferWrap returns the CQ owner the provider of a main endpoint writes
// to: o itself, or, for an endpoint linked to a transfer peer, o behind a
// router that hands the peer's transfers (*peer.TransferOp contexts) to
// the peer. The router keeps o's reservations (provider.CQReserver).
func (e *Endpoint) xferWrap(o provider.CQOwner) provider.CQOwner {
	if e.xfer == nil || o == nil {
		return o
	}
	x := xferCQ{o: o, tp: e.xfer, ep: e}
	if r, ok := o.(provider.CQReserver); ok {
		return &xferCQRes{xferCQ: x, r: r}
	}
	return &x
}

// xferCQ routes completions: a peer's transfer to its TransferPeer,
// anything else to the endpoint's CQ.
type xferCQ struct {
	o  provider.CQOwner
	tp provider.TransferPeer
	ep *Endpoint
}

func (x *xferCQ) complete(op *provider.TransferOp, flags Flags, length uint64, buf []byte, data, tag uint64,
	src Addr) error {
	e := CQEntry{OpContext: op.Context, Flags: flags, Len: length, Buf: buf, Data: data, Tag: tag}
	return x.tp.Complete(x.ep, &e, src)
}

func (x *xferCQ) compErr(op *provider.TransferOp, ee *CQErrEntry) error {
	c := *ee
	c.OpContext = op.Context
	return x.tp.CompErr(x.ep, &c)
}

// Write implements provider.CQOwner.
func (x *xferCQ) Write(ctx any, flags Flags, length uint64, buf []byte, data, tag uint64, src Addr) error {
	if op, ok := ctx.(*provider.TransferOp); ok {
		return x.complete(op, flags, length, buf, data, tag, src)
	}
	return x.o.Write(ctx, flags, length, buf, data, tag, src)
}

// WriteErr implements provider.CQOwner.
func (x *xferCQ) WriteErr(ee *CQErrEntry) error {
	if op, ok := ee.OpContext.(*provider.TransferOp); ok {
		return x.compErr(op, ee)
	}
	return x.o.WriteErr(ee)
}

// xferCQRes is xferCQ over a CQ that takes reservations: a peer's
// transfer reserves room like any other (the provider cannot tell them
// apart before it completes) and gives it back when its completion goes
// to the peer.
type xferCQRes struct {
	xferCQ
	r provider.CQReserver
}

// Reserve implements provider.CQReserver.
func (x *xferCQRes) Reserve() bool { return x.r.Reserve() }

// Unreserve implements provider.CQReserver.
func (x *xferCQRes) Unreserve() { x.r.Unreserve() }

// Full implements provider.CQReserver.
func (x *xferCQRes) Full() bool { return x.r.Full() }

// WriteReserved implements provider.CQReserver.
func (x *xferCQRes) WriteReserved(ctx any, flags Flags, length uint64, buf []byte, data, tag uint64, src Addr) error {
	if op, ok := ctx.(*provider.TransferOp); ok {
		x.r.Unreserve()
		return x.complete(op, flags, length, buf, data, tag, src)
	}
	return x.r.WriteReserved(ctx, flags, length, buf, data, tag, src)
}

// WriteErrReserved implements provider.CQReserver.
func (x *xferCQRes) WriteErrReserved(ee *CQErrEntry) error {
	if op, ok := ee.OpContext.(*provider.TransferOp); ok {
		x.r.Unreserve()
		return x.compErr(op, ee)
	}
	return x.r.WriteErrReserved(ee)
}

// NotifyRoom implements provider.RoomNotifier when the CQ does.
func (x *xferCQRes) NotifyRoom(kick chan<- struct{}) bool {
	if n, ok := x.r.(provider.RoomNotifier); ok {
		return n.NotifyRoom(kick)
	}
	return false
}
