//go:build unix

package testutil

import (
	"syscall"
	"testing"
	"time"
)

// IdleWindow is how long ExpectIdle watches the process.
const IdleWindow = 500 * time.Millisecond

// usage is the process's CPU time and context switches (getrusage).
type usage struct {
	cpu time.Duration
	csw int64
}

func getUsage(t testing.TB) usage {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return usage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), csw: int64(ru.Nvcsw + ru.Nivcsw)}
}

// ExpectIdle watches the process for IdleWindow, in which nothing but a
// blocked auto-progress goroutine could run, and fails t if it burned
// more than a fifth of the wall time in CPU (a busy loop burns it all)
// or switched context more than 100 times (a 1 ms poll switches ~1,000
// times).
func ExpectIdle(t testing.TB, what string) {
	t.Helper()
	u0, t0 := getUsage(t), time.Now()
	time.Sleep(IdleWindow)
	u1, wall := getUsage(t), time.Since(t0)
	cpu, csw := u1.cpu-u0.cpu, u1.csw-u0.csw
	t.Logf("%s: %v CPU and %d context switches in %v", what, cpu, csw, wall.Round(time.Millisecond))
	if cpu > wall/5 {
		t.Errorf("%s: %v CPU in %v of idle wall time (> 20%%)", what, cpu, wall)
	}
	if csw > 100 {
		t.Errorf("%s: %d context switches in %v idle (polling?)", what, csw, wall)
	}
}
