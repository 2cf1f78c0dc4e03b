package shm

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/mrkey"
	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

// noAV is an AV with nothing in it.
type noAV struct{}

func (noAV) Lookup(provider.Addr) []byte  { return nil }
func (noAV) Reverse([]byte) provider.Addr { return provider.AddrNotAvail }

// fuzzTarget is an enabled endpoint exposing mem[64:128] (key 1, remote
// read and write) and mem[128:192] (key 2, remote read only), with
// canaries around them.
type fuzzTarget struct {
	ep  *endpoint
	cqs [2]*cq.CQ
	mem []byte
	ro  []byte // what key 2's bytes must stay
}

func newFuzzTarget(tb testing.TB) *fuzzTarget {
	tb.Helper()
	ep, err := newEndpoint(&domain{}, baseInfo(nil))
	if err != nil {
		tb.Fatal(err)
	}
	txcq, _ := cq.New(cq.Config{})
	rxcq, _ := cq.New(cq.Config{})
	mr := mrkey.New(mrkey.Config{})
	ft := &fuzzTarget{ep: ep, mem: bytes.Repeat([]byte{0xcc}, 256), cqs: [2]*cq.CQ{txcq, rxcq}}
	if _, err := mr.Register([][]byte{ft.mem[64:128]}, provider.FlagRemoteRead|provider.FlagRemoteWrite, 0, 1, true); err != nil {
		tb.Fatal(err)
	}
	if _, err := mr.Register([][]byte{ft.mem[128:192]}, provider.FlagRemoteRead, 0, 2, true); err != nil {
		tb.Fatal(err)
	}
	ft.ro = bytes.Clone(ft.mem[128:192])
	if err := ep.Enable(&provider.Resources{TxCQ: txcq, RxCQ: rxcq, AV: noAV{}, SRX: srx.New(srx.Config{}), MR: mr}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ep.Close() })
	return ft
}

// inject writes cmd (command bytes, as a peer would) into the
// endpoint's own queue and lets it progress.
func (ft *fuzzTarget) inject(t *testing.T, cmd []byte) {
	pos, slot, ok := ft.ep.own.Reserve()
	if !ok {
		t.Fatalf("queue full after draining (answers held %d, rma pending %d, rx full %v)", ft.ep.rma.respN.Load(), ft.ep.rma.pending.Load(), ft.ep.rxFull.Full())
	}
	clear(slot)
	copy(slot, cmd)
	ft.ep.own.Publish(pos)
	ents := make([]provider.CQEntry, 8)
	var ee provider.CQErrEntry
	for range 4 {
		ft.ep.Progress()
		// Completions the commands caused (remote CQ data, answers to
		// operations of nobody) are read, so that CQ room never holds
		// a command back.
		for _, q := range ft.cqs {
			for {
				n, _ := q.Read(ents)
				if n == 0 && q.ReadErr(&ee) != nil {
					break
				}
			}
		}
	}
	if ft.ep.own.Pending() {
		// Held back (no room for answers): the only reason allowed.
		if !ft.ep.respFull() {
			t.Fatal("a command stays queued with room for answers")
		}
	}
	if !bytes.Equal(ft.mem[:64], bytes.Repeat([]byte{0xcc}, 64)) ||
		!bytes.Equal(ft.mem[192:], bytes.Repeat([]byte{0xcc}, 64)) {
		t.Fatalf("memory outside the registered regions changed: %x", ft.mem)
	}
	if !bytes.Equal(ft.mem[128:192], ft.ro) {
		t.Fatal("a region without FI_REMOTE_WRITE changed")
	}
}

// encodeReq encodes a request command with a remote iov table and data.
func encodeReq(code uint8, flags uint8, src, msgID uint64, aux uint32, tbl []remoteIOV, data []byte) []byte {
	cmd := make([]byte, SlotSize-8)
	payload := make([]byte, len(tbl)*rmaIOVSize+len(data))
	putRemote(payload, tbl)
	copy(payload[len(tbl)*rmaIOVSize:], data)
	c := shmring.Cmd{Op: code, Flags: flags | shmring.FlagInline, Src: src, MsgID: msgID, Aux: aux,
		Size: uint64(len(payload))}
	shmring.Encode(cmd, &c, payload)
	return cmd
}

