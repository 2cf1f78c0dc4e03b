package fabric

import "github.com/gofabric/fabric/provider"

// The types below are declared in package provider, which providers
// import, and are the same types here (aliases). Each is documented in
// full where users look for it, in this package.

// Info is fi_info: one way to communicate (a provider, fabric, domain and
// endpoint configuration), as GetInfo returns it and as Open,
// Fabric.OpenDomain and Domain.OpenEndpoint take it back. Hints for
// GetInfo use the same type (AllocInfo makes one with every attribute
// struct allocated); a zero field in hints is a wildcard. Info.Dup copies
// it deeply. Fields:
//
//   - Caps: capabilities (CapMsg, CapTagged, CapRMA ...) requested in
//     hints, granted in results.
//   - Mode: mode bits (ModeContext ...) the application supports in
//     hints; the ones the provider requires in results.
//   - AddrFormat: the format of SrcAddr/DestAddr and endpoint names
//     (SockAddrIn for tcp and udp).
//   - SrcAddr, DestAddr: local and remote address bytes in AddrFormat (a
//     Linux sockaddr for tcp and udp), or nil.
//   - Handle: for an Info from an EventConnReq event, the connection
//     request that Domain.OpenEndpoint then accepts; nil otherwise.
//   - TxAttr, RxAttr, EPAttr, DomainAttr, FabricAttr: the attributes of
//     each level, documented on their types; nil in hints means any.
type Info = provider.Info

// TxAttr is fi_tx_attr: transmit context attributes. A zero field in
// hints is a wildcard; results carry the provider's values. Fields: Caps
// (transmit capabilities, a subset of Info.Caps), Mode (mode bits
// required), OpFlags (default operation flags: FlagInject, FlagCompletion,
// completion levels such as FlagTransmitComplete), MsgOrder (Order bits
// guaranteed between messages), CompOrder (CompOrderNone or
// CompOrderStrict), InjectSize (largest Inject), Size (operations that may
// be outstanding), IOVLimit (iovec entries per operation), RMAIOVLimit
// (remote iovec entries per RMA operation), TClass (traffic class, see
// TCDSCPSet).
type TxAttr = provider.TxAttr

// RxAttr is fi_rx_attr: receive context attributes. A zero field in hints
// is a wildcard. Fields: Caps (receive capabilities), Mode, OpFlags
// (default receive flags: FlagMultiRecv, FlagCompletion), MsgOrder,
// CompOrder, TotalBufferedRecv (bytes buffered for unexpected messages),
// Size (receives that may be posted), IOVLimit (iovec entries per
// receive).
type RxAttr = provider.RxAttr

// EPAttr is fi_ep_attr: endpoint attributes. Fields: Type (EPMsg, EPDgram,
// EPRDM; EPUnspec in hints means any), Protocol (ProtoSockTCP, ProtoUDP
// ...) and ProtocolVersion, MaxMsgSize (largest message), MsgPrefixSize
// (with ModeMsgPrefix), MaxOrderRAWSize, MaxOrderWARSize and
// MaxOrderWAWSize (bytes for which the RMA ordering bits hold), MemTagFormat (tag layout), TxCtxCnt and
// RxCtxCnt (transmit/receive contexts of a scalable endpoint, or
// SharedContext for a shared one), AuthKey.
type EPAttr = provider.EPAttr

// DomainAttr is fi_domain_attr: domain attributes. Fields: Name (e.g. the
// interface address for tcp and udp), Threading (ThreadSafe, ThreadDomain
// ...), ControlProgress and DataProgress (ProgressManual: progress happens
// inside CQ, counter and EQ reads; ProgressAuto), ResourceMgmt (RMEnabled:
// the provider refuses posts with ErrAgain rather than overrun a queue),
// AVType (the preferred AVMap or AVTable), MRMode (MRLocal, MRVirtAddr,
// MRProvKey ... requirements on memory registration), MRKeySize,
// CQDataSize (bytes of remote CQ data), the object limits CQCnt, EPCnt,
// TxCtxCnt, RxCtxCnt, MaxEPTxCtx, MaxEPRxCtx, MaxEPStxCtx, MaxEPSrxCtx,
// CntrCnt, MRCnt, MRIOVLimit, domain-level Caps (CapLocalComm,
// CapRemoteComm ...) and Mode, AuthKey, MaxErrData (largest ErrData of an
// error entry), TClass.
type DomainAttr = provider.DomainAttr

// FabricAttr is fi_fabric_attr: Name (the fabric, e.g. "127.0.0.0/8"),
// ProvName (the provider, e.g. "tcp"; hints may name one, OpenFabric
// requires one), ProvVersion (the provider's version, see Version) and
// APIVersion (the API version the application asks for, 0 for the
// current one; versions before 1.5 keep the older err_data rules).
type FabricAttr = provider.FabricAttr

