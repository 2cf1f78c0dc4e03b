package tcp

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// rawPeer is a hand-driven TCP peer speaking the wire format directly.
type rawPeer struct {
	t    testing.TB
	conn net.Conn
}

// rawServer connects a node to a raw listening peer and completes the CM
// exchange (the raw peer accepts with accData).
func rawServer(t testing.TB, o opts, accData []byte) (*node, *rawPeer) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	info := loInfo(t, o)
	n := newNode(t, info, o)
	ap := ln.Addr().(*net.TCPAddr).AddrPort()
	if err := n.ep.Connect(appendSockaddr(nil, sockaddr{AP: ap}), []byte("req")); err != nil {
		t.Fatal(err)
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	p := &rawPeer{t: t, conn: c}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitLimit))
	var hdr [tcpwire.CMHeaderSize]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatal(err)
	}
	typ, dlen, probe, err := tcpwire.ParseCMHeader(hdr[:])
	if err != nil || typ != tcpwire.CMConnReq || dlen != 3 || probe != 1 {
		t.Fatalf("connreq %x: %v", hdr, err)
	}
	data := make([]byte, dlen)
	if _, err := io.ReadFull(c, data); err != nil || string(data) != "req" {
		t.Fatalf("connreq data %q %v", data, err)
	}
	b, _ := tcpwire.AppendCM(nil, tcpwire.CMConnResp, accData)
	p.write(b)
	ev := expectEvent(t, n.eq, provider.EventConnected)
	if string(ev.CMData) != string(accData) {
		t.Fatalf("accept data %q", ev.CMData)
	}
	return n, p
}

func (p *rawPeer) write(b []byte) {
	p.t.Helper()
	if _, err := p.conn.Write(b); err != nil {
		p.t.Fatal(err)
	}
}

func (p *rawPeer) readFrame() (tcpwire.Header, []byte) {
	p.t.Helper()
	p.conn.SetReadDeadline(time.Now().Add(waitLimit))
	var b [tcpwire.MaxHeaderSize]byte
	if _, err := io.ReadFull(p.conn, b[:16]); err != nil {
		p.t.Fatal(err)
	}
	hs, err := tcpwire.PeekHeaderSize(b[:16])
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := io.ReadFull(p.conn, b[16:hs]); err != nil {
		p.t.Fatal(err)
	}
	var h tcpwire.Header
	if err := tcpwire.ParseHeader(b[:hs], &h, false); err != nil {
		p.t.Fatal(err)
	}
	payload := make([]byte, h.PayloadLen())
	if _, err := io.ReadFull(p.conn, payload); err != nil {
		p.t.Fatal(err)
	}
	return h, payload
}

func frame(h tcpwire.Header, payload []byte) []byte {
	h.SetPayload(uint64(len(payload)))
	return append(tcpwire.AppendHeader(nil, &h, false), payload...)
}

func rawHeader(b ...byte) []byte {
	out := make([]byte, 16)
	copy(out, b)
	return out
}

func TestHostileFrames(t *testing.T) {
	le := binary.LittleEndian
	size := func(b []byte, v uint64) []byte { le.PutUint64(b[8:], v); return b }
	cases := []struct {
		name  string
		bytes []byte
	}{
		{"version", size(rawHeader(2, 0, 0, 0, 0, 0, 16), 16)},
		{"op5", size(rawHeader(3, 5, 0, 0, 0, 0, 16), 16)},
		{"hdr121", append(size(rawHeader(3, 0, 0, 0, 0, 0, 121), 121), make([]byte, 105)...)},
		{"hdr15", size(rawHeader(3, 0, 0, 0, 0, 0, 15), 16)},
		{"needcqdata", size(rawHeader(3, 0, 1, 0, 0, 0, 16), 16)},
		{"sizesmall", size(rawHeader(3, 0, 0, 0, 0, 0, 16), 8)},
		{"ack-nothing", size(rawHeader(3, 0, 0, 0, 2, 0, 16), 16)},
		{"ack-long", size(rawHeader(3, 0, 0, 0, 2, 0, 16), 17)},
		{"readrsp-nothing", append(size(rawHeader(3, 3, 0, 0, 0, 1, 16), 20), "data"...)},
		{"write-0iov", size(rawHeader(3, 4, 0, 0, 0, 0, 16), 16)},
		{"write-5iov", append(size(rawHeader(3, 4, 0, 0, 0, 5, 120), 120), make([]byte, 104)...)},
		{"write-lenmismatch", frame(tcpwire.Header{Op: tcpwire.OpWrite, RMACount: 1,
			RMA: [4]tcpwire.RMAIOV{{Addr: 0, Len: 100, Key: 1}}}, []byte("short"))},
		{"write-overflow", frame(tcpwire.Header{Op: tcpwire.OpWrite, RMACount: 2,
			RMA: [4]tcpwire.RMAIOV{{Addr: 0, Len: 1 << 63, Key: 1}, {Addr: 0, Len: 1 << 63, Key: 1}}}, nil)},
		{"write-nokey", frame(tcpwire.Header{Op: tcpwire.OpWrite, RMACount: 1,
			RMA: [4]tcpwire.RMAIOV{{Addr: 0, Len: 4, Key: 99}}}, []byte("abcd"))},
		{"readreq-payload", frame(tcpwire.Header{Op: tcpwire.OpReadReq, RMACount: 1,
			RMA: [4]tcpwire.RMAIOV{{Addr: 0, Len: 4, Key: 99}}}, []byte("abcd"))},
		{"readreq-huge", frame(tcpwire.Header{Op: tcpwire.OpReadReq, RMACount: 1,
			RMA: [4]tcpwire.RMAIOV{{Addr: 0, Len: 1 << 62, Key: 0xc0de}}}, nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, p := rawServer(t, opts{}, nil)
			mem := pattern(make([]byte, 64), 1)
			if _, err := n.mr.Register([][]byte{mem}, rmaAccess, 0, 0xc0de, true); err != nil {
				t.Fatal(err)
			}
			p.write(tc.bytes)
			ee := expectErr(t, n.rxCQ)
			if ee.Err == 0 {
				t.Fatalf("error entry %+v", ee)
			}
			expectEvent(t, n.eq, provider.EventShutdown)
			// The connection is gone: the raw peer reads end of stream.
			p.conn.SetReadDeadline(time.Now().Add(waitLimit))
			if _, err := p.conn.Read(make([]byte, 1)); err != io.EOF {
				t.Fatalf("raw peer read: %v", err)
			}
		})
	}
}

