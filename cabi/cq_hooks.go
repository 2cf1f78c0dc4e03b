package main

/*
#include "gofab.h"
*/
import "C"

import (
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// Hooks for the Go tests of the queue objects (no cgo in _test files):
// they wrap a Go domain as a C one and call the CQ entry points as C would.

// qtDomain wraps d as a C domain; free releases the wrapper (not d).
func qtDomain(d *fabric.Domain) (dom unsafe.Pointer, free func()) {
	h, _ := handles.add(&goDomain{d: d})
	cd := C.gofab_domain_alloc(C.uint64_t(h), 0)
	return unsafe.Pointer(cd), func() { handles.remove(h); C.free(unsafe.Pointer(cd)) }
}

// qtFabric wraps f as a C fabric; free releases the wrapper (not f).
func qtFabric(f *fabric.Fabric) (fab unsafe.Pointer, free func()) {
	h, _ := handles.add(&goFabric{f: f})
	cf := C.gofab_fabric_alloc(C.uint64_t(h), 0, C.uint32_t(fabric.APIVersion))
	return unsafe.Pointer(cf), func() { handles.remove(h); C.free(unsafe.Pointer(cf)) }
}

// qtCQOpen opens a CQ on a qtDomain through the C entry point.
func qtCQOpen(dom unsafe.Pointer, format, waitObj int) (cq unsafe.Pointer, gcq *fabric.CQ, rc int) {
	return qtCQOpenSet(dom, format, waitObj, nil, 0)
}

// qtCQOpenSet is qtCQOpen with a wait set (FI_WAIT_SET) and a context.
func qtCQOpenSet(dom unsafe.Pointer, format, waitObj int, ws unsafe.Pointer, ctx uintptr) (cq unsafe.Pointer,
	gcq *fabric.CQ, rc int) {
	var attr C.struct_fi_cq_attr
	attr.format = C.enum_fi_cq_format(format)
	attr.wait_obj = C.enum_fi_wait_obj(waitObj)
	attr.wait_set = (*C.struct_fid_wait)(ws)
	var out *C.struct_fid_cq
	if rc := gofab_go_domain_cq_open((*C.struct_fid_domain)(dom), &attr, &out, C.uintptr_t(ctx)); rc != 0 {
		return nil, nil, int(rc)
	}
	g, _, _ := cqOf(out)
	return unsafe.Pointer(out), g.cq, 0
}

func qtCQRead(cq, buf unsafe.Pointer, count int) int {
	return int(gofab_go_cq_read((*C.struct_fid_cq)(cq), C.uintptr_t(uintptr(buf)), C.size_t(count), 0))
}

func qtCQClose(cq unsafe.Pointer) int { return int(gofab_go_cq_close((*C.struct_fid)(cq))) }

func qtMalloc(n int) unsafe.Pointer { return C.calloc(1, C.size_t(n)) }

func qtFree(p unsafe.Pointer) { C.free(p) }

// qtEntry is entry i of a C buffer of the given format, read back.
type qtEntry struct {
	ctx, buf              uintptr
	flags, len, data, tag uint64
}

func qtEntrySize(format int) int {
	return [...]int{C.sizeof_struct_fi_cq_entry, C.sizeof_struct_fi_cq_entry, C.sizeof_struct_fi_cq_msg_entry,
		C.sizeof_struct_fi_cq_data_entry, C.sizeof_struct_fi_cq_tagged_entry}[format]
}

func qtGetEntry(buf unsafe.Pointer, format, i int) qtEntry {
	p := unsafe.Add(buf, i*qtEntrySize(format))
	var e qtEntry
	e.ctx = getPtr(p) // op_context is the first member of every format
	if format >= C.FI_CQ_FORMAT_MSG {
		m := (*C.struct_fi_cq_msg_entry)(p)
		e.flags, e.len = uint64(m.flags), uint64(m.len)
	}
	if format >= C.FI_CQ_FORMAT_DATA {
		d := (*C.struct_fi_cq_data_entry)(p)
		e.buf, e.data = getPtr(unsafe.Pointer(&d.buf)), uint64(d.data)
	}
	if format == C.FI_CQ_FORMAT_TAGGED {
		e.tag = uint64((*C.struct_fi_cq_tagged_entry)(p).tag)
	}
	return e
}

// qtErr is the fi_cq_err_entry at buf, read back.
type qtErr struct {
	ctx, errData       uintptr
	len, olen, errSize uint64
	err                int
}

func qtCQReadErr(cq, buf unsafe.Pointer) int {
	return int(gofab_go_cq_readerr((*C.struct_fid_cq)(cq), C.uintptr_t(uintptr(buf)), 0))
}

func qtGetErr(buf unsafe.Pointer) qtErr {
	e := (*C.struct_fi_cq_err_entry)(buf)
	return qtErr{ctx: getPtr(buf), errData: getPtr(unsafe.Pointer(&e.err_data)), len: uint64(e.len),
		olen: uint64(e.olen), errSize: uint64(e.err_data_size), err: int(e.err)}
}

func qtWaitOpen(fab unsafe.Pointer) (unsafe.Pointer, int) {
	attr := C.struct_fi_wait_attr{wait_obj: C.FI_WAIT_FD}
	var out *C.struct_fid_wait
	rc := gofab_go_fabric_wait_open((*C.struct_fid_fabric)(fab), &attr, &out)
	return unsafe.Pointer(out), int(rc)
}

func qtWait(ws unsafe.Pointer, ms int) int {
	return int(gofab_go_wait_wait((*C.struct_fid_wait)(ws), C.int(ms)))
}

func qtWaitClose(ws unsafe.Pointer) int { return int(gofab_go_wait_close((*C.struct_fid)(ws))) }

func qtPollOpen(dom unsafe.Pointer) (unsafe.Pointer, int) {
	var attr C.struct_fi_poll_attr
	var out *C.struct_fid_poll
	rc := gofab_go_domain_poll_open((*C.struct_fid_domain)(dom), &attr, &out)
	return unsafe.Pointer(out), int(rc)
}

// qtPollAdd is fi_poll_add (add) or fi_poll_del of fid.
func qtPollAdd(ps, fid unsafe.Pointer, add bool) int {
	a := C.int(0)
	if add {
		a = 1
	}
	return int(gofab_go_poll_add((*C.struct_fid_poll)(ps), (*C.struct_fid)(fid), 0, a))
}

// qtPoll is fi_poll into ctxs (C memory of n pointers).
func qtPoll(ps, ctxs unsafe.Pointer, n int) int {
	return int(gofab_go_poll_poll((*C.struct_fid_poll)(ps), C.uintptr_t(uintptr(ctxs)), C.int(n)))
}

func qtPollClose(ps unsafe.Pointer) int { return int(gofab_go_poll_close((*C.struct_fid)(ps))) }

func qtCQSRead(cq, buf unsafe.Pointer, count, timeoutMS int) int {
	return int(gofab_go_cq_sread((*C.struct_fid_cq)(cq), C.uintptr_t(uintptr(buf)), C.size_t(count), 0, 0,
		C.int(timeoutMS)))
}

func qtCQSignal(cq unsafe.Pointer) int { return int(gofab_go_cq_signal((*C.struct_fid_cq)(cq))) }
