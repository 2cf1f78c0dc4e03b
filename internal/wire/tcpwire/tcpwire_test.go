package tcpwire

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Frames cut from ../../../../shared/spec/captures (tcp-msg-ops.txt,
// tcp-msg-reject-trunc.txt, pingpong-tcp-msg.txt).
const (
	capConnReq  = "03 00 00 0d 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 63 6f 6e 6e 2d 72 65 71 2d 64 61 74 61"
	capConnResp = "03 01 00 0b 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 61 63 63 65 70 74 2d 64 61 74 61"
	capReject   = "03 06 00 07 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 67 6f 2d 61 77 61 79"
	capEmptyReq = "03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00"

	capSend16    = "03 00 00 00 00 00 10 00 20 00 00 00 00 00 00 00"
	capSendData  = "03 00 01 00 00 00 18 00 28 00 00 00 00 00 00 00 88 77 66 55 44 33 22 11"
	capSendDC    = "03 00 04 00 00 00 10 00 18 00 00 00 00 00 00 00"
	capACK       = "03 00 00 00 02 00 10 00 10 00 00 00 00 00 00 00"
	capWrite     = "03 04 00 00 00 01 28 00 38 00 00 00 00 00 00 00 40 00 00 00 00 00 00 00 10 00 00 00 00 00 00 00 de c0 00 00 00 00 00 00"
	capWriteData = "03 04 01 00 00 01 30 00 38 00 00 00 00 00 00 00 dd cc bb aa 00 00 00 00 60 00 00 00 00 00 00 00 08 00 00 00 00 00 00 00 de c0 00 00 00 00 00 00"
	capWrite2DC  = "03 04 04 00 00 02 40 00 48 00 00 00 00 00 00 00 80 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 de c0 00 00 00 00 00 00 a0 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 de c0 00 00 00 00 00 00"
	capReadReq   = "03 02 00 00 00 01 28 00 28 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10 00 00 00 00 00 00 00 de c0 00 00 00 00 00 00"
	capReadRsp   = "03 03 00 00 00 01 10 00 20 00 00 00 00 00 00 00"
	capStale     = "03 00 00 00 00 01 10 00 20 00 00 00 00 00 00 00"
	capTagged    = "03 00 80 00 00 00 18 00 1c 00 00 00 00 00 00 00 d2 04 00 00 00 00 00 00"
)

func TestCMCaptures(t *testing.T) {
	for _, tc := range []struct {
		name string
		cap  string
		typ  uint8
		data string
	}{
		{"connreq", capConnReq, CMConnReq, "conn-req-data"},
		{"connresp", capConnResp, CMConnResp, "accept-data"},
		{"reject", capReject, CMReject, "go-away"},
		{"empty", capEmptyReq, CMConnReq, ""},
	} {
		b := unhex(t, tc.cap)
		m, rest, err := ParseCM(b)
		if err != nil || len(rest) != 0 {
			t.Fatalf("%s: ParseCM: %v rest %d", tc.name, err, len(rest))
		}
		if m.Type != tc.typ || string(m.Data) != tc.data || m.Swapped() {
			t.Fatalf("%s: got %+v", tc.name, m)
		}
		enc, err := AppendCM(nil, tc.typ, []byte(tc.data))
		if err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("%s: AppendCM = %x, %v; want %x", tc.name, enc, err, b)
		}
	}
}

func TestCMErrors(t *testing.T) {
	if _, err := AppendCM(nil, CMConnReq, make([]byte, MaxCMData+1)); err != ErrCMData {
		t.Fatalf("long data: %v", err)
	}
	if _, err := AppendCM(nil, 2, nil); err != ErrCMType {
		t.Fatalf("bad type: %v", err)
	}
	if b, err := AppendCM(nil, CMConnReq, make([]byte, MaxCMData)); err != nil || len(b) != MaxCMSize {
		t.Fatalf("max data: %d %v", len(b), err)
	}
	good := unhex(t, capConnReq)
	for _, tc := range []struct {
		mut  func(b []byte) []byte
		want error
	}{
		{func(b []byte) []byte { return b[:31] }, ErrShort},
		{func(b []byte) []byte { b[0] = 2; return b }, ErrVersion},
		{func(b []byte) []byte { b[1] = 3; return b }, ErrCMType},
		{func(b []byte) []byte { b[2], b[3] = 1, 1; return b }, ErrCMData},
		{func(b []byte) []byte { return b[:40] }, ErrShort},
	} {
		b := tc.mut(append([]byte(nil), good...))
		if _, _, err := ParseCM(b); err != tc.want {
			t.Errorf("got %v want %v", err, tc.want)
		}
	}
	// A big-endian peer's probe.
	b := append([]byte(nil), good...)
	copy(b[24:], []byte{0, 0, 0, 0, 0, 0, 0, 1})
	m, _, err := ParseCM(b)
	if err != nil || !m.Swapped() {
		t.Fatalf("swapped probe: %+v %v", m, err)
	}
}

