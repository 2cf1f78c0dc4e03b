package sys

import (
	"encoding/binary"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

// Wait-object primitives: the eventfd and epoll descriptors behind
// FI_WAIT_FD completion queues, counters and event queues (the shape of
// libfabric's util wait fd: an epoll set holding a signal descriptor plus
// the descriptors of the bound endpoints), and poll(2) for readiness checks.
// Errors are libfabric error numbers (TranslateErrno).

func waitErrno(err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(unix.Errno); ok {
		return TranslateErrno(e).AsError()
	}
	return provider.EOTHER
}

// EventFDOpen creates a non-blocking, close-on-exec eventfd with a zero
// counter.
func EventFDOpen() (int, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return -1, waitErrno(err)
	}
	return fd, nil
}

// EventFDSignal adds one to the eventfd counter, making it readable. A full
// counter (EAGAIN) is already readable and is not an error.
func EventFDSignal(fd int) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], 1)
	for {
		_, err := unix.Write(fd, b[:])
		switch err {
		case nil, unix.EAGAIN:
			return nil
		case unix.EINTR:
			continue
		}
		return waitErrno(err)
	}
}

// EventFDDrain resets the eventfd counter to zero, making it not readable.
func EventFDDrain(fd int) error {
	var b [8]byte
	for {
		_, err := unix.Read(fd, b[:])
		switch err {
		case nil, unix.EAGAIN:
			return nil
		case unix.EINTR:
			continue
		}
		return waitErrno(err)
	}
}

// EventFDClose closes an eventfd.
func EventFDClose(fd int) error { return waitErrno(unix.Close(fd)) }

// EpollCreate creates a close-on-exec epoll descriptor.
func EpollCreate() (int, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return -1, waitErrno(err)
	}
	return fd, nil
}

// EpollAdd adds fd to the epoll set epfd, level-triggered for readability.
func EpollAdd(epfd, fd int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	return waitErrno(unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev))
}

// EpollDel removes fd from the epoll set epfd.
func EpollDel(epfd, fd int) error {
	return waitErrno(unix.EpollCtl(epfd, unix.EPOLL_CTL_DEL, fd, nil))
}

// EpollWait waits up to timeoutMs milliseconds (negative: forever, 0:
// check only) for a descriptor of epfd to be ready and returns how many
// are. It blocks the calling thread; the library uses it only in tests and
// tools, never on a data path.
func EpollWait(epfd int, timeoutMs int) (int, error) {
	var evs [8]unix.EpollEvent
	for {
		n, err := unix.EpollWait(epfd, evs[:], timeoutMs)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, waitErrno(err)
		}
		return n, nil
	}
}

// EpollReady stores in fds the descriptors of the set that are ready now
// (it does not wait) and returns how many, at most len(fds) and 64.
func EpollReady(epfd int, fds []int32) (int, error) {
	var evs [64]unix.EpollEvent
	m := min(len(fds), len(evs))
	if m == 0 {
		return 0, nil
	}
	for {
		n, err := unix.EpollWait(epfd, evs[:m], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, waitErrno(err)
		}
		for i := 0; i < n; i++ {
			fds[i] = evs[i].Fd
		}
		return n, nil
	}
}

// EpollClose closes an epoll descriptor.
func EpollClose(epfd int) error { return waitErrno(unix.Close(epfd)) }

// PollReadable waits up to timeoutMs milliseconds (negative: forever, 0:
// check only) for fd to become readable (or to report an error or hang-up,
// which a reader also sees at once). It reports whether fd is ready. An
// invalid descriptor gives EBADF. It blocks the calling thread in poll(2).
func PollReadable(fd int, timeoutMs int) (bool, error) {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds[:], timeoutMs)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, waitErrno(err)
		}
		if n == 0 {
			return false, nil
		}
		if fds[0].Revents&unix.POLLNVAL != 0 {
			return false, provider.EBADF
		}
		return true, nil
	}
}
