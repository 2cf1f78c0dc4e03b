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
// (with ModeMsgPrefix), MaxOrderRAWSize/WARSize/WAWSize (bytes for which
// the RMA ordering bits hold), MemTagFormat (tag layout), TxCtxCnt and
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
// provider may use). String prints libfabric's names joined by '|'.
type Mode = provider.Mode

// Order is a set of message ordering bits (tx/rx msg_order): the Order*
// constants (OrderSAS: sends after sends are ordered ...). OrderNone is
// 0. String prints "FI_ORDER_NONE" or the names joined by '|'.
type Order = provider.Order

// CompOrder is a completion ordering (tx/rx comp_order): CompOrderNone,
// CompOrderStrict (completions in the order the operations were posted)
// or CompOrderData.
type CompOrder = provider.CompOrder

// MRMode is a set of memory registration mode bits (domain_attr.mr_mode):
// the MR* constants, such as MRLocal (local buffers must be registered)
// or MRProvKey (the provider picks the keys). String prints libfabric's
// names ("FI_MR_UNSPEC" for none).
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
// reads the bound CQs, counters and EQs).
type Progress = provider.Progress

// Threading is a threading model (domain_attr.threading): ThreadUnspec,
// ThreadSafe, ThreadFID, ThreadDomain, ThreadCompletion, ThreadEndpoint.
// Every object of this package is safe for concurrent use whatever the
// model.
type Threading = provider.Threading

// ResourceMgmt is domain_attr.resource_mgmt: RMUnspec, RMDisabled,
// RMEnabled (queues are protected from overrun: a post that could not
// complete returns ErrAgain).
type ResourceMgmt = provider.ResourceMgmt

// AVType is an address vector type: AVUnspec (the domain's choice), AVMap,
// AVTable. In this implementation both return indices starting at 0.
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
//   - WaitSet, WaitPollFD: not implemented (ErrNoSys at open).
//
// Unlike libfabric's numbering (FI_WAIT_NONE is 0 there), the zero value
// is WaitUnspec; String prints libfabric's names ("FI_WAIT_UNSPEC").
type WaitObj = provider.WaitObj

// CQFormat selects the fields a CQ fills in each CQEntry: CQFormatContext
// (OpContext), CQFormatMsg (adds Flags and Len), CQFormatData (adds Buf and
// Data), CQFormatTagged (adds Tag). CQFormatUnspec, the zero value, means
// CQFormatContext.
type CQFormat = provider.CQFormat

// CQWaitCond is CQAttr.WaitCond: CQCondNone (any completion ends a
// blocking read; the zero value) or CQCondThreshold (a blocking read
// waits for its threshold argument).
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
	CapMsg          = provider.CapMsg
	CapRMA          = provider.CapRMA
	CapTagged       = provider.CapTagged
	CapAtomic       = provider.CapAtomic
	CapMulticast    = provider.CapMulticast
	CapCollective   = provider.CapCollective
	CapRead         = provider.CapRead
	CapWrite        = provider.CapWrite
	CapRecv         = provider.CapRecv
	CapSend         = provider.CapSend
	CapRemoteRead   = provider.CapRemoteRead
	CapRemoteWrite  = provider.CapRemoteWrite
	CapMultiRecv    = provider.CapMultiRecv
	CapRemoteCQData = provider.CapRemoteCQData
	CapTrigger      = provider.CapTrigger
	CapFence        = provider.CapFence
	CapAVUserID     = provider.CapAVUserID
	CapPeer         = provider.CapPeer
	CapHMEM         = provider.CapHMEM
	CapVariableMsg  = provider.CapVariableMsg
	CapRMAPmem      = provider.CapRMAPmem
	CapSourceErr    = provider.CapSourceErr
	CapLocalComm    = provider.CapLocalComm
	CapRemoteComm   = provider.CapRemoteComm
	CapSharedAV     = provider.CapSharedAV
	CapRMAEvent     = provider.CapRMAEvent
	CapSource       = provider.CapSource
	CapNamedRxCtx   = provider.CapNamedRxCtx
	CapDirectedRecv = provider.CapDirectedRecv
)

// Capability groups (fi_getinfo(3)).
const (
	PrimaryCaps   = provider.PrimaryCaps
	SecondaryCaps = provider.SecondaryCaps
)