func TestHeaderCaptures(t *testing.T) {
	for _, tc := range []struct {
		name string
		cap  string
		want Header
	}{
		{"send", capSend16, Header{Op: OpMsg, HdrSize: 16, Size: 32}},
		{"senddata", capSendData, Header{Op: OpMsg, Flags: FlagCQData, HdrSize: 24, Size: 40, CQData: 0x1122334455667788}},
		{"send-dc", capSendDC, Header{Op: OpMsg, Flags: FlagDeliveryComplete, HdrSize: 16, Size: 24}},
		{"ack", capACK, ACK()},
		{"write", capWrite, Header{Op: OpWrite, RMACount: 1, HdrSize: 40, Size: 56,
			RMA: [4]RMAIOV{{0x40, 16, 0xc0de}}}},
		{"writedata", capWriteData, Header{Op: OpWrite, Flags: FlagCQData, RMACount: 1, HdrSize: 48, Size: 56,
			CQData: 0xaabbccdd, RMA: [4]RMAIOV{{0x60, 8, 0xc0de}}}},
		{"write2-dc", capWrite2DC, Header{Op: OpWrite, Flags: FlagDeliveryComplete, RMACount: 2, HdrSize: 64, Size: 72,
			RMA: [4]RMAIOV{{0x80, 4, 0xc0de}, {0xa0, 4, 0xc0de}}}},
		{"readreq", capReadReq, Header{Op: OpReadReq, RMACount: 1, HdrSize: 40, Size: 40,
			RMA: [4]RMAIOV{{0, 16, 0xc0de}}}},
		{"readrsp", capReadRsp, Header{Op: OpReadRsp, RMACount: 1, HdrSize: 16, Size: 32}},
		{"stale", capStale, Header{Op: OpMsg, RMACount: 1, HdrSize: 16, Size: 32}},
		{"tagged", capTagged, Header{Op: OpMsg, Flags: FlagTagged, HdrSize: 24, Size: 28, Tag: 1234}},
	} {
		b := unhex(t, tc.cap)
		hs, err := PeekHeaderSize(b)
		if err != nil || hs != len(b) {
			t.Fatalf("%s: PeekHeaderSize = %d, %v", tc.name, hs, err)
		}
		var h Header
		if err := ParseHeader(b, &h, false); err != nil {
			t.Fatalf("%s: ParseHeader: %v", tc.name, err)
		}
		if h != tc.want {
			t.Fatalf("%s: got %+v want %+v", tc.name, h, tc.want)
		}
		enc := AppendHeader(nil, &h, false)
		if !bytes.Equal(enc, b) {
			t.Fatalf("%s: AppendHeader = %x want %x", tc.name, enc, b)
		}
	}
}

func TestHeaderBuild(t *testing.T) {
	// What a sender builds for writedata of 8 bytes (capture #12).
	h := Header{Op: OpWrite, Flags: FlagCQData, RMACount: 1, CQData: 0xaabbccdd,
		RMA: [4]RMAIOV{{0x60, 8, 0xc0de}}}
	h.SetPayload(8)
	var b [MaxHeaderSize]byte
	n := PutHeader(b[:], &h, false)
	if !bytes.Equal(b[:n], unhex(t, capWriteData)) {
		t.Fatalf("got %x", b[:n])
	}
	// Largest header: writedata with 4 iovs is exactly 120 bytes.
	h = Header{Op: OpWrite, Flags: FlagCQData, RMACount: 4}
	h.SetPayload(0)
	if n := PutHeader(b[:], &h, false); n != MaxHeaderSize {
		t.Fatalf("max header %d", n)
	}
	for _, bad := range []Header{{Op: 5}, {Op: OpWrite}, {Op: OpReadReq, RMACount: 5}} {
		if n := PutHeader(b[:], &bad, false); n != 0 {
			t.Fatalf("%+v encoded", bad)
		}
	}
	if n := PutHeader(b[:10], &Header{}, false); n != 0 {
		t.Fatal("short buffer encoded")
	}
}

func TestHeaderSwap(t *testing.T) {
	h := Header{Op: OpWrite, Flags: FlagCQData | FlagDeliveryComplete, RMACount: 1, CQData: 7,
		RMA: [4]RMAIOV{{1, 2, 3}}}
	h.SetPayload(5)
	var b [MaxHeaderSize]byte
	n := PutHeader(b[:], &h, true)
	if b[2] != 0 || b[3] != 5 || b[15] != byte(n+5) || b[23] != 7 {
		t.Fatalf("swapped encoding %x", b[:n])
	}
	var g Header
	if err := ParseHeader(b[:n], &g, true); err != nil || g != h {
		t.Fatalf("swapped parse %+v %v", g, err)
	}
}

func TestHeaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    string
		want error
	}{
		{"short", "03 00 00 00 00 00 10 00 20 00 00", ErrShort},
		{"version", "02 00 00 00 00 00 10 00 20 00 00 00 00 00 00 00", ErrVersion},
		{"op", "03 05 00 00 00 00 10 00 20 00 00 00 00 00 00 00", ErrOp},
		{"hdrsmall", "03 00 00 00 00 00 0f 00 20 00 00 00 00 00 00 00", ErrHdrSize},
		{"hdrbig", "03 00 00 00 00 00 79 00 80 00 00 00 00 00 00 00", ErrHdrSize},
		{"needmore", "03 00 01 00 00 00 10 00 20 00 00 00 00 00 00 00", ErrHdrSize},
		{"size", "03 00 00 00 00 00 10 00 0f 00 00 00 00 00 00 00", ErrSize},
		{"ack", "03 00 00 00 02 00 10 00 11 00 00 00 00 00 00 00", ErrACK},
		{"rma0", "03 04 00 00 00 00 10 00 20 00 00 00 00 00 00 00", ErrRMACount},
		{"rma5", "03 02 00 00 00 05 78 00 78 00 00 00 00 00 00 00", ErrRMACount},
		{"rmashort", "03 02 00 00 00 02 28 00 28 00 00 00 00 00 00 00", ErrHdrSize},
	} {
		b := unhex(t, tc.b)
		if len(b) >= BaseHeaderSize {
			b = append(b, make([]byte, MaxHeaderSize)...)
		}
		var h Header
		if err := ParseHeader(b, &h, false); err != tc.want {
			t.Errorf("%s: got %v want %v", tc.name, err, tc.want)
		}
	}
	// hdr_size larger than needed is accepted; the extra words are ignored.
	b := unhex(t, "03 00 00 00 00 00 18 00 20 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff")
	var h Header
	if err := ParseHeader(b, &h, false); err != nil || h.HdrSize != 24 || h.PayloadLen() != 8 {
		t.Fatalf("long header: %+v %v", h, err)
	}
	// hdr_size beyond the given bytes.
	if err := ParseHeader(b[:20], &h, false); err != ErrShort {
		t.Fatalf("truncated: %v", err)
	}
}

func TestAllocs(t *testing.T) {
	var b [MaxHeaderSize]byte
	h := Header{Op: OpMsg, Flags: FlagCQData, CQData: 1}
	h.SetPayload(64)
	var g Header
	n := testing.AllocsPerRun(100, func() {
		k := PutHeader(b[:], &h, false)
		if err := ParseHeader(b[:k], &g, false); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocs", n)
	}
}

// FuzzCM parses arbitrary bytes as a CM message; what parses re-encodes to
// the same bytes (conn_data aside, which AppendCM normalizes) and parses to
// the same message.
func FuzzCM(f *testing.F) {
	for _, s := range []string{capConnReq, capConnResp, capReject, capEmptyReq} {
		f.Add(unhex(f, s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, rest, err := ParseCM(b)
		if err != nil {
			return
		}
		if len(m.Data) > MaxCMData || len(rest) != len(b)-CMHeaderSize-len(m.Data) {
			t.Fatalf("lengths: data %d rest %d of %d", len(m.Data), len(rest), len(b))
		}
		enc, err := AppendCM(nil, m.Type, m.Data)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(enc[:4], b[:4]) || !bytes.Equal(enc[CMHeaderSize:], m.Data) {
			t.Fatalf("re-encoding differs: %x vs %x", enc, b)
		}
		m2, rest2, err := ParseCM(enc)
		if err != nil || len(rest2) != 0 || m2.Type != m.Type || !bytes.Equal(m2.Data, m.Data) {
			t.Fatalf("round trip: %+v %v", m2, err)
		}
	})
}

// FuzzHeader parses arbitrary bytes as a data frame header in both byte
// orders; what parses re-encodes and parses to the same header.
func FuzzHeader(f *testing.F) {
	for _, s := range []string{capSend16, capSendData, capSendDC, capACK, capWrite, capWriteData, capWrite2DC,
		capReadReq, capReadRsp, capStale, capTagged} {
		f.Add(unhex(f, s), false)
	}
	h := Header{Op: OpTagged, Flags: FlagCQData, Tag: 5, CQData: 6}
	h.SetPayload(3)
	f.Add(AppendHeader(nil, &h, true), true)
	f.Fuzz(func(t *testing.T, b []byte, swap bool) {
		var h Header
		if err := ParseHeader(b, &h, swap); err != nil {
			return
		}
		if int(h.HdrSize) > len(b) || h.Need() > int(h.HdrSize) || h.Size < uint64(h.HdrSize) ||
			h.NumRMA() > MaxRMAIOV || h.HdrSize > MaxHeaderSize {
			t.Fatalf("accepted invalid header %+v", h)
		}
		var enc [MaxHeaderSize]byte
		g := h
		n := PutHeader(enc[:], &g, swap)
		if n == 0 || n != h.Need() {
			t.Fatalf("re-encode of %+v: %d", h, n)
		}
		var h2 Header
		if err := ParseHeader(enc[:n], &h2, swap); err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		h.HdrSize = uint8(n)
		if h2 != h {
			t.Fatalf("round trip: %+v != %+v", h2, h)
		}
		if int(h.HdrSize) == n && !bytes.Equal(enc[:n], b[:n]) && b[6] == uint8(n) {
			t.Fatalf("bytes differ: %x vs %x", enc[:n], b[:n])
		}
	})
}
