package shmring

import (
	"sync/atomic"
	"unsafe"
)

// u64At returns the 8-byte word at b[off:], which must be 8-byte aligned
// in memory (the region's layout guarantees it for every word it uses;
// the mapping is page-aligned). The slice expression bounds-checks off.
func u64At(b []byte, off uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&b[off:][:8][0]))
}

// u32At returns the 4-byte word at b[off:], 4-byte aligned.
func u32At(b []byte, off uint64) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&b[off:][:4][0]))
}

// aligned reports whether b's first byte is 64-byte aligned (a mapping
// is; a heap slice in a test may not be).
func aligned(b []byte) bool {
	return len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%64 == 0
}