// Operation, completion and bind flags.
const (
	FlagMsg                 = provider.FlagMsg
	FlagRMA                 = provider.FlagRMA
	FlagTagged              = provider.FlagTagged
	FlagAtomic              = provider.FlagAtomic
	FlagMulticast           = provider.FlagMulticast
	FlagCollective          = provider.FlagCollective
	FlagRead                = provider.FlagRead
	FlagWrite               = provider.FlagWrite
	FlagRecv                = provider.FlagRecv
	FlagSend                = provider.FlagSend
	FlagTransmit            = provider.FlagTransmit
	FlagRemoteRead          = provider.FlagRemoteRead
	FlagRemoteWrite         = provider.FlagRemoteWrite
	FlagMultiRecv           = provider.FlagMultiRecv
	FlagRemoteCQData        = provider.FlagRemoteCQData
	FlagMore                = provider.FlagMore
	FlagPeek                = provider.FlagPeek
	FlagTrigger             = provider.FlagTrigger
	FlagFence               = provider.FlagFence
	FlagPriority            = provider.FlagPriority
	FlagPeerTransfer        = provider.FlagPeerTransfer
	FlagCompletion          = provider.FlagCompletion
	FlagInject              = provider.FlagInject
	FlagInjectComplete      = provider.FlagInjectComplete
	FlagTransmitComplete    = provider.FlagTransmitComplete
	FlagDeliveryComplete    = provider.FlagDeliveryComplete
	FlagCommitComplete      = provider.FlagCommitComplete
	FlagMatchComplete       = provider.FlagMatchComplete
	FlagAVUserID            = provider.FlagAVUserID
	FlagPeer                = provider.FlagPeer
	FlagSource              = provider.FlagSource
	FlagSourceErr           = provider.FlagSourceErr
	FlagNumericHost         = provider.FlagNumericHost
	FlagRMAEvent            = provider.FlagRMAEvent
	FlagClaim               = provider.FlagClaim
	FlagDiscard             = provider.FlagDiscard
	FlagSelectiveCompletion = provider.FlagSelectiveCompletion
	FlagSyncErr             = provider.FlagSyncErr
	FlagProvAttrOnly        = provider.FlagProvAttrOnly
	FlagAffinity            = provider.FlagAffinity
)

// Enumerations.
const (
	EPUnspec = provider.EPUnspec
	EPMsg    = provider.EPMsg
	EPDgram  = provider.EPDgram
	EPRDM    = provider.EPRDM

	FormatUnspec = provider.FormatUnspec
	SockAddr     = provider.SockAddr
	SockAddrIn   = provider.SockAddrIn
	SockAddrIn6  = provider.SockAddrIn6
	AddrStr      = provider.AddrStr

	ProtoUnspec  = provider.ProtoUnspec
	ProtoUDP     = provider.ProtoUDP
	ProtoSockTCP = provider.ProtoSockTCP
	ProtoRXM     = provider.ProtoRXM
	ProtoRXD     = provider.ProtoRXD
	ProtoSHM     = provider.ProtoSHM
	ProtoRXMTCP  = provider.ProtoRXMTCP
	ProtoXNet    = provider.ProtoXNet

	CompOrderNone   = provider.CompOrderNone
	CompOrderStrict = provider.CompOrderStrict
	CompOrderData   = provider.CompOrderData

	ProgressUnspec = provider.ProgressUnspec
	ProgressAuto   = provider.ProgressAuto
	ProgressManual = provider.ProgressManual

	ThreadUnspec     = provider.ThreadUnspec
	ThreadSafe       = provider.ThreadSafe
	ThreadFID        = provider.ThreadFID
	ThreadDomain     = provider.ThreadDomain
	ThreadCompletion = provider.ThreadCompletion
	ThreadEndpoint   = provider.ThreadEndpoint

	RMUnspec   = provider.RMUnspec
	RMDisabled = provider.RMDisabled
	RMEnabled  = provider.RMEnabled

	AVUnspec = provider.AVUnspec
	AVMap    = provider.AVMap
	AVTable  = provider.AVTable

	WaitNone      = provider.WaitNone
	WaitUnspec    = provider.WaitUnspec
	WaitSet       = provider.WaitSet
	WaitFD        = provider.WaitFD
	WaitMutexCond = provider.WaitMutexCond
	WaitYield     = provider.WaitYield
	WaitPollFD    = provider.WaitPollFD

	CQFormatUnspec  = provider.CQFormatUnspec
	CQFormatContext = provider.CQFormatContext
	CQFormatMsg     = provider.CQFormatMsg
	CQFormatData    = provider.CQFormatData
	CQFormatTagged  = provider.CQFormatTagged

	CQCondNone      = provider.CQCondNone
	CQCondThreshold = provider.CQCondThreshold

	EventNotify       = provider.EventNotify
	EventConnReq      = provider.EventConnReq
	EventConnected    = provider.EventConnected
	EventShutdown     = provider.EventShutdown
	EventMRComplete   = provider.EventMRComplete
	EventAVComplete   = provider.EventAVComplete
	EventJoinComplete = provider.EventJoinComplete

	AddrUnspec   = provider.AddrUnspec
	AddrNotAvail = provider.AddrNotAvail

	// SharedContext is FI_SHARED_CONTEXT for EPAttr.TxCtxCnt/RxCtxCnt.
	SharedContext = provider.SharedContext
)

