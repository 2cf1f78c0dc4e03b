package lnx

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"

	"github.com/gofabric/fabric/provider"
)

// FI_SOURCE_ERR. A linked endpoint reports a message from a source that
// is not in the AV with the raw address of its own path: an shm name or a
// tcp sockaddr. The application must get an lnx address it can insert
// (fi_cq(3) FI_EADDRNOTAVAIL: "the same format as specified through the
// fi_info addr_format field"), best the sender's own fi_getname, so lnx
// writes the linked endpoints' completions through srcErrCQ, which turns
// the raw address into an lnx address.
//
// Neither path carries the other's part of the sender's address, so lnx
// makes one part derivable from the other: an lnx endpoint whose tcp
// address is a sockaddr_in names its shm endpoint after it,
//
//	id = 0x4c58 (the mark) << 48 | IPv4 address << 16 | port
//
// (unique on the host while the tcp endpoint is bound: two endpoints of
// one network namespace never share a tcp address; endpoints of other
// namespaces that do, sharing /dev/shm, get a random id without the mark
// instead). Then:
//
//   - over shm the sender is on this host (its host identity is ours: it
//     chose shm because ours is its own); a name with the mark gives its
//     tcp address, so the whole address is known; a name without it gives
//     fi_lnx://<host>;<shm>;; (reached over shm, as the sender is).
//   - over tcp, a source whose IP address is one of this network
//     namespace's (loopback, or an address of one of its interfaces) is
//     on this host, and an lnx endpoint there has the shm id derived from
//     that tcp address: fi_lnx://<our host>;<derived>;<tcp>; (what
//     fi_getname of the sender gives, unless FI_LNX_HOST_ID gave it
//     another identity). Any other source is remote and only its tcp
//     address is known: fi_lnx://00000000;;<tcp>; (host unknown: reached
//     over tcp).
//
// Each of these addresses reaches the sender when inserted, and the
// sender's later messages on that path carry its fi_addr.
const derivedMark = 0x4c58

// derivedSHM returns the shm name derived from the tcp address t, and
// false when t is not a sockaddr_in.
func derivedSHM(t []byte) ([]byte, bool) {
	if !isSockaddrIn(t) {
		return nil, false
	}
	id := uint64(derivedMark)<<48 | uint64(binary.BigEndian.Uint32(t[4:8]))<<16 | uint64(binary.BigEndian.Uint16(t[2:4]))
	return shmName(id), true
}

// randomSHM returns a random shm name without the mark (the fallback
// when the derived one is in use).
func randomSHM() []byte {
	for {
		id := rand.Uint64()
		if id>>48 == derivedMark {
			id ^= 1 << 63
		}
		if id != 0 {
			return shmName(id)
		}
	}
}

// shmName is the NUL-terminated shm name of id.
func shmName(id uint64) []byte {
	b := make([]byte, 0, len(shmPrefix)+shmDigits+1)
	b = append(b, shmPrefix...)
	for i := shmDigits - 1; i >= 0; i-- {
		b = append(b, hexDigits[(id>>(4*uint(i)))&15])
	}
	return append(b, 0)
}

// shmID parses an shm name, with or without its NUL.
func shmID(b []byte) (uint64, bool) {
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	if len(b) != len(shmPrefix)+shmDigits || string(b[:len(shmPrefix)]) != shmPrefix || !isHex(b[len(shmPrefix):]) {
		return 0, false
	}
	var id uint64
	for _, c := range b[len(shmPrefix):] {
		d := uint64(c - '0')
		if c >= 'a' {
			d = uint64(c-'a') + 10
		}
		id = id<<4 | d
	}
	return id, true
}

// isAnySHM reports whether b is empty or shm's "any" name (id 0): an shm
// endpoint opened with it picks its own name.
func isAnySHM(b []byte) bool {
	id, ok := shmID(b)
	return len(b) == 0 || ok && id == 0
}

// fromSHM is the lnx address of a sender known by its shm name raw.
func (e *endpoint) fromSHM(raw []byte) []byte {
	a := addr{host: e.host, shm: raw}
	if id, ok := shmID(raw); ok && id>>48 == derivedMark {
		t := make([]byte, 16)
		t[0] = 2
		binary.BigEndian.PutUint16(t[2:4], uint16(id))
		binary.BigEndian.PutUint32(t[4:8], uint32(id>>16))
		a.tcp = t
	}
	return a.encode()
}

// fromTCP is the lnx address of a sender known by its tcp address raw.
func (e *endpoint) fromTCP(raw []byte) []byte {
	a := addr{tcp: raw}
	if isSockaddrIn(raw) && localIPv4(net.IP(raw[4:8])) {
		a.host = e.host
		a.shm, _ = derivedSHM(raw)
	}
	return a.encode()
}

// localIPv4 reports whether ip is an address of this network namespace.
func localIPv4(ip net.IP) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// srcErrCQ is the receive CQ the linked endpoints write to when the lnx
// endpoint has FI_SOURCE_ERR: the lnx CQ's owner, whose
// provider.UnknownSrcWriter gets the sender's lnx address (conv) instead
// of the path's raw address. Reservations go to the owner
// (provider.CQReserver), as do room notifications where it gives them.
type srcErrCQ struct {
	provider.CQReserver
	conv func(raw []byte) []byte
}

var (
	_ provider.UnknownSrcWriter = srcErrCQ{}
	_ provider.RoomNotifier     = srcErrCQ{}
)

func (c srcErrCQ) WriteUnknownSrc(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, raw []byte) error {
	if w, ok := c.CQReserver.(provider.UnknownSrcWriter); ok {
		return w.WriteUnknownSrc(ctx, flags, length, buf, data, tag, c.conv(raw))
	}
	return c.Write(ctx, flags, length, buf, data, tag, provider.AddrNotAvail)
}

func (c srcErrCQ) NotifyRoom(kick chan<- struct{}) bool {
	if n, ok := c.CQReserver.(provider.RoomNotifier); ok {
		return n.NotifyRoom(kick)
	}
	return false
}

// srcErrPlainCQ is srcErrCQ for an owner without reservations.
type srcErrPlainCQ struct {
	provider.CQOwner
	conv func(raw []byte) []byte
}

func (c srcErrPlainCQ) WriteUnknownSrc(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, raw []byte) error {
	if w, ok := c.CQOwner.(provider.UnknownSrcWriter); ok {
		return w.WriteUnknownSrc(ctx, flags, length, buf, data, tag, c.conv(raw))
	}
	return c.Write(ctx, flags, length, buf, data, tag, provider.AddrNotAvail)
}

// srcErrOwner wraps the lnx receive CQ's owner q for a linked endpoint
// whose raw source addresses conv turns into lnx addresses.
func srcErrOwner(q provider.CQOwner, conv func([]byte) []byte) provider.CQOwner {
	if r, ok := q.(provider.CQReserver); ok {
		return srcErrCQ{CQReserver: r, conv: conv}
	}
	return srcErrPlainCQ{CQOwner: q, conv: conv}
}

// isAddrInUse reports whether err is FI_EADDRINUSE.
func isAddrInUse(err error) bool { return errors.Is(err, provider.EADDRINUSE) }
