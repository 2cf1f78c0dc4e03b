package tcp

import (
	"os"

	"github.com/gofabric/fabric/internal/ipaddr"
	"github.com/gofabric/fabric/provider"
)

// Socket addresses and their resolution are shared with the other IP
// provider through internal/ipaddr (one codec, one fuzz test).

type sockaddr = ipaddr.Sockaddr

var addrHandler = ipaddr.Handler{Network: "tcp"}

func appendSockaddr(dst []byte, a sockaddr) []byte { return ipaddr.Append(dst, a) }

func decodeSockaddr(b []byte) (sockaddr, provider.AddrFormat, bool) { return ipaddr.Decode(b) }

func formatOK(want, got provider.AddrFormat) bool { return ipaddr.FormatOK(want, got) }

func formatSockaddr(b []byte) string { return ipaddr.Format(b) }

func withPort(b []byte, port uint16) []byte { return ipaddr.WithPort(b, port) }

// defaultSource is the address an endpoint or passive endpoint opened without src_addr
// binds (ipaddr.DefaultSource, honouring FI_TCP_IFACE).
func defaultSource(info *provider.Info) []byte {
	return ipaddr.DefaultSource(info, os.Getenv(envIface))
}

// ValidAddr reports whether b is a valid address in format f.
func (tcpProvider) ValidAddr(f provider.AddrFormat, b []byte) bool {
	return addrHandler.ValidAddr(f, b)
}

// AddrString renders b as fi_av_straddr does.
func (tcpProvider) AddrString(f provider.AddrFormat, b []byte) string {
	return addrHandler.AddrString(f, b)
}

// ResolveService resolves node and service to a sockaddr (fi_av_insertsvc).
func (tcpProvider) ResolveService(f provider.AddrFormat, node, service string) ([]byte, error) {
	return addrHandler.ResolveService(f, node, service)
}
