package chaos_test

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
)

// targets are the endpoint types the fault tests run over.
var targets = []struct {
	prov string
	ept  fabric.EPType
}{
	{"udp", fabric.EPDgram},
	{"tcp", fabric.EPRDM},
	{"shm", fabric.EPRDM},
}

// draws returns which of n transmits of endpoint 0 a fault of the given
// rate hits, when it is the first of the configured faults to be drawn
// (Config documents the order) and every transmit draws it: the stream
// is PCG(seed, 0).
func draws(seed uint64, rate float64, n int) []bool {
	r := rand.New(rand.NewPCG(seed, 0))
	out := make([]bool, n)
	for i := range out {
		out[i] = r.Float64() < rate
	}
	return out
}

func payload(i int) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(i)) }

// sendAll posts n receives at b (context j: the j-th buffer returned)
// and n sends from a (payload and context i).
func sendAll(t *testing.T, a, b *node, n int) [][]byte {
	t.Helper()
	bufs := make([][]byte, n)
	for j := range bufs {
		bufs[j] = make([]byte, 64)
		if err := b.ep.Recv(bufs[j], nil, fabric.AddrUnspec, j); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if err := a.ep.Send(payload(i), nil, a.peer, i); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	return bufs
}

// received returns the payloads (send indexes) of b's receive completions
// into bufs, in order, and fails on anything but n of them (then nothing
// more for a while).
func received(t *testing.T, b *node, bufs [][]byte, n int) []int {
	t.Helper()
	rx := drain(t, b.rxcq, n, 10*time.Second)
	if len(rx.errs) != 0 || len(rx.ok) != n {
		t.Fatalf("%d receive completions and %d errors, want %d and 0", len(rx.ok), len(rx.errs), n)
	}
	if more := drain(t, b.rxcq, 1, 50*time.Millisecond); len(more.ok)+len(more.errs) != 0 {
		t.Fatalf("more receive completions than sends that succeeded: %+v", more)
	}
	out := make([]int, n)
	for k, e := range rx.ok {
		b := bufs[e.OpContext.(int)]
		if e.Len != 4 {
			t.Fatalf("receive of %d bytes", e.Len)
		}
		out[k] = int(binary.LittleEndian.Uint32(b))
	}
	return out
}

// indexes returns the i for which pick(i) holds, in order.
func indexes(n int, pick func(i int) bool) []int {
	var out []int
	for i := 0; i < n; i++ {
		if pick(i) {
			out = append(out, i)
		}
	}
	return out
}

func cntr(t *testing.T, c *fabric.Cntr) (uint64, uint64) {
	t.Helper()
	v, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.ReadErr()
	if err != nil {
		t.Fatal(err)
	}
	return v, e
}

// TestFaultError: with Config.Error, exactly the transmits the seeded
// stream picks complete with an error completion (Err ErrInjected, the
// send's context and flags; the counter's error value), the others
// complete and arrive, and nothing else is lost or added, on every
// endpoint type.
func TestFaultError(t *testing.T) {
	const n, seed, rate = 64, 7, 0.25
	want := draws(seed, rate, n)
	nerr := 0
	for _, w := range want {
		if w {
			nerr++
		}
	}
	if nerr == 0 || nerr == n {
		t.Fatalf("seed %d draws %d errors of %d: pick another seed", seed, nerr, n)
	}
	for _, tg := range targets {
		t.Run(tg.prov+"/"+tg.ept.String(), func(t *testing.T) {
			h, a, b := pair(t, tg.prov, tg.ept, 0, &chaos.Config{Seed: seed, Error: rate})
			bufs := sendAll(t, a, b, n)
			tx := drain(t, a.txcq, n, 10*time.Second)
			if len(tx.ok) != n-nerr || len(tx.errs) != nerr {
				t.Fatalf("%d completions and %d errors, want %d and %d", len(tx.ok), len(tx.errs), n-nerr, nerr)
			}
			for _, e := range tx.errs {
				i := e.OpContext.(int)
				if !want[i] || !errors.Is(e.Err, chaos.ErrInjected) || e.Flags != fabric.FlagSend|fabric.FlagMsg {
					t.Fatalf("error completion %+v: not one the stream picked (context %d)", e, i)
				}
			}
			for _, e := range tx.ok {
				if want[e.OpContext.(int)] {
					t.Fatalf("send %d completed, but the stream picked it to fail", e.OpContext)
				}
			}
			// Every endpoint type here keeps the order of a pair's
			// messages on loopback (udp: one socket to another).
			if got, w := received(t, b, bufs, n-nerr), indexes(n, func(i int) bool { return !want[i] }); !equal(got, w) {
				t.Fatalf("received %v, want %v", got, w)
			}
			if v, e := cntr(t, a.tx); v != uint64(n-nerr) || e != uint64(nerr) {
				t.Fatalf("send counter %d, errors %d; want %d, %d", v, e, n-nerr, nerr)
			}
			if s := h.Stats(); s.Errors != uint64(nerr) {
				t.Fatalf("Stats().Errors = %d, want %d", s.Errors, nerr)
			}
		})
	}
}

// TestFaultErrorFullCQ: injected error completions are never lost. With
// every transmit failing (Error 1) and the CQ not read, posts succeed
// until the CQ's room is taken, then answer FI_EAGAIN (resource
// management); each post that succeeded has its error completion; tagged
// sends and injects fail the same way (an inject's entry has no context).
func TestFaultErrorFullCQ(t *testing.T) {
	_, a, _ := pair(t, "tcp", fabric.EPRDM, fabric.CapTagged, &chaos.Config{Error: 1})
	posted, again := 0, 0
	for i := 0; i < 300; i++ {
		var err error
		switch i % 3 {
		case 0:
			err = a.ep.Send(payload(i), nil, a.peer, i)
		case 1:
			err = a.ep.TSend(payload(i), nil, a.peer, 9, i)
		case 2:
			err = a.ep.Inject(payload(i), a.peer)
		}
		switch {
		case err == nil:
			posted++
		case errors.Is(err, fabric.ErrAgain):
			again++
		default:
			t.Fatalf("post %d: %v", i, err)
		}
	}
	if again == 0 || posted < 256 {
		t.Fatalf("%d posted, %d FI_EAGAIN: want FI_EAGAIN once the 256 entries of the CQ are taken", posted, again)
	}
	tx := drain(t, a.txcq, posted, 10*time.Second)
	if len(tx.ok) != 0 || len(tx.errs) != posted {
		t.Fatalf("%d completions, %d errors; want 0, %d", len(tx.ok), len(tx.errs), posted)
	}
	for _, e := range tx.errs {
		if !errors.Is(e.Err, chaos.ErrInjected) {
			t.Fatalf("error %v", e.Err)
		}
		i, ok := e.OpContext.(int)
		switch {
		case !ok && e.Flags != fabric.FlagSend|fabric.FlagMsg:
			t.Fatalf("inject error entry flags %v", e.Flags)
		case ok && i%3 == 1 && e.Flags != fabric.FlagSend|fabric.FlagTagged:
			t.Fatalf("tagged send %d error flags %v", i, e.Flags)
		}
	}
}

// TestFaultSeedRepeats: the same seed picks the same transmits, whatever
// the provider, and another seed others.
func TestFaultSeedRepeats(t *testing.T) {
	failed := func(prov string, ept fabric.EPType, seed uint64) []int {
		_, a, b := pair(t, prov, ept, 0, &chaos.Config{Seed: seed, Error: 0.5})
		sendAll(t, a, b, 32)
		var out []int
		for _, e := range drain(t, a.txcq, 32, 10*time.Second).errs {
			out = append(out, e.OpContext.(int))
		}
		return out
	}
	x, y, z := failed("udp", fabric.EPDgram, 3), failed("tcp", fabric.EPRDM, 3), failed("udp", fabric.EPDgram, 4)
	if len(x) == 0 || !equal(x, y) || equal(x, z) {
		t.Fatalf("seed 3 over udp %v, over tcp %v; seed 4 %v", x, y, z)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFaultDrop: over udp, exactly the datagrams the seeded stream picks
// are lost: every send completes successfully and counts, and the
// receiver gets the others, in order, and nothing more.
func TestFaultDrop(t *testing.T) {
	const n, seed, rate = 64, 11, 0.3
	want := draws(seed, rate, n)
	h, a, b := pair(t, "udp", fabric.EPDgram, 0, &chaos.Config{Seed: seed, Drop: rate})
	bufs := sendAll(t, a, b, n)
	if tx := drain(t, a.txcq, n, 10*time.Second); len(tx.ok) != n || len(tx.errs) != 0 {
		t.Fatalf("%d send completions, %d errors; want %d, 0", len(tx.ok), len(tx.errs), n)
	}
	kept := indexes(n, func(i int) bool { return !want[i] })
	if len(kept) == n || len(kept) == 0 {
		t.Fatalf("seed %d drops %d of %d: pick another seed", seed, n-len(kept), n)
	}
	if got := received(t, b, bufs, len(kept)); !equal(got, kept) {
		t.Fatalf("received %v, want %v", got, kept)
	}
	if v, e := cntr(t, a.tx); v != n || e != 0 {
		t.Fatalf("send counter %d, errors %d", v, e)
	}
	if s := h.Stats(); s.Dropped != uint64(n-len(kept)) {
		t.Fatalf("Stats().Dropped = %d, want %d", s.Dropped, n-len(kept))
	}
}

// TestFaultDup: over udp, exactly the datagrams the stream picks arrive
// twice (one after the other); each send completes and counts once.
func TestFaultDup(t *testing.T) {
	const n, seed, rate = 48, 5, 0.3
	want := draws(seed, rate, n)
	h, a, b := pair(t, "udp", fabric.EPDgram, 0, &chaos.Config{Seed: seed, Dup: rate})
	var expect []int
	for i := 0; i < n; i++ {
		expect = append(expect, i)
		if want[i] {
			expect = append(expect, i)
		}
	}
	if len(expect) == n {
		t.Fatalf("seed %d duplicates nothing", seed)
	}
	bufs := make([][]byte, len(expect))
	for j := range bufs {
		bufs[j] = make([]byte, 64)
		if err := b.ep.Recv(bufs[j], nil, fabric.AddrUnspec, j); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if err := a.ep.Send(payload(i), nil, a.peer, i); err != nil {
			t.Fatal(err)
		}
	}
	tx := drain(t, a.txcq, n+1, 300*time.Millisecond)
	if len(tx.ok) != n || len(tx.errs) != 0 {
		t.Fatalf("%d send completions, %d errors; want %d, 0", len(tx.ok), len(tx.errs), n)
	}
	if got := received(t, b, bufs, len(expect)); !equal(got, expect) {
		t.Fatalf("received %v, want %v", got, expect)
	}
	if v, e := cntr(t, a.tx); v != n || e != 0 {
		t.Fatalf("send counter %d, errors %d; want %d, 0", v, e, n)
	}
	if s := h.Stats(); s.Duplicated != uint64(len(expect)-n) {
		t.Fatalf("Stats().Duplicated = %d, want %d", s.Duplicated, len(expect)-n)
	}
}

// TestFaultLossOnlyOnDgram: Drop and Dup leave reliable endpoints alone:
// over tcp RDM and shm every message arrives once.
func TestFaultLossOnlyOnDgram(t *testing.T) {
	const n = 32
	for _, tg := range targets[1:] {
		t.Run(tg.prov, func(t *testing.T) {
			h, a, b := pair(t, tg.prov, tg.ept, 0, &chaos.Config{Drop: 0.5, Dup: 0.5})
			bufs := sendAll(t, a, b, n)
			if tx := drain(t, a.txcq, n, 10*time.Second); len(tx.ok) != n {
				t.Fatalf("%d send completions", len(tx.ok))
			}
			if got := received(t, b, bufs, n); !equal(got, indexes(n, func(int) bool { return true })) {
				t.Fatalf("received %v", got)
			}
			if s := h.Stats(); s.Dropped != 0 || s.Duplicated != 0 {
				t.Fatalf("%+v", s)
			}
		})
	}
}

// TestFaultErrorRMAAtomic: injected errors on RMA and atomics complete
// with the flags of the operation (FI_RMA|FI_WRITE, FI_RMA|FI_READ,
// FI_ATOMIC|FI_WRITE, FI_ATOMIC|FI_READ for a fetching atomic) and bump
// the error value of the write or read counter; the target is never
// reached (no region is even registered).
func TestFaultErrorRMAAtomic(t *testing.T) {
	for _, prov := range []string{"tcp", "shm"} {
		t.Run(prov, func(t *testing.T) {
			_, a, _ := pair(t, prov, fabric.EPRDM, fabric.CapRMA|fabric.CapAtomic, &chaos.Config{Error: 1})
			buf, res := make([]byte, 8), make([]byte, 8)
			for i, err := range []error{
				a.ep.RMAWrite(buf, nil, a.peer, 0, 1, 0),
				a.ep.RMARead(buf, nil, a.peer, 0, 1, 1),
				a.ep.Atomic(buf, nil, a.peer, 0, 1, fabric.DatatypeUint64, fabric.AtomicSum, 2),
				a.ep.FetchAtomic(buf, nil, res, nil, a.peer, 0, 1, fabric.DatatypeUint64, fabric.AtomicSum, 3),
			} {
				if err != nil {
					t.Fatalf("operation %d: %v", i, err)
				}
			}
			tx := drain(t, a.txcq, 4, 5*time.Second)
			want := []fabric.Flags{fabric.FlagRMA | fabric.FlagWrite, fabric.FlagRMA | fabric.FlagRead,
				fabric.FlagAtomic | fabric.FlagWrite, fabric.FlagAtomic | fabric.FlagRead}
			if len(tx.errs) != 4 || len(tx.ok) != 0 {
				t.Fatalf("%+v", tx)
			}
			for i, e := range tx.errs {
				if e.OpContext != i || e.Flags != want[i] || !errors.Is(e.Err, chaos.ErrInjected) {
					t.Fatalf("error completion %d: %+v, want flags %v", i, e, want[i])
				}
			}
			// One counter counts sends, reads and writes here.
			if _, e := cntr(t, a.tx); e != 4 {
				t.Fatalf("counter errors %d, want 4", e)
			}
		})
	}
}
