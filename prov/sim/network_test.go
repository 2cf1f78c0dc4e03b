package sim_test

import (
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

// arrivals posts n receives of size bytes on endpoint dst, then reads
// dst's CQ one entry at a time and returns, for each receive completion
// in order, the payload's first 4 bytes (a sequence number) and the
// virtual time after the read that returned it: the time of the step
// that delivered it, as each read runs one step. Send completions on
// the same CQ are skipped.
func (c *cluster) arrivals(dst, n, size int, sendAll func()) (seq []uint32, at []time.Duration) {
	c.t.Helper()
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, size)
		if err := c.eps[dst].Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
			c.t.Fatal(err)
		}
	}
	sendAll()
	q := c.cqs[dst%len(c.cqs)]
	ent := make([]fabric.CQEntry, 1)
	deadline := time.Now().Add(10 * time.Second)
	for len(seq) < n {
		if time.Now().After(deadline) {
			c.t.Fatalf("%d of %d messages after 10s (network at %v, %d pending)", len(seq), n, c.nw.Now(), c.nw.Pending())
		}
		k, err := q.Read(ent)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			q.ReadErr(&ee)
			c.t.Fatalf("error completion %+v", ee)
		}
		if k == 1 && ent[0].Flags&fabric.FlagRecv != 0 {
			seq = append(seq, binary.LittleEndian.Uint32(bufs[ent[0].OpContext.(int)]))
			at = append(at, c.nw.Now())
		}
		if c.nw.Pending() == 0 && k == 0 && c.epType() == fabric.EPDgram {
			break // lost datagrams: nothing more will come
		}
	}
	return seq, at
}

func (c *cluster) epType() fabric.EPType { return c.info.EPAttr.Type }

// sendSeq sends n messages of size bytes, numbered 0..n-1, from
// endpoint src to endpoint dst.
func (c *cluster) sendSeq(src, dst, n, size int) {
	c.t.Helper()
	b := make([]byte, size)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b, uint32(i))
		if err := c.eps[src].Send(b, nil, c.addrs[dst], nil); err != nil {
			c.t.Fatalf("send %d: %v", i, err)
		}
	}
}

func inOrder(seq []uint32) bool {
	for i := 1; i < len(seq); i++ {
		if seq[i] < seq[i-1] {
			return false
		}
	}
	return true
}

// TestLatencyAndBandwidth: a message of n bytes arrives n/Bandwidth +
// Latency after it was sent; the next one waits for the link.
func TestLatencyAndBandwidth(t *testing.T) {
	for _, et := range []fabric.EPType{fabric.EPRDM, fabric.EPDgram} {
		t.Run(et.String(), func(t *testing.T) {
			nw := newNetwork(t, sim.Config{Default: sim.Link{Latency: 10 * time.Microsecond, Bandwidth: 1e9}})
			c := openCluster(t, nw, clusterOpts{epType: et, n: 2})
			seq, at := c.arrivals(1, 3, 1000, func() { c.sendSeq(0, 1, 3, 1000) })
			want := []time.Duration{11 * time.Microsecond, 12 * time.Microsecond, 13 * time.Microsecond}
			for i := range want {
				if seq[i] != uint32(i) || at[i] != want[i] {
					t.Fatalf("arrivals %v at %v; want 0 1 2 at %v", seq, at, want)
				}
			}
		})
	}
}

// TestLinksPerPair: Config.Links gives one pair a slow link; the other
// pairs use Default.
func TestLinksPerPair(t *testing.T) {
	var slowSrc, slowDst uint64
	nw := newNetwork(t, sim.Config{Default: sim.Link{Latency: time.Microsecond},
		Links: func(src, dst uint64) sim.Link {
			if src == slowSrc && dst == slowDst {
				return sim.Link{Latency: 100 * time.Microsecond}
			}
			return sim.Link{Latency: time.Microsecond}
		}})
	c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: 3})
	name := func(i int) uint64 {
		b, err := c.eps[i].Name()
		if err != nil {
			t.Fatal(err)
		}
		id, ok := sim.ID(b)
		if !ok {
			t.Fatalf("sim.ID(%q) failed", b)
		}
		return id
	}
	slowSrc, slowDst = name(0), name(2)
	for _, dst := range []int{1, 2} {
		if err := c.eps[dst].Recv(make([]byte, 8), nil, fabric.AddrUnspec, dst); err != nil {
			t.Fatal(err)
		}
	}
	c.sendSeq(0, 2, 1, 8) // slow link, sent first
	c.sendSeq(0, 1, 1, 8)
	recs := c.drain(5*time.Second, func(r []record) bool { return count(r, fabric.FlagRecv) == 2 })
	var rx []record
	for _, r := range recs {
		if r.Flags&fabric.FlagRecv != 0 {
			rx = append(rx, r)
		}
	}
	if rx[0].Ctx != 1 || rx[0].At != time.Microsecond || rx[1].Ctx != 2 || rx[1].At != 100*time.Microsecond {
		t.Fatalf("receives %+v; want endpoint 1 at 1µs, then endpoint 2 at 100µs", rx)
	}
}

