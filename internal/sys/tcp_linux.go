//go:build linux

package sys

import (
	"unsafe"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

// TCP stream sockets for the tcp provider. Every descriptor is
// non-blocking and close-on-exec; the calls never block (connect and
// accept return EINPROGRESS / EAGAIN), and waiting is done with the Conn's
// WaitReadable/WaitWritable in the runtime's network poller. Addresses are
// sockaddr bytes in libfabric's layout.

// TCPSocket creates a non-blocking TCP socket of the family of addr (a
// sockaddr_in or sockaddr_in6), with SO_REUSEADDR set when reuseAddr is
// true (listening sockets, and sockets bound to a given port). It does not
// bind.
func TCPSocket(addr []byte, reuseAddr bool) (*Conn, error) {
	fam, ok := sockaddrFamily(addr)
	if !ok {
		return nil, provider.EINVAL
	}
	fd, err := unix.Socket(fam, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return nil, errnoOf(err)
	}
	if reuseAddr {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			unix.Close(fd)
			return nil, errnoOf(err)
		}
	}
	return newConn(fd, fam), nil
}

// TCPBind binds c to addr (port 0: an ephemeral port). EADDRINUSE is
// returned as provider.EADDRINUSE.
func TCPBind(c *Conn, addr []byte) error {
	e, bad := c.addrSyscall(unix.SYS_BIND, addr)
	if bad != 0 {
		return bad
	}
	if e != 0 {
		return TranslateErrno(e)
	}
	return nil
}

// addrSyscall runs bind or connect (trap) on c with addr, in the kernel's
// layout. bad is EINVAL for an address that is not a socket address and
// ErrClosed on a closed c; otherwise e is the system call's errno.
func (c *Conn) addrSyscall(trap uintptr, addr []byte) (e unix.Errno, bad provider.Errno) {
	if _, ok := sockaddrFamily(addr); !ok {
		return 0, provider.EINVAL
	}
	var tmp [SizeofSockaddrMax]byte
	ka := toKernel(addr, &tmp)
	if !c.acquire() {
		return 0, ErrClosed
	}
	_, _, e = unix.Syscall(trap, uintptr(c.fd), uintptr(unsafe.Pointer(bytePtr(ka))), uintptr(len(ka)))
	c.release()
	return e, 0
}

