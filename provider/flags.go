package provider

import "strings"

// Caps is a set of capability bits (fi_info.caps, tx_attr.caps, ...).
// String prints libfabric's names joined by '|'.
type Caps uint64

// Flags is a set of operation flags, completion flags or bind flags; the
// bits are shared with Caps where libfabric shares them.
type Flags uint64

// Capability and operation flag bits (rdma/fabric.h, libfabric 1.17).
const (
	CapMsg          Caps = 1 << 1  // FI_MSG
	CapRMA          Caps = 1 << 2  // FI_RMA
	CapTagged       Caps = 1 << 3  // FI_TAGGED
	CapAtomic       Caps = 1 << 4  // FI_ATOMIC
	CapMulticast    Caps = 1 << 5  // FI_MULTICAST
	CapCollective   Caps = 1 << 6  // FI_COLLECTIVE
	CapRead         Caps = 1 << 8  // FI_READ
	CapWrite        Caps = 1 << 9  // FI_WRITE
	CapRecv         Caps = 1 << 10 // FI_RECV
	CapSend         Caps = 1 << 11 // FI_SEND
	CapRemoteRead   Caps = 1 << 12 // FI_REMOTE_READ
	CapRemoteWrite  Caps = 1 << 13 // FI_REMOTE_WRITE
	CapMultiRecv    Caps = 1 << 16 // FI_MULTI_RECV
	CapRemoteCQData Caps = 1 << 17 // FI_REMOTE_CQ_DATA
	CapTrigger      Caps = 1 << 20 // FI_TRIGGER
	CapFence        Caps = 1 << 21 // FI_FENCE
	CapAVUserID     Caps = 1 << 41 // FI_AV_USER_ID
	CapPeer         Caps = 1 << 43 // FI_PEER
	CapVariableMsg  Caps = 1 << 48 // FI_VARIABLE_MSG
	CapRMAPmem      Caps = 1 << 49 // FI_RMA_PMEM
	CapSourceErr    Caps = 1 << 50 // FI_SOURCE_ERR
	CapLocalComm    Caps = 1 << 51 // FI_LOCAL_COMM
	CapRemoteComm   Caps = 1 << 52 // FI_REMOTE_COMM
	CapSharedAV     Caps = 1 << 53 // FI_SHARED_AV
	CapRMAEvent     Caps = 1 << 56 // FI_RMA_EVENT
	CapSource       Caps = 1 << 57 // FI_SOURCE
	CapNamedRxCtx   Caps = 1 << 58 // FI_NAMED_RX_CTX
	CapDirectedRecv Caps = 1 << 59 // FI_DIRECTED_RECV
	// CapHMEM is last: fi_tostr prints it after the others.
	CapHMEM Caps = 1 << 47 // FI_HMEM
)

// Primary capabilities (fi_getinfo(3) "primary capabilities").
const PrimaryCaps = CapMsg | CapRMA | CapTagged | CapAtomic | CapMulticast | CapCollective |
	CapNamedRxCtx | CapDirectedRecv | CapVariableMsg | CapHMEM

// Secondary capabilities: a provider may return these even if not requested.
const SecondaryCaps = CapMultiRecv | CapSource | CapRMAEvent | CapSharedAV | CapTrigger | CapFence |
	CapLocalComm | CapRemoteComm | CapRMAPmem | CapSourceErr | CapRead | CapWrite | CapRecv | CapSend |
	CapRemoteRead | CapRemoteWrite

// Domain-level capabilities.
const DomainCaps = CapLocalComm | CapRemoteComm | CapSharedAV | CapAVUserID | CapPeer

