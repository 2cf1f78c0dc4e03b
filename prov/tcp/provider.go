package tcp

import (
	"github.com/gofabric/fabric/internal/ipaddr"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Provider limits, as libfabric 1.17's tcp provider reports them for
// FI_EP_MSG (`FI_TCP_IFACE=lo fi_info -p tcp -t FI_EP_MSG -v`).
const (
	// Name is the provider name.
	Name = "tcp"
	// InjectSize is tx_attr.inject_size.
	InjectSize = 128
	// DefaultQueueSize is tx_attr.size and rx_attr.size (FI_TCP_TX_SIZE,
	// FI_TCP_RX_SIZE) when the hints name no size.
	DefaultQueueSize = 256
	// MaxTxSize and MaxRxSize are the largest tx_attr.size and
	// rx_attr.size hints accepted, as libfabric's tcp does: it reports
	// the default sizes but checks hints against these (ofi_rxm, layered
	// over tcp, asks for an rx size of 4096).
	MaxTxSize = 1024
	MaxRxSize = 65536
	// IOVLimit is tx/rx_attr.iov_limit and tx_attr.rma_iov_limit.
	IOVLimit = 4
	// CMDataSize is FI_OPT_CM_DATA_SIZE (read-only).
	CMDataSize = tcpwire.MaxCMData
	// CQDataSize is domain_attr.cq_data_size.
	CQDataSize = 8
	// Backlog is the listen backlog of passive endpoints.
	Backlog = 4096

	envIface     = "FI_TCP_IFACE"
	envPortLow   = "FI_TCP_PORT_LOW_RANGE"
	envPortHigh  = "FI_TCP_PORT_HIGH_RANGE"
	envTxSize    = "FI_TCP_TX_SIZE"
	envRxSize    = "FI_TCP_RX_SIZE"
	envNoDelay   = "FI_TCP_NODELAY"
	envLoopCC    = "FI_TCP_LOOPBACK_CC"
	maxQueueSize = 1 << 16
)

// Capabilities, as libfabric's tcp reports them for FI_EP_MSG. FI_TAGGED
// (tagged messages matched by the receive queue, libfabric's op 1 frames),
// FI_MULTI_RECV and FI_FENCE are supported too but offered only when the
// hints ask for them, so that a query without hints lists what libfabric
// lists.
const (
	txCaps     = provider.CapMsg | provider.CapRMA | provider.CapRead | provider.CapWrite | provider.CapSend | provider.CapRMAPmem
	rxCaps     = provider.CapMsg | provider.CapRMA | provider.CapRecv | provider.CapRemoteRead | provider.CapRemoteWrite | provider.CapRMAPmem | provider.CapRMAEvent
	domainCaps = provider.CapLocalComm | provider.CapRemoteComm
	infoCaps   = txCaps | rxCaps | domainCaps

	extraTxCaps = provider.CapTagged | provider.CapFence
	extraRxCaps = provider.CapTagged | provider.CapMultiRecv
)

const msgOrder = provider.OrderRAR | provider.OrderRAW | provider.OrderRAS | provider.OrderWAW | provider.OrderWAS |
	provider.OrderSAW | provider.OrderSAS | provider.OrderRMARAR | provider.OrderRMARAW | provider.OrderRMAWAW |
	provider.OrderAtomicRAR | provider.OrderAtomicRAW | provider.OrderAtomicWAW

// Version is the provider version (117.0, as libfabric 1.17's fi_info
// prints it).
var Version = provider.Version(117, 0)

func init() { provider.Register(tcpProvider{}) }

type tcpProvider struct{}

var (
	_ provider.Provider    = tcpProvider{}
	_ provider.AddrHandler = tcpProvider{}
	_ provider.ParamLister = tcpProvider{}
)

func (tcpProvider) Name() string    { return Name }
func (tcpProvider) Version() uint32 { return Version }

// Params lists the environment variables the provider reads.
func (tcpProvider) Params() []provider.Param {
	return []provider.Param{
		{Name: envIface, Type: provider.ParamString, Help: "Specify interface name"},
		{Name: envPortLow, Type: provider.ParamInt, Help: "define port low range"},
		{Name: envPortHigh, Type: provider.ParamInt, Help: "define port high range"},
		{Name: envTxSize, Type: provider.ParamSize, Help: "define default tx context size (default: 256)"},
		{Name: envRxSize, Type: provider.ParamSize, Help: "define default rx context size (default: 256)"},
		{Name: envNoDelay, Type: provider.ParamBool, Help: "overrides default TCP_NODELAY socket setting"},
	}
}

// envSize reads a queue size variable.
func envSize(name string) uint64 {
	raw, set := os.LookupEnv(name)
	if v, err := strconv.ParseUint(strings.TrimSpace(raw), 0, 64); err == nil && v > 0 {
		if v > maxQueueSize {
			envFallback(name, raw, "too large, using "+strconv.FormatUint(maxQueueSize, 10))
		}
		return min(v, maxQueueSize)
	}
	if set {
		envFallback(name, raw, "not a positive size, using the default")
	}
	return DefaultQueueSize
}

// envUint reads a variable holding an unsigned number (decimal, 0x hex or
// 0 octal): def when unset or empty, and def with a warning when it does
// not parse. Callers clamp the value to their own range.
func envUint(name string, def uint64) uint64 {
	raw, set := os.LookupEnv(name)
	if !set || strings.TrimSpace(raw) == "" {
		return def
	}
	v, err := strconv.ParseUint(strings.TrimSpace(raw), 0, 64)
	if err != nil {
		envFallback(name, raw, "not an unsigned number, using the default")
		return def
	}
	return v
}

// envFallback warns that a variable's value was not usable.
func envFallback(name, value, what string) {
	log.Warn(provider.SubsysCore, name+": "+what, slog.String("value", value))
}

// envBool reads a libfabric boolean variable (0/1, on/off, true/false,
// yes/no); def when unset or unparsable.
func envBool(name string, def bool) bool {
	raw, set := os.LookupEnv(name)
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "1", "on", "true", "yes", "y":
		return true
	case "0", "off", "false", "no", "n":
		return false
	}
	if set {
		envFallback(name, raw, "not a boolean, using the default")
	}
	return def
}

