package simwire

import (
	"bytes"
	"testing"
)

func sample() []Message {
	return []Message{
		{Kind: KindMsg, Flags: FlagTagged | FlagCQData | FlagReliable, Req: 7, Tag: 0xabc, Data: 42, Payload: []byte("hello")},
		{Kind: KindRMA, Flags: FlagReliable, Req: 8, Size: 6, NRMA: 2,
			RMA: [MaxRMA]RMAIOV{{Addr: 1, Len: 2, Key: 3}, {Addr: 4, Len: 4, Key: 6}}, Payload: []byte("abcdef")},
		{Kind: KindRMA, Flags: FlagReliable | FlagRead, Req: 9, Size: 8, NRMA: 1, RMA: [MaxRMA]RMAIOV{{Len: 8, Key: 1}}},
		{Kind: KindRMA, Flags: FlagReliable | FlagAtomic, Req: 10, Size: 8, NRMA: 1, AtomicKind: 1, AtomicOp: 2, Datatype: 3,
			RMA: [MaxRMA]RMAIOV{{Len: 8, Key: 1}}, Payload: make([]byte, 16)},
		{Kind: KindAck, Req: 11},
		{Kind: KindAnswer, Flags: FlagFetch, Req: 12, Status: 0, Payload: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{Kind: KindAnswer, Req: 13, Status: 22},
	}
}

func TestMessageRoundTrip(t *testing.T) {
	for i, m := range sample() {
		b := AppendMessage(nil, &m)
		var got Message
		if err := ParseMessage(b, &got); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if !bytes.Equal(AppendMessage(nil, &got), b) {
			t.Fatalf("%d: round trip differs", i)
		}
		if err := ParseMessage(b[:len(b)-1], &got); err == nil && len(m.Payload) == 0 {
			t.Fatalf("%d: truncated message parsed", i)
		}
	}
}

func TestMessageRejects(t *testing.T) {
	bad := []Message{
		{Kind: 0},
		{Kind: 5},
		{Kind: KindMsg, Flags: 1 << 7},
		{Kind: KindMsg, NRMA: 1},
		{Kind: KindRMA, Size: 4}, // no iov
		{Kind: KindRMA, Size: 4, NRMA: 1, RMA: [MaxRMA]RMAIOV{{Len: 5}}, Payload: make([]byte, 5)}, // size != iovs
		{Kind: KindRMA, Size: 4, NRMA: 1, RMA: [MaxRMA]RMAIOV{{Len: 4}}, Payload: make([]byte, 3)}, // short write
		{Kind: KindRMA, Flags: FlagRead, Size: 4, NRMA: 1, RMA: [MaxRMA]RMAIOV{{Len: 4}}, Payload: []byte{1}},
		{Kind: KindAck, Payload: []byte{1}},
		{Kind: KindAnswer, NRMA: 1},
	}
	for i, m := range bad {
		var got Message
		if err := ParseMessage(AppendMessage(nil, &m), &got); err == nil {
			t.Errorf("%d: %+v accepted", i, m)
		}
	}
	b := AppendMessage(nil, &Message{Kind: KindMsg})
	b[2] = MaxRMA + 1
	if err := ParseMessage(b, new(Message)); err == nil {
		t.Error("too many iovs accepted")
	}
}

func TestFragments(t *testing.T) {
	for _, size := range []int{0, 1, MaxChunk - 1, MaxChunk, MaxChunk + 1, 3*MaxChunk + 17, MaxMessage} {
		msg := make([]byte, size)
		for i := range msg {
			msg[i] = byte(i * 7)
		}
		var r Reassembler
		var got []byte
		n := 0
		err := AppendFrags(nil, 5, msg, func(d []byte) error {
			n++
			if len(d) > MaxDatagram {
				t.Fatalf("datagram of %d bytes", len(d))
			}
			src, m, done, err := r.Add(d)
			if err != nil || src != 5 {
				t.Fatalf("size %d: add: %v src %d", size, err, src)
			}
			if done {
				got = append([]byte(nil), m...)
			}
			return nil
		})
		if err != nil || !bytes.Equal(got, msg) || r.Pending() != 0 {
			t.Fatalf("size %d: %v, got %d bytes in %d fragments, %d pending", size, err, len(got), n, r.Pending())
		}
	}
	// Out of order: the unfinished message is dropped.
	var r Reassembler
	var frags [][]byte
	_ = AppendFrags(nil, 9, make([]byte, 2*MaxChunk+1), func(d []byte) error {
		frags = append(frags, append([]byte(nil), d...))
		return nil
	})
	if _, _, done, err := r.Add(frags[0]); done || err != nil {
		t.Fatal("first fragment")
	}
	if _, _, _, err := r.Add(frags[2]); err == nil || r.Pending() != 0 {
		t.Fatal("a fragment out of order was taken")
	}
	// Bounded: at most MaxPartial sources unfinished.
	for src := uint64(1); src <= 2*MaxPartial; src++ {
		d := AppendFrag(nil, FragHeader{Src: src, Total: MaxChunk + 1}, make([]byte, MaxChunk))
		if _, _, _, err := r.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if r.Pending() != MaxPartial {
		t.Fatalf("%d pending", r.Pending())
	}
}

// FuzzSimWire drives the fragment parser, the reassembler and the message
// parser over arbitrary bytes: none panics, and what parses round-trips.
func FuzzSimWire(f *testing.F) {
	for _, m := range sample() {
		b := AppendMessage(nil, &m)
		f.Add(AppendFrag(nil, FragHeader{Src: 3, Total: uint32(len(b))}, b))
		f.Add(b)
	}
	f.Add(AppendFrag(nil, FragHeader{Src: 3, Total: MaxChunk + 4}, make([]byte, MaxChunk)))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if err := ParseMessage(b, &m); err == nil {
			if !bytes.Equal(AppendMessage(nil, &m), b) {
				t.Fatal("message round trip")
			}
		}
		if h, chunk, err := ParseFrag(b); err == nil {
			if !bytes.Equal(AppendFrag(nil, h, chunk), b) {
				t.Fatal("fragment round trip")
			}
		}
		var r Reassembler
		for k := 0; k < 3; k++ {
			if _, msg, done, err := r.Add(b); err == nil && done {
				_ = ParseMessage(msg, &m)
			}
		}
	})
}
