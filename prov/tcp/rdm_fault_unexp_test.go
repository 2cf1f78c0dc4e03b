package tcp

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"syscall"

	"github.com/gofabric/fabric/provider"
)

// TestRDMUnexpectedBackpressure: a sender floods a receiver that posts no
// receives (or, under FI_RM_ENABLED, does not read its small CQ). The
// receiver holds no more than its bound of unexpected messages, stops
// reading (the sender backs up: frames stay queued on its side), does not
// spin while it waits (auto progress), and once receives are posted every
// message arrives exactly once, in order, intact; every send succeeds.
func TestRDMUnexpectedBackpressure(t *testing.T) {
	const (
		n    = 2000 // 32 MiB: more than the socket buffers on both sides hold
		size = 16384
	)
	cases := []struct {
		name     string
		o        fltOpts
		maxBytes int64 // the receiver's bound (0: default)
		maxN     int64
		cq       bool // post the receives first; the receiver's CQ is what fills
	}{
		{"bytes manual", fltOpts{}, 256 << 10, 0, false},
		{"bytes auto", fltOpts{auto: true}, 256 << 10, 0, false},
		{"count auto", fltOpts{auto: true}, 0, 10, false},
		{"bytes auto rm disabled", fltOpts{auto: true, noRM: true}, 256 << 10, 0, false},
		{"count manual rm disabled", fltOpts{noRM: true}, 0, 10, false},
		{"cq full auto rm enabled", fltOpts{auto: true, cqSize: 8}, 0, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			a, b := newFlt(t, fltOpts{}), newFlt(t, tc.o)
			b.ep.mu.Lock()
			if tc.maxBytes != 0 {
				b.ep.maxUnexpBytes = tc.maxBytes
			}
			if tc.maxN != 0 {
				b.ep.maxUnexp = tc.maxN
			}
			b.ep.mu.Unlock()
			ab := a.mustInsert(t, b.name)
			rbufs := make([][]byte, n)
			// post posts receive i; false when the CQ is full (FI_RM_ENABLED:
			// EAGAIN, read the CQ first).
			post := func(i int) bool {
				t.Helper()
				if rbufs[i] == nil {
					rbufs[i] = make([]byte, size)
				}
				err := b.recv(rbufs[i], true, 0, ^uint64(0), i)
				if err != nil && (err != provider.EAGAIN || !tc.cq) {
					t.Fatalf("recv %d: %v", i, err)
				}
				return err == nil
			}
			next, window := 0, 64
			if tc.cq {
				window = 1000
				for ; next < window; next++ {
					post(next)
				}
			}
			for i := 0; i < n; i++ {
				msg := make([]byte, size)
				binary.LittleEndian.PutUint64(msg, uint64(i))
				pattern(msg[8:], i)
				if err := a.send(ab, msg, true, uint64(i), i); err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
			}
			// Progress both sides (the receiver without reading its CQ)
			// until nothing moves: the sender must have frames left.
			var sent []fltComp
			last, stable := -1, 0
			deadline := time.Now().Add(10 * time.Second)
			for stable < 20 {
				sent = poll(a.tx, sent)
				if !tc.o.auto {
					b.ep.Progress()
				}
				time.Sleep(5 * time.Millisecond)
				if s := len(sent) + a.queuedOn()*1000 + int(b.ep.unexpN.Load())*1000000; s == last {
					stable++
				} else {
					last, stable = s, 0
				}
				if time.Now().After(deadline) {
					t.Fatal("the flood never settled")
				}
			}
			q, un, ub := a.queuedOn(), b.ep.unexpN.Load(), b.ep.unexpBytes.Load()
			t.Logf("settled: %d sends done, %d frames queued at the sender, receiver holds %d unexpected (%d bytes), %d connections held",
				len(sent), q, un, ub, b.ep.held.Load())
			if q == 0 {
				t.Fatal("the sender has nothing queued: no backpressure")
			}
			if b.ep.held.Load() != 1 {
				t.Fatalf("%d connections held, want 1", b.ep.held.Load())
			}
			if mb := b.ep.maxUnexpBytes; ub > mb {
				t.Fatalf("%d unexpected bytes held, bound %d", ub, mb)
			}
			if un > b.ep.maxUnexp {
				t.Fatalf("%d unexpected messages held, bound %d", un, b.ep.maxUnexp)
			}
			if tc.o.auto {
				expectNoSpin(t, "a receiver waiting for room")
			}
			// Now receive everything.
			var got []fltComp
			deadline = time.Now().Add(20 * time.Second)
			for len(got) < n {
				if next < n && next-len(got) < window && post(next) {
					next++
				}
				got = poll(b.rx, got)
				sent = poll(a.tx, sent)
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d messages received", len(got), n)
				}
			}
			for k, c := range got {
				i := c.ctx.(int)
				if c.err != 0 || c.len != size || c.tag != uint64(k) {
					t.Fatalf("receive %d: %+v", k, c)
				}
				want := make([]byte, size)
				binary.LittleEndian.PutUint64(want, uint64(k))
				pattern(want[8:], k)
				if !bytes.Equal(rbufs[i], want) {
					t.Fatalf("receive %d (buffer %d): message %d out of order or damaged", k, i,
						binary.LittleEndian.Uint64(rbufs[i]))
				}
			}
			sent = append(sent, waitComps(t, a.tx, n-len(sent), waitLimit)...)
			seen := map[any]bool{}
			for _, c := range sent {
				if c.err != 0 || seen[c.ctx] {
					t.Fatalf("send completion %+v (twice: %v)", c, seen[c.ctx])
				}
				seen[c.ctx] = true
			}
			if un, ub := b.ep.unexpN.Load(), b.ep.unexpBytes.Load(); un != 0 || ub != 0 || b.ep.held.Load() != 0 {
				t.Fatalf("after: %d unexpected (%d bytes), %d held", un, ub, b.ep.held.Load())
			}
		})
	}
}

