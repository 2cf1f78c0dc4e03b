package lnx

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestRMAAndAtomicsBothPaths: a region registered through target a's lnx
// domain is written, read and updated atomically by a local peer b (shm
// path) and a remote peer c (tcp path) with the one key: writes with
// remote CQ data count on the region's counter (FI_RMA_EVENT) and land in a's receive CQ with their data and source, each
// peer reads what the other path wrote, fetch-adds from both paths add
// up, the initiators' FI_READ/FI_WRITE counters count, and a bad key
// completes in error on both paths.
func TestRMAAndAtomicsBothPaths(t *testing.T) {
	rt := watchRoutes(t)
	const caps = fabric.CapRMA | fabric.CapAtomic
	a := openNodeCaps(t, "", caps|fabric.CapRMAEvent)
	b := openNodeCaps(t, "", caps)
	c := openNodeCaps(t, "other-host", caps)
	ab, ac := a.insert(b.addr), a.insert(c.addr)
	ba, ca := b.insert(a.addr), c.insert(a.addr)

	region := make([]byte, 64)
	// A counter bound to the region counts remote writes of both paths
	// (FI_RMA_EVENT): the linked endpoints report them to the one table.
	mrCntr, err := a.dom.OpenCntr(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, mrCntr.Close()) })
	mr, err := a.dom.RegMR(region, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, mr.Close()) })
	if err := mr.Bind(mrCntr, fabric.FlagRemoteWrite); err != nil {
		t.Fatal(err)
	}
	if err := mr.Enable(); err != nil && !errors.Is(err, fabric.ErrOpBadState) {
		t.Fatal(err)
	}
	key, base := mr.Key(), mr.Address()

	// Writes with remote CQ data: b at 0, c at 16.
	retry(t, func() error { return b.ep.RMAWriteData([]byte("from-b-over-shm!"), nil, 1, ba, base, key, "wb") }, b.txcq)
	retry(t, func() error { return c.ep.RMAWriteData([]byte("from-c-over-tcp!"), nil, 2, ca, base+16, key, "wc") }, c.txcq)
	if e := waitOne(t, b.txcq, a.rxcq); e.OpContext != "wb" || e.Flags&fabric.FlagWrite == 0 {
		t.Errorf("b write completion %+v", e)
	}
	if e := waitOne(t, c.txcq, a.rxcq); e.OpContext != "wc" || e.Flags&fabric.FlagWrite == 0 {
		t.Errorf("c write completion %+v", e)
	}
	data := map[uint64]fabric.Addr{}
	ent := make([]fabric.CQEntry, 1)
	src := make([]fabric.Addr, 1)
	deadline := time.Now().Add(10 * time.Second)
	for len(data) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("remote CQ data: got %v", data)
		}
		n, err := a.rxcq.ReadFrom(ent, src)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			a.rxcq.ReadErr(&ee)
			t.Fatalf("target error completion %+v", ee)
		}
		if n == 1 {
			if ent[0].Flags&fabric.FlagRemoteCQData == 0 {
				t.Fatalf("target completion without FI_REMOTE_CQ_DATA: %+v", ent[0])
			}
			data[ent[0].Data] = src[0]
		}
	}
	if data[1] != ab || data[2] != ac {
		t.Errorf("remote CQ data sources %v, want 1 from %v (b), 2 from %v (c)", data, ab, ac)
	}
	if v, err := mrCntr.Read(); err != nil || v != 2 {
		t.Errorf("region counter %d %v, want 2 remote writes", v, err)
	}
	if string(region[:32]) != "from-b-over-shm!from-c-over-tcp!" {
		t.Errorf("region %q", region[:32])
	}

	// Each reads what the other path wrote.
	rb, rc := make([]byte, 16), make([]byte, 16)
	retry(t, func() error { return b.ep.RMARead(rb, nil, ba, base+16, key, "rb") }, b.txcq)
	retry(t, func() error { return c.ep.RMARead(rc, nil, ca, base, key, "rc") }, c.txcq)
	if e := waitOne(t, b.txcq, a.rxcq); e.OpContext != "rb" || e.Flags&fabric.FlagRead == 0 {
		t.Errorf("b read completion %+v", e)
	}
	if e := waitOne(t, c.txcq, a.rxcq); e.OpContext != "rc" || e.Flags&fabric.FlagRead == 0 {
		t.Errorf("c read completion %+v", e)
	}
	if string(rb) != "from-c-over-tcp!" || string(rc) != "from-b-over-shm!" {
		t.Errorf("reads %q %q", rb, rc)
	}

	// Fetch-add from both paths on one word.
	const rounds = 10
	for i := 0; i < rounds; i++ {
		for _, p := range []struct {
			n    *node
			dest fabric.Addr
			add  uint64
		}{{b, ba, 1}, {c, ca, 100}} {
			op := make([]byte, 8)
			binary.LittleEndian.PutUint64(op, p.add)
			res := make([]byte, 8)
			retry(t, func() error {
				return p.n.ep.FetchAtomic(op, nil, res, nil, p.dest, base+32, key, fabric.DatatypeUint64,
					fabric.AtomicSum, "fa")
			}, p.n.txcq)
			if e := waitOne(t, p.n.txcq, a.rxcq); e.OpContext != "fa" || e.Flags&fabric.FlagAtomic == 0 {
				t.Fatalf("atomic completion %+v", e)
			}
		}
	}
	if got := binary.LittleEndian.Uint64(region[32:]); got != rounds*101 {
		t.Errorf("sum %d, want %d", got, rounds*101)
	}
	// Compare-swap over tcp sees the value the shm path left.
	res := make([]byte, 8)
	cmp, swp := make([]byte, 8), make([]byte, 8)
	binary.LittleEndian.PutUint64(cmp, rounds*101)
	binary.LittleEndian.PutUint64(swp, 7)
	retry(t, func() error {
		return c.ep.CompareAtomic(swp, nil, cmp, nil, res, nil, ca, base+32, key, fabric.DatatypeUint64,
			fabric.AtomicCSwap, "cs")
	}, c.txcq)
	waitOne(t, c.txcq, a.rxcq)
	if binary.LittleEndian.Uint64(res) != rounds*101 || binary.LittleEndian.Uint64(region[32:]) != 7 {
		t.Errorf("cswap: fetched %d, now %d", binary.LittleEndian.Uint64(res), binary.LittleEndian.Uint64(region[32:]))
	}

	// Counters: 1 write and 1 read, plus the atomics (fetch: FI_READ).
	for _, p := range []struct {
		name string
		n    *node
		want uint64
	}{{"b", b, 2 + rounds}, {"c", c, 3 + rounds}} {
		if v, err := p.n.cntr.Read(); err != nil || v != p.want {
			t.Errorf("%s counter %d %v, want %d", p.name, v, err, p.want)
		}
	}

	// An unknown key completes in error on both paths, and nothing is
	// written.
	for _, p := range []struct {
		n    *node
		dest fabric.Addr
	}{{b, ba}, {c, ca}} {
		retry(t, func() error { return p.n.ep.RMAWrite([]byte("bad"), nil, p.dest, base, key+12345, "bad") }, p.n.txcq)
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := p.n.txcq.Read(ent)
			if n == 1 {
				t.Fatalf("bad key: success %+v", ent[0])
			}
			if errors.Is(err, fabric.ErrAvail) {
				var ee fabric.CQErrEntry
				if err := p.n.txcq.ReadErr(&ee); err != nil || ee.OpContext != "bad" {
					t.Fatalf("bad key error entry %+v %v", ee, err)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("bad key: no completion in 10 s")
			}
			a.rxcq.Read(nil)
		}
	}
	if string(region[:3]) != "fro" {
		t.Errorf("bad key wrote: %q", region[:16])
	}
	if p := rt.routeOf(b, ba); p != pathSHM {
		t.Errorf("b -> a route %d, want shm", p)
	}
	if p := rt.routeOf(c, ca); p != pathTCP {
		t.Errorf("c -> a route %d, want tcp", p)
	}
}
