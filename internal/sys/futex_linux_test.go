package sys

import (
	"math"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gofabric/fabric/provider"
)

func TestFutexInProcess(t *testing.T) {
	var w uint32
	start := time.Now()
	if err := FutexWait(&w, 0, 20*time.Millisecond); err != provider.ETIMEDOUT {
		t.Fatalf("wait with the value unchanged: %v, want FI_ETIMEDOUT", err)
	}
	if d := time.Since(start); d < 15*time.Millisecond || d > 5*time.Second {
		t.Fatalf("20 ms wait took %v", d)
	}
	if err := FutexWait(&w, 0, 0); err != provider.ETIMEDOUT {
		t.Fatalf("zero timeout: %v, want FI_ETIMEDOUT", err)
	}
	if err := FutexWait(&w, 1, time.Second); err != nil {
		t.Fatalf("value mismatch: %v, want nil", err)
	}
	var buf [8]uint32
	mis := (*uint32)(unsafe.Add(unsafe.Pointer(&buf[0]), 1))
	if err := FutexWait(nil, 0, 0); err != provider.EINVAL {
		t.Fatalf("nil addr: %v", err)
	}
	if err := FutexWait(mis, 0, 0); err != provider.EINVAL {
		t.Fatalf("misaligned addr: %v", err)
	}
	for _, n := range []int{0, -1} {
		if _, err := FutexWake(&w, n); err != provider.EINVAL {
			t.Fatalf("wake %d: %v", n, err)
		}
	}
	if _, err := FutexWake(mis, 1); err != provider.EINVAL {
		t.Fatalf("wake misaligned: %v", err)
	}
	if n, err := FutexWake(&w, math.MaxInt); n != 0 || err != nil {
		t.Fatalf("wake with no waiter = %d, %v", n, err)
	}
}

// TestFutexWakeGoroutines: waiters on a word of a shared file mapping are
// woken by FutexWake, which reports how many it woke.
func TestFutexWakeGoroutines(t *testing.T) {
	f, err := CreateShm(testPrefix(t)+"w", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { f.Unlink(); f.Close() }()
	w := (*uint32)(unsafe.Pointer(&f.Bytes()[128]))
	const waiters = 3
	done := make(chan error, waiters)
	for i := 0; i < waiters; i++ {
		go func() {
			deadline := time.Now().Add(helperWait)
			for atomic.LoadUint32(w) == 0 {
				if time.Now().After(deadline) {
					done <- provider.ETIMEDOUT
					return
				}
				FutexWait(w, 0, time.Until(deadline))
			}
			done <- nil
		}()
	}
	// Wake until every waiter has been found asleep on the word once.
	woken := 0
	deadline := time.Now().Add(helperWait)
	for woken < waiters && time.Now().Before(deadline) {
		n, err := FutexWake(w, FutexWakeAll)
		if err != nil {
			t.Fatal(err)
		}
		woken += n
		time.Sleep(time.Millisecond)
	}
	atomic.StoreUint32(w, 1)
	FutexWake(w, FutexWakeAll)
	for i := 0; i < waiters; i++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(helperWait):
			t.Fatal("a waiter did not return")
		}
	}
	if woken < waiters {
		t.Fatalf("FutexWake found %d sleepers, want >= %d", woken, waiters)
	}
}

// TestFutexCrossProcess: a child process sleeps in FutexWait on a word of
// our region; our FutexWake finds it there (it returns 1 only if the futex
// is keyed by the shared file, not by the child's address space), and after
// we store 1 and wake again the child returns and exits.
func TestFutexCrossProcess(t *testing.T) {
	f, err := CreateShm(testPrefix(t)+"x", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { f.Unlink(); f.Close() }()
	const off = 256
	w := (*uint32)(unsafe.Pointer(&f.Bytes()[off]))
	c := startChild(t, nil, "futex", f.Name(), "256")
	if l := c.line(t); l != "waiting" {
		t.Fatalf("child: %q", l)
	}
	found := false
	for deadline := time.Now().Add(helperWait); !found && time.Now().Before(deadline); {
		n, err := FutexWake(w, 1)
		if err != nil {
			t.Fatal(err)
		}
		found = n == 1
		time.Sleep(time.Millisecond)
	}
	if !found {
		t.Fatal("FutexWake never found the child asleep on the shared word")
	}
	start := time.Now()
	atomic.StoreUint32(w, 1)
	if _, err := FutexWake(w, 1); err != nil {
		t.Fatal(err)
	}
	if l := c.line(t); l != "done" {
		t.Fatalf("child: %q", l)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("child took %v to see the wake", d)
	}
	if code := c.wait(t); code != 0 {
		t.Fatalf("child exit %d", code)
	}
}

func TestFutexAllocs(t *testing.T) {
	var w uint32
	if n := testing.AllocsPerRun(100, func() {
		FutexWait(&w, 1, time.Second) // mismatch: returns at once
		FutexWait(&w, 0, 0)
		FutexWake(&w, 1)
	}); n != 0 {
		t.Fatalf("%v allocs per wait+wake", n)
	}
}

// BenchmarkFutexWakeNone: the wake a sender issues when the sleepers word
// says someone sleeps but nobody is in the kernel queue any more.
func BenchmarkFutexWakeNone(b *testing.B) {
	var w uint32
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		FutexWake(&w, 1)
	}
}

// BenchmarkFutexPingPong: two goroutines hand a word back and forth through
// FutexWait/FutexWake: the round trip of a sleeping receiver's wake-up.
func BenchmarkFutexPingPong(b *testing.B) {
	var w uint32 // even: ping's turn, odd: pong's
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < b.N; i++ {
			for v := atomic.LoadUint32(&w); v%2 == 0; v = atomic.LoadUint32(&w) {
				FutexWait(&w, v, time.Second)
			}
			atomic.AddUint32(&w, 1)
			FutexWake(&w, 1)
		}
	}()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		atomic.AddUint32(&w, 1)
		FutexWake(&w, 1)
		for v := atomic.LoadUint32(&w); v%2 == 1; v = atomic.LoadUint32(&w) {
			FutexWait(&w, v, time.Second)
		}
	}
	<-done
}

// TestFutexAtomic: the atomic.Uint32 forms wait and wake on the same word
// as the *uint32 forms.
func TestFutexAtomic(t *testing.T) {
	var w atomic.Uint32
	if err := FutexWaitAtomic(&w, 0, time.Millisecond); err != provider.ETIMEDOUT {
		t.Fatalf("wait: %v", err)
	}
	if err := FutexWaitAtomic(&w, 1, time.Second); err != nil {
		t.Fatalf("mismatch: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(helperWait)
		for w.Load() == 0 && time.Now().Before(deadline) {
			FutexWait((*uint32)(unsafe.Pointer(&w)), 0, time.Until(deadline))
		}
	}()
	found := false
	for deadline := time.Now().Add(helperWait); !found && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n, err := FutexWakeAtomic(&w, 1)
		if err != nil {
			t.Fatal(err)
		}
		found = n == 1
	}
	w.Store(1)
	FutexWakeAtomic(&w, FutexWakeAll)
	<-done
	if !found {
		t.Fatal("FutexWakeAtomic never found the waiter of the *uint32 form")
	}
}
