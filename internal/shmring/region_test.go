package shmring

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
)

var testParams = Params{Slots: 8, SlotSize: 256, Bufs: 4, BufSize: 4096}

// alignedBuf returns a 64-byte aligned zeroed slice of n bytes.
func alignedBuf(n int) []byte {
	b := make([]byte, n+64)
	for i := 0; i < 64; i++ {
		if aligned(b[i:]) {
			return b[i : i+n : i+n]
		}
	}
	panic("no aligned offset")
}

func newTestRegion(t testing.TB, p Params) *Region {
	t.Helper()
	size, ok := p.Size()
	if !ok {
		t.Fatalf("invalid params %+v", p)
	}
	b := alignedBuf(int(size))
	h, err := Init(b, p, 42, 0x1234, []byte("key"))
	if err != nil {
		t.Fatal(err)
	}
	return NewRegion(b, h)
}

func TestInitAttachRoundTrip(t *testing.T) {
	r := newTestRegion(t, testParams)
	h, err := Attach(r.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if h.Params != testParams || h.Pid != 42 || h.ID != 0x1234 || string(h.AuthKey()) != "key" {
		t.Fatalf("header %+v", h)
	}
	if r.InlineMax() != 256-CmdHeaderSize {
		t.Fatalf("inline max %d", r.InlineMax())
	}
}

func TestAttachRejectsDamagedHeaders(t *testing.T) {
	good := newTestRegion(t, testParams).Bytes()
	le := binary.LittleEndian
	cases := map[string]func(b []byte) []byte{
		"short":          func(b []byte) []byte { return b[:HeaderSize-1] },
		"magic":          func(b []byte) []byte { b[0] = 'X'; return b },
		"version":        func(b []byte) []byte { le.PutUint32(b[offVersion:], 1); return b },
		"slots not pow2": func(b []byte) []byte { le.PutUint32(b[offSlots:], 7); return b },
		"huge slots":     func(b []byte) []byte { le.PutUint32(b[offSlots:], 1<<30); return b },
		"slot size":      func(b []byte) []byte { le.PutUint32(b[offSlotSize:], 64); return b },
		"buf size":       func(b []byte) []byte { le.PutUint32(b[offBufSize:], 1<<30); return b },
		"ring offset":    func(b []byte) []byte { le.PutUint64(b[offRingOff:], 0); return b },
		"pool offset":    func(b []byte) []byte { le.PutUint64(b[offPoolOff:], 1<<40); return b },
		"total":          func(b []byte) []byte { le.PutUint64(b[offTotal:], 1); return b },
		"auth len":       func(b []byte) []byte { le.PutUint32(b[offAuthLen:], 65); return b },
		"truncated map":  func(b []byte) []byte { return b[:len(b)-1] },
		"more bufs":      func(b []byte) []byte { le.PutUint32(b[offBufCount:], 8); return b },
	}
	for name, damage := range cases {
		b := alignedBuf(len(good))
		copy(b, good)
		if _, err := Attach(damage(b)); err == nil {
			t.Errorf("%s: Attach accepted a damaged header", name)
		}
	}
}

func TestRingFIFOAndFull(t *testing.T) {
	r := newTestRegion(t, testParams)
	for i := 0; i < int(testParams.Slots); i++ {
		pos, cmd, ok := r.Reserve()
		if !ok {
			t.Fatalf("reserve %d failed", i)
		}
		c := Cmd{Op: OpMsg, Flags: FlagInline, Size: 1, MsgID: uint64(i)}
		if !Encode(cmd, &c, []byte{byte(i)}) {
			t.Fatal("encode")
		}
		r.Publish(pos)
	}
	if _, _, ok := r.Reserve(); ok {
		t.Fatal("reserve succeeded on a full ring")
	}
	for i := 0; i < int(testParams.Slots); i++ {
		cmd := r.Peek()
		if cmd == nil {
			t.Fatalf("peek %d: empty", i)
		}
		var c Cmd
		if err := r.Decode(cmd, &c); err != nil || c.MsgID != uint64(i) || !bytes.Equal(c.Payload, []byte{byte(i)}) {
			t.Fatalf("command %d: %+v %v", i, c, err)
		}
		r.Release()
	}
	if r.Peek() != nil || r.Pending() {
		t.Fatal("ring not empty")
	}
	// Reserved but not published: the consumer does not see it.
	pos, _, ok := r.Reserve()
	if !ok || r.Peek() != nil {
		t.Fatal("unpublished slot visible")
	}
	r.Publish(pos)
	if r.Peek() == nil {
		t.Fatal("published slot not visible")
	}
}

func TestRingConcurrentProducers(t *testing.T) {
	r := newTestRegion(t, Params{Slots: 16, SlotSize: 128, Bufs: 1, BufSize: 4096})
	const producers, each = 4, 2000
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; {
				pos, cmd, ok := r.Reserve()
				if !ok {
					continue
				}
				c := Cmd{Op: OpMsg, Flags: FlagInline, Src: uint64(p), MsgID: uint64(i), Size: 0}
				Encode(cmd, &c, nil)
				r.Publish(pos)
				i++
			}
		}(p)
	}
	next := make([]uint64, producers)
	for got := 0; got < producers*each; {
		cmd := r.Peek()
		if cmd == nil {
			continue
		}
		var c Cmd
		if err := r.Decode(cmd, &c); err != nil {
			t.Fatal(err)
		}
		if c.Src >= producers || c.MsgID != next[c.Src] {
			t.Fatalf("producer %d: got %d want %d", c.Src, c.MsgID, next[c.Src])
		}
		next[c.Src]++
		r.Release()
		got++
	}
	wg.Wait()
}