// FuzzRMACommands drives the target and answer paths of the RMA and
// atomic commands with arbitrary command bytes (the operation forced into
// the RMA range): no panic, no write outside the registered regions or
// into a region without FI_REMOTE_WRITE, no command held back without
// cause.
func FuzzRMACommands(f *testing.F) {
	ft := newFuzzTarget(f)
	id := ft.ep.id
	one := binary.LittleEndian.AppendUint64(nil, 1)
	seeds := [][]byte{
		encodeReq(opWrite, shmring.FlagFirst|shmring.FlagLast, id, 7, 1, []remoteIOV{{0, 8, 1}}, one),
		encodeReq(opWrite, shmring.FlagFirst|shmring.FlagLast, id, 7, 1, []remoteIOV{{0, 8, 2}}, one),
		encodeReq(opWrite, shmring.FlagFirst|shmring.FlagLast|shmring.FlagCQData, id, 7, 2,
			[]remoteIOV{{0, 4, 1}, {60, 4, 1}}, one),
		encodeReq(opWrite, shmring.FlagFirst, id, 8, 1, []remoteIOV{{0, 16, 1}}, one),
		encodeReq(opWrite, shmring.FlagLast, id, 8, 0, nil, one),
		encodeReq(opRead, 0, id, 9, 1, []remoteIOV{{8, 32, 1}}, nil),
		encodeReq(opRead, 0, id, 9, 1, []remoteIOV{{8, 64, 2}}, nil),
		encodeReq(opAtomic, 0, id, 10, atomicAux(1, provider.AtomicBase, provider.AtomicSum, provider.DatatypeUint64),
			[]remoteIOV{{0, 1, 1}}, one),
		encodeReq(opAtomic, 0, id, 11, atomicAux(1, provider.AtomicCompare, provider.AtomicCSwap,
			provider.DatatypeUint64), []remoteIOV{{0, 1, 1}}, append(bytes.Clone(one), one...)),
		encodeReq(opAtomic, 0, id, 12, atomicAux(1, provider.AtomicFetch, provider.AtomicRead,
			provider.DatatypeUint32), []remoteIOV{{0, 16, 2}}, nil),
		encodeReq(opAtomicResp, shmring.FlagLast, id, 1<<16|1, 0, nil, one),
		encodeReq(opWriteAck, shmring.FlagLast, id, 3, 0, nil, nil),
		// CMA requests (rma_cma.go) naming no readable process.
		encodeReq(opWrite, shmring.FlagFirst|shmring.FlagLast|shmring.FlagCMA, id, 13, 1, []remoteIOV{{0, 32, 1}},
			cmaSectionForTest(0, 0, 0x1000, 32)),
		encodeReq(opRead, shmring.FlagFirst|shmring.FlagLast|shmring.FlagCMA, id, 14, 1, []remoteIOV{{8, 32, 1}},
			cmaSectionForTest(0, 0, 0x1000, 32)),
		encodeReq(opReadResp, shmring.FlagLast|shmring.FlagCMA, id, 1<<16|2, 0, nil, nil),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd []byte) {
		if len(cmd) == 0 {
			return
		}
		cmd = bytes.Clone(cmd)
		cmd[0] = opWrite + cmd[0]%6
		if len(cmd) >= 16 {
			// The sender is this endpoint itself, so that answers are
			// pushed and handled too, or one that does not exist (not
			// an id of another fuzzing process found in the corpus:
			// one that stopped draining its queue holds answers back,
			// and with them, past maxResponses, the target's queue).
			src := uint64(0)
			if cmd[15]&0x80 != 0 {
				src = id
			}
			binary.LittleEndian.PutUint64(cmd[8:], src)
		}
		ft.inject(t, cmd)
	})
}

