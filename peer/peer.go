// Package peer holds the fi_peer(3) interfaces: how one provider (the
// owner) shares a completion queue, counter, shared receive context, address
// vector, AV set, event queue or domain with another provider (the peer).
//
// Every provider of this module reports completions through a CQOwner,
// bumps counters through a CntrOwner and matches receives through an
// SRXOwner, even when it owns those objects itself; importing another
// provider's objects (FI_PEER) therefore changes nothing in the provider.
//
// Mapping to fi_peer(3):
//
//	fi_ops_cq_owner.write / writeerr           CQOwner.Write / WriteErr
//	fi_ops_cntr_owner.inc / incerr             CntrOwner.Inc / IncErr
//	fi_ops_srx_owner.get_msg / get_tag         SRXOwner.GetMsg / GetTag
//	fi_ops_srx_owner.queue_msg / queue_tag     SRXOwner.QueueMsg / QueueTag
//	fi_ops_srx_owner.foreach_unspec_addr       SRXOwner.ForeachUnspecAddr
//	fi_ops_srx_owner.free_entry                SRXOwner.FreeEntry
//	fi_ops_srx_peer.start_msg / start_tag      SRXPeer.StartMsg / StartTag
//	fi_ops_srx_peer.discard_msg / discard_tag  SRXPeer.DiscardMsg / DiscardTag
//	struct fi_peer_rx_entry                    RxEntry
//	fi_ops_av_owner.query / ep_addr            AVOwner.Query / EPAddr
//	fi_ops_av_set_owner.members                AVSetOwner.Members
//	fi_ops_transfer_peer.complete / comperr    TransferPeer.Complete / CompErr
//	struct fi_peer_cq_context (FI_PEER)        fabric.CQAttr{Flags: FI_PEER, Peer: owner}
//	struct fi_peer_cntr_context                fabric.CntrAttr{Flags: FI_PEER, Peer: owner}
//	struct fi_peer_srx_context                 fabric.Domain.OpenSRX(attr, &fabric.PeerSRX{Owner: owner})
//	struct fi_peer_eq_context                  EQContext
//	struct fi_peer_domain_context              DomainContext
package peer

import "github.com/gofabric/fabric/provider"

// CQOwner is fi_ops_cq_owner.
type CQOwner = provider.CQOwner

// CQReserver is an optional CQOwner extension (no fi_peer(3) counterpart)
// through which peers keep the promise of FI_RM_ENABLED that no completion
// is lost: they reserve room before posting and refuse with FI_EAGAIN when
// there is none. An imported owner CQ (FI_PEER) that does not implement it
// receives plain Write/WriteErr calls, without reservations, however full
// it is: keeping every entry is then the owner's business (libfabric's
// util CQ keeps an overflow list; a CQ of this module opened in a domain
// with resource management keeps entries beyond its size).
type CQReserver = provider.CQReserver

// CntrOwner is fi_ops_cntr_owner.
type CntrOwner = provider.CntrOwner

// SRXOwner is fi_ops_srx_owner.
type SRXOwner = provider.SRXOwner

// SRXPeer is fi_ops_srx_peer.
type SRXPeer = provider.SRXPeer

// RxEntry is fi_peer_rx_entry.
type RxEntry = provider.RxEntry

// EQOwner is the owner side of a peer EQ: the peer writes events into it.
type EQOwner = provider.EQWriter

// AVAttr is the subset of fi_av_attr an AV owner reports through Query.
type AVAttr struct {
	Type      provider.AVType
	Count     uint64 // addresses currently inserted
	RxCtxBits int
	Flags     provider.Flags
}

// AVOwner is fi_ops_av_owner: how a peer queries an address vector owned
// by another provider.
type AVOwner interface {
	// Query returns the AV's current attributes.
	Query() (AVAttr, error)
	// EPAddr returns the fi_addr of a local endpoint's address, or
	// AddrNotAvail if it has not been inserted.
	EPAddr(ep Named) provider.Addr
}

// Named is a local endpoint as AVOwner.EPAddr takes it (the fid_ep of
// fi_ops_av_owner.ep_addr): anything that reports its address, such as a
// *fabric.Endpoint or a provider's endpoint.
type Named interface {
	Name() ([]byte, error)
}

// AVSetOwner is fi_ops_av_set_owner.
type AVSetOwner interface {
	// Members copies the set's addresses into addrs and returns how many
	// there are; if addrs is too short it returns the needed count and
	// ETOOSMALL.
	Members(addrs []provider.Addr) (int, error)
}

// TransferPeer is fi_ops_transfer_peer: how the main provider reports the
// completion of transfers a peer initiated over it (FI_PEER_TRANSFER).
type TransferPeer interface {
	Complete(ep any, e *provider.CQEntry, src provider.Addr) error
	CompErr(ep any, e *provider.CQErrEntry) error
}

// EQContext is fi_peer_eq_context: the owner's EQ imported by a peer.
type EQContext struct {
	EQ EQOwner
}

// DomainContext is fi_peer_domain_context: the owner's domain imported by
// a peer; Domain is the owner's *fabric.Domain.
type DomainContext struct {
	Domain any
}

// Members is a helper implementing AVSetOwner over a fixed slice.
type Members []provider.Addr

// Members implements AVSetOwner.
func (m Members) Members(addrs []provider.Addr) (int, error) {
	if len(addrs) < len(m) {
		return len(m), provider.ETOOSMALL
	}
	return copy(addrs, m), nil
}
