package main

/*
#include <stdlib.h>
#include <string.h>
#include "gofab.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// Buffered receives (FI_BUFFERED_RECV, fi_msg(3) "Buffered Receives")
// through the plugin. A report's completion carries, as op_context, a
// struct fi_recv_context allocated in C memory (ep: the receiving
// endpoint's fid, or NULL for a tagged message; context: NULL, or the
// tagged receive's context), and, as buf, a copy in C memory of the bytes
// the provider shows (C may not keep pointers into Go memory). The
// application claims or discards the message with fi_recvmsg /
// fi_trecvmsg, FI_CLAIM or FI_DISCARD, and that struct as msg->context;
// its context member may be changed before, and the claim's completion
// carries it. Once claimed or discarded the struct and the copy are
// freed (they must not be used again); those of messages never claimed
// are freed when the CQ that reported them closes.
//
// The mode is offered when the application's hints have FI_BUFFERED_RECV
// in their mode, unless they have every mode bit set: programs that pass
// ~0 (fabtests, and this module's own C tests) say they accept every mode
// but do not handle buffered receives.

// cRecvReport is a report handed to C: the Go RecvContext behind the C
// struct, the C copy of its buffer, and the CQ that reported it.
type cRecvReport struct {
	rc  *fabric.RecvContext
	buf unsafe.Pointer // C memory, or nil
	cq  *goCQ
}

// bufReports maps a C struct fi_recv_context * (uintptr) to its report.
var bufReports sync.Map

// bufferedModeWanted reports whether hints' mode (as C gave it) asks for
// FI_BUFFERED_RECV: the bit set, not as part of all ones.
func bufferedModeWanted(mode C.uint64_t) bool {
	return mode&C.FI_BUFFERED_RECV != 0 && mode != ^C.uint64_t(0)
}

// toC converts the reports among entries e (read from g) for C: OpContext
// becomes the C struct fi_recv_context (as an unsafe.Pointer, which
// ctxToC hands over unchanged) and Buf the C copy. An entry whose C
// memory cannot be allocated keeps a NULL context and no buffer (the
// message stays with the provider until the endpoint closes).
func (g *goCQ) toC(e []fabric.CQEntry) {
	for i := range e {
		rc, ok := e[i].OpContext.(*fabric.RecvContext)
		if !ok || rc == nil {
			continue
		}
		e[i].OpContext = nil
		r := &cRecvReport{rc: rc, cq: g}
		if n := len(e[i].Buf); n > 0 {
			if r.buf = C.malloc(C.size_t(n)); r.buf == nil {
				e[i].Buf = nil
				continue
			}
			copy(unsafe.Slice((*byte)(r.buf), n), e[i].Buf)
		}
		cr := (*C.struct_fi_recv_context)(C.calloc(1, C.sizeof_struct_fi_recv_context))
		if cr == nil {
			C.free(r.buf)
			e[i].Buf = nil
			continue
		}
		if rc.EP != nil {
			putPtr(unsafe.Pointer(&cr.ep), uintptr(fidOf(rc.EP)))
		}
		putPtr(unsafe.Pointer(&cr.context), ctxToC(rc.Context))
		bufReports.Store(uintptr(unsafe.Pointer(cr)), r)
		e[i].OpContext = unsafe.Pointer(cr)
		if r.buf != nil {
			e[i].Buf = unsafe.Slice((*byte)(r.buf), len(e[i].Buf))
		}
	}
}

// freeReport frees the C memory of report r at C address p.
func freeReport(p uintptr, r *cRecvReport) {
	C.free(r.buf)
	C.free(cptr(p))
}

// freeReports frees the reports of CQ g that C never claimed nor
// discarded (g is closing: the endpoints that reported them are closed).
func freeReports(g *goCQ) {
	bufReports.Range(func(k, v any) bool {
		if r := v.(*cRecvReport); r.cq == g {
			if _, ok := bufReports.LoadAndDelete(k); ok {
				freeReport(k.(uintptr), r)
			}
		}
		return true
	})
}

// claimMsg is fi_recvmsg / fi_trecvmsg with FI_CLAIM or FI_DISCARD: when
// m's context is the C struct fi_recv_context of a report this plugin
// made, the report is claimed or discarded. Any other context is the
// application's own, as in fi_tagged(3)'s FI_PEEK | FI_CLAIM followed by
// FI_CLAIM (or FI_DISCARD) with the same context: the call goes to Go as
// any receive does, and the Go call answers for a context it does not
// know (FI_EINVAL, or FI_EBADFLAGS on an endpoint without the mode).
func (g *goEP) claimMsg(x *C.struct_gofab_xfer, m *fabric.Msg, f fabric.Flags) error {
	p := uintptr(x.context)
	v, ok := bufReports.LoadAndDelete(p)
	if !ok {
		return g.post(x, m, f)
	}
	r := v.(*cRecvReport)
	cr := (*C.struct_fi_recv_context)(cptr(p))
	r.rc.Context = ctxToGo(getPtr(unsafe.Pointer(&cr.context)))
	m.Context = r.rc
	if err := g.post(x, m, f); err != nil {
		bufReports.Store(p, r) // still C's to claim (FI_EAGAIN), or not this endpoint's
		return err
	}
	freeReport(p, r)
	return nil
}

// post is the receive of a claim or discard.
func (g *goEP) post(x *C.struct_gofab_xfer, m *fabric.Msg, f fabric.Flags) error {
	if x.kind == C.GOFAB_XK_TRECV {
		return g.ep.TRecvMsg(m, f)
	}
	return g.ep.RecvMsg(m, f)
}
