package main

import (
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// resources is what the process holds: goroutines, open descriptors, and
// the gofabric files in /dev/shm (of any process).
type resources struct {
	goroutines, fds int
	shm             []string
}

// warmUp makes the Go runtime open what it opens once per process and
// keeps (the network poller's epoll and event descriptors), so that they
// are not counted as leaks.
func warmUp() {
	if r, w, err := os.Pipe(); err == nil { // registers with the poller
		r.Close()
		w.Close()
	}
}

func measure() resources {
	r := resources{goroutines: runtime.NumGoroutine()}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		r.fds = len(fds) - 1 // the descriptor ReadDir itself had open
	}
	if es, err := os.ReadDir("/dev/shm"); err == nil {
		for _, e := range es {
			if strings.Contains(e.Name(), "gofabric") {
				r.shm = append(r.shm, e.Name())
			}
		}
	}
	sort.Strings(r.shm)
	return r
}

// settle measures until the goroutines and descriptors are back to
// before's (goroutines of closed objects take a moment to end) or d has
// passed, and returns the last measure.
func settle(before resources, d time.Duration) resources {
	deadline := time.Now().Add(d)
	for {
		runtime.GC()
		r := measure()
		if (r.goroutines <= before.goroutines && r.fds <= before.fds) || time.Now().After(deadline) {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
}
