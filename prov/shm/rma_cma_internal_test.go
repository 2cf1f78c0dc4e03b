package shm

import (
	"bytes"
	"testing"

	"github.com/gofabric/fabric/internal/av"
	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/mrkey"
	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// rmaCMAPair is an initiator a and a target b whose memory mem is
// registered in two regions: key 1 (remote read and write) over
// mem[:len/2], key 2 (remote read only) over the rest.
type rmaCMAPair struct {
	a, b   *endpoint
	acq    *cq.CQ
	ab     provider.Addr
	mem    []byte
	half   uint64
	before []byte
}

func newRMACMAPair(t *testing.T, size int) *rmaCMAPair {
	t.Helper()
	mk := func(mr provider.MRKeys) (*endpoint, *cq.CQ, *av.AV) {
		ep, err := newEndpoint(&domain{}, baseInfo(nil))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := cq.New(cq.Config{Format: provider.CQFormatTagged})
		a, err := av.New(av.Config{Format: provider.AddrStr, Handler: shmProvider{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := ep.Enable(&provider.Resources{TxCQ: c, RxCQ: c, AV: a, SRX: srx.New(srx.Config{}), OwnSRX: true,
			MR: mr}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ep.Close() })
		return ep, c, a
	}
	p := &rmaCMAPair{mem: patternBytes(2*size, 40), half: uint64(size)}
	p.before = bytes.Clone(p.mem)
	mr := mrkey.New(mrkey.Config{})
	if _, err := mr.Register([][]byte{p.mem[:size]}, provider.FlagRemoteRead|provider.FlagRemoteWrite, 0, 1, true); err != nil {
		t.Fatal(err)
	}
	if _, err := mr.Register([][]byte{p.mem[size:]}, provider.FlagRemoteRead, 0, 2, true); err != nil {
		t.Fatal(err)
	}
	var aav *av.AV
	p.a, p.acq, aav = mk(nil)
	p.b, _, _ = mk(mr)
	p.ab = insertName(t, aav, p.b.name)
	return p
}

// do posts an RMA read or write and returns its completion (or error
// completion), progressing both sides.
func (p *rmaCMAPair) do(t *testing.T, read bool, m provider.Msg) (provider.CQEntry, *provider.CQErrEntry) {
	t.Helper()
	m.Addr, m.Flags = p.ab, provider.FlagCompletion
	var err error
	if read {
		err = p.a.Read(m)
	} else {
		err = p.a.Write(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return next(t, p.acq, p.a, p.b)
}

func (p *rmaCMAPair) moves() uint64 {
	p.b.rxMu.Lock()
	defer p.b.rxMu.Unlock()
	return p.b.cma.rmaMoves
}

// TestRMACMA: large reads and writes are moved by the target with one
// CMA call each, local and remote iovs scattered; a wrong key, missing
// access or out-of-range address completes in error with the target's
// memory untouched.
func TestRMACMA(t *testing.T) {
	if ok, why := sys.CMAAvailable(); !ok {
		t.Skipf("CMA unavailable here: %s", why) // TestRMACMARefusedFallsBack covers this case
	}
	const size = 1 << 20
	p := newRMACMAPair(t, size)
	if !p.a.rmaCMAFor(&peer{id: p.b.id}, rmaCMAMin()) {
		t.Fatal("CMA not chosen at the threshold")
	}
	// Write: three local pieces into two remote ranges of key 1.
	src := patternBytes(700<<10, 41)
	iov := [][]byte{src[:1000], src[1000 : 300<<10], src[300<<10:]}
	rma := []provider.RMAIOV{{Addr: 50, Len: 200 << 10, Key: 1}, {Addr: 300 << 10, Len: uint64(len(src)) - 200<<10, Key: 1}}
	if e, ee := p.do(t, false, provider.Msg{IOV: iov, RMA: rma, Context: "w"}); ee != nil || e.OpContext != "w" {
		t.Fatalf("write: %+v %+v", e, ee)
	}
	want := bytes.Clone(p.before)
	copy(want[50:], src[:200<<10])
	copy(want[300<<10:], src[200<<10:])
	if !bytes.Equal(p.mem, want) {
		t.Fatalf("target memory after the write differs at %d", firstDiffAt(p.mem, want))
	}
	// Read it back into three pieces, and key 2's half.
	got := make([]byte, len(src))
	giov := [][]byte{got[:7], got[7 : 500<<10], got[500<<10:]}
	if e, ee := p.do(t, true, provider.Msg{IOV: giov, RMA: rma, Context: "r"}); ee != nil || e.OpContext != "r" {
		t.Fatalf("read: %+v %+v", e, ee)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("read back differs at %d", firstDiffAt(got, src))
	}
	ro := make([]byte, size)
	if _, ee := p.do(t, true, provider.Msg{Buf: ro, RMAOne: provider.RMAIOV{Addr: 0, Len: size, Key: 2}}); ee != nil ||
		!bytes.Equal(ro, p.mem[size:]) {
		t.Fatalf("read of key 2: %+v, equal %v", ee, bytes.Equal(ro, p.mem[size:]))
	}
	if m := p.moves(); m != 3 {
		t.Fatalf("%d CMA moves, want 3", m)
	}
	// Refusals: nothing moves, nothing changes.
	snap := bytes.Clone(p.mem)
	big := patternBytes(256<<10, 42)
	for _, tc := range []struct {
		name string
		read bool
		rma  provider.RMAIOV
		want provider.Errno
	}{
		{"write, unknown key", false, provider.RMAIOV{Addr: 0, Len: uint64(len(big)), Key: 9}, provider.EKEYREJECTED},
		{"write, read-only region", false, provider.RMAIOV{Addr: 0, Len: uint64(len(big)), Key: 2}, provider.EACCES},
		{"write, past the end", false, provider.RMAIOV{Addr: size - 1000, Len: uint64(len(big)), Key: 1}, provider.EINVAL},
		{"read, unknown key", true, provider.RMAIOV{Addr: 0, Len: uint64(len(big)), Key: 9}, provider.EKEYREJECTED},
		{"read, past the end", true, provider.RMAIOV{Addr: size - 1000, Len: uint64(len(big)), Key: 2}, provider.EINVAL},
	} {
		buf := bytes.Clone(big)
		_, ee := p.do(t, tc.read, provider.Msg{Buf: buf, RMAOne: tc.rma, Context: tc.name})
		if ee == nil || ee.OpContext != tc.name {
			t.Fatalf("%s: no error completion (%+v)", tc.name, ee)
		}
		if tc.want == provider.EINVAL && ee.Err != provider.EINVAL && ee.Err != provider.EACCES {
			t.Fatalf("%s: %v", tc.name, ee.Err)
		} else if tc.want != provider.EINVAL && ee.Err != tc.want {
			t.Fatalf("%s: %v, want %v", tc.name, ee.Err, tc.want)
		}
		if !bytes.Equal(p.mem, snap) {
			t.Fatalf("%s: target memory changed", tc.name)
		}
		if tc.read && !bytes.Equal(buf, big) {
			t.Fatalf("%s: the initiator's buffer changed", tc.name)
		}
	}
	if m := p.moves(); m != 3 {
		t.Fatalf("%d CMA moves after refusals, want 3", m)
	}
}

// TestRMACMARefusedFallsBack: a target that cannot read the initiator
// answers "use segments": the operation goes again through bounce
// buffers and completes with the right data, and the initiator sends
// its later large operations to that target segmented at once.
func TestRMACMARefusedFallsBack(t *testing.T) {
	const size = 512 << 10
	p := newRMACMAPair(t, size)
	p.b.rxMu.Lock()
	p.b.cma.refused = map[uint64]bool{p.a.id: true}
	p.b.rxMu.Unlock()
	src := patternBytes(size, 43)
	for round := range 2 {
		if _, ee := p.do(t, false, provider.Msg{Buf: src, RMAOne: provider.RMAIOV{Addr: 0, Len: size, Key: 1}}); ee != nil {
			t.Fatalf("round %d: write: %+v", round, ee)
		}
		if !bytes.Equal(p.mem[:size], src) {
			t.Fatalf("round %d: written memory differs", round)
		}
		got := make([]byte, size)
		if _, ee := p.do(t, true, provider.Msg{Buf: got, RMAOne: provider.RMAIOV{Addr: 0, Len: size, Key: 2}}); ee != nil {
			t.Fatalf("round %d: read: %+v", round, ee)
		}
		if !bytes.Equal(got, p.mem[size:]) {
			t.Fatalf("round %d: read data differs", round)
		}
	}
	if m := p.moves(); m != 0 {
		t.Fatalf("%d CMA moves for a refused initiator", m)
	}
	p.a.rma.mu.Lock()
	refused := p.a.rma.cmaRefused[p.b.id]
	p.a.rma.mu.Unlock()
	if ok, _ := sys.CMAAvailable(); ok && !refused {
		t.Fatal("the initiator did not remember the refusal")
	}
}

// TestRMACMABadRequests: CMA requests with a damaged CMA section, or an
// id word that does not read back as the sender's id, are answered with
// an error or a refusal and move nothing.
func TestRMACMABadRequests(t *testing.T) {
	ft := newFuzzTarget(t)
	id := ft.ep.id
	good := func(pid int, idAddr uint64, n int) []byte {
		b := make([]byte, rtsHeader+16*n)
		le := leb{b}
		le.u32(0, uint32(pid))
		le.u32(4, uint32(n))
		le.u64(8, idAddr)
		for i := 0; i < n; i++ {
			le.u64(rtsHeader+16*i, 0x1000)
			le.u64(rtsHeader+16*i+8, uint64(32/n))
		}
		return b
	}
	const f = shmring.FlagFirst | shmring.FlagLast | shmring.FlagCMA
	cmds := [][]byte{
		encodeReq(opWrite, f, id, 1, 1, []remoteIOV{{0, 32, 1}}, good(selfPid, 0, 1)),     // id word unreadable
		encodeReq(opWrite, f, id, 2, 1, []remoteIOV{{0, 32, 1}}, good(0, 0, 1)),           // bad pid
		encodeReq(opWrite, f, id, 3, 1, []remoteIOV{{0, 32, 1}}, good(selfPid, 0, 9)),     // too many iovs
		encodeReq(opWrite, f, id, 4, 1, []remoteIOV{{0, 32, 1}}, good(selfPid, 0, 1)[:8]), // short section
		encodeReq(opRead, f, id, 5, 1, []remoteIOV{{0, 32, 1}}, good(selfPid, 0, 2)),
		encodeReq(opRead, f, id, 6, 1, []remoteIOV{{0, 32, 2}}, good(-1, 0, 1)),
		encodeReq(opRead, shmring.FlagCMA, id, 7, 1, []remoteIOV{{0, 32, 1}}, good(selfPid, 0, 1)), // not single
	}
	before := bytes.Clone(ft.mem)
	for _, c := range cmds {
		ft.inject(t, c)
	}
	if !bytes.Equal(ft.mem, before) {
		t.Fatal("target memory changed")
	}
	ft.ep.rxMu.Lock()
	defer ft.ep.rxMu.Unlock()
	if ft.ep.cma.rmaMoves != 0 {
		t.Fatalf("%d CMA moves", ft.ep.cma.rmaMoves)
	}
}

type leb struct{ b []byte }

func (l leb) u32(off int, v uint32) {
	for i := range 4 {
		l.b[off+i] = byte(v >> (8 * i))
	}
}

func (l leb) u64(off int, v uint64) {
	for i := range 8 {
		l.b[off+i] = byte(v >> (8 * i))
	}
}

func firstDiffAt(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
