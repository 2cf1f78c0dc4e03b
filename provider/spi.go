package provider

import "time"

// ---- fi_peer(3) owner/peer operations (re-exported by package peer) ----

// CQOwner is fi_ops_cq_owner: how a provider writes completions into a CQ it
// does not own (or its own default CQ). Write and WriteErr are goroutine-safe
// and wake waiters. A full CQ records an overrun (the CQ reports
// FI_EOVERRUN once its valid entries are drained), unless it was opened
// with resource management (see CQReserver).
type CQOwner interface {
	// Write adds a successful completion. buf is where the data was placed
	// (may be nil); src is the source address or AddrNotAvail.
	Write(ctx any, flags Flags, length uint64, buf []byte, data, tag uint64, src Addr) error
	// WriteErr adds an error completion; e is copied.
	WriteErr(e *CQErrEntry) error
}

// CntrOwner is fi_ops_cntr_owner: how a provider bumps a counter.
type CntrOwner interface {
	Inc()
	IncErr()
}

// RxEntry is fi_peer_rx_entry: a receive shared between the SRX owner and
// the peer provider that delivers into it.
type RxEntry struct {
	Addr    Addr     // source (for directed receive / FI_SOURCE), or AddrUnspec
	MsgSize uint64   // size of the incoming message, set by get_msg/get_tag
	Tag     uint64   // tag of the message (tagged)
	Ignore  uint64   // ignore bits of the posted receive (owner use)
	CQData  uint64   // remote CQ data of an unexpected message (set by the peer)
	Flags   Flags    // FI_MSG|FI_RECV or FI_TAGGED|FI_RECV, plus FI_MULTI_RECV, FI_REMOTE_CQ_DATA ...
	Context any      // application context of the posted receive
	IOV     [][]byte // where to place the data (the full size of the posted receive)
	// Desc holds the memory descriptors of IOV (fi_peer_rx_entry.desc):
	// nil, or one per IOV element (an element may be nil).
	Desc []MRDesc
	// PeerContext is the peer provider's state for an unexpected message.
	PeerContext any
	// OwnerContext is the owner's state.
	OwnerContext any
	// Peer is the peer provider's operations for this entry (set by the peer
	// before QueueMsg/QueueTag).
	Peer SRXPeer
	// Complete reports whether a successful completion is to be written
	// (false under FI_SELECTIVE_COMPLETION without FI_COMPLETION).
	Complete bool

	iov1 [1][]byte
}

// SetBuf points the entry's IOV at a single buffer without allocating.
func (e *RxEntry) SetBuf(b []byte) {
	e.iov1[0] = b
	e.IOV = e.iov1[:]
}

// IOVLen returns the total size of e.IOV.
func (e *RxEntry) IOVLen() uint64 {
	var n uint64
	for _, b := range e.IOV {
		n += uint64(len(b))
	}
	return n
}

// SRXOwner is fi_ops_srx_owner: the receive queue a provider matches
// incoming messages against.
type SRXOwner interface {
	// GetMsg returns the posted receive matching an untagged message of
	// size bytes from addr. With no match it returns ENOENT and an entry the
	// peer may queue with QueueMsg.
	GetMsg(addr Addr, size uint64) (*RxEntry, error)
	// GetTag is GetMsg for tagged messages.
	GetTag(addr Addr, size uint64, tag uint64) (*RxEntry, error)
	// QueueMsg queues an unexpected untagged message; e.Peer and
	// e.PeerContext must be set.
	QueueMsg(e *RxEntry) error
	// QueueTag queues an unexpected tagged message.
	QueueTag(e *RxEntry) error
	// ForeachUnspecAddr asks the owner to resolve the source of queued
	// entries whose address was unknown. The owner calls getAddr on every
	// such entry, whoever queued it (other endpoints, other providers):
	// getAddr answers AddrUnspec for an entry whose Peer is not the
	// caller's, leaving it for its own peer to resolve.
	ForeachUnspecAddr(getAddr func(e *RxEntry) Addr)
	// FreeEntry returns an entry to the owner once the peer is done.
	FreeEntry(e *RxEntry)
}

