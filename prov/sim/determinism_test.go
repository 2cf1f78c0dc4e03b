package sim_test

import (
	"slices"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

// TestDeterminism: two runs with the same seed return the same
// completions, from the same CQs, in the same order, at the same virtual
// times, bit for bit; a run with another seed differs where loss and
// jitter draw (which messages a DGRAM network loses, when messages
// arrive), and on a network without loss or jitter the seed changes
// nothing.
func TestDeterminism(t *testing.T) {
	noisy := sim.Link{Latency: 3 * time.Microsecond, Jitter: 2 * time.Microsecond, Bandwidth: 1e9, Loss: 0.2}
	for _, c := range []struct {
		name   string
		epType fabric.EPType
		link   sim.Link
		differ bool // another seed changes the run
	}{
		{"dgram_loss_jitter", fabric.EPDgram, noisy, true},
		{"rdm_loss_jitter", fabric.EPRDM, noisy, true},
		{"rdm_quiet", fabric.EPRDM, sim.Link{Latency: 3 * time.Microsecond, Bandwidth: 1e9}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := allToSome{epType: c.epType, n: 64, k: 4, groups: 8, size: 256, cfg: sim.Config{Seed: 1, Default: c.link}}
			a, b := s.run(t), s.run(t)
			if len(a.recs) == 0 {
				t.Fatal("no completions")
			}
			if !slices.Equal(a.recs, b.recs) || a.end != b.end || a.stats != b.stats {
				t.Fatalf("same seed, different runs: %d/%d completions, end %v/%v, stats %+v/%+v",
					len(a.recs), len(b.recs), a.end, b.end, a.stats, b.stats)
			}
			s.cfg.Seed = 2
			o := s.run(t)
			same := slices.Equal(a.recs, o.recs) && a.end == o.end
			if same == c.differ {
				t.Fatalf("seed 1 and 2: same run %v, want %v (stats %+v / %+v, end %v / %v)",
					same, !c.differ, a.stats, o.stats, a.end, o.end)
			}
			if c.epType == fabric.EPDgram && (a.stats.Dropped == 0 || a.stats.Dropped == a.stats.Sent) {
				t.Fatalf("loss 0.2 dropped %d of %d datagrams", a.stats.Dropped, a.stats.Sent)
			}
			if c.epType == fabric.EPRDM && c.link.Loss > 0 && a.stats.Retransmit == 0 {
				t.Fatalf("loss 0.2 on RDM: no retransmission (%+v)", a.stats)
			}
		})
	}
}

// rmaRun: each of n endpoints writes 64 bytes into the region of the
// next one, reads them back from the one after, and fetch-adds 1 to a
// counter at endpoint 0, all posted before any progress; it returns the
// completions in the order the CQs gave them and the values fetched.
func rmaRun(t *testing.T, seed uint64, link sim.Link) (result, []uint64) {
	const n = 16
	nw := newNetwork(t, sim.Config{Seed: seed, Default: link})
	c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: n, groups: 4, caps: fabric.CapRMA | fabric.CapAtomic})
	mem := make([]byte, n*64+8)
	mr, err := c.dom.RegMR(mem, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, 0x77, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	// One domain: every endpoint's region is the same memory, at a
	// slice of its own.
	fetched := make([]byte, n*8)
	rd := make([]byte, n*64)
	for i, ep := range c.eps {
		src := payload(make([]byte, 64), i, 0)
		if err := ep.RMAWrite(src, nil, c.addrs[(i+1)%n], uint64(i*64), mr.Key(), 3*i); err != nil {
			t.Fatal(err)
		}
		if err := ep.RMARead(rd[i*64:(i+1)*64], nil, c.addrs[(i+2)%n], uint64(i*64), mr.Key(), 3*i+1); err != nil {
			t.Fatal(err)
		}
		if err := ep.FetchAtomic([]byte{1, 0, 0, 0, 0, 0, 0, 0}, nil, fetched[i*8:(i+1)*8], nil, c.addrs[0],
			n*64, mr.Key(), fabric.DatatypeUint64, fabric.AtomicSum, 3*i+2); err != nil {
			t.Fatal(err)
		}
	}
	recs := c.drain(10*time.Second, func(r []record) bool { return len(r) == 3*n })
	for _, r := range recs {
		if r.Err != nil {
			t.Fatalf("error completion %+v", r)
		}
	}
	vals := make([]uint64, n)
	seen := map[uint64]bool{}
	for i := range vals {
		vals[i] = uint64(fetched[i*8]) | uint64(fetched[i*8+1])<<8
		seen[vals[i]] = true
	}
	if len(seen) != n || mem[n*64] != n {
		t.Fatalf("fetch-add: fetched %v, counter %d; want 0..%d once each, %d", vals, mem[n*64], n-1, n)
	}
	res := result{recs: recs, stats: nw.Stats(), end: nw.Now()}
	c.close()
	return res, vals
}

// TestDeterminismRMA: RMA and atomics repeat bit for bit with a seed —
// completion order, virtual times, and which fetch-add got which value —
// and another seed changes them when jitter and loss draw.
func TestDeterminismRMA(t *testing.T) {
	link := sim.Link{Latency: 2 * time.Microsecond, Jitter: 3 * time.Microsecond, Bandwidth: 1e9, Loss: 0.3}
	a, av := rmaRun(t, 1, link)
	b, bv := rmaRun(t, 1, link)
	if !slices.Equal(a.recs, b.recs) || !slices.Equal(av, bv) || a.end != b.end || a.stats != b.stats {
		t.Fatalf("same seed, different runs: fetched %v / %v, end %v / %v", av, bv, a.end, b.end)
	}
	o, ov := rmaRun(t, 2, link)
	if slices.Equal(a.recs, o.recs) && slices.Equal(av, ov) && a.end == o.end {
		t.Fatal("seeds 1 and 2 gave the same run")
	}
}
