package rxmwire

import (
	"bytes"
	"testing"
)

func TestAtomicTag(t *testing.T) {
	// FI_UINT64 (7), FI_SUM (2), 1 target: bytes 07 02 01 of op.tag.
	tag := AtomicTag(7, 2, 1)
	var hb [HeaderSize]byte
	(&Header{Type: TypeAtomic, Op: OpAtomicFetch, Tag: tag}).Put(hb[:])
	if !bytes.Equal(hb[56:64], []byte{7, 2, 1, 0, 0, 0, 0, 0}) || hb[34] != OpAtomicFetch || hb[1] != TypeAtomic {
		t.Fatalf("header % x", hb)
	}
	if d, o, c := SplitAtomicTag(tag); d != 7 || o != 2 || c != 1 {
		t.Fatalf("split %d %d %d", d, o, c)
	}
}

func TestAtomicIOC(t *testing.T) {
	var b [AtomicReqSize]byte
	in := []AtomicIOC{{Addr: 8, Count: 2, Key: 0x55}, {Addr: 0, Count: 3, Key: 9}}
	PutAtomicIOC(b[:], in)
	var out [MaxAtomicIOC]AtomicIOC
	n, err := ParseAtomicIOC(b[:], 2, &out)
	if err != nil || n != 5 || out[0] != in[0] || out[1] != in[1] {
		t.Fatalf("parse %d %v %+v", n, err, out)
	}
	if !bytes.Equal(b[48:], make([]byte, 48)) {
		t.Fatal("unused entries not zero")
	}
	for _, c := range []int{0, 5} {
		if _, err := ParseAtomicIOC(b[:], c, &out); err != ErrAtomicCount {
			t.Fatalf("count %d: %v", c, err)
		}
	}
	if _, err := ParseAtomicIOC(b[:10], 1, &out); err != ErrShort {
		t.Fatalf("short: %v", err)
	}
	PutAtomicIOC(b[:], []AtomicIOC{{Count: ^uint64(0)}})
	if _, err := ParseAtomicIOC(b[:], 1, &out); err != ErrAtomicCount {
		t.Fatalf("huge count: %v", err)
	}
}

func TestAtomicResp(t *testing.T) {
	b := make([]byte, AtomicRespSize+4)
	PutAtomicResp(b, -13, 4) // -FI_EACCES, as rxm sends it: htonl
	if !bytes.Equal(b[:8], []byte{0xff, 0xff, 0xff, 0xf3, 0, 0, 0, 4}) {
		t.Fatalf("% x", b[:8])
	}
	st, res, err := ParseAtomicResp(b)
	if err != nil || st != -13 || len(res) != 4 {
		t.Fatalf("%d %d %v", st, len(res), err)
	}
	if _, _, err := ParseAtomicResp(b[:9]); err != ErrShort {
		t.Fatalf("length mismatch: %v", err)
	}
}

// FuzzAtomic drives the atomic parsers over arbitrary bytes.
func FuzzAtomic(f *testing.F) {
	var b [AtomicReqSize]byte
	PutAtomicIOC(b[:], []AtomicIOC{{Addr: 8, Count: 2, Key: 0x55}})
	f.Add(b[:], 1)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		var ioc [MaxAtomicIOC]AtomicIOC
		if total, err := ParseAtomicIOC(b, n, &ioc); err == nil {
			var out [AtomicReqSize]byte
			PutAtomicIOC(out[:], ioc[:n])
			var back [MaxAtomicIOC]AtomicIOC
			if t2, err := ParseAtomicIOC(out[:], n, &back); err != nil || t2 != total || back != ioc {
				t.Fatalf("round trip")
			}
		}
		if st, res, err := ParseAtomicResp(b); err == nil {
			out := make([]byte, AtomicRespSize+len(res))
			PutAtomicResp(out, st, uint32(len(res)))
			copy(out[AtomicRespSize:], res)
			if !bytes.Equal(out, b) {
				t.Fatalf("resp round trip")
			}
		}
	})
}