// SRXPeer is fi_ops_srx_peer: the operations an owner calls on the peer
// that queued an unexpected message.
type SRXPeer interface {
	// StartMsg: a receive now matches the queued message e (e.IOV, e.Context
	// and e.Flags are updated); deliver it and complete.
	StartMsg(e *RxEntry) error
	StartTag(e *RxEntry) error
	// DiscardMsg: drop the queued message, without a completion.
	DiscardMsg(e *RxEntry) error
	DiscardTag(e *RxEntry) error
}

// EQWriter is how a provider reports events (CM events) to an event queue.
type EQWriter interface {
	Write(e *EQEntry) error
	WriteErr(e *EQErrEntry) error
}

// AVView is the provider's view of an address vector bound to an endpoint.
type AVView interface {
	// Lookup returns the address bytes stored for a, or nil.
	Lookup(a Addr) []byte
	// Reverse maps address bytes to the fi_addr the application knows (the
	// user id with FI_AV_USER_ID), or AddrNotAvail.
	Reverse(addr []byte) Addr
}

// MRKeys is the provider's view of the domain's memory registrations, used
// to check remote accesses (RMA, atomics) at the target.
type MRKeys interface {
	// Access returns the registered bytes [addr, addr+length) of the region
	// with key, if the region allows access (FI_REMOTE_READ/WRITE...);
	// otherwise an error: EKEYREJECTED/ENOKEY for an unknown key, EACCES for
	// missing access, EINVAL for an out-of-range request.
	Access(key, addr, length uint64, access Flags) ([]byte, error)
	// Event reports a remote access to the counters bound to the MR.
	Event(key uint64, access Flags)
}

// Counter indexes in Resources.Cntrs.
const (
	CntrSend = iota
	CntrRecv
	CntrRead
	CntrWrite
	CntrRemoteRead
	CntrRemoteWrite
	NumCntrs
)

// Resources are the objects bound to an endpoint, handed to the provider at
// Enable. Nil members are unbound.
type Resources struct {
	TxCQ    CQOwner
	RxCQ    CQOwner
	TxFlags Flags // bind flags of the transmit CQ (FlagSelectiveCompletion)
	RxFlags Flags
	Cntrs   [NumCntrs]CntrOwner
	SRX     SRXOwner // where incoming messages are matched (own queue or a shared one)
	AV      AVView
	EQ      EQWriter
	MR      MRKeys
	// Source reports whether completions should carry source addresses (FI_SOURCE).
	Source bool
	// SourceErr reports whether a message from an address not in the AV
	// completes in error with FI_EADDRNOTAVAIL and the raw source address
	// in the error data (FI_SOURCE_ERR). Providers write such entries
	// through the optional UnknownSrcWriter of the RxCQ.
	SourceErr bool
	// OwnSRX reports that SRX is the endpoint's own receive queue: no
	// shared receive context is bound, so no other endpoint or provider
	// matches messages against it, and the provider may use the owner's
	// fast paths that need that (the udp provider receives datagrams
	// straight into the posted buffers through srx.Queue.ReceiveDirect
	// only then; shm does so on shared queues too).
	OwnSRX bool
	// TxCredits, when the endpoint is bound to a shared transmit context,
	// is that context's queue: one pool of tx_attr.size credits for all
	// the endpoints bound to it (fi_endpoint(3) "Shared Contexts"); nil
	// otherwise.
	TxCredits TxCredits
}

// TxCredits is the queue of a shared transmit context, shared by the
// endpoints bound to it, as credits. The rules for a provider whose
// endpoint is given one (Resources.TxCredits):
//
//   - Every transmit operation the application posts takes one credit
//     before anything is started, besides the endpoint's own bound
//     (tx_attr.size); when Take reports false, the provider may progress
//     and try again, then the post fails with EAGAIN and nothing is
//     started.
//   - The credit is given back exactly once: when the operation ends,
//     before its completion or error completion is written (a thread that
//     read the completion may post again at once), or, posted without a
//     completion, when it would have been; cancelled at close; or when
//     the post fails after the credit was taken. An operation that is
//     complete when its post returns gives it back before returning.
//
// Control traffic of the provider's own (acks, answers to a peer's
// requests) takes no credit.
type TxCredits interface {
	// Take takes one credit; false when none is left.
	Take() bool
	// Give returns one credit.
	Give()
}

