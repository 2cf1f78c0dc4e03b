//go:build linux

package sys

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

// Sockaddr sizes and families in libfabric's layout.
const (
	SizeofSockaddrIn  = 16 // struct sockaddr_in
	SizeofSockaddrIn6 = 28 // struct sockaddr_in6
	SizeofSockaddrMax = 128
	AFInet            = unix.AF_INET
	AFInet6           = unix.AF_INET6
)

// MaxIOV is the largest scatter/gather list SendMsg and RecvMsg accept.
const MaxIOV = 16

// Errors of the wait calls.
const (
	// ErrTimeout is returned by WaitReadable/WaitWritable when the
	// deadline passes first.
	ErrTimeout = provider.ETIMEDOUT
	// ErrClosed is returned by every call on a closed Conn.
	ErrClosed = provider.EBADF
)

var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

const closedBit = uint64(1) << 63

// Conn is a socket used with raw non-blocking system calls. Its data calls
// never block and never allocate; WaitReadable and WaitWritable park the
// calling goroutine in the Go runtime's network poller.
//
// The descriptor is reference-counted like internal/poll.FD: Close marks
// the Conn closed, wakes goroutines parked in the wait calls, waits for
// in-flight data calls to return and only then closes the descriptor, so a
// call can never reach a reused descriptor number.
type Conn struct {
	fd     int
	family int

	state   atomic.Uint64 // closedBit | number of in-flight calls
	drained chan struct{} // receives when the last call leaves after close

	// df: an IPv4 datagram socket of OpenUDP that sets Don't Fragment
	// (IP_PMTUDISC_DO) until a datagram exceeds the path MTU (see
	// OpenUDP).
	df atomic.Bool

	wmu     sync.Mutex
	wclosed bool
	free    []*waiter // idle waiters
	all     []*waiter

	cleanup runtime.Cleanup // closes the descriptor of a Conn dropped without Close
}

// A waiter is a duplicate of the Conn's descriptor registered with the
// runtime poller. Each concurrent wait uses its own waiter, so concurrent
// waits never serialize on the poller's per-descriptor read lock and each
// keeps its own deadline.
type waiter struct {
	f  *os.File
	rc syscall.RawConn
}

// OpenUDP creates a non-blocking UDP socket bound to addr, a sockaddr_in or
// sockaddr_in6 in libfabric's layout (port 0 binds an ephemeral port).
//
// An IPv4 socket sends its datagrams with Don't Fragment set
// (IP_PMTUDISC_DO). Datagrams of a fabric's message size (1472 bytes and
// below) fit an Ethernet MTU unfragmented, and a datagram with DF set
// skips the kernel's IP identifier generator for unconnected sockets (a
// hash and an atomic on a table shared by the whole host: 2-4% of a
// loopback round trip). The first datagram SendTo or SendMsg finds too
// large for the path (EMSGSIZE: a device or learnt path MTU below its
// size) turns DF off for good and is sent again, fragmented, as a socket
// without the option sends it (libfabric's udp provider does not set it).
// IPv6 has no identifier cost on unfragmented datagrams and keeps the
// kernel's default.
func OpenUDP(addr []byte) (*Conn, error) {
	fam, ok := sockaddrFamily(addr)
	if !ok {
		return nil, provider.EINVAL
	}
	fd, err := unix.Socket(fam, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return nil, errnoOf(err)
	}
	df := fam == unix.AF_INET && unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO) == nil
	var tmp [SizeofSockaddrMax]byte
	ka := toKernel(addr, &tmp)
	_, _, e := unix.Syscall(unix.SYS_BIND, uintptr(fd), uintptr(unsafe.Pointer(bytePtr(ka))), uintptr(len(ka)))
	if e != 0 {
		unix.Close(fd)
		return nil, TranslateErrno(e)
	}
	c := newConn(fd, fam)
	c.df.Store(df)
	return c, nil
}

