package shm

import (
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/av"
	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// testEP opens an enabled endpoint with its own CQ, AV and receive queue,
// closed at cleanup.
func testEP(t *testing.T) (*endpoint, *cq.CQ, *av.AV) {
	t.Helper()
	return testEPProgress(t, provider.ProgressManual)
}

func testEPProgress(t *testing.T, progress provider.Progress) (*endpoint, *cq.CQ, *av.AV) {
	t.Helper()
	return testEPConfig(t, progress, srx.Config{})
}

// testEPConfig opens an enabled endpoint with its own receive queue of
// configuration rq and one CQ for both directions.
func testEPConfig(t *testing.T, progress provider.Progress, rq srx.Config) (*endpoint, *cq.CQ, *av.AV) {
	t.Helper()
	infos, err := shmProvider{}.GetInfo(provider.APIVersion, "", "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	infos[0].DomainAttr.DataProgress = progress
	fab, err := shmProvider{}.Fabric(nil)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := fab.Domain(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	pe, err := dom.Endpoint(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	ep := pe.(*endpoint)
	c, err := cq.New(cq.Config{Format: provider.CQFormatTagged})
	if err != nil {
		t.Fatal(err)
	}
	a, err := av.New(av.Config{Format: provider.AddrStr, Handler: shmProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ep.Enable(&provider.Resources{TxCQ: c, RxCQ: c, AV: a, SRX: srx.New(rq), OwnSRX: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ep.Close()
		c.Close()
		a.Close()
	})
	return ep, c, a
}

func insertName(t *testing.T, a *av.AV, name []byte) provider.Addr {
	t.Helper()
	fa := []provider.Addr{0}
	if n, err := a.Insert([][]byte{name}, fa, 0, nil); n != 1 || err != nil {
		t.Fatalf("insert: %d %v", n, err)
	}
	return fa[0]
}

// TestWaitReadyFutex: WaitReady sleeps on the region's futex (the
// sleepers word says so while it sleeps) and returns as soon as a command
// arrives; it times out at its deadline, and returns EBADF at Close.
func TestWaitReadyFutex(t *testing.T) {
	a, _, _ := testEP(t)
	b, _, bav := testEP(t)
	dst := insertName(t, bav, a.name)
	start := time.Now()
	if err := a.WaitReady(start.Add(30 * time.Millisecond)); err != provider.ETIMEDOUT {
		t.Fatalf("idle WaitReady = %v, want ETIMEDOUT", err)
	}
	if d := time.Since(start); d < 25*time.Millisecond || d > 2*time.Second {
		t.Fatalf("30 ms WaitReady took %v", d)
	}
	done := make(chan error, 1)
	go func() { done <- a.WaitReady(time.Now().Add(10 * time.Second)) }()
	deadline := time.Now().Add(5 * time.Second)
	for a.own.Sleepers().Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("WaitReady never slept on the futex")
		}
		time.Sleep(time.Millisecond)
	}
	sent := time.Now()
	if err := b.Send(provider.Msg{Buf: []byte("wake"), Addr: dst}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WaitReady after a send: %v", err)
		}
		t.Logf("woken %v after the send", time.Since(sent))
	case <-time.After(5 * time.Second):
		t.Fatal("WaitReady not woken by the send")
	}
	if a.own.Sleepers().Load() != 0 {
		t.Fatal("sleepers word not back to 0")
	}
	a.Progress() // drain the command
	if a.own.Pending() {
		t.Fatal("command still queued after Progress")
	}
	go func() { done <- a.WaitReady(time.Time{}) }() // no deadline: Close must end it
	for a.own.Sleepers().Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("WaitReady never slept on the futex")
		}
		time.Sleep(time.Millisecond)
	}
	a.Close()
	select {
	case err := <-done:
		if err != provider.EBADF {
			t.Fatalf("WaitReady at Close: %v, want EBADF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end WaitReady")
	}
}

// TestWaitFD: the descriptor is readable exactly while a command waits
// (a send from another endpoint arms it through the futex; Progress
// disarms it once the queue is empty), and Close stops its goroutine.
func TestWaitFD(t *testing.T) {
	a, _, _ := testEP(t)
	b, _, bav := testEP(t)
	dst := insertName(t, bav, a.name)
	fd := a.WaitFD()
	if fd < 0 || a.WaitFD() != fd {
		t.Fatalf("WaitFD = %d then %d", fd, a.WaitFD())
	}
	if ok, err := sys.PollReadable(fd, 20); ok || err != nil {
		t.Fatalf("idle endpoint's fd readable=%v err=%v", ok, err)
	}
	for i := 0; i < 3; i++ {
		if err := b.Send(provider.Msg{Buf: []byte("wake"), Addr: dst}); err != nil {
			t.Fatal(err)
		}
		if ok, err := sys.PollReadable(fd, 5000); !ok || err != nil {
			t.Fatalf("round %d: fd not readable after a send: %v", i, err)
		}
		a.Progress()
		if ok, _ := sys.PollReadable(fd, 0); ok {
			t.Fatalf("round %d: fd readable after progress drained the queue", i)
		}
	}
	a.Close()
	if a.fdr.on.Load() || a.WaitFD() != -1 {
		t.Fatal("the fd waiter survived Close")
	}
}

// TestSleepersDoNotPoll: idle, the auto-progress goroutine and the fd
// goroutine each sleep once on the futex (no periodic wake-ups), and a
// WaitReady caller like progress's watchers (50 ms deadlines) sleeps once
// per call.
func TestSleepersDoNotPoll(t *testing.T) {
	auto, _, _ := testEPProgress(t, provider.ProgressAuto)
	fdEP, _, _ := testEP(t)
	if fdEP.WaitFD() < 0 {
		t.Fatal("no wait fd")
	}
	waiter, _, _ := testEP(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			waiter.WaitReady(time.Now().Add(50 * time.Millisecond))
		}
	}()
	time.Sleep(50 * time.Millisecond)
	a0, f0, w0 := auto.waits.sleeps.Load(), fdEP.waits.sleeps.Load(), waiter.waits.sleeps.Load()
	time.Sleep(500 * time.Millisecond)
	a1, f1, w1 := auto.waits.sleeps.Load(), fdEP.waits.sleeps.Load(), waiter.waits.sleeps.Load()
	close(stop)
	<-done
	t.Logf("futex sleeps in 500 ms: auto %d, fd %d, 50 ms waiter %d", a1-a0, f1-f0, w1-w0)
	if a1-a0 > 2 || f1-f0 > 2 {
		t.Errorf("idle auto progress slept %d times and fd goroutine %d times in 500 ms: polling", a1-a0, f1-f0)
	}
	// ~10; a loaded machine may deschedule the waiter for a while, so
	// only sleeping at all (not spinning) and not more often than its
	// deadlines allow are asserted.
	if w1-w0 > 15 || w1-w0 < 1 {
		t.Errorf("a waiter with 50 ms deadlines slept %d times in 500 ms, want ~10", w1-w0)
	}
}

// TestWaitFDPollingNoWakeups: while the application polls an endpoint
// whose FI_WAIT_FD descriptor exists, the fd goroutine does not sleep on
// the futex, so senders do not pay a wake-up per message (the wake word
// barely moves over 200 messages sent while the application polls).
func TestWaitFDPollingNoWakeups(t *testing.T) {
	a, acq, _ := testEP(t)
	b, _, bav := testEP(t)
	dst := insertName(t, bav, a.name)
	if a.WaitFD() < 0 {
		t.Fatal("no wait fd")
	}
	var ent [8]provider.CQEntry
	poll := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); {
			a.Progress()
			acq.Read(ent[:])
		}
	}
	poll(20 * time.Millisecond) // the goroutine sees the polls
	seq0 := a.own.Seq().Load()
	msg := []byte("polled")
	buf := make([]byte, 16)
	for i := 0; i < 200; i++ {
		poll(200 * time.Microsecond) // sparse traffic, the application polls
		post(t, a, buf, nil)
		for b.Send(provider.Msg{Buf: msg, Addr: dst}) != nil {
			a.Progress()
		}
		for n, _ := acq.Read(ent[:1]); n == 0; n, _ = acq.Read(ent[:1]) {
			a.Progress()
		}
	}
	// A sleeper per message would move it ~200 times; the bound leaves
	// room for the scheduling gaps of a loaded machine (a descheduled
	// poller looks idle to the goroutine for a while): 26 seen at load 4.
	if d := a.own.Seq().Load() - seq0; d > 100 {
		t.Fatalf("the wake word moved %d times over 200 polled messages: a futex sleeper while the app polls", d)
	} else {
		t.Logf("wake word moved %d times over 200 polled messages", d)
	}
}
