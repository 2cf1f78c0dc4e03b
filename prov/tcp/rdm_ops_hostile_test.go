package tcp_test

import (
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
)

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
	cd := rxmwire.AppendConnect(nil, &rxmwire.Connect{Port: 1, FlowCtrl: rxmwire.FlowCtrlPeerOff,
		EagerLimit: rxmwire.EagerLimit, RxSize: rxmwire.RxSize, ConnID: rxmwire.ConnID(1, 0)})
	req, err := tcpwire.AppendCM(nil, tcpwire.CMConnReq, cd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Write(req); err != nil {
		t.Fatal(err)
	}
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	resp := make([]byte, tcpwire.CMHeaderSize+rxmwire.AcceptSize)
	if _, err := io.ReadFull(raw, resp); err != nil {
		t.Fatalf("accept: %v", err)
	}
	if resp[1] != tcpwire.CMConnResp || resp[tcpwire.CMHeaderSize+13] != 0 {
		t.Fatalf("accept %x (a raw peer must not be told of the Go extension)", resp)
	}
	return raw
}

// rxmFrame encodes a tcp op 0 frame with rxm header rh and body.
func rxmFrame(rh *rxmwire.Header, body []byte) []byte {
	h := tcpwire.Header{Op: tcpwire.OpMsg}
	h.SetPayload(uint64(rxmwire.HeaderSize + len(body)))
	b := tcpwire.AppendHeader(nil, &h, false)
	var hb [rxmwire.HeaderSize]byte
	rh.Put(hb[:])
	return append(append(b, hb[:]...), body...)
}

func atomicBody(ioc []rxmwire.AtomicIOC, operands ...[]byte) []byte {
	b := make([]byte, rxmwire.AtomicReqSize)
	rxmwire.PutAtomicIOC(b, ioc)
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
	u64 := uint64(fabric.DatatypeUint64)
	sum := uint64(fabric.AtomicSum)
	eight := make([]byte, 8)
	write := func(regions []tcpwire.RMAIOV, payload int) []byte {
		h := tcpwire.Header{Op: tcpwire.OpWrite, RMACount: uint8(len(regions))}
		copy(h.RMA[:], regions)
		h.SetPayload(uint64(payload))
		return append(tcpwire.AppendHeader(nil, &h, false), make([]byte, payload)...)
	}
	cases := []struct {
		name  string
		frame []byte
	}{
		{"SAR middle segment of no message", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeSAR, SegSize: 8, SegNo: 1,
			MsgID: 5, CtrlData: rxmwire.SegMiddle, Size: 100}, eight)},
		{"SAR segment size not its length", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeSAR, SegSize: 9,
			MsgID: 5, CtrlData: rxmwire.SegFirst, Size: 100}, eight)},
		{"SAR message of 2^62 bytes", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeSAR, SegSize: 8,
			MsgID: 5, CtrlData: rxmwire.SegFirst, Size: 1 << 62}, eight)},
		{"SAR segment type 0", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeSAR, SegSize: 8,
			MsgID: 5, CtrlData: 0, Size: 100}, eight)},
		{"atomic with 0 targets", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeAtomic, Op: rxmwire.OpAtomic,
			Size: rxmwire.AtomicReqSize + 8, Tag: rxmwire.AtomicTag(uint8(u64), uint8(sum), 0)},
			atomicBody(nil, eight))},
		{"atomic with 5 targets", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeAtomic, Op: rxmwire.OpAtomic,
			Size: rxmwire.AtomicReqSize + 8, Tag: rxmwire.AtomicTag(uint8(u64), uint8(sum), 5)},
			atomicBody([]rxmwire.AtomicIOC{{Count: 1, Key: key}}, eight))},
		{"atomic operand shorter than its targets", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeAtomic,
			Op: rxmwire.OpAtomic, Size: rxmwire.AtomicReqSize + 8, Tag: rxmwire.AtomicTag(uint8(u64), uint8(sum), 1)},
			atomicBody([]rxmwire.AtomicIOC{{Count: 2, Key: key}}, eight))},
		{"atomic with op.size not its length", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeAtomic,
			Op: rxmwire.OpAtomic, Size: 7, Tag: rxmwire.AtomicTag(uint8(u64), uint8(sum), 1)},
			atomicBody([]rxmwire.AtomicIOC{{Count: 1, Key: key}}, eight))},
		{"atomic with op 9", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeAtomic, Op: 9,
			Size: rxmwire.AtomicReqSize + 8, Tag: rxmwire.AtomicTag(uint8(u64), uint8(sum), 1)},
			atomicBody([]rxmwire.AtomicIOC{{Count: 1, Key: key}}, eight))},
		{"atomic response for no request", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeAtomicResp,
			Op: rxmwire.OpAtomicFetch, MsgID: 77, Size: 8}, make([]byte, 8))},
		{"Go RMA error from a raw peer", rxmFrame(&rxmwire.Header{Type: rxmwire.TypeGoRMAError,
			Op: tcpwire.OpWrite, Data: 13}, nil)},
		{"RMA write regions not adding up", write([]tcpwire.RMAIOV{{Len: 8, Key: key}}, 16)},
		{"RMA write with a wrong key", write([]tcpwire.RMAIOV{{Len: 8, Key: key + 1}}, 8)},
		{"RMA write past the region", write([]tcpwire.RMAIOV{{Addr: 60, Len: 8, Key: key}}, 8)},
		{"ACK for no operation", tcpwire.AppendHeader(nil, func() *tcpwire.Header { h := tcpwire.ACK(); return &h }(), false)},
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
	req := rxmFrame(&rxmwire.Header{Type: rxmwire.TypeAtomic, Op: rxmwire.OpAtomicFetch, MsgID: 42,
		Size: rxmwire.AtomicReqSize + 8, Tag: rxmwire.AtomicTag(uint8(u64), uint8(sum), 1)},
		atomicBody([]rxmwire.AtomicIOC{{Count: 1, Key: key + 1}}, eight))
	if _, err := raw.Write(req); err != nil {
		t.Fatal(err)
	}
	rsp := make([]byte, tcpwire.BaseHeaderSize+rxmwire.HeaderSize+rxmwire.AtomicRespSize)
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
	var rh rxmwire.Header
	if err := rh.Parse(rsp[tcpwire.BaseHeaderSize:]); err != nil {
		t.Fatal(err)
	}
	st, res, err := rxmwire.ParseAtomicResp(rsp[tcpwire.BaseHeaderSize+rxmwire.HeaderSize:])
	if rh.Type != rxmwire.TypeAtomicResp || rh.MsgID != 42 || rh.Op != rxmwire.OpAtomicFetch || err != nil ||
		st != -13 || len(res) != 0 {
		t.Fatalf("response %+v status %d result %d %v; want type 5, msg_id 42, -FI_EACCES", rh, st, len(res), err)
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
