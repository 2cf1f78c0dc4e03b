package sys

import (
	"math"
	"sync/atomic"
	"testing"
)

func TestShmWord(t *testing.T) {
	b := make([]byte, 64) // 8-byte aligned by the allocator
	for _, off := range []int{-4, -1, 1, 2, 3, 61, 62, 64, 68, math.MaxInt} {
		if ShmWord(b, off) != nil {
			t.Errorf("ShmWord(off %d) not nil", off)
		}
	}
	if ShmWord(nil, 0) != nil || ShmWord(b[:3], 0) != nil {
		t.Error("ShmWord of a short slice not nil")
	}
	w := ShmWord(b, 60)
	atomic.StoreUint32(w, 0x01020304)
	if b[60] != 4 && b[63] != 4 { // either byte order
		t.Fatalf("word not at offset 60: % x", b[56:])
	}
	if ShmWord(b, 0) == nil || ShmWord(b[:4], 0) == nil {
		t.Fatal("aligned word in range refused")
	}
}
