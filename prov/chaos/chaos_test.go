package chaos_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
)

// TestGoAPIPassThrough opens udp through chaos.Open with the zero Config
// and exchanges messages both ways: every send arrives once, in order,
// with its context, and the hook saw both endpoints.
func TestGoAPIPassThrough(t *testing.T) {
	h, a, b := pair(t, "udp", fabric.EPDgram, 0, nil)
	if got := h.Stats().Endpoints; got != 2 {
		t.Fatalf("Stats().Endpoints = %d, want 2", got)
	}
	const n = 20
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, 16)
		if err := b.ep.Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if err := a.ep.Send([]byte(fmt.Sprintf("m%02d", i)), nil, a.peer, i); err != nil {
			t.Fatal(err)
		}
	}
	tx := drain(t, a.txcq, n, 5*time.Second)
	rx := drain(t, b.rxcq, n, 5*time.Second)
	if len(tx.ok) != n || len(tx.errs) != 0 || len(rx.ok) != n || len(rx.errs) != 0 {
		t.Fatalf("tx %d+%d rx %d+%d completions, want %d each", len(tx.ok), len(tx.errs), len(rx.ok), len(rx.errs), n)
	}
	for i, e := range rx.ok {
		if e.OpContext != i || string(bufs[i][:e.Len]) != fmt.Sprintf("m%02d", i) {
			t.Fatalf("receive %d: context %v, %q", i, e.OpContext, bufs[i][:e.Len])
		}
	}
}

// TestConfigInvalid: a rate outside 0 to 1 is FI_EINVAL from Open, from
// fabric.OpenHooked with New's hook, and from fabric.Open under
// FI_HOOK=chaos (FI_CHAOS_*).
func TestConfigInvalid(t *testing.T) {
	h := fabric.AllocInfo()
	h.EPAttr.Type = fabric.EPDgram
	h.FabricAttr.ProvName = "udp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []float64{-0.1, 1.5, math.NaN()} {
		if _, _, err := chaos.Open(infos[0], &chaos.Config{Error: r}); !errors.Is(err, fabric.ErrInval) {
			t.Fatalf("Open with Error %v: %v", r, err)
		}
		if _, err := fabric.OpenHooked(infos[0], chaos.New(&chaos.Config{Error: r})); !errors.Is(err, fabric.ErrInval) {
			t.Fatalf("OpenHooked with New(Error %v): %v", r, err)
		}
	}
	if _, _, err := chaos.Open(infos[0], &chaos.Config{DelayTime: -time.Millisecond}); !errors.Is(err, fabric.ErrInval) {
		t.Fatalf("Open with a negative DelayTime: %v", err)
	}
	t.Setenv("FI_HOOK", chaos.Name)
	logs := captureLogs(t)
	for _, env := range [][2]string{{chaos.EnvError, "2"}, {chaos.EnvError, "x"}, {chaos.EnvSeed, "-1"}, {chaos.EnvDrop, "1.1"}, {chaos.EnvDup, "1e3"}, {chaos.EnvDelayTime, "-2ms"}, {chaos.EnvDelayTime, "soon"}, {chaos.EnvReorderTime, "-1s"}} {
		t.Run(env[0]+"="+env[1], func(t *testing.T) {
			t.Setenv(env[0], env[1])
			if f, err := fabric.Open(infos[0]); !errors.Is(err, fabric.ErrInval) {
				if err == nil {
					f.Close()
				}
				t.Fatalf("fabric.Open: %v, want FI_EINVAL", err)
			}
			if got := logs.matching("bad configuration", map[string]string{"level": "WARN"}); len(got) == 0 ||
				!strings.Contains(got[len(got)-1].attrs["error"], env[0]+"="+env[1]) {
				t.Fatalf("no warning naming %s=%s: %+v", env[0], env[1], got)
			}
		})
	}
}

