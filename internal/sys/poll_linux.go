package sys

import "golang.org/x/sys/unix"

// PollFD is one descriptor of a Poll call: Write asks for writability as
// well as readability; Ready reports what poll found.
type PollFD struct {
	FD    int
	Write bool
	// NoRead leaves readability out (a socket whose reader waits for
	// room elsewhere): only writability, errors and hang-ups wake.
	NoRead bool
	Ready  bool
}

// Poll waits up to timeoutMs milliseconds (-1: no limit) until one of fds
// is readable (or writable, with Write), has an error or hung up, and
// marks those Ready. It reports whether any was ready; EINTR reads as
// none. The calling goroutine blocks its thread in poll(2), so callers keep
// the timeout short or use it from a goroutine of their own.
func Poll(fds []PollFD, timeoutMs int) (bool, error) {
	var arr [16]unix.PollFd
	p := arr[:0]
	if len(fds) > len(arr) {
		p = make([]unix.PollFd, 0, len(fds))
	}
	for _, f := range fds {
		ev := int16(unix.POLLIN)
		if f.NoRead {
			ev = 0
		}
		if f.Write {
			ev |= unix.POLLOUT
		}
		p = append(p, unix.PollFd{Fd: int32(f.FD), Events: ev})
	}
	n, err := unix.Poll(p, timeoutMs)
	if err == unix.EINTR {
		return false, nil
	}
	if err != nil {
		return false, waitErrno(err)
	}
	for i := range fds {
		fds[i].Ready = p[i].Revents != 0
	}
	return n > 0, nil
}