// Caps is a set of capability bits (fi_info.caps): the Cap* constants,
// PrimaryCaps and SecondaryCaps. String prints libfabric's names joined by
// '|' ("FI_MSG|FI_RECV|FI_SEND"); Names returns them as a slice.
type Caps = provider.Caps

// Flags is a set of operation, completion and bind flags: the Flag*
// constants (FlagSend, FlagRecv, FlagCompletion, FlagPeek ...). Bits are
// shared with Caps where libfabric shares them. String prints libfabric's
// names joined by '|'; Names returns them as a slice.
type Flags = provider.Flags

// Mode is a set of mode bits (fi_info.mode): the Mode* constants, such as
// ModeContext (the application gives each operation a context that the
// provider may use). String prints libfabric's names joined by '|'; Names
// returns them as a slice.
type Mode = provider.Mode

// Order is a set of message ordering bits (tx/rx msg_order): the Order*
// constants (OrderSAS: sends after sends are ordered ...). OrderNone is
// 0. String prints "FI_ORDER_NONE" or the names joined by '|'; Names
// returns them as a slice.
type Order = provider.Order

// CompOrder is a completion ordering (tx/rx comp_order): CompOrderNone,
// CompOrderStrict (completions in the order the operations were posted)
// or CompOrderData. String prints libfabric's names joined by '|'
// ("FI_ORDER_NONE" for none); Names returns them as a slice.
type CompOrder = provider.CompOrder

// MRMode is a set of memory registration mode bits (domain_attr.mr_mode):
// the MR* constants, such as MRLocal (local buffers must be registered)
// or MRProvKey (the provider picks the keys). String prints libfabric's
// names joined by '|' ("FI_MR_UNSPEC" for none); Names returns them as a
// slice.
type MRMode = provider.MRMode

// EPType is an endpoint type: EPUnspec (any, in hints), EPMsg (connected,
// reliable), EPDgram (connectionless, unreliable), EPRDM (connectionless,
// reliable). String prints "FI_EP_MSG" etc.
type EPType = provider.EPType

// AddrFormat is the format of address bytes (fi_info.addr_format):
// FormatUnspec, SockAddr, SockAddrIn (IPv4 struct sockaddr_in),
// SockAddrIn6, AddrStr ("fi_sockaddr_in://127.0.0.1:9228"). String prints
// "FI_SOCKADDR_IN" etc.
type AddrFormat = provider.AddrFormat

// Protocol is an endpoint's wire protocol (ep_attr.protocol): ProtoUnspec,
// ProtoUDP (udp), ProtoSockTCP (tcp MSG), ProtoXNet, ProtoRXM, ProtoRXD,
// ProtoRXMTCP, ProtoSHM. String prints "FI_PROTO_UDP" etc.
type Protocol = provider.Protocol

// Progress is a progress model (domain_attr control_progress and
// data_progress): ProgressUnspec, ProgressAuto (the provider progresses
// on its own), ProgressManual (operations progress while the application
// reads the bound CQs, counters and EQs). String prints
// "FI_PROGRESS_AUTO" etc.
type Progress = provider.Progress

// Threading is a threading model (domain_attr.threading): ThreadUnspec,
// ThreadSafe, ThreadFID, ThreadDomain, ThreadCompletion, ThreadEndpoint.
// Every object of this package is safe for concurrent use whatever the
// model. String prints "FI_THREAD_SAFE" etc.
type Threading = provider.Threading

// ResourceMgmt is domain_attr.resource_mgmt: RMUnspec, RMDisabled,
// RMEnabled (queues are protected from overrun: a post that could not
// complete returns ErrAgain). String prints "FI_RM_ENABLED" etc.
type ResourceMgmt = provider.ResourceMgmt

// AVType is an address vector type: AVUnspec (the domain's choice), AVMap,
// AVTable. In this implementation both return indices starting at 0.
// String prints "FI_AV_TABLE" etc.
type AVType = provider.AVType

// WaitObj is the wait object of a CQ, counter or EQ (wait_obj of their
// attributes): how a blocking read waits.
//
//   - WaitUnspec, the zero value and so the default: blocking reads (SRead,
//     Wait and their Context forms) work.
//   - WaitNone: no wait object; the object is only polled and blocking
//     reads return an error matching ErrNoSys. It must be asked for.
//   - WaitFD: blocking reads work, and WaitFD returns a descriptor for
//     poll/epoll (call TryWait before sleeping on it).
//   - WaitMutexCond: as WaitUnspec. WaitYield: blocking reads poll,
//     yielding the processor.
//   - WaitSet: the object joins a wait set (the WaitSet attribute, see
//     Wait); WaitPollFD: blocking reads work, and WaitPollFD returns
//     the descriptors to poll.
//
// Unlike libfabric's numbering (FI_WAIT_NONE is 0 there), the zero value
// is WaitUnspec; String prints libfabric's names ("FI_WAIT_UNSPEC").
type WaitObj = provider.WaitObj

