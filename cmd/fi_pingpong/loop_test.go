package main

import (
	"fmt"
	"io"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// loopback opens one udp endpoint whose peer is itself, wired into a
// pingpong the way runPingpong wires it, so that tx/rx run the real data
// path (inject or send, busy-polled CQ reads, receive reposting).
func loopback(t testing.TB, o *options) *pingpong {
	t.Helper()
	t.Setenv("FI_UDP_IFACE", "lo")
	p := &pingpong{o: o, stdout: io.Discard, stderr: io.Discard, remote: fabric.AddrUnspec}
	p.hints = p.makeHints()
	info, err := p.getinfo(p.hints)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.closeAll(); err != nil {
			t.Error(err)
		}
	})
	if err := p.openFabric(info); err != nil {
		t.Fatal(err)
	}
	if err := p.allocActive(info); err != nil {
		t.Fatal(err)
	}
	if err := p.initEP(); err != nil {
		t.Fatal(err)
	}
	name, err := p.ep.Name()
	if err != nil {
		t.Fatal(err)
	}
	addrs := []fabric.Addr{0}
	if n, err := p.av.Insert([][]byte{name}, addrs, 0); n != 1 || err != nil {
		t.Fatalf("av insert: %d %v", n, err)
	}
	p.remote = addrs[0]
	return p
}

// TestLoopZeroAllocs: one iteration of the timed loop (send, wait for the
// message, check it, repost the receive) allocates nothing, for inject
// sizes and for the send path (size = inject_size), with and without -c.
func TestLoopZeroAllocs(t *testing.T) {
	for _, check := range []bool{false, true} {
		o := &options{epType: fabric.EPDgram, prov: "udp", iters: 1, check: check, timeout: defaultTimeout, sizeMode: sizesOne, size: 1472}
		p := loopback(t, o)
		p.active = true
		for _, size := range []int{0, 64, 1472} {
			iter := func() {
				if err := p.tx(size); err != nil {
					t.Fatal(err)
				}
				if err := p.rx(size); err != nil {
					t.Fatal(err)
				}
			}
			iter() // warm up pools
			if n := testing.AllocsPerRun(200, iter); n != 0 {
				t.Errorf("check=%v size %d: %v allocs per iteration, want 0", check, size, n)
			}
		}
		if p.txPat.k != p.rxPat.k {
			t.Errorf("pattern counters diverged: tx %d rx %d", p.txPat.k, p.rxPat.k)
		}
	}
}

// TestLoopFinalize: the fin message goes out with FI_TRANSMIT_COMPLETE,
// its send completes, and it is received.
func TestLoopFinalize(t *testing.T) {
	o := &options{epType: fabric.EPDgram, prov: "udp", iters: 1, timeout: defaultTimeout}
	p := loopback(t, o)
	c1, c2 := newPipeCtrl(t)
	p.ctrl = c1
	defer c2.conn.Close()
	if err := p.finalize(); err != nil {
		t.Fatal(err)
	}
	if string(p.rxBuf[:4]) != "fin\x00" || p.txDone != p.txPosted || p.txPosted != 1 {
		t.Fatalf("fin: rx %q, tx %d/%d", p.rxBuf[:4], p.txDone, p.txPosted)
	}
}

func BenchmarkLoop(b *testing.B) {
	for _, size := range []int{1, 64, 1024, 1472} {
		b.Run("size="+itoa(size), func(b *testing.B) {
			o := &options{epType: fabric.EPDgram, prov: "udp", iters: 1, timeout: defaultTimeout}
			p := loopback(b, o)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				if err := p.tx(size); err != nil {
					b.Fatal(err)
				}
				if err := p.rx(size); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestIsAgain(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fabric.ErrAgain, true},
		{nil, false},
		{fabric.ErrAvail, false},
		{fabric.ErrClosed, false},
		{fmt.Errorf("wrapped: %w", fabric.ErrAgain), false}, // the CQ returns bare values
	} {
		if got := isAgain(c.err); got != c.want {
			t.Errorf("isAgain(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
