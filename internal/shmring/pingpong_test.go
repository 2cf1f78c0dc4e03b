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
	payload := make([]byte, 64)
	send := func(r *Region) {
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
	recv := func(r *Region) {
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
		for i := 0; i < n; i++ {
			recv(rb)
			send(ra)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for i := 0; i < n; i++ {
		send(rb)
		recv(ra)
	}
	wg.Wait()
}
