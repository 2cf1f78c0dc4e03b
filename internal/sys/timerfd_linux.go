package sys

import (
	"time"

	"golang.org/x/sys/unix"
)

// TimerFDOpen creates a non-blocking, close-on-exec timerfd on the
// monotonic clock: readable once an armed timer expires.
func TimerFDOpen() (int, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return -1, waitErrno(err)
	}
	return fd, nil
}

// TimerFDArm arms the timer to expire once, d from now (re-arming moves
// the expiry).
func TimerFDArm(fd int, d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	return waitErrno(unix.TimerfdSettime(fd, 0, &spec, nil))
}

// TimerFDDrain consumes the expirations of a timerfd (none: not an error).
func TimerFDDrain(fd int) error { return EventFDDrain(fd) }

// TimerFDClose closes a timerfd.
func TimerFDClose(fd int) error { return waitErrno(unix.Close(fd)) }