// CQFormat selects the fields a CQ fills in each CQEntry: CQFormatContext
// (OpContext), CQFormatMsg (adds Flags and Len), CQFormatData (adds Buf and
// Data), CQFormatTagged (adds Tag). CQFormatUnspec, the zero value, means
// CQFormatContext. String prints "FI_CQ_FORMAT_TAGGED" etc.
type CQFormat = provider.CQFormat

// CQWaitCond is CQAttr.WaitCond: CQCondNone (any completion ends a
// blocking read; the zero value) or CQCondThreshold (a blocking read
// waits for its threshold argument). String prints "FI_CQ_COND_NONE" etc.
type CQWaitCond = provider.CQWaitCond

// EventType is the kind of an EQ event (EQEntry.Event): EventConnReq (a
// passive endpoint received a connection request; EQEntry.Info describes
// it), EventConnected (a connection is established), EventShutdown (the
// peer or Shutdown ended a connection), EventMRComplete, EventAVComplete,
// EventJoinComplete, EventNotify. String prints "FI_CONNREQ" etc.
type EventType = provider.EventType

// Addr is fi_addr_t: the address of a peer as the data calls take it, an
// index returned by AV.Insert. AddrUnspec (FI_ADDR_UNSPEC) means any
// source (receives) or none (connected endpoints); AddrNotAvail
// (FI_ADDR_NOTAVAIL) is reported when a source is unknown.
type Addr = provider.Addr

// CQEntry is one completion as CQ.Read returns it (the union of
// libfabric's fi_cq_*_entry formats). Fields outside the CQ's CQFormat are
// zero:
//
//   - OpContext: the context passed with the operation (all formats);
//   - Flags: what completed, e.g. FlagSend|FlagMsg or FlagRecv|FlagTagged,
//     plus FlagRemoteCQData, FlagMultiRecv ... (CQFormatMsg and up);
//   - Len: bytes received or read (CQFormatMsg and up);
//   - Buf: where a received message was placed, with FlagMultiRecv
//     (CQFormatData and up);
//   - Data: remote CQ data, valid with FlagRemoteCQData (CQFormatData and
//     up);
//   - Tag: the tag of a tagged receive (CQFormatTagged).
type CQEntry = provider.CQEntry

// CQErrEntry is an error completion as CQ.ReadErr returns it
// (fi_cq_err_entry): the CQEntry fields OpContext, Flags, Len, Buf, Data
// and Tag of the failed operation, plus Err (the error, a positive Errno
// such as ErrTrunc or ErrCanceled), Olen (bytes that did not fit, with
// ErrTrunc), ProvErrno and ErrData (provider specific; see CQ.StrError;
// with CapSourceErr and ErrAddrNotAvail, ErrData holds the unknown
// source's address, ready for AV.Insert) and Src (the source address, for
// ReadFrom).
type CQErrEntry = provider.CQErrEntry

// EQEntry is one event as EQ.Read and EQ.SRead return it (fi_eq_entry and
// fi_eq_cm_entry):
//
//   - Event: what happened (EventConnReq, EventConnected, EventShutdown
//     ...);
//   - FID: the object it is about: the *Endpoint or *PassiveEndpoint of a
//     connection event, the *AV or *MR of an asynchronous completion;
//   - Context: the object's or operation's context;
//   - Data: fi_eq_entry.data (the count of an EventAVComplete ...);
//   - Info: with EventConnReq, the Info to open the endpoint that accepts
//     (Domain.OpenEndpoint(ev.Info), then Accept) or to Reject with;
//   - CMData: connection data sent by the peer with Connect or Accept; it
//     belongs to the caller.
type EQEntry = provider.EQEntry

// EQErrEntry is an error event as EQ.ReadErr returns it
// (fi_eq_err_entry): FID and Context as in EQEntry, Data, Err (a positive
// Errno, e.g. ErrConnRefused for a rejected connection), ProvErrno and
// ErrData (provider specific; the reject data of a refused connection).
type EQErrEntry = provider.EQErrEntry

// RMAIOV is fi_rma_iov, a region of remote memory for RMA calls: Addr
// (the target address with MRVirtAddr, else an offset into the region),
// Len (bytes) and Key (the remote region's key, MR.Key).
type RMAIOV = provider.RMAIOV