// TestJitterOrder: jitter reorders datagrams but never RDM messages
// (FI_ORDER_SAS), which arrive in order, later than without jitter.
func TestJitterOrder(t *testing.T) {
	const n = 200
	link := sim.Link{Latency: time.Microsecond, Jitter: 20 * time.Microsecond, Bandwidth: 1e10}
	for _, et := range []fabric.EPType{fabric.EPRDM, fabric.EPDgram} {
		t.Run(et.String(), func(t *testing.T) {
			c := openCluster(t, newNetwork(t, sim.Config{Seed: 3, Default: link}), clusterOpts{epType: et, n: 2, rxSize: n})
			seq, _ := c.arrivals(1, n, 64, func() { c.sendSeq(0, 1, n, 64) })
			if len(seq) != n {
				t.Fatalf("%d of %d arrived", len(seq), n)
			}
			if ordered := inOrder(seq); ordered != (et == fabric.EPRDM) {
				t.Fatalf("%v: arrivals in order: %v (%v)", et, ordered, seq)
			}
		})
	}
}

// TestLoss: a lossy link drops datagrams (their sends still complete
// successfully) and delays RDM messages, which all arrive, in order.
func TestLoss(t *testing.T) {
	const n = 400
	link := sim.Link{Latency: time.Microsecond, Loss: 0.5}
	t.Run("FI_EP_DGRAM", func(t *testing.T) {
		nw := newNetwork(t, sim.Config{Seed: 5, Default: link})
		c := openCluster(t, nw, clusterOpts{epType: fabric.EPDgram, n: 2, rxSize: n})
		for i := 0; i < n; i++ {
			if err := c.eps[1].Recv(make([]byte, 8), nil, fabric.AddrUnspec, i); err != nil {
				t.Fatal(err)
			}
		}
		c.sendSeq(0, 1, n, 8)
		last := -1
		recs := c.drain(5*time.Second, func(r []record) bool {
			idle := nw.Pending() == 0 && len(r) == last
			last = len(r)
			return idle
		})
		tx, rx := count(recs, fabric.FlagSend), count(recs, fabric.FlagRecv)
		st := nw.Stats()
		if tx != n || rx == 0 || rx >= n || uint64(rx)+st.Dropped != n {
			t.Fatalf("%d sends completed, %d received, stats %+v; want %d sends, about half received, the rest dropped", tx, rx, st, n)
		}
	})
	t.Run("FI_EP_RDM", func(t *testing.T) {
		nw := newNetwork(t, sim.Config{Seed: 5, Default: link, RTO: 10 * time.Microsecond})
		c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: 2, rxSize: n})
		seq, at := c.arrivals(1, n, 8, func() { c.sendSeq(0, 1, n, 8) })
		st := nw.Stats()
		if len(seq) != n || !inOrder(seq) || st.Retransmit == 0 || st.Dropped != 0 {
			t.Fatalf("%d of %d arrived, in order %v, stats %+v", len(seq), n, inOrder(seq), st)
		}
		if at[n-1] <= time.Microsecond {
			t.Fatalf("last arrival at %v: losses cost no time", at[n-1])
		}
	})
}

