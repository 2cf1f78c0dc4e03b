//go:build !linux

package fabtest

// fdReadable cannot check descriptors on this system.
func fdReadable(fd int) (readable, ok bool) { return false, false }
