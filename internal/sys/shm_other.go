//go:build !linux

package sys

import "github.com/gofabric/fabric/provider"

// CreateShm is not supported on this platform.
func CreateShm(name string, size int) (*ShmFile, error) { return nil, provider.ENOSYS }

// OpenShm is not supported on this platform.
func OpenShm(name string) (*ShmFile, error) { return nil, provider.ENOSYS }

// Close is not supported on this platform.
func (f *ShmFile) Close() error { return provider.ENOSYS }

// Unlink is not supported on this platform.
func (f *ShmFile) Unlink() error { return provider.ENOSYS }

// OwnerAlive is not supported on this platform.
func OwnerAlive(name string) (bool, error) { return false, provider.ENOSYS }

// CleanStale is not supported on this platform.
func CleanStale(prefix string) (int, error) { return 0, provider.ENOSYS }

// RemoveStale is not supported on this platform.
func RemoveStale(name string) (bool, error) { return false, provider.ENOSYS }
