package progress

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// TestMain fails the run if goroutines (watchers) outlive the tests.
func TestMain(m *testing.M) { testutil.Main(m) }

type counter struct{ n atomic.Int64 }

func (c *counter) Progress() { c.n.Add(1) }

type funcSrc struct{ f func() }

func (s funcSrc) Progress() { s.f() }

func TestSetAddRemoveRun(t *testing.T) {
	var s Set
	a, b := &counter{}, &counter{}
	if err := s.Add(a); err != nil {
		t.Fatal(err)
	}
	s.Add(b)
	s.Add(a) // second reference: still progressed once per Run
	s.Add(nil)
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2", s.Len())
	}
	s.Run()
	if a.n.Load() != 1 || b.n.Load() != 1 {
		t.Fatalf("progress counts a=%d b=%d, want 1 1", a.n.Load(), b.n.Load())
	}
	if !s.Remove(a) || !s.Contains(a) {
		t.Fatal("first Remove of a doubly added source must keep it")
	}
	if !s.Remove(a) || s.Contains(a) {
		t.Fatal("second Remove must drop it")
	}
	if s.Remove(a) {
		t.Fatal("Remove of an absent source reported true")
	}
	s.Run()
	if a.n.Load() != 1 || b.n.Load() != 2 {
		t.Fatalf("after remove a=%d b=%d, want 1 2", a.n.Load(), b.n.Load())
	}
	// Order of progress is the order of Add.
	var order []int
	var o Set
	for i := 0; i < 3; i++ {
		i := i
		o.Add(&funcSrc2{f: func() { order = append(order, i) }})
	}
	o.Run()
	if len(order) != 3 || order[0] != 0 || order[2] != 2 {
		t.Fatalf("order %v", order)
	}
}

type funcSrc2 struct{ f func() }

func (s *funcSrc2) Progress() { s.f() }

func TestSetNonComparable(t *testing.T) {
	var s Set
	if err := s.Add(funcSrc{f: func() {}}); !errors.Is(err, provider.EINVAL) {
		t.Fatalf("Add of a non-comparable source: %v, want EINVAL", err)
	}
	if s.Remove(funcSrc{f: func() {}}) {
		t.Fatal("Remove of a non-comparable source reported true")
	}
	if s.Contains(funcSrc{f: func() {}}) {
		t.Fatal("Contains of a non-comparable source")
	}
}

func TestSetRunAllocs(t *testing.T) {
	var s Set
	s.Add(&counter{})
	s.Add(&counter{})
	var empty Set
	if n := testing.AllocsPerRun(1000, func() { s.Run(); empty.Run() }); n != 0 {
		t.Fatalf("Run allocates %v", n)
	}
}

func TestSetConcurrent(t *testing.T) {
	var s Set
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					s.Run()
				}
			}
		}()
	}
	srcs := make([]*counter, 8)
	for i := range srcs {
		srcs[i] = &counter{}
	}
	for r := 0; r < 200; r++ {
		for _, c := range srcs {
			s.Add(c)
		}
		for _, c := range srcs {
			s.Remove(c)
		}
	}
	close(stop)
	wg.Wait()
	if s.Len() != 0 {
		t.Fatalf("Len = %d after removing everything", s.Len())
	}
}

func TestNotifyNoWaitersAllocs(t *testing.T) {
	var n Notifier
	if a := testing.AllocsPerRun(1000, n.Notify); a != 0 {
		t.Fatalf("Notify with nobody parked allocates %v", a)
	}
}

func TestBlockWakesOnNotify(t *testing.T) {
	var n Notifier
	var flag atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- n.Block(Options{Deadline: time.Now().Add(5 * time.Second)}, flag.Load)
	}()
	waitParked(t, &n)
	start := time.Now()
	flag.Store(true)
	n.Notify()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Block: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("wake-up took %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Block did not wake")
	}
	if n.Parked() != 0 {
		t.Fatalf("Parked = %d after return", n.Parked())
	}
}

