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
//	fi_lnx://<host: 16 hex digits>;shm=<hex>;tcp=<hex>
//
// with its terminating NUL: the identity of the host the endpoint runs on,
// then the address of each linked endpoint, as that provider returned it,
// in hexadecimal (shm's name, tcp's sockaddr). A part may be missing (a
// src_addr naming only the tcp address to bind). Only the host part decides
// the path: a peer whose host identity equals ours and which has an shm
// part is local and reached over shm; every other peer over tcp.
//
// The host identity is a 64-bit FNV-1a hash of the kernel's boot id
// (/proc/sys/kernel/random/boot_id; the host name where it is unreadable)
// and the network namespace (/proc/self/ns/net): two processes are on the
// same host when they share a kernel and a network namespace, so the
// network namespaces a test creates are separate hosts, as they are for
// tcp. FI_LNX_HOST_ID, when set, replaces the identity by a hash of its
// value, read when an endpoint is opened: endpoints opened with different
// values treat each other as remote (tests force the tcp path with it).
const (
	addrPrefix = "fi_lnx://"
	hostDigits = 16
	// EnvHostID overrides the host identity (see above).
	EnvHostID = "FI_LNX_HOST_ID"
)

// addr is a decoded lnx address.
type addr struct {
	host uint64
	shm  []byte
	tcp  []byte
}

// hostID returns this process's host identity.
func hostID() uint64 {
	h := fnv.New64a()
	if v, ok := os.LookupEnv(EnvHostID); ok && v != "" {
		h.Write([]byte("user:" + v))
		return h.Sum64()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		h.Write([]byte(strings.TrimSpace(string(b))))
	} else if n, err := os.Hostname(); err == nil {
		h.Write([]byte(n))
	}
	if ns, err := os.Readlink("/proc/self/ns/net"); err == nil {
		h.Write([]byte("|" + ns))
	}
	return h.Sum64()
}

// encode returns the address of a, NUL-terminated.
func (a addr) encode() []byte {
	b := make([]byte, 0, len(addrPrefix)+hostDigits+10+2*(len(a.shm)+len(a.tcp))+1)
	b = append(b, addrPrefix...)
	b = appendHex64(b, a.host)
	if a.shm != nil {
		b = append(b, ";shm="...)
		b = hex.AppendEncode(b, a.shm)
	}
	if a.tcp != nil {
		b = append(b, ";tcp="...)
		b = hex.AppendEncode(b, a.tcp)
	}
	return append(b, 0)
}

func appendHex64(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for i := hostDigits - 1; i >= 0; i-- {
		b = append(b, digits[(v>>(4*uint(i)))&15])
	}
	return b
}

// trimAddr strips the terminating NUL and checks the prefix and the host
// digits; it returns the text after the host.
func trimAddr(b []byte) (host uint64, rest []byte, ok bool) {
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
		host = host<<4 | uint64(d)
	}
	return host, b[len(addrPrefix)+hostDigits:], true
}

// parseHost returns the host identity and whether the address has an
// shm part, without allocating (the route of a destination).
func parseHost(b []byte) (host uint64, hasSHM, ok bool) {
	host, rest, ok := trimAddr(b)
	if !ok {
		return 0, false, false
	}
	for len(rest) > 0 {
		if rest[0] != ';' {
			return 0, false, false
		}
		rest = rest[1:]
		end := len(rest)
		for i, c := range rest {
			if c == ';' {
				end = i
				break
			}
		}
		if end >= 4 && string(rest[:4]) == "shm=" && end > 4 {
			hasSHM = true
		}
		rest = rest[end:]
	}
	return host, hasSHM, true
}

// parseAddr decodes an lnx address, with or without its NUL.
func parseAddr(b []byte) (addr, bool) {
	host, rest, ok := trimAddr(b)
	if !ok {
		return addr{}, false
	}
	a := addr{host: host}
	for _, part := range strings.Split(string(rest), ";")[1:] {
		name, val, found := strings.Cut(part, "=")
		if !found || val == "" || len(val)%2 != 0 {
			return addr{}, false
		}
		raw, err := hex.DecodeString(val)
		if err != nil {
			return addr{}, false
		}
		switch name {
		case "shm":
			if a.shm != nil {
				return addr{}, false
			}
			a.shm = raw
		case "tcp":
			if a.tcp != nil {
				return addr{}, false
			}
			a.tcp = raw
		default:
			return addr{}, false
		}
	}
	if len(rest) > 0 && rest[0] != ';' {
		return addr{}, false
	}
	return a, true
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