// TestRDMUnexpectedReleasedOnClose: unexpected messages still queued when
// the receive queue closes are released (the bound's accounting returns to
// zero), eager and rendezvous.
func TestRDMUnexpectedReleasedOnClose(t *testing.T) {
	leakCheck(t)
	a, b := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	ab := a.mustInsert(t, b.name)
	for i, sz := range []int{10, 16384, 100000} {
		if err := a.send(ab, make([]byte, sz), true, uint64(i), i); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(waitLimit)
	// Read under ep.mu: a message is counted, then queued, under it.
	queued := func() int64 {
		b.ep.mu.Lock()
		defer b.ep.mu.Unlock()
		return b.ep.unexpN.Load()
	}
	for queued() != 3 {
		a.ep.Progress()
		b.ep.Progress()
		if time.Now().After(deadline) {
			t.Fatalf("%d unexpected", b.ep.unexpN.Load())
		}
	}
	b.rq.Close()
	if un, ub := b.ep.unexpN.Load(), b.ep.unexpBytes.Load(); un != 0 || ub != 0 {
		t.Fatalf("after close: %d unexpected (%d bytes)", un, ub)
	}
}

// expectNoSpin fails t when the process burns more than a tenth of 300 ms
// of wall time in CPU while it should wait (a goroutine spinning on a
// readable socket burns it all). Context switches are not counted: on a
// loaded machine involuntary ones say nothing about this process.
func expectNoSpin(t *testing.T, what string) {
	t.Helper()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0, t0 := cpu(), time.Now()
	time.Sleep(300 * time.Millisecond)
	used, wall := cpu()-c0, time.Since(t0)
	t.Logf("%s: %v CPU in %v", what, used, wall.Round(time.Millisecond))
	if used > wall/10 {
		t.Errorf("%s: %v CPU in %v of wall time: spinning?", what, used, wall)
	}
}
