package tcp

import (
	"context"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

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
	// FI_TCP_RX_SIZE).
	DefaultQueueSize = 256
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
	if v, err := strconv.ParseUint(strings.TrimSpace(os.Getenv(name)), 0, 64); err == nil && v > 0 {
		return min(v, maxQueueSize)
	}
	return DefaultQueueSize
}

// envBool reads a libfabric boolean variable (0/1, on/off, true/false,
// yes/no); def when unset or unparsable.
func envBool(name string, def bool) bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(name))) {
	case "1", "on", "true", "yes", "y":
		return true
	case "0", "off", "false", "no", "n":
		return false
	}
	return def
}

// portRange returns FI_TCP_PORT_LOW_RANGE and FI_TCP_PORT_HIGH_RANGE when
// both are set and form a valid range.
func portRange() (lo, hi uint16, ok bool) {
	l, err1 := strconv.ParseUint(strings.TrimSpace(os.Getenv(envPortLow)), 10, 16)
	h, err2 := strconv.ParseUint(strings.TrimSpace(os.Getenv(envPortHigh)), 10, 16)
	if err1 != nil || err2 != nil || l == 0 || h < l {
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
	qs := envSize(envTxSize)
	rs := envSize(envRxSize)
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
			Caps:      rx,
			MsgOrder:  msgOrder,
			CompOrder: provider.CompOrderStrict,
			Size:      rs,
			IOVLimit:  IOVLimit,
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

// GetInfo returns one Info per local interface address (FI_TCP_IFACE
// restricts the interface; loopback addresses come last, with
// FI_LOCAL_COMM only), or, when node/service or addresses are given, one
// Info with src_addr/dest_addr resolved as libfabric's util_getinfo does:
// with FI_SOURCE node/service name the source (port 0 without a
// service), otherwise the destination, and the source is then the local
// address the kernel would route from, with port 0.
func (tcpProvider) GetInfo(version uint32, node, service string, flags provider.Flags,
	hints *provider.Info) ([]*provider.Info, error) {
	format := provider.FormatUnspec
	if hints != nil {
		format = hints.AddrFormat
		switch format {
		case provider.FormatUnspec, provider.SockAddr, provider.SockAddrIn, provider.SockAddrIn6:
		default:
			return nil, provider.ENODATA
		}
		if hints.EPAttr != nil && hints.EPAttr.Type != provider.EPUnspec && hints.EPAttr.Type != provider.EPMsg {
			return nil, provider.ENODATA
		}
	}
	if flags&provider.FlagSource != 0 && node == "" && service == "" {
		return nil, provider.EINVAL
	}
	var src, dest []byte
	var err error
	if flags&provider.FlagSource != 0 {
		if src, err = resolve(node, service, true, format, flags); err != nil {
			return nil, err
		}
		if hints != nil && hints.DestAddr != nil {
			dest = append([]byte(nil), hints.DestAddr...)
		}
	} else {
		if node != "" || service != "" {
			if dest, err = resolve(node, service, false, format, flags); err != nil {
				return nil, err
			}
		} else if hints != nil && hints.DestAddr != nil {
			dest = append([]byte(nil), hints.DestAddr...)
		}
		if hints != nil && hints.SrcAddr != nil {
			src = append([]byte(nil), hints.SrcAddr...)
		}
	}
	for _, a := range [][]byte{src, dest} {
		if a == nil {
			continue
		}
		if _, f, ok := decodeSockaddr(a); !ok || !formatOK(format, f) {
			return nil, provider.ENODATA
		}
	}
	if dest != nil && src == nil {
		src = sourceFor(dest)
	}
	addrs, _ := sys.ListAddrs(os.Getenv(envIface))
	var out []*provider.Info
	if src == nil && dest == nil {
		for _, a := range addrs {
			sa := appendSockaddr(nil, ifaceSockaddr(a))
			_, f, _ := decodeSockaddr(sa)
			if !formatOK(format, f) {
				continue
			}
			info := baseInfo(hints)
			info.AddrFormat = f
			info.SrcAddr = sa
			setNames(info, a)
			if a.Loopback {
				info.Caps &^= provider.CapRemoteComm
			}
			out = append(out, info)
		}
	} else {
		info := baseInfo(hints)
		info.SrcAddr, info.DestAddr = src, dest
		a := src
		if a == nil {
			a = dest
		}
		_, info.AddrFormat, _ = decodeSockaddr(a)
		if src != nil {
			for _, ia := range addrs {
				if sameIP(appendSockaddr(nil, ifaceSockaddr(ia)), src) {
					setNames(info, ia)
					break
				}
			}
		}
		out = append(out, info)
	}
	if len(out) == 0 {
		return nil, provider.ENODATA
	}
	return out, nil
}

func setNames(info *provider.Info, a sys.IfaceAddr) {
	info.FabricAttr.Name = a.NetName
	info.DomainAttr.Name = a.Iface
}

// ifaceSockaddr is the src_addr of an interface address: port 0, and the
// interface index as the scope of a link-local IPv6 address.
func ifaceSockaddr(a sys.IfaceAddr) sockaddr {
	s := sockaddr{ap: netip.AddrPortFrom(a.Addr, 0)}
	if a.Addr.Is6() && (a.Addr.IsLinkLocalUnicast() || a.Addr.IsLinkLocalMulticast()) {
		s.scope = uint32(a.Index)
	}
	return s
}

// sourceFor returns the local address the kernel routes to dest from, with
// port 0 (libfabric's ofi_get_src_addr), or nil.
func sourceFor(dest []byte) []byte {
	d, _, ok := decodeSockaddr(dest)
	if !ok {
		return nil
	}
	ap := d.ap
	if ap.Port() == 0 {
		ap = netip.AddrPortFrom(ap.Addr(), 9) // connect needs a port; nothing is sent
	}
	ua := net.UDPAddrFromAddrPort(ap)
	if d.scope != 0 {
		ua.Zone = strconv.FormatUint(uint64(d.scope), 10)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil
	}
	defer c.Close()
	la := c.LocalAddr().(*net.UDPAddr)
	ip, ok := netip.AddrFromSlice(la.IP)
	if !ok {
		return nil
	}
	if ap.Addr().Is4() {
		ip = ip.Unmap()
	}
	s := sockaddr{ap: netip.AddrPortFrom(ip, 0)}
	if ip.Is6() && ip.IsLinkLocalUnicast() {
		s.scope = zoneIndex(la.Zone)
	}
	return appendSockaddr(nil, s)
}

func zoneIndex(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	if ifc, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifc.Index)
	}
	return 0
}