// Capability bits.
const (
	CapMsg          = provider.CapMsg          // FI_MSG: send and receive messages (Send, Recv ...)
	CapRMA          = provider.CapRMA          // FI_RMA: one-sided reads and writes (RMARead, RMAWrite ...)
	CapTagged       = provider.CapTagged       // FI_TAGGED: tagged messages (TSend, TRecv ...)
	CapAtomic       = provider.CapAtomic       // FI_ATOMIC: atomic operations (Atomic, FetchAtomic, CompareAtomic ...)
	CapMulticast    = provider.CapMulticast    // FI_MULTICAST: multicast transfers (not offered)
	CapCollective   = provider.CapCollective   // FI_COLLECTIVE: collective operations (not offered)
	CapRead         = provider.CapRead         // FI_READ: initiate RMA and atomic reads
	CapWrite        = provider.CapWrite        // FI_WRITE: initiate RMA and atomic writes
	CapRecv         = provider.CapRecv         // FI_RECV: receive messages
	CapSend         = provider.CapSend         // FI_SEND: send messages
	CapRemoteRead   = provider.CapRemoteRead   // FI_REMOTE_READ: be the target of RMA and atomic reads
	CapRemoteWrite  = provider.CapRemoteWrite  // FI_REMOTE_WRITE: be the target of RMA and atomic writes
	CapMultiRecv    = provider.CapMultiRecv    // FI_MULTI_RECV: one receive buffer takes several messages (FlagMultiRecv)
	CapRemoteCQData = provider.CapRemoteCQData // FI_REMOTE_CQ_DATA: carry remote CQ data (SendData, CQEntry.Data)
	CapTrigger      = provider.CapTrigger      // FI_TRIGGER: triggered operations (not offered)
	CapFence        = provider.CapFence        // FI_FENCE: FlagFence orders an operation after all earlier ones
	CapAVUserID     = provider.CapAVUserID     // FI_AV_USER_ID: AV inserts take an application id, reported as the source
	CapPeer         = provider.CapPeer         // FI_PEER: import another provider's CQ, counter or SRX (fi_peer(3))
	CapHMEM         = provider.CapHMEM         // FI_HMEM: device (heterogeneous) memory buffers
	CapVariableMsg  = provider.CapVariableMsg  // FI_VARIABLE_MSG: variable-length messages without a posted size
	CapRMAPmem      = provider.CapRMAPmem      // FI_RMA_PMEM: RMA into persistent memory
	CapSourceErr    = provider.CapSourceErr    // FI_SOURCE_ERR: an unknown source is reported as an error with its address
	CapLocalComm    = provider.CapLocalComm    // FI_LOCAL_COMM: communicate with endpoints on the same node
	CapRemoteComm   = provider.CapRemoteComm   // FI_REMOTE_COMM: communicate with endpoints on other nodes
	CapSharedAV     = provider.CapSharedAV     // FI_SHARED_AV: an AV shared between processes
	CapRMAEvent     = provider.CapRMAEvent     // FI_RMA_EVENT: RMA targets may generate completions or counter events
	CapSource       = provider.CapSource       // FI_SOURCE: receive completions report the source address (CQ.ReadFrom)
	CapNamedRxCtx   = provider.CapNamedRxCtx   // FI_NAMED_RX_CTX: address a scalable endpoint's receive contexts (RxAddr)
	CapDirectedRecv = provider.CapDirectedRecv // FI_DIRECTED_RECV: receives may name the source they accept
)

// Capability groups (fi_getinfo(3)).
const (
	PrimaryCaps   = provider.PrimaryCaps   // the primary capabilities, which hints request and results grant
	SecondaryCaps = provider.SecondaryCaps // the secondary capabilities, which a provider may grant unrequested
)

