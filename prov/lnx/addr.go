package lnx

import (
	"encoding/hex"
	"hash/fnv"
	"os"
	"strconv"
	"strings"

	"github.com/gofabric/fabric/provider"
)

// Addresses. An lnx address (fi_getname, FI_ADDR_STR) is the C string
//
//	fi_lnx://<host>;<shm>;<tcp>;
//
// with its terminating NUL (the final ; tells a truncated address from a
// shorter one), at most 58 bytes for IPv4 (FI_NAME_MAX is
// 64): <host> is the identity of the host the endpoint runs on (8 hex
// digits), <shm> the endpoint's shm address and <tcp> its tcp address,
// each empty when absent (a src_addr naming only the tcp address to bind;
// a dest_addr resolved from node/service, whose host is unknown: 00000000).
// An shm address fi_shm://gofabric-shm-<16 hex> is written as its 16 hex
// digits, a tcp sockaddr_in as a.b.c.d:port; any other address of either
// provider (sockaddr_in6 ...) as x followed by its bytes in hexadecimal.
// Only <host> decides the path: a peer whose host identity equals ours and
// which has an shm address is local and reached over shm; every other
// peer over tcp.
//
// The host identity is a 32-bit FNV-1a hash of the kernel's boot id
// (/proc/sys/kernel/random/boot_id; the host name where it is unreadable)
// and the network namespace (/proc/self/ns/net): two processes are on the
// same host when they share a kernel and a network namespace, so the
// network namespaces a test creates are separate hosts, as they are for
// tcp. FI_LNX_HOST_ID, when set, replaces the identity by a hash of its
// value, read when an endpoint is opened: endpoints opened with different
// values treat each other as remote (tests force the tcp path with it).
const (
	addrPrefix = "fi_lnx://"
	hostDigits = 8
	shmPrefix  = "fi_shm://gofabric-shm-"
	shmDigits  = 16
	// EnvHostID overrides the host identity (see above).
	EnvHostID = "FI_LNX_HOST_ID"
	// EnvDisableSHM, when true (1, true, yes, on), makes the endpoints
	// opened afterwards reach every peer over tcp, local ones included
	// (libfabric 2.x's FI_LNX_DISABLE_SHM); they still receive over
	// both paths.
	EnvDisableSHM = "FI_LNX_DISABLE_SHM"
)

// shmDisabled reads EnvDisableSHM.
func shmDisabled() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvDisableSHM))) {
	case "1", "true", "yes", "on", "y":
		return true
	}
	return false
}

// addr is a decoded lnx address.
type addr struct {
	host uint32
	shm  []byte
	tcp  []byte
}

// hostID returns this process's host identity.
func hostID() uint32 {
	h := fnv.New32a()
	if v, ok := os.LookupEnv(EnvHostID); ok && v != "" {
		h.Write([]byte("user:" + v))
		return nonZero(h.Sum32())
	}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		h.Write([]byte(strings.TrimSpace(string(b))))
	} else if n, err := os.Hostname(); err == nil {
		h.Write([]byte(n))
	}
	if ns, err := os.Readlink("/proc/self/ns/net"); err == nil {
		h.Write([]byte("|" + ns))
	}
	return nonZero(h.Sum32())
}

// nonZero keeps 0 for "host unknown".
func nonZero(h uint32) uint32 {
	if h == 0 {
		return 1
	}
	return h
}

const hexDigits = "0123456789abcdef"

// encode returns the address of a, NUL-terminated.
func (a addr) encode() []byte {
	b := make([]byte, 0, 64)
	b = append(b, addrPrefix...)
	for i := hostDigits - 1; i >= 0; i-- {
		b = append(b, hexDigits[(a.host>>(4*uint(i)))&15])
	}
	b = append(b, ';')
	switch s := a.shm; {
	case len(s) == len(shmPrefix)+shmDigits+1 && string(s[:len(shmPrefix)]) == shmPrefix && s[len(s)-1] == 0 &&
		isHex(s[len(shmPrefix):len(s)-1]):
		b = append(b, s[len(shmPrefix):len(s)-1]...)
	case s != nil:
		b = append(b, 'x')
		b = hex.AppendEncode(b, s)
	}
	b = append(b, ';')
	switch t := a.tcp; {
	case isSockaddrIn(t):
		b = strconv.AppendUint(b, uint64(t[4]), 10)
		for _, o := range t[5:8] {
			b = append(b, '.')
			b = strconv.AppendUint(b, uint64(o), 10)
		}
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(t[2])<<8|uint64(t[3]), 10)
	case t != nil:
		b = append(b, 'x')
		b = hex.AppendEncode(b, t)
	}
	return append(b, ';', 0)
}

