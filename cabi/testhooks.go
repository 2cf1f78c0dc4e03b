package main

/*
#include "gofab.h"
*/
import "C"

import (
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// Hooks for the Go tests of the endpoint side (no cgo in _test files):
// they wrap Go API objects as the plugin does and call the inline fi_*
// calls of C, so a test crosses Go -> C -> plugin as an application does.

// testWrapEP hands ep to C as fi_endpoint would; the result is its struct
// fid_ep *, closed with testCloseEP.
func testWrapEP(ep *fabric.Endpoint) unsafe.Pointer {
	_, ce := wrapEP(ep, C.FI_CLASS_EP, 0)
	return unsafe.Pointer(ce)
}

// testCloseEP is fi_close of a wrapped endpoint.
func testCloseEP(fid unsafe.Pointer) int {
	return int(gofab_go_ep_close((*C.struct_fid)(fid)))
}

// testSend is fi_send(ep, buf, n, NULL, 0, ctx).
func testSend(fid, buf unsafe.Pointer, n int, ctx uintptr) int {
	return int(C.gofab_test_send((*C.struct_fid_ep)(fid), buf, C.size_t(n), C.uintptr_t(ctx)))
}

// testRecv is fi_recv(ep, buf, n, NULL, FI_ADDR_UNSPEC, ctx).
func testRecv(fid, buf unsafe.Pointer, n int, ctx uintptr) int {
	return int(C.gofab_test_recv((*C.struct_fid_ep)(fid), buf, C.size_t(n), C.uintptr_t(ctx)))
}

// testSendV is fi_sendv(ep, iov, NULL, count, 0, ctx); iov is a C struct
// iovec array (testIOV).
func testSendV(fid, iov unsafe.Pointer, count int, ctx uintptr) int {
	return int(C.gofab_test_sendv((*C.struct_fid_ep)(fid), (*C.struct_iovec)(iov), C.size_t(count),
		C.uintptr_t(ctx)))
}

// testMalloc returns n bytes of C memory (free with testFree).
func testMalloc(n int) unsafe.Pointer { return C.calloc(1, C.size_t(n)) }

func testFree(p unsafe.Pointer) { C.free(p) }

// testIOV returns a C struct iovec array of the given buffers.
func testIOV(bufs []unsafe.Pointer, lens []int) unsafe.Pointer {
	p := C.calloc(C.size_t(len(bufs)), C.sizeof_struct_iovec)
	v := unsafe.Slice((*C.struct_iovec)(p), len(bufs))
	for i := range bufs {
		v[i].iov_base = bufs[i]
		v[i].iov_len = C.size_t(lens[i])
	}
	return p
}

// cLayouts reports the C sizes and offsets the data path relies on (the
// Go views of struct iovec, fi_ioc, fi_rma_iov, fi_rma_ioc).
func cLayouts() map[string]uintptr {
	var v C.struct_fi_rma_iov
	var c C.struct_fi_rma_ioc
	return map[string]uintptr{
		"iovec":          C.sizeof_struct_iovec,
		"fi_ioc":         C.sizeof_struct_fi_ioc,
		"fi_rma_iov":     C.sizeof_struct_fi_rma_iov,
		"fi_rma_iov.len": unsafe.Offsetof(v.len),
		"fi_rma_iov.key": unsafe.Offsetof(v.key),
		"fi_rma_ioc":     C.sizeof_struct_fi_rma_ioc,
		"fi_rma_ioc.cnt": unsafe.Offsetof(c.count),
		"fi_rma_ioc.key": unsafe.Offsetof(c.key),
	}
}