func waitParked(t *testing.T, n *Notifier) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for n.Parked() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("reader never parked")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func TestBlockTimeout(t *testing.T) {
	var n Notifier
	start := time.Now()
	calls := 0
	err := n.Block(Options{Deadline: start.Add(100 * time.Millisecond)}, func() bool { calls++; return false })
	el := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if el < 95*time.Millisecond || el > 2*time.Second {
		t.Fatalf("timeout after %v, want ~100ms", el)
	}
	// It spins briefly, then parks: far fewer checks than a busy loop
	// of 100 ms would make.
	if calls > 100000 {
		t.Fatalf("ready called %d times: not parking", calls)
	}
}

func TestBlockDoneAndClose(t *testing.T) {
	var n Notifier
	done := make(chan struct{})
	res := make(chan error, 1)
	go func() { res <- n.Block(Options{Done: done}, func() bool { return false }) }()
	waitParked(t, &n)
	close(done)
	if err := <-res; !errors.Is(err, ErrDone) {
		t.Fatalf("done: %v", err)
	}
	go func() { res <- n.Block(Options{}, func() bool { return false }) }()
	waitParked(t, &n)
	n.Close()
	select {
	case err := <-res:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not unblock")
	}
	if err := n.Block(Options{}, func() bool { return false }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Block after Close: %v", err)
	}
	if err := n.Block(Options{}, func() bool { return true }); err != nil {
		t.Fatalf("ready condition wins even after Close: %v", err)
	}
}

func TestBlockYieldNeverParks(t *testing.T) {
	var n Notifier
	var calls atomic.Int64
	parkedSeen := false
	err := n.Block(Options{Yield: true, Deadline: time.Now().Add(20 * time.Millisecond)}, func() bool {
		calls.Add(1)
		if n.Parked() != 0 {
			parkedSeen = true
		}
		return false
	})
	if !errors.Is(err, ErrTimeout) || parkedSeen || calls.Load() < 10 {
		t.Fatalf("yield: err=%v parked=%v calls=%d", err, parkedSeen, calls.Load())
	}
}

// readySrc is a source whose WaitReady reports readiness when ready is
// signalled; the next Progress then "produces" (notifies the Notifier), as a
// socket that became readable produces a completion.
type readySrc struct {
	ready    chan struct{}
	n        *Notifier
	pending  atomic.Bool
	produced atomic.Bool
	waits    atomic.Int64
	always   bool // report readiness immediately, produce nothing
}

func (s *readySrc) Progress() {
	if s.pending.Swap(false) {
		s.produced.Store(true)
		s.n.Notify()
	}
}

func (s *readySrc) WaitReady(deadline time.Time) error {
	s.waits.Add(1)
	if s.always {
		return nil
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-s.ready:
		s.pending.Store(true)
		return nil
	case <-t.C:
		return ErrTimeout
	}
}

func TestWatcherWakesParkedReader(t *testing.T) {
	var h Hub
	if err := h.Init(provider.WaitUnspec); err != nil {
		t.Fatal(err)
	}
	src := &readySrc{ready: make(chan struct{}, 1), n: &h.notifier}
	h.AddSource(src)
	res := make(chan error, 1)
	go func() {
		res <- h.Block(time.Now().Add(5*time.Second), nil, src.produced.Load)
	}()
	waitParked(t, &h.notifier)
	time.Sleep(5 * time.Millisecond)
	src.ready <- struct{}{}
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watcher did not wake the reader")
	}
	if src.waits.Load() == 0 {
		t.Fatal("WaitReady never called")
	}
	h.RemoveSource(src)
	h.Close()
}

func TestWatcherBacksOff(t *testing.T) {
	var h Hub
	h.Init(provider.WaitUnspec)
	defer h.Close()
	src := &readySrc{always: true, n: &h.notifier}
	h.AddSource(src)
	err := h.Block(time.Now().Add(150*time.Millisecond), nil, func() bool { return false })
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	// 150 ms of a source that is always ready: with backoff (50 µs
	// doubling to 10 ms) that is a few dozen readiness calls, not a spin.
	if w := src.waits.Load(); w > 200 || w == 0 {
		t.Fatalf("WaitReady called %d times in 150 ms", w)
	}
}

func watchers() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "created by github.com/gofabric/fabric/internal/progress.(*Notifier).startWatchersLocked")
}