// Operation, completion and bind flags.
const (
	FlagMsg                 = provider.FlagMsg                 // FI_MSG: a message operation or completion
	FlagRMA                 = provider.FlagRMA                 // FI_RMA: an RMA operation or completion
	FlagTagged              = provider.FlagTagged              // FI_TAGGED: a tagged operation or completion
	FlagAtomic              = provider.FlagAtomic              // FI_ATOMIC: an atomic operation or completion
	FlagMulticast           = provider.FlagMulticast           // FI_MULTICAST: a multicast operation
	FlagCollective          = provider.FlagCollective          // FI_COLLECTIVE: a collective operation
	FlagRead                = provider.FlagRead                // FI_READ: an RMA or atomic read; binds a counter to reads
	FlagWrite               = provider.FlagWrite               // FI_WRITE: an RMA or atomic write; binds a counter to writes; EQAttr: allow EQ.Write
	FlagRecv                = provider.FlagRecv                // FI_RECV: a receive; binds a CQ or counter to receives
	FlagSend                = provider.FlagSend                // FI_SEND: a send; binds a CQ or counter to sends
	FlagTransmit            = provider.FlagTransmit            // FI_TRANSMIT: binds a CQ or counter to all transmit operations (same bit as FI_SEND)
	FlagRemoteRead          = provider.FlagRemoteRead          // FI_REMOTE_READ: binds a counter to reads of local memory by peers
	FlagRemoteWrite         = provider.FlagRemoteWrite         // FI_REMOTE_WRITE: binds a counter to writes into local memory by peers
	FlagMultiRecv           = provider.FlagMultiRecv           // FI_MULTI_RECV: a receive buffer that takes several messages; on a completion, the buffer is released
	FlagRemoteCQData        = provider.FlagRemoteCQData        // FI_REMOTE_CQ_DATA: the operation carries remote CQ data; the completion's Data is valid
	FlagMore                = provider.FlagMore                // FI_MORE: more operations follow at once (a hint to batch)
	FlagPeek                = provider.FlagPeek                // FI_PEEK: look for a matching message without receiving it
	FlagTrigger             = provider.FlagTrigger             // FI_TRIGGER: a triggered operation (not offered)
	FlagFence               = provider.FlagFence               // FI_FENCE: start the operation only after all earlier ones completed
	FlagPriority            = provider.FlagPriority            // FI_PRIORITY: a priority operation
	FlagPeerTransfer        = provider.FlagPeerTransfer        // FI_PEER_TRANSFER: a transfer a peer provider initiated
	FlagCompletion          = provider.FlagCompletion          // FI_COMPLETION: write a completion even on a selective-completion binding
	FlagInject              = provider.FlagInject              // FI_INJECT: the buffer may be reused when the call returns
	FlagInjectComplete      = provider.FlagInjectComplete      // FI_INJECT_COMPLETE: complete once the buffer may be reused
	FlagTransmitComplete    = provider.FlagTransmitComplete    // FI_TRANSMIT_COMPLETE: complete once the data left the initiator
	FlagDeliveryComplete    = provider.FlagDeliveryComplete    // FI_DELIVERY_COMPLETE: complete once the data reached the target buffer
	FlagCommitComplete      = provider.FlagCommitComplete      // FI_COMMIT_COMPLETE: complete once the data is persistent at the target
	FlagMatchComplete       = provider.FlagMatchComplete       // FI_MATCH_COMPLETE: complete once the message matched a receive
	FlagAVUserID            = provider.FlagAVUserID            // FI_AV_USER_ID: AV.Insert takes application ids in fiAddrs
	FlagPeer                = provider.FlagPeer                // FI_PEER: CQAttr, CntrAttr: import the owner object given in Peer
	FlagSource              = provider.FlagSource              // FI_SOURCE: GetInfo: node and service are the source address
	FlagSourceErr           = provider.FlagSourceErr           // FI_SOURCE_ERR: report an unknown source as an error with its address
	FlagNumericHost         = provider.FlagNumericHost         // FI_NUMERICHOST: GetInfo: node is a numeric address, not resolved
	FlagRMAEvent            = provider.FlagRMAEvent            // FI_RMA_EVENT: MR: RMA into the region bumps its bound counter
	FlagClaim               = provider.FlagClaim               // FI_CLAIM: receive a message found with FlagPeek|FlagClaim
	FlagDiscard             = provider.FlagDiscard             // FI_DISCARD: drop a message found with FlagPeek, or a claimed one
	FlagSelectiveCompletion = provider.FlagSelectiveCompletion // FI_SELECTIVE_COMPLETION: bind a CQ so that only FlagCompletion operations complete
	FlagSyncErr             = provider.FlagSyncErr             // FI_SYNC_ERR: AV.InsertWithErrors: report an error per address
	FlagProvAttrOnly        = provider.FlagProvAttrOnly        // FI_PROV_ATTR_ONLY: GetInfo: return only provider attributes
	FlagAffinity            = provider.FlagAffinity            // FI_AFFINITY: CQAttr, EQAttr: SignalingVector is an interrupt affinity hint (accepted, ignored)
)