// fragmentOnEMSGSIZE handles a send that failed with EMSGSIZE: on a socket
// that sets Don't Fragment it turns the option off (the kernel's default,
// IP_PMTUDISC_WANT: fragment where needed) and reports true, for the
// caller to send again; false otherwise (the error stands).
//
//go:noinline
func (c *Conn) fragmentOnEMSGSIZE() bool {
	if !c.df.Load() || !c.acquire() {
		return false
	}
	err := unix.SetsockoptInt(c.fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_WANT)
	c.release()
	if err != nil {
		return false
	}
	c.df.Store(false)
	return true
}

// Adopt returns a Conn on a duplicate of the descriptor of c (a *net.TCPConn,
// *net.UDPConn, *os.File ...). The caller keeps ownership of c and may close
// it; the duplicate is closed by the Conn's Close. The descriptor is put in
// non-blocking mode (it shares file status flags with c's).
func Adopt(c syscall.Conn) (*Conn, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) {
		nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, errnoOf(derr)
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return nil, errnoOf(err)
	}
	fam, err := unix.GetsockoptInt(nfd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		fam = 0
	}
	return newConn(nfd, fam), nil
}

func newConn(fd, fam int) *Conn {
	c := &Conn{fd: fd, family: fam, drained: make(chan struct{}, 1)}
	c.cleanup = runtime.AddCleanup(c, closeFD, fd)
	return c
}

func closeFD(fd int) { unix.Close(fd) }

// FD returns the socket descriptor (for FI_WAIT_FD wait sets), or -1 once
// closed. The descriptor stays owned by the Conn.
func (c *Conn) FD() int {
	if c.state.Load()&closedBit != 0 {
		return -1
	}
	return c.fd
}

// Family returns the socket's address family (AFInet or AFInet6).
func (c *Conn) Family() int { return c.family }

func (c *Conn) acquire() bool {
	if c.state.Add(1)&closedBit != 0 {
		c.release()
		return false
	}
	return true
}

func (c *Conn) release() {
	if c.state.Add(^uint64(0)) == closedBit {
		select {
		case c.drained <- struct{}{}:
		default:
		}
	}
}

// Close wakes goroutines parked in WaitReadable/WaitWritable, waits for
// in-flight calls to return, and closes the descriptor. A second Close
// returns ErrClosed.
func (c *Conn) Close() error {
	old := c.state.Or(closedBit)
	if old&closedBit != 0 {
		return ErrClosed
	}
	c.wmu.Lock()
	c.wclosed = true
	ws := c.all
	c.all, c.free = nil, nil
	c.wmu.Unlock()
	for _, w := range ws {
		w.f.Close()
	}
	if old != 0 {
		<-c.drained
	}
	c.cleanup.Stop()
	if err := unix.Close(c.fd); err != nil {
		return errnoOf(err)
	}
	return nil
}

// Name returns the bound address (getsockname) in libfabric's layout: 16
// bytes for IPv4, 28 for IPv6.
func (c *Conn) Name() ([]byte, error) { return c.sockName(unix.SYS_GETSOCKNAME) }

// sockName runs getsockname or getpeername (trap) on c and returns the
// address in libfabric's layout.
func (c *Conn) sockName(trap uintptr) ([]byte, error) {
	if !c.acquire() {
		return nil, ErrClosed
	}
	defer c.release()
	var buf [SizeofSockaddrMax]byte
	l := uint32(len(buf))
	_, _, e := unix.RawSyscall(trap, uintptr(c.fd), uintptr(unsafe.Pointer(&buf[0])),
		uintptr(unsafe.Pointer(&l)))
	if e != 0 {
		return nil, TranslateErrno(e)
	}
	if int(l) > len(buf) {
		l = uint32(len(buf))
	}
	out := append([]byte(nil), buf[:l]...)
	fromKernel(out)
	return out, nil
}