// loopbackCC is the congestion control algorithm of data connections
// between two loopback addresses unless FI_TCP_LOOPBACK_CC names another
// (empty: the system's default). A loopback path has no network to
// congest, and the common default, bbr, updates its model of the path on
// every ACK: reno, which every Linux kernel has and lets every process
// choose, costs the least there (a small message's round trip is about 3%
// shorter than with bbr, bandwidth unchanged; bench/compare.sh).
const loopbackCC = "reno"

// envLoopbackCC returns the congestion control for loopback connections
// ("" to leave the system's default).
func envLoopbackCC() string {
	v, set := os.LookupEnv(envLoopCC)
	if !set {
		return loopbackCC
	}
	return strings.TrimSpace(v)
}

// setLoopbackCC sets the congestion control cc (if any) on s when its
// peer, the sockaddr peer, is a loopback address (so both ends are: the
// kernel routes a loopback destination only over lo). A failure leaves
// the system's default, as if cc were empty.
func setLoopbackCC(s *sys.Conn, peer []byte, cc string) {
	if cc == "" {
		return
	}
	if a, _, ok := decodeSockaddr(peer); ok && a.AP.Addr().Unmap().IsLoopback() {
		_ = sys.TCPSetCongestion(s, cc)
	}
}

// portRange returns FI_TCP_PORT_LOW_RANGE and FI_TCP_PORT_HIGH_RANGE when
// both are set and form a valid range.
func portRange() (lo, hi uint16, ok bool) {
	rl, setl := os.LookupEnv(envPortLow)
	rh, seth := os.LookupEnv(envPortHigh)
	if !setl && !seth {
		return 0, 0, false
	}
	l, err1 := strconv.ParseUint(strings.TrimSpace(rl), 10, 16)
	h, err2 := strconv.ParseUint(strings.TrimSpace(rh), 10, 16)
	if err1 != nil || err2 != nil || l == 0 || h < l {
		envFallback(envPortLow+"/"+envPortHigh, rl+"-"+rh, "not a valid port range, using any port")
		return 0, 0, false
	}
	return uint16(l), uint16(h), true
}

