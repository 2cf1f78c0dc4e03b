package shm

import (
	"hash/fnv"
	"os"
	"strconv"
	"sync"

	"github.com/gofabric/fabric/provider"
)

// Names. An endpoint's region file is /dev/shm/gofabric-shm-<16 hex> and
// its name (fi_getname, FI_ADDR_STR) the C string
// "fi_shm://gofabric-shm-<16 hex>" with its terminating NUL. The id 0 is
// the "any" name of src_addr: an endpoint opened with it picks a random
// id.
const (
	namePrefix = "fi_shm://"
	filePrefix = "gofabric-shm-"
	idDigits   = 16
	// nameLen is the length of a name without its NUL.
	nameLen = len(namePrefix) + len(filePrefix) + idDigits
)

const hexDigits = "0123456789abcdef"

// appendName appends the name of id, NUL-terminated.
func appendName(dst []byte, id uint64) []byte {
	dst = append(dst, namePrefix...)
	dst = appendFileName(dst, id)
	return append(dst, 0)
}

// appendFileName appends the region file name of id.
func appendFileName(dst []byte, id uint64) []byte {
	dst = append(dst, filePrefix...)
	for i := idDigits - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(id>>(4*uint(i)))&15])
	}
	return dst
}

// fileName returns the region file name of id.
func fileName(id uint64) string { return string(appendFileName(make([]byte, 0, 32), id)) }

// anyName is the "any" src_addr.
func anyName() []byte { return appendName(nil, 0) }

// parseName parses a name, with or without its NUL, or a bare file name
// ("gofabric-shm-<hex>"), and returns its id.
func parseName(b []byte) (uint64, bool) {
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	if len(b) == nameLen && string(b[:len(namePrefix)]) == namePrefix {
		b = b[len(namePrefix):]
	}
	if len(b) != len(filePrefix)+idDigits || string(b[:len(filePrefix)]) != filePrefix {
		return 0, false
	}
	var id uint64
	for _, c := range b[len(filePrefix):] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		default:
			return 0, false
		}
		id = id<<4 | uint64(v)
	}
	return id, true
}

// serviceID is the id of the endpoint bound to a service name: a hash of
// it and of the network namespace, never 0, so that processes that agree
// on a service (a port number) find each other's endpoint without
// exchanging names, as they would find a socket bound to that port on the
// loopback interface: processes in other network namespaces (separate
// test runs, containers sharing /dev/shm) bound to the same port do not
// collide.
func serviceID(service string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("svc:" + netNS() + ":" + service))
	id := h.Sum64()
	if id == 0 {
		id = 1
	}
	return id
}

// ValidAddr reports whether b is a shm name of a real endpoint (not the
// "any" name). Names are accepted with or without their NUL, but a name
// must be complete: a truncated one is invalid.
func (shmProvider) ValidAddr(f provider.AddrFormat, b []byte) bool {
	if f != provider.AddrStr && f != provider.FormatUnspec {
		return false
	}
	id, ok := parseName(b)
	return ok && id != 0 && len(b) >= nameLen
}

// AddrString renders b as fi_av_straddr does: the name without its NUL.
func (shmProvider) AddrString(f provider.AddrFormat, b []byte) string {
	if id, ok := parseName(b); ok {
		return string(appendName(nil, id)[:nameLen])
	}
	return "fi_addr_str://" + strconv.Quote(string(b))
}

// ResolveService turns node and service into a name (fi_av_insertsvc).
func (shmProvider) ResolveService(f provider.AddrFormat, node, service string) ([]byte, error) {
	return resolve(node, service)
}

// netNS names the process's network namespace ("net:[4026531840]"), or
// is empty where it cannot be read.
var netNS = sync.OnceValue(func() string {
	ns, _ := os.Readlink("/proc/self/ns/net")
	return ns
})