// SendTo sends b as one datagram to the address to (libfabric layout; nil
// on a connected socket). It returns the bytes sent or the translated
// errno; EAGAIN means the socket buffer is full and nothing was sent.
func (c *Conn) SendTo(b, to []byte) (int, provider.Errno) {
	ka := to
	if !nativeLE {
		// Only here: zeroing the copy's 128 bytes was a tenth of the
		// call's instructions on every send.
		var tmp [SizeofSockaddrMax]byte
		ka = toKernel(to, &tmp)
	}
	if !c.acquire() {
		return 0, ErrClosed
	}
	bp, tp := bytePtr(b), bytePtr(ka)
	r, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, uintptr(c.fd), uintptr(unsafe.Pointer(bp)), uintptr(len(b)),
		unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, uintptr(unsafe.Pointer(tp)), uintptr(len(ka)))
	c.release()
	if e != 0 {
		if e == unix.EMSGSIZE && c.fragmentOnEMSGSIZE() {
			return c.SendTo(b, to)
		}
		return 0, TranslateErrno(e)
	}
	return int(r), 0
}

// SendMsg sends the concatenation of iov as one datagram (or stream write)
// to the address to. len(iov) must not exceed MaxIOV.
func (c *Conn) SendMsg(iov [][]byte, to []byte) (int, provider.Errno) {
	if len(iov) > MaxIOV {
		return 0, provider.EINVAL
	}
	var tmp [SizeofSockaddrMax]byte
	ka := toKernel(to, &tmp)
	var vecs [MaxIOV]unix.Iovec
	for i, b := range iov {
		if len(b) > 0 {
			vecs[i].Base = &b[0]
			vecs[i].SetLen(len(b))
		}
	}
	var msg unix.Msghdr
	msg.Name = bytePtr(ka)
	msg.Namelen = uint32(len(ka))
	if len(iov) > 0 {
		msg.Iov = &vecs[0]
		msg.SetIovlen(len(iov))
	}
	if !c.acquire() {
		return 0, ErrClosed
	}
	r, _, e := unix.RawSyscall(unix.SYS_SENDMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&msg)),
		unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
	c.release()
	if e != 0 {
		if e == unix.EMSGSIZE && c.fragmentOnEMSGSIZE() {
			return c.SendMsg(iov, to)
		}
		return 0, TranslateErrno(e)
	}
	return int(r), 0
}

// RecvFrom receives one datagram into b and its source address into from.
// n is the datagram's real length (MSG_TRUNC): n > len(b) means the
// datagram was truncated to len(b). fromLen is the length of the source
// address written to from. EAGAIN means no datagram is waiting.
func (c *Conn) RecvFrom(b, from []byte) (n, fromLen int, errno provider.Errno) {
	if !c.acquire() {
		return 0, 0, ErrClosed
	}
	n, fromLen, errno = c.RecvFromOwned(b, from)
	c.release()
	return n, fromLen, errno
}

// RecvFromOwned is RecvFrom without the in-flight reference that makes
// Close wait for the call: two atomic operations fewer on a busy-polling
// receive path. The caller must guarantee that Close does not run during
// the call, for example by holding a lock that its own close path takes
// (after marking itself closed) before it calls Close. It returns
// ErrClosed once Close has run.
func (c *Conn) RecvFromOwned(b, from []byte) (n, fromLen int, errno provider.Errno) {
	if c.state.Load()&closedBit != 0 {
		return 0, 0, ErrClosed
	}
	// The body is here rather than shared through a helper: this is
	// every busy poll's call, and the helper was one more frame on it.
	fl := uint32(len(from))
	bp, fp := bytePtr(b), bytePtr(from)
	r, _, e := syscall.RawSyscall6(unix.SYS_RECVFROM, uintptr(c.fd), uintptr(unsafe.Pointer(bp)), uintptr(len(b)),
		unix.MSG_DONTWAIT|unix.MSG_TRUNC, uintptr(unsafe.Pointer(fp)), uintptr(unsafe.Pointer(&fl)))
	if e != 0 {
		return 0, 0, TranslateErrno(e)
	}
	if int(fl) > len(from) {
		fl = uint32(len(from))
	}
	fromKernel(from[:fl])
	return int(r), int(fl), 0
}