func TestParseRemoteBounds(t *testing.T) {
	var tbl [RMAIOVLimit]remoteIOV
	b := make([]byte, RMAIOVLimit*rmaIOVSize+3)
	for n := -1; n <= RMAIOVLimit+1; n++ {
		rest, ok := parseRemote(b, n, &tbl)
		if want := n >= 1 && n <= RMAIOVLimit; ok != want || ok && len(rest) != len(b)-n*rmaIOVSize {
			t.Errorf("parseRemote(%d iovs): ok %v rest %d", n, ok, len(rest))
		}
	}
	if _, ok := parseRemote(b[:rmaIOVSize-1], 1, &tbl); ok {
		t.Error("parseRemote accepted a short table")
	}
	for _, aux := range []uint32{0, atomicAux(0, provider.AtomicBase, provider.AtomicSum, provider.DatatypeUint64),
		atomicAux(5, provider.AtomicBase, provider.AtomicSum, provider.DatatypeUint64),
		atomicAux(1, provider.AtomicBase, provider.AtomicRead, provider.DatatypeUint64),
		atomicAux(1, provider.AtomicFetch, provider.AtomicSum, provider.DatatypeLongDouble),
		atomicAux(1, provider.AtomicKind(3), provider.AtomicSum, provider.DatatypeUint64)} {
		if _, ok := parseAtomicAux(aux); ok {
			t.Errorf("parseAtomicAux(%#x) accepted", aux)
		}
	}
	if d, ok := parseAtomicAux(atomicAux(2, provider.AtomicCompare, provider.AtomicCSwap, provider.DatatypeInt16)); !ok ||
		d.n != 2 || d.size != 2 || d.operandBytes(3) != 12 {
		t.Errorf("parseAtomicAux of a valid compare: %+v %v", d, ok)
	}
}

// oneAV is an AV holding one address, at fi_addr 0.
type oneAV struct{ name []byte }

func (a oneAV) Lookup(x provider.Addr) []byte {
	if x == 0 {
		return a.name
	}
	return nil
}
func (oneAV) Reverse([]byte) provider.Addr { return provider.AddrNotAvail }

// TestFailRMAPeer: the peer-death hook completes the operations towards
// a peer in error, queued ones and ones waiting for an answer alike.
func TestFailRMAPeer(t *testing.T) {
	target := newFuzzTarget(t)
	ep, err := newEndpoint(&domain{}, baseInfo(nil))
	if err != nil {
		t.Fatal(err)
	}
	txcq, _ := cq.New(cq.Config{})
	if err := ep.Enable(&provider.Resources{TxCQ: txcq, AV: oneAV{target.ep.name}, SRX: srx.New(srx.Config{}),
		MR: mrkey.New(mrkey.Config{})}); err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	buf := make([]byte, 8)
	const n = RingSlots + 10 // more than the target's queue holds: some wait to be pushed
	for i := range n {
		m := provider.Msg{Buf: buf, Context: i, Flags: provider.FlagCompletion, RMAOne: provider.RMAIOV{Len: 8, Key: 1}}
		if err := ep.Read(m); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if ep.rma.pending.Load() == 0 {
		t.Fatal("no read waits to be pushed")
	}
	p, _ := ep.peerFor(0)
	ep.failRMAPeer(p, provider.ECONNRESET)
	var ee provider.CQErrEntry
	for i := range n {
		if err := txcq.ReadErr(&ee); err != nil || ee.Err != provider.ECONNRESET {
			t.Fatalf("completion %d: %v %+v", i, err, ee)
		}
	}
	if got, _ := txcq.Read(make([]provider.CQEntry, 1)); got != 0 || ep.rma.pending.Load() != 0 {
		t.Fatalf("after failing the peer: %d more completions, %d queued", got, ep.rma.pending.Load())
	}
}

// cmaSectionForTest encodes the CMA part of a request: pid, id word
// address and one local range.
func cmaSectionForTest(pid uint32, idAddr, base, n uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, pid)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint64(b, idAddr)
	b = binary.LittleEndian.AppendUint64(b, base)
	return binary.LittleEndian.AppendUint64(b, n)
}