// baseInfo is the provider's fi_info before addressing. Control progress
// defaults to FI_PROGRESS_AUTO, as in libfabric. Data progress defaults to
// FI_PROGRESS_MANUAL (libfabric's tcp says AUTO): progress runs inline in
// the application's CQ, counter and EQ reads on the non-blocking socket,
// which is what reaches libfabric's latency on this kind of machine
// (anchors §5.2-5.4); FI_PROGRESS_AUTO adds goroutines per endpoint parked
// in the network poller.
func baseInfo(hints *provider.Info) *provider.Info {
	ctrl, data := provider.ProgressAuto, provider.ProgressManual
	caps, tx, rx := infoCaps, txCaps, rxCaps
	if hints != nil {
		if hints.DomainAttr != nil {
			if p := hints.DomainAttr.ControlProgress; p == provider.ProgressAuto || p == provider.ProgressManual {
				ctrl = p
			}
			if p := hints.DomainAttr.DataProgress; p == provider.ProgressAuto || p == provider.ProgressManual {
				data = p
			}
		}
		want := hints.Caps
		if hints.TxAttr != nil {
			want |= hints.TxAttr.Caps
		}
		if hints.RxAttr != nil {
			want |= hints.RxAttr.Caps
			if hints.RxAttr.OpFlags&provider.FlagMultiRecv != 0 {
				want |= provider.CapMultiRecv
			}
		}
		caps |= want & (extraTxCaps | extraRxCaps)
		tx |= want & extraTxCaps
		rx |= want & extraRxCaps
	}
	qs, rs := querySizes(hints)
	return &provider.Info{
		Caps: caps,
		TxAttr: &provider.TxAttr{
			Caps:        tx,
			MsgOrder:    msgOrder,
			CompOrder:   provider.CompOrderStrict,
			InjectSize:  InjectSize,
			Size:        qs,
			IOVLimit:    IOVLimit,
			RMAIOVLimit: IOVLimit,
		},
		RxAttr: &provider.RxAttr{
			Caps:              rx,
			MsgOrder:          msgOrder,
			CompOrder:         provider.CompOrderStrict,
			TotalBufferedRecv: ubufLimit,
			Size:              rs,
			IOVLimit:          IOVLimit,
		},
		EPAttr: &provider.EPAttr{
			Type:            provider.EPMsg,
			Protocol:        provider.ProtoSockTCP,
			MaxMsgSize:      provider.SizeMax,
			MaxOrderRAWSize: provider.SizeMax,
			MaxOrderWAWSize: provider.SizeMax,
			TxCtxCnt:        1,
			RxCtxCnt:        1,
		},
		DomainAttr: &provider.DomainAttr{
			Name:            "tcp",
			Threading:       provider.ThreadSafe,
			ControlProgress: ctrl,
			DataProgress:    data,
			ResourceMgmt:    provider.RMEnabled,
			AVType:          provider.AVUnspec,
			MRMode:          0,
			MRKeySize:       8,
			CQDataSize:      CQDataSize,
			CQCnt:           256,
			EPCnt:           8192,
			TxCtxCnt:        8192,
			RxCtxCnt:        8192,
			MaxEPTxCtx:      1,
			MaxEPRxCtx:      1,
			MaxEPSrxCtx:     8192,
			MaxEPStxCtx:     8192, // stx.go
			MRIOVLimit:      1,
			Caps:            domainCaps,
		},
		FabricAttr: &provider.FabricAttr{
			Name:        "TCP-IP",
			ProvName:    Name,
			ProvVersion: Version,
			APIVersion:  provider.APIVersion,
		},
	}
}

// querySizes returns tx_attr.size and rx_attr.size for hints, as
// libfabric's tcp computes them: the defaults (FI_TCP_TX_SIZE,
// FI_TCP_RX_SIZE) unless the hints name a size, which is granted up to
// MaxTxSize and MaxRxSize (or the default if larger); a larger hint gets the
// maximum, which the generic check then refuses with ENODATA. An endpoint
// on a shared receive context (ep_attr.rx_ctx_cnt = FI_SHARED_CONTEXT)
// gets MaxRxSize by default.
func querySizes(hints *provider.Info) (tx, rx uint64) {
	tx, rx = envSize(envTxSize), envSize(envRxSize)
	if hints == nil {
		return tx, rx
	}
	if hints.EPAttr != nil && hints.EPAttr.RxCtxCnt == provider.SharedContext {
		rx = max(rx, MaxRxSize)
	}
	grant := func(def, limit, want uint64) uint64 {
		limit = max(limit, def)
		if want == 0 {
			return def
		}
		return min(want, limit)
	}
	if hints.TxAttr != nil {
		tx = grant(tx, MaxTxSize, hints.TxAttr.Size)
	}
	if hints.RxAttr != nil {
		rx = grant(rx, MaxRxSize, hints.RxAttr.Size)
	}
	return tx, rx
}