// CQReserver is an optional CQOwner extension through which providers keep
// the promise of FI_RM_ENABLED (fi_domain(3) "Tx CQ / Rx CQ": EAGAIN) that
// no completion is lost: room for a completion is claimed before the
// operation it reports is started, and the completion is later written
// into that room, which cannot fail for lack of space. internal/cq
// implements it; an imported FI_PEER CQ may or may not.
//
// The rules, for a provider whose domain has resource management enabled
// (not FI_RM_DISABLED) and whose CQ implements CQReserver:
//
//   - An operation posted by the application that will write a CQ entry
//     (FlagCompletion set) reserves first; when Reserve reports false the
//     post fails with EAGAIN and nothing is started. Its completion, success
//     or error, is then written with WriteReserved or WriteErrReserved, or
//     the room is given back with Unreserve if the operation ends without
//     an entry (endpoint close).
//   - A completion the peer causes (a message matched to a posted receive,
//     remote CQ data of an RMA write) is reserved before the message is
//     accepted: a reliable endpoint leaves it in the stream and retries
//     (fi_domain(3) "Target EP: retried"), a datagram endpoint may drop it.
//     internal/srx reserves for receive completions (GetMsg/GetTag answer
//     EAGAIN; Post answers EAGAIN when a queued message would complete at
//     once) and srx.Complete writes into the room.
//   - An operation that is complete when its post returns (a udp send:
//     the datagram has left) has nothing in flight to hold room for: on a
//     CQ of internal/cq (which keeps entries beyond its size under
//     resource management) the provider may check Full before it starts
//     the operation and write the completion unreserved, one atomic load
//     instead of a reservation's lock. Concurrent posters may then push
//     the CQ past its size by the few completions they race in with;
//     none is lost.
//   - Entries nobody reserved (errors of operations posted without
//     FlagCompletion, cancellations, FI_MULTI_RECV releases, peeks) are
//     written with Write/WriteErr. A CQ opened with resource management
//     keeps them beyond its size rather than overrun (as libfabric's util
//     CQ keeps an overflow list); reservations count them, so posting pauses
//     until the application has read them.
//
// Reserve, Unreserve and the writes are goroutine-safe. Full reports
// whether a Reserve now would fail (no room, overrun or closed).
type CQReserver interface {
	CQOwner
	Reserve() bool
	Unreserve()
	WriteReserved(ctx any, flags Flags, length uint64, buf []byte, data, tag uint64, src Addr) error
	WriteErrReserved(e *CQErrEntry) error
	Full() bool
}

// RoomNotifier is an optional extension of CQReserver and SRXOwner: it
// tells a provider that stopped taking messages for lack of room (Reserve
// failed, or GetMsg/GetTag answered EAGAIN) when to try again, so that an
// auto-progress goroutine sleeps instead of polling. internal/cq and
// internal/srx implement it (the receive queue arms its CQ as well).
//
// NotifyRoom arms kick once: the next time room may have been freed (an
// entry was read, a reservation given back, an unexpected message left
// the queue, or the object was closed) the object makes a non-blocking
// send on kick, then forgets it; kick should have a buffer of one. To
// sleep without missing room freed meanwhile, arm first, then retry, then
// wait for kick if the retry still finds no room. Arming costs the
// object's readers nothing until it fires (an atomic flag check); arming
// the same kick again before it fires is a no-op. NotifyRoom reports
// false when it cannot promise the kick (a receive queue whose CQ is not
// a RoomNotifier): the caller then has to poll.
type RoomNotifier interface {
	NotifyRoom(kick chan<- struct{}) bool
}

// UnknownSrcWriter is an optional CQOwner extension for FI_SOURCE_ERR:
// it records a receive completion whose source is not in the AV; the CQ
// reports it as an error entry (FI_EADDRNOTAVAIL) carrying the raw address
// in ErrData.
type UnknownSrcWriter interface {
	WriteUnknownSrc(ctx any, flags Flags, length uint64, buf []byte, data, tag uint64, raw []byte) error
}

// ---- provider SPI ----