func TestWatchersStopWhenNobodyParked(t *testing.T) {
	var h Hub
	h.Init(provider.WaitUnspec)
	defer h.Close()
	src := &readySrc{ready: make(chan struct{}, 1), n: &h.notifier}
	h.AddSource(src)
	seen := 0
	h.Block(time.Now().Add(20*time.Millisecond), nil, func() bool {
		if h.notifier.Parked() > 0 {
			seen = max(seen, watchers())
		}
		return false
	})
	if seen == 0 {
		t.Fatal("no watcher ran while the reader was parked")
	}
	deadline := time.Now().Add(2 * time.Second)
	for watchers() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if w := watchers(); w > 0 {
		t.Fatalf("%d watchers still running after the reader left", w)
	}
}

type deadSrc struct{ calls atomic.Int64 }

func (s *deadSrc) Progress() {}
func (s *deadSrc) WaitReady(time.Time) error {
	s.calls.Add(1)
	return provider.EBADF
}

func TestWatcherBacksOffOnClosedSource(t *testing.T) {
	var h Hub
	h.Init(provider.WaitUnspec)
	defer h.Close()
	src := &deadSrc{}
	h.AddSource(src)
	h.Block(time.Now().Add(50*time.Millisecond), nil, func() bool { return false })
	// Failing at once, it is retried with a backoff (50 µs doubling), not
	// in a tight loop, and not abandoned (it may be enabled later).
	if c := src.calls.Load(); c < 2 || c > 30 {
		t.Fatalf("WaitReady of a closed source called %d times in 50 ms", c)
	}
}

// fdSrc is a source with only a descriptor (provider.FDWaiter).
type fdSrc struct {
	fd       int
	progress atomic.Int64
	hit      atomic.Bool
}

func (s *fdSrc) Progress() {
	s.progress.Add(1)
	if ok, _ := sys.PollReadable(s.fd, 0); ok {
		sys.EventFDDrain(s.fd)
		s.hit.Store(true)
	}
}
func (s *fdSrc) WaitFD() int { return s.fd }

func TestFDWaiterWatcherAndFDWait(t *testing.T) {
	ev, err := sys.EventFDOpen()
	if err != nil {
		t.Fatal(err)
	}
	defer sys.EventFDClose(ev)
	var h Hub
	if err := h.Init(provider.WaitFD); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	src := &fdSrc{fd: ev}
	if err := h.AddSource(src); err != nil {
		t.Fatal(err)
	}
	fd, err := h.WaitFD()
	if err != nil || fd < 0 {
		t.Fatalf("WaitFD = %d, %v", fd, err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("fresh wait fd is readable")
	}
	// The source's descriptor is in the wait set.
	sys.EventFDSignal(ev)
	if ok, _ := sys.PollReadable(fd, 1000); !ok {
		t.Fatal("wait fd not readable while a source descriptor is")
	}
	if err := h.TryWait(); err != nil { // drains the source through progress
		t.Fatal(err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("wait fd readable after progress drained the source")
	}
	// Signal arms the eventfd once; Reset clears it.
	h.Wake()
	h.Wake()
	if ok, _ := sys.PollReadable(fd, 0); !ok {
		t.Fatal("wait fd not readable after Signal")
	}
	h.fd.Reset()
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("wait fd readable after Reset")
	}
	// A parked reader is woken by the source's descriptor (watcher).
	src.hit.Store(false)
	res := make(chan error, 1)
	go func() { res <- h.Block(time.Now().Add(5*time.Second), nil, src.hit.Load) }()
	waitParked(t, &h.notifier)
	time.Sleep(2 * time.Millisecond)
	sys.EventFDSignal(ev)
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("descriptor readiness did not wake the reader")
	}
	h.RemoveSource(src)
	sys.EventFDSignal(ev)
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("removed source's descriptor still in the wait set")
	}
}