// RecvMsg is RecvFrom with a scatter list: the datagram fills iov in order.
// n is the datagram's real length.
func (c *Conn) RecvMsg(iov [][]byte, from []byte) (n, fromLen int, errno provider.Errno) {
	if len(iov) > MaxIOV {
		return 0, 0, provider.EINVAL
	}
	var vecs [MaxIOV]unix.Iovec
	for i, b := range iov {
		if len(b) > 0 {
			vecs[i].Base = &b[0]
			vecs[i].SetLen(len(b))
		}
	}
	var msg unix.Msghdr
	msg.Name = bytePtr(from)
	msg.Namelen = uint32(len(from))
	if len(iov) > 0 {
		msg.Iov = &vecs[0]
		msg.SetIovlen(len(iov))
	}
	if !c.acquire() {
		return 0, 0, ErrClosed
	}
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&msg)),
		unix.MSG_DONTWAIT|unix.MSG_TRUNC)
	c.release()
	if e != 0 {
		return 0, 0, TranslateErrno(e)
	}
	fl := int(msg.Namelen)
	if fl > len(from) {
		fl = len(from)
	}
	fromKernel(from[:fl])
	return int(r), fl, 0
}

// Read reads from a stream socket into b. n == 0 with errno 0 is end of
// stream (for len(b) > 0); EAGAIN means nothing is available.
func (c *Conn) Read(b []byte) (int, provider.Errno) {
	if !c.acquire() {
		return 0, ErrClosed
	}
	bp := bytePtr(b)
	r, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(c.fd), uintptr(unsafe.Pointer(bp)), uintptr(len(b)),
		unix.MSG_DONTWAIT, 0, 0)
	c.release()
	if e != 0 {
		return 0, TranslateErrno(e)
	}
	return int(r), 0
}

// Write writes b to a stream socket (send with MSG_NOSIGNAL: a closed peer
// gives ESHUTDOWN, never SIGPIPE). It may write less than len(b).
func (c *Conn) Write(b []byte) (int, provider.Errno) { return c.SendTo(b, nil) }

// Writev writes the concatenation of iov to a stream socket.
func (c *Conn) Writev(iov [][]byte) (int, provider.Errno) { return c.SendMsg(iov, nil) }

// WaitReadable parks the calling goroutine in the runtime's network poller
// until the socket is readable (data, a pending error or end of stream), the
// deadline passes (ErrTimeout; a zero deadline waits forever) or the Conn
// is closed (ErrClosed). It returns nil at once if the socket is readable.
func (c *Conn) WaitReadable(deadline time.Time) error { return c.wait(deadline, false) }

// WaitWritable is WaitReadable for writability.
func (c *Conn) WaitWritable(deadline time.Time) error { return c.wait(deadline, true) }

func (c *Conn) wait(deadline time.Time, write bool) error {
	ev := int16(unix.POLLIN)
	if write {
		ev = unix.POLLOUT
	}
	if !c.acquire() {
		return ErrClosed
	}
	ready := pollNow(c.fd, ev)
	c.release()
	if ready {
		return nil
	}
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return ErrTimeout
	}
	w, err := c.getWaiter()
	if err != nil {
		return err
	}
	if write {
		if err = w.f.SetWriteDeadline(deadline); err == nil {
			err = w.rc.Write(probeWritable)
		}
	} else {
		if err = w.f.SetReadDeadline(deadline); err == nil {
			err = w.rc.Read(probeReadable)
		}
	}
	c.putWaiter(w)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return ErrTimeout
	default:
		return ErrClosed
	}
}

