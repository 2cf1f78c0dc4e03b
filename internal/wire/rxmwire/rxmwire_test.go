package rxmwire

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The connect and accept data of captures/pingpong-tcp-rdm-tagged.txt.
func TestConnectCapture(t *testing.T) {
	b := unhex(t, "01020403eab90200004000000010000000000000ab340000")
	c, err := ParseConnect(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 47594 || c.EagerLimit != 16384 || c.RxSize != 4096 || c.FlowCtrl != FlowCtrlPeerOff ||
		ConnPID(c.ConnID) != 13483 || ConnIndex(c.ConnID) != 0 {
		t.Fatalf("decoded %+v", c)
	}
	if got := AppendConnect(nil, &c); !bytes.Equal(got, b) {
		t.Fatalf("re-encoded %x, want %x", got, b)
	}
	a := Accept{ConnID: ConnID(13480, 0), RxSize: 4096, FlowCtrl: FlowCtrlPeerOff}
	want := unhex(t, "00000000a834000000100000"+"02000000")
	if got := AppendAccept(nil, &a); !bytes.Equal(got, want) {
		t.Fatalf("accept %x, want %x", got, want)
	}
	if back, err := ParseAccept(want); err != nil || back != a {
		t.Fatalf("ParseAccept = %+v, %v", back, err)
	}
}

func TestConnectRefused(t *testing.T) {
	good := AppendConnect(nil, &Connect{Port: 1, EagerLimit: EagerLimit, RxSize: RxSize})
	for i, tc := range []struct {
		off  int
		val  byte
		want error
	}{{0, 2, ErrVersion}, {1, 1, ErrEndian}, {2, 3, ErrVersion}, {3, 2, ErrVersion}, {9, 0x20, ErrEagerLimit}} {
		b := bytes.Clone(good)
		b[tc.off] = tc.val
		if _, err := ParseConnect(b); err != tc.want {
			t.Errorf("case %d: err %v, want %v", i, err, tc.want)
		}
	}
	if _, err := ParseConnect(good[:ConnectSize-1]); err != ErrShort {
		t.Errorf("short: %v", err)
	}
	if _, err := ParseAccept(make([]byte, AcceptSize-1)); err != ErrShort {
		t.Errorf("short accept: %v", err)
	}
}

func TestReject(t *testing.T) {
	if r := ParseReject(AppendReject(nil, RejectAlready)); r != RejectAlready {
		t.Fatalf("reason %d", r)
	}
	for _, b := range [][]byte{nil, {1}, {2, 2}, {1, 9}} {
		if r := ParseReject(b); r != RejectConnRefused {
			t.Errorf("%x: reason %d, want refused", b, r)
		}
	}
}

// An eager message header as in captures/pingpong-tcp-rdm.txt (op.version
// 2, ctrl.version 4) and a rendezvous descriptor as in
// pingpong-tcp-rdm-rendezvous.txt.
func TestHeaderRoundTrip(t *testing.T) {
	h := Header{Type: TypeRndvReq, ConnID: 7, MsgID: 0x80000001, Op: OpTagged, Flags: FlagRemoteCQData,
		Size: 20000, Data: 5, Tag: 1234}
	var b [HeaderSize]byte
	h.Put(b[:])
	if b[0] != 4 || b[32] != 2 || b[1] != TypeRndvReq || b[34] != OpTagged {
		t.Fatalf("encoded %x", b)
	}
	var back Header
	if err := back.Parse(b[:]); err != nil || back != h {
		t.Fatalf("Parse = %+v, %v", back, err)
	}
	for _, typ := range []uint8{TypeGoRMAError, TypeGoEager, TypeGoCMAReq, TypeGoCMAChallenge, TypeGoSource} {
		b[1] = typ
		if err := back.Parse(b[:]); err != nil || back.Type != typ {
			t.Fatalf("type %#x: %+v, %v", typ, back, err)
		}
	}
	for _, typ := range []uint8{9, TypeGoRMAError - 1, TypeGoSource + 1, 0xff} {
		b[1] = typ
		if err := back.Parse(b[:]); err != ErrType {
			t.Fatalf("type %#x: %v", typ, err)
		}
	}
	if err := back.Parse(b[:HeaderSize-1]); err != ErrShort {
		t.Fatalf("short: %v", err)
	}
	r := Rndv{Count: 1, IOV: [MaxRndvIOV]RndvIOV{{Addr: 0, Len: 20000, Key: KeyBase}}}
	var rb [RndvSize]byte
	r.Put(rb[:])
	if got, err := ParseRndv(rb[:], 20000); err != nil || got != r {
		t.Fatalf("ParseRndv = %+v, %v", got, err)
	}
	if _, err := ParseRndv(rb[:], 20001); err != ErrRndvLength {
		t.Fatalf("wrong size: %v", err)
	}
	g := GoCMA{ProofAddr: 1, Base: 0x7f0000001000, Len: 20000}
	var gb [GoCMASize]byte
	g.Put(gb[:])
	if got, err := ParseGoCMA(gb[:], 20000); err != nil || got != g {
		t.Fatalf("ParseGoCMA = %+v, %v", got, err)
	}
	if _, err := ParseGoCMA(gb[:], 20001); err != ErrRndvLength {
		t.Fatalf("GoCMA wrong size: %v", err)
	}
	if _, err := ParseGoCMA(gb[:GoCMASize-1], 20000); err != ErrShort {
		t.Fatalf("GoCMA short: %v", err)
	}
	rb[96] = 5
	if _, err := ParseRndv(rb[:], 20000); err != ErrRndvCount {
		t.Fatalf("count 5: %v", err)
	}
}

func TestGoSource(t *testing.T) {
	gs := GoSource(40000)
	var b [HeaderSize]byte
	gs.Put(b[:])
	var h Header
	if err := h.Parse(b[:]); err != nil {
		t.Fatal(err)
	}
	if p, err := ParseGoSource(&h, nil); err != nil || p != 40000 {
		t.Fatalf("ParseGoSource = %d, %v", p, err)
	}
	for _, bad := range []struct {
		name string
		mod  func(*Header)
		body []byte
	}{
		{"port 0", func(h *Header) { h.Data = 0 }, nil},
		{"port beyond 65535", func(h *Header) { h.Data = 0x10000 }, nil},
		{"a size", func(h *Header) { h.Size = 1 }, nil},
		{"a body", func(*Header) {}, []byte{1}},
		{"another type", func(h *Header) { h.Type = TypeGoEager }, nil},
	} {
		h2 := h
		bad.mod(&h2)
		if _, err := ParseGoSource(&h2, bad.body); err != ErrGoSource {
			t.Errorf("%s: %v, want ErrGoSource", bad.name, err)
		}
	}
}

// FuzzParse feeds arbitrary bytes to every parser: none may panic, and
// what parses re-encodes to the same fields.
func FuzzParse(f *testing.F) {
	f.Add(AppendConnect(nil, &Connect{Port: 9, EagerLimit: EagerLimit, RxSize: RxSize, ConnID: 3}), uint64(0))
	var hb [HeaderSize]byte
	(&Header{Type: TypeEager, Size: 10}).Put(hb[:])
	f.Add(hb[:], uint64(10))
	var rb [RndvSize]byte
	(&Rndv{Count: 2, IOV: [MaxRndvIOV]RndvIOV{{Len: 4}, {Len: 6}}}).Put(rb[:])
	f.Add(rb[:], uint64(10))
	gs := GoSource(7)
	gs.Put(hb[:])
	f.Add(hb[:], uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, size uint64) {
		if c, err := ParseConnect(b); err == nil {
			if c2, err := ParseConnect(AppendConnect(nil, &c)); err != nil || c2 != c {
				t.Fatalf("connect round trip %+v -> %+v %v", c, c2, err)
			}
		}
		if a, err := ParseAccept(b); err == nil {
			if a2, _ := ParseAccept(AppendAccept(nil, &a)); a2 != a {
				t.Fatalf("accept round trip")
			}
		}
		_ = ParseReject(b)
		var h Header
		if h.Parse(b) == nil {
			var out [HeaderSize]byte
			h.Put(out[:])
			var h2 Header
			if err := h2.Parse(out[:]); err != nil || h2 != h {
				t.Fatalf("header round trip %+v -> %+v %v", h, h2, err)
			}
		}
		if h.Parse(b) == nil {
			if p, err := ParseGoSource(&h, b[HeaderSize:]); err == nil {
				gs := GoSource(p)
				if p2, err := ParseGoSource(&gs, nil); err != nil || p2 != p || len(b) != HeaderSize {
					t.Fatalf("GoSource round trip %d -> %d %v", p, p2, err)
				}
			}
		}
		if g, err := ParseGoCMA(b, size); err == nil {
			var out [GoCMASize]byte
			g.Put(out[:])
			if g2, err := ParseGoCMA(out[:], size); err != nil || g2 != g {
				t.Fatalf("GoCMA round trip %+v -> %+v %v", g, g2, err)
			}
		} else if len(b) >= GoCMASize && err != ErrRndvLength {
			t.Fatalf("GoCMA: %v", err)
		}
		if r, err := ParseRndv(b, size); err == nil {
			var out [RndvSize]byte
			r.Put(out[:])
			if r2, err := ParseRndv(out[:], size); err != nil || r2 != r {
				t.Fatalf("rndv round trip")
			}
		}
	})
}
