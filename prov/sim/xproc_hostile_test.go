package sim_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

// TestCrossProcessHostile: what arrives on an endpoint's socket is
// untrusted. Garbage, fragments out of order, and requests with a bad
// kind, operation, datatype, size, key or range are refused (an error
// answer, or dropped), never a panic; the endpoint then still serves a
// valid request. The test plays the other process with a raw socket.
func TestCrossProcessHostile(t *testing.T) {
	nw := newNetwork(t, sim.Config{CrossProcess: true})
	c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: 1, caps: fabric.CapRMA | fabric.CapAtomic})
	mem := make([]byte, 64)
	mr, err := c.dom.RegMR(mem, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, 0x33, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	name, _ := c.eps[0].Name()
	target, _ := sim.ID(name)
	sock := func(id uint64) string { return sim.SockName(nw.Name(), id) }
	if got, want := sock(0xab), fmt.Sprintf("@gofabric-sim/%s/%016x", nw.Name(), 0xab); got != want {
		t.Fatalf("socket name %q, want %q (package doc)", got, want)
	}
	const me = 0x1234
	us, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock(me), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer us.Close()
	to, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock(target), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer to.Close()
	send := func(m *sim.WireMessage) {
		t.Helper()
		if err := sim.WireAppendFrags(nil, me, sim.WireAppendMessage(nil, m), func(d []byte) error {
			_, err := to.Write(d)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// answer progresses the target until the answer to req arrives.
	buf := make([]byte, sim.WireMaxDatagram)
	answer := func(req uint64) sim.WireMessage {
		t.Helper()
		var r sim.WireReassembler
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			c.cqs[0].Read(nil)
			_ = us.SetReadDeadline(time.Now().Add(time.Millisecond))
			k, err := us.Read(buf)
			if err != nil {
				continue
			}
			_, msg, done, err := r.Add(buf[:k])
			if err != nil || !done || len(msg) == 0 {
				continue
			}
			var m sim.WireMessage
			if err := sim.WireParseMessage(msg, &m); err != nil {
				t.Fatalf("the endpoint sent a malformed message: %v", err)
			}
			if m.Req == req {
				m.Payload = append([]byte(nil), m.Payload...)
				return m
			}
		}
		t.Fatalf("no answer to request %d", req)
		return sim.WireMessage{}
	}
	// Garbage and broken fragments: ignored.
	for _, d := range [][]byte{{}, {1, 2, 3}, bytes.Repeat([]byte{0xff}, 100),
		sim.WireAppendFrag(nil, sim.WireFragHeader{Src: me, Total: sim.WireMaxChunk + 10, Offset: sim.WireMaxChunk}, make([]byte, 10)),
		sim.WireAppendFrag(nil, sim.WireFragHeader{Src: me, Total: 5}, []byte("abcde"))} {
		if _, err := to.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	iov := func(addr, n, key uint64) [sim.WireMaxRMA]sim.WireRMAIOV {
		return [sim.WireMaxRMA]sim.WireRMAIOV{{Addr: addr, Len: n, Key: key}}
	}
	atomicReq := func(req uint64, kind uint8, op, dt uint32, size uint32, payload []byte) *sim.WireMessage {
		return &sim.WireMessage{Kind: sim.WireKindRMA, Flags: sim.WireFlagReliable | sim.WireFlagAtomic, Req: req,
			Size: size, NRMA: 1, RMA: iov(0, uint64(size), 0x33), AtomicKind: kind, AtomicOp: op, Datatype: dt, Payload: payload}
	}
	u64 := uint32(fabric.DatatypeUint64)
	bad := []*sim.WireMessage{
		atomicReq(1, uint8(0), uint32(fabric.AtomicRead), u64, 8, nil),                                                                  // base FI_ATOMIC_READ
		atomicReq(2, 7, uint32(fabric.AtomicSum), u64, 8, make([]byte, 8)),                                                              // unknown kind
		atomicReq(3, 0, uint32(fabric.AtomicSum), 999, 8, make([]byte, 8)),                                                              // unknown datatype
		atomicReq(4, 0, uint32(fabric.AtomicSum), u64, 8, make([]byte, 3)),                                                              // short operand
		atomicReq(5, 2, uint32(fabric.AtomicCSwap), u64, 8, make([]byte, 8)),                                                            // compare without its operand
		atomicReq(6, 0, 1<<31, u64, 8, make([]byte, 8)),                                                                                 // unknown operation
		atomicReq(7, 0, uint32(fabric.AtomicSum), u64, 6, make([]byte, 6)),                                                              // not whole elements
		{Kind: sim.WireKindRMA, Flags: sim.WireFlagReliable | sim.WireFlagRead, Req: 8, Size: 8, NRMA: 1, RMA: iov(0, 8, 0x34)},         // wrong key
		{Kind: sim.WireKindRMA, Flags: sim.WireFlagReliable, Req: 9, Size: 8, NRMA: 1, RMA: iov(60, 8, 0x33), Payload: make([]byte, 8)}, // out of range
	}
	for _, m := range bad {
		send(m)
		if a := answer(m.Req); a.Kind != sim.WireKindAnswer || a.Status == 0 {
			t.Errorf("request %d: answer %+v, want an error", m.Req, a)
		}
	}
	if !bytes.Equal(mem, make([]byte, 64)) {
		t.Fatalf("refused requests changed memory: % x", mem)
	}
	// Still serving.
	send(atomicReq(10, 0, uint32(fabric.AtomicSum), u64, 8, binary.LittleEndian.AppendUint64(nil, 9)))
	if a := answer(10); a.Status != 0 || binary.LittleEndian.Uint64(mem) != 9 {
		t.Fatalf("a valid atomic: %+v, memory % x", a, mem[:8])
	}
	send(&sim.WireMessage{Kind: sim.WireKindRMA, Flags: sim.WireFlagReliable | sim.WireFlagRead, Req: 11, Size: 8, NRMA: 1, RMA: iov(0, 8, 0x33)})
	if a := answer(11); a.Status != 0 || a.Flags&sim.WireFlagFetch == 0 || binary.LittleEndian.Uint64(a.Payload) != 9 {
		t.Fatalf("a valid read: %+v", a)
	}
	// A request to an endpoint not enabled yet is answered in error, not
	// left waiting.
	idle, err := c.dom.OpenEndpoint(c.info)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idleName, _ := idle.Name()
	idleID, _ := sim.ID(idleName)
	toIdle, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock(idleID), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer toIdle.Close()
	req := sim.WireAppendMessage(nil, &sim.WireMessage{Kind: sim.WireKindRMA, Flags: sim.WireFlagReliable | sim.WireFlagRead,
		Req: 12, Size: 8, NRMA: 1, RMA: iov(0, 8, 0x33)})
	if err := sim.WireAppendFrags(nil, me, req, func(d []byte) error { _, err := toIdle.Write(d); return err }); err != nil {
		t.Fatal(err)
	}
	if a := answer(12); a.Kind != sim.WireKindAnswer || a.Status == 0 {
		t.Fatalf("a request to an endpoint not enabled: %+v, want an error answer", a)
	}
	// A forged reply to nothing is ignored.
	send(&sim.WireMessage{Kind: sim.WireKindAck, Req: 99})
	c.cqs[0].Read(nil)
}