// TestCloseWithSendsInFlight: closing the sender takes its messages off
// the network (FI_ECANCELED, never delivered); a target that closes
// before a message arrives fails the RDM send (FI_EHOSTUNREACH) and
// drops the datagram.
func TestCloseWithSendsInFlight(t *testing.T) {
	link := sim.Link{Latency: time.Millisecond}
	t.Run("sender_closes", func(t *testing.T) {
		nw := newNetwork(t, sim.Config{Default: link})
		c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: 2})
		if err := c.eps[1].Recv(make([]byte, 8), nil, fabric.AddrUnspec, "rx"); err != nil {
			t.Fatal(err)
		}
		if err := c.eps[0].Send([]byte("lost"), nil, c.addrs[1], "tx"); err != nil {
			t.Fatal(err)
		}
		if err := c.eps[0].Close(); err != nil {
			t.Fatal(err)
		}
		c.eps[0] = nil
		var ee fabric.CQErrEntry
		if _, err := c.cqs[0].Read(make([]fabric.CQEntry, 1)); !errors.Is(err, fabric.ErrAvail) {
			t.Fatalf("sender's CQ after close: %v; want an error entry", err)
		}
		if err := c.cqs[0].ReadErr(&ee); err != nil || ee.OpContext != "tx" || ee.Err != fabric.ErrCanceled {
			t.Fatalf("sender's error entry %+v, %v; want tx, FI_ECANCELED", ee, err)
		}
		for i := 0; i < 10; i++ {
			if n, err := c.cqs[1].Read(make([]fabric.CQEntry, 1)); n != 0 || !errors.Is(err, fabric.ErrAgain) {
				t.Fatalf("receiver's CQ: %d, %v; want nothing", n, err)
			}
		}
		if nw.Pending() != 0 || nw.Stats().Delivered != 0 {
			t.Fatalf("pending %d, stats %+v", nw.Pending(), nw.Stats())
		}
	})
	for _, et := range []fabric.EPType{fabric.EPRDM, fabric.EPDgram} {
		t.Run("target_closes_"+et.String(), func(t *testing.T) {
			nw := newNetwork(t, sim.Config{Default: link})
			c := openCluster(t, nw, clusterOpts{epType: et, n: 2})
			if err := c.eps[0].Send([]byte("late"), nil, c.addrs[1], "tx"); err != nil {
				t.Fatal(err)
			}
			if err := c.eps[1].Close(); err != nil {
				t.Fatal(err)
			}
			c.eps[1] = nil
			c.cqs = c.cqs[:1]
			recs := c.drain(5*time.Second, func(r []record) bool { return len(r) == 1 && nw.Pending() == 0 })
			st := nw.Stats()
			if et == fabric.EPRDM {
				if recs[0].Ctx != "tx" || !errors.Is(recs[0].Err, syscall.EHOSTUNREACH) || st.Failed != 1 {
					t.Fatalf("send to a closed target: %+v, stats %+v; want FI_EHOSTUNREACH", recs[0], st)
				}
				return
			}
			if recs[0].Ctx != "tx" || recs[0].Err != nil || st.Dropped != 1 {
				t.Fatalf("datagram to a closed target: %+v, stats %+v; want a successful send", recs[0], st)
			}
		})
	}
}

// TestNetworkConfig: NewNetwork's checks, the network registry, and
// GetInfo's choice of network by fabric name.
func TestNetworkConfig(t *testing.T) {
	if _, err := sim.NewNetwork("", sim.Config{}); !errors.Is(err, fabric.ErrInval) {
		t.Errorf("empty name: %v; want EINVAL", err)
	}
	for _, l := range []sim.Link{{Latency: -1}, {Jitter: -1}, {Bandwidth: -1}, {Loss: 1.5}, {Loss: -0.1}} {
		if _, err := sim.NewNetwork("bad", sim.Config{Default: l}); !errors.Is(err, fabric.ErrInval) {
			t.Errorf("link %+v: %v; want EINVAL", l, err)
		}
	}
	nw := newNetwork(t, sim.Config{})
	if _, err := sim.NewNetwork(nw.Name(), sim.Config{}); !errors.Is(err, fabric.ErrAddrInUse) {
		t.Errorf("a second network %q: %v; want EADDRINUSE", nw.Name(), err)
	}
	h := fabric.AllocInfo()
	h.FabricAttr.ProvName = "sim"
	h.FabricAttr.Name = nw.Name()
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err != nil || len(infos) != 2 || infos[0].FabricAttr.Name != nw.Name() ||
		infos[0].EPAttr.Type != fabric.EPRDM || infos[1].EPAttr.Type != fabric.EPDgram {
		t.Fatalf("GetInfo on %q: %v, %v", nw.Name(), infos, err)
	}
	h.FabricAttr.Name = "no-such-network"
	if _, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h); !errors.Is(err, fabric.ErrNoData) {
		t.Errorf("GetInfo on an unknown network: %v; want ENODATA", err)
	}
	h.FabricAttr.Name = nw.Name()
	h.DomainAttr.DataProgress = fabric.ProgressAuto
	if _, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h); !errors.Is(err, fabric.ErrNoData) {
		t.Errorf("GetInfo with FI_PROGRESS_AUTO: %v; want ENODATA", err)
	}
	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := nw.Close(); !errors.Is(err, syscall.EBADF) {
		t.Errorf("second Close: %v; want EBADF", err)
	}
}

