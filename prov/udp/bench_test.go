package udp

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/provider"
)

// BenchmarkPingPong measures a round trip between two endpoints of one
// process with manual progress, like fi_pingpong: each side injects, then
// busy-polls its endpoint (Progress) until the reply is received, in its
// own goroutine. ns/op is one round trip; usec/xfer is one way, as
// fi_pingpong prints it.
func BenchmarkPingPong(b *testing.B) {
	b.Run("prov=udp", func(b *testing.B) {
		for _, size := range []int{1, 64, 1024, 1472} {
			b.Run("size="+strconv.Itoa(size), func(b *testing.B) { benchPingPong(b, size) })
		}
	})
}

// pingSide is one endpoint of the ping-pong with a receive posted.
type pingSide struct {
	x   *tep
	buf []byte
	rm  provider.Msg
}

func newPingSide(x *tep, size int) *pingSide {
	s := &pingSide{x: x, buf: make([]byte, size)}
	s.rm = provider.Msg{Buf: s.buf, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
	return s
}

func (s *pingSide) post() { _ = s.x.rq.Post(&s.rm, false) }

// await busy-polls until the posted receive completes, then re-posts it.
func (s *pingSide) await(stop *atomic.Bool) bool {
	for {
		s.x.ep.Progress()
		if n, _ := s.x.rxCQ.count(); n > 0 {
			s.x.rxCQ.reset()
			s.post()
			return true
		}
		if stop != nil && stop.Load() {
			return false
		}
	}
}

func (s *pingSide) inject(to provider.Addr, msg []byte) {
	for s.x.ep.Send(provider.Msg{Buf: msg, Addr: to, Flags: provider.FlagInject}) == provider.EAGAIN {
		s.x.ep.Progress()
	}
}

func benchPingPong(b *testing.B, size int) {
	a, p := pair(b, epOpts{})
	sa, sp := newPingSide(a, size), newPingSide(p, size)
	sa.post()
	sp.post()
	msg := make([]byte, size)
	toP, toA := a.peers[p], p.peers[a]
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		reply := make([]byte, size)
		for sp.await(&stop) {
			sp.inject(toA, reply)
		}
	}()
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	b.SetBytes(int64(2 * size))
	start := time.Now()
	n := 0
	for b.Loop() {
		t0 := time.Now()
		sa.inject(toP, msg)
		sa.await(nil)
		if len(lat) < cap(lat) {
			lat = append(lat, time.Since(t0))
		}
		n++
	}
	el := time.Since(start)
	stop.Store(true)
	wg.Wait()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/2, "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/2, "p99-ns")
	}
	if n > 0 {
		b.ReportMetric(el.Seconds()*1e6/float64(2*n), "usec/xfer")
		b.ReportMetric(float64(2*n)/el.Seconds(), "msgs/s")
	}
}

// BenchmarkSendRecv measures the provider's per-message cost without a
// second goroutine: inject a datagram and receive it on the other endpoint
// in the same goroutine (two system calls, one copy, two completions'
// worth of matching).
func BenchmarkSendRecv(b *testing.B) {
	b.Run("prov=udp", func(b *testing.B) {
		for _, size := range []int{64, 1472} {
			b.Run("size="+strconv.Itoa(size), func(b *testing.B) {
				a, p := pair(b, epOpts{})
				sp := newPingSide(p, size)
				sp.post()
				msg := make([]byte, size)
				to := a.peers[p]
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					a.ep.Send(provider.Msg{Buf: msg, Addr: to, Flags: provider.FlagInject})
					sp.await(nil)
				}
			})
		}
	})
}