// TCPRebind replaces the socket of c by a new TCP socket (with
// SO_REUSEADDR when reuseAddr is true) bound to addr
// (fi_setname before listen or connect), keeping c's descriptor number:
// the new socket is dup3'ed over it, so wait sets that registered the
// number stay valid. It returns EBUSY while a goroutine is parked in one of
// c's wait calls. On error c is unchanged.
func TCPRebind(c *Conn, addr []byte, reuseAddr bool) error {
	n, err := TCPSocket(addr, reuseAddr)
	if err != nil {
		return err
	}
	if err := TCPBind(n, addr); err != nil {
		n.Close()
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wclosed || !c.acquire() {
		n.Close()
		return ErrClosed
	}
	if len(c.free) != len(c.all) {
		c.release()
		n.Close()
		return provider.EBUSY
	}
	err = unix.Dup3(n.fd, c.fd, unix.O_CLOEXEC)
	if err == nil {
		c.family = n.family
	}
	c.release()
	n.Close()
	if err != nil {
		return errnoOf(err)
	}
	// The idle waiters duplicate the old socket; drop them.
	for _, w := range c.all {
		w.f.Close()
	}
	c.all, c.free = nil, nil
	return nil
}

// TCPReleaseWaiters closes c's idle poller registrations (the descriptor
// duplicates its wait calls registered with the runtime's network poller).
// A registered socket makes the kernel run the poller's wake-up callback
// for every incoming segment while it holds the socket lock, which slows
// down a busy-polling reader; a connection progressed by polling releases
// them once it no longer needs to wait. Later waits register again.
func TCPReleaseWaiters(c *Conn) {
	c.wmu.Lock()
	idle := c.free
	c.free = nil
	for _, w := range idle {
		for i, x := range c.all {
			if x == w {
				c.all = append(c.all[:i], c.all[i+1:]...)
				break
			}
		}
	}
	c.wmu.Unlock()
	for _, w := range idle {
		w.f.Close()
	}
}

// TCPListen puts c in the listening state with the given backlog.
func TCPListen(c *Conn, backlog int) error {
	if !c.acquire() {
		return ErrClosed
	}
	defer c.release()
	if err := unix.Listen(c.fd, backlog); err != nil {
		return errnoOf(err)
	}
	return nil
}

// TCPAccept accepts one pending connection of the listening socket c
// without blocking. It returns the new non-blocking Conn and the peer's
// address, or EAGAIN when no connection is pending.
func TCPAccept(c *Conn) (*Conn, []byte, provider.Errno) {
	var buf [SizeofSockaddrMax]byte
	l := uint32(len(buf))
	if !c.acquire() {
		return nil, nil, ErrClosed
	}
	var r uintptr
	var e unix.Errno
	for {
		r, _, e = unix.Syscall6(unix.SYS_ACCEPT4, uintptr(c.fd), uintptr(unsafe.Pointer(&buf[0])),
			uintptr(unsafe.Pointer(&l)), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
		if e != unix.EINTR && e != unix.ECONNABORTED {
			break
		}
	}
	c.release()
	if e != 0 {
		return nil, nil, TranslateErrno(e)
	}
	if int(l) > len(buf) {
		l = uint32(len(buf))
	}
	peer := append([]byte(nil), buf[:l]...)
	fromKernel(peer)
	return newConn(int(r), c.family), peer, 0
}

// TCPConnect starts connecting c to addr without blocking. It returns 0
// when the connection is established at once, EINPROGRESS when it is in
// progress (TCPConnectDone reports the outcome), or the error.
func TCPConnect(c *Conn, addr []byte) provider.Errno {
	e, bad := c.addrSyscall(unix.SYS_CONNECT, addr)
	if bad != 0 {
		return bad
	}
	switch e {
	case 0:
		return 0
	case unix.EINPROGRESS, unix.EINTR, unix.EALREADY:
		return provider.EINPROGRESS
	}
	return TranslateErrno(e)
}

// TCPConnectDone reports, without blocking, whether the connect started
// by TCPConnect has finished, and its error (SO_ERROR) if it failed.
func TCPConnectDone(c *Conn) (bool, provider.Errno) {
	if !c.acquire() {
		return true, ErrClosed
	}
	defer c.release()
	if !pollNow(c.fd, unix.POLLOUT) {
		return false, 0
	}
	v, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return true, errnoOf(err)
	}
	if v != 0 {
		if unix.Errno(v) == unix.EINPROGRESS || unix.Errno(v) == unix.EALREADY {
			return false, 0
		}
		return true, TranslateErrno(unix.Errno(v))
	}
	return true, 0
}

// TCPPeerName returns the connected peer's address (getpeername).
func TCPPeerName(c *Conn) ([]byte, error) { return c.sockName(unix.SYS_GETPEERNAME) }

// TCPPeerShutWrite reports, without blocking or reading, whether the peer
// of c has shut down its writing side (its FIN arrived, perhaps behind
// data not read yet) or the connection failed.
func TCPPeerShutWrite(c *Conn) bool {
	if !c.acquire() {
		return true
	}
	r := pollNow(c.fd, unix.POLLRDHUP)
	c.release()
	return r
}

// TCPSetCongestion sets c's congestion control algorithm
// (TCP_CONGESTION), one the kernel has (net.ipv4.tcp_available_congestion_control)
// and allows this process (tcp_allowed_congestion_control, or
// CAP_NET_ADMIN).
func TCPSetCongestion(c *Conn, name string) error {
	if !c.acquire() {
		return ErrClosed
	}
	defer c.release()
	if err := unix.SetsockoptString(c.fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, name); err != nil {
		return errnoOf(err)
	}
	return nil
}

// TCPCongestion returns c's congestion control algorithm.
func TCPCongestion(c *Conn) (string, error) {
	if !c.acquire() {
		return "", ErrClosed
	}
	defer c.release()
	v, err := unix.GetsockoptString(c.fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	if err != nil {
		return "", errnoOf(err)
	}
	return v, nil
}

// TCPSetNoDelay sets TCP_NODELAY on c.
func TCPSetNoDelay(c *Conn, on bool) error {
	if !c.acquire() {
		return ErrClosed
	}
	defer c.release()
	v := 0
	if on {
		v = 1
	}
	if err := unix.SetsockoptInt(c.fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, v); err != nil {
		return errnoOf(err)
	}
	return nil
}

// TCPShutdownWrite shuts c down for writing (shutdown(SHUT_WR)): the peer
// reads end of stream once it has read what was written; c can still read.
func TCPShutdownWrite(c *Conn) error {
	if !c.acquire() {
		return ErrClosed
	}
	defer c.release()
	if err := unix.Shutdown(c.fd, unix.SHUT_WR); err != nil && err != unix.ENOTCONN {
		return errnoOf(err)
	}
	return nil
}

// TCPShutdown shuts down both directions of c (shutdown(SHUT_RDWR)): the
// peer reads end of stream, and local reads return end of stream. The
// descriptor stays open until Close.
func TCPShutdown(c *Conn) error {
	if !c.acquire() {
		return ErrClosed
	}
	defer c.release()
	if err := unix.Shutdown(c.fd, unix.SHUT_RDWR); err != nil && err != unix.ENOTCONN {
		return errnoOf(err)
	}
	return nil
}
