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