// TestConfigFromEnv: the FI_SIM_* variables configure the default
// network; values that do not parse are ignored.
func TestConfigFromEnv(t *testing.T) {
	t.Setenv("FI_SIM_SEED", "0x2a")
	t.Setenv("FI_SIM_LATENCY", "5us")
	t.Setenv("FI_SIM_JITTER", "1us")
	t.Setenv("FI_SIM_BANDWIDTH", "1.25e9")
	t.Setenv("FI_SIM_LOSS", "0.01")
	t.Setenv("FI_SIM_RTO", "20us")
	want := sim.Config{Seed: 42, RTO: 20 * time.Microsecond, Default: sim.Link{Latency: 5 * time.Microsecond,
		Jitter: time.Microsecond, Bandwidth: 1.25e9, Loss: 0.01}}
	if got := sim.ConfigFromEnv(); got.Seed != want.Seed || got.RTO != want.RTO || got.Default != want.Default {
		t.Fatalf("ConfigFromEnv = %+v; want %+v", got, want)
	}
	t.Setenv("FI_SIM_LATENCY", "fast")
	t.Setenv("FI_SIM_LOSS", "2")
	t.Setenv("FI_SIM_SEED", "x")
	if got := sim.ConfigFromEnv(); got.Seed != 0 || got.Default.Latency != 0 || got.Default.Loss != 0 {
		t.Fatalf("ConfigFromEnv with bad values = %+v; want them ignored", got)
	}
}

// TestUnexpectedBound: an endpoint holds unexpected messages up to
// Config.MaxUnexpectedBytes; beyond it datagrams are dropped and RDM
// messages wait at the target, in order, until receives are posted.
func TestUnexpectedBound(t *testing.T) {
	const msgs, size = 20, 100
	for _, et := range []fabric.EPType{fabric.EPRDM, fabric.EPDgram} {
		t.Run(et.String(), func(t *testing.T) {
			nw := newNetwork(t, sim.Config{MaxUnexpectedBytes: 10 * size})
			c := openCluster(t, nw, clusterOpts{epType: et, n: 2, rxSize: msgs})
			if got := c.info.RxAttr.TotalBufferedRecv; got != 10*size {
				t.Fatalf("total_buffered_recv %d; want %d", got, 10*size)
			}
			c.sendSeq(0, 1, msgs, size)
			// Progress without receives: 10 messages are held.
			for i := 0; i < 10; i++ {
				c.cqs[0].Read(nil)
			}
			st := nw.Stats()
			if et == fabric.EPDgram && (st.Delivered != 10 || st.Dropped != msgs-10) {
				t.Fatalf("datagrams: stats %+v; want 10 held, %d dropped", st, msgs-10)
			}
			if et == fabric.EPRDM && (st.Delivered != 10 || st.Dropped != 0 || nw.Pending() != msgs-10) {
				t.Fatalf("RDM: stats %+v, %d pending; want 10 held, %d waiting", st, nw.Pending(), msgs-10)
			}
			want := msgs
			if et == fabric.EPDgram {
				want = 10
			}
			seq, _ := c.arrivals(1, want, size, func() {})
			if len(seq) != want || !inOrder(seq) {
				t.Fatalf("received %v; want %d in order", seq, want)
			}
		})
	}
}
