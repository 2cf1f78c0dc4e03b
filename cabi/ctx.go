package main

import "unsafe"

// User contexts (void *) cross into Go as uintptr, never as unsafe.Pointer
// parameters: C code may pass any integer as a context, and the Go runtime
// throws ("invalid pointer found on stack") on a pointer-typed value below
// 4096. C trampolines therefore cast void * to uintptr_t before calling Go,
// and the value returned to C is a uintptr_t cast back to void *.

// minPointer is the smallest value carried as unsafe.Pointer (the runtime's
// minLegalPointer).
const minPointer = 4096

// smallCtx is a context below minPointer: an integer, not a pointer.
// Values below 256 box without allocating.
type smallCtx uintptr

// ctxToGo converts a C context to the Go API's ctx any without allocating:
// 0 is nil, values from 4096 are an unsafe.Pointer (to C memory, or not a
// pointer at all: the GC ignores values outside the Go heap, and a C
// address is never inside it), smaller ones a smallCtx.
func ctxToGo(u uintptr) any {
	switch {
	case u == 0:
		return nil
	case u < minPointer:
		return smallCtx(u)
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(&u))
}

// ctxToC reverses ctxToGo: what C gave comes back unchanged. Any other
// value (a Go program's context cannot reach C objects) is 0 (NULL).
func ctxToC(v any) uintptr {
	switch c := v.(type) {
	case unsafe.Pointer:
		return uintptr(c)
	case smallCtx:
		return uintptr(c)
	}
	return 0
}
