package shm_test

import (
	"encoding/binary"
	"errors"
	"strconv"
	"testing"

	fabric "github.com/gofabric/fabric"
	_ "github.com/gofabric/fabric/prov/shm"
)

// rmaSide is one opened shm endpoint with its CQs.
type rmaSide struct {
	ep         *fabric.Endpoint
	txcq, rxcq *fabric.CQ
	av         *fabric.AV
	dom        *fabric.Domain
	addr       []byte
}

func openRMASide(tb testing.TB) *rmaSide {
	tb.Helper()
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg | fabric.CapRMA | fabric.CapAtomic
	h.EPAttr.Type = fabric.EPRDM
	h.FabricAttr.ProvName = "shm"
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err != nil {
		tb.Fatal(err)
	}
	info := infos[0]
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	fab, err := fabric.Open(info)
	must(err)
	tb.Cleanup(func() { fab.Close() })
	s := &rmaSide{}
	s.dom, err = fab.OpenDomain(info)
	must(err)
	tb.Cleanup(func() { s.dom.Close() })
	s.txcq, err = s.dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	must(err)
	tb.Cleanup(func() { s.txcq.Close() })
	s.rxcq, err = s.dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatData})
	must(err)
	tb.Cleanup(func() { s.rxcq.Close() })
	s.av, err = s.dom.OpenAV(&fabric.AVAttr{})
	must(err)
	tb.Cleanup(func() { s.av.Close() })
	s.ep, err = s.dom.OpenEndpoint(info)
	must(err)
	tb.Cleanup(func() { s.ep.Close() })
	must(s.ep.BindCQ(s.txcq, fabric.FlagTransmit))
	must(s.ep.BindCQ(s.rxcq, fabric.FlagRecv))
	must(s.ep.BindAV(s.av))
	must(s.ep.Enable())
	s.addr, err = s.ep.Name()
	must(err)
	return s
}

func (s *rmaSide) insert(tb testing.TB, addr []byte) fabric.Addr {
	fa := make([]fabric.Addr, 1)
	if _, err := s.av.Insert([][]byte{addr}, fa, 0); err != nil {
		tb.Fatal(err)
	}
	return fa[0]
}

// rmaBench is an initiator, a target and a registered target word.
type rmaBench struct {
	a, b      *rmaSide
	ab        fabric.Addr
	addr, key uint64
	ent       []fabric.CQEntry
}

func newRMABench(tb testing.TB) *rmaBench {
	r := &rmaBench{a: openRMASide(tb), b: openRMASide(tb), ent: make([]fabric.CQEntry, 1)}
	r.ab = r.a.insert(tb, r.b.addr)
	mr, err := r.b.dom.RegMR(make([]byte, 4096), fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, 0x51, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mr.Close() })
	r.addr, r.key = mr.Address(), mr.Key()
	return r
}

// wait reads the initiator's CQ until the operation completes, driving
// the target (manual progress); it panics on an error (inside
// AllocsPerRun there is no t to fail).
func (r *rmaBench) wait() {
	for {
		n, err := r.a.txcq.Read(r.ent)
		if n == 1 {
			return
		}
		if err != nil && !errors.Is(err, fabric.ErrAgain) {
			panic(err)
		}
		r.b.rxcq.Read(nil)
	}
}

var benchCtx = new(int)

func (r *rmaBench) write(buf []byte) {
	for r.a.ep.RMAWrite(buf, nil, r.ab, r.addr, r.key, benchCtx) != nil {
		r.a.txcq.Read(nil)
	}
	r.wait()
}

func (r *rmaBench) fetchAdd(one, res []byte) {
	for r.a.ep.FetchAtomic(one, nil, res, nil, r.ab, r.addr, r.key, fabric.DatatypeUint64, fabric.AtomicSum,
		benchCtx) != nil {
		r.a.txcq.Read(nil)
	}
	r.wait()
}

func TestRMAWriteZeroAllocs(t *testing.T) {
	r := newRMABench(t)
	buf := make([]byte, 64)
	for range 50 {
		r.write(buf)
	}
	if n := testing.AllocsPerRun(200, func() { r.write(buf) }); n != 0 {
		t.Fatalf("a 64-byte fi_write and its completion allocate %v times", n)
	}
}