// Provider is what a provider registers. Its objects are wrapped by the
// root package, which validates arguments and state before calling them.
type Provider interface {
	Name() string
	// Version is the provider version (FI_VERSION(major, minor)).
	Version() uint32
	// GetInfo returns the provider's configurations matching hints. node and
	// service are as in fi_getinfo; flags may hold FI_SOURCE and
	// FI_NUMERICHOST. The root package applies the generic hint filter
	// afterwards as well, so a provider may return a superset.
	GetInfo(version uint32, node, service string, flags Flags, hints *Info) ([]*Info, error)
	// Fabric opens a fabric.
	Fabric(attr *FabricAttr) (Fabric, error)
}

// AddrHandler is implemented by providers to validate and print addresses
// for the shared AV machinery.
type AddrHandler interface {
	// ValidAddr reports whether b is a valid address in format f.
	ValidAddr(f AddrFormat, b []byte) bool
	// AddrString renders b (fi_av_straddr), e.g. "fi_sockaddr_in://127.0.0.1:9228".
	AddrString(f AddrFormat, b []byte) string
	// ResolveService turns node/service (fi_av_insertsvc) into address bytes.
	ResolveService(f AddrFormat, node, service string) ([]byte, error)
}

// Fabric is an open fabric.
type Fabric interface {
	Domain(info *Info) (Domain, error)
	Close() error
}

// Domain is an open domain.
type Domain interface {
	// Endpoint opens an active endpoint (disabled until Enable).
	Endpoint(info *Info) (Endpoint, error)
	Close() error
}

// MRSharer is an optional Domain extension for composite providers (lnx):
// a domain whose memory registrations are those of another open domain of
// this process. MRDomain returns that domain, a *fabric.Domain (typed any
// here, where the root package is unknown), typically one the provider
// opened itself and closes in its own Close. The root package, at
// fi_domain, makes the new domain use that domain's registration table, as
// a peer domain (fabric.Fabric.OpenPeerDomain) uses its owner's: a region
// registered through either is one registration, its key valid for remote
// accesses arriving at either domain's endpoints, and its descriptor for
// data calls on either. Any other value is ignored.
type MRSharer interface {
	MRDomain() any
}

// PassiveFabric is implemented by fabrics that open passive endpoints
// (fi_passive_ep, FI_EP_MSG). Fabrics without it answer ENOSYS.
type PassiveFabric interface {
	PassiveEndpoint(info *Info) (PassiveEndpoint, error)
}

// Progresser is implemented by objects whose progress is driven from CQ,
// counter and EQ reads (manual progress). Progress must be cheap when idle,
// must not block, and must be safe to call from several goroutines.
type Progresser interface {
	Progress()
}

// Waiter is implemented by objects that can block until progress may be
// possible (for example a socket became readable), so that sread-style
// calls sleep in the runtime's network poller instead of spinning.
// WaitReady returns nil when ready, or an error when the deadline passes or
// the object is closed.
type Waiter interface {
	WaitReady(deadline time.Time) error
}

// FDWaiter is implemented by objects with a descriptor that becomes
// readable when progress may be possible; FI_WAIT_FD wait objects add it to
// their epoll set, as libfabric's util wait sets do.
type FDWaiter interface {
	WaitFD() int
}

// Endpoint is an active endpoint of a provider.
type Endpoint interface {
	Progresser
	// Enable starts the endpoint with its bound resources.
	Enable(r *Resources) error
	// Close releases the endpoint. Outstanding operations complete (in error
	// if they must) before Close returns.
	Close() error
	// Name returns the endpoint's address (fi_getname).
	Name() ([]byte, error)
	// Send transmits m (send, sendv, sendmsg, senddata, inject).
	Send(m Msg) error
	// Cancel cancels a transmit operation with the given context; it
	// returns ENOENT if none is outstanding.
	Cancel(ctx any) error
}

// Injector is an optional fast path of an Endpoint for the plain
// fi_inject: one buffer, untagged, without remote CQ data. The root package
// calls Inject(buf, dest) instead of Send(Msg{Buf: buf, Addr: dest, Flags:
// FlagInject}) after the checks it applies to every inject (the endpoint is
// enabled and has FI_MSG, len(buf) is within tx_attr.inject_size), which
// spares building and copying a Msg on the busiest send path. It must
// behave exactly as that Send.
type Injector interface {
	Inject(buf []byte, dest Addr) error
}

