//go:build !linux

package sys

import (
	"errors"

	"github.com/gofabric/fabric/provider"
)

// ErrNetns wraps the errors of entering a network namespace.
var ErrNetns = errors.New("network namespace")

// InNetns runs f in a network namespace (Linux only; ENOSYS here).
func InNetns(path string, f func() error) error { return errors.Join(ErrNetns, provider.ENOSYS) }
