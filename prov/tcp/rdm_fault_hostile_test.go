package tcp

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
)

// Hostile peers on raw sockets at an RDM endpoint: whatever a peer sends,
// its connection is dropped (or its connect request refused), the
// operations towards it complete in error, and the endpoint keeps serving
// its other peers.

// rawRDM is a hand-driven RDM peer: a connection to the endpoint under
// test, announcing the port of a listener of its own.
type rawRDM struct {
	t    *testing.T
	c    net.Conn
	addr []byte // the address it announced (the endpoint keys it by this)
}

// dialRDM connects a raw socket to n and writes a connect request with
// data.
func dialRDM(t *testing.T, n *fltNode, data []byte) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(listenPortOf(n.name))), waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitLimit))
	req, err := tcpwire.AppendCM(nil, tcpwire.CMConnReq, data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	return c
}

// listenPortOf returns the port of a sockaddr_in.
func listenPortOf(name []byte) int { return int(binary.BigEndian.Uint16(name[2:4])) }

// newRawRDM connects a raw peer to n with valid rxm connect data and
// reads the endpoint's accept.
func newRawRDM(t *testing.T, n *fltNode) *rawRDM {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	data := rxmwire.AppendConnect(nil, &rxmwire.Connect{Port: port, FlowCtrl: rxmwire.FlowCtrlPeerOff,
		EagerLimit: rxmwire.EagerLimit, RxSize: rxmwire.RxSize, ConnID: rxmwire.ConnID(4242, 0)})
	r := &rawRDM{t: t, c: dialRDM(t, n, data), addr: loopback(port)}
	// The accept comes from the control goroutine.
	resp := make([]byte, tcpwire.CMHeaderSize+rxmwire.AcceptSize)
	if _, err := io.ReadFull(r.c, resp); err != nil {
		t.Fatalf("accept: %v", err)
	}
	if typ, dlen, _, err := tcpwire.ParseCMHeader(resp); err != nil || typ != tcpwire.CMConnResp || dlen != rxmwire.AcceptSize {
		t.Fatalf("accept header %x: %v", resp, err)
	}
	return r
}

// readFrame reads one frame: its tcp header and payload.
func (r *rawRDM) readFrame() (tcpwire.Header, []byte) {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(waitLimit))
	var b [tcpwire.MaxHeaderSize]byte
	if _, err := io.ReadFull(r.c, b[:tcpwire.BaseHeaderSize]); err != nil {
		r.t.Fatal(err)
	}
	hs, err := tcpwire.PeekHeaderSize(b[:tcpwire.BaseHeaderSize])
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := io.ReadFull(r.c, b[tcpwire.BaseHeaderSize:hs]); err != nil {
		r.t.Fatal(err)
	}
	var h tcpwire.Header
	if err := tcpwire.ParseHeader(b[:hs], &h, false); err != nil {
		r.t.Fatal(err)
	}
	p := make([]byte, h.Size-uint64(hs))
	if _, err := io.ReadFull(r.c, p); err != nil {
		r.t.Fatal(err)
	}
	return h, p
}

// closedBy waits (progressing n) for the endpoint to close the raw
// connection.
func closedBy(t *testing.T, c net.Conn, n *fltNode) {
	t.Helper()
	done := make(chan error, 1)
	c.SetReadDeadline(time.Now().Add(waitLimit))
	go func() {
		_, err := io.Copy(io.Discard, c)
		done <- err
	}()
	deadline := time.Now().Add(waitLimit + time.Second)
	for {
		select {
		case err := <-done:
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal("the endpoint kept the hostile connection open for 5 s")
			}
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("hostile connection still open")
		}
		n.ep.Progress()
		time.Sleep(time.Millisecond)
	}
}

// rxmFrame encodes a tcp op 0 frame carrying an rxm header and body.
func rxmFrame(rh rxmwire.Header, body []byte) []byte {
	h := tcpwire.Header{Op: tcpwire.OpMsg}
	h.SetPayload(uint64(rxmwire.HeaderSize + len(body)))
	b := tcpwire.AppendHeader(nil, &h, false)
	var x [rxmwire.HeaderSize]byte
	rh.Put(x[:])
	return append(append(b, x[:]...), body...)
}

