package fabric

import (
	"github.com/gofabric/fabric/peer"
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
