package fabric

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// Two fake providers for the GetInfo tests. They answer only while a test
// has switched them on (infoFakeOn), so that other tests of this package
// that call GetInfo never see them.
//
//   - infotest-a (version 3.1): an IP provider with two configurations, RDM
//     and MSG, auto progress, no mode requirement but an optional
//     FI_BUFFERED_RECV it drops when the application does not offer it,
//     no mr_mode, transmit op_flags. It resolves node/service like an IP
//     provider ("localhost" by name, numeric addresses, unknown names fail).
//   - infotest-b (version 2.0): an RDM provider that needs FI_CONTEXT and
//     FI_MR_LOCAL|FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY, manual
//     progress only, FI_THREAD_DOMAIN, no op_flags. It ignores node and
//     service (so the root must drop its Infos when an address was asked
//     for), leaves FabricAttr.ProvName empty, returns its templates
//     without copying them, scribbles on the hints it receives and claims
//     FI_DIRECTED_RECV without listing it in its receive attributes.
var infoFakeOn atomic.Bool

const (
	infoFakeA = "infotest-a"
	infoFakeB = "infotest-b"
)

// infoFakeEnable switches the fake providers on for the duration of t.
func infoFakeEnable(t *testing.T) {
	t.Helper()
	infoFakeOn.Store(true)
	t.Cleanup(func() { infoFakeOn.Store(false) })
}

type infoFakeProv struct {
	name    string
	version uint32
	get     func(version uint32, node, service string, flags Flags, hints *Info) ([]*Info, error)
}

func (p *infoFakeProv) Name() string    { return p.name }
func (p *infoFakeProv) Version() uint32 { return p.version }
func (p *infoFakeProv) GetInfo(version uint32, node, service string, flags Flags, hints *Info) ([]*Info, error) {
	if !infoFakeOn.Load() {
		return nil, provider.ENODATA
	}
	return p.get(version, node, service, flags, hints)
}
func (p *infoFakeProv) Fabric(*FabricAttr) (provider.Fabric, error) { return nil, provider.ENOSYS }

// Params makes infotest-a a provider.ParamLister.
type infoFakeParamProv struct{ infoFakeProv }

func (p *infoFakeParamProv) Params() []provider.Param {
	return []provider.Param{{Name: "FI_INFOTEST_A_IFACE", Type: provider.ParamString, Help: "Specify interface name"}}
}

func init() {
	provider.Register(&infoFakeParamProv{infoFakeProv{name: infoFakeA, version: Version(3, 1), get: infoFakeAGet}})
	provider.Register(&infoFakeProv{name: infoFakeB, version: Version(2, 0), get: infoFakeBGet})
}

// infoSockaddrIn builds Linux sockaddr_in bytes.
func infoSockaddrIn(ip [4]byte, port uint16) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint16(b, 2)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[4:], ip[:])
	return b
}

// infoSockaddrIn6 builds Linux sockaddr_in6 bytes.
func infoSockaddrIn6(ip [16]byte, port uint16) []byte {
	b := make([]byte, 28)
	binary.LittleEndian.PutUint16(b, 10)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[8:], ip[:])
	return b
}

const infoFakeACaps = CapMsg | CapTagged | CapRMA | CapAtomic | CapRead | CapWrite | CapRecv | CapSend |
	CapRemoteRead | CapRemoteWrite | CapMultiRecv | CapSource | CapDirectedRecv | CapLocalComm |
	CapRemoteComm | CapRMAEvent

const infoFakeAOrder = OrderRAR | OrderRAW | OrderRAS | OrderWAW | OrderWAS | OrderSAW | OrderSAS

