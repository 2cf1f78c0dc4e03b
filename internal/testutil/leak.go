package testutil

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// LeakWait bounds how long Run waits for goroutines to end and descriptors
// to close after the tests before calling them leaked.
const LeakWait = 3 * time.Second

// Main runs the tests and exits with their code, or 1 when they pass but
// leave goroutines running or file descriptors open (see Run). A package's
// TestMain is then
//
//	func TestMain(m *testing.M) { testutil.Main(m) }
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs the tests and returns their exit code, or 1 when they passed but
// more goroutines run or more file descriptors are open afterwards (after
// waiting up to LeakWait for them to end) than before. The stacks of all
// goroutines are written to stderr on a goroutine leak. No check is made when
// the tests failed or when the fuzzing engine runs (it keeps goroutines of its
// own). Use Run instead of Main when TestMain has cleanup to do.
func Run(m *testing.M) int {
	// Start the runtime's network poller, whose descriptors stay open for
	// the life of the process, before counting descriptors.
	if pc, err := net.ListenPacket("udp4", "127.0.0.1:0"); err == nil {
		pc.Close()
	}
	b := Snapshot()
	code := m.Run()
	if code != 0 || fuzzing() {
		return code
	}
	if err := b.Check(LeakWait, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// Baseline is a count of goroutines and open file descriptors.
type Baseline struct {
	Goroutines, FDs int
}

// Snapshot counts the goroutines and open file descriptors now.
func Snapshot() Baseline {
	return Baseline{Goroutines: runtime.NumGoroutine(), FDs: CountFDs()}
}

// Check waits up to wait for the goroutine and descriptor counts to fall to
// the baseline and returns an error naming what is still above it. On a
// goroutine leak it writes all goroutines' stacks to stacks (if not nil).
func (b Baseline) Check(wait time.Duration, stacks io.Writer) error {
	deadline := time.Now().Add(wait)
	for (CountFDs() > b.FDs || runtime.NumGoroutine() > b.Goroutines) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	fds, g := CountFDs(), runtime.NumGoroutine()
	if g > b.Goroutines && stacks != nil {
		buf := make([]byte, 1<<20)
		stacks.Write(buf[:runtime.Stack(buf, true)])
	}
	switch {
	case fds > b.FDs && g > b.Goroutines:
		return fmt.Errorf("leak: %d file descriptors open and %d goroutines running after the tests, %d and %d before", fds, g, b.FDs, b.Goroutines)
	case fds > b.FDs:
		return fmt.Errorf("leak: %d file descriptors open after the tests, %d before", fds, b.FDs)
	case g > b.Goroutines:
		return fmt.Errorf("leak: %d goroutines running after the tests, %d before", g, b.Goroutines)
	}
	return nil
}

// CountFDs returns the number of open file descriptors of the process, or 0
// where /proc/self/fd cannot be read (the descriptor check is then a no-op).
func CountFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil {
			if v := f.Value.String(); v != "" && v != "false" {
				return true
			}
		}
	}
	return false
}