// TestEnvConfig: FI_HOOK=chaos with FI_CHAOS_DROP=1 drops every datagram
// of fabrics opened by fabric.Open, counted in Env().Stats().
func TestEnvConfig(t *testing.T) {
	t.Setenv("FI_HOOK", chaos.Name)
	t.Setenv(chaos.EnvDrop, "1")
	before := chaos.Env().Stats().Dropped
	a, b := pairEnv(t, "udp", fabric.EPDgram, 0)
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := a.ep.Send([]byte("x"), nil, a.peer, i); err != nil {
			t.Fatal(err)
		}
	}
	if tx := drain(t, a.txcq, 5, 5*time.Second); len(tx.ok) != 5 {
		t.Fatalf("%d send completions", len(tx.ok))
	}
	if rx := drain(t, b.rxcq, 1, 100*time.Millisecond); len(rx.ok)+len(rx.errs) != 0 {
		t.Fatalf("a dropped datagram arrived: %+v", rx)
	}
	if got := chaos.Env().Stats().Dropped - before; got != 5 {
		t.Fatalf("Dropped grew by %d, want 5", got)
	}
}

// TestPassThroughZeroAllocs: with no fault, trace or control, a send and
// its receive, and an inject, allocate nothing in the hook (the transmit
// calls go to the core provider's fast paths after a few flag checks),
// over udp and shm, whose own paths allocate nothing; nor once a control
// is in use and transmits take the slow path.
func TestPassThroughZeroAllocs(t *testing.T) {
	for _, prov := range []struct {
		name string
		ept  fabric.EPType
	}{{"udp", fabric.EPDgram}, {"shm", fabric.EPRDM}} {
		h, a, b := pair(t, prov.name, prov.ept, 0, nil)
		msg := []byte("0123456789abcdef")
		rbuf := make([]byte, 64)
		ent := make([]fabric.CQEntry, 4)
		var ctx any = "r"
		readOne := func(cq *fabric.CQ) {
			deadline := time.Now().Add(10 * time.Second)
			for {
				if n, _ := cq.Read(ent); n > 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatal("no completion in 10 s")
				}
			}
		}
		round := func(inject bool) {
			if err := b.ep.Recv(rbuf, nil, fabric.AddrUnspec, ctx); err != nil {
				t.Fatal(err)
			}
			var err error
			if inject {
				err = a.ep.Inject(msg, a.peer)
			} else {
				err = a.ep.Send(msg, nil, a.peer, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			readOne(b.rxcq)
			if !inject {
				readOne(a.txcq)
			}
		}
		for _, inject := range []bool{false, true} {
			round(inject)
			if n := testing.AllocsPerRun(200, func() { round(inject) }); n != 0 {
				t.Errorf("%s inject=%v: %.1f allocs per round trip, want 0", prov.name, inject, n)
			}
		}
		// With a control in use every transmit takes the slow path
		// (destination checked against kills and partitions): still
		// nothing allocated for a transmit that is not held.
		h.Kill([]byte("nobody"))
		for _, inject := range []bool{false, true} {
			round(inject)
			if n := testing.AllocsPerRun(200, func() { round(inject) }); n != 0 {
				t.Errorf("%s inject=%v, slow path: %.1f allocs per round trip, want 0", prov.name, inject, n)
			}
		}
	}
}

// TestEnvVarsListed: fabric.EnvVars (fi_info -e) lists every variable the
// hook reads, as the hook's.
func TestEnvVarsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, v := range fabric.EnvVars() {
		if v.Provider == chaos.Name {
			listed[v.Name] = true
		}
	}
	for _, name := range []string{chaos.EnvSeed, chaos.EnvError, chaos.EnvDrop, chaos.EnvDup, chaos.EnvDelay,
		chaos.EnvDelayTime, chaos.EnvReorder, chaos.EnvReorderTime, chaos.EnvTrace} {
		if !listed[name] {
			t.Errorf("%s not listed", name)
		}
	}
	if len(listed) != 9 {
		t.Errorf("%d variables listed for chaos, want 9", len(listed))
	}
}

// TestNilHook: a nil *Hook is refused (FI_EINVAL), never a panic.
func TestNilHook(t *testing.T) {
	var h *chaos.Hook
	h.Kill([]byte{1})
	h.Partition(time.Second, []byte{1})
	h.Heal()
	if err := h.Configure([]byte{1}, nil); !errors.Is(err, fabric.ErrInval) {
		t.Fatalf("Configure on a nil hook: %v", err)
	}
	if s := h.Stats(); s != (chaos.Stats{}) {
		t.Fatalf("Stats of a nil hook: %+v", s)
	}
	info := fabric.AllocInfo()
	info.FabricAttr.ProvName = "udp"
	if _, err := fabric.OpenHooked(info, h); !errors.Is(err, fabric.ErrInval) {
		t.Fatalf("OpenHooked with a nil *Hook: %v", err)
	}
}