// GetInfo returns one Info per local interface address (FI_TCP_IFACE restricts
// the interface), or one Info for the given node/service or addresses,
// resolved as libfabric's util_getinfo does (see ipaddr.InfoConfig.GetInfo).
//
// Both endpoint types are offered: FI_EP_MSG, and FI_EP_RDM (listed after
// the MSG entries, as tcp;ofi_rxm follows tcp in libfabric's list); hints
// naming an endpoint type select one.
func (tcpProvider) GetInfo(version uint32, node, service string, flags provider.Flags,
	hints *provider.Info) ([]*provider.Info, error) {
	typ := provider.EPUnspec
	if hints != nil && hints.EPAttr != nil {
		typ = hints.EPAttr.Type
	}
	switch typ {
	case provider.EPRDM:
		return rdmInfoConfig.GetInfo(version, node, service, flags, hints)
	case provider.EPUnspec:
		msg, err := infoConfig.GetInfo(version, node, service, flags, hints)
		if err != nil {
			return nil, err
		}
		rdm, err := rdmInfoConfig.GetInfo(version, node, service, flags, hints)
		if err != nil {
			return msg, nil
		}
		return append(msg, rdm...), nil
	}
	return infoConfig.GetInfo(version, node, service, flags, hints)
}

var infoConfig = ipaddr.InfoConfig{Network: "tcp", EPType: provider.EPMsg, IfaceEnv: envIface, Base: baseInfo, Log: log}

// log is the provider's logger (FI_LOG_LEVEL, FI_LOG_PROV=tcp, ...).
var log = provider.NewLogger(Name)

// Fabric opens a fabric.
func (tcpProvider) Fabric(attr *provider.FabricAttr) (provider.Fabric, error) {
	return &fabric{}, nil
}

type fabric struct{}

var (
	_ provider.Fabric        = (*fabric)(nil)
	_ provider.PassiveFabric = (*fabric)(nil)
	_ provider.Domain        = (*domain)(nil)
)

// checkDomainInfo accepts an Info for a domain: FI_EP_MSG or FI_EP_RDM.
func checkDomainInfo(info *provider.Info) error {
	if info != nil && info.EPAttr != nil && info.EPAttr.Type == provider.EPRDM {
		return nil
	}
	return checkMsgInfo(info)
}

func checkMsgInfo(info *provider.Info) error {
	if info == nil {
		return provider.EINVAL
	}
	if info.EPAttr != nil && info.EPAttr.Type != provider.EPUnspec && info.EPAttr.Type != provider.EPMsg {
		return provider.EINVAL
	}
	return nil
}

func (*fabric) Domain(info *provider.Info) (provider.Domain, error) {
	if err := checkDomainInfo(info); err != nil {
		return nil, err
	}
	return &domain{rdm: info.EPAttr != nil && info.EPAttr.Type == provider.EPRDM}, nil
}

// PassiveEndpoint opens a passive endpoint (fi_passive_ep).
func (*fabric) PassiveEndpoint(info *provider.Info) (provider.PassiveEndpoint, error) {
	return newPEP(info)
}

func (*fabric) Close() error { return nil }

// domain is a tcp domain; rdm: opened for FI_EP_RDM endpoints (the only
// ones with atomics).
type domain struct{ rdm bool }

// Endpoint opens an active endpoint: FI_EP_RDM, or FI_EP_MSG, where an
// Info whose Handle is a connection request (FI_CONNREQ) adopts the
// request's connection.
func (*domain) Endpoint(info *provider.Info) (provider.Endpoint, error) {
	if info != nil && info.EPAttr != nil && info.EPAttr.Type == provider.EPRDM {
		return newRDM(info)
	}
	return newEndpoint(info)
}

func (*domain) Close() error { return nil }
