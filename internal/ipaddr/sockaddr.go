package ipaddr

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gofabric/fabric/provider"
)

// Address layout (libfabric 1.17 wire spec §3.2): the bytes of the
// kernel's struct sockaddr_in / sockaddr_in6 on little-endian Linux.
//
//	sockaddr_in  (16): family u16 LE (2) | port u16 BE | addr [4] | zero [8]
//	sockaddr_in6 (28): family u16 LE (10) | port u16 BE | flowinfo u32 BE | addr [16] | scope_id u32 LE
const (
	SizeofSockaddrIn  = 16
	SizeofSockaddrIn6 = 28
	AFInet            = 2
	AFInet6           = 10
)

// Sockaddr is a decoded address.
type Sockaddr struct {
	AP    netip.AddrPort
	Scope uint32 // IPv6 scope id (interface index of a link-local address)
	Flow  uint32 // IPv6 flow info
}

// Append appends the libfabric encoding of a to dst: sockaddr_in
// for an IPv4 address, sockaddr_in6 otherwise (an IPv4-mapped IPv6 address
// stays IPv6).
func Append(dst []byte, a Sockaddr) []byte {
	ip := a.AP.Addr()
	if ip.Is4() {
		var b [SizeofSockaddrIn]byte
		binary.LittleEndian.PutUint16(b[0:], AFInet)
		binary.BigEndian.PutUint16(b[2:], a.AP.Port())
		a4 := ip.As4()
		copy(b[4:], a4[:])
		return append(dst, b[:]...)
	}
	var b [SizeofSockaddrIn6]byte
	binary.LittleEndian.PutUint16(b[0:], AFInet6)
	binary.BigEndian.PutUint16(b[2:], a.AP.Port())
	binary.BigEndian.PutUint32(b[4:], a.Flow)
	a16 := ip.As16()
	copy(b[8:], a16[:])
	binary.LittleEndian.PutUint32(b[24:], a.Scope)
	return append(dst, b[:]...)
}

// Decode decodes a sockaddr_in (exactly 16 bytes, family 2) or
// sockaddr_in6 (exactly 28 bytes, family 10). Anything else is invalid.
func Decode(b []byte) (Sockaddr, provider.AddrFormat, bool) {
	if len(b) < 2 {
		return Sockaddr{}, provider.FormatUnspec, false
	}
	switch binary.LittleEndian.Uint16(b) {
	case AFInet:
		if len(b) != SizeofSockaddrIn {
			break
		}
		ip := netip.AddrFrom4([4]byte(b[4:8]))
		return Sockaddr{AP: netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:]))}, provider.SockAddrIn, true
	case AFInet6:
		if len(b) != SizeofSockaddrIn6 {
			break
		}
		ip := netip.AddrFrom16([16]byte(b[8:24]))
		return Sockaddr{AP: netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:])),
			Flow: binary.BigEndian.Uint32(b[4:]), Scope: binary.LittleEndian.Uint32(b[24:])}, provider.SockAddrIn6, true
	}
	return Sockaddr{}, provider.FormatUnspec, false
}

// FormatOK reports whether an address of format got is acceptable where
// format want is expected (FI_SOCKADDR and FI_FORMAT_UNSPEC accept both).
func FormatOK(want, got provider.AddrFormat) bool {
	switch want {
	case provider.FormatUnspec, provider.SockAddr:
		return got == provider.SockAddrIn || got == provider.SockAddrIn6
	}
	return want == got
}

// Format renders b as libfabric's ofi_straddr does:
// "fi_sockaddr_in://127.0.0.1:9228" or "fi_sockaddr_in6://[::1]:9228".
// Invalid bytes give "".
func Format(b []byte) string {
	a, f, ok := Decode(b)
	if !ok {
		return ""
	}
	port := strconv.Itoa(int(a.AP.Port()))
	if f == provider.SockAddrIn {
		return "fi_sockaddr_in://" + a.AP.Addr().String() + ":" + port
	}
	return "fi_sockaddr_in6://[" + a.AP.Addr().String() + "]:" + port
}

// Parse is the inverse of Format (ofi_str_toaddr for
// the two Sockaddr formats).
func Parse(s string) ([]byte, bool) {
	var six bool
	switch {
	case strings.HasPrefix(s, "fi_sockaddr_in://"):
		s = s[len("fi_sockaddr_in://"):]
	case strings.HasPrefix(s, "fi_sockaddr_in6://"):
		s, six = s[len("fi_sockaddr_in6://"):], true
	default:
		return nil, false
	}
	host, portStr := s, ""
	if six {
		end := strings.IndexByte(s, ']')
		if !strings.HasPrefix(s, "[") || end < 0 {
			return nil, false
		}
		host, portStr = s[1:end], s[end+1:]
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, portStr = s[:i], s[i:]
	}
	var port uint64
	if portStr != "" {
		if portStr[0] != ':' {
			return nil, false
		}
		p, err := strconv.ParseUint(portStr[1:], 10, 16)
		if err != nil {
			return nil, false
		}
		port = p
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" || ip.Is4() == six {
		return nil, false
	}
	return Append(nil, Sockaddr{AP: netip.AddrPortFrom(ip, uint16(port))}), true
}

// SameIP reports whether two sockaddrs hold the same IP address (ports and
// scope ignored), as libfabric's ofi_equals_ipaddr.
func SameIP(a, b []byte) bool {
	x, _, ok1 := Decode(a)
	y, _, ok2 := Decode(b)
	return ok1 && ok2 && x.AP.Addr() == y.AP.Addr()
}

// WithPort returns a copy of Sockaddr bytes b with the port set.
func WithPort(b []byte, port uint16) []byte {
	c := append([]byte(nil), b...)
	if len(c) >= 4 {
		binary.BigEndian.PutUint16(c[2:], port)
	}
	return c
}
