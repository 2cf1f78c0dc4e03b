package tcp

import (
	"strconv"
	"testing"
	"time"

	"github.com/gofabric/fabric/provider"
)

var (
	ctxRecv any = new(int)
	ctxSend any = new(int)
)

// pingOnce sends one message from a to b (a receive is posted at b first)
// and waits for both completions, progressing both endpoints inline.
func pingOnce(tb testing.TB, a, b *node, sbuf, rbuf []byte, flags provider.Flags, ents []provider.CQEntry) {
	m := provider.Msg{Buf: rbuf, Context: ctxRecv, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
	if err := b.rq.Post(&m, false); err != nil {
		tb.Fatal(err)
	}
	if err := a.ep.Send(provider.Msg{Buf: sbuf, Context: ctxSend, Flags: flags}); err != nil {
		tb.Fatal(err)
	}
	wantTx := flags&provider.FlagCompletion != 0
	gotRx, gotTx := false, !wantTx
	for spins := 0; !gotRx || !gotTx; spins++ {
		if !gotRx {
			if n, _ := b.rxCQ.Read(ents); n > 0 {
				gotRx = true
			}
		}
		if !gotTx {
			if n, _ := a.txCQ.Read(ents); n > 0 {
				gotTx = true
			}
		}
		if spins > 50_000_000 {
			tb.Fatal("no completion")
		}
	}
}

// TestSteadyStateAllocs: steady-state send, receive and CQ reads allocate
// nothing (messages, injects, senddata, a delivery-complete send, reads and
// writes).
func TestSteadyStateAllocs(t *testing.T) {
	cli, srv := pair(t, opts{})
	mem := make([]byte, 4096)
	if _, err := srv.mr.Register([][]byte{mem}, rmaAccess, 0, 0xc0de, true); err != nil {
		t.Fatal(err)
	}
	ents := make([]provider.CQEntry, 4)
	for _, size := range []int{0, 64, 4096, 100000} {
		sbuf, rbuf := make([]byte, size), make([]byte, size)
		for _, fl := range []provider.Flags{provider.FlagCompletion, provider.FlagCompletion | provider.FlagDeliveryComplete,
			provider.FlagCompletion | provider.FlagRemoteCQData} {
			pingOnce(t, cli, srv, sbuf, rbuf, fl, ents)
			if n := testing.AllocsPerRun(50, func() {
				pingOnce(t, cli, srv, sbuf, rbuf, fl, ents)
				pingOnce(t, srv, cli, sbuf, rbuf, fl, ents)
			}); n != 0 {
				t.Errorf("size %d flags %v: %v allocs per ping-pong", size, fl, n)
			}
		}
	}
	small := make([]byte, 64)
	rbuf := make([]byte, 64)
	if n := testing.AllocsPerRun(50, func() {
		pingOnce(t, cli, srv, small, rbuf, provider.FlagInject, ents)
	}); n != 0 {
		t.Errorf("inject: %v allocs", n)
	}
	rb := make([]byte, 1024)
	if n := testing.AllocsPerRun(50, func() {
		if err := cli.ep.Write(provider.Msg{Buf: rb, Context: ctxSend, Flags: provider.FlagCompletion,
			RMAOne: provider.RMAIOV{Addr: 0, Len: 1024, Key: 0xc0de}}); err != nil {
			t.Fatal(err)
		}
		if err := cli.ep.Read(provider.Msg{Buf: rb, Context: ctxSend, Flags: provider.FlagCompletion,
			RMAOne: provider.RMAIOV{Addr: 1024, Len: 1024, Key: 0xc0de}}); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < 2; {
			srv.ep.Progress()
			n, _ := cli.txCQ.Read(ents)
			got += n
		}
	}); n != 0 {
		t.Errorf("RMA write+read: %v allocs", n)
	}
	// An empty CQ read (progress finds nothing) does not allocate.
	if n := testing.AllocsPerRun(100, func() {
		if _, err := cli.rxCQ.Read(ents); err != provider.EAGAIN {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("empty CQ read: %v allocs", n)
	}
}

// BenchmarkPingPong measures one-way latency (half a round trip) between
// two endpoints of this process, both progressed inline.
func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{64, 4096, 65536, 1 << 20} {
		b.Run("prov=tcp/size="+strconv.Itoa(size), func(b *testing.B) {
			cli, srv := pair(b, opts{})
			sbuf, rbuf := make([]byte, size), make([]byte, size)
			ents := make([]provider.CQEntry, 4)
			flags := provider.FlagCompletion
			if size < InjectSize {
				flags = provider.FlagInject
			}
			b.ReportAllocs()
			b.SetBytes(int64(2 * size))
			start := time.Now()
			n := 0
			for b.Loop() {
				pingOnce(b, cli, srv, sbuf, rbuf, flags, ents)
				pingOnce(b, srv, cli, sbuf, rbuf, flags, ents)
				n++
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(2*n), "usec/xfer")
		})
	}
}

// BenchmarkMsgRate measures back-to-back sends with a window of receives.
func BenchmarkMsgRate(b *testing.B) {
	for _, size := range []int{64, 4096} {
		b.Run("prov=tcp/size="+strconv.Itoa(size), func(b *testing.B) {
			cli, srv := pair(b, opts{})
			const window = 64
			sbuf := make([]byte, size)
			rbufs := make([][]byte, window)
			for i := range rbufs {
				rbufs[i] = make([]byte, size)
			}
			ents := make([]provider.CQEntry, window)
			b.ReportAllocs()
			b.SetBytes(int64(size * window))
			sent := 0
			start := time.Now()
			for b.Loop() {
				for i := 0; i < window; i++ {
					m := provider.Msg{Buf: rbufs[i], Context: ctxRecv, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
					if err := srv.rq.Post(&m, false); err != nil {
						b.Fatal(err)
					}
				}
				for i := 0; i < window; {
					err := cli.ep.Send(provider.Msg{Buf: sbuf, Context: ctxSend, Flags: provider.FlagCompletion})
					if err == provider.EAGAIN {
						cli.txCQ.Read(ents)
						continue
					}
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
				for got := 0; got < window; {
					n, _ := srv.rxCQ.Read(ents)
					got += n
					cli.txCQ.Read(ents)
				}
				sent += window
			}
			b.ReportMetric(float64(sent)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}