// resolve turns node and service into sockaddr bytes, as libfabric's
// ofi_get_addr does through getaddrinfo: an empty node is the wildcard
// address for a source (0.0.0.0 first, like AI_PASSIVE) and the loopback
// address for a destination (::1 first, like glibc); an empty service is
// port 0. format restricts the family. Unresolvable names give ENODATA.
func resolve(node, service string, passive bool, format provider.AddrFormat, flags provider.Flags) ([]byte, error) {
	want4 := format == provider.SockAddrIn
	want6 := format == provider.SockAddrIn6
	var port uint16
	if service != "" {
		p, err := strconv.ParseUint(service, 10, 16)
		if err != nil {
			if flags&provider.FlagNumericHost != 0 {
				return nil, provider.ENODATA
			}
			lp, lerr := net.LookupPort("tcp", service)
			if lerr != nil {
				return nil, provider.ENODATA
			}
			p = uint64(lp)
		}
		port = uint16(p)
	}
	var ip netip.Addr
	var scope uint32
	switch {
	case node == "" && passive:
		ip = netip.IPv4Unspecified()
		if want6 {
			ip = netip.IPv6Unspecified()
		}
	case node == "":
		ip = netip.IPv6Loopback()
		if want4 {
			ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		}
	default:
		if a, err := netip.ParseAddr(node); err == nil {
			ip = a.WithZone("")
			scope = zoneIndex(a.Zone())
			if a.Is4In6() && want4 {
				ip = ip.Unmap()
			}
			break
		}
		if flags&provider.FlagNumericHost != 0 {
			return nil, provider.ENODATA
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", node)
		cancel()
		if err != nil {
			return nil, provider.ENODATA
		}
		found := false
		for _, a := range ips {
			a = a.Unmap()
			if (want4 && !a.Is4()) || (want6 && !a.Is6()) {
				continue
			}
			ip, scope, found = a.WithZone(""), zoneIndex(a.Zone()), true
			break
		}
		if !found {
			return nil, provider.ENODATA
		}
	}
	if (want4 && !ip.Is4()) || (want6 && ip.Is4()) {
		return nil, provider.ENODATA
	}
	return appendSockaddr(nil, sockaddr{ap: netip.AddrPortFrom(ip, port), scope: scope}), nil
}

// ValidAddr reports whether b is a sockaddr of format f: 16 bytes with
// family AF_INET for FI_SOCKADDR_IN, 28 bytes with AF_INET6 for
// FI_SOCKADDR_IN6, either for FI_SOCKADDR or FI_FORMAT_UNSPEC.
func (tcpProvider) ValidAddr(f provider.AddrFormat, b []byte) bool {
	_, got, ok := decodeSockaddr(b)
	return ok && formatOK(f, got)
}

// AddrString renders b as fi_av_straddr does ("fi_sockaddr_in://a.b.c.d:port",
// "fi_sockaddr_in6://[addr]:port"); invalid bytes give "".
func (tcpProvider) AddrString(f provider.AddrFormat, b []byte) string {
	if _, got, ok := decodeSockaddr(b); !ok || !formatOK(f, got) {
		return ""
	}
	return formatSockaddr(b)
}

// ResolveService resolves node and service to a destination sockaddr.
func (tcpProvider) ResolveService(f provider.AddrFormat, node, service string) ([]byte, error) {
	switch f {
	case provider.FormatUnspec, provider.SockAddr, provider.SockAddrIn, provider.SockAddrIn6:
	default:
		return nil, provider.EINVAL
	}
	return resolve(node, service, false, f, 0)
}

// Fabric opens a fabric.
func (tcpProvider) Fabric(attr *provider.FabricAttr) (provider.Fabric, error) {
	return &fabric{}, nil
}

type fabric struct{}

var (
	_ provider.Fabric        = (*fabric)(nil)
	_ provider.PassiveFabric = (*fabric)(nil)
	_ provider.Domain        = (*domain)(nil)
	_ provider.PassiveDomain = (*domain)(nil)
)

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
	if err := checkMsgInfo(info); err != nil {
		return nil, err
	}
	return &domain{}, nil
}