func infoFakeATemplates() []*Info {
	rdm := &Info{
		Caps:       infoFakeACaps,
		AddrFormat: SockAddrIn,
		SrcAddr:    infoSockaddrIn([4]byte{127, 0, 0, 1}, 0),
		TxAttr: &TxAttr{
			Caps: CapMsg | CapTagged | CapRMA | CapAtomic | CapRead | CapWrite | CapSend,
			OpFlags: FlagInject | FlagCompletion | FlagInjectComplete | FlagTransmitComplete |
				FlagDeliveryComplete,
			MsgOrder: infoFakeAOrder, CompOrder: provider.CompOrderNone,
			InjectSize: 64, Size: 1024, IOVLimit: 4, RMAIOVLimit: 4,
		},
		RxAttr: &RxAttr{
			Caps: CapMsg | CapTagged | CapRMA | CapAtomic | CapRecv | CapRemoteRead | CapRemoteWrite |
				CapMultiRecv | CapSource | CapDirectedRecv | CapRMAEvent,
			OpFlags:  FlagMultiRecv | FlagCompletion,
			MsgOrder: infoFakeAOrder, Size: 1024, IOVLimit: 4,
		},
		EPAttr: &EPAttr{
			Type: EPRDM, Protocol: provider.ProtoXNet, ProtocolVersion: 1, MaxMsgSize: provider.SizeMax,
			MaxOrderRAWSize: 4096, MaxOrderWAWSize: 4096, MemTagFormat: 0xaaaaaaaaaaaaaaaa,
			TxCtxCnt: 1, RxCtxCnt: 1,
		},
		DomainAttr: &DomainAttr{
			Name: "a0", Threading: ThreadSafe, ControlProgress: ProgressAuto, DataProgress: ProgressAuto,
			ResourceMgmt: RMEnabled, MRKeySize: 8, CQDataSize: 8, CQCnt: 256, EPCnt: 256,
			TxCtxCnt: 256, RxCtxCnt: 256, MaxEPTxCtx: 1, MaxEPRxCtx: 1, MaxEPSrxCtx: 1,
			CntrCnt: 16, MRIOVLimit: 1, Caps: CapLocalComm | CapRemoteComm, MRCnt: 1024,
		},
		FabricAttr: &FabricAttr{Name: "127.0.0.1/32", ProvName: infoFakeA, APIVersion: Version(1, 17)},
	}
	msg := rdm.Dup()
	msg.Caps = CapMsg | CapRMA | CapRead | CapWrite | CapRecv | CapSend | CapRemoteRead | CapRemoteWrite |
		CapLocalComm | CapRemoteComm
	msg.TxAttr.Caps = CapMsg | CapRMA | CapRead | CapWrite | CapSend
	msg.RxAttr.Caps = CapMsg | CapRMA | CapRecv | CapRemoteRead | CapRemoteWrite
	msg.EPAttr.Type = EPMsg
	msg.EPAttr.Protocol = provider.ProtoSockTCP
	return []*Info{rdm, msg}
}

// infoFakeResolve resolves node/service the way an IP provider would.
func infoFakeResolve(node, service string) ([]byte, bool) {
	ip := [4]byte{127, 0, 0, 1}
	switch node {
	case "", "localhost":
	default:
		a, err := netip.ParseAddr(node)
		if err != nil || !a.Is4() {
			return nil, false
		}
		ip = a.As4()
	}
	var port uint64
	if service != "" {
		var err error
		if port, err = strconv.ParseUint(service, 10, 16); err != nil {
			return nil, false
		}
	}
	return infoSockaddrIn(ip, uint16(port)), true
}

func infoFakeAGet(version uint32, node, service string, flags Flags, hints *Info) ([]*Info, error) {
	out := infoFakeATemplates()
	for _, info := range out {
		// Optional mode: kept only if the application offers it.
		if hints == nil || hints.Mode&ModeBufferedRecv != 0 {
			info.Mode |= ModeBufferedRecv
		}
		if node == "" && service == "" {
			continue
		}
		addr, ok := infoFakeResolve(node, service)
		if !ok {
			return nil, provider.ENODATA
		}
		if flags&FlagSource != 0 {
			info.SrcAddr = addr
		} else {
			info.DestAddr = addr
		}
	}
	return out, nil
}

var infoFakeBTemplate = &Info{
	// FI_DIRECTED_RECV is claimed but missing from the receive attributes:
	// an inconsistent provider the root must not return for it.
	Caps: CapMsg | CapTagged | CapRMA | CapRead | CapWrite | CapRecv | CapSend | CapRemoteRead |
		CapRemoteWrite | CapLocalComm | CapDirectedRecv,
	Mode:       ModeContext,
	AddrFormat: SockAddrIn6,
	SrcAddr:    infoSockaddrIn6([16]byte{15: 1}, 0),
	TxAttr: &TxAttr{Caps: CapMsg | CapTagged | CapRMA | CapRead | CapWrite | CapSend, MsgOrder: OrderSAS,
		InjectSize: 32, Size: 128, IOVLimit: 1, RMAIOVLimit: 1, CompOrder: provider.CompOrderStrict},
	RxAttr: &RxAttr{Caps: CapMsg | CapTagged | CapRMA | CapRecv | CapRemoteRead | CapRemoteWrite,
		MsgOrder: OrderSAS, Size: 128, IOVLimit: 1},
	EPAttr: &EPAttr{Type: EPRDM, Protocol: provider.ProtoSHM, MaxMsgSize: 1 << 20, TxCtxCnt: 1, RxCtxCnt: 1},
	DomainAttr: &DomainAttr{Name: "b0", Threading: ThreadDomain, ControlProgress: ProgressManual,
		DataProgress: ProgressManual, ResourceMgmt: RMEnabled,
		MRMode: MRLocal | MRVirtAddr | MRAllocated | MRProvKey, MRKeySize: 8, CQDataSize: 4,
		MaxEPTxCtx: 1, MaxEPRxCtx: 1, MRIOVLimit: 1},
	FabricAttr: &FabricAttr{Name: "shmfab"},
}

func infoFakeBGet(version uint32, node, service string, flags Flags, hints *Info) ([]*Info, error) {
	if hints != nil {
		// A careless provider: GetInfo must protect the caller's hints.
		hints.Caps = 0
		hints.Mode = ^Mode(0)
		if hints.DomainAttr != nil {
			hints.DomainAttr.Name = "scribbled"
		}
	}
	return []*Info{infoFakeBTemplate}, nil
}
