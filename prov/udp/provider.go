package udp

import (
	"github.com/gofabric/fabric/internal/ipaddr"

	"github.com/gofabric/fabric/provider"
)

// Provider limits, as libfabric 1.17's udp provider reports them
// (`fi_info -p udp -t FI_EP_DGRAM -v`).
const (
	// Name is the provider name.
	Name = "udp"
	// MaxMsgSize is ep_attr.max_msg_size (and tx_attr.inject_size): one
	// Ethernet-MTU UDP payload, for IPv4 and IPv6 alike.
	MaxMsgSize = 1472
	// InjectSize is tx_attr.inject_size.
	InjectSize = MaxMsgSize
	// QueueSize is tx_attr.size and rx_attr.size.
	QueueSize = 1024
	// IOVLimit is tx_attr.iov_limit and rx_attr.iov_limit.
	IOVLimit = 4
	// MaxUnexpected bounds the datagrams an endpoint buffers while no
	// receive matches them; beyond it datagrams are dropped (DGRAM
	// endpoints are unreliable).
	MaxUnexpected = 256
	// ProgressBudget is the most datagrams one Progress call receives.
	ProgressBudget = 16

	envIface = "FI_UDP_IFACE"

	defaultFabricName = "UDP-IP"
	defaultDomainName = "udp"
)

// Capabilities. FI_MULTICAST is not offered (no fi_join). FI_NAMED_RX_CTX
// (scalable.go) is a transmit capability: the initiator names the receive
// context (fabtests' fi_getinfo_test holds rx_attr to the others).
const (
	txCaps     = provider.CapMsg | provider.CapSend | provider.CapNamedRxCtx
	rxCaps     = provider.CapMsg | provider.CapRecv | provider.CapSource | provider.CapSourceErr | provider.CapDirectedRecv | provider.CapMultiRecv
	domainCaps = provider.CapLocalComm | provider.CapRemoteComm
	infoCaps   = txCaps | rxCaps | domainCaps
)

// Version is the provider version, FI_VERSION(117, 0): "117.0" as
// libfabric 1.17's fi_info prints it.
const Version uint32 = 117 << 16

func init() { provider.Register(udpProvider{}) }

type udpProvider struct{}

var (
	_ provider.Provider    = udpProvider{}
	_ provider.AddrHandler = udpProvider{}
	_ provider.ParamLister = udpProvider{}
)

func (udpProvider) Name() string    { return Name }
func (udpProvider) Version() uint32 { return Version }

// Params lists the environment variables the provider reads.
func (udpProvider) Params() []provider.Param {
	return []provider.Param{{Name: envIface, Type: provider.ParamString, Help: "Specify interface name"}}
}

// baseInfo is the provider's fi_info before addressing, with the progress
// models the hints ask for. Data progress defaults to FI_PROGRESS_MANUAL:
// progress runs inline in the application's CQ reads, busy-polling the
// non-blocking socket, which is what reaches libfabric's latency on this
// kind of machine (anchors §5.2-5.4); FI_PROGRESS_AUTO starts a goroutine
// per endpoint that parks in the network poller.
func baseInfo(hints *provider.Info) *provider.Info {
	info := baseInfoAll(hints)
	// FI_SOURCE_ERR changes what completions look like: only when asked for.
	if hints == nil || hints.Caps&provider.CapSourceErr == 0 {
		info.Caps &^= provider.CapSourceErr
		info.RxAttr.Caps &^= provider.CapSourceErr
	}
	return info
}

func baseInfoAll(hints *provider.Info) *provider.Info {
	ctrl, data := provider.ProgressAuto, provider.ProgressManual
	if hints != nil && hints.DomainAttr != nil {
		if p := hints.DomainAttr.ControlProgress; p == provider.ProgressAuto || p == provider.ProgressManual {
			ctrl = p
		}
		if p := hints.DomainAttr.DataProgress; p == provider.ProgressAuto || p == provider.ProgressManual {
			data = p
		}
	}
	return &provider.Info{
		Caps: infoCaps,
		TxAttr: &provider.TxAttr{
			Caps:       txCaps,
			CompOrder:  provider.CompOrderStrict,
			InjectSize: InjectSize,
			Size:       QueueSize,
			IOVLimit:   IOVLimit,
		},
		RxAttr: &provider.RxAttr{
			Caps:              rxCaps,
			CompOrder:         provider.CompOrderStrict,
			TotalBufferedRecv: totalBufferedRecv,
			Size:              QueueSize,
			IOVLimit:          IOVLimit,
		},
		EPAttr: &provider.EPAttr{
			Type:       provider.EPDgram,
			Protocol:   provider.ProtoUDP,
			MaxMsgSize: MaxMsgSize,
			TxCtxCnt:   1,
			RxCtxCnt:   1,
		},
		DomainAttr: &provider.DomainAttr{
			Name:            defaultDomainName,
			Threading:       provider.ThreadSafe,
			ControlProgress: ctrl,
			DataProgress:    data,
			ResourceMgmt:    provider.RMEnabled,
			AVType:          provider.AVUnspec,
			MRMode:          0,
			MRKeySize:       8,
			CQDataSize:      0,
			CQCnt:           256,
			EPCnt:           256,
			TxCtxCnt:        256,
			RxCtxCnt:        256,
			MaxEPTxCtx:      MaxEPCtx,
			MaxEPRxCtx:      MaxEPCtx,
			CntrCnt:         0,
			MaxEPStxCtx:     256, // stx.go; one STX may serve every endpoint
			MaxEPSrxCtx:     256,
			Caps:            domainCaps,
		},
		FabricAttr: &provider.FabricAttr{
			Name:        defaultFabricName,
			ProvName:    Name,
			ProvVersion: Version,
			APIVersion:  provider.APIVersion,
		},
	}
}

// GetInfo returns one Info per local interface address (FI_UDP_IFACE restricts
// the interface), or one Info for the given node/service or addresses,
// resolved as libfabric's util_getinfo does (see ipaddr.InfoConfig.GetInfo).
func (udpProvider) GetInfo(version uint32, node, service string, flags provider.Flags,
	hints *provider.Info) ([]*provider.Info, error) {
	return infoConfig.GetInfo(version, node, service, flags, hints)
}

var infoConfig = ipaddr.InfoConfig{Network: "udp", EPType: provider.EPDgram, IfaceEnv: envIface, Base: baseInfo, Log: log}

// log is the provider's logger (FI_LOG_LEVEL, FI_LOG_PROV=udp, ...).
var log = provider.NewLogger(Name)

// Fabric opens a fabric.
func (udpProvider) Fabric(attr *provider.FabricAttr) (provider.Fabric, error) {
	return &fabric{}, nil
}

type fabric struct{}

func (*fabric) Domain(info *provider.Info) (provider.Domain, error) {
	if info != nil && info.EPAttr != nil && info.EPAttr.Type != provider.EPUnspec &&
		info.EPAttr.Type != provider.EPDgram {
		return nil, provider.EINVAL
	}
	return &domain{}, nil
}

func (*fabric) Close() error { return nil }

type domain struct{}

func (*domain) Endpoint(info *provider.Info) (provider.Endpoint, error) { return newEndpoint(info) }

func (*domain) Close() error { return nil }
