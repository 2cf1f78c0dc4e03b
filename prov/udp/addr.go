package udp

import (
	"os"

	"github.com/gofabric/fabric/internal/ipaddr"
	"github.com/gofabric/fabric/provider"
)

// Socket addresses and their resolution are shared with the other IP
// provider through internal/ipaddr (one codec, one fuzz test).

type sockaddr = ipaddr.Sockaddr

var addrHandler = ipaddr.Handler{Network: "udp"}

func appendSockaddr(dst []byte, a sockaddr) []byte { return ipaddr.Append(dst, a) }

func decodeSockaddr(b []byte) (sockaddr, provider.AddrFormat, bool) { return ipaddr.Decode(b) }

func formatOK(want, got provider.AddrFormat) bool { return ipaddr.FormatOK(want, got) }

func formatSockaddr(b []byte) string { return ipaddr.Format(b) }

func sameIP(a, b []byte) bool { return ipaddr.SameIP(a, b) }

func withPort(b []byte, port uint16) []byte { return ipaddr.WithPort(b, port) }

// defaultSource is the address an endpoint opened without src_addr
// binds (ipaddr.DefaultSource, honouring FI_UDP_IFACE).
func defaultSource(info *provider.Info) []byte {
	return ipaddr.DefaultSource(info, os.Getenv(envIface))
}

// ValidAddr reports whether b is a valid address in format f.
func (udpProvider) ValidAddr(f provider.AddrFormat, b []byte) bool {
	return addrHandler.ValidAddr(f, b)
}

// AddrString renders b as fi_av_straddr does.
func (udpProvider) AddrString(f provider.AddrFormat, b []byte) string {
	return addrHandler.AddrString(f, b)
}

// ResolveService resolves node and service to a sockaddr (fi_av_insertsvc).
func (udpProvider) ResolveService(f provider.AddrFormat, node, service string) ([]byte, error) {
	return addrHandler.ResolveService(f, node, service)
}
