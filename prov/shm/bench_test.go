package shm_test

import (
	"fmt"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/shm"
)

// roundTrip returns a function doing one ping-pong: a sends size bytes to
// b (tagged or not, inject or not), b's receive completes, b sends back,
// a's receive completes; every CQ entry is read. It is one goroutine
// driving both sides.
func roundTrip(t testing.TB, size int, tagged, inject bool) func() {
	return roundTripOpts(t, nodeOpts{}, size, tagged, inject)
}

func roundTripOpts(t testing.TB, o nodeOpts, size int, tagged, inject bool) func() {
	a, b, ab, ba := pair(t, o)
	sa, sb := make([]byte, size), make([]byte, size)
	ra, rb := make([]byte, size), make([]byte, size)
	ent := make([]fabric.CQEntry, 1)
	ctx := new(int)
	// send waits for the send's completion, driving the peer's progress
	// meanwhile: a large message completes only once the receiver has
	// taken it (its bounce buffers back, or its CMA pull acked).
	send := func(n, peer *node, buf []byte, dst fabric.Addr) {
		for {
			var err error
			switch {
			case tagged && inject:
				err = n.ep.TInject(buf, dst, 5)
			case tagged:
				err = n.ep.TSend(buf, nil, dst, 5, ctx)
			case inject:
				err = n.ep.Inject(buf, dst)
			default:
				err = n.ep.Send(buf, nil, dst, ctx)
			}
			if err == nil {
				break
			}
			n.txcq.Read(ent)
			peer.rxcq.Read(nil)
		}
		if !inject {
			for {
				if c, _ := n.txcq.Read(ent); c == 1 {
					break
				}
				peer.rxcq.Read(nil)
			}
		}
	}
	recv := func(n *node, buf []byte) {
		var err error
		if tagged {
			err = n.ep.TRecv(buf, nil, fabric.AddrUnspec, 5, 0, ctx)
		} else {
			err = n.ep.Recv(buf, nil, fabric.AddrUnspec, ctx)
		}
		if err != nil {
			panic(err)
		}
	}
	wait := func(n *node) {
		for {
			if c, _ := n.rxcq.Read(ent); c == 1 {
				return
			}
		}
	}
	return func() {
		recv(b, rb)
		recv(a, ra)
		send(a, b, sa, ab)
		wait(b)
		send(b, a, sb, ba)
		wait(a)
	}
}

// TestZeroAllocHotPath: steady-state send, inject, tagged send, the
// receiver's progress, matching and CQ write, and CQ reads do not
// allocate, inline and segmented.
func TestZeroAllocHotPath(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	for _, size := range []int{64, 4096} {
		for _, v := range []struct {
			tagged, inject bool
			th             fabric.Threading
		}{{false, false, 0}, {false, true, 0}, {true, false, 0}, {true, true, 0},
			{false, false, fabric.ThreadDomain}, {true, true, fabric.ThreadDomain}} {
			name := fmt.Sprintf("size=%d/tagged=%v/inject=%v/thread=%v", size, v.tagged, v.inject, v.th)
			t.Run(name, func(t *testing.T) {
				rt := roundTripOpts(t, nodeOpts{threading: v.th}, size, v.tagged, v.inject)
				for i := 0; i < 100; i++ {
					rt()
				}
				if n := testing.AllocsPerRun(500, rt); n != 0 {
					t.Fatalf("%v allocations per round trip", n)
				}
			})
		}
	}
	// An empty poll.
	a := newNode(t, nodeOpts{})
	ent := make([]fabric.CQEntry, 1)
	if n := testing.AllocsPerRun(1000, func() { a.rxcq.Read(ent) }); n != 0 {
		t.Fatalf("empty CQ read: %v allocations", n)
	}
}

// BenchmarkPingPong measures a round trip (two transfers) between two
// endpoints of this process driven by one goroutine: the CPU cost of the
// send, progress, match, completion and CQ read paths (not the latency
// across cores; cmd/fi_pingpong measures that). thread=domain opens the
// domain with FI_THREAD_DOMAIN: the endpoints skip their own locks.
func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{64, 256, 1024, 4096, 65536, 1 << 20} {
		for _, tagged := range []bool{false, true} {
			for _, th := range []fabric.Threading{fabric.ThreadSafe, fabric.ThreadDomain} {
				name := "safe"
				if th == fabric.ThreadDomain {
					name = "domain"
				}
				b.Run(fmt.Sprintf("prov=shm/size=%d/tagged=%v/thread=%s", size, tagged, name), func(b *testing.B) {
					rt := roundTripOpts(b, nodeOpts{threading: th}, size, tagged, false)
					b.ReportAllocs()
					b.SetBytes(int64(2 * size))
					for b.Loop() {
						rt()
					}
				})
			}
		}
	}
}

