package fabric

// Shared transmit contexts (fi_stx_context, fi_endpoint(3) "Shared
// Contexts"). The STX type and Domain.OpenSTX are in scalable.go; the
// rules for binding one are here.
//
// A shared transmit context is a transmit queue that several endpoints of
// one domain use; it is mostly opaque to the application. Operations are
// posted to the endpoints, not to the context, and complete in the CQs and
// counters bound to the endpoint that posted them (the context has none).
// An endpoint uses one when it is opened with EPAttr.TxCtxCnt set to
// SharedContext: it must then be bound to exactly one STX of its domain
// before Enable, and its transmit attributes must be a subset of the
// context's. The context's size (TxAttr.Size) is one queue for all the
// endpoints bound to it: at most that many of their transmit operations
// are outstanding at once, and a post beyond returns ErrAgain
// (provider.TxCredits), as a post beyond an endpoint's own tx size does.

// stxAttr returns the attributes an STX is asked for: a copy of attr, or
// the domain's transmit attributes when attr is nil.
func (d *Domain) stxAttr(attr *TxAttr) *TxAttr {
	var a TxAttr
	switch {
	case attr != nil:
		a = *attr
	case d.info.TxAttr != nil:
		a = *d.info.TxAttr
	}
	return &a
}

// Attr returns the attributes the provider granted the shared transmit
// context (for Domain.OpenSTX(nil), the domain's transmit attributes).
// Endpoints bound to it must use a subset of them.
func (x *STX) Attr() TxAttr {
	if x == nil {
		return TxAttr{}
	}
	return x.p.Attr()
}

func (x *STX) domain() *Domain { return x.dom }

// BindSTX binds a shared transmit context (fi_ep_bind with an STX). The
// endpoint must have been opened with EPAttr.TxCtxCnt SharedContext
// (ErrInval otherwise), the context must be of the endpoint's domain
// (ErrDomain), an endpoint binds one context only (ErrInval for a second
// bind), and its transmit attributes (Info.TxAttr) must be a subset of the
// context's Attr (ErrInval): capabilities, message and completion
// ordering, and an inject size, queue size and iov limits no larger. The
// context cannot be closed while the endpoint is open (ErrBusy). The
// endpoints bound to one context share its size: at most Attr().Size of
// their transmit operations are outstanding (posted and not yet
// completed) at once, beyond which a post returns ErrAgain. An
// endpoint opened for a shared transmit context and enabled without one
// gets ErrNoCQ. Errors are wrapped in *OpError, as Bind's.
func (ep *Endpoint) BindSTX(x *STX) error { return ep.Bind(x, 0) }

// bindSTX is Bind with an STX; BindSTX gives the rules.
func (e *Endpoint) bindSTX(x *STX, flags Flags) error {
	if x == nil {
		return ErrInval
	}
	if flags != 0 {
		return ErrBadFlags
	}
	if x.domain() != e.dom {
		return ErrDomain
	}
	if e.stxObj != nil || e.info.EPAttr.TxCtxCnt != SharedContext {
		return ErrInval
	}
	if x.lc.isClosed() {
		return ErrClosed
	}
	if !txSubset(e.info.TxAttr, x.p.Attr()) {
		return ErrInval
	}
	if err := x.lc.hold(); err != nil {
		return err
	}
	e.stxObj = x
	return nil
}

// unbindSTX releases the endpoint's shared transmit context, if any, when
// the endpoint closes.
func (e *Endpoint) unbindSTX() {
	if e.stxObj != nil {
		e.stxObj.lc.release()
	}
}

// needSTX reports whether Enable must refuse the endpoint: opened for a
// shared transmit context (TxCtxCnt SharedContext) with none bound. Enable
// then returns ErrNoCQ, the error fi_endpoint(3) gives for an endpoint not
// configured with a queue it needs: the shared context is its transmit
// queue (fi_errno has no transmit counterpart of FI_ENORX, which a missing
// shared receive context gets).
func (e *Endpoint) needSTX() bool {
	return e.info.EPAttr.TxCtxCnt == SharedContext && e.stxObj == nil
}

// txSubset reports whether transmit attributes ep are a subset of x, the
// attributes of a shared transmit context (fi_endpoint(3) fi_stx_context).
// A nil ep (no transmit attributes) is.
func txSubset(ep *TxAttr, x TxAttr) bool {
	if ep == nil {
		return true
	}
	return ep.Caps&^x.Caps == 0 &&
		ep.MsgOrder&^x.MsgOrder == 0 &&
		ep.CompOrder&^x.CompOrder == 0 &&
		ep.InjectSize <= x.InjectSize &&
		ep.Size <= x.Size &&
		ep.IOVLimit <= x.IOVLimit &&
		ep.RMAIOVLimit <= x.RMAIOVLimit
}