func TestPoolTakeReturn(t *testing.T) {
	r := newTestRegion(t, testParams)
	seen := map[uint32]bool{}
	for i := 0; i < int(testParams.Bufs); i++ {
		idx, ok := r.GetBuf()
		if !ok || seen[idx] || len(r.Buf(idx)) != int(testParams.BufSize) {
			t.Fatalf("get %d: %d %v", i, idx, ok)
		}
		seen[idx] = true
	}
	if _, ok := r.GetBuf(); ok {
		t.Fatal("got a buffer from an empty pool")
	}
	if r.PutBuf(testParams.Bufs) || r.Buf(testParams.Bufs) != nil {
		t.Fatal("out-of-range index accepted")
	}
	for idx := range seen {
		if !r.PutBuf(idx) {
			t.Fatalf("put %d failed", idx)
		}
	}
	// Most recently returned first.
	idx, ok := r.GetBuf()
	if !ok {
		t.Fatal("get after put")
	}
	r.PutBuf(idx)
	if again, ok := r.GetBuf(); !ok || again != idx {
		t.Fatalf("got %d after returning %d; want the same (LIFO)", again, idx)
	}
}

// TestPoolConcurrent: buffers taken and returned by several goroutines
// are never held by two at once, and none is lost.
func TestPoolConcurrent(t *testing.T) {
	r := newTestRegion(t, testParams)
	var owner [4]atomic.Int32
	var wg sync.WaitGroup
	var bad atomic.Int32
	for g := 1; g <= 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				idx, ok := r.GetBuf()
				if !ok {
					continue
				}
				if !owner[idx].CompareAndSwap(0, int32(g)) {
					bad.Add(1)
				}
				owner[idx].Store(0)
				r.PutBuf(idx)
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d buffers handed out twice", bad.Load())
	}
	n := 0
	for {
		if _, ok := r.GetBuf(); !ok {
			break
		}
		n++
	}
	if n != int(testParams.Bufs) {
		t.Fatalf("%d buffers in the pool after the run; want %d", n, testParams.Bufs)
	}
}

