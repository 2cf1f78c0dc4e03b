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
//	struct fi_peer_av_context (FI_PEER)        AVContext, fabric.AVAttr{Flags: FI_PEER, Peer: &ctx}
//	fi_ops_av_set_owner.members                AVSetOwner.Members
//	struct fi_peer_av_set_context              AVSetContext, fabric.AVSetAttr{Peer: &ctx}
//	fi_ops_transfer_peer.complete / comperr    TransferPeer.Complete / CompErr
//	struct fi_peer_transfer_context            TransferContext, fabric.Domain.OpenTransferEndpoint
//	struct fi_peer_cq_context (FI_PEER)        fabric.CQAttr{Flags: FI_PEER, Peer: owner}
//	struct fi_peer_cntr_context                fabric.CntrAttr{Flags: FI_PEER, Peer: owner}
//	struct fi_peer_srx_context                 fabric.Domain.OpenSRX(attr, &fabric.PeerSRX{Owner: owner})
//	struct fi_peer_eq_context (FI_PEER)        EQContext, fabric.EQAttr{Flags: FI_PEER, Peer: &ctx}
//	struct fi_peer_domain_context              DomainContext
package peer

import "github.com/gofabric/fabric/provider"

// The interfaces below are defined in package provider, the leaf every
// package of this module imports, and are aliased here, where users of
// fi_peer(3) look for them; their methods are listed on each alias.

// CQOwner is fi_ops_cq_owner: how a peer writes completions into a CQ it
// does not own (fabric.CQ.Owner returns one; fabric.CQAttr.Peer takes
// one). Methods:
//
//	Write(ctx any, flags Flags, length uint64, buf []byte, data, tag uint64, src Addr) error
//	    adds a successful completion; buf is where the data was placed (may
//	    be nil), src the source address or AddrNotAvail.
//	WriteErr(e *CQErrEntry) error
//	    adds an error completion; e is copied.
type CQOwner = provider.CQOwner

// CQReserver is an optional CQOwner extension (no fi_peer(3) counterpart)
// through which peers keep the promise of FI_RM_ENABLED that no completion
// is lost: they reserve room before posting and refuse with FI_EAGAIN when
// there is none. An imported owner CQ (FI_PEER) that does not implement it
// receives plain Write/WriteErr calls, without reservations, however full
// it is: keeping every entry is then the owner's business (libfabric's
// util CQ keeps an overflow list; a CQ of this module opened in a domain
// with resource management keeps entries beyond its size). Methods, beyond
// CQOwner's: Reserve() bool (take room for one completion; false when
// full), Unreserve() (give it back), WriteReserved and WriteErrReserved
// (Write and WriteErr into reserved room) and Full() bool.
type CQReserver = provider.CQReserver

// CntrOwner is fi_ops_cntr_owner: how a peer bumps a counter it does not
// own (fabric.Cntr.Owner returns one; fabric.CntrAttr.Peer takes one).
// Methods: Inc() adds one to the success value, IncErr() to the error
// value.
type CntrOwner = provider.CntrOwner

// SRXOwner is fi_ops_srx_owner: how a peer matches incoming messages
// against the receives posted to a shared receive context it does not own
// (fabric.SRX.Owner returns one; fabric.PeerSRX carries one). Methods:
//
//	GetMsg(addr Addr, size uint64) (*RxEntry, error)
//	GetTag(addr Addr, size, tag uint64) (*RxEntry, error)
//	    the posted receive matching a message of size bytes from addr; with
//	    no match, ENOENT and an entry the peer may queue:
//	QueueMsg(e *RxEntry) error / QueueTag(e *RxEntry) error
//	    queue an unexpected message (e.Peer and e.PeerContext set);
//	ForeachUnspecAddr(getAddr func(e *RxEntry) Addr)
//	    resolve the source of queued entries whose address was unknown;
//	FreeEntry(e *RxEntry)
//	    return an entry to the owner once the peer is done.
type SRXOwner = provider.SRXOwner

// SRXPeer is fi_ops_srx_peer: what an SRX owner calls on the peer that
// queued an unexpected message. Methods: StartMsg / StartTag(e *RxEntry)
// error (a receive now matches e: deliver and complete it), DiscardMsg /
// DiscardTag(e *RxEntry) error (drop it without a completion).
type SRXPeer = provider.SRXPeer

