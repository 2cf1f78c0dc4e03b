package chaos_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
)

// TestFaultsConcurrent: several goroutines post on one endpoint with every
// fault on while the CQs are read (progress, timers): every send
// completes exactly once (success or ErrInjected), and the receiver gets
// exactly what the counters say was sent: no transmit is lost or added
// beyond the faults counted.
func TestFaultsConcurrent(t *testing.T) {
	const senders, each = 4, 50
	const n = senders * each
	for _, tg := range targets {
		t.Run(tg.prov+"/"+tg.ept.String(), func(t *testing.T) {
			cfg := &chaos.Config{Seed: 1, Error: 0.1, Drop: 0.1, Dup: 0.1, Delay: 0.2, DelayTime: 2 * time.Millisecond,
				Reorder: 0.1, ReorderTime: 2 * time.Millisecond}
			h, a, b := pair(t, tg.prov, tg.ept, 0, cfg)
			for j := 0; j < 2*n; j++ {
				if err := b.ep.Recv(make([]byte, 16), nil, fabric.AddrUnspec, nil); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			for s := 0; s < senders; s++ {
				wg.Add(1)
				go func(s int) {
					defer wg.Done()
					deadline := time.Now().Add(10 * time.Second)
					for i := 0; i < each; {
						err := a.ep.Send(payload(s*each+i), nil, a.peer, s*each+i)
						switch {
						case err == nil:
							i++
						case errors.Is(err, fabric.ErrAgain) && time.Now().Before(deadline):
							time.Sleep(10 * time.Microsecond)
						default:
							t.Errorf("send: %v", err)
							return
						}
					}
				}(s)
			}
			tx := drain(t, a.txcq, n, 10*time.Second)
			wg.Wait()
			seen := map[int]bool{}
			for _, e := range tx.ok {
				seen[e.OpContext.(int)] = true
			}
			for _, e := range tx.errs {
				if !errors.Is(e.Err, chaos.ErrInjected) {
					t.Fatalf("error completion %v", e.Err)
				}
				seen[e.OpContext.(int)] = true
			}
			if len(tx.ok)+len(tx.errs) != n || len(seen) != n {
				t.Fatalf("%d+%d completions for %d distinct sends, want %d", len(tx.ok), len(tx.errs), len(seen), n)
			}
			s := h.Stats()
			if s.Errors != uint64(len(tx.errs)) {
				t.Fatalf("Stats().Errors %d, %d error completions", s.Errors, len(tx.errs))
			}
			arrive := n - len(tx.errs) - int(s.Dropped) + int(s.Duplicated)
			rx := drain(t, b.rxcq, arrive, 10*time.Second)
			if len(rx.ok) != arrive || len(rx.errs) != 0 {
				t.Fatalf("%d arrived, %d errors; want %d (stats %+v)", len(rx.ok), len(rx.errs), arrive, s)
			}
			if more := drain(t, b.rxcq, 1, 50*time.Millisecond); len(more.ok) != 0 {
				t.Fatalf("more arrived than sent: %+v", s)
			}
			if v, e := cntr(t, a.tx); v != uint64(len(tx.ok)) || e != uint64(len(tx.errs)) {
				t.Fatalf("send counter %d, errors %d; completions %d, errors %d", v, e, len(tx.ok), len(tx.errs))
			}
			if s.Delayed == 0 || s.Errors == 0 || tg.ept == fabric.EPDgram && (s.Dropped == 0 || s.Duplicated == 0 || s.Reordered == 0) {
				t.Fatalf("a fault was never drawn: %+v", s)
			}
		})
	}
}

// TestCloseWhileTimersFire: endpoints closed while their held transmits'
// timers fall due, from several goroutines: no race, no panic, and every
// transmit the application posted either arrives or completed in error.
func TestCloseWhileTimersFire(t *testing.T) {
	for round := 0; round < 5; round++ {
		_, a, b := pair(t, "udp", fabric.EPDgram, 0, &chaos.Config{Delay: 1, DelayTime: time.Duration(round) * 200 * time.Microsecond})
		const n = 20
		for j := 0; j < n; j++ {
			if err := b.ep.Recv(make([]byte, 16), nil, fabric.AddrUnspec, nil); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				if err := a.ep.Send(payload(i), nil, a.peer, i); err != nil && !errors.Is(err, fabric.ErrClosed) {
					t.Errorf("send: %v", err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			a.txcq.Read(nil)
		}()
		wg.Wait()
		if err := a.ep.Close(); err != nil {
			t.Fatal(err)
		}
		tx := drain(t, a.txcq, n, 2*time.Second)
		rx := drain(t, b.rxcq, len(tx.ok), 5*time.Second)
		if len(tx.ok)+len(tx.errs) != n || len(rx.ok) != len(tx.ok) {
			t.Fatalf("round %d: %d sent, %d failed, %d arrived; want %d posted, every sent one arrived", round, len(tx.ok), len(tx.errs), len(rx.ok), n)
		}
	}
}
