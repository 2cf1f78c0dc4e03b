package shm_test

import (
	"syscall"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestIdleSleepersBurnNothing: a reader blocked in SRead, an idle
// auto-progress endpoint and an endpoint whose FI_WAIT_FD descriptor was
// asked for all sleep on the region's futex: the process stays idle (no
// polling loop), and a message still wakes the reader at once.
func TestIdleSleepersBurnNothing(t *testing.T) {
	a, b, _, ba := pair(t, nodeOpts{})
	auto := newNode(t, nodeOpts{auto: true})
	fdcq, err := a.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitFD, Format: fabric.CQFormatTagged})
	if err != nil {
		t.Fatal(err)
	}
	defer fdcq.Close()
	fdEP, err := a.dom.OpenEndpoint(a.info)
	if err != nil {
		t.Fatal(err)
	}
	defer fdEP.Close()
	for _, err := range []error{fdEP.BindCQ(fdcq, fabric.FlagTransmit|fabric.FlagRecv), fdEP.BindAV(a.av), fdEP.Enable()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if fd, err := fdcq.WaitFD(); err != nil || fd < 0 {
		t.Fatalf("WaitFD: %d %v", fd, err)
	}
	_ = auto // idle, asleep
	buf := make([]byte, 64)
	if err := a.ep.Recv(buf, nil, fabric.AddrUnspec, "r"); err != nil {
		t.Fatal(err)
	}
	type res struct {
		n   int
		err error
		at  time.Time
	}
	done := make(chan res, 1)
	go func() {
		ent := make([]fabric.CQEntry, 1)
		n, err := a.rxcq.SRead(ent, 1, 10*time.Second)
		done <- res{n, err, time.Now()}
	}()
	time.Sleep(20 * time.Millisecond) // the reader parks
	// Idle: little CPU (a polling loop would burn a core; each futex sleep
	// costs the Go runtime some tens of context switches, so those are
	// not the measure here: TestSleepersDoNotPoll counts the sleeps).
	cpu0, t0 := cpuTime(t), time.Now()
	time.Sleep(500 * time.Millisecond)
	if cpu, wall := cpuTime(t)-cpu0, time.Since(t0); cpu > wall/20 {
		t.Errorf("%v CPU in %v with every sleeper idle (> 5%%)", cpu, wall)
	} else {
		t.Logf("%v CPU in %v with every sleeper idle", cpu, wall.Round(time.Millisecond))
	}
	sent := time.Now()
	if err := b.ep.Send([]byte("wake up"), nil, ba, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.n != 1 || r.err != nil {
			t.Fatalf("SRead = %d, %v", r.n, r.err)
		}
		if d := r.at.Sub(sent); d > 100*time.Millisecond {
			t.Fatalf("SRead returned %v after the send", d)
		}
		t.Logf("SRead returned %v after the send", r.at.Sub(sent))
	case <-time.After(5 * time.Second):
		t.Fatal("SRead not woken by the send")
	}
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
