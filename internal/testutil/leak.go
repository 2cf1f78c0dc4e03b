package testutil

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
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

// Baseline records the goroutines running and the number of file descriptors
// open at one moment.
type Baseline struct {
	// Goroutines holds the IDs of the goroutines that were running. A leak
	// is a goroutine that is not among them; comparing counts instead would
	// miss a leak while a goroutine of an earlier test is still ending.
	Goroutines map[uint64]bool
	FDs        int
}

// Snapshot records the goroutines running and counts the open file
// descriptors now.
func Snapshot() Baseline {
	ids := make(map[uint64]bool)
	for _, g := range goroutines() {
		ids[g.id] = true
	}
	return Baseline{Goroutines: ids, FDs: CountFDs()}
}

// Check waits up to wait for every goroutine started since the baseline to
// end and for the descriptor count to fall to the baseline, and returns an
// error naming what is still there. On a goroutine leak it writes the stacks
// of the goroutines started since the baseline to stacks (if not nil).
func (b Baseline) Check(wait time.Duration, stacks io.Writer) error {
	deadline := time.Now().Add(wait)
	var fresh []goroutine
	for {
		fresh = b.fresh()
		if (CountFDs() <= b.FDs && len(fresh) == 0) || !time.Now().Before(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	fds := CountFDs()
	if len(fresh) > 0 && stacks != nil {
		for _, g := range fresh {
			fmt.Fprintf(stacks, "%s\n\n", g.stack)
		}
	}
	switch {
	case fds > b.FDs && len(fresh) > 0:
		return fmt.Errorf("leak: %d file descriptors open after the tests, %d before, and %d goroutines started by them still running", fds, b.FDs, len(fresh))
	case fds > b.FDs:
		return fmt.Errorf("leak: %d file descriptors open after the tests, %d before", fds, b.FDs)
	case len(fresh) > 0:
		return fmt.Errorf("leak: %d goroutines started by the tests still running", len(fresh))
	}
	return nil
}

// fresh returns the goroutines, other than the caller, that were not running
// at the baseline.
func (b Baseline) fresh() []goroutine {
	all := goroutines()
	var out []goroutine
	for i, g := range all {
		if i == 0 { // runtime.Stack lists the calling goroutine first
			continue
		}
		if !b.Goroutines[g.id] {
			out = append(out, g)
		}
	}
	return out
}

type goroutine struct {
	id    uint64
	stack string
}

// goroutines returns every goroutine's ID and stack, the caller's first.
func goroutines() []goroutine {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []goroutine
	for _, rec := range strings.Split(string(buf), "\n\n") {
		// Each record starts "goroutine 42 [state]:".
		rest, ok := strings.CutPrefix(rec, "goroutine ")
		if !ok {
			continue
		}
		num, _, ok := strings.Cut(rest, " ")
		if !ok {
			continue
		}
		id, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			continue
		}
		out = append(out, goroutine{id: id, stack: rec})
	}
	return out
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
