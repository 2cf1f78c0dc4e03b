package tcp_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// The frames of these tests are written by hand, from the layouts of
// ../shared/spec/libfabric-1.17-wire.md §4-5 (an external test may not use
// the internal codecs, and a hostile peer would not either).

var le = binary.LittleEndian

// rxmHdr is the 64-byte rxm header, as a raw peer fills it.
type rxmHdr struct {
	typ      uint8
	segSize  uint16
	segNo    uint32
	msgID    uint64
	ctrlData uint64
	op       uint8
	size     uint64
	data     uint64
	tag      uint64
}

const (
	rxmTypeSAR, rxmTypeAtomic, rxmTypeAtomicResp, rxmTypeGoRMAError = 1, 4, 5, 0x47
	rxmOpAtomic, rxmOpFetch                                         = 6, 7
	segFirst, segMiddle                                             = 1, 2
	atomicTableSize                                                 = 96
	tcpOpWrite                                                      = 4
)

func (h *rxmHdr) bytes() []byte {
	b := make([]byte, 64)
	b[0], b[1] = 4, h.typ
	le.PutUint16(b[2:], h.segSize)
	le.PutUint32(b[4:], h.segNo)
	le.PutUint64(b[16:], h.msgID)
	le.PutUint64(b[24:], h.ctrlData)
	b[32], b[34] = 2, h.op
	le.PutUint64(b[40:], h.size)
	le.PutUint64(b[48:], h.data)
	le.PutUint64(b[56:], h.tag)
	return b
}

// tcpHdr returns a tcp frame header: op, flags, the RMA regions
// {addr, len, key} and the payload length.
func tcpHdr(op uint8, regions [][3]uint64, payload int) []byte {
	hs := 16 + 24*len(regions)
	b := make([]byte, hs)
	b[0], b[1], b[5], b[6] = 3, op, uint8(len(regions)), uint8(hs)
	le.PutUint64(b[8:], uint64(hs+payload))
	for i, r := range regions {
		le.PutUint64(b[16+24*i:], r[0])
		le.PutUint64(b[24+24*i:], r[1])
		le.PutUint64(b[32+24*i:], r[2])
	}
	return b
}

func atomicTag(dt, op, n uint8) uint64 { return uint64(dt) | uint64(op)<<8 | uint64(n)<<16 }