// Enumerations.
const (
	EPUnspec = provider.EPUnspec // FI_EP_UNSPEC: any endpoint type (hints)
	EPMsg    = provider.EPMsg    // FI_EP_MSG: connected and reliable (tcp)
	EPDgram  = provider.EPDgram  // FI_EP_DGRAM: connectionless and unreliable (udp)
	EPRDM    = provider.EPRDM    // FI_EP_RDM: connectionless and reliable

	FormatUnspec = provider.FormatUnspec // FI_FORMAT_UNSPEC: any address format (hints)
	SockAddr     = provider.SockAddr     // FI_SOCKADDR: a struct sockaddr of any family
	SockAddrIn   = provider.SockAddrIn   // FI_SOCKADDR_IN: an IPv4 struct sockaddr_in
	SockAddrIn6  = provider.SockAddrIn6  // FI_SOCKADDR_IN6: an IPv6 struct sockaddr_in6
	AddrStr      = provider.AddrStr      // FI_ADDR_STR: a string, "fi_sockaddr_in://127.0.0.1:9228"

	ProtoUnspec  = provider.ProtoUnspec  // FI_PROTO_UNSPEC: any protocol (hints)
	ProtoUDP     = provider.ProtoUDP     // FI_PROTO_UDP: datagrams over UDP (udp)
	ProtoSockTCP = provider.ProtoSockTCP // FI_PROTO_SOCK_TCP: a TCP stream (tcp MSG)
	ProtoRXM     = provider.ProtoRXM     // FI_PROTO_RXM: RDM over MSG endpoints
	ProtoRXD     = provider.ProtoRXD     // FI_PROTO_RXD: RDM over DGRAM endpoints
	ProtoSHM     = provider.ProtoSHM     // FI_PROTO_SHM: shared memory
	ProtoRXMTCP  = provider.ProtoRXMTCP  // FI_PROTO_RXM_TCP: RDM over TCP
	ProtoXNet    = provider.ProtoXNet    // FI_PROTO_XNET: the net provider's protocol

	CompOrderNone   = provider.CompOrderNone   // FI_ORDER_NONE: completions in any order
	CompOrderStrict = provider.CompOrderStrict // FI_ORDER_STRICT: completions in the order operations were posted
	CompOrderData   = provider.CompOrderData   // FI_ORDER_DATA: data is placed in the order operations were posted

	ProgressUnspec = provider.ProgressUnspec // FI_PROGRESS_UNSPEC: any progress model (hints)
	ProgressAuto   = provider.ProgressAuto   // FI_PROGRESS_AUTO: the provider progresses on its own
	ProgressManual = provider.ProgressManual // FI_PROGRESS_MANUAL: progress happens in CQ, counter and EQ reads

	ThreadUnspec     = provider.ThreadUnspec     // FI_THREAD_UNSPEC: any threading model (hints)
	ThreadSafe       = provider.ThreadSafe       // FI_THREAD_SAFE: every object may be used from any goroutine
	ThreadFID        = provider.ThreadFID        // FI_THREAD_FID: each object used by one thread at a time
	ThreadDomain     = provider.ThreadDomain     // FI_THREAD_DOMAIN: the whole domain used by one thread at a time
	ThreadCompletion = provider.ThreadCompletion // FI_THREAD_COMPLETION: each completion queue and its endpoints used by one thread at a time
	ThreadEndpoint   = provider.ThreadEndpoint   // FI_THREAD_ENDPOINT: each endpoint used by one thread at a time

	RMUnspec   = provider.RMUnspec   // FI_RM_UNSPEC: the provider's default (hints)
	RMDisabled = provider.RMDisabled // FI_RM_DISABLED: the application keeps queues from overrunning
	RMEnabled  = provider.RMEnabled  // FI_RM_ENABLED: no completion is lost; a post that could overrun returns ErrAgain

	AVUnspec = provider.AVUnspec // FI_AV_UNSPEC: the domain's AV type
	AVMap    = provider.AVMap    // FI_AV_MAP: addresses are provider values
	AVTable  = provider.AVTable  // FI_AV_TABLE: addresses are indices 0, 1, 2 ...

	WaitNone      = provider.WaitNone      // FI_WAIT_NONE: no wait object; blocking reads return ErrNoSys
	WaitUnspec    = provider.WaitUnspec    // FI_WAIT_UNSPEC: the default wait object; blocking reads work (the zero value)
	WaitSet       = provider.WaitSet       // FI_WAIT_SET: a shared wait set (the WaitSet attribute, see Wait)
	WaitFD        = provider.WaitFD        // FI_WAIT_FD: a file descriptor for poll/epoll (WaitFD, TryWait)
	WaitMutexCond = provider.WaitMutexCond // FI_WAIT_MUTEX_COND: as WaitUnspec
	WaitYield     = provider.WaitYield     // FI_WAIT_YIELD: blocking reads poll, yielding the processor
	WaitPollFD    = provider.WaitPollFD    // FI_WAIT_POLLFD: a set of descriptors (WaitPollFD, TryWait)

	CQFormatUnspec  = provider.CQFormatUnspec  // FI_CQ_FORMAT_UNSPEC: CQFormatContext
	CQFormatContext = provider.CQFormatContext // FI_CQ_FORMAT_CONTEXT: CQEntry.OpContext only
	CQFormatMsg     = provider.CQFormatMsg     // FI_CQ_FORMAT_MSG: adds Flags and Len
	CQFormatData    = provider.CQFormatData    // FI_CQ_FORMAT_DATA: adds Buf and Data
	CQFormatTagged  = provider.CQFormatTagged  // FI_CQ_FORMAT_TAGGED: adds Tag

	CQCondNone      = provider.CQCondNone      // FI_CQ_COND_NONE: any completion ends a blocking read
	CQCondThreshold = provider.CQCondThreshold // FI_CQ_COND_THRESHOLD: a blocking read waits for its threshold of completions

	EventNotify       = provider.EventNotify       // FI_NOTIFY: an application event (EQ.Write)
	EventConnReq      = provider.EventConnReq      // FI_CONNREQ: a passive endpoint received a connection request (EQEntry.Info)
	EventConnected    = provider.EventConnected    // FI_CONNECTED: a connection is established
	EventShutdown     = provider.EventShutdown     // FI_SHUTDOWN: a connection ended
	EventMRComplete   = provider.EventMRComplete   // FI_MR_COMPLETE: an asynchronous memory registration completed
	EventAVComplete   = provider.EventAVComplete   // FI_AV_COMPLETE: an asynchronous AV insert completed
	EventJoinComplete = provider.EventJoinComplete // FI_JOIN_COMPLETE: a multicast join completed

	AddrUnspec   = provider.AddrUnspec   // FI_ADDR_UNSPEC: any source (receives), no address (connected endpoints)
	AddrNotAvail = provider.AddrNotAvail // FI_ADDR_NOTAVAIL: the source is not in the AV

	// SharedContext is FI_SHARED_CONTEXT for EPAttr.TxCtxCnt/RxCtxCnt.
	SharedContext = provider.SharedContext
)