// rndvBody encodes a rendezvous descriptor.
func rndvBody(count uint8, lens ...uint64) []byte {
	r := rxmwire.Rndv{Count: count}
	for i, l := range lens {
		r.IOV[i] = rxmwire.RndvIOV{Len: l, Key: rxmwire.KeyBase | 1}
	}
	b := make([]byte, rxmwire.RndvSize)
	r.Put(b)
	return b
}

// TestRDMHostileFrames: after a valid connect, a raw peer sends one bad
// frame; the rendezvous send we had in flight to it fails, its connection
// is closed, and the endpoint still serves another peer.
func TestRDMHostileFrames(t *testing.T) {
	readReq := func(key, addr, n uint64) []byte {
		h := tcpwire.Header{Op: tcpwire.OpReadReq, RMACount: 1}
		h.RMA[0] = tcpwire.RMAIOV{Addr: addr, Len: n, Key: key}
		h.SetPayload(0)
		return tcpwire.AppendHeader(nil, &h, false)
	}
	cases := []struct {
		name string
		bad  func(key uint64) []byte // key: the key of our rendezvous send
	}{
		{"rxm control type", func(uint64) []byte { return rxmFrame(rxmwire.Header{Type: 9}, nil) }},
		{"rxm op", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeEager, Op: 7, Size: 3}, []byte("abc"))
		}},
		{"rxm header cut", func(uint64) []byte {
			h := tcpwire.Header{Op: tcpwire.OpMsg}
			h.SetPayload(10)
			return append(tcpwire.AppendHeader(nil, &h, false), make([]byte, 10)...)
		}},
		{"eager size", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeEager, Size: 100}, []byte("ten bytes!"))
		}},
		{"eager too large", func(uint64) []byte {
			n := rxmwire.EagerLimit + 4096
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeEager, Size: uint64(n)}, make([]byte, n))
		}},
		{"rndv count 0", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeRndvReq, Size: 1 << 20, MsgID: 1}, rndvBody(0, 1<<20))
		}},
		{"rndv count 5", func(uint64) []byte {
			b := rndvBody(4, 1<<18, 1<<18, 1<<18, 1<<18)
			b[rxmwire.MaxRndvIOV*24] = 5
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeRndvReq, Size: 1 << 20, MsgID: 1}, b)
		}},
		{"rndv lengths", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeRndvReq, Size: 1 << 20, MsgID: 1}, rndvBody(2, 1<<19, 1<<10))
		}},
		{"rndv length overflow", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeRndvReq, Size: 1 << 20, MsgID: 1},
				rndvBody(2, 1<<63, 1<<63+1<<20))
		}},
		{"rndv descriptor cut", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeRndvReq, Size: 1 << 20, MsgID: 1}, rndvBody(1, 1<<20)[:50])
		}},
		{"read-done unknown", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeRndvReadDone, MsgID: 99}, nil)
		}},
		{"read request unknown key", func(uint64) []byte { return readReq(rxmwire.KeyBase|12345, 0, 10) }},
		{"read request beyond the buffer", func(key uint64) []byte { return readReq(key, 0, 1<<20+1) }},
		{"read request offset", func(key uint64) []byte { return readReq(key, 1<<20, 1) }},
		{"read request wrapping", func(key uint64) []byte { return readReq(key, 1<<63, 1<<63) }},
		{"read response unasked", func(uint64) []byte {
			h := tcpwire.Header{Op: tcpwire.OpReadRsp}
			h.SetPayload(10)
			return append(tcpwire.AppendHeader(nil, &h, false), make([]byte, 10)...)
		}},
		{"SAR middle without first", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeSAR, SegSize: 100, SegNo: 1, MsgID: 7,
				CtrlData: rxmwire.SegMiddle | 16384<<2, Size: 40000}, make([]byte, 100))
		}},
		{"SAR segment larger than the message", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeSAR, SegSize: 16384, MsgID: 7,
				CtrlData: rxmwire.SegFirst, Size: 100}, make([]byte, 16384))
		}},
		{"SAR segment size mismatch", func(uint64) []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeSAR, SegSize: 16000, MsgID: 7,
				CtrlData: rxmwire.SegFirst, Size: 40000}, make([]byte, 100))
		}},
		{"tcp op", func(uint64) []byte {
			h := tcpwire.Header{Op: tcpwire.OpWrite, RMACount: 1}
			h.RMA[0] = tcpwire.RMAIOV{Len: 4, Key: 1}
			h.SetPayload(4)
			return append(tcpwire.AppendHeader(nil, &h, false), 1, 2, 3, 4)
		}},
		{"tcp version", func(uint64) []byte {
			b := rxmFrame(rxmwire.Header{Type: rxmwire.TypeEager, Size: 1}, []byte{1})
			b[0] = 2
			return b
		}},
		{"tcp size below header", func(uint64) []byte {
			b := rxmFrame(rxmwire.Header{Type: rxmwire.TypeEager, Size: 1}, []byte{1})
			binary.LittleEndian.PutUint64(b[8:], 4)
			return b
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
			r := newRawRDM(t, a)
			dest := a.mustInsert(t, r.addr)
			if err := a.send(dest, make([]byte, 1<<20), true, 3, "rndv"); err != nil {
				t.Fatal(err)
			}
			h, p := r.readFrame()
			var rh rxmwire.Header
			if h.Op != tcpwire.OpMsg || rh.Parse(p) != nil || rh.Type != rxmwire.TypeRndvReq {
				t.Fatalf("first frame %+v %x", h, p)
			}
			rv, err := rxmwire.ParseRndv(p[rxmwire.HeaderSize:], rh.Size)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.c.Write(tc.bad(rv.IOV[0].Key)); err != nil {
				t.Fatal(err)
			}
			c := waitComps(t, a.tx, 1, waitLimit)
			if c[0].ctx != "rndv" || c[0].err == 0 {
				t.Fatalf("send to the hostile peer: %+v, want an error", c[0])
			}
			closedBy(t, r.c, a)
			if k := a.conns(); k != 0 {
				t.Fatalf("%d connections left", k)
			}
			fltCheckServes(t, a, other)
		})
	}
}

