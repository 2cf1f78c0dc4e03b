package chaos_test

import (
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/prov/chaos"
)

// TestMain fails the run when the tests leave goroutines (a timer of a
// held transmit, a core provider's) or descriptors behind.
func TestMain(m *testing.M) { testutil.Main(m) }

// node is one endpoint of a test, with its own CQs and counters, and the
// fi_addr of the other node of its pair.
type node struct {
	ep         *fabric.Endpoint
	txcq, rxcq *fabric.CQ
	tx, rx     *fabric.Cntr
	name       []byte
	peer       fabric.Addr
}

// pair opens a fabric of provider prov (connectionless type ept) through a
// new hook of configuration cfg, and two enabled endpoints of one domain
// that know each other. Everything is closed when the test ends.
func pair(t testing.TB, prov string, ept fabric.EPType, caps fabric.Caps, cfg *chaos.Config) (*chaos.Hook, *node, *node) {
	t.Helper()
	return pairWith(t, prov, ept, caps, nil, func(info *fabric.Info) (*fabric.Fabric, *chaos.Hook, error) {
		return chaos.Open(info, cfg)
	})
}

// pairThreading is pair over udp with the domain's threading model asked
// for in the hints.
func pairThreading(t testing.TB, th fabric.Threading, cfg *chaos.Config) (*chaos.Hook, *node, *node) {
	t.Helper()
	return pairWith(t, "udp", fabric.EPDgram, 0, func(h *fabric.Info) { h.DomainAttr.Threading = th },
		func(info *fabric.Info) (*fabric.Fabric, *chaos.Hook, error) { return chaos.Open(info, cfg) })
}

// pairEnv is pair with the fabric opened by fabric.Open, hooked as FI_HOOK
// says (chaos.Env when it names chaos).
func pairEnv(t testing.TB, prov string, ept fabric.EPType, caps fabric.Caps) (*node, *node) {
	t.Helper()
	_, a, b := pairWith(t, prov, ept, caps, nil, func(info *fabric.Info) (*fabric.Fabric, *chaos.Hook, error) {
		f, err := fabric.Open(info)
		return f, chaos.Env(), err
	})
	return a, b
}

func pairWith(t testing.TB, prov string, ept fabric.EPType, caps fabric.Caps, hmod func(*fabric.Info),
	open func(*fabric.Info) (*fabric.Fabric, *chaos.Hook, error)) (*chaos.Hook, *node, *node) {
	t.Helper()
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg | caps
	h.EPAttr.Type = ept
	h.FabricAttr.ProvName = prov
	h.Mode = fabric.ModeContext | fabric.ModeContext2
	if hmod != nil {
		hmod(h)
	}
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
	if err != nil {
		t.Fatalf("GetInfo(%s): %v", prov, err)
	}
	info := infos[0]
	fab, hook, err := open(info)
	if err != nil {
		t.Fatal(err)
	}
	var closers []func() error
	t.Cleanup(func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil && !errors.Is(err, fabric.ErrClosed) {
				t.Errorf("close: %v", err)
			}
		}
	})
	closers = append(closers, fab.Close)
	dom, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	closers = append(closers, dom.Close)
	av, err := dom.OpenAV(&fabric.AVAttr{Type: fabric.AVTable})
	if err != nil {
		t.Fatal(err)
	}
	closers = append(closers, av.Close)
	var nodes [2]*node
	for i := range nodes {
		n := &node{}
		for _, q := range []**fabric.CQ{&n.txcq, &n.rxcq} {
			if *q, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged, Size: 256}); err != nil {
				t.Fatal(err)
			}
			closers = append(closers, (*q).Close)
		}
		for _, c := range []**fabric.Cntr{&n.tx, &n.rx} {
			if *c, err = dom.OpenCntr(&fabric.CntrAttr{}); err != nil {
				t.Fatal(err)
			}
			closers = append(closers, (*c).Close)
		}
		ei := info.Dup()
		ei.SrcAddr = nil
		if n.ep, err = dom.OpenEndpoint(ei); err != nil {
			t.Fatal(err)
		}
		closers = append(closers, n.ep.Close)
		for _, err := range []error{
			n.ep.BindCQ(n.txcq, fabric.FlagTransmit), n.ep.BindCQ(n.rxcq, fabric.FlagRecv),
			n.ep.BindCntr(n.tx, fabric.FlagSend|fabric.FlagRead|fabric.FlagWrite), n.ep.BindCntr(n.rx, fabric.FlagRecv),
			n.ep.BindAV(av), n.ep.Enable(),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n.name, err = n.ep.Name(); err != nil {
			t.Fatal(err)
		}
		nodes[i] = n
	}
	fi := make([]fabric.Addr, 2)
	if _, err := av.Insert([][]byte{nodes[0].name, nodes[1].name}, fi, 0); err != nil {
		t.Fatal(err)
	}
	nodes[0].peer, nodes[1].peer = fi[1], fi[0]
	return hook, nodes[0], nodes[1]
}

// drained is what reading a CQ until a deadline found.
type drained struct {
	ok   []fabric.CQEntry
	errs []fabric.CQErrEntry
}

// drain reads cq (driving progress) until want entries, errors included,
// have arrived, or until d has passed; it never blocks beyond d.
func drain(t testing.TB, cq *fabric.CQ, want int, d time.Duration) drained {
	t.Helper()
	var out drained
	buf := make([]fabric.CQEntry, 16)
	deadline := time.Now().Add(d)
	for len(out.ok)+len(out.errs) < want && time.Now().Before(deadline) {
		n, err := cq.Read(buf)
		switch {
		case err == nil:
			out.ok = append(out.ok, buf[:n]...)
		case errors.Is(err, fabric.ErrAvail):
			var e fabric.CQErrEntry
			if err := cq.ReadErr(&e); err != nil {
				t.Fatalf("ReadErr: %v", err)
			}
			out.errs = append(out.errs, e)
		case errors.Is(err, fabric.ErrAgain):
			time.Sleep(50 * time.Microsecond)
		default:
			t.Fatalf("CQ read: %v", err)
		}
	}
	return out
}