// Operation, completion and bind flags.
const (
	FlagMsg              Flags = 1 << 1  // FI_MSG
	FlagRMA              Flags = 1 << 2  // FI_RMA
	FlagTagged           Flags = 1 << 3  // FI_TAGGED
	FlagAtomic           Flags = 1 << 4  // FI_ATOMIC
	FlagMulticast        Flags = 1 << 5  // FI_MULTICAST
	FlagCollective       Flags = 1 << 6  // FI_COLLECTIVE
	FlagRead             Flags = 1 << 8  // FI_READ
	FlagWrite            Flags = 1 << 9  // FI_WRITE
	FlagRecv             Flags = 1 << 10 // FI_RECV
	FlagSend             Flags = 1 << 11 // FI_SEND
	FlagTransmit         Flags = FlagSend
	FlagRemoteRead       Flags = 1 << 12 // FI_REMOTE_READ
	FlagRemoteWrite      Flags = 1 << 13 // FI_REMOTE_WRITE
	FlagMultiRecv        Flags = 1 << 16 // FI_MULTI_RECV
	FlagRemoteCQData     Flags = 1 << 17 // FI_REMOTE_CQ_DATA
	FlagMore             Flags = 1 << 18 // FI_MORE
	FlagPeek             Flags = 1 << 19 // FI_PEEK
	FlagTrigger          Flags = 1 << 20 // FI_TRIGGER
	FlagFence            Flags = 1 << 21 // FI_FENCE
	FlagPriority         Flags = 1 << 22 // FI_PRIORITY
	FlagCompletion       Flags = 1 << 24 // FI_COMPLETION
	FlagEvent            Flags = FlagCompletion
	FlagInject           Flags = 1 << 25 // FI_INJECT
	FlagInjectComplete   Flags = 1 << 26 // FI_INJECT_COMPLETE
	FlagTransmitComplete Flags = 1 << 27 // FI_TRANSMIT_COMPLETE
	FlagDeliveryComplete Flags = 1 << 28 // FI_DELIVERY_COMPLETE
	FlagAffinity         Flags = 1 << 29 // FI_AFFINITY
	FlagCommitComplete   Flags = 1 << 30 // FI_COMMIT_COMPLETE
	FlagMatchComplete    Flags = 1 << 31 // FI_MATCH_COMPLETE
	FlagPeerTransfer     Flags = 1 << 36 // FI_PEER_TRANSFER
	FlagAVUserID         Flags = 1 << 41 // FI_AV_USER_ID
	FlagPeer             Flags = 1 << 43 // FI_PEER
	FlagSourceErr        Flags = 1 << 50 // FI_SOURCE_ERR
	FlagNumericHost      Flags = 1 << 55 // FI_NUMERICHOST
	FlagRMAEvent         Flags = 1 << 56 // FI_RMA_EVENT
	FlagSource           Flags = 1 << 57 // FI_SOURCE
	FlagDiscard          Flags = 1 << 58 // FI_DISCARD
	FlagClaim            Flags = 1 << 59 // FI_CLAIM
	// FlagSelectiveCompletion is the fi_ep_bind flag FI_SELECTIVE_COMPLETION.
	FlagSelectiveCompletion Flags = 1 << 59
	// FlagSyncErr is the fi_av_insert flag FI_SYNC_ERR.
	FlagSyncErr Flags = 1 << 58
	// FlagProvAttrOnly is the fi_getinfo flag FI_PROV_ATTR_ONLY.
	FlagProvAttrOnly Flags = 1 << 54
)

// Completion-level op flags.
const CompletionLevels = FlagInjectComplete | FlagTransmitComplete | FlagDeliveryComplete |
	FlagCommitComplete | FlagMatchComplete

type bitName struct {
	bit  uint64
	name string
}

func names(v uint64, table []bitName) []string {
	var out []string
	for _, bn := range table {
		if v&bn.bit != 0 {
			out = append(out, bn.name)
			v &^= bn.bit
		}
	}
	if v != 0 {
		out = append(out, "0x"+hex(v))
	}
	return out
}

func hex(v uint64) string {
	const digits = "0123456789abcdef"
	if v == 0 {
		return "0"
	}
	var b [16]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[i:])
}

