//go:build !linux

package sys

import "github.com/gofabric/fabric/provider"

// ProcessVMReadv is not supported on this platform.
func ProcessVMReadv(pid int, local [][]byte, remote []RemoteIOV) (int, error) {
	return 0, provider.ENOSYS
}

// ProcessVMWritev is not supported on this platform.
func ProcessVMWritev(pid int, local [][]byte, remote []RemoteIOV) (int, error) {
	return 0, provider.ENOSYS
}

// CMAAvailable reports false: cross-memory attach is Linux only.
func CMAAvailable() (bool, string) { return false, "unavailable (not Linux)" }