// isSockaddrIn reports whether t is a struct sockaddr_in (AF_INET in host
// order, little endian here, and zero padding).
func isSockaddrIn(t []byte) bool {
	if len(t) != 16 || t[0] != 2 || t[1] != 0 {
		return false
	}
	for _, c := range t[8:] {
		if c != 0 {
			return false
		}
	}
	return true
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// trimAddr strips the terminating NUL and checks the prefix and the host
// digits; it returns the host and the text after it.
func trimAddr(b []byte) (host uint32, rest []byte, ok bool) {
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	if len(b) < len(addrPrefix)+hostDigits || string(b[:len(addrPrefix)]) != addrPrefix {
		return 0, nil, false
	}
	for _, c := range b[len(addrPrefix) : len(addrPrefix)+hostDigits] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, nil, false
		}
		host = host<<4 | uint32(d)
	}
	return host, b[len(addrPrefix)+hostDigits:], true
}

// parseHost returns the host identity and whether the address has an
// shm part, without allocating (the route of a destination).
func parseHost(b []byte) (host uint32, hasSHM, ok bool) {
	host, rest, ok := trimAddr(b)
	if !ok || len(rest) < 2 || rest[0] != ';' {
		return 0, false, false
	}
	return host, rest[1] != ';', true
}

// parseAddr decodes an lnx address, with or without its NUL.
func parseAddr(b []byte) (addr, bool) {
	host, rest, ok := trimAddr(b)
	if !ok || len(rest) == 0 || rest[0] != ';' {
		return addr{}, false
	}
	if rest[len(rest)-1] != ';' {
		return addr{}, false
	}
	shm, tcp, found := strings.Cut(string(rest[1:len(rest)-1]), ";")
	if !found || strings.Contains(tcp, ";") {
		return addr{}, false
	}
	a := addr{host: host}
	switch {
	case shm == "":
	case shm[0] == 'x':
		if a.shm, ok = unhex(shm[1:]); !ok {
			return addr{}, false
		}
	case len(shm) == shmDigits && isHex([]byte(shm)):
		a.shm = append([]byte(shmPrefix+shm), 0)
	default:
		return addr{}, false
	}
	switch {
	case tcp == "":
	case tcp[0] == 'x':
		if a.tcp, ok = unhex(tcp[1:]); !ok {
			return addr{}, false
		}
	default:
		if a.tcp, ok = parseIPv4(tcp); !ok {
			return addr{}, false
		}
	}
	return a, true
}

func unhex(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	b, err := hex.DecodeString(s)
	return b, err == nil
}

// parseIPv4 turns a.b.c.d:port into a sockaddr_in.
func parseIPv4(s string) ([]byte, bool) {
	ip, port, ok := strings.Cut(s, ":")
	if !ok {
		return nil, false
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, false
	}
	sa := make([]byte, 16)
	sa[0], sa[2], sa[3] = 2, byte(p>>8), byte(p)
	octets := strings.Split(ip, ".")
	if len(octets) != 4 {
		return nil, false
	}
	for i, o := range octets {
		v, err := strconv.ParseUint(o, 10, 8)
		if err != nil || strconv.FormatUint(v, 10) != o {
			return nil, false
		}
		sa[4+i] = byte(v)
	}
	return sa, true
}

var _ provider.AddrHandler = lnxProvider{}

// ValidAddr reports whether b is an lnx address (FI_ADDR_STR).
func (lnxProvider) ValidAddr(f provider.AddrFormat, b []byte) bool {
	if f != provider.AddrStr {
		return false
	}
	_, ok := parseAddr(b)
	return ok
}

// AddrString renders an lnx address: the string itself, without its NUL.
func (lnxProvider) AddrString(f provider.AddrFormat, b []byte) string {
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	if f != provider.AddrStr {
		return "fi_addr_format " + strconv.Itoa(int(f)) + ": " + hex.EncodeToString(b)
	}
	return string(b)
}

// ResolveService is not supported: lnx addresses are not host names.
func (lnxProvider) ResolveService(provider.AddrFormat, string, string) ([]byte, error) {
	return nil, provider.EINVAL
}
