//go:build linux

package fabtest

import "syscall"

// fdReadable reports whether descriptor fd is readable now (select with a
// zero timeout), as fabtests checks a FI_WAIT_FD descriptor with poll. ok
// is false when the check cannot be made.
func fdReadable(fd int) (readable, ok bool) {
	if fd < 0 || fd >= 1024 {
		return false, false
	}
	var set syscall.FdSet
	set.Bits[fd/64] |= 1 << (uint(fd) % 64)
	tv := syscall.Timeval{}
	for {
		n, err := syscall.Select(fd+1, &set, nil, nil, &tv)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false, false
		}
		return n > 0, true
	}
}
