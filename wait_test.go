package fabric

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// waitSetCQs opens a wait set on d's fabric and n member CQs.
func waitSetCQs(t testing.TB, d *Domain, n int) (*Wait, []*CQ) {
	t.Helper()
	ws, err := d.fabric.OpenWait(nil)
	if err != nil {
		t.Fatal(err)
	}
	cqs := make([]*CQ, n)
	for i := range cqs {
		cqs[i] = cqOpen(t, d, &CQAttr{WaitObj: WaitSet, WaitSet: ws})
	}
	t.Cleanup(func() {
		for _, c := range cqs {
			c.Close()
		}
		if err := ws.Close(); err != nil {
			t.Errorf("close wait set: %v", err)
		}
	})
	return ws, cqs
}

// TestWaitAllocs: a write to one of 64 member CQs, the Wait it ends and
// the read allocate nothing, as for a set of one.
func TestWaitAllocs(t *testing.T) {
	d := fakeDomain(t, 0)
	for _, n := range []int{1, 64} {
		ws, cqs := waitSetCQs(t, d, n)
		ent := make([]CQEntry, 1)
		ctx := new(int)
		k := 0
		round := func() {
			k = (k + 7) % n
			cqs[k].owner().Write(ctx, FlagRecv, 8, nil, 0, 0, AddrNotAvail)
			if err := ws.Wait(-1); err != nil {
				t.Fatal(err)
			}
			if m, err := cqs[k].Read(ent); m != 1 || err != nil {
				t.Fatalf("read = %d, %v", m, err)
			}
		}
		round()
		if a := testing.AllocsPerRun(1000, round); a != 0 {
			t.Fatalf("%d CQs: write+Wait+read allocates %v times", n, a)
		}
		if err := ws.Wait(0); !errors.Is(err, ErrTimedOut) {
			t.Fatalf("drained set: %v", err)
		}
	}
}

// TestWaitSetLooksOnlyAtMarkedMembers: with 63 idle members, Wait asks
// only the member that was written whether it has work.
func TestWaitSetLooksOnlyAtMarkedMembers(t *testing.T) {
	d := fakeDomain(t, 0)
	ws, cqs := waitSetCQs(t, d, 64)
	cqs[40].owner().Write(nil, FlagRecv, 1, nil, 0, 0, AddrNotAvail)
	before := make([]int, len(cqs))
	for i, c := range cqs {
		before[i] = c.q.Len()
	}
	if err := ws.Wait(time.Second); err != nil {
		t.Fatal(err)
	}
	if before[40] != 1 {
		t.Fatalf("CQ 40 holds %d", before[40])
	}
	// A second member gets work while the first still has some: both are
	// reported until read.
	cqs[3].owner().Write(nil, FlagRecv, 1, nil, 0, 0, AddrNotAvail)
	ent := make([]CQEntry, 1)
	for _, k := range []int{40, 3} {
		if err := ws.Wait(0); err != nil {
			t.Fatalf("wait with CQ %d queued: %v", k, err)
		}
		if n, err := cqs[k].Read(ent); n != 1 || err != nil {
			t.Fatalf("read CQ %d = %d, %v", k, n, err)
		}
	}
	if err := ws.Wait(0); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("drained set: %v", err)
	}
	if got := ws.ws.Members(); got != 64 {
		t.Fatalf("members = %d", got)
	}
}

// BenchmarkWaitSet compares a wait on a set of 64 CQs, one of which gets
// the work, with one on a set of one CQ and with a single CQ's SRead:
// "same" writes and waits in one goroutine, "wake" has another goroutine
// write while the waiter blocks.
func BenchmarkWaitSet(b *testing.B) {
	d := fakeDomain(b, 0)
	for _, n := range []int{1, 64} {
		ws, cqs := waitSetCQs(b, d, n)
		ent := make([]CQEntry, 1)
		ctx := new(int)
		b.Run(fmt.Sprintf("same/%dCQs", n), func(b *testing.B) {
			b.ReportAllocs()
			k := 37 % n // the one member with work
			for i := 0; i < b.N; i++ {
				cqs[k].owner().Write(ctx, FlagRecv, 8, nil, 0, 0, AddrNotAvail)
				if err := ws.Wait(-1); err != nil {
					b.Fatal(err)
				}
				cqs[k].Read(ent)
			}
		})
		b.Run(fmt.Sprintf("wake/%dCQs", n), func(b *testing.B) {
			b.ReportAllocs()
			next := make(chan int)
			go func() {
				for k := range next {
					cqs[k].owner().Write(ctx, FlagRecv, 8, nil, 0, 0, AddrNotAvail)
				}
			}()
			defer close(next)
			k := 37 % n
			for i := 0; i < b.N; i++ {
				next <- k
				if err := ws.Wait(-1); err != nil {
					b.Fatal(err)
				}
				if m, _ := cqs[k].Read(ent); m != 1 {
					b.Fatalf("CQ %d empty after Wait", k)
				}
			}
		})
	}
	c := cqOpen(b, d, nil)
	ent := make([]CQEntry, 1)
	ctx := new(int)
	b.Run("wake/SRead", func(b *testing.B) {
		b.ReportAllocs()
		next := make(chan struct{})
		go func() {
			for range next {
				c.owner().Write(ctx, FlagRecv, 8, nil, 0, 0, AddrNotAvail)
			}
		}()
		defer close(next)
		for i := 0; i < b.N; i++ {
			next <- struct{}{}
			if m, err := c.SRead(ent, 0, -1); m != 1 || err != nil {
				b.Fatal(err)
			}
		}
	})
}
