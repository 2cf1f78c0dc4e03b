//go:build linux

package sys

import "golang.org/x/sys/unix"

// SetSockBuf sets the socket's send (SO_SNDBUF, send true) or receive
// (SO_RCVBUF) buffer size request in bytes. The kernel doubles the request
// for its own bookkeeping and caps it at net.core.wmem_max / rmem_max;
// SockBuf reports the size in effect.
func SetSockBuf(c *Conn, send bool, n int) error {
	if !c.acquire() {
		return ErrClosed
	}
	defer c.release()
	opt := unix.SO_RCVBUF
	if send {
		opt = unix.SO_SNDBUF
	}
	if err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, opt, n); err != nil {
		return errnoOf(err)
	}
	return nil
}

// SockBuf returns the socket's send (send true) or receive buffer size in
// effect, as getsockopt(SO_SNDBUF / SO_RCVBUF) reports it.
func SockBuf(c *Conn, send bool) (int, error) {
	if !c.acquire() {
		return 0, ErrClosed
	}
	defer c.release()
	opt := unix.SO_RCVBUF
	if send {
		opt = unix.SO_SNDBUF
	}
	v, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, opt)
	if err != nil {
		return 0, errnoOf(err)
	}
	return v, nil
}

// ListenBacklog returns the backlog the kernel holds for the listening
// socket c (TCP_INFO reports sk_max_ack_backlog in tcpi_sacked for a
// socket in the LISTEN state).
func ListenBacklog(c *Conn) (int, error) {
	if !c.acquire() {
		return 0, ErrClosed
	}
	defer c.release()
	ti, err := unix.GetsockoptTCPInfo(c.fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0, errnoOf(err)
	}
	return int(ti.Sacked), nil
}