// RxEntry is fi_peer_rx_entry: a receive shared between an SRX owner and
// the peer that delivers into it. Fields: Addr (source), MsgSize (size of
// the incoming message), Tag, Ignore, CQData (remote CQ data of an
// unexpected message), Flags (FI_MSG|FI_RECV or FI_TAGGED|FI_RECV, plus
// FI_MULTI_RECV, FI_REMOTE_CQ_DATA ...), Context (the application's
// context of the posted receive), IOV (where to place the data), Desc
// (the MRDesc of each IOV element, or nil; an element may be nil),
// PeerContext and OwnerContext (each side's state), Peer (the peer's
// SRXPeer, set before QueueMsg/QueueTag) and Complete (false when no
// successful completion is to be written, FI_SELECTIVE_COMPLETION).
// Methods: IOVLen() uint64 (the total size of IOV) and SetBuf(b []byte)
// (point IOV at the single buffer b without allocating).
type RxEntry = provider.RxEntry

// EQOwner is the owner side of a peer EQ: the peer writes events into it
// with Write(e *EQEntry) error and WriteErr(e *EQErrEntry) error.
type EQOwner = provider.EQWriter

// Vocabulary of the interfaces above, the same types as package fabric's
// (fabric.Addr, fabric.Flags ...).
type (
	// Addr is fi_addr_t, an index into an address vector (fabric.Addr).
	Addr = provider.Addr
	// Flags are operation and completion flags (FI_SEND, FI_RECV ...;
	// fabric.Flags).
	Flags = provider.Flags
	// AVType is an address vector type (FI_AV_MAP, FI_AV_TABLE;
	// fabric.AVType).
	AVType = provider.AVType
	// MRDesc is a memory descriptor (fabric.MRDesc), as RxEntry.Desc holds
	// them.
	MRDesc = provider.MRDesc
	// CQEntry is one completion (fabric.CQEntry).
	CQEntry = provider.CQEntry
	// CQErrEntry is one error completion (fabric.CQErrEntry).
	CQErrEntry = provider.CQErrEntry
	// EQEntry is one event (fabric.EQEntry).
	EQEntry = provider.EQEntry
	// EQErrEntry is one error event (fabric.EQErrEntry).
	EQErrEntry = provider.EQErrEntry
)

// AddrFormat is an address format (FI_SOCKADDR_IN, FI_ADDR_STR ...;
// fabric.AddrFormat).
type AddrFormat = provider.AddrFormat

// AVAttr is the subset of fi_av_attr an AV owner reports through Query.
type AVAttr struct {
	Type      AVType
	Count     uint64 // addresses currently inserted
	RxCtxBits int
	Flags     Flags
}

// AVOwner is fi_ops_av_owner: how a peer queries an address vector owned
// by another provider.
type AVOwner interface {
	// Query returns the AV's current attributes.
	Query() (AVAttr, error)
	// EPAddr returns the fi_addr of a local endpoint's address, or
	// AddrNotAvail if it has not been inserted.
	EPAddr(ep Named) Addr
}

// Named is a local endpoint as AVOwner.EPAddr takes it (the fid_ep of
// fi_ops_av_owner.ep_addr): anything that reports its address, such as a
// *fabric.Endpoint or a provider's endpoint.
type Named interface {
	Name() ([]byte, error)
}

// AVAddrOwner is an optional AVOwner extension (fi_peer(3) has no
// counterpart) through which a peer AV (AVContext) makes the owner's
// fi_addr values valid for the peer's own transfers: the peer's AV keeps,
// at each of the owner's fi_addrs, the peer's address of that same remote
// (see AVContext.Addr), and follows the owner's inserts and removals. An
// owner without it can only be queried (the offload model of fi_peer(3),
// where the peer sends through the owner: FI_PEER_TRANSFER).
// fabric.AV implements it, and so does the AV a provider is handed at
// Enable (provider.Resources.AV): a composite provider (lnx) passes its
// endpoint's AV, as it sees it, to the AVs of the providers it drives,
// with AVContext.Addr picking each one's part of its addresses, and every
// remote keeps one fi_addr across all paths.
type AVAddrOwner interface {
	AVOwner
	// ForeachAddr calls fn for every address in the AV, in fi_addr order,
	// with the address as inserted (fn must neither keep nor modify it)
	// and the user id given with FI_AV_USER_ID (hasUserID false when there
	// is none). fn must not call into the AV.
	ForeachAddr(fn func(fiAddr Addr, addr []byte, userID Addr, hasUserID bool))
	// OnChange registers fn, called (without the AV's locks held) after
	// every insert or removal that changed the AV; cancel unregisters it.
	OnChange(fn func()) (cancel func())
}