// PassiveEndpoint opens a passive endpoint (fi_passive_ep).
func (*fabric) PassiveEndpoint(info *provider.Info) (provider.PassiveEndpoint, error) {
	return newPEP(info)
}

func (*fabric) Close() error { return nil }

type domain struct{}

// Endpoint opens an active endpoint; an Info whose Handle is a connection
// request (FI_CONNREQ) adopts the request's connection.
func (*domain) Endpoint(info *provider.Info) (provider.Endpoint, error) { return newEndpoint(info) }

// PassiveEndpoint opens a passive endpoint.
func (*domain) PassiveEndpoint(info *provider.Info) (provider.PassiveEndpoint, error) {
	return newPEP(info)
}

func (*domain) Close() error { return nil }

// defaultSource is the address an endpoint or passive endpoint opened
// without src_addr binds: the source the kernel would use towards
// dest_addr, or else the first interface address GetInfo lists
// (honouring FI_TCP_IFACE and the address format), with port 0.
func defaultSource(info *provider.Info) []byte {
	if info.DestAddr != nil {
		if s := sourceFor(info.DestAddr); s != nil {
			return s
		}
	}
	addrs, _ := sys.ListAddrs(os.Getenv(envIface))
	for _, a := range addrs {
		sa := appendSockaddr(nil, ifaceSockaddr(a))
		if _, f, _ := decodeSockaddr(sa); formatOK(info.AddrFormat, f) {
			return sa
		}
	}
	return nil
}
