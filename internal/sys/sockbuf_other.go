//go:build !linux

package sys

import "github.com/gofabric/fabric/provider"

// SetSockBuf is not implemented on this platform.
func SetSockBuf(c *Conn, send bool, n int) error { return provider.ENOSYS }

// SockBuf is not implemented on this platform.
func SockBuf(c *Conn, send bool) (int, error) { return 0, provider.ENOSYS }

// ListenBacklog is not implemented on this platform.
func ListenBacklog(c *Conn) (int, error) { return 0, provider.ENOSYS }
