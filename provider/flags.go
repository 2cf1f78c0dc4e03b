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
	CapMsg          Caps = 1 << 1
	CapRMA          Caps = 1 << 2
	CapTagged       Caps = 1 << 3
	CapAtomic       Caps = 1 << 4
	CapMulticast    Caps = 1 << 5
	CapCollective   Caps = 1 << 6
	CapRead         Caps = 1 << 8
	CapWrite        Caps = 1 << 9
	CapRecv         Caps = 1 << 10
	CapSend         Caps = 1 << 11
	CapRemoteRead   Caps = 1 << 12
	CapRemoteWrite  Caps = 1 << 13
	CapMultiRecv    Caps = 1 << 16
	CapRemoteCQData Caps = 1 << 17
	CapTrigger      Caps = 1 << 20
	CapFence        Caps = 1 << 21
	CapAVUserID     Caps = 1 << 41
	CapPeer         Caps = 1 << 43
	CapHMEM         Caps = 1 << 47
	CapVariableMsg  Caps = 1 << 48
	CapRMAPmem      Caps = 1 << 49
	CapSourceErr    Caps = 1 << 50
	CapLocalComm    Caps = 1 << 51
	CapRemoteComm   Caps = 1 << 52
	CapSharedAV     Caps = 1 << 53
	CapRMAEvent     Caps = 1 << 56
	CapSource       Caps = 1 << 57
	CapNamedRxCtx   Caps = 1 << 58
	CapDirectedRecv Caps = 1 << 59
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
	FlagMsg              Flags = 1 << 1
	FlagRMA              Flags = 1 << 2
	FlagTagged           Flags = 1 << 3
	FlagAtomic           Flags = 1 << 4
	FlagMulticast        Flags = 1 << 5
	FlagCollective       Flags = 1 << 6
	FlagRead             Flags = 1 << 8
	FlagWrite            Flags = 1 << 9
	FlagRecv             Flags = 1 << 10
	FlagSend             Flags = 1 << 11
	FlagTransmit         Flags = FlagSend
	FlagRemoteRead       Flags = 1 << 12
	FlagRemoteWrite      Flags = 1 << 13
	FlagMultiRecv        Flags = 1 << 16
	FlagRemoteCQData     Flags = 1 << 17
	FlagMore             Flags = 1 << 18
	FlagPeek             Flags = 1 << 19
	FlagTrigger          Flags = 1 << 20
	FlagFence            Flags = 1 << 21
	FlagPriority         Flags = 1 << 22
	FlagCompletion       Flags = 1 << 24
	FlagEvent            Flags = FlagCompletion
	FlagInject           Flags = 1 << 25
	FlagInjectComplete   Flags = 1 << 26
	FlagTransmitComplete Flags = 1 << 27
	FlagDeliveryComplete Flags = 1 << 28
	FlagAffinity         Flags = 1 << 29
	FlagCommitComplete   Flags = 1 << 30
	FlagMatchComplete    Flags = 1 << 31
	FlagPeerTransfer     Flags = 1 << 36
	FlagAVUserID         Flags = 1 << 41
	FlagPeer             Flags = 1 << 43
	FlagSourceErr        Flags = 1 << 50
	FlagNumericHost      Flags = 1 << 55
	FlagRMAEvent         Flags = 1 << 56
	FlagSource           Flags = 1 << 57
	FlagDiscard          Flags = 1 << 58
	FlagClaim            Flags = 1 << 59
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

var capNames = []bitName{
	{1 << 1, "FI_MSG"}, {1 << 2, "FI_RMA"}, {1 << 3, "FI_TAGGED"}, {1 << 4, "FI_ATOMIC"},
	{1 << 5, "FI_MULTICAST"}, {1 << 6, "FI_COLLECTIVE"}, {1 << 8, "FI_READ"}, {1 << 9, "FI_WRITE"},
	{1 << 10, "FI_RECV"}, {1 << 11, "FI_SEND"}, {1 << 12, "FI_REMOTE_READ"}, {1 << 13, "FI_REMOTE_WRITE"},
	{1 << 16, "FI_MULTI_RECV"}, {1 << 17, "FI_REMOTE_CQ_DATA"}, {1 << 20, "FI_TRIGGER"}, {1 << 21, "FI_FENCE"},
	{1 << 41, "FI_AV_USER_ID"}, {1 << 43, "FI_PEER"},
	{1 << 48, "FI_VARIABLE_MSG"}, {1 << 49, "FI_RMA_PMEM"}, {1 << 50, "FI_SOURCE_ERR"},
	{1 << 51, "FI_LOCAL_COMM"}, {1 << 52, "FI_REMOTE_COMM"}, {1 << 53, "FI_SHARED_AV"},
	{1 << 56, "FI_RMA_EVENT"}, {1 << 57, "FI_SOURCE"}, {1 << 58, "FI_NAMED_RX_CTX"},
	{1 << 59, "FI_DIRECTED_RECV"}, {1 << 47, "FI_HMEM"},
}

