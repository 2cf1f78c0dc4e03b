package shmring

import (
	"runtime"
	"sync"
	"testing"
)

// BenchmarkRingPingPong: two goroutines (on two cores when the machine
// has them) bounce a 64-byte inline command between two regions, each
// consuming its own queue and producing into the other's: the cache-line
// traffic of one transfer each way, without any provider code.
func BenchmarkRingPingPong(b *testing.B) {
	p := Params{Slots: 256, SlotSize: 512, Bufs: 1, BufSize: 4096}
	ra, rb := newTestRegion(b, p), newTestRegion(b, p)
	// The producers use views of their own, as another process would
	// (Region values shared by both goroutines would add false sharing
	// between one's consumer fields and the other's producer fields).
	pa, pb := NewRegion(ra.Bytes(), &ra.Header), NewRegion(rb.Bytes(), &rb.Header)
	send := func(r *Region, payload []byte) {
		for {
			pos, cmd, ok := r.Reserve()
			if ok {
				c := Cmd{Op: OpMsg, Flags: FlagInline, Size: 64}
				Encode(cmd, &c, payload)
				r.Publish(pos)
				return
			}
		}
	}
	recv := func(r *Region, payload []byte) {
		var c Cmd
		for {
			if cmd := r.Peek(); cmd != nil {
				r.Decode(cmd, &c)
				copy(payload, c.Payload)
				r.Release()
				return
			}
		}
	}
	n := b.N
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		buf := make([]byte, 64)
		for i := 0; i < n; i++ {
			recv(rb, buf)
			send(pa, buf)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, 64)
	b.ResetTimer()
	for i := 0; i < n; i++ {
		send(pb, buf)
		recv(ra, buf)
	}
	wg.Wait()
}
