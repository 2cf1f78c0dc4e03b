package udp

import (
	"context"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/gofabric/fabric/internal/sys"
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

// Capabilities. FI_MULTICAST is not offered (no fi_join).
const (
	txCaps     = provider.CapMsg | provider.CapSend
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
			Caps:      rxCaps,
			CompOrder: provider.CompOrderStrict,
			Size:      QueueSize,
			IOVLimit:  IOVLimit,
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
			MaxEPTxCtx:      1,
			MaxEPRxCtx:      1,
			CntrCnt:         0,
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

// GetInfo returns one Info per local interface address (FI_UDP_IFACE
// restricts the interface; loopback addresses come last, with
// FI_LOCAL_COMM only), or, when node/service or addresses are given, one
// Info with src_addr/dest_addr resolved as libfabric's util_getinfo does:
// with FlagSource node/service name the source (port 0 without a service),
// otherwise the destination, and the source is then the local address the
// kernel would route from, with port 0.
func (udpProvider) GetInfo(version uint32, node, service string, flags provider.Flags,
	hints *provider.Info) ([]*provider.Info, error) {
	format := provider.FormatUnspec
	if hints != nil {
		format = hints.AddrFormat
		switch format {
		case provider.FormatUnspec, provider.SockAddr, provider.SockAddrIn, provider.SockAddrIn6:
		default:
			return nil, provider.ENODATA
		}
		if hints.EPAttr != nil && hints.EPAttr.Type != provider.EPUnspec && hints.EPAttr.Type != provider.EPDgram {
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
			lp, lerr := net.LookupPort("udp", service)
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
func (udpProvider) ValidAddr(f provider.AddrFormat, b []byte) bool {
	_, got, ok := decodeSockaddr(b)
	return ok && formatOK(f, got)
}

// AddrString renders b as fi_av_straddr does ("fi_sockaddr_in://a.b.c.d:port",
// "fi_sockaddr_in6://[addr]:port"); invalid bytes give "".
func (udpProvider) AddrString(f provider.AddrFormat, b []byte) string {
	if _, got, ok := decodeSockaddr(b); !ok || !formatOK(f, got) {
		return ""
	}
	return formatSockaddr(b)
}

// ResolveService resolves node and service to a destination sockaddr
// (fi_av_insertsvc).
func (udpProvider) ResolveService(f provider.AddrFormat, node, service string) ([]byte, error) {
	switch f {
	case provider.FormatUnspec, provider.SockAddr, provider.SockAddrIn, provider.SockAddrIn6:
	default:
		return nil, provider.EINVAL
	}
	return resolve(node, service, false, f, 0)
}

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
