//go:build !linux

package sys

import (
	"net/netip"
	"syscall"
	"time"

	"github.com/gofabric/fabric/provider"
)

// Sockaddr sizes and families in libfabric's layout (Linux values).
const (
	SizeofSockaddrIn  = 16
	SizeofSockaddrIn6 = 28
	SizeofSockaddrMax = 128
	AFInet            = 2
	AFInet6           = 10
)

// MaxIOV is the largest scatter/gather list SendMsg and RecvMsg accept.
const MaxIOV = 16

// Errors of the wait calls.
const (
	ErrTimeout = provider.ETIMEDOUT
	ErrClosed  = provider.EBADF
)

// Conn is a raw socket; on this platform every call returns ENOSYS.
type Conn struct{}

// OpenUDP is not implemented on this platform.
func OpenUDP(addr []byte) (*Conn, error) { return nil, provider.ENOSYS }

// Adopt is not implemented on this platform.
func Adopt(c syscall.Conn) (*Conn, error) { return nil, provider.ENOSYS }

// FD returns -1.
func (c *Conn) FD() int { return -1 }

// Family returns 0.
func (c *Conn) Family() int { return 0 }

// Close returns ENOSYS.
func (c *Conn) Close() error { return provider.ENOSYS }

// Name returns ENOSYS.
func (c *Conn) Name() ([]byte, error) { return nil, provider.ENOSYS }

// SendTo returns ENOSYS.
func (c *Conn) SendTo(b, to []byte) (int, provider.Errno) { return 0, provider.ENOSYS }

// SendMsg returns ENOSYS.
func (c *Conn) SendMsg(iov [][]byte, to []byte) (int, provider.Errno) { return 0, provider.ENOSYS }

// RecvFrom returns ENOSYS.
func (c *Conn) RecvFrom(b, from []byte) (n, fromLen int, errno provider.Errno) {
	return 0, 0, provider.ENOSYS
}

// RecvFromOwned returns ENOSYS.
func (c *Conn) RecvFromOwned(b, from []byte) (n, fromLen int, errno provider.Errno) {
	return 0, 0, provider.ENOSYS
}

// RecvMsg returns ENOSYS.
func (c *Conn) RecvMsg(iov [][]byte, from []byte) (n, fromLen int, errno provider.Errno) {
	return 0, 0, provider.ENOSYS
}

// Read returns ENOSYS.
func (c *Conn) Read(b []byte) (int, provider.Errno) { return 0, provider.ENOSYS }

// Write returns ENOSYS.
func (c *Conn) Write(b []byte) (int, provider.Errno) { return 0, provider.ENOSYS }

// Writev returns ENOSYS.
func (c *Conn) Writev(iov [][]byte) (int, provider.Errno) { return 0, provider.ENOSYS }

// WaitReadable returns ENOSYS.
func (c *Conn) WaitReadable(deadline time.Time) error { return provider.ENOSYS }

// WaitWritable returns ENOSYS.
func (c *Conn) WaitWritable(deadline time.Time) error { return provider.ENOSYS }

// IfaceAddr is one local interface address (see the Linux documentation).
type IfaceAddr struct {
	Iface    string
	Index    int
	Addr     netip.Addr
	Net      netip.Prefix
	NetName  string
	Loopback bool
	Speed    int64
}

// ListAddrs is not implemented on this platform.
func ListAddrs(iface string) ([]IfaceAddr, error) { return nil, provider.ENOSYS }

// TranslateErrno maps the portable errnos; others give EOTHER.
func TranslateErrno(e syscall.Errno) provider.Errno {
	switch e {
	case 0:
		return 0
	case syscall.EAGAIN:
		return provider.EAGAIN
	case syscall.EINTR:
		return provider.EINTR
	case syscall.EINVAL:
		return provider.EINVAL
	case syscall.EBADF:
		return provider.EBADF
	case syscall.ENOMEM:
		return provider.ENOMEM
	case syscall.ENOSYS:
		return provider.ENOSYS
	}
	return provider.EOTHER
}
