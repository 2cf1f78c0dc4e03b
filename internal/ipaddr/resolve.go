package ipaddr

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Handler implements provider.AddrHandler for the socket address formats;
// Network ("udp" or "tcp") names the service namespace for port lookups.
type Handler struct {
	Network string
}

var _ provider.AddrHandler = Handler{}

// SetNames sets an Info's fabric name (the interface network, e.g.
// "127.0.0.1/32") and domain name (the interface) from a local address.
func SetNames(info *provider.Info, a sys.IfaceAddr) {
	info.FabricAttr.Name = a.NetName
	info.DomainAttr.Name = a.Iface
}

// IfaceSockaddr is the src_addr of an interface address: port 0, and the
// interface index as the scope of a link-local IPv6 address.
func IfaceSockaddr(a sys.IfaceAddr) Sockaddr {
	s := Sockaddr{AP: netip.AddrPortFrom(a.Addr, 0)}
	if a.Addr.Is6() && (a.Addr.IsLinkLocalUnicast() || a.Addr.IsLinkLocalMulticast()) {
		s.Scope = uint32(a.Index)
	}
	return s
}

// DefaultSource is the address an endpoint or passive endpoint opened
// without src_addr binds: the source the kernel would use towards
// info.DestAddr, or else the first address of the interfaces GetInfo lists
// (iface, the provider's FI_*_IFACE value, "" for all) in info.AddrFormat,
// with port 0 (the kernel picks an ephemeral port at bind). Nil when no
// address fits.
func DefaultSource(info *provider.Info, iface string) []byte {
	if info.DestAddr != nil {
		if s := SourceFor(info.DestAddr); s != nil {
			return s
		}
	}
	addrs, _ := sys.ListAddrs(iface)
	for _, a := range addrs {
		sa := Append(nil, IfaceSockaddr(a))
		if _, f, _ := Decode(sa); FormatOK(info.AddrFormat, f) {
			return sa
		}
	}
	return nil
}

// SourceFor returns the local address the kernel routes to dest from, with
// port 0 (libfabric's ofi_get_src_addr), or nil.
func SourceFor(dest []byte) []byte {
	d, _, ok := Decode(dest)
	if !ok {
		return nil
	}
	ap := d.AP
	if ap.Port() == 0 {
		ap = netip.AddrPortFrom(ap.Addr(), 9) // connect needs a port; nothing is sent
	}
	ua := net.UDPAddrFromAddrPort(ap)
	if d.Scope != 0 {
		ua.Zone = strconv.FormatUint(uint64(d.Scope), 10)
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
	s := Sockaddr{AP: netip.AddrPortFrom(ip, 0)}
	if ip.Is6() && ip.IsLinkLocalUnicast() {
		s.Scope = ZoneIndex(la.Zone)
	}
	return Append(nil, s)
}

// ZoneIndex returns the interface index of an IPv6 zone name, or 0.
func ZoneIndex(zone string) uint32 {
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

// resolve turns node and service into Sockaddr bytes, as libfabric's
// ofi_get_addr does through getaddrinfo: an empty node is the wildcard
// address for a source (0.0.0.0 first, like AI_PASSIVE) and the loopback
// address for a destination (::1 first, like glibc); an empty service is
// port 0. format restricts the family. Unresolvable names give ENODATA.
func Resolve(network, node, service string, passive bool, format provider.AddrFormat, flags provider.Flags) ([]byte, error) {
	want4 := format == provider.SockAddrIn
	want6 := format == provider.SockAddrIn6
	var port uint16
	if service != "" {
		p, err := strconv.ParseUint(service, 10, 16)
		if err != nil {
			if flags&provider.FlagNumericHost != 0 {
				return nil, provider.ENODATA
			}
			lp, lerr := net.LookupPort(network, service)
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
			scope = ZoneIndex(a.Zone())
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
			ip, scope, found = a.WithZone(""), ZoneIndex(a.Zone()), true
			break
		}
		if !found {
			return nil, provider.ENODATA
		}
	}
	if (want4 && !ip.Is4()) || (want6 && ip.Is4()) {
		return nil, provider.ENODATA
	}
	return Append(nil, Sockaddr{AP: netip.AddrPortFrom(ip, port), Scope: scope}), nil
}

// ValidAddr reports whether b is a Sockaddr of format f: 16 bytes with
// family AF_INET for FI_SOCKADDR_IN, 28 bytes with AF_INET6 for
// FI_SOCKADDR_IN6, either for FI_SOCKADDR or FI_FORMAT_UNSPEC.
func (h Handler) ValidAddr(f provider.AddrFormat, b []byte) bool {
	_, got, ok := Decode(b)
	return ok && FormatOK(f, got)
}

// AddrString renders b as fi_av_straddr does ("fi_sockaddr_in://a.b.c.d:port",
// "fi_sockaddr_in6://[addr]:port"); invalid bytes give "".
func (h Handler) AddrString(f provider.AddrFormat, b []byte) string {
	if _, got, ok := Decode(b); !ok || !FormatOK(f, got) {
		return ""
	}
	return Format(b)
}

// ResolveService resolves node and service to a destination Sockaddr
// (fi_av_insertsvc).
func (h Handler) ResolveService(f provider.AddrFormat, node, service string) ([]byte, error) {
	switch f {
	case provider.FormatUnspec, provider.SockAddr, provider.SockAddrIn, provider.SockAddrIn6:
	default:
		return nil, provider.EINVAL
	}
	return Resolve(h.Network, node, service, false, f, 0)
}