// probeReadable and probeWritable capture nothing, so passing them to
// RawConn.Read/Write does not allocate.
func probeReadable(fd uintptr) bool { return pollNow(int(fd), unix.POLLIN) }
func probeWritable(fd uintptr) bool { return pollNow(int(fd), unix.POLLOUT) }

// pollNow reports whether fd has any of events (or an error condition)
// right now, with a zero-timeout ppoll.
func pollNow(fd int, events int16) bool {
	pfd := unix.PollFd{Fd: int32(fd), Events: events}
	var ts unix.Timespec
	for {
		r, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)),
			0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		return e != 0 || (r > 0 && pfd.Revents != 0)
	}
}

func (c *Conn) getWaiter() (*waiter, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wclosed {
		return nil, ErrClosed
	}
	if n := len(c.free); n > 0 {
		w := c.free[n-1]
		c.free = c.free[:n-1]
		return w, nil
	}
	if !c.acquire() {
		return nil, ErrClosed
	}
	nfd, err := unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 0)
	c.release()
	if err != nil {
		return nil, errnoOf(err)
	}
	f := os.NewFile(uintptr(nfd), "fabric-sock")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, errnoOf(err)
	}
	w := &waiter{f: f, rc: rc}
	c.all = append(c.all, w)
	return w, nil
}

// putWaiter closes a waiter after its wait. Keeping the duplicate
// registered with the runtime's network poller would make every later
// segment wake an idle runtime thread in epoll_pwait, which then competes
// for the CPU with the busy-polling application (measured with cmd/fi_pingpong
// over tcp: 22-33k context switches per 50k iterations, about 360 with the
// descriptor closed). Waits are the slow path; a dup and close per wait is
// cheap beside a park and wake-up.
func (c *Conn) putWaiter(w *waiter) {
	c.wmu.Lock()
	for i, x := range c.all {
		if x == w {
			last := len(c.all) - 1
			c.all[i] = c.all[last]
			c.all[last] = nil
			c.all = c.all[:last]
			break
		}
	}
	closed := c.wclosed
	c.wmu.Unlock()
	if !closed {
		w.f.Close()
	}
}

// The datagram calls (SendTo, RecvFrom) call syscall.RawSyscall6 directly:
// unix.RawSyscall6 is an assembly jump to it, which goes through an ABI
// wrapper, about twenty instructions on every busy poll. Both are raw
// (no scheduler hand-off) and keep their pointer arguments alive
// (go:uintptrkeepalive).

// bytePtr returns a pointer to b's first byte, or nil for an empty slice.
// Callers convert it to uintptr inside the system call's argument list.
func bytePtr(b []byte) *byte {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}

func sockaddrFamily(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch int(binary.LittleEndian.Uint16(b)) {
	case AFInet:
		return AFInet, len(b) >= SizeofSockaddrIn
	case AFInet6:
		return AFInet6, len(b) >= SizeofSockaddrIn6
	}
	return 0, false
}

// toKernel returns sa in the kernel's layout. libfabric's layout stores the
// family little-endian, which is the kernel's on little-endian machines;
// elsewhere the address is copied into tmp with the family swapped.
func toKernel(sa []byte, tmp *[SizeofSockaddrMax]byte) []byte {
	if nativeLE || len(sa) < 2 {
		return sa
	}
	n := copy(tmp[:], sa)
	binary.NativeEndian.PutUint16(tmp[:], binary.LittleEndian.Uint16(sa))
	return tmp[:n]
}

// fromKernel converts a kernel sockaddr in place to libfabric's layout.
func fromKernel(sa []byte) {
	if nativeLE || len(sa) < 2 {
		return
	}
	binary.LittleEndian.PutUint16(sa, binary.NativeEndian.Uint16(sa))
}

func errnoOf(err error) provider.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return TranslateErrno(e)
	}
	return provider.EOTHER
}

