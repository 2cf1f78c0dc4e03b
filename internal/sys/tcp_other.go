//go:build !linux

package sys

import "github.com/gofabric/fabric/provider"

// TCPSocket is not implemented on this platform.
func TCPSocket(addr []byte, reuseAddr bool) (*Conn, error) { return nil, provider.ENOSYS }

// TCPBind is not implemented on this platform.
func TCPBind(c *Conn, addr []byte) error { return provider.ENOSYS }

// TCPRebind is not implemented on this platform.
func TCPRebind(c *Conn, addr []byte, reuseAddr bool) error { return provider.ENOSYS }

// TCPReleaseWaiters does nothing on this platform.
func TCPReleaseWaiters(c *Conn) {}

// TCPListen is not implemented on this platform.
func TCPListen(c *Conn, backlog int) error { return provider.ENOSYS }

// TCPAccept is not implemented on this platform.
func TCPAccept(c *Conn) (*Conn, []byte, provider.Errno) { return nil, nil, provider.ENOSYS }

// TCPConnect is not implemented on this platform.
func TCPConnect(c *Conn, addr []byte) provider.Errno { return provider.ENOSYS }

// TCPConnectDone is not implemented on this platform.
func TCPConnectDone(c *Conn) (bool, provider.Errno) { return true, provider.ENOSYS }

// TCPPeerName is not implemented on this platform.
func TCPPeerName(c *Conn) ([]byte, error) { return nil, provider.ENOSYS }

// TCPPeerShutWrite is not implemented on this platform.
func TCPPeerShutWrite(c *Conn) bool { return false }

// TCPSetCongestion is not implemented on this platform.
func TCPSetCongestion(c *Conn, name string) error { return provider.ENOSYS }

// TCPCongestion is not implemented on this platform.
func TCPCongestion(c *Conn) (string, error) { return "", provider.ENOSYS }

// TCPSetNoDelay is not implemented on this platform.
func TCPSetNoDelay(c *Conn, on bool) error { return provider.ENOSYS }

// TCPShutdownWrite is not implemented on this platform.
func TCPShutdownWrite(c *Conn) error { return provider.ENOSYS }

// TCPShutdown is not implemented on this platform.
func TCPShutdown(c *Conn) error { return provider.ENOSYS }