func TestAtomicZeroAllocs(t *testing.T) {
	r := newRMABench(t)
	one, res := binary.LittleEndian.AppendUint64(nil, 1), make([]byte, 8)
	for range 50 {
		r.fetchAdd(one, res)
	}
	if n := testing.AllocsPerRun(200, func() { r.fetchAdd(one, res) }); n != 0 {
		t.Fatalf("an fi_fetch_atomic(FI_SUM, FI_UINT64) and its completion allocate %v times", n)
	}
	before := binary.LittleEndian.Uint64(res)
	r.fetchAdd(one, res)
	if got := binary.LittleEndian.Uint64(res); got != before+1 {
		t.Fatalf("fetched %d after %d", got, before)
	}
}

func (r *rmaBench) read(buf []byte) {
	for r.a.ep.RMARead(buf, nil, r.ab, r.addr, r.key, benchCtx) != nil {
		r.a.txcq.Read(nil)
	}
	r.wait()
}

// bigMR registers size bytes at the target for the benchmark's
// operations (the default region is 4 KiB).
func (r *rmaBench) bigMR(b *testing.B, size int) {
	if size <= 4096 {
		return
	}
	mr, err := r.b.dom.RegMR(make([]byte, size), fabric.FlagRemoteWrite|fabric.FlagRemoteRead, 0, 0x52, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mr.Close() })
	r.addr, r.key = mr.Address(), mr.Key()
}

// BenchmarkRMAWrite and BenchmarkRMARead: one operation at a time, from
// post to the initiator's completion, one goroutine driving both sides.
func BenchmarkRMAWrite(b *testing.B) {
	for _, size := range []int{8, 64, 4096, 65536, 1 << 20} {
		b.Run("size="+strconv.Itoa(size), func(b *testing.B) {
			r := newRMABench(b)
			r.bigMR(b, size)
			buf := make([]byte, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				r.write(buf)
			}
		})
	}
}

func BenchmarkRMARead(b *testing.B) {
	for _, size := range []int{8, 4096, 65536, 1 << 20} {
		b.Run("size="+strconv.Itoa(size), func(b *testing.B) {
			r := newRMABench(b)
			r.bigMR(b, size)
			buf := make([]byte, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				r.read(buf)
			}
		})
	}
}

func BenchmarkAtomic(b *testing.B) {
	b.Run("op=fetch_sum/dt=uint64", func(b *testing.B) {
		r := newRMABench(b)
		one, res := binary.LittleEndian.AppendUint64(nil, 1), make([]byte, 8)
		b.ReportAllocs()
		for b.Loop() {
			r.fetchAdd(one, res)
		}
	})
}

// TestRMAFenceWaitsForEarlierOperations: an FI_FENCE write is not started
// while an earlier read is unanswered; it is once the read completed.
func TestRMAFenceWaitsForEarlierOperations(t *testing.T) {
	r := newRMABench(t)
	mem := make([]byte, 64)
	mr, err := r.b.dom.RegMR(mem, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, 0x53, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	rd, rctx, wctx := make([]byte, 8), new(int), new(int)
	if err := r.a.ep.RMARead(rd, nil, r.ab, mr.Address(), mr.Key(), rctx); err != nil {
		t.Fatal(err)
	}
	if err := r.a.ep.RMAWriteMsg(&fabric.Msg{IOV: [][]byte{[]byte("fenced!!")}, Addr: r.ab, Context: wctx,
		RMA: []fabric.RMAIOV{{Addr: mr.Address() + 8, Len: 8, Key: mr.Key()}}}, fabric.FlagFence|fabric.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	// Only the target progresses: it answers the read; the fenced write
	// has not been sent, so nothing writes its memory.
	for range 100 {
		r.b.rxcq.Read(nil)
	}
	if string(mem[8:16]) != "\x00\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("the fenced write landed before the read completed: %q", mem[8:16])
	}
	ctxs := map[any]bool{}
	for len(ctxs) < 2 {
		r.wait()
		ctxs[r.ent[0].OpContext] = true
	}
	if !ctxs[rctx] || !ctxs[wctx] {
		t.Fatalf("completions %v", ctxs)
	}
	if string(mem[8:16]) != "fenced!!" {
		t.Fatalf("target memory after the fenced write: %q", mem[8:16])
	}
}