func TestHubWaitObjects(t *testing.T) {
	for _, tc := range []struct {
		w       provider.WaitObj
		initErr error
		fdErr   error
		tryErr  error
		blkErr  error
	}{
		{provider.WaitNone, nil, provider.ENODATA, provider.EINVAL, provider.ENOSYS},
		{provider.WaitUnspec, nil, provider.ENOSYS, nil, ErrTimeout},
		{provider.WaitMutexCond, nil, provider.ENOSYS, nil, ErrTimeout},
		{provider.WaitYield, nil, provider.ENOSYS, nil, ErrTimeout},
		{provider.WaitFD, nil, nil, nil, ErrTimeout},
		{provider.WaitSet, nil, provider.ENOSYS, nil, ErrTimeout},    // joins a set with JoinSet; blocks on its own too
		{provider.WaitPollFD, nil, provider.ENOSYS, nil, ErrTimeout}, // PollFDs, not WaitFD
		{provider.WaitObj(42), provider.EINVAL, nil, nil, nil},
	} {
		var h Hub
		err := h.Init(tc.w)
		if !errors.Is(err, tc.initErr) || (err != nil) != (tc.initErr != nil) {
			t.Fatalf("%v: Init = %v, want %v", tc.w, err, tc.initErr)
		}
		if err != nil {
			continue
		}
		if _, err := h.WaitFD(); !errors.Is(err, tc.fdErr) || (err != nil) != (tc.fdErr != nil) {
			t.Fatalf("%v: WaitFD = %v, want %v", tc.w, err, tc.fdErr)
		}
		if err := h.TryWait(); err != tc.tryErr {
			t.Fatalf("%v: TryWait = %v, want %v", tc.w, err, tc.tryErr)
		}
		if err := h.Block(time.Now().Add(time.Millisecond), nil, func() bool { return false }); err != tc.blkErr {
			t.Fatalf("%v: Block = %v, want %v", tc.w, err, tc.blkErr)
		}
		h.Close()
		if _, err := h.WaitFD(); err != provider.EBADF {
			t.Fatalf("%v: WaitFD after close = %v", tc.w, err)
		}
	}
}

func TestFDWaitSignalAllocs(t *testing.T) {
	w, err := NewFDWait()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Signal()
	if n := testing.AllocsPerRun(1000, w.Signal); n != 0 {
		t.Fatalf("Signal allocates %v", n)
	}
	if err := w.AddFD(-1); err != provider.EINVAL {
		t.Fatalf("AddFD(-1) = %v", err)
	}
	w.Close()
	if w.FD() != -1 {
		t.Fatal("FD after Close")
	}
	if err := w.AddFD(0); err != provider.EBADF {
		t.Fatalf("AddFD after Close = %v", err)
	}
	w.Signal() // no panic, no write to a closed descriptor
	w.Reset()
}

// busySrc is always ready and produces at every Progress, which takes a
// while and records whether it overlapped the reader's own work.
type busySrc struct {
	n         *Notifier
	app       atomic.Bool // the reader is outside park (checking, or returned)
	runs      atomic.Int64
	overlaps  atomic.Int64
	inRunning atomic.Bool
}

func (s *busySrc) Progress() {
	s.inRunning.Store(true)
	if s.app.Load() {
		s.overlaps.Add(1)
	}
	time.Sleep(50 * time.Microsecond)
	if s.app.Load() {
		s.overlaps.Add(1)
	}
	s.inRunning.Store(false)
	s.runs.Add(1)
	s.n.Notify()
}

func (s *busySrc) WaitReady(time.Time) error { return nil }

// TestWatcherProgressInsideBlock: a watcher progresses its source only
// while the reader sleeps in Block, never while the reader checks its
// condition or after Block returned (so an application that serialises
// its own calls on a source, FI_THREAD_DOMAIN, also serialises the
// watchers', and may close the source once Block returned).
func TestWatcherProgressInsideBlock(t *testing.T) {
	var h Hub
	if err := h.Init(provider.WaitUnspec); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	src := &busySrc{n: &h.notifier}
	h.AddSource(src)
	for i := 0; i < 60; i++ {
		err := h.Block(time.Now().Add(time.Duration(1+i%4)*time.Millisecond), nil, func() bool {
			// The reader's own check (Block calls it outside park).
			src.app.Store(true)
			time.Sleep(20 * time.Microsecond)
			src.app.Store(false)
			return false
		})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v", err)
		}
		// Block returned: the application's own calls (and Close).
		src.app.Store(true)
		if src.inRunning.Load() {
			t.Fatal("a watcher's progress is running after Block returned")
		}
		time.Sleep(30 * time.Microsecond)
		src.app.Store(false)
	}
	if src.runs.Load() == 0 {
		t.Fatal("the watcher never progressed the source")
	}
	if o := src.overlaps.Load(); o != 0 {
		t.Fatalf("%d watcher progress calls overlapped the reader's own work", o)
	}
}
