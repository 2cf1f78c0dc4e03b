package tcp_test

import (
	"strconv"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// rdmPing sends one message from a to b (whose receive is posted first)
// and waits for both completions, progressing both endpoints inline until
// both are in (a receiver that stops calling once its receive completed
// leaves the read-done of a rendezvous to the control goroutine's timer:
// TestRDMReadDoneWithoutProgress).
func rdmPing(tb testing.TB, a, b *rdmEnv, dest fabric.Addr, sbuf, rbuf []byte, ents []fabric.CQEntry) {
	if err := b.ep.Recv(rbuf, nil, fabric.AddrUnspec, nil); err != nil {
		tb.Fatal(err)
	}
	if err := a.ep.Send(sbuf, nil, dest, nil); err != nil {
		tb.Fatal(err)
	}
	gotRx, gotTx := false, false
	for spins := 0; !gotRx || !gotTx; spins++ {
		if n, _ := b.rx.Read(ents); n > 0 {
			gotRx = true
		}
		if !gotTx {
			if n, _ := a.tx.Read(ents); n > 0 {
				gotTx = true
			}
		}
		if spins > 50_000_000 {
			tb.Fatal("no completion")
		}
	}
}

// BenchmarkRDMPingPong measures one-way latency (half a round trip)
// between two RDM endpoints of this process, both progressed inline by one
// goroutine: eager (64 B, 4 KiB) and rendezvous (64 KiB, 1 MiB). Compare
// with BenchmarkPingPong (msg endpoints, same method) for rdm/msg.
func BenchmarkRDMPingPong(b *testing.B) {
	for _, size := range []int{64, 4096, 65536, 1 << 20} {
		b.Run("size="+strconv.Itoa(size), func(b *testing.B) {
			x, y := openRDM(b), openRDM(b)
			xy, yx := x.insert(y.name), y.insert(x.name)
			sbuf, rbuf := make([]byte, size), make([]byte, size)
			ents := make([]fabric.CQEntry, 4)
			rdmPing(b, x, y, xy, sbuf, rbuf, ents) // connect
			b.ReportAllocs()
			b.SetBytes(int64(2 * size))
			start := time.Now()
			n := 0
			for b.Loop() {
				rdmPing(b, x, y, xy, sbuf, rbuf, ents)
				rdmPing(b, y, x, yx, sbuf, rbuf, ents)
				n++
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(2*n), "usec/xfer")
		})
	}
}

// TestRDMSteadyStateAllocs: steady-state RDM ping-pongs allocate nothing,
// eager, streamed (64 KiB) and CMA (1 MiB) between two of our endpoints,
// and rendezvous (the read of a rendezvous receive and the queue of
// outstanding reads are reused).
func TestRDMSteadyStateAllocs(t *testing.T) {
	for _, rndv := range []bool{false, true} {
		if rndv {
			t.Setenv("FI_TCP_RDM_STREAM_LIMIT", "0")
			t.Setenv("FI_TCP_RDM_CMA", "0")
		}
		rdmSteadyAllocs(t, rndv)
	}
}

func rdmSteadyAllocs(t *testing.T, rndv bool) {
	x, y := openRDM(t), openRDM(t)
	xy, yx := x.insert(y.name), y.insert(x.name)
	ents := make([]fabric.CQEntry, 4)
	for _, size := range []int{64, 4096, 65536, 1 << 20} {
		sbuf, rbuf := make([]byte, size), make([]byte, size)
		rdmPing(t, x, y, xy, sbuf, rbuf, ents)
		rdmPing(t, y, x, yx, sbuf, rbuf, ents)
		if n := testing.AllocsPerRun(50, func() {
			rdmPing(t, x, y, xy, sbuf, rbuf, ents)
			rdmPing(t, y, x, yx, sbuf, rbuf, ents)
		}); n != 0 {
			t.Errorf("size %d (rendezvous only: %v): %v allocs per ping-pong", size, rndv, n)
		}
	}
}
