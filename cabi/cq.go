package main

/*
#include "gofab.h"
*/
import "C"

import (
	"sync"
	"time"
	"unsafe"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// goCQ is the handle-table object of a C completion queue.
//
// Reads go through a scratch array of Go entries, converted into the C
// buffer in the CQ's format: no allocation per read. The CQ's own scratch
// is guarded by mu (FI_THREAD_SAFE); a reader that finds it busy (another
// thread reading, or blocked in fi_cq_sread) takes one from a pool.
type goCQ struct {
	cq       *fabric.CQ
	format   fabric.CQFormat // as opened (never CQFormatUnspec)
	waitObj  C.enum_fi_wait_obj
	waitCond fabric.CQWaitCond
	legacy   bool // API < 1.5 (see legacyErrData)

	mu sync.Mutex
	sc cqScratch

	errMu  sync.Mutex
	errEnt fabric.CQErrEntry
	errBuf cBuf // err_data handed to C when it gave no buffer
}

// cqBatch is the most entries one read converts; a larger count reads
// this many (fi_cq_read may return fewer than count).
const cqBatch = 64

type cqScratch struct {
	e   [cqBatch]fabric.CQEntry
	src [cqBatch]fabric.Addr
}

var cqScratchPool = sync.Pool{New: func() any { return new(cqScratch) }}

func (g *goCQ) bindTarget() fabric.Bindable { return g.cq }

// cqOf returns the object of a C CQ; false for NULL, another class, or a
// stale or forged handle. No allocation (data path).
func cqOf(cq *C.struct_fid_cq) (*goCQ, uint64, bool) {
	if cq == nil || cq.fid.fclass != C.FI_CLASS_CQ {
		return nil, 0, false
	}
	h := uint64((*C.struct_gofab_cq)(unsafe.Pointer(cq)).h)
	g, ok := lookup[*goCQ](h)
	return g, h, ok
}

//export gofab_go_domain_cq_open
func gofab_go_domain_cq_open(cd *C.struct_fid_domain, attr *C.struct_fi_cq_attr, out **C.struct_fid_cq,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_cq_open", &rc)
	if cd == nil || attr == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	d, _, ok := domainOf(&cd.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	wo, ws, rc := waitFromC(attr.wait_obj, attr.wait_set)
	if rc != 0 {
		return rc
	}
	a := fabric.CQAttr{
		Size:            uint64(attr.size),
		Flags:           fabric.Flags(attr.flags),
		Format:          fabric.CQFormat(attr.format),
		WaitObj:         wo,
		WaitSet:         ws,
		SignalingVector: int(attr.signaling_vector),
		WaitCond:        fabric.CQWaitCond(attr.wait_cond),
	}
	cq, err := d.d.OpenCQ(&a)
	if err != nil {
		return errno(err)
	}
	g := &goCQ{cq: cq, format: cq.Attr().Format, waitObj: resolvedWait(attr.wait_obj), waitCond: a.WaitCond,
		legacy: legacyErrData(d.d.Fabric())}
	h, ok := handles.add(g)
	if !ok {
		g.closeGo()
		return -C.FI_ENOMEM
	}
	cc := C.gofab_cq_alloc(C.uint64_t(h), ctx)
	if cc == nil {
		handles.remove(h)
		g.closeGo()
		return -C.FI_ENOMEM
	}
	*out = &cc.cq
	return 0
}

// closeGo closes the Go CQ (which leaves its wait set; -FI_EBUSY while in
// a poll set or bound).
func (g *goCQ) closeGo() error { return g.cq.Close() }

//export gofab_go_cq_close
func gofab_go_cq_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	g, h, ok := cqOf((*C.struct_fid_cq)(unsafe.Pointer(fid)))
	if !ok {
		return -C.FI_EINVAL
	}
	if err := g.closeGo(); err != nil {
		return errno(err)
	}
	handles.remove(h)
	freeReports(g)
	g.errMu.Lock()
	g.errBuf.free()
	g.errMu.Unlock()
	C.free(unsafe.Pointer(fid))
	return 0
}

// gofab_go_cq_read is fi_cq_read (src 0) and fi_cq_readfrom.
//
//export gofab_go_cq_read
func gofab_go_cq_read(cq *C.struct_fid_cq, buf C.uintptr_t, count C.size_t, src C.uintptr_t) (rc C.ssize_t) {
	defer recoverRC("fi_cq_read", &rc)
	g, _, ok := cqOf(cq)
	if !ok {
		return -C.FI_EINVAL
	}
	return g.read(uintptr(buf), count, uintptr(src), false, 0, 0)
}

// gofab_go_cq_sread is fi_cq_sread (src 0) and fi_cq_sreadfrom.
//
//export gofab_go_cq_sread
func gofab_go_cq_sread(cq *C.struct_fid_cq, buf C.uintptr_t, count C.size_t, src C.uintptr_t,
	cond C.uintptr_t, timeout C.int) (rc C.ssize_t) {
	defer recoverRC("fi_cq_sread", &rc)
	g, _, ok := cqOf(cq)
	if !ok {
		return -C.FI_EINVAL
	}
	threshold := 1
	if g.waitCond == provider.CQCondThreshold && uintptr(cond) >= minPointer {
		t := uint64(*(*C.size_t)(cmem(uintptr(cond))))
		threshold = int(min(t, cqBatch))
	}
	return g.read(uintptr(buf), count, uintptr(src), true, threshold, timeoutFromC(timeout))
}

func (g *goCQ) read(buf uintptr, count C.size_t, src uintptr, block bool, threshold int,
	timeout time.Duration) C.ssize_t {
	if count == 0 && !block {
		// fi_cq_read(cq, NULL, 0): progress and state only.
		if _, err := g.cq.Read(nil); err != nil {
			return fastErrno(err)
		}
		return 0
	}
	if count == 0 || buf < minPointer || (src != 0 && src < minPointer) {
		return -C.FI_EINVAL
	}
	s := &g.sc
	if g.mu.TryLock() {
		defer g.mu.Unlock()
	} else {
		s = cqScratchPool.Get().(*cqScratch)
		defer cqScratchPool.Put(s)
	}
	e := s.e[:min(count, cqBatch)]
	var (
		n   int
		err error
	)
	switch {
	case block && src != 0:
		n, err = g.cq.SReadFrom(e, s.src[:len(e)], threshold, timeout)
	case block:
		n, err = g.cq.SRead(e, threshold, timeout)
	case src != 0:
		n, err = g.cq.ReadFrom(e, s.src[:len(e)])
	default:
		n, err = g.cq.Read(e)
	}
	if n > 0 {
		g.toC(e[:n]) // buffered receives' reports (bufrecv.go)
		g.put(cmem(buf), e[:n])
		if src != 0 {
			copy(unsafe.Slice((*fabric.Addr)(cmem(src)), n), s.src[:n])
		}
		clear(e[:n]) // no context or buffer outlives the call
		return C.ssize_t(n)
	}
	if err != nil {
		return fastErrno(err)
	}
	return -C.FI_EAGAIN
}

// put writes entries e into the C buffer at p in the CQ's format.
func (g *goCQ) put(p unsafe.Pointer, e []fabric.CQEntry) {
	switch g.format {
	case provider.CQFormatContext:
		out := unsafe.Slice((*C.struct_fi_cq_entry)(p), len(e))
		for i := range e {
			putPtr(unsafe.Pointer(&out[i].op_context), ctxToC(e[i].OpContext))
		}
	case provider.CQFormatMsg:
		out := unsafe.Slice((*C.struct_fi_cq_msg_entry)(p), len(e))
		for i := range e {
			o := &out[i]
			putPtr(unsafe.Pointer(&o.op_context), ctxToC(e[i].OpContext))
			o.flags, o.len = C.uint64_t(e[i].Flags), C.size_t(e[i].Len)
		}
	case provider.CQFormatData:
		out := unsafe.Slice((*C.struct_fi_cq_data_entry)(p), len(e))
		for i := range e {
			o := &out[i]
			putPtr(unsafe.Pointer(&o.op_context), ctxToC(e[i].OpContext))
			o.flags, o.len = C.uint64_t(e[i].Flags), C.size_t(e[i].Len)
			putPtr(unsafe.Pointer(&o.buf), bufAddr(e[i].Buf))
			o.data = C.uint64_t(e[i].Data)
		}
	default: // CQFormatTagged
		out := unsafe.Slice((*C.struct_fi_cq_tagged_entry)(p), len(e))
		for i := range e {
			o := &out[i]
			putPtr(unsafe.Pointer(&o.op_context), ctxToC(e[i].OpContext))
			o.flags, o.len = C.uint64_t(e[i].Flags), C.size_t(e[i].Len)
			putPtr(unsafe.Pointer(&o.buf), bufAddr(e[i].Buf))
			o.data, o.tag = C.uint64_t(e[i].Data), C.uint64_t(e[i].Tag)
		}
	}
}

// gofab_go_cq_readerr is fi_cq_readerr. err_data per fi_cq(3): for API >=
// 1.5 with err_data_size > 0 the data is copied into the caller's
// err_data; otherwise err_data points to a buffer of the CQ, valid until
// the next readerr (or close).
//
//export gofab_go_cq_readerr
func gofab_go_cq_readerr(cq *C.struct_fid_cq, buf C.uintptr_t, flags C.uint64_t) (rc C.ssize_t) {
	defer recoverRC("fi_cq_readerr", &rc)
	g, _, ok := cqOf(cq)
	if !ok || uintptr(buf) < minPointer {
		return -C.FI_EINVAL
	}
	if flags != 0 {
		return -C.FI_EBADFLAGS
	}
	ce := (*C.struct_fi_cq_err_entry)(cmem(uintptr(buf)))
	g.errMu.Lock()
	defer g.errMu.Unlock()
	e := &g.errEnt
	*e = fabric.CQErrEntry{}
	user := false
	if !g.legacy && ce.err_data_size > 0 {
		if p := getPtr(unsafe.Pointer(&ce.err_data)); p >= minPointer {
			e.ErrData, user = cBytes(p, int(ce.err_data_size)), true
		}
	}
	if err := g.cq.ReadErr(e); err != nil {
		*e = fabric.CQErrEntry{}
		return fastErrno(err)
	}
	putPtr(unsafe.Pointer(&ce.op_context), ctxToC(e.OpContext))
	ce.flags, ce.len = C.uint64_t(e.Flags), C.size_t(e.Len)
	putPtr(unsafe.Pointer(&ce.buf), bufAddr(e.Buf))
	ce.data, ce.tag, ce.olen = C.uint64_t(e.Data), C.uint64_t(e.Tag), C.size_t(e.Olen)
	ce.err, ce.prov_errno = C.int(e.Err), C.int(e.ProvErrno)
	switch {
	case user:
		ce.err_data_size = C.size_t(len(e.ErrData))
	case g.legacy:
		putPtr(unsafe.Pointer(&ce.err_data), g.errBuf.set(e.ErrData))
	default:
		putPtr(unsafe.Pointer(&ce.err_data), g.errBuf.set(e.ErrData))
		ce.err_data_size = C.size_t(len(e.ErrData))
	}
	*e = fabric.CQErrEntry{}
	return 1
}

//export gofab_go_cq_signal
func gofab_go_cq_signal(cq *C.struct_fid_cq) (rc C.int) {
	defer recoverRC("fi_cq_signal", &rc)
	g, _, ok := cqOf(cq)
	if !ok {
		return -C.FI_EINVAL
	}
	return errno(g.cq.Signal())
}

// Every wrapper an endpoint can be bound to implements bindTarget.
var _ = []bindTarget{(*goCQ)(nil), (*goCntr)(nil), (*goEQ)(nil), (*goAV)(nil)}