// rawRDMPeer connects to an RDM endpoint's listener as a hand-written rxm
// peer would (valid connect data, pid 1, index 0, no GoMarker) and returns
// the socket once accepted.
func rawRDMPeer(t *testing.T, name []byte) net.Conn {
	t.Helper()
	raw, err := net.DialTimeout("tcp4", fmt.Sprintf("127.0.0.1:%d", listenPort(name)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	// tcp connect request (version 3, type 0, BE data length, endianness
	// probe 1) with rxm connect data (version 1, little endian, ctrl 4,
	// op 3, port 1, flow control off, eager limit 16384, rx size 4096,
	// conn id pid 1 / index 0).
	req := make([]byte, 32+24)
	req[0] = 3
	binary.BigEndian.PutUint16(req[2:], 24)
	le.PutUint64(req[24:], 1)
	cd := req[32:]
	cd[0], cd[1], cd[2], cd[3], cd[6] = 1, 2, 4, 3, 2
	le.PutUint16(cd[4:], 1)
	le.PutUint32(cd[8:], 16384)
	le.PutUint32(cd[12:], 4096)
	le.PutUint64(cd[16:], 1<<32)
	if _, err := raw.Write(req); err != nil {
		t.Fatal(err)
	}
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	resp := make([]byte, 32+16)
	if _, err := io.ReadFull(raw, resp); err != nil {
		t.Fatalf("accept: %v", err)
	}
	if resp[1] != 1 || resp[32+13] != 0 {
		t.Fatalf("accept %x (a raw peer must not be told of the Go extension)", resp)
	}
	return raw
}

// rxmFrame encodes a tcp op 0 frame with rxm header rh and body.
func rxmFrame(rh *rxmHdr, body []byte) []byte {
	b := append(tcpHdr(0, nil, 64+len(body)), rh.bytes()...)
	return append(b, body...)
}

// atomicBody is an atomic request's target table {addr, count, key} and
// operands.
func atomicBody(ioc [][3]uint64, operands ...[]byte) []byte {
	b := make([]byte, atomicTableSize)
	for i, v := range ioc {
		le.PutUint64(b[24*i:], v[0])
		le.PutUint64(b[24*i+8:], v[1])
		le.PutUint64(b[24*i+16:], v[2])
	}
	for _, o := range operands {
		b = append(b, o...)
	}
	return b
}

// waitClosed waits until the endpoint has closed raw, progressing e.
func waitClosed(t *testing.T, raw net.Conn, e *rdmOpsEnv) {
	t.Helper()
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, raw)
		close(closed)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.pump()
		select {
		case <-closed:
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("hostile connection still open after 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRDMHostileOps: malformed SAR segments, atomic requests and responses,
// RMA frames and ACKs from a raw peer end that peer's connection, leave
// registered memory untouched, and the endpoint keeps serving others.
func TestRDMHostileOps(t *testing.T) {
	b := openRDMOps(t)
	mem := make([]byte, 64)
	for i := range mem {
		mem[i] = byte(i)
	}
	keep := append([]byte(nil), mem...)
	const key = 0x99
	mr, err := b.dom.RegMR(mem, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Close() })
	u64, sum := uint8(fabric.DatatypeUint64), uint8(fabric.AtomicSum)
	eight := make([]byte, 8)
	write := func(regions [][3]uint64, payload int) []byte {
		return append(tcpHdr(tcpOpWrite, regions, payload), make([]byte, payload)...)
	}
	ack := make([]byte, 16)
	ack[0], ack[4], ack[6], ack[8] = 3, 2, 16, 16
	one := [][3]uint64{{0, 1, key}}
	cases := []struct {
		name  string
		frame []byte
	}{
		{"SAR middle segment of no message", rxmFrame(&rxmHdr{typ: rxmTypeSAR, segSize: 8, segNo: 1, msgID: 5,
			ctrlData: segMiddle, size: 100}, eight)},
		{"SAR segment size not its length", rxmFrame(&rxmHdr{typ: rxmTypeSAR, segSize: 9, msgID: 5,
			ctrlData: segFirst, size: 100}, eight)},
		{"SAR message of 2^62 bytes", rxmFrame(&rxmHdr{typ: rxmTypeSAR, segSize: 8, msgID: 5, ctrlData: segFirst,
			size: 1 << 62}, eight)},
		{"SAR segment type 0", rxmFrame(&rxmHdr{typ: rxmTypeSAR, segSize: 8, msgID: 5, size: 100}, eight)},
		{"atomic with 0 targets", rxmFrame(&rxmHdr{typ: rxmTypeAtomic, op: rxmOpAtomic, size: atomicTableSize + 8,
			tag: atomicTag(u64, sum, 0)}, atomicBody(nil, eight))},
		{"atomic with 5 targets", rxmFrame(&rxmHdr{typ: rxmTypeAtomic, op: rxmOpAtomic, size: atomicTableSize + 8,
			tag: atomicTag(u64, sum, 5)}, atomicBody(one, eight))},
		{"atomic operand shorter than its targets", rxmFrame(&rxmHdr{typ: rxmTypeAtomic, op: rxmOpAtomic,
			size: atomicTableSize + 8, tag: atomicTag(u64, sum, 1)}, atomicBody([][3]uint64{{0, 2, key}}, eight))},
		{"atomic with op.size not its length", rxmFrame(&rxmHdr{typ: rxmTypeAtomic, op: rxmOpAtomic, size: 7,
			tag: atomicTag(u64, sum, 1)}, atomicBody(one, eight))},
		{"atomic with op 9", rxmFrame(&rxmHdr{typ: rxmTypeAtomic, op: 9, size: atomicTableSize + 8,
			tag: atomicTag(u64, sum, 1)}, atomicBody(one, eight))},
		{"atomic response for no request", rxmFrame(&rxmHdr{typ: rxmTypeAtomicResp, op: rxmOpFetch, msgID: 77,
			size: 8}, make([]byte, 8))},
		{"Go RMA error from a raw peer", rxmFrame(&rxmHdr{typ: rxmTypeGoRMAError, op: tcpOpWrite, data: 13}, nil)},
		{"RMA write regions not adding up", write([][3]uint64{{0, 8, key}}, 16)},
		{"RMA write with a wrong key", write([][3]uint64{{0, 8, key + 1}}, 8)},
		{"RMA write past the region", write([][3]uint64{{60, 8, key}}, 8)},
		{"ACK for no operation", ack},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := rawRDMPeer(t, b.name)
			if _, err := raw.Write(c.frame); err != nil {
				t.Fatal(err)
			}
			waitClosed(t, raw, b)
		})
	}
	for i := range mem {
		if mem[i] != keep[i] {
			t.Fatalf("registered memory changed at %d", i)
		}
	}
	// A good peer still gets through, and so does a well-formed atomic
	// with a wrong key from a raw peer: answered with -FI_EACCES, the
	// connection stays.
	raw := rawRDMPeer(t, b.name)
	req := rxmFrame(&rxmHdr{typ: rxmTypeAtomic, op: rxmOpFetch, msgID: 42, size: atomicTableSize + 8,
		tag: atomicTag(u64, sum, 1)}, atomicBody([][3]uint64{{0, 1, key + 1}}, eight))
	if _, err := raw.Write(req); err != nil {
		t.Fatal(err)
	}
	rsp := make([]byte, 16+64+8)
	got := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(raw, rsp)
		got <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for waiting := true; waiting; {
		b.pump()
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
			waiting = false
		default:
			if time.Now().After(deadline) {
				t.Fatal("no atomic response within 5 s")
			}
		}
	}
	// tcp frame of 88 bytes; rxm type 5, op 7, msg_id 42, op.size 8;
	// status -FI_EACCES and result length 0, both big-endian.
	r := rsp[16:]
	if le.Uint64(rsp[8:]) != 88 || r[1] != rxmTypeAtomicResp || r[34] != rxmOpFetch || le.Uint64(r[16:]) != 42 ||
		le.Uint64(r[40:]) != 8 || int32(binary.BigEndian.Uint32(r[64:])) != -13 || binary.BigEndian.Uint32(r[68:]) != 0 {
		t.Fatalf("atomic response % x; want type 5, op 7, msg_id 42, status -FI_EACCES", rsp)
	}
	a := openRDMOps(t)
	ab := a.insert(b.name)
	rbuf := make([]byte, 16)
	rctx, sctx := new(int), new(int)
	b.post("fi_recv", func() error { return b.ep.Recv(rbuf, nil, fabric.AddrUnspec, rctx) })
	a.post("fi_send", func() error { return a.ep.Send([]byte("still here"), nil, ab, sctx) })
	for _, ok := b.done[rctx]; !ok; _, ok = b.done[rctx] {
		a.pump()
		b.pump()
	}
	if string(rbuf[:10]) != "still here" {
		t.Fatalf("got %q", rbuf)
	}
}
