package sim_test

import (
	"bytes"
	"runtime"
	"slices"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

// allToSome is a run in which each of n endpoints posts k tagged
// receives (tag j, any source) and sends one tagged message of size
// bytes with tag j to each of k peers, endpoint (i+offset(j)) mod n:
// every endpoint gets exactly one message per tag.
type allToSome struct {
	epType fabric.EPType
	n, k   int
	groups int // CQs, each shared by n/groups endpoints
	size   int
	cfg    sim.Config
	// measure the live heap once every message is delivered, before
	// closing (a GC).
	measure bool
}

func (s allToSome) offset(j int) int { return 1 + j*((s.n-1)/s.k) }

// result is what a run produced.
type result struct {
	recs  []record
	stats sim.Stats
	end   time.Duration // the virtual time at the end
	heap  uint64        // live heap with the endpoints open (measure)
}

// run performs the exchange, checks every message that arrived, and
// returns the completions in the order the CQs returned them.
func (s allToSome) run(t testing.TB) result {
	t.Helper()
	nw := newNetwork(t, s.cfg)
	per := (s.n + s.groups - 1) / s.groups
	c := openCluster(t, nw, clusterOpts{epType: s.epType, n: s.n, groups: s.groups,
		cqSize: uint64(2*per*s.k + 64), rxSize: uint64(s.k), txSize: uint64(s.k)})
	rbuf := make([]byte, s.n*s.k*s.size)
	rx := func(i, j int) []byte { o := (i*s.k + j) * s.size; return rbuf[o : o+s.size] }
	for i, ep := range c.eps {
		for j := 0; j < s.k; j++ {
			if err := ep.TRecv(rx(i, j), nil, fabric.AddrUnspec, uint64(j), 0, i*s.k+j); err != nil {
				t.Fatalf("trecv %d/%d: %v", i, j, err)
			}
		}
	}
	msg := make([]byte, s.size)
	for i, ep := range c.eps {
		for j := 0; j < s.k; j++ {
			dst := c.addrs[(i+s.offset(j))%s.n]
			if err := ep.TSend(payload(msg, i, j), nil, dst, uint64(j), -(i*s.k + j + 1)); err != nil {
				t.Fatalf("tsend %d/%d: %v", i, j, err)
			}
		}
	}
	total := s.n * s.k
	last := -1
	recs := c.drain(time.Minute, func(recs []record) bool {
		tx, rcv := count(recs, fabric.FlagSend), count(recs, fabric.FlagRecv)
		if s.epType == fabric.EPRDM {
			return tx == total && rcv == total
		}
		// DGRAM: every send completes; the receives that will complete
		// have once nothing is in flight and a pass of reads found
		// nothing more.
		idle := tx == total && nw.Pending() == 0 && len(recs) == last
		last = len(recs)
		return idle
	})
	for _, r := range recs {
		if r.Err != nil {
			t.Fatalf("error completion %+v", r)
		}
	}
	want := make([]byte, s.size)
	got := 0
	for i := 0; i < s.n; i++ {
		for j := 0; j < s.k; j++ {
			from := ((i-s.offset(j))%s.n + s.n) % s.n
			b := rx(i, j)
			if s.epType == fabric.EPDgram && bytes.Equal(b, make([]byte, s.size)) {
				continue // lost
			}
			got++
			if !bytes.Equal(b, payload(want, from, j)) {
				t.Fatalf("endpoint %d tag %d: got % x..., want the message of %d", i, j, b[:8], from)
			}
		}
	}
	if s.epType == fabric.EPRDM && got != total {
		t.Fatalf("%d of %d messages arrived", got, total)
	}
	if rc := count(recs, fabric.FlagRecv); rc != got {
		t.Fatalf("%d receive completions, %d messages in the buffers", rc, got)
	}
	res := result{recs: recs, stats: nw.Stats(), end: nw.Now()}
	if s.measure {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		res.heap = ms.HeapAlloc
	}
	c.close()
	return res
}

// TestTenThousandEndpoints: 10,000 endpoints of one domain, 100 CQs, each
// endpoint sending 4 tagged messages to 4 peers (40,000 messages) over
// links with latency, jitter and a bandwidth limit, all delivered and
// checked, in bounded wall-clock time and memory; and the same seed
// repeats the run bit for bit. It runs in the plain (not -race) test job
// of scripts/test.sh; -short and -race run it with 1,000 endpoints.
func TestTenThousandEndpoints(t *testing.T) {
	n := 10000
	if testing.Short() || raceOn {
		n = 1000
	}
	s := allToSome{epType: fabric.EPRDM, n: n, k: 4, groups: 100, size: 64, measure: true, cfg: sim.Config{
		Seed:    42,
		Default: sim.Link{Latency: 2 * time.Microsecond, Jitter: time.Microsecond, Bandwidth: 12.5e9},
	}}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	a := s.run(t)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	t.Logf("%d endpoints, %d messages: %v wall (setup, exchange, checks, close), %v virtual, %d delivering steps; "+
		"%.1f MiB allocated in all, live heap %.1f MiB with everything open (%.1f MiB before)",
		n, n*s.k, elapsed.Round(time.Millisecond), a.end, a.stats.Steps,
		float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), float64(a.heap)/(1<<20), float64(before.HeapAlloc)/(1<<20))
	if a.stats.Delivered != uint64(n*s.k) || a.stats.Sent != uint64(n*s.k) {
		t.Fatalf("stats %+v", a.stats)
	}
	// The bounds: generous for a loaded CI machine, far below what a
	// leak per message or per endpoint pair would take.
	if lim := 60 * time.Second; elapsed > lim {
		t.Errorf("took %v, more than %v", elapsed, lim)
	}
	if lim := uint64(n) * 32 << 10; after.TotalAlloc-before.TotalAlloc > lim {
		t.Errorf("allocated %d bytes, more than %d (32 KiB per endpoint)", after.TotalAlloc-before.TotalAlloc, lim)
	}
	if lim := before.HeapAlloc + uint64(n)*16<<10; a.heap > lim {
		t.Errorf("live heap %d bytes with %d endpoints open, more than %d (16 KiB per endpoint)", a.heap, n, lim)
	}
	b := s.run(t)
	if !slices.Equal(a.recs, b.recs) || a.end != b.end || a.stats != b.stats {
		t.Fatalf("the same seed gave another run: %d/%d completions, end %v/%v, stats %+v/%+v",
			len(a.recs), len(b.recs), a.end, b.end, a.stats, b.stats)
	}
}