// AVAddrChanges is an optional AVAddrOwner extension through which a peer
// AV follows the owner one changed address at a time: without it, the
// peer AV copies the whole owner at every change, so that n inserts of one
// address cost O(n²). fabric.AV implements it, and so does the AV a
// provider is handed at Enable.
type AVAddrChanges interface {
	AVAddrOwner
	// OnChangeAt is OnChange whose fn is told the fi_addrs whose entries
	// the change inserted or removed (fn must not keep the slice).
	OnChangeAt(fn func(changed []Addr)) (cancel func())
	// AddrAt calls fn with the address at fiAddr as inserted (fn must
	// neither keep nor modify it, nor call into the AV) and its user id
	// (hasUserID false without one), and reports whether fiAddr holds an
	// address.
	AddrAt(fiAddr Addr, fn func(addr []byte, userID Addr, hasUserID bool)) bool
}

// AVContext is fi_peer_av_context: the owner's AV imported by a peer's
// AV (fabric.AVAttr.Peer). The peer's AV then takes its type and
// rx_ctx_bits from the owner's (AVOwner.Query) and uses the owner's
// fi_addr values: an fi_addr the owner returned from an insert names the
// same remote in the peer's transfers, and the sources of the peer's
// completions are the owner's fi_addrs (or its FI_AV_USER_ID ids).
// Addresses are inserted and removed through the owner only.
type AVContext struct {
	// AV is the owner's AV; it must stay open until the peer's AV is
	// closed (a fabric.AV cannot be closed before: ErrBusy). Required.
	AV AVOwner
	// Addr converts an address stored in the owner's AV into the address,
	// in the peer's format, of the same remote: for a composite whose AV
	// holds addresses with one part per path, the peer's part; nil when
	// the remote has no address the peer can reach (the peer's AV then
	// has no address at that fi_addr). The result may alias owner (it is
	// copied). Nil means the identity, for owner and peer of one address
	// format. Addr is called with the owner's AV locked for reading: it
	// must not call into the owner's AV.
	Addr func(owner []byte) []byte
}

// AVSetContext is fi_peer_av_set_context: the owner's AV set imported by
// a peer's AV set (fabric.AVSetAttr.Peer). The peer's set has the
// owner's members (AVSetOwner.Members), read whenever they are asked for.
type AVSetContext struct {
	// Set is the owner's AV set; it must stay open until the peer's set is
	// closed (a fabric.AVSet cannot be closed before: ErrBusy). Required.
	Set AVSetOwner
}

// AVSetOwner is fi_ops_av_set_owner.
type AVSetOwner interface {
	// Members copies the set's addresses into addrs and returns how many
	// there are; if addrs is too short it returns the needed count and
	// ETOOSMALL.
	Members(addrs []Addr) (int, error)
}

// TransferPeer is fi_ops_transfer_peer: how the main provider reports the
// completion of transfers a peer provider initiated over the main
// provider's endpoint (FI_PEER_TRANSFER). Methods: Complete(ep any, e
// *CQEntry, src Addr) error (a successful completion; src the source or
// AddrNotAvail) and CompErr(ep any, e *CQErrEntry) error; ep is the main
// provider's *fabric.Endpoint, e.OpContext the peer's context
// (TransferOp.Context). They are called from the main provider's progress
// and may post further transfers, write to the owner's CQ or EQ and
// register memory.
type TransferPeer = provider.TransferPeer

// TransferOp is the operation context with which a peer provider posts a
// transfer on the main provider's endpoint (TransferContext.EP): the
// transfer's completion goes to the peer's TransferPeer, with Context as
// its context, not to the endpoint's CQ. (libfabric 1.17 names the bit,
// FI_PEER_TRANSFER, but no call carries it; a context of this type is how
// the main endpoint tells the peer's transfers from its own.) Field:
// Context any.
type TransferOp = provider.TransferOp

// TransferContext is fi_peer_transfer_context, given to
// fabric.Domain.OpenTransferEndpoint. Fields: Info *fabric.Info (the main
// provider's attributes, optional), EP any (the main provider's
// *fabric.Endpoint, not yet enabled) and Peer TransferPeer (set by the
// peer provider before the open returns).
type TransferContext = provider.TransferContext

// EQContext is fi_peer_eq_context: the owner's EQ imported by a peer's
// EQ (fabric.EQAttr.Peer, with FI_PEER): the events of the objects bound
// to the peer's EQ are written to EQ (fabric.EQ.Owner returns one).
type EQContext struct {
	// EQ is the owner's EQ; it must stay open until the peer's EQ is
	// closed (a fabric.EQ cannot be closed before: ErrBusy). Required.
	EQ EQOwner
}

// DomainContext is fi_peer_domain_context: the owner's domain imported by
// a peer; Domain is the owner's *fabric.Domain.
type DomainContext struct {
	Domain any
}

// Members is a helper implementing AVSetOwner over a fixed slice.
type Members []Addr

// Members implements AVSetOwner.
func (m Members) Members(addrs []Addr) (int, error) {
	if len(addrs) < len(m) {
		return len(m), provider.ETOOSMALL
	}
	return copy(addrs, m), nil
}
