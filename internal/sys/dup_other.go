//go:build !linux

package sys

import "github.com/gofabric/fabric/provider"

// Dup is not implemented on this platform.
func (c *Conn) Dup() (*Conn, error) { return nil, provider.ENOSYS }