var flagNames = []bitName{
	{1 << 1, "FI_MSG"}, {1 << 2, "FI_RMA"}, {1 << 3, "FI_TAGGED"}, {1 << 4, "FI_ATOMIC"},
	{1 << 5, "FI_MULTICAST"}, {1 << 6, "FI_COLLECTIVE"}, {1 << 8, "FI_READ"}, {1 << 9, "FI_WRITE"},
	{1 << 10, "FI_RECV"}, {1 << 11, "FI_SEND"}, {1 << 12, "FI_REMOTE_READ"}, {1 << 13, "FI_REMOTE_WRITE"},
	{1 << 16, "FI_MULTI_RECV"}, {1 << 17, "FI_REMOTE_CQ_DATA"}, {1 << 18, "FI_MORE"}, {1 << 19, "FI_PEEK"},
	{1 << 20, "FI_TRIGGER"}, {1 << 21, "FI_FENCE"}, {1 << 22, "FI_PRIORITY"}, {1 << 24, "FI_COMPLETION"},
	{1 << 25, "FI_INJECT"}, {1 << 26, "FI_INJECT_COMPLETE"}, {1 << 27, "FI_TRANSMIT_COMPLETE"},
	{1 << 28, "FI_DELIVERY_COMPLETE"}, {1 << 29, "FI_AFFINITY"}, {1 << 30, "FI_COMMIT_COMPLETE"},
	{1 << 31, "FI_MATCH_COMPLETE"}, {1 << 36, "FI_PEER_TRANSFER"}, {1 << 41, "FI_AV_USER_ID"},
	{1 << 43, "FI_PEER"}, {1 << 50, "FI_SOURCE_ERR"}, {1 << 55, "FI_NUMERICHOST"}, {1 << 56, "FI_RMA_EVENT"},
	{1 << 57, "FI_SOURCE"}, {1 << 58, "FI_DISCARD"}, {1 << 59, "FI_CLAIM"},
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
func (c Caps) Names() []string { return names(uint64(c), capNames) }

// String returns the names of the bits in c joined by '|', or "0".
func (c Caps) String() string { return join(uint64(c), capNames, "0") }

// ParseCaps parses "FI_MSG|FI_TAGGED" (or comma-separated) into Caps.
func ParseCaps(s string) (Caps, bool) { v, ok := parseNames(s, capNames); return Caps(v), ok }

// Names returns the libfabric names of the bits in f.
func (f Flags) Names() []string { return names(uint64(f), flagNames) }

// String returns the names of the bits in f joined by '|', or "0".
func (f Flags) String() string { return join(uint64(f), flagNames, "0") }

// ParseFlags parses "FI_INJECT|FI_COMPLETION" into Flags.
func ParseFlags(s string) (Flags, bool) { v, ok := parseNames(s, flagNames); return Flags(v), ok }

// Mode is a set of mode bits (fi_info.mode).
type Mode uint64

// Mode bits.
const (
	ModeContext         Mode = 1 << 59
	ModeMsgPrefix       Mode = 1 << 58
	ModeAsyncIOV        Mode = 1 << 57
	ModeRxCQData        Mode = 1 << 56
	ModeLocalMR         Mode = 1 << 55
	ModeNotifyFlagsOnly Mode = 1 << 54
	ModeRestrictedComp  Mode = 1 << 53
	ModeContext2        Mode = 1 << 52
	ModeBufferedRecv    Mode = 1 << 51
	ModePeerTransfer    Mode = 1 << 36
	// ModeAll is every mode bit; fi_info passes it when -m is not given.
	ModeAll Mode = ModeContext | ModeMsgPrefix | ModeAsyncIOV | ModeRxCQData | ModeLocalMR |
		ModeNotifyFlagsOnly | ModeRestrictedComp | ModeContext2 | ModeBufferedRecv
)

var modeNames = []bitName{
	{1 << 59, "FI_CONTEXT"}, {1 << 58, "FI_MSG_PREFIX"}, {1 << 57, "FI_ASYNC_IOV"}, {1 << 56, "FI_RX_CQ_DATA"},
	{1 << 55, "FI_LOCAL_MR"}, {1 << 54, "FI_NOTIFY_FLAGS_ONLY"}, {1 << 53, "FI_RESTRICTED_COMP"},
	{1 << 52, "FI_CONTEXT2"}, {1 << 51, "FI_BUFFERED_RECV"}, {1 << 36, "FI_PEER_TRANSFER"},
}

// Names returns the libfabric names of the mode bits.
func (m Mode) Names() []string { return names(uint64(m), modeNames) }

// String returns the mode bit names joined by '|', or "0".
func (m Mode) String() string { return join(uint64(m), modeNames, "0") }

// ParseMode parses "FI_CONTEXT|FI_MSG_PREFIX".
func ParseMode(s string) (Mode, bool) { v, ok := parseNames(s, modeNames); return Mode(v), ok }

// Order is a set of message ordering bits (tx/rx msg_order).
type Order uint64

// Message ordering bits.
const (
	OrderNone      Order = 0
	OrderRAR       Order = 1 << 0
	OrderRAW       Order = 1 << 1
	OrderRAS       Order = 1 << 2
	OrderWAR       Order = 1 << 3
	OrderWAW       Order = 1 << 4
	OrderWAS       Order = 1 << 5
	OrderSAR       Order = 1 << 6
	OrderSAW       Order = 1 << 7
	OrderSAS       Order = 1 << 8
	OrderStrict    Order = 0x1FF
	OrderData      Order = 1 << 16
	OrderRMARAR    Order = 1 << 32
	OrderRMARAW    Order = 1 << 33
	OrderRMAWAR    Order = 1 << 34
	OrderRMAWAW    Order = 1 << 35
	OrderAtomicRAR Order = 1 << 36
	OrderAtomicRAW Order = 1 << 37
	OrderAtomicWAR Order = 1 << 38
	OrderAtomicWAW Order = 1 << 39
)

var orderNames = []bitName{
	{1 << 0, "FI_ORDER_RAR"}, {1 << 1, "FI_ORDER_RAW"}, {1 << 2, "FI_ORDER_RAS"}, {1 << 3, "FI_ORDER_WAR"},
	{1 << 4, "FI_ORDER_WAW"}, {1 << 5, "FI_ORDER_WAS"}, {1 << 6, "FI_ORDER_SAR"}, {1 << 7, "FI_ORDER_SAW"},
	{1 << 8, "FI_ORDER_SAS"}, {1 << 32, "FI_ORDER_RMA_RAR"}, {1 << 33, "FI_ORDER_RMA_RAW"},
	{1 << 34, "FI_ORDER_RMA_WAR"}, {1 << 35, "FI_ORDER_RMA_WAW"}, {1 << 36, "FI_ORDER_ATOMIC_RAR"},
	{1 << 37, "FI_ORDER_ATOMIC_RAW"}, {1 << 38, "FI_ORDER_ATOMIC_WAR"}, {1 << 39, "FI_ORDER_ATOMIC_WAW"},
	{1 << 16, "FI_ORDER_DATA"},
}

// Names returns the ordering bit names ("FI_ORDER_NONE" for none).
func (o Order) Names() []string {
	if o == 0 {
		return []string{"FI_ORDER_NONE"}
	}
	return names(uint64(o), orderNames)
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
	MRBasic      MRMode = 1 << 0
	MRScalable   MRMode = 1 << 1
	MRLocal      MRMode = 1 << 2
	MRRaw        MRMode = 1 << 3
	MRVirtAddr   MRMode = 1 << 4
	MRAllocated  MRMode = 1 << 5
	MRProvKey    MRMode = 1 << 6
	MRMMUNotify  MRMode = 1 << 7
	MRRMAEvent   MRMode = 1 << 8
	MREndpoint   MRMode = 1 << 9
	MRHMEM       MRMode = 1 << 10
	MRCollective MRMode = 1 << 11
	// MRBasicMap is OFI_MR_BASIC_MAP: ALLOCATED|PROV_KEY|VIRT_ADDR.
	MRBasicMap MRMode = MRAllocated | MRProvKey | MRVirtAddr
)

var mrModeNames = []bitName{
	{1 << 0, "FI_MR_BASIC"}, {1 << 1, "FI_MR_SCALABLE"}, {1 << 2, "FI_MR_LOCAL"}, {1 << 3, "FI_MR_RAW"},
	{1 << 4, "FI_MR_VIRT_ADDR"}, {1 << 5, "FI_MR_ALLOCATED"}, {1 << 6, "FI_MR_PROV_KEY"},
	{1 << 7, "FI_MR_MMU_NOTIFY"}, {1 << 8, "FI_MR_RMA_EVENT"}, {1 << 9, "FI_MR_ENDPOINT"},
	{1 << 10, "FI_MR_HMEM"}, {1 << 11, "FI_MR_COLLECTIVE"},
}

// Names returns the mr_mode bit names (empty for none, as fi_info prints "[  ]").
func (m MRMode) Names() []string { return names(uint64(m), mrModeNames) }

// String returns the mr_mode names joined by '|', or "FI_MR_UNSPEC".
func (m MRMode) String() string { return join(uint64(m), mrModeNames, "FI_MR_UNSPEC") }

type enumName struct {
	v    int
	name string
}

func enumString(v int, table []enumName) string {
	for _, e := range table {
		if e.v == v {
			return e.name
		}
	}
	return "Unknown(" + itoa(v) + ")"
}

func enumParse(s string, table []enumName) (int, bool) {
	for _, e := range table {
		if e.name == s {
			return e.v, true
		}
	}
	return 0, false
}

// EPType is an endpoint type (ep_attr.type).
type EPType int

// Endpoint types.
const (
	EPUnspec     EPType = 0
	EPMsg        EPType = 1
	EPDgram      EPType = 2
	EPRDM        EPType = 3
	EPSockStream EPType = 4
	EPSockDgram  EPType = 5
)

var epTypeNames = []enumName{{0, "FI_EP_UNSPEC"}, {1, "FI_EP_MSG"}, {2, "FI_EP_DGRAM"}, {3, "FI_EP_RDM"},
	{4, "FI_EP_SOCK_STREAM"}, {5, "FI_EP_SOCK_DGRAM"}}

// String returns the libfabric name of the value.
func (t EPType) String() string { return enumString(int(t), epTypeNames) }

// ParseEPType parses "FI_EP_RDM".
func ParseEPType(s string) (EPType, bool) { v, ok := enumParse(s, epTypeNames); return EPType(v), ok }

// AddrFormat is an address format (fi_info.addr_format).
type AddrFormat uint32

// Address formats.
const (
	FormatUnspec AddrFormat = 0
	SockAddr     AddrFormat = 1
	SockAddrIn   AddrFormat = 2
	SockAddrIn6  AddrFormat = 3
	SockAddrIB   AddrFormat = 4
	AddrPSMX     AddrFormat = 5
	AddrGNI      AddrFormat = 6
	AddrBGQ      AddrFormat = 7
	AddrMLX      AddrFormat = 8
	AddrStr      AddrFormat = 9
	AddrPSMX2    AddrFormat = 10
	AddrIBUD     AddrFormat = 11
	AddrEFA      AddrFormat = 12
	AddrPSMX3    AddrFormat = 13
	AddrOPX      AddrFormat = 14
	AddrCXI      AddrFormat = 15
)

var addrFormatNames = []enumName{{0, "FI_FORMAT_UNSPEC"}, {1, "FI_SOCKADDR"}, {2, "FI_SOCKADDR_IN"},
	{3, "FI_SOCKADDR_IN6"}, {4, "FI_SOCKADDR_IB"}, {5, "FI_ADDR_PSMX"}, {6, "FI_ADDR_GNI"}, {7, "FI_ADDR_BGQ"},
	{8, "FI_ADDR_MLX"}, {9, "FI_ADDR_STR"}, {10, "FI_ADDR_PSMX2"}, {11, "FI_ADDR_IB_UD"}, {12, "FI_ADDR_EFA"},
	{13, "FI_ADDR_PSMX3"}, {14, "FI_ADDR_OPX"}, {15, "FI_ADDR_CXI"}}

// String returns the libfabric name of the value.
func (f AddrFormat) String() string { return enumString(int(f), addrFormatNames) }

// ParseAddrFormat parses "FI_SOCKADDR_IN".
func ParseAddrFormat(s string) (AddrFormat, bool) {
	v, ok := enumParse(s, addrFormatNames)
	return AddrFormat(v), ok
}

// Protocol is an endpoint protocol (ep_attr.protocol).
type Protocol uint32

// Protocols.
const (
	ProtoUnspec  Protocol = 0
	ProtoUDP     Protocol = 5
	ProtoSockTCP Protocol = 6
	ProtoRXM     Protocol = 11
	ProtoRXD     Protocol = 12
	ProtoSHM     Protocol = 16
	ProtoRXMTCP  Protocol = 22
	ProtoXNet    Protocol = 25
)

var protoNames = []enumName{{0, "FI_PROTO_UNSPEC"}, {1, "FI_PROTO_RDMA_CM_IB_RC"}, {2, "FI_PROTO_IWARP"},
	{3, "FI_PROTO_IB_UD"}, {4, "FI_PROTO_PSMX"}, {5, "FI_PROTO_UDP"}, {6, "FI_PROTO_SOCK_TCP"},
	{7, "FI_PROTO_MXM"}, {8, "FI_PROTO_IWARP_RDM"}, {9, "FI_PROTO_IB_RDM"}, {10, "FI_PROTO_GNI"},
	{11, "FI_PROTO_RXM"}, {12, "FI_PROTO_RXD"}, {13, "FI_PROTO_MLX"}, {14, "FI_PROTO_NETWORKDIRECT"},
	{15, "FI_PROTO_PSMX2"}, {16, "FI_PROTO_SHM"}, {17, "FI_PROTO_MRAIL"}, {18, "FI_PROTO_RSTREAM"},
	{19, "FI_PROTO_RDMA_CM_IB_XRC"}, {20, "FI_PROTO_EFA"}, {21, "FI_PROTO_PSMX3"}, {22, "FI_PROTO_RXM_TCP"},
	{23, "FI_PROTO_OPX"}, {24, "FI_PROTO_CXI"}, {25, "FI_PROTO_XNET"}}

// String returns the libfabric name of the value.
func (p Protocol) String() string { return enumString(int(p), protoNames) }

// Progress is a progress model (domain_attr.control_progress/data_progress).
type Progress int

// Progress models.
const (
	ProgressUnspec Progress = 0
	ProgressAuto   Progress = 1
	ProgressManual Progress = 2
)

var progressNames = []enumName{{0, "FI_PROGRESS_UNSPEC"}, {1, "FI_PROGRESS_AUTO"}, {2, "FI_PROGRESS_MANUAL"}}

// String returns the libfabric name of the value.
func (p Progress) String() string { return enumString(int(p), progressNames) }

// Threading is a threading model (domain_attr.threading).
type Threading int

// Threading models.
const (
	ThreadUnspec     Threading = 0
	ThreadSafe       Threading = 1
	ThreadFID        Threading = 2
	ThreadDomain     Threading = 3
	ThreadCompletion Threading = 4
	ThreadEndpoint   Threading = 5
)

var threadNames = []enumName{{0, "FI_THREAD_UNSPEC"}, {1, "FI_THREAD_SAFE"}, {2, "FI_THREAD_FID"},
	{3, "FI_THREAD_DOMAIN"}, {4, "FI_THREAD_COMPLETION"}, {5, "FI_THREAD_ENDPOINT"}}

// String returns the libfabric name of the value.
func (t Threading) String() string { return enumString(int(t), threadNames) }

// ResourceMgmt is a resource management setting (domain_attr.resource_mgmt).
type ResourceMgmt int

// Resource management settings.
const (
	RMUnspec   ResourceMgmt = 0
	RMDisabled ResourceMgmt = 1
	RMEnabled  ResourceMgmt = 2
)

var rmNames = []enumName{{0, "FI_RM_UNSPEC"}, {1, "FI_RM_DISABLED"}, {2, "FI_RM_ENABLED"}}

// String returns the libfabric name of the value.
func (r ResourceMgmt) String() string { return enumString(int(r), rmNames) }

// AVType is an address vector type.
type AVType int

// Address vector types.
const (
	AVUnspec AVType = 0
	AVMap    AVType = 1
	AVTable  AVType = 2
)

var avTypeNames = []enumName{{0, "FI_AV_UNSPEC"}, {1, "FI_AV_MAP"}, {2, "FI_AV_TABLE"}}

// String returns the libfabric name of the value.
func (t AVType) String() string { return enumString(int(t), avTypeNames) }

// WaitObj is a wait object kind (cq/eq/cntr attr wait_obj).
//
// Unlike libfabric (FI_WAIT_NONE 0, FI_WAIT_UNSPEC 1) the zero value is
// WaitUnspec, so that a zero attribute struct opens a queue that blocking
// reads can wait on; WaitNone (no wait object) must be asked for. The other
// values, and every String, are libfabric's.
type WaitObj int

// Wait objects.
const (
	WaitUnspec    WaitObj = 0
	WaitNone      WaitObj = 1
	WaitSet       WaitObj = 2
	WaitFD        WaitObj = 3
	WaitMutexCond WaitObj = 4
	WaitYield     WaitObj = 5
	WaitPollFD    WaitObj = 6
)

var waitNames = []enumName{{0, "FI_WAIT_UNSPEC"}, {1, "FI_WAIT_NONE"}, {2, "FI_WAIT_SET"}, {3, "FI_WAIT_FD"},
	{4, "FI_WAIT_MUTEX_COND"}, {5, "FI_WAIT_YIELD"}, {6, "FI_WAIT_POLLFD"}}

// String returns the libfabric name of the value.
func (w WaitObj) String() string { return enumString(int(w), waitNames) }

// CQFormat is a completion queue entry format.
type CQFormat int

// CQ formats.
const (
	CQFormatUnspec  CQFormat = 0
	CQFormatContext CQFormat = 1
	CQFormatMsg     CQFormat = 2
	CQFormatData    CQFormat = 3
	CQFormatTagged  CQFormat = 4
)

var cqFormatNames = []enumName{{0, "FI_CQ_FORMAT_UNSPEC"}, {1, "FI_CQ_FORMAT_CONTEXT"}, {2, "FI_CQ_FORMAT_MSG"},
	{3, "FI_CQ_FORMAT_DATA"}, {4, "FI_CQ_FORMAT_TAGGED"}}

// String returns the libfabric name of the value.
func (f CQFormat) String() string { return enumString(int(f), cqFormatNames) }

// CQWaitCond is a CQ wait condition.
type CQWaitCond int

// CQ wait conditions.
const (
	CQCondNone      CQWaitCond = 0
	CQCondThreshold CQWaitCond = 1
)

// String returns the libfabric name of the value.
func (c CQWaitCond) String() string {
	return enumString(int(c), []enumName{{0, "FI_CQ_COND_NONE"}, {1, "FI_CQ_COND_THRESHOLD"}})
}

// EventType is an EQ event (fi_eq_read's event).
type EventType uint32

// EQ events.
const (
	EventNotify       EventType = 0
	EventConnReq      EventType = 1
	EventConnected    EventType = 2
	EventShutdown     EventType = 3
	EventMRComplete   EventType = 4
	EventAVComplete   EventType = 5
	EventJoinComplete EventType = 6
)

// String returns the libfabric name of the value.
func (e EventType) String() string {
	return enumString(int(e), []enumName{{0, "FI_NOTIFY"}, {1, "FI_CONNREQ"}, {2, "FI_CONNECTED"},
		{3, "FI_SHUTDOWN"}, {4, "FI_MR_COMPLETE"}, {5, "FI_AV_COMPLETE"}, {6, "FI_JOIN_COMPLETE"}})
}

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

// APIVersion is the libfabric API version this module implements (1.17).
var APIVersion = Version(1, 17)

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