// BenchmarkTaggedWindow is a bandwidth pattern (fabtests' tagged_bw): b
// posts a window of tagged receives, a sends a window of messages, then
// both sides' completions are read. One goroutine drives both; per
// message.
func BenchmarkTaggedWindow(b *testing.B) {
	const window = 64
	for _, size := range []int{64, 256, 1024, 4096} {
		for _, early := range []bool{true, false} {
			b.Run(fmt.Sprintf("prov=shm/size=%d/recv_first=%v", size, early), func(b *testing.B) {
				x, y, xy, _ := pair(b, nodeOpts{})
				buf := make([]byte, size)
				rbufs := make([][]byte, window)
				for i := range rbufs {
					rbufs[i] = make([]byte, size)
				}
				ents := make([]fabric.CQEntry, window)
				ctx := new(int)
				post := func() {
					for i := range rbufs {
						if err := y.ep.TRecv(rbufs[i], nil, fabric.AddrUnspec, 7, 0, ctx); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportAllocs()
				b.SetBytes(int64(size * window))
				for b.Loop() {
					if early {
						post()
					}
					for i := 0; i < window; i++ {
						for x.ep.TSend(buf, nil, xy, 7, ctx) != nil {
							x.txcq.Read(ents)
							y.rxcq.Read(nil)
						}
					}
					if !early {
						post()
					}
					// Both endpoints progress until both sides completed
					// (manual progress: a send x accepted and queued,
					// say for a bounce buffer the receiver gives back at
					// its next progress call, is pushed by x's progress).
					for rx, tx := 0, 0; rx < window || tx < window; {
						if rx < window {
							n, _ := y.rxcq.Read(ents)
							rx += n
						}
						if tx < window {
							n, _ := x.txcq.Read(ents)
							tx += n
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*window), "ns/msg")
			})
		}
	}
}

// BenchmarkPingPongCores is fi_pingpong's loop between two goroutines
// (on two cores when the machine has them), each driving one endpoint:
// inject below the inject size, else send and wait for its completion;
// busy-polling CQ reads. ns/op is a round trip; one-way is reported as
// ns/xfer. The endpoints map each other's regions as two processes
// would (only the Go runtime is shared).
func BenchmarkPingPongCores(b *testing.B) {
	for _, size := range []int{64, 256, 1024, 4096} {
		for _, th := range []fabric.Threading{fabric.ThreadSafe, fabric.ThreadDomain} {
			name := "safe"
			if th == fabric.ThreadDomain {
				name = "domain"
			}
			b.Run(fmt.Sprintf("prov=shm/size=%d/thread=%s", size, name), func(b *testing.B) {
				x, y, xy, yx := pair(b, nodeOpts{threading: th})
				side := func(n *node, dst fabric.Addr, first bool, iters int) {
					buf := make([]byte, size)
					rbuf := make([]byte, size)
					ent := make([]fabric.CQEntry, 1)
					recv := func() {
						for n.ep.Recv(rbuf, nil, fabric.AddrUnspec, nil) != nil {
							n.txcq.Read(ent)
						}
					}
					waitRx := func() {
						for {
							if c, _ := n.rxcq.Read(ent); c == 1 {
								return
							}
						}
					}
					send := func() {
						if size < shm.InjectSize {
							for n.ep.Inject(buf, dst) != nil {
								n.txcq.Read(ent)
							}
							return
						}
						for n.ep.Send(buf, nil, dst, nil) != nil {
							n.txcq.Read(ent)
						}
						for {
							if c, _ := n.txcq.Read(ent); c == 1 {
								return
							}
						}
					}
					recv()
					for i := 0; i < iters; i++ {
						if first {
							send()
							waitRx()
							recv()
						} else {
							waitRx()
							recv()
							send()
						}
					}
				}
				done := make(chan struct{})
				n := b.N
				go func() {
					defer close(done)
					side(y, yx, false, n)
				}()
				b.ResetTimer()
				side(x, xy, true, n)
				<-done
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/xfer")
			})
		}
	}
}