func join(v uint64, table []bitName, zero string) string {
	n := names(v, table)
	if len(n) == 0 {
		return zero
	}
	return strings.Join(n, "|")
}

func parseNames(s string, table []bitName) (uint64, bool) {
	var v uint64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' || r == ' ' }) {
		found := false
		for _, bn := range table {
			if bn.name == f {
				v |= bn.bit
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	return v, true
}

// Names returns the libfabric names of the bits in c, in fi_tostr order.
func (c Caps) Names() []string { return names(uint64(c), capsBits) }

// String returns the names of the bits in c joined by '|', or "0".
func (c Caps) String() string { return join(uint64(c), capsBits, "0") }

// ParseCaps parses "FI_MSG|FI_TAGGED" (or comma-separated) into Caps.
func ParseCaps(s string) (Caps, bool) { v, ok := parseNames(s, capsBits); return Caps(v), ok }

// Names returns the libfabric names of the bits in f.
func (f Flags) Names() []string { return names(uint64(f), flagsBits) }

// String returns the names of the bits in f joined by '|', or "0".
func (f Flags) String() string { return join(uint64(f), flagsBits, "0") }

// ParseFlags parses "FI_INJECT|FI_COMPLETION" into Flags.
func ParseFlags(s string) (Flags, bool) { v, ok := parseNames(s, flagsBits); return Flags(v), ok }

// Mode is a set of mode bits (fi_info.mode).
type Mode uint64

// Mode bits.
const (
	ModeContext         Mode = 1 << 59 // FI_CONTEXT
	ModeMsgPrefix       Mode = 1 << 58 // FI_MSG_PREFIX
	ModeAsyncIOV        Mode = 1 << 57 // FI_ASYNC_IOV
	ModeRxCQData        Mode = 1 << 56 // FI_RX_CQ_DATA
	ModeLocalMR         Mode = 1 << 55 // FI_LOCAL_MR
	ModeNotifyFlagsOnly Mode = 1 << 54 // FI_NOTIFY_FLAGS_ONLY
	ModeRestrictedComp  Mode = 1 << 53 // FI_RESTRICTED_COMP
	ModeContext2        Mode = 1 << 52 // FI_CONTEXT2
	ModeBufferedRecv    Mode = 1 << 51 // FI_BUFFERED_RECV
	ModePeerTransfer    Mode = 1 << 36 // FI_PEER_TRANSFER
	// ModeAll is every mode bit; fi_info passes it when -m is not given.
	ModeAll Mode = ModeContext | ModeMsgPrefix | ModeAsyncIOV | ModeRxCQData | ModeLocalMR |
		ModeNotifyFlagsOnly | ModeRestrictedComp | ModeContext2 | ModeBufferedRecv
)

// Names returns the libfabric names of the mode bits.
func (m Mode) Names() []string { return names(uint64(m), modeBits) }

// String returns the mode bit names joined by '|', or "0".
func (m Mode) String() string { return join(uint64(m), modeBits, "0") }

// ParseMode parses "FI_CONTEXT|FI_MSG_PREFIX".
func ParseMode(s string) (Mode, bool) { v, ok := parseNames(s, modeBits); return Mode(v), ok }

// Order is a set of message ordering bits (tx/rx msg_order).
type Order uint64

// Message ordering bits.
const (
	OrderNone      Order = 0
	OrderRAR       Order = 1 << 0 // FI_ORDER_RAR
	OrderRAW       Order = 1 << 1 // FI_ORDER_RAW
	OrderRAS       Order = 1 << 2 // FI_ORDER_RAS
	OrderWAR       Order = 1 << 3 // FI_ORDER_WAR
	OrderWAW       Order = 1 << 4 // FI_ORDER_WAW
	OrderWAS       Order = 1 << 5 // FI_ORDER_WAS
	OrderSAR       Order = 1 << 6 // FI_ORDER_SAR
	OrderSAW       Order = 1 << 7 // FI_ORDER_SAW
	OrderSAS       Order = 1 << 8 // FI_ORDER_SAS
	OrderStrict    Order = 0x1FF
	OrderRMARAR    Order = 1 << 32 // FI_ORDER_RMA_RAR
	OrderRMARAW    Order = 1 << 33 // FI_ORDER_RMA_RAW
	OrderRMAWAR    Order = 1 << 34 // FI_ORDER_RMA_WAR
	OrderRMAWAW    Order = 1 << 35 // FI_ORDER_RMA_WAW
	OrderAtomicRAR Order = 1 << 36 // FI_ORDER_ATOMIC_RAR
	OrderAtomicRAW Order = 1 << 37 // FI_ORDER_ATOMIC_RAW
	OrderAtomicWAR Order = 1 << 38 // FI_ORDER_ATOMIC_WAR
	OrderAtomicWAW Order = 1 << 39 // FI_ORDER_ATOMIC_WAW
	// OrderData is last: fi_tostr prints it after the others.
	OrderData Order = 1 << 16 // FI_ORDER_DATA
)

// Names returns the ordering bit names ("FI_ORDER_NONE" for none).
func (o Order) Names() []string {
	if o == 0 {
		return []string{"FI_ORDER_NONE"}
	}
	return names(uint64(o), orderBits)
}

// String returns the ordering bit names joined by '|'.
func (o Order) String() string { return strings.Join(o.Names(), "|") }

// CompOrder is a completion ordering value (tx/rx comp_order).
type CompOrder uint64

// Completion ordering values.
const (
	CompOrderNone   CompOrder = 0
	CompOrderStrict CompOrder = 0x1FF
	CompOrderData   CompOrder = 1 << 16
)

// Names returns the completion ordering names as fi_tostr prints them.
func (o CompOrder) Names() []string {
	if o == 0 {
		return []string{"FI_ORDER_NONE"}
	}
	var n []string
	if o&CompOrderStrict != 0 {
		n = append(n, "FI_ORDER_STRICT")
	}
	if o&CompOrderData != 0 {
		n = append(n, "FI_ORDER_DATA")
	}
	return n
}

// String returns the completion ordering names joined by '|'.
func (o CompOrder) String() string { return strings.Join(o.Names(), "|") }

// MRMode is a set of memory registration mode bits (domain_attr.mr_mode).
type MRMode uint32

// Memory registration mode bits.
const (
	MRUnspec     MRMode = 0
	MRBasic      MRMode = 1 << 0  // FI_MR_BASIC
	MRScalable   MRMode = 1 << 1  // FI_MR_SCALABLE
	MRLocal      MRMode = 1 << 2  // FI_MR_LOCAL
	MRRaw        MRMode = 1 << 3  // FI_MR_RAW
	MRVirtAddr   MRMode = 1 << 4  // FI_MR_VIRT_ADDR
	MRAllocated  MRMode = 1 << 5  // FI_MR_ALLOCATED
	MRProvKey    MRMode = 1 << 6  // FI_MR_PROV_KEY
	MRMMUNotify  MRMode = 1 << 7  // FI_MR_MMU_NOTIFY
	MRRMAEvent   MRMode = 1 << 8  // FI_MR_RMA_EVENT
	MREndpoint   MRMode = 1 << 9  // FI_MR_ENDPOINT
	MRHMEM       MRMode = 1 << 10 // FI_MR_HMEM
	MRCollective MRMode = 1 << 11 // FI_MR_COLLECTIVE
	// MRBasicMap is OFI_MR_BASIC_MAP: ALLOCATED|PROV_KEY|VIRT_ADDR.
	MRBasicMap MRMode = MRAllocated | MRProvKey | MRVirtAddr
)

// Names returns the mr_mode bit names (empty for none, as fi_info prints "[  ]").
func (m MRMode) Names() []string { return names(uint64(m), mrModeBits) }

// String returns the mr_mode names joined by '|', or "FI_MR_UNSPEC".
func (m MRMode) String() string { return join(uint64(m), mrModeBits, "FI_MR_UNSPEC") }

// parseEnum finds the value below end whose String is s; enum types here
// are contiguous from 0.
func parseEnum[T interface {
	~int | ~uint32
	String() string
}](s string, end T) (T, bool) {
	for v := T(0); v < end; v++ {
		if v.String() == s {
			return v, true
		}
	}
	return 0, false
}

// EPType is an endpoint type (ep_attr.type).
type EPType int

// Endpoint types.
const (
	EPUnspec     EPType = 0 // FI_EP_UNSPEC
	EPMsg        EPType = 1 // FI_EP_MSG
	EPDgram      EPType = 2 // FI_EP_DGRAM
	EPRDM        EPType = 3 // FI_EP_RDM
	EPSockStream EPType = 4 // FI_EP_SOCK_STREAM
	EPSockDgram  EPType = 5 // FI_EP_SOCK_DGRAM
)

// ParseEPType parses "FI_EP_RDM".
func ParseEPType(s string) (EPType, bool) { return parseEnum(s, EPSockDgram+1) }

// AddrFormat is an address format (fi_info.addr_format).
type AddrFormat uint32

// Address formats.
const (
	FormatUnspec AddrFormat = 0  // FI_FORMAT_UNSPEC
	SockAddr     AddrFormat = 1  // FI_SOCKADDR
	SockAddrIn   AddrFormat = 2  // FI_SOCKADDR_IN
	SockAddrIn6  AddrFormat = 3  // FI_SOCKADDR_IN6
	SockAddrIB   AddrFormat = 4  // FI_SOCKADDR_IB
	AddrPSMX     AddrFormat = 5  // FI_ADDR_PSMX
	AddrGNI      AddrFormat = 6  // FI_ADDR_GNI
	AddrBGQ      AddrFormat = 7  // FI_ADDR_BGQ
	AddrMLX      AddrFormat = 8  // FI_ADDR_MLX
	AddrStr      AddrFormat = 9  // FI_ADDR_STR
	AddrPSMX2    AddrFormat = 10 // FI_ADDR_PSMX2
	AddrIBUD     AddrFormat = 11 // FI_ADDR_IB_UD
	AddrEFA      AddrFormat = 12 // FI_ADDR_EFA
	AddrPSMX3    AddrFormat = 13 // FI_ADDR_PSMX3
	AddrOPX      AddrFormat = 14 // FI_ADDR_OPX
	AddrCXI      AddrFormat = 15 // FI_ADDR_CXI
)

// ParseAddrFormat parses "FI_SOCKADDR_IN".
func ParseAddrFormat(s string) (AddrFormat, bool) {
	return parseEnum(s, AddrCXI+1)
}

// Protocol is an endpoint protocol (ep_attr.protocol).
type Protocol uint32

// Protocols.
const (
	ProtoUnspec  Protocol = 0  // FI_PROTO_UNSPEC
	ProtoUDP     Protocol = 5  // FI_PROTO_UDP
	ProtoSockTCP Protocol = 6  // FI_PROTO_SOCK_TCP
	ProtoRXM     Protocol = 11 // FI_PROTO_RXM
	ProtoRXD     Protocol = 12 // FI_PROTO_RXD
	ProtoSHM     Protocol = 16 // FI_PROTO_SHM
	ProtoRXMTCP  Protocol = 22 // FI_PROTO_RXM_TCP
	ProtoXNet    Protocol = 25 // FI_PROTO_XNET
)

// Protocols no provider here speaks; named for String.
const (
	protoRdmaCmIbRc    Protocol = 1  // FI_PROTO_RDMA_CM_IB_RC
	protoIwarp         Protocol = 2  // FI_PROTO_IWARP
	protoIbUd          Protocol = 3  // FI_PROTO_IB_UD
	protoPsmx          Protocol = 4  // FI_PROTO_PSMX
	protoMxm           Protocol = 7  // FI_PROTO_MXM
	protoIwarpRdm      Protocol = 8  // FI_PROTO_IWARP_RDM
	protoIbRdm         Protocol = 9  // FI_PROTO_IB_RDM
	protoGni           Protocol = 10 // FI_PROTO_GNI
	protoMlx           Protocol = 13 // FI_PROTO_MLX
	protoNetworkdirect Protocol = 14 // FI_PROTO_NETWORKDIRECT
	protoPsmx2         Protocol = 15 // FI_PROTO_PSMX2
	protoMrail         Protocol = 17 // FI_PROTO_MRAIL
	protoRstream       Protocol = 18 // FI_PROTO_RSTREAM
	protoRdmaCmIbXrc   Protocol = 19 // FI_PROTO_RDMA_CM_IB_XRC
	protoEfa           Protocol = 20 // FI_PROTO_EFA
	protoPsmx3         Protocol = 21 // FI_PROTO_PSMX3
	protoOpx           Protocol = 23 // FI_PROTO_OPX
	protoCxi           Protocol = 24 // FI_PROTO_CXI
)

// Progress is a progress model (domain_attr.control_progress/data_progress).
type Progress int

// Progress models.
const (
	ProgressUnspec Progress = 0 // FI_PROGRESS_UNSPEC
	ProgressAuto   Progress = 1 // FI_PROGRESS_AUTO
	ProgressManual Progress = 2 // FI_PROGRESS_MANUAL
)

// Threading is a threading model (domain_attr.threading).
type Threading int

// Threading models.
const (
	ThreadUnspec     Threading = 0 // FI_THREAD_UNSPEC
	ThreadSafe       Threading = 1 // FI_THREAD_SAFE
	ThreadFID        Threading = 2 // FI_THREAD_FID
	ThreadDomain     Threading = 3 // FI_THREAD_DOMAIN
	ThreadCompletion Threading = 4 // FI_THREAD_COMPLETION
	ThreadEndpoint   Threading = 5 // FI_THREAD_ENDPOINT
)

// ResourceMgmt is a resource management setting (domain_attr.resource_mgmt).
type ResourceMgmt int

// Resource management settings.
const (
	RMUnspec   ResourceMgmt = 0 // FI_RM_UNSPEC
	RMDisabled ResourceMgmt = 1 // FI_RM_DISABLED
	RMEnabled  ResourceMgmt = 2 // FI_RM_ENABLED
)

// AVType is an address vector type.
type AVType int

// Address vector types.
const (
	AVUnspec AVType = 0 // FI_AV_UNSPEC
	AVMap    AVType = 1 // FI_AV_MAP
	AVTable  AVType = 2 // FI_AV_TABLE
)

// WaitObj is a wait object kind (cq/eq/cntr attr wait_obj).
//
// Unlike libfabric (FI_WAIT_NONE 0, FI_WAIT_UNSPEC 1) the zero value is
// WaitUnspec, so that a zero attribute struct opens a queue that blocking
// reads can wait on; WaitNone (no wait object) must be asked for. The other
// values, and every String, are libfabric's.
type WaitObj int

// Wait objects.
const (
	WaitUnspec    WaitObj = 0 // FI_WAIT_UNSPEC
	WaitNone      WaitObj = 1 // FI_WAIT_NONE
	WaitSet       WaitObj = 2 // FI_WAIT_SET
	WaitFD        WaitObj = 3 // FI_WAIT_FD
	WaitMutexCond WaitObj = 4 // FI_WAIT_MUTEX_COND
	WaitYield     WaitObj = 5 // FI_WAIT_YIELD
	WaitPollFD    WaitObj = 6 // FI_WAIT_POLLFD
)

// CQFormat is a completion queue entry format.
type CQFormat int

// CQ formats.
const (
	CQFormatUnspec  CQFormat = 0 // FI_CQ_FORMAT_UNSPEC
	CQFormatContext CQFormat = 1 // FI_CQ_FORMAT_CONTEXT
	CQFormatMsg     CQFormat = 2 // FI_CQ_FORMAT_MSG
	CQFormatData    CQFormat = 3 // FI_CQ_FORMAT_DATA
	CQFormatTagged  CQFormat = 4 // FI_CQ_FORMAT_TAGGED
)

// CQWaitCond is a CQ wait condition.
type CQWaitCond int

// CQ wait conditions.
const (
	CQCondNone      CQWaitCond = 0 // FI_CQ_COND_NONE
	CQCondThreshold CQWaitCond = 1 // FI_CQ_COND_THRESHOLD
)

// EventType is an EQ event (fi_eq_read's event).
type EventType uint32

// EQ events.
const (
	EventNotify       EventType = 0 // FI_NOTIFY
	EventConnReq      EventType = 1 // FI_CONNREQ
	EventConnected    EventType = 2 // FI_CONNECTED
	EventShutdown     EventType = 3 // FI_SHUTDOWN
	EventMRComplete   EventType = 4 // FI_MR_COMPLETE
	EventAVComplete   EventType = 5 // FI_AV_COMPLETE
	EventJoinComplete EventType = 6 // FI_JOIN_COMPLETE
)

// Traffic classes (tx_attr.tclass, domain_attr.tclass).
const (
	TCUnspec          uint32 = 0
	TCDSCP            uint32 = 0x100
	TCLabel           uint32 = 0x200
	TCBestEffort      uint32 = TCLabel
	TCLowLatency      uint32 = TCLabel + 1
	TCDedicatedAccess uint32 = TCLabel + 2
	TCBulkData        uint32 = TCLabel + 3
	TCScavenger       uint32 = TCLabel + 4
	TCNetworkCtrl     uint32 = TCLabel + 5
)

// TCDSCPSet returns the traffic class for a DSCP value (fi_tc_dscp_set).
func TCDSCPSet(dscp uint8) uint32 { return uint32(dscp) | TCDSCP }

// TCDSCPGet returns the DSCP value of a traffic class, or 0 (fi_tc_dscp_get).
func TCDSCPGet(tclass uint32) uint8 {
	if tclass&TCDSCP != 0 {
		return uint8(tclass)
	}
	return 0
}

// Addr is an fi_addr_t: an index or handle into an address vector.
type Addr uint64

// Special addresses.
const (
	AddrUnspec   Addr = ^Addr(0)
	AddrNotAvail Addr = ^Addr(0)
)

// SharedContext is FI_SHARED_CONTEXT, the tx/rx_ctx_cnt value requesting
// shared contexts.
const SharedContext = ^uint64(0)

// SizeMax is SIZE_MAX, the unlimited value of size attributes.
const SizeMax = ^uint64(0)

// Version builds an API version (FI_VERSION).
func Version(major, minor uint32) uint32 { return major<<16 | minor }

// APIVersion is the libfabric API version this module implements:
// FI_VERSION(1, 17). It is a constant, like FI_VERSION(FI_MAJOR_VERSION,
// FI_MINOR_VERSION) in C.
const APIVersion uint32 = 1<<16 | 17

// Options for GetOpt/SetOpt at level FI_OPT_ENDPOINT.
const (
	OptEndpoint = 0

	OptMinMultiRecv  = 0
	OptCMDataSize    = 1
	OptBufferedMin   = 2
	OptBufferedLimit = 3
	OptSendBufSize   = 4
	OptRecvBufSize   = 5
	OptTxSize        = 6
	OptRxSize        = 7
	OptHMEMP2P       = 8
	OptXPUTrigger    = 9
)