// Mode bits.
const (
	ModeContext         = provider.ModeContext         // FI_CONTEXT: each operation's context points to application memory the provider may use
	ModeMsgPrefix       = provider.ModeMsgPrefix       // FI_MSG_PREFIX: buffers start with EPAttr.MsgPrefixSize bytes for the provider
	ModeAsyncIOV        = provider.ModeAsyncIOV        // FI_ASYNC_IOV: iovec arrays stay valid until completion
	ModeRxCQData        = provider.ModeRxCQData        // FI_RX_CQ_DATA: receiving remote CQ data consumes a posted receive
	ModeLocalMR         = provider.ModeLocalMR         // FI_LOCAL_MR: local buffers must be registered (old form of MRLocal)
	ModeContext2        = provider.ModeContext2        // FI_CONTEXT2: as ModeContext, with twice the space
	ModeBufferedRecv    = provider.ModeBufferedRecv    // FI_BUFFERED_RECV: the provider buffers received data until the application claims it
	ModeNotifyFlagsOnly = provider.ModeNotifyFlagsOnly // FI_NOTIFY_FLAGS_ONLY: completions may omit the flags that only name the operation type
	ModeRestrictedComp  = provider.ModeRestrictedComp  // FI_RESTRICTED_COMP: CQs and counters are shared only by endpoints with the same capabilities
	ModePeerTransfer    = provider.ModePeerTransfer    // FI_PEER_TRANSFER: the provider accepts transfers from a peer provider
)

// Message ordering bits.
const (
	OrderNone      = provider.OrderNone      // FI_ORDER_NONE: no ordering
	OrderRAR       = provider.OrderRAR       // FI_ORDER_RAR: reads after reads
	OrderRAW       = provider.OrderRAW       // FI_ORDER_RAW: reads after writes
	OrderRAS       = provider.OrderRAS       // FI_ORDER_RAS: reads after sends
	OrderWAR       = provider.OrderWAR       // FI_ORDER_WAR: writes after reads
	OrderWAW       = provider.OrderWAW       // FI_ORDER_WAW: writes after writes
	OrderWAS       = provider.OrderWAS       // FI_ORDER_WAS: writes after sends
	OrderSAR       = provider.OrderSAR       // FI_ORDER_SAR: sends after reads
	OrderSAW       = provider.OrderSAW       // FI_ORDER_SAW: sends after writes
	OrderSAS       = provider.OrderSAS       // FI_ORDER_SAS: sends after sends
	OrderStrict    = provider.OrderStrict    // FI_ORDER_STRICT: every ordering above
	OrderRMARAR    = provider.OrderRMARAR    // FI_ORDER_RMA_RAR: RMA reads after RMA reads
	OrderRMARAW    = provider.OrderRMARAW    // FI_ORDER_RMA_RAW: RMA reads after RMA writes
	OrderRMAWAR    = provider.OrderRMAWAR    // FI_ORDER_RMA_WAR: RMA writes after RMA reads
	OrderRMAWAW    = provider.OrderRMAWAW    // FI_ORDER_RMA_WAW: RMA writes after RMA writes
	OrderAtomicRAR = provider.OrderAtomicRAR // FI_ORDER_ATOMIC_RAR: atomic reads after atomic reads
	OrderAtomicRAW = provider.OrderAtomicRAW // FI_ORDER_ATOMIC_RAW: atomic reads after atomic writes
	OrderAtomicWAR = provider.OrderAtomicWAR // FI_ORDER_ATOMIC_WAR: atomic writes after atomic reads
	OrderAtomicWAW = provider.OrderAtomicWAW // FI_ORDER_ATOMIC_WAW: atomic writes after atomic writes
	OrderData      = provider.OrderData      // FI_ORDER_DATA: data is placed in order
)

