package sim_test

import (
	"testing"
	"testing/synctest"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

// TestSynctestBubble: the provider runs inside a testing/synctest bubble
// (it starts no goroutine and reads no clock): polling reads deliver
// messages on the network's virtual clock, which the bubble's fake clock
// does not drive, and the application's sleeps and timers run on the
// bubble's clock without delivering anything.
func TestSynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		nw := newNetwork(t, sim.Config{Default: sim.Link{Latency: time.Second}})
		c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: 2})
		if err := c.eps[1].Recv(make([]byte, 8), nil, fabric.AddrUnspec, "rx"); err != nil {
			t.Fatal(err)
		}
		c.sendSeq(0, 1, 1, 8)

		// Sleeping in the bubble: an hour of fake time passes, and the
		// message, one simulated second away, is still in flight.
		time.Sleep(time.Hour)
		if got := time.Since(start); got != time.Hour {
			t.Fatalf("bubble clock %v after sleeping an hour", got)
		}
		if nw.Now() != 0 || nw.Pending() != 1 {
			t.Fatalf("network at %v with %d pending after the sleep; want 0 and 1", nw.Now(), nw.Pending())
		}

		// Polling delivers it at one simulated second, while the
		// bubble's clock stands still.
		// The bound is a count of reads: the bubble's clock does not move
		// while this goroutine polls, so a deadline would never pass.
		var rx record
		ent := make([]fabric.CQEntry, 1)
		for i := 0; i < 1000 && rx.Ctx == nil; i++ {
			if n, _ := c.cqs[1].Read(ent); n == 1 && ent[0].Flags&fabric.FlagRecv != 0 {
				rx = record{Ctx: ent[0].OpContext, At: nw.Now()}
			}
		}
		if rx.Ctx != "rx" || rx.At != time.Second {
			t.Fatalf("receive %+v; want rx at 1s of virtual time", rx)
		}
		if got := time.Since(start); got != time.Hour {
			t.Fatalf("bubble clock moved to %v while polling", got)
		}
		c.close()
		synctest.Wait() // no goroutine of the provider is left running
	})
}
