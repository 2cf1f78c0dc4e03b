package tcp

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/gofabric/fabric/provider"
)

// Address layout (libfabric 1.17 wire spec §3.2): the bytes of the
// kernel's struct sockaddr_in / sockaddr_in6 on little-endian Linux.
//
//	sockaddr_in  (16): family u16 LE (2) | port u16 BE | addr [4] | zero [8]
//	sockaddr_in6 (28): family u16 LE (10) | port u16 BE | flowinfo u32 BE | addr [16] | scope_id u32 LE
const (
	sizeofSockaddrIn  = 16
	sizeofSockaddrIn6 = 28
	afInet            = 2
	afInet6           = 10
)

// sockaddr is a decoded address.
type sockaddr struct {
	ap    netip.AddrPort
	scope uint32 // IPv6 scope id (interface index of a link-local address)
	flow  uint32 // IPv6 flow info
}

// appendSockaddr appends the libfabric encoding of a to dst: sockaddr_in
// for an IPv4 address, sockaddr_in6 otherwise (an IPv4-mapped IPv6 address
// stays IPv6).
func appendSockaddr(dst []byte, a sockaddr) []byte {
	ip := a.ap.Addr()
	if ip.Is4() {
		var b [sizeofSockaddrIn]byte
		binary.LittleEndian.PutUint16(b[0:], afInet)
		binary.BigEndian.PutUint16(b[2:], a.ap.Port())
		a4 := ip.As4()
		copy(b[4:], a4[:])
		return append(dst, b[:]...)
	}
	var b [sizeofSockaddrIn6]byte
	binary.LittleEndian.PutUint16(b[0:], afInet6)
	binary.BigEndian.PutUint16(b[2:], a.ap.Port())
	binary.BigEndian.PutUint32(b[4:], a.flow)
	a16 := ip.As16()
	copy(b[8:], a16[:])
	binary.LittleEndian.PutUint32(b[24:], a.scope)
	return append(dst, b[:]...)
}

// decodeSockaddr decodes a sockaddr_in (exactly 16 bytes, family 2) or
// sockaddr_in6 (exactly 28 bytes, family 10). Anything else is invalid.
func decodeSockaddr(b []byte) (sockaddr, provider.AddrFormat, bool) {
	if len(b) < 2 {
		return sockaddr{}, provider.FormatUnspec, false
	}
	switch binary.LittleEndian.Uint16(b) {
	case afInet:
		if len(b) != sizeofSockaddrIn {
			break
		}
		ip := netip.AddrFrom4([4]byte(b[4:8]))
		return sockaddr{ap: netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:]))}, provider.SockAddrIn, true
	case afInet6:
		if len(b) != sizeofSockaddrIn6 {
			break
		}
		ip := netip.AddrFrom16([16]byte(b[8:24]))
		return sockaddr{ap: netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:])),
			flow: binary.BigEndian.Uint32(b[4:]), scope: binary.LittleEndian.Uint32(b[24:])}, provider.SockAddrIn6, true
	}
	return sockaddr{}, provider.FormatUnspec, false
}

// formatOK reports whether an address of format got is acceptable where
// format want is expected (FI_SOCKADDR and FI_FORMAT_UNSPEC accept both).
func formatOK(want, got provider.AddrFormat) bool {
	switch want {
	case provider.FormatUnspec, provider.SockAddr:
		return got == provider.SockAddrIn || got == provider.SockAddrIn6
	}
	return want == got
}

// formatSockaddr renders b as libfabric's ofi_straddr does:
// "fi_sockaddr_in://127.0.0.1:9228" or "fi_sockaddr_in6://[::1]:9228".
// Invalid bytes give "".
func formatSockaddr(b []byte) string {
	a, f, ok := decodeSockaddr(b)
	if !ok {
		return ""
	}
	port := strconv.Itoa(int(a.ap.Port()))
	if f == provider.SockAddrIn {
		return "fi_sockaddr_in://" + a.ap.Addr().String() + ":" + port
	}
	return "fi_sockaddr_in6://[" + a.ap.Addr().String() + "]:" + port
}

// sameIP reports whether two sockaddrs hold the same IP address (ports and
// scope ignored), as libfabric's ofi_equals_ipaddr.
func sameIP(a, b []byte) bool {
	x, _, ok1 := decodeSockaddr(a)
	y, _, ok2 := decodeSockaddr(b)
	return ok1 && ok2 && x.ap.Addr() == y.ap.Addr()
}

// withPort returns a copy of sockaddr bytes b with the port set.
func withPort(b []byte, port uint16) []byte {
	c := append([]byte(nil), b...)
	if len(c) >= 4 {
		binary.BigEndian.PutUint16(c[2:], port)
	}
	return c
}
