//go:build linux

package sys

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// ErrNetns wraps the errors of InNetns that come from entering the
// namespace rather than from f (tests skip on it where namespaces cannot
// be made).
var ErrNetns = errors.New("network namespace")

// InNetns runs f on an OS thread that has joined a network namespace, for
// tests that put sockets in namespaces of their own: the namespace of the
// file path (such as /var/run/netns/NAME, made by `ip netns add`), or a new
// one when path is "". The sockets f opens stay in that namespace
// whichever thread uses them later. Afterwards the thread goes back to its
// namespace and to the scheduler; if it cannot go back it is never handed
// back and ends with the goroutine. (A thread left in another namespace
// would be a trap: the next goroutine to run on it, or the thread group
// leader's view in /proc/self/net, would see the wrong network.)
func InNetns(path string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("%w: the current one: %w", ErrNetns, err)
			return
		}
		defer unix.Close(orig)
		if path == "" {
			err = unix.Unshare(unix.CLONE_NEWNET)
		} else {
			var fd int
			if fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
				err = unix.Setns(fd, unix.CLONE_NEWNET)
				unix.Close(fd)
			}
		}
		if err != nil {
			if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
				runtime.UnlockOSThread()
			}
			errc <- fmt.Errorf("%w %q: %w", ErrNetns, path, err)
			return
		}
		ferr := f()
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- ferr
	}()
	return <-errc
}