// Mode bits.
const (
	ModeContext         = provider.ModeContext
	ModeMsgPrefix       = provider.ModeMsgPrefix
	ModeAsyncIOV        = provider.ModeAsyncIOV
	ModeRxCQData        = provider.ModeRxCQData
	ModeLocalMR         = provider.ModeLocalMR
	ModeContext2        = provider.ModeContext2
	ModeBufferedRecv    = provider.ModeBufferedRecv
	ModeNotifyFlagsOnly = provider.ModeNotifyFlagsOnly
	ModeRestrictedComp  = provider.ModeRestrictedComp
	ModePeerTransfer    = provider.ModePeerTransfer
)

// Message ordering bits.
const (
	OrderNone      = provider.OrderNone
	OrderRAR       = provider.OrderRAR
	OrderRAW       = provider.OrderRAW
	OrderRAS       = provider.OrderRAS
	OrderWAR       = provider.OrderWAR
	OrderWAW       = provider.OrderWAW
	OrderWAS       = provider.OrderWAS
	OrderSAR       = provider.OrderSAR
	OrderSAW       = provider.OrderSAW
	OrderSAS       = provider.OrderSAS
	OrderStrict    = provider.OrderStrict
	OrderRMARAR    = provider.OrderRMARAR
	OrderRMARAW    = provider.OrderRMARAW
	OrderRMAWAR    = provider.OrderRMAWAR
	OrderRMAWAW    = provider.OrderRMAWAW
	OrderAtomicRAR = provider.OrderAtomicRAR
	OrderAtomicRAW = provider.OrderAtomicRAW
	OrderAtomicWAR = provider.OrderAtomicWAR
	OrderAtomicWAW = provider.OrderAtomicWAW
	OrderData      = provider.OrderData
)

// Memory registration modes.
const (
	MRUnspec     = provider.MRUnspec
	MRBasic      = provider.MRBasic
	MRScalable   = provider.MRScalable
	MRLocal      = provider.MRLocal
	MRRaw        = provider.MRRaw
	MRVirtAddr   = provider.MRVirtAddr
	MRAllocated  = provider.MRAllocated
	MRProvKey    = provider.MRProvKey
	MRMMUNotify  = provider.MRMMUNotify
	MRRMAEvent   = provider.MRRMAEvent
	MREndpoint   = provider.MREndpoint
	MRHMEM       = provider.MRHMEM
	MRCollective = provider.MRCollective
)

// Endpoint options for GetOpt/SetOpt (level OptEndpoint).
const (
	OptEndpoint      = provider.OptEndpoint
	OptMinMultiRecv  = provider.OptMinMultiRecv
	OptCMDataSize    = provider.OptCMDataSize
	OptBufferedMin   = provider.OptBufferedMin
	OptBufferedLimit = provider.OptBufferedLimit
	OptSendBufSize   = provider.OptSendBufSize
	OptRecvBufSize   = provider.OptRecvBufSize
	OptTxSize        = provider.OptTxSize
	OptRxSize        = provider.OptRxSize
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
