package sim

import (
	"strconv"

	"github.com/gofabric/fabric/provider"
)

// Names. An endpoint's name (fi_getname, FI_ADDR_STR) is the C string
// "fi_sim://<16 hex>" with its terminating NUL, the hex digits being the
// endpoint's id in its network. The id 0 is the "any" name of src_addr:
// an endpoint opened with it takes the network's next free id (1, 2, 3
// ... in opening order, so that a run that opens its endpoints in the
// same order gets the same names). Ids from serviceBase up name the
// endpoints of services.
const (
	namePrefix = "fi_sim://"
	idDigits   = 16
	nameLen    = len(namePrefix) + idDigits
	// serviceBase is the id of service 0: a service n names the id
	// serviceBase+n, far above the ids handed out in opening order.
	serviceBase = 1 << 48
)

const hexDigits = "0123456789abcdef"

// appendName appends the name of id, NUL-terminated.
func appendName(dst []byte, id uint64) []byte {
	dst = append(dst, namePrefix...)
	for i := idDigits - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(id>>(4*uint(i)))&15])
	}
	return append(dst, 0)
}

// parseName parses a name, with or without its NUL, and returns its id.
func parseName(b []byte) (uint64, bool) {
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	if len(b) != nameLen || string(b[:len(namePrefix)]) != namePrefix {
		return 0, false
	}
	var id uint64
	for _, c := range b[len(namePrefix):] {
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

// ID returns the endpoint id a sim name (as fi_getname returns it)
// carries: the id Config.Links is called with.
func ID(name []byte) (uint64, bool) { return parseName(name) }

// NameOf returns the name of the endpoint with id (fi_getname's bytes).
func NameOf(id uint64) []byte { return appendName(nil, id) }

func isAny(name []byte) bool {
	id, ok := parseName(name)
	return ok && id == 0
}

// localNode reports whether node names this host.
func localNode(node string) bool {
	switch node {
	case "", "localhost", "localhost.localdomain", "::1", "ip6-localhost":
		return true
	}
	return len(node) > 4 && node[:4] == "127."
}

// serviceID returns the id of the endpoint of a decimal service.
func serviceID(service string) (uint64, bool) {
	v, err := strconv.ParseUint(service, 10, 32)
	if err != nil {
		return 0, false
	}
	return serviceBase + v, true
}

// resolve turns node/service into a name (fi_getinfo, fi_av_insertsvc).
func resolve(node, service string) ([]byte, error) {
	if id, ok := parseName([]byte(node)); ok {
		if id == 0 || service != "" {
			return nil, provider.ENODATA
		}
		return appendName(nil, id), nil
	}
	if !localNode(node) {
		return nil, provider.ENODATA
	}
	if service == "" {
		return appendName(nil, 0), nil
	}
	id, ok := serviceID(service)
	if !ok {
		return nil, provider.ENODATA
	}
	return appendName(nil, id), nil
}

// ValidAddr reports whether b names an endpoint (not the "any" name),
// with or without its NUL.
func (simProvider) ValidAddr(f provider.AddrFormat, b []byte) bool {
	if f != provider.AddrStr && f != provider.FormatUnspec {
		return false
	}
	id, ok := parseName(b)
	return ok && id != 0
}

// AddrString renders b as fi_av_straddr does: the name without its NUL.
func (simProvider) AddrString(f provider.AddrFormat, b []byte) string {
	if id, ok := parseName(b); ok {
		return string(appendName(nil, id)[:nameLen])
	}
	return "fi_addr_str://" + strconv.Quote(string(b))
}

// ResolveService turns node and service into a name (fi_av_insertsvc).
func (simProvider) ResolveService(f provider.AddrFormat, node, service string) ([]byte, error) {
	name, err := resolve(node, service)
	if err != nil {
		return nil, err
	}
	if isAny(name) {
		return nil, provider.ENODATA
	}
	return name, nil
}