// TestHugeMessageThenClose: a frame announcing 2^62 bytes is truncated
// into the posted receive, then the peer goes away: the receive completes
// in error and FI_SHUTDOWN is reported.
func TestHugeMessageThenClose(t *testing.T) {
	n, p := rawServer(t, opts{}, []byte("acc"))
	got := make([]byte, 10)
	n.post(got, "r")
	h := tcpwire.Header{Op: tcpwire.OpMsg}
	h.SetPayload(1 << 62)
	p.write(append(tcpwire.AppendHeader(nil, &h, false), "0123456789abcdef"...))
	time.Sleep(10 * time.Millisecond)
	n.ep.Progress()
	p.conn.Close()
	ee := expectErr(t, n.rxCQ)
	if ee.OpContext != "r" || ee.Err != provider.ECONNRESET {
		t.Fatalf("receive error %+v", ee)
	}
	if string(got) != "0123456789" {
		t.Fatalf("placed %q", got)
	}
	expectEvent(t, n.eq, provider.EventShutdown)
}

// TestRandomFrames throws random bytes (after some valid frames) at an
// endpoint: it never panics, and it either stays connected or reports
// FI_SHUTDOWN.
func TestRandomFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	iters := 60
	if testing.Short() {
		iters = 10
	}
	for i := 0; i < iters; i++ {
		n, p := rawServer(t, opts{}, nil)
		mem := make([]byte, 4096)
		if _, err := n.mr.Register([][]byte{mem}, rmaAccess, 0, 0xc0de, true); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 4; k++ {
			n.post(make([]byte, rng.IntN(300)), k)
		}
		var b []byte
		b = append(b, frame(tcpwire.Header{Op: tcpwire.OpMsg, Flags: tcpwire.FlagCQData, CQData: 5}, []byte("ok"))...)
		garbage := make([]byte, rng.IntN(600))
		for j := range garbage {
			garbage[j] = byte(rng.Uint32())
		}
		if len(garbage) > 8 && rng.IntN(2) == 0 {
			garbage[0] = tcpwire.Version // a plausible header start
			garbage[1] = byte(rng.IntN(5))
			garbage[6] = byte(16 + 8*rng.IntN(4))
		}
		b = append(b, garbage...)
		p.write(b)
		deadline := time.Now().Add(20 * time.Millisecond)
		for time.Now().Before(deadline) {
			n.ep.Progress()
			var e [8]provider.CQEntry
			n.rxCQ.Read(e[:])
			n.txCQ.Read(e[:])
		}
		p.conn.Close()
		n.close()
	}
}