// IfaceAddr is one local interface address, as libfabric lists them for
// its per-interface fi_info entries.
type IfaceAddr struct {
	Iface    string       // interface name: the domain name ("eth0", "lo")
	Index    int          // interface index (the IPv6 scope id of link-local addresses); 0 for the loopback entries
	Addr     netip.Addr   // the address, without zone
	Net      netip.Prefix // the masked network
	NetName  string       // the fabric name: "192.0.2.0/24", "127.0.0.1/32", "::1/128"
	Loopback bool         // the loopback entries (FI_LOCAL_COMM only)
	Speed    int64        // link speed in Mb/s from /sys/class/net/*/speed, 0 if unknown
}

// ListAddrs returns the usable local addresses in libfabric's order
// (ofi_get_list_of_addr): addresses of up and running non-loopback
// interfaces, sorted by link speed (fastest first), then IPv4 before IPv6,
// each group in the order libfabric's insertion sort leaves it; then always
// 127.0.0.1 and ::1 on "lo". A non-empty iface (the FI_<PROV>_IFACE value)
// keeps only that interface's addresses; an unknown name filters nothing,
// as in libfabric.
func ListAddrs(iface string) ([]IfaceAddr, error) {
	ifs, err := net.Interfaces()
	var list []IfaceAddr
	if err == nil {
		known := false
		for _, ifc := range ifs {
			if ifc.Name == iface {
				known = true
			}
		}
		if !known {
			iface = ""
		}
		for _, ifc := range ifs {
			if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagRunning == 0 || ifc.Flags&net.FlagLoopback != 0 {
				continue
			}
			if iface != "" && ifc.Name != iface {
				continue
			}
			addrs, err := ifc.Addrs()
			if err != nil {
				continue
			}
			speed := linkSpeed(ifc.Name)
			for _, a := range addrs {
				ipn, ok := a.(*net.IPNet)
				if !ok {
					continue
				}
				ip, ok := netip.AddrFromSlice(ipn.IP)
				if !ok {
					continue
				}
				ip = ip.Unmap()
				ones, _ := ipn.Mask.Size()
				pfx, err := ip.Prefix(ones)
				if err != nil {
					continue
				}
				e := IfaceAddr{Iface: ifc.Name, Index: ifc.Index, Addr: ip, Net: pfx, NetName: pfx.String(),
					Speed: speed}
				list = insertAddr(list, e)
			}
		}
	}
	list = append(list,
		IfaceAddr{Iface: "lo", Addr: netip.AddrFrom4([4]byte{127, 0, 0, 1}),
			Net: netip.PrefixFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 32), NetName: "127.0.0.1/32", Loopback: true},
		IfaceAddr{Iface: "lo", Addr: netip.IPv6Loopback(), Net: netip.PrefixFrom(netip.IPv6Loopback(), 128),
			NetName: "::1/128", Loopback: true})
	return list, nil
}

// insertAddr inserts e before the first entry it "matches" the way
// libfabric's ofi_compare_addr_entry does: a faster link, or the same
// speed and a lower family, or the same speed and family and a different
// address.
func insertAddr(list []IfaceAddr, e IfaceAddr) []IfaceAddr {
	for i, cur := range list {
		if e.Speed > cur.Speed {
			return insertAt(list, i, e)
		}
		if e.Speed < cur.Speed {
			continue
		}
		ef, cf := e.Addr.Is6(), cur.Addr.Is6()
		if !ef && cf {
			return insertAt(list, i, e)
		}
		if ef && !cf {
			continue
		}
		if e.Addr != cur.Addr {
			return insertAt(list, i, e)
		}
	}
	return append(list, e)
}

func insertAt(list []IfaceAddr, i int, e IfaceAddr) []IfaceAddr {
	list = append(list, IfaceAddr{})
	copy(list[i+1:], list[i:])
	list[i] = e
	return list
}

func linkSpeed(name string) int64 {
	b, err := os.ReadFile("/sys/class/net/" + name + "/speed")
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}
