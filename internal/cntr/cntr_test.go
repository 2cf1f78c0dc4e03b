package cntr

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

func mustNew(t testing.TB, cfg Config) *Cntr {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConfig(t *testing.T) {
	for _, w := range []provider.WaitObj{provider.WaitPollFD, provider.WaitSet} {
		c, err := New(Config{WaitObj: w})
		if err != nil {
			t.Fatalf("%v: %v", w, err)
		}
		c.Close()
	}
	if _, err := New(Config{WaitObj: 77}); err != provider.EINVAL {
		t.Fatalf("bad wait obj: %v", err)
	}
}

// The fabtests cntr_test sequence: set(i), seterr(2i), add(i), adderr(i).
func TestSetAddErr(t *testing.T) {
	c := mustNew(t, Config{})
	for i := uint64(1); i < 20; i++ {
		if err := c.Set(i); err != nil {
			t.Fatal(err)
		}
		c.SetErr(2 * i)
		c.Add(i)
		c.AddErr(i)
		v, err := c.Read()
		e, err2 := c.ReadErr()
		if v != 2*i || e != 3*i || err != nil || err2 != nil {
			t.Fatalf("i=%d: read=%d readerr=%d (%v %v)", i, v, e, err, err2)
		}
	}
	c.Set(0)
	c.SetErr(0)
	c.Inc()
	c.Inc()
	c.IncErr()
	if v, _ := c.Read(); v != 2 {
		t.Fatalf("after 2 Inc: %d", v)
	}
	if e, _ := c.ReadErr(); e != 1 {
		t.Fatalf("after IncErr: %d", e)
	}
}

type src struct {
	c     *Cntr
	calls atomic.Int64
	inc   atomic.Int64
}

func (s *src) Progress() {
	s.calls.Add(1)
	for s.inc.Load() > 0 {
		s.inc.Add(-1)
		s.c.Inc()
	}
}

func TestReadDrivesProgress(t *testing.T) {
	c := mustNew(t, Config{})
	s := &src{c: c}
	c.AddSource(s)
	s.inc.Store(3)
	if v, _ := c.Read(); v != 3 || s.calls.Load() != 1 {
		t.Fatalf("read = %d, progress calls %d", v, s.calls.Load())
	}
	c.RemoveSource(s)
	c.Read()
	if s.calls.Load() != 1 {
		t.Fatal("removed source progressed")
	}
}

func TestWait(t *testing.T) {
	c := mustNew(t, Config{WaitObj: provider.WaitUnspec})
	// Already satisfied.
	if err := c.Wait(0, time.Now().Add(time.Second), nil); err != nil {
		t.Fatal(err)
	}
	// Timeout.
	start := time.Now()
	if err := c.Wait(1, start.Add(100*time.Millisecond), nil); err != provider.ETIMEDOUT {
		t.Fatalf("timeout: %v", err)
	}
	if el := time.Since(start); el < 95*time.Millisecond || el > time.Second {
		t.Fatalf("wait(100ms) took %v", el)
	}
	if e, _ := c.ReadErr(); e != 0 {
		t.Fatal("timeout changed the error value")
	}
	// Woken by increments reaching the threshold.
	res := make(chan error, 1)
	go func() { res <- c.Wait(3, time.Now().Add(5*time.Second), nil) }()
	for i := 0; i < 2; i++ {
		time.Sleep(5 * time.Millisecond)
		c.Inc()
	}
	select {
	case err := <-res:
		t.Fatalf("returned below threshold: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	c.Inc()
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("threshold reached, still waiting")
	}
	// An error increment unblocks with EAVAIL.
	go func() { res <- c.Wait(100, time.Time{}, nil) }()
	time.Sleep(10 * time.Millisecond)
	c.IncErr()
	select {
	case err := <-res:
		if err != provider.EAVAIL {
			t.Fatalf("error change: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("error change did not unblock")
	}
	// Done.
	done := make(chan struct{})
	close(done)
	if err := c.Wait(100, time.Time{}, done); err != progress.ErrDone {
		t.Fatalf("done: %v", err)
	}
}

func TestWaitWaitNone(t *testing.T) {
	c := mustNew(t, Config{WaitObj: provider.WaitNone})
	if err := c.Wait(1, time.Time{}, nil); err != provider.ENOSYS {
		t.Fatalf("wait on FI_WAIT_NONE: %v", err)
	}
	if _, err := c.WaitFD(); err != provider.ENODATA {
		t.Fatalf("getwait: %v", err)
	}
}

func TestCloseUnblocksWait(t *testing.T) {
	c, _ := New(Config{WaitObj: provider.WaitYield})
	res := make(chan error, 1)
	go func() { res <- c.Wait(1, time.Time{}, nil) }()
	time.Sleep(10 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if err != provider.EBADF {
			t.Fatalf("wait on close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close did not unblock wait")
	}
	if err := c.Close(); err != provider.EBADF {
		t.Fatalf("second close: %v", err)
	}
	if _, err := c.Read(); err != provider.EBADF {
		t.Fatalf("read after close: %v", err)
	}
	if err := c.Add(1); err != provider.EBADF {
		t.Fatalf("add after close: %v", err)
	}
	if err := c.Wait(0, time.Time{}, nil); err != provider.EBADF {
		t.Fatalf("wait after close: %v", err)
	}
}

func TestWaitFD(t *testing.T) {
	c := mustNew(t, Config{WaitObj: provider.WaitFD})
	fd, err := c.WaitFD()
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("readable before any change")
	}
	c.Inc()
	if ok, _ := sys.PollReadable(fd, 1000); !ok {
		t.Fatal("not readable after Inc")
	}
	c.TryWait()
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("readable after TryWait")
	}
	c.AddErr(1)
	if ok, _ := sys.PollReadable(fd, 1000); !ok {
		t.Fatal("not readable after AddErr")
	}
}

func TestConcurrentInc(t *testing.T) {
	c := mustNew(t, Config{WaitObj: provider.WaitUnspec})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				c.Inc()
			}
		}()
	}
	if err := c.Wait(20000, time.Now().Add(10*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if v, _ := c.Read(); v != 20000 {
		t.Fatalf("value %d", v)
	}
}

func TestAllocs(t *testing.T) {
	c := mustNew(t, Config{WaitObj: provider.WaitFD})
	c.AddSource(&src{c: c})
	f := func() {
		c.Inc()
		c.IncErr()
		c.Read()
		c.ReadErr()
	}
	f()
	if n := testing.AllocsPerRun(1000, f); n != 0 {
		t.Fatalf("Inc/Read allocate %v", n)
	}
}