func TestDecodeValidation(t *testing.T) {
	r := newTestRegion(t, testParams)
	cmd := make([]byte, testParams.SlotSize-8)
	var c Cmd
	bad := []Cmd{
		{Op: 0},
		{Op: 200},
		{Op: OpMsg, Flags: FlagInline, Len: 1000, Size: 1000},
		{Op: OpMsg, Len: 10, Size: 5},
		{Op: OpMsg, Len: 10, Size: 10, Buf: testParams.Bufs},
		{Op: OpMsg, Len: testParams.BufSize + 1, Size: 1 << 20},
	}
	for i, b := range bad {
		PutHeader(cmd, &b)
		if err := r.Decode(cmd, &c); err == nil {
			t.Errorf("case %d: %+v accepted", i, b)
		}
	}
	if err := r.Decode(cmd[:10], &c); err == nil {
		t.Error("short command accepted")
	}
}

// FuzzAttach: any header bytes are accepted only if the region they
// describe fits the mapping; using an accepted region never panics.
func FuzzAttach(f *testing.F) {
	f.Add(newTestRegion(f, testParams).Bytes()[:HeaderSize])
	f.Add(make([]byte, HeaderSize))
	f.Fuzz(func(t *testing.T, hdr []byte) {
		size, _ := testParams.Size()
		b := alignedBuf(int(size))
		copy(b, hdr)
		h, err := Attach(b)
		if err != nil {
			return
		}
		if h.Total > uint64(len(b)) {
			t.Fatalf("accepted a region of %d bytes in %d", h.Total, len(b))
		}
		r := NewRegion(b, h)
		exercise(r)
	})
}

// FuzzRing: a region whose ring, pool and buffer bytes are arbitrary is
// read and written without a panic or an access outside the mapping.
func FuzzRing(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint8(3))
	f.Fuzz(func(t *testing.T, garbage []byte, ops uint8) {
		r := newTestRegion(t, testParams)
		b := r.Bytes()
		// Spray the garbage over the control words and the rings.
		for i, v := range garbage {
			off := (i * 37) % (len(b) - HeaderSize)
			b[HeaderSize+off] = v
			if i < 256 {
				b[offClosing+i%320] = v
			}
		}
		for i := 0; i < int(ops%16)+1; i++ {
			exercise(r)
		}
	})
}

// exercise runs every operation once on r, checking only that the results
// stay in range.
func exercise(r *Region) {
	if pos, cmd, ok := r.Reserve(); ok {
		c := Cmd{Op: OpMsg, Flags: FlagInline, Size: 1}
		Encode(cmd, &c, []byte{1})
		r.Publish(pos)
	}
	for i := 0; i < 4; i++ {
		cmd := r.Peek()
		if cmd == nil {
			break
		}
		var c Cmd
		if r.Decode(cmd, &c) == nil && c.Flags&FlagInline == 0 && c.Len > 0 {
			buf := r.Buf(c.Buf)
			_ = buf[:c.Len]
		}
		r.Release()
	}
	if idx, ok := r.GetBuf(); ok {
		_ = r.Buf(idx)[0]
		r.PutBuf(idx)
	}
	r.Wake()
	r.Closing()
}

// FuzzDecode: the command decoder never panics and an accepted command's
// payload lies in the slot and its segment in a buffer.
func FuzzDecode(f *testing.F) {
	cmd := make([]byte, 248)
	c := Cmd{Op: OpTagged, Flags: FlagInline | FlagCQData, Tag: 7, Data: 9, Size: 3}
	Encode(cmd, &c, []byte("abc"))
	f.Add(cmd)
	c = Cmd{Op: OpMsg, Flags: FlagFirst, Len: 4096, Size: 10000, Buf: 3}
	PutHeader(cmd, &c)
	f.Add(append([]byte(nil), cmd...))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Cmd
		if err := decode(b, &c, testParams.Bufs, testParams.BufSize); err != nil {
			return
		}
		if c.Op != OpAck && c.Flags&FlagInline != 0 && len(c.Payload) != int(c.Len) {
			t.Fatalf("payload %d != len %d", len(c.Payload), c.Len)
		}
		if c.Op != OpAck && c.Flags&FlagInline == 0 && c.Len > 0 && (c.Buf >= testParams.Bufs || c.Len > testParams.BufSize) {
			t.Fatalf("segment out of range: %+v", c)
		}
		if c.Op != OpAck && uint64(c.Len) > c.Size {
			t.Fatalf("len > size: %+v", c)
		}
	})
}
