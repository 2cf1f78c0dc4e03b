package fabric

import (
	"github.com/gofabric/fabric/internal/av"
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// The root objects implement the owner side of fi_peer(3) where the owner
// has something to offer a peer: an AV answers query/ep_addr, a CQ and a
// counter are CQ and counter owners (see CQ.Owner, Cntr.Owner), and a domain
// shares its memory registrations with a peer domain (OpenPeerDomain).

var _ peer.AVOwner = (*AV)(nil)

// Query returns the AV's current attributes (fi_ops_av_owner.query).
func (a *AV) Query() (peer.AVAttr, error) {
	if a == nil {
		return peer.AVAttr{}, ErrInval
	}
	if a.lc.isClosed() {
		return peer.AVAttr{}, ErrClosed
	}
	return peer.AVAttr{Type: a.a.Type(), Count: uint64(a.a.Len()), RxCtxBits: a.a.RxCtxBits(),
		Flags: a.attr.Flags}, nil
}

// EPAddr returns the fi_addr under which a local endpoint's address was
// inserted in this AV, or AddrNotAvail (fi_ops_av_owner.ep_addr). ep is
// typically an *Endpoint; anything reporting its address will do (a peer
// provider passes its own endpoint). A nil AV or endpoint, or one whose
// address cannot be read, gives AddrNotAvail.
func (a *AV) EPAddr(ep peer.Named) Addr {
	if a == nil || ep == nil {
		return AddrNotAvail
	}
	name, err := ep.Name()
	if err != nil {
		return AddrNotAvail
	}
	return a.a.ReverseIndex(name)
}

// Owner returns the CQ's owner operations (fi_ops_cq_owner), through which
// a peer provider writes completions into this CQ; pass it as CQAttr.Peer
// when opening the peer's CQ with FlagPeer. It returns nil for a nil *CQ.
func (c *CQ) Owner() peer.CQOwner {
	if c == nil {
		return nil
	}
	return c.owner()
}

// Owner returns the counter's owner operations (fi_ops_cntr_owner), for
// CntrAttr.Peer. It returns nil for a nil *Cntr.
func (c *Cntr) Owner() peer.CntrOwner {
	if c == nil {
		return nil
	}
	return c.owner()
}

// Owner returns the SRX's owner operations (fi_ops_srx_owner), for
// importing this receive queue into a peer's domain with
// Domain.OpenSRX(&RxAttr{OpFlags: FlagPeer}, &PeerSRX{Owner: s.Owner()}).
// It returns nil for a nil *SRX.
func (s *SRX) Owner() peer.SRXOwner {
	if s == nil {
		return nil
	}
	return s.owner()
}

// OpenPeerDomain opens a domain of this fabric that imports the owner's
// domain (fi_domain2 with FI_PEER and fi_peer_domain_context): memory
// registered with either domain is one registration, so remote accesses
// arriving at the peer's endpoints are checked against the owner's keys.
// ctx.Domain must be an open *Domain.
func (f *Fabric) OpenPeerDomain(info *Info, ctx *peer.DomainContext) (*Domain, error) {
	if f == nil {
		return nil, ErrInval
	}
	if ctx == nil {
		return nil, opErr("fi_domain2", f.prov.Name(), ErrInval)
	}
	owner, ok := ctx.Domain.(*Domain)
	if !ok || owner == nil {
		return nil, opErr("fi_domain2", f.prov.Name(), ErrInval)
	}
	if err := owner.lc.hold(); err != nil {
		return nil, opErr("fi_domain2", f.prov.Name(), err)
	}
	d, err := f.OpenDomain(info)
	if err != nil {
		owner.lc.release()
		return nil, err
	}
	d.ext.mr = owner.ext.mr
	d.peerOwner = owner
	return d, nil
}

var _ peer.AVAddrChanges = (*AV)(nil)

// ForeachAddr calls fn for every address in the AV, in fi_addr order,
// with the address as inserted (fn must neither keep nor modify it) and
// its FI_AV_USER_ID id (hasUserID false without one); fn must not call
// into the AV. It is the peer.AVAddrOwner extension through which a peer
// AV follows this one; nothing is called for a nil or closed AV.
func (a *AV) ForeachAddr(fn func(fiAddr Addr, addr []byte, userID Addr, hasUserID bool)) {
	if a == nil || fn == nil || a.lc.isClosed() {
		return
	}
	a.a.Foreach(fn)
}

// OnChange registers fn, called without the AV's locks held after every
// insert that added an address and every removal (peer.AVAddrOwner);
// cancel unregisters it. For a nil AV or a nil fn it registers nothing.
func (a *AV) OnChange(fn func()) (cancel func()) {
	if a == nil || fn == nil {
		return func() {}
	}
	return a.a.OnChange(fn)
}

// OnChangeAt is OnChange whose fn is told the fi_addrs whose entries the
// change inserted or removed (peer.AVAddrChanges); fn must not keep the
// slice. For a nil AV or a nil fn it registers nothing.
func (a *AV) OnChangeAt(fn func(changed []Addr)) (cancel func()) {
	if a == nil || fn == nil {
		return func() {}
	}
	return a.a.OnChangeAt(fn)
}

// AddrAt calls fn with the address at fiAddr as inserted and its
// FI_AV_USER_ID id (peer.AVAddrChanges), and reports whether there is
// one; fn must neither keep nor modify the address, nor call into the
// AV. It reports false for a nil or closed AV.
func (a *AV) AddrAt(fiAddr Addr, fn func(addr []byte, userID Addr, hasUserID bool)) bool {
	if a == nil || fn == nil || a.lc.isClosed() {
		return false
	}
	return a.a.AddrAt(fiAddr, fn)
}

// writable is the check of the calls that change the AV: ErrClosed, and
// ErrNoSys on an FI_PEER import (addresses are inserted and removed
// through the owner), wrapped in *OpError naming op.
func (a *AV) writable(op string) error {
	if a.lc.isClosed() {
		return a.err(op, ErrClosed)
	}
	if a.imp != nil {
		return a.err(op, ErrNoSys)
	}
	return nil
}

// openPeerAV opens an AV importing at.Peer (fi_av_open with FI_PEER and
// fi_peer_av_context); attr is the caller's, for the type written back.
func (d *Domain) openPeerAV(at AVAttr, attr *AVAttr) (*AV, error) {
	prov := d.prov.Name()
	ctx := *at.Peer
	oattr, err := ctx.AV.Query()
	if err != nil {
		return nil, opErr("fi_av_open", prov, err)
	}
	if at.Type != AVUnspec && at.Type != oattr.Type || at.RxCtxBits != 0 && at.RxCtxBits != oattr.RxCtxBits {
		return nil, opErr("fi_av_open", prov, ErrInval)
	}
	at.Type, at.RxCtxBits = oattr.Type, oattr.RxCtxBits
	var h provider.AddrHandler
	h, _ = d.prov.(provider.AddrHandler)
	m, err := av.New(av.Config{Type: at.Type, Count: at.Count, RxCtxBits: at.RxCtxBits,
		Format: d.info.AddrFormat, Handler: h})
	if err != nil {
		return nil, opErr("fi_av_open", prov, err)
	}
	imp := &avImport{ctx: ctx, cancel: func() {}}
	if o, ok := ctx.AV.(*AV); ok {
		if o == nil {
			return nil, opErr("fi_av_open", prov, ErrInval)
		}
		if err := o.lc.hold(); err != nil {
			return nil, opErr("fi_av_open", prov, err)
		}
		imp.owner = o
	}
	if err := d.lc.hold(); err != nil {
		if imp.owner != nil {
			imp.owner.lc.release()
		}
		return nil, opErr("fi_av_open", prov, err)
	}
	a := &AV{dom: d, attr: at, a: m, imp: imp}
	if src, ok := ctx.AV.(peer.AVAddrChanges); ok {
		// One changed address at a time; registered before the first
		// copy, so that no change is missed.
		imp.cancel = src.OnChangeAt(func(changed []Addr) { a.followAt(src, changed) })
		a.follow(src)
	} else if src, ok := ctx.AV.(peer.AVAddrOwner); ok {
		imp.cancel = src.OnChange(func() { a.follow(src) })
		a.follow(src)
	}
	if attr != nil {
		attr.Type = at.Type
	}
	return a, nil
}

// follow copies the owner's addresses, converted by the context's Addr,
// into the import at the owner's fi_addrs. Calls are serialized, so that
// the last one to run, which started after the last change, leaves the
// owner's latest state.
func (a *AV) follow(src peer.AVAddrOwner) {
	imp := a.imp
	imp.mu.Lock()
	defer imp.mu.Unlock()
	var ents []av.Entry
	src.ForeachAddr(func(fiAddr Addr, addr []byte, user Addr, hasUser bool) {
		if imp.ctx.Addr != nil {
			addr = imp.ctx.Addr(addr)
		}
		if len(addr) == 0 {
			return
		}
		ents = append(ents, av.Entry{Index: fiAddr, Addr: append([]byte(nil), addr...), User: user, HasUser: hasUser})
	})
	_ = a.a.Mirror(ents) // EBADF after Close: nothing to follow
}

// followAt updates the import at the owner's fi_addrs changed: each
// takes the owner's current address there (converted by the context's
// Addr), or none. Each call reads the owner's state after its change, so
// that the last one leaves the latest state, as with follow.
func (a *AV) followAt(src peer.AVAddrChanges, changed []Addr) {
	imp := a.imp
	imp.mu.Lock()
	defer imp.mu.Unlock()
	var set []av.Entry
	var gone []Addr
	for _, fa := range changed {
		found := src.AddrAt(fa, func(addr []byte, user Addr, hasUser bool) {
			if imp.ctx.Addr != nil {
				addr = imp.ctx.Addr(addr)
			}
			if len(addr) == 0 {
				return
			}
			set = append(set, av.Entry{Index: fa, Addr: append([]byte(nil), addr...), User: user, HasUser: hasUser})
		})
		if !found || len(set) == 0 || set[len(set)-1].Index != fa {
			gone = append(gone, fa)
		}
	}
	_ = a.a.MirrorAt(set, gone) // EBADF after Close: nothing to follow
}

// Owner returns the EQ's owner operations, through which a peer provider
// writes events into this EQ (fi_peer(3) "PEER EQ"); pass it as
// peer.EQContext.EQ when opening the peer's EQ with FlagPeer. Writes
// through it are not subject to FlagWrite (they are the provider's
// events, not fi_eq_write). It returns nil for a nil *EQ.
func (e *EQ) Owner() peer.EQOwner {
	if e == nil {
		return nil
	}
	return eqOwner{e}
}

// eqOwner is EQ.Owner's answer: it names the EQ, so that an import holds
// it open.
type eqOwner struct{ e *EQ }

func (o eqOwner) Write(ev *EQEntry) error { return o.e.writer().Write(ev) }

func (o eqOwner) WriteErr(ev *EQErrEntry) error { return o.e.writer().WriteErr(ev) }

// openPeerEQ opens an EQ importing a.Peer.EQ (fi_eq_open with FI_PEER and
// fi_peer_eq_context).
func (f *Fabric) openPeerEQ(a EQAttr) (*EQ, error) {
	prov := f.prov.Name()
	if a.WaitSet != nil {
		return nil, opErr("fi_eq_open", prov, ErrInval)
	}
	e := &EQ{fab: f, attr: a, peer: a.Peer.EQ}
	if o, ok := a.Peer.EQ.(eqOwner); ok {
		if o.e == nil || o.e == e {
			return nil, opErr("fi_eq_open", prov, ErrInval)
		}
		if err := o.e.lc.hold(); err != nil {
			return nil, opErr("fi_eq_open", prov, err)
		}
		e.owner = o.e
	}
	if err := f.lc.hold(); err != nil {
		if e.owner != nil {
			e.owner.lc.release()
		}
		return nil, opErr("fi_eq_open", prov, err)
	}
	e.init(&f.lc, prov, nil)
	return e, nil
}
