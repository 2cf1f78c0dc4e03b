package fabtest

import "github.com/gofabric/fabric/internal/sys"

// fdReadable reports whether descriptor fd is readable now (poll(2) with a
// zero timeout, through internal/sys), as fabtests checks a FI_WAIT_FD
// descriptor with poll. ok is false when the check cannot be made: an
// invalid descriptor, or a system without poll support in internal/sys.
func fdReadable(fd int) (readable, ok bool) {
	if fd < 0 {
		return false, false
	}
	r, err := sys.PollReadable(fd, 0)
	if err != nil {
		return false, false
	}
	return r, true
}