// TestRawPeerACKAndReadResponse checks what goes on the wire against the
// captured libfabric frames: a delivery-complete message is ACKed with the
// exact 16-byte ACK frame, and a read request is answered with op 3 and
// the copied rma_iov_cnt.
func TestRawPeerACKAndReadResponse(t *testing.T) {
	n, p := rawServer(t, opts{}, nil)
	mem := []byte("remote-memory-contents")
	if _, err := n.mr.Register([][]byte{mem}, rmaAccess, 0, 0xc0de, true); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 8)
	n.post(got, "r")
	p.write(frame(tcpwire.Header{Op: tcpwire.OpMsg, Flags: tcpwire.FlagDeliveryComplete}, []byte("01234567")))
	expectComp(t, n.rxCQ, "r", provider.FlagRecv|provider.FlagMsg)
	h, pl := p.readFrame()
	if !h.IsACK() || len(pl) != 0 {
		t.Fatalf("ack frame %+v", h)
	}
	p.write(frame(tcpwire.Header{Op: tcpwire.OpReadReq, RMACount: 1, RMA: [4]tcpwire.RMAIOV{{Addr: 0, Len: 16, Key: 0xc0de}}}, nil))
	// Manual progress: drive the endpoint until the response is out.
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(waitLimit)
		for time.Now().Before(deadline) {
			n.ep.Progress()
			if n.ep.tx.rspHead == len(n.ep.tx.rspq) && n.ep.rx.st == rxHdr {
				n.ep.mu.Lock()
				idle := n.ep.tx.wqLen == 0
				n.ep.mu.Unlock()
				if idle {
					return
				}
			}
		}
	}()
	<-done
	h, pl = p.readFrame()
	var want [tcpwire.MaxHeaderSize]byte
	wh := tcpwire.Header{Op: tcpwire.OpReadRsp, RMACount: 1}
	wh.SetPayload(16)
	k := tcpwire.PutHeader(want[:], &wh, false)
	var gotb [tcpwire.MaxHeaderSize]byte
	g := tcpwire.PutHeader(gotb[:], &h, false)
	if h.Op != tcpwire.OpReadRsp || string(pl) != "remote-memory-co" || string(gotb[:g]) != string(want[:k]) {
		t.Fatalf("read response %+v %q", h, pl)
	}
}

// TestByteSwappedPeer: a peer whose CM endianness probe says big-endian
// gets (and sends) data headers with flags, size and the 8-byte words
// byte-swapped, as libfabric does.
func TestByteSwappedPeer(t *testing.T) {
	info := loInfo(t, opts{})
	l := listen(t, info)
	a, _, _ := decodeSockaddr(l.name)
	c, err := net.Dial("tcp4", a.AP.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := &rawPeer{t: t, conn: c}
	req, _ := tcpwire.AppendCM(nil, tcpwire.CMConnReq, []byte("be"))
	binary.BigEndian.PutUint64(req[24:], 1)
	p.write(req)
	ev := expectEvent(t, l.eq, provider.EventConnReq)
	n := newNode(t, ev.Info, opts{})
	got := make([]byte, 16)
	n.post(got, "r")
	if err := n.ep.Accept(nil); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(waitLimit))
	var resp [tcpwire.CMHeaderSize]byte
	if _, err := io.ReadFull(c, resp[:]); err != nil {
		t.Fatal(err)
	}
	if typ, _, probe, err := tcpwire.ParseCMHeader(resp[:]); err != nil || typ != tcpwire.CMConnResp || probe != 1 {
		t.Fatalf("response %x", resp)
	}
	h := tcpwire.Header{Op: tcpwire.OpMsg, Flags: tcpwire.FlagCQData, CQData: 0x0102030405060708}
	h.SetPayload(5)
	p.write(append(tcpwire.AppendHeader(nil, &h, true), "hello"...))
	e := expectComp(t, n.rxCQ, "r", provider.FlagRecv|provider.FlagMsg|provider.FlagRemoteCQData)
	if string(got[:e.Len]) != "hello" || e.Data != 0x0102030405060708 {
		t.Fatalf("swapped frame: %q %x", got[:e.Len], e.Data)
	}
	if err := n.ep.Send(provider.Msg{Buf: []byte("back"), Data: 9, Flags: provider.FlagRemoteCQData | provider.FlagInject}); err != nil {
		t.Fatal(err)
	}
	var b [24]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		t.Fatal(err)
	}
	var g tcpwire.Header
	if err := tcpwire.ParseHeader(b[:], &g, true); err != nil || g.Size != 28 || g.CQData != 9 || g.Flags != tcpwire.FlagCQData {
		t.Fatalf("our header to a big-endian peer %x: %+v %v", b, g, err)
	}
}

// TestEndpointFromPassiveHandle: an endpoint opened from an Info whose
// handle is a passive endpoint takes over its bound address.
func TestEndpointFromPassiveHandle(t *testing.T) {
	info := loInfo(t, opts{})
	l := listen(t, info)
	pe, err := newPEP(info)
	if err != nil {
		t.Fatal(err)
	}
	defer pe.Close()
	pname, _ := pe.Name()
	hi := info.Dup()
	hi.Handle = pe
	n := newNode(t, hi, opts{})
	if name, _ := n.ep.Name(); !bytes.Equal(name, pname) {
		t.Fatalf("endpoint name %x, passive endpoint's %x", name, pname)
	}
	if err := n.ep.Connect(l.name, nil); err != nil {
		t.Fatal(err)
	}
	ev := expectEvent(t, l.eq, provider.EventConnReq)
	if !bytes.Equal(ev.Info.DestAddr, pname) {
		t.Fatalf("request from %x, want %x", ev.Info.DestAddr, pname)
	}
	if err := l.p.Reject(ev.Info.Handle, nil); err != nil {
		t.Fatal(err)
	}
}
