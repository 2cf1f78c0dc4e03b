package fabric

import "github.com/gofabric/fabric/provider"

// Vocabulary shared with providers (see package provider for details).
type (
	Info         = provider.Info
	TxAttr       = provider.TxAttr
	RxAttr       = provider.RxAttr
	EPAttr       = provider.EPAttr
	DomainAttr   = provider.DomainAttr
	FabricAttr   = provider.FabricAttr
	Caps         = provider.Caps
	Flags        = provider.Flags
	Mode         = provider.Mode
	Order        = provider.Order
	CompOrder    = provider.CompOrder
	MRMode       = provider.MRMode
	EPType       = provider.EPType
	AddrFormat   = provider.AddrFormat
	Protocol     = provider.Protocol
	Progress     = provider.Progress
	Threading    = provider.Threading
	ResourceMgmt = provider.ResourceMgmt
	AVType       = provider.AVType
	WaitObj      = provider.WaitObj
	CQFormat     = provider.CQFormat
	CQWaitCond   = provider.CQWaitCond
	EventType    = provider.EventType
	Addr         = provider.Addr
	CQEntry      = provider.CQEntry
	CQErrEntry   = provider.CQErrEntry
	EQEntry      = provider.EQEntry
	EQErrEntry   = provider.EQErrEntry
	RMAIOV       = provider.RMAIOV
)

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
	ModeContext      = provider.ModeContext
	ModeMsgPrefix    = provider.ModeMsgPrefix
	ModeAsyncIOV     = provider.ModeAsyncIOV
	ModeRxCQData     = provider.ModeRxCQData
	ModeLocalMR      = provider.ModeLocalMR
	ModeContext2     = provider.ModeContext2
	ModeBufferedRecv = provider.ModeBufferedRecv
)

// Message ordering bits.
const (
	OrderNone   = provider.OrderNone
	OrderRAR    = provider.OrderRAR
	OrderRAW    = provider.OrderRAW
	OrderRAS    = provider.OrderRAS
	OrderWAR    = provider.OrderWAR
	OrderWAW    = provider.OrderWAW
	OrderWAS    = provider.OrderWAS
	OrderSAR    = provider.OrderSAR
	OrderSAW    = provider.OrderSAW
	OrderSAS    = provider.OrderSAS
	OrderStrict = provider.OrderStrict
)

// Memory registration modes.
const (
	MRBasic     = provider.MRBasic
	MRScalable  = provider.MRScalable
	MRLocal     = provider.MRLocal
	MRRaw       = provider.MRRaw
	MRVirtAddr  = provider.MRVirtAddr
	MRAllocated = provider.MRAllocated
	MRProvKey   = provider.MRProvKey
	MRMMUNotify = provider.MRMMUNotify
	MRRMAEvent  = provider.MRRMAEvent
	MREndpoint  = provider.MREndpoint
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
