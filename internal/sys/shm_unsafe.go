package sys

import "unsafe"

// ShmWord returns a pointer to the 32-bit word at byte offset off of b (a
// shared mapping from ShmFile.Bytes), for FutexWait, FutexWake and
// sync/atomic, or nil when the word does not lie inside b or off is not a
// multiple of 4 (relative to an aligned b: mappings are page aligned). The
// pointer is valid until the mapping is closed.
func ShmWord(b []byte, off int) *uint32 {
	if off < 0 || off > len(b)-4 || len(b) < 4 {
		return nil
	}
	p := unsafe.Pointer(&b[off])
	if uintptr(p)&3 != 0 {
		return nil
	}
	return (*uint32)(p)
}