// BufSender is an optional fast path of an Endpoint for fi_send of one
// buffer: SendBuf(buf, dest, ctx, flags) does exactly what Send(Msg{Buf:
// buf, Addr: dest, Context: ctx, Flags: flags}) does. The root package
// calls it for a send without a descriptor after the checks it applies to
// every send (the endpoint is enabled and has FI_MSG, len(buf) is within
// max_msg_size, flags are the effective ones and hold neither FlagInject
// nor FlagRemoteCQData), which spares building and copying a Msg.
type BufSender interface {
	SendBuf(buf []byte, dest Addr, ctx any, flags Flags) error
}

// Tagged is implemented by endpoints with FI_TAGGED transmits; tagged
// receives are matched by the SRX.
type Tagged interface {
	TSend(m Msg) error
}

// RMA is implemented by endpoints with FI_RMA.
type RMA interface {
	Read(m Msg) error
	Write(m Msg) error
}

// Namer is implemented by endpoints whose address can be set (fi_setname).
type Namer interface {
	SetName(addr []byte) error
}

// Connector is implemented by connection-oriented endpoints (FI_EP_MSG).
type Connector interface {
	Connect(addr []byte, data []byte) error
	Accept(data []byte) error
	Shutdown(flags Flags) error
	Peer() ([]byte, error)
}

// PassiveEndpoint is a listening endpoint (fi_passive_ep).
type PassiveEndpoint interface {
	Listen(eq EQWriter) error
	Name() ([]byte, error)
	SetName(addr []byte) error
	// Reject refuses the connection request identified by handle.
	Reject(handle any, data []byte) error
	Close() error
}

// OptionHandler is implemented by endpoints with provider options
// (fi_getopt/fi_setopt at FI_OPT_ENDPOINT) beyond those the root handles.
// Unknown options return ENOPROTOOPT.
type OptionHandler interface {
	GetOpt(name int) (uint64, error)
	SetOpt(name int, v uint64) error
}

// Backlogger is implemented by passive endpoints whose connection request
// backlog can be set (fi_control FI_BACKLOG). SetBacklog gets n > 0 (the
// root rejects the rest); it applies before Listen and, where the provider
// can, while listening. Backlog reports the backlog in use.
type Backlogger interface {
	SetBacklog(n int) error
	Backlog() int
}

// ScalableDomain is implemented by domains that open scalable endpoints
// (fi_scalable_ep). Domains without it answer ENOSYS.
type ScalableDomain interface {
	ScalableEndpoint(info *Info) (ScalableEndpoint, error)
}

// ScalableEndpoint is a provider's scalable endpoint: one address, several
// transmit and receive contexts.
type ScalableEndpoint interface {
	// TxContext opens transmit context index; RxContext receive context index.
	TxContext(index int, attr *TxAttr) (Endpoint, error)
	RxContext(index int, attr *RxAttr) (Endpoint, error)
	Name() ([]byte, error)
	Enable(av AVView) error
	Close() error
}

// RxCtxAddresser is implemented by providers with scalable endpoints
// whose receive contexts have addresses of their own: RxCtxAddr returns
// the address of receive context idx (> 0) of the scalable endpoint at
// base, or nil. The root package resolves, through it, the fi_rx_addr
// addresses that endpoints which are not scalable send to, when their AV
// has rx_ctx_bits.
type RxCtxAddresser interface {
	RxCtxAddr(base []byte, idx int) []byte
}

// SharedTxDomain is implemented by domains with shared transmit contexts
// (fi_stx_context). Domains without it answer ENOSYS.
type SharedTxDomain interface {
	SharedTx(attr *TxAttr) (SharedTx, error)
}

// SharedTx is a shared transmit context. SharedTxDomain.SharedTx gets
// the attributes asked for (never nil: the root fills the domain's
// defaults) and refuses what the provider cannot grant with EINVAL.
type SharedTx interface {
	// Attr returns the attributes granted; endpoints bound to the
	// context must use a subset of them.
	Attr() TxAttr
	Close() error
}

// AVListener is implemented by endpoints that want to know when addresses
// are inserted into their AV, to resolve the sources of queued unexpected
// messages (through SRXOwner.ForeachUnspecAddr).
type AVListener interface {
	AddrInserted()
}