// Memory registration modes.
const (
	MRUnspec     = provider.MRUnspec     // FI_MR_UNSPEC: no requirement stated (0)
	MRBasic      = provider.MRBasic      // FI_MR_BASIC: the old basic mode (MRVirtAddr|MRAllocated|MRProvKey)
	MRScalable   = provider.MRScalable   // FI_MR_SCALABLE: the old scalable mode (offsets, application keys)
	MRLocal      = provider.MRLocal      // FI_MR_LOCAL: local buffers must be registered and passed with their MRDesc
	MRRaw        = provider.MRRaw        // FI_MR_RAW: keys are raw bytes (fi_mr_raw_attr)
	MRVirtAddr   = provider.MRVirtAddr   // FI_MR_VIRT_ADDR: remote addresses are virtual addresses, not offsets
	MRAllocated  = provider.MRAllocated  // FI_MR_ALLOCATED: only allocated memory may be registered
	MRProvKey    = provider.MRProvKey    // FI_MR_PROV_KEY: the provider chooses the keys
	MRMMUNotify  = provider.MRMMUNotify  // FI_MR_MMU_NOTIFY: the application reports changes of page mappings
	MRRMAEvent   = provider.MRRMAEvent   // FI_MR_RMA_EVENT: regions with FlagRMAEvent must be bound and enabled
	MREndpoint   = provider.MREndpoint   // FI_MR_ENDPOINT: regions are bound to endpoints (MR.Bind, MR.Enable)
	MRHMEM       = provider.MRHMEM       // FI_MR_HMEM: device memory must be registered
	MRCollective = provider.MRCollective // FI_MR_COLLECTIVE: collective operations need registered memory
)

// Endpoint options for GetOpt/SetOpt (level OptEndpoint).
const (
	OptEndpoint      = provider.OptEndpoint      // FI_OPT_ENDPOINT: the level of the options below
	OptMinMultiRecv  = provider.OptMinMultiRecv  // FI_OPT_MIN_MULTI_RECV: free space under which a multi-receive buffer is released
	OptCMDataSize    = provider.OptCMDataSize    // FI_OPT_CM_DATA_SIZE: largest connection data (Connect, Accept, Reject)
	OptBufferedMin   = provider.OptBufferedMin   // FI_OPT_BUFFERED_MIN: bytes of a message buffered before ModeBufferedRecv reports it
	OptBufferedLimit = provider.OptBufferedLimit // FI_OPT_BUFFERED_LIMIT: largest message buffered whole with ModeBufferedRecv
	OptSendBufSize   = provider.OptSendBufSize   // FI_OPT_SEND_BUF_SIZE: the socket send buffer size
	OptRecvBufSize   = provider.OptRecvBufSize   // FI_OPT_RECV_BUF_SIZE: the socket receive buffer size
	OptTxSize        = provider.OptTxSize        // FI_OPT_TX_SIZE: the transmit queue size
	OptRxSize        = provider.OptRxSize        // FI_OPT_RX_SIZE: the receive queue size

	// OptHMEMP2P is FI_OPT_FI_HMEM_P2P, how FI_HMEM transfers use peer to
	// peer. No provider of this module claims FI_HMEM (device memory is
	// never registered or transferred), so there is no peer-to-peer mode
	// to choose and GetOpt and SetOpt answer ErrNoProtoOpt.
	OptHMEMP2P = provider.OptHMEMP2P
	// OptXPUTrigger is FI_OPT_XPU_TRIGGER, the variables of triggered
	// operations started by a device. Triggered operations (fi_trigger)
	// and FI_HMEM devices are not offered, so GetOpt and SetOpt answer
	// ErrNoProtoOpt.
	OptXPUTrigger = provider.OptXPUTrigger
)

// Version builds an API version number (FI_VERSION).
func Version(major, minor uint32) uint32 { return provider.Version(major, minor) }

// APIVersion is the libfabric API version implemented, FI_VERSION(1, 17):
// a constant, as FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION) is in C.
const APIVersion = provider.APIVersion

// TCDSCPSet returns the traffic class for a DSCP value (fi_tc_dscp_set).
func TCDSCPSet(dscp uint8) uint32 { return provider.TCDSCPSet(dscp) }

// TCDSCPGet returns the DSCP value of a traffic class (fi_tc_dscp_get).
func TCDSCPGet(tclass uint32) uint8 { return provider.TCDSCPGet(tclass) }