// TestRDMHostileConnectRequests: connect requests with bad rxm data are
// refused (a reject, then the socket closes), bad tcp CM headers closed;
// the endpoint keeps serving.
func TestRDMHostileConnectRequests(t *testing.T) {
	good := func() []byte {
		return rxmwire.AppendConnect(nil, &rxmwire.Connect{Port: 1, FlowCtrl: rxmwire.FlowCtrlPeerOff,
			EagerLimit: rxmwire.EagerLimit, RxSize: rxmwire.RxSize, ConnID: rxmwire.ConnID(4242, 0)})
	}
	cases := []struct {
		name   string
		data   func() []byte
		reject bool // a reject is written before the close
	}{
		{"cm version", func() []byte { b := good(); b[0] = 2; return b }, true},
		{"ctrl version", func() []byte { b := good(); b[2] = 3; return b }, true},
		{"op version", func() []byte { b := good(); b[3] = 2; return b }, true},
		{"endianness", func() []byte { b := good(); b[1] = 1; return b }, true},
		{"eager limit", func() []byte { b := good(); binary.LittleEndian.PutUint32(b[8:], 8192); return b }, true},
		{"short", func() []byte { return good()[:10] }, true},
		{"empty", func() []byte { return nil }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			a := newFlt(t, fltOpts{})
			c := dialRDM(t, a, tc.data())
			hdr := make([]byte, tcpwire.CMHeaderSize)
			if _, err := io.ReadFull(c, hdr); err != nil {
				t.Fatalf("no reject: %v", err)
			}
			typ, dlen, _, err := tcpwire.ParseCMHeader(hdr)
			if err != nil || typ != tcpwire.CMReject || dlen != rxmwire.RejectSize {
				t.Fatalf("response %x: %v", hdr, err)
			}
			data := make([]byte, dlen)
			if _, err := io.ReadFull(c, data); err != nil || rxmwire.ParseReject(data) != rxmwire.RejectConnRefused {
				t.Fatalf("reject data %x: %v", data, err)
			}
			closedBy(t, c, a)
			fltCheckServes(t, a, newFlt(t, fltOpts{}))
		})
	}
	t.Run("tcp cm header", func(t *testing.T) {
		leakCheck(t)
		a := newFlt(t, fltOpts{})
		c := dialRDM(t, a, good())
		// A second request on the same socket after a good one is not
		// a problem; a first one with a bad version is: write a bad one
		// on a fresh socket.
		c.Close()
		c2, err := net.DialTimeout("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(listenPortOf(a.name))), waitLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		req, _ := tcpwire.AppendCM(nil, tcpwire.CMConnReq, good())
		req[0] = 9
		c2.Write(req)
		closedBy(t, c2, a)
		fltCheckServes(t, a, newFlt(t, fltOpts{}))
	})
	t.Run("cm type", func(t *testing.T) {
		leakCheck(t)
		a := newFlt(t, fltOpts{})
		c, err := net.DialTimeout("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(listenPortOf(a.name))), waitLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		req, _ := tcpwire.AppendCM(nil, tcpwire.CMConnResp, make([]byte, rxmwire.AcceptSize))
		c.Write(req)
		closedBy(t, c, a)
		fltCheckServes(t, a, newFlt(t, fltOpts{}))
	})
}

// TestRDMHostileAcceptor: a raw listener answers our connect request
// badly; the sends queued for it fail, and the endpoint keeps serving.
func TestRDMHostileAcceptor(t *testing.T) {
	cases := []struct {
		name string
		resp func() []byte
	}{
		{"accept data short", func() []byte {
			b, _ := tcpwire.AppendCM(nil, tcpwire.CMConnResp, make([]byte, 4))
			return b
		}},
		{"cm type", func() []byte {
			b, _ := tcpwire.AppendCM(nil, tcpwire.CMConnReq, make([]byte, rxmwire.ConnectSize))
			return b
		}},
		{"cm version", func() []byte {
			b, _ := tcpwire.AppendCM(nil, tcpwire.CMConnResp, make([]byte, rxmwire.AcceptSize))
			b[0] = 1
			return b
		}},
		{"reject garbage", func() []byte {
			b, _ := tcpwire.AppendCM(nil, tcpwire.CMReject, []byte{7, 7})
			return b
		}},
		{"closed", func() []byte { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			dest := a.mustInsert(t, loopback(uint16(ln.Addr().(*net.TCPAddr).Port)))
			for i := 0; i < 3; i++ {
				if err := a.send(dest, make([]byte, 100<<(i*8)), false, 0, i); err != nil {
					t.Fatal(err)
				}
			}
			accepted := make(chan net.Conn, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					close(accepted)
					return
				}
				c.SetDeadline(time.Now().Add(waitLimit))
				hdr := make([]byte, tcpwire.CMHeaderSize)
				if _, err := io.ReadFull(c, hdr); err == nil {
					_, dlen, _, _ := tcpwire.ParseCMHeader(hdr)
					io.ReadFull(c, make([]byte, dlen))
					if b := tc.resp(); b != nil {
						c.Write(b)
					} else {
						c.Close()
					}
				}
				accepted <- c
			}()
			got := waitComps(t, a.tx, 3, waitLimit)
			for _, c := range got {
				if c.err == 0 {
					t.Fatalf("send %v to the hostile acceptor succeeded", c.ctx)
				}
			}
			if c, ok := <-accepted; ok {
				closedBy(t, c, a)
				c.Close()
			}
			if k := a.conns(); k != 0 {
				t.Fatalf("%d connections left", k)
			}
			fltCheckServes(t, a, other)
		})
	}
}
