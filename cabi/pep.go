package main

/*
#include "gofab.h"
*/
import "C"

import (
	"reflect"
	"sync"
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// Passive endpoints (struct gofab_pep) and connection requests (struct
// gofab_connreq), and fi_info.handle both ways.
//
// fi_info.handle <-> Info.Handle:
//   - a passive endpoint's fid <-> its *fabric.PassiveEndpoint (the info
//     of fi_getinfo hints or fi_endpoint naming the pep whose address an
//     endpoint adopts);
//   - an FI_CONNREQ event's info carries a struct gofab_connreq (class
//     FI_CLASS_CONNREQ) whose handle names the Go connection request
//     (Info.Handle of the Go event). One C struct per Go request: an EQ
//     read with FI_PEEK and the read after it give the same fid.
//     It is freed when the request is consumed: by fi_reject, by fi_accept
//     on the endpoint opened from it, or when that endpoint closes.
//     A request neither accepted nor rejected stays allocated (as the C
//     tcp provider's connection handles do); core's fi_freeinfo does not
//     reach providers, so freeing the info cannot free it.

// goPEP is the handle-table object of a passive endpoint.
type goPEP struct {
	pep *fabric.PassiveEndpoint
}

func pepOf(fid *C.struct_fid) (*goPEP, uint64, bool) {
	if fid == nil || fid.fclass != C.FI_CLASS_PEP {
		return nil, 0, false
	}
	h := uint64((*C.struct_gofab_pep)(unsafe.Pointer(fid)).h)
	p, ok := lookup[*goPEP](h)
	return p, h, ok
}

//export gofab_go_fabric_passive_ep
func gofab_go_fabric_passive_ep(cf *C.struct_fid_fabric, info *C.struct_fi_info, out **C.struct_fid_pep,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_passive_ep", &rc)
	if cf == nil || info == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	f, _, ok := fabricOf(&cf.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	gi, err := infoFromC(info)
	if err != nil {
		return errno(err)
	}
	pep, err := f.f.OpenPassiveEndpoint(gi)
	if err != nil {
		return errno(err)
	}
	h, ok := handles.add(&goPEP{pep: pep})
	if !ok {
		_ = pep.Close()
		return -C.FI_ENOMEM
	}
	cp := C.gofab_pep_alloc(C.uint64_t(h), ctx)
	if cp == nil {
		handles.remove(h)
		_ = pep.Close()
		return -C.FI_ENOMEM
	}
	setFID(pep, unsafe.Pointer(cp))
	*out = &cp.pep
	return 0
}

//export gofab_go_pep_close
func gofab_go_pep_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	p, h, ok := pepOf(fid)
	if !ok {
		return -C.FI_EINVAL
	}
	if err := p.pep.Close(); err != nil {
		return errno(err)
	}
	delFID(p.pep)
	handles.remove(h)
	C.free(unsafe.Pointer(fid))
	return 0
}

//export gofab_go_pep_bind
func gofab_go_pep_bind(fid, bfid *C.struct_fid, flags C.uint64_t) (rc C.int) {
	defer recoverRC("fi_pep_bind", &rc)
	p, _, ok := pepOf(fid)
	if !ok {
		return -C.FI_EINVAL
	}
	eq, ok := bindObj(bfid).(*fabric.EQ)
	if !ok {
		return -C.FI_EINVAL
	}
	return errno(p.pep.Bind(eq, fabric.Flags(flags)))
}

//export gofab_go_pep_listen
func gofab_go_pep_listen(cp *C.struct_fid_pep) (rc C.int) {
	defer recoverRC("fi_listen", &rc)
	if cp == nil {
		return -C.FI_EINVAL
	}
	p, _, ok := pepOf(&cp.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	return errno(p.pep.Listen())
}

// gofab_go_pep_control is fi_control on a passive endpoint: FI_BACKLOG
// (arg: int *) is PassiveEndpoint.SetBacklog; other commands FI_ENOSYS.
//
//export gofab_go_pep_control
func gofab_go_pep_control(fid *C.struct_fid, command C.int, arg C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_control", &rc)
	p, _, ok := pepOf(fid)
	if !ok {
		return -C.FI_EINVAL
	}
	if command != C.FI_BACKLOG {
		return -C.FI_ENOSYS
	}
	if arg < minPointer {
		return -C.FI_EINVAL
	}
	return errno(p.pep.SetBacklog(int(*(*C.int)(cptr(uintptr(arg))))))
}

//export gofab_go_pep_reject
func gofab_go_pep_reject(cp *C.struct_fid_pep, handle *C.struct_fid, param C.uintptr_t, paramlen C.size_t) (rc C.int) {
	defer recoverRC("fi_reject", &rc)
	if cp == nil {
		return -C.FI_EINVAL
	}
	p, _, ok := pepOf(&cp.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	cr := connReqOf(handle)
	if cr == nil {
		return -C.FI_EINVAL
	}
	data, ok := cmData(param, paramlen)
	if !ok {
		return -C.FI_EINVAL
	}
	if err := p.pep.Reject(cr.req, data); err != nil {
		return errno(err)
	}
	freeConnReq(cr)
	return 0
}

// ---- connection requests ----

// goConnReq is the handle-table object of a struct gofab_connreq.
type goConnReq struct {
	req any
	c   *C.struct_gofab_connreq
	h   uint64
}

var connReqs struct {
	mu sync.Mutex
	m  map[any]*goConnReq // Go request -> its C struct, while not consumed
}

// connReqToC returns the C fid of Go connection request req, allocating
// it on first use; nil when memory runs out or req cannot be a map key.
func connReqToC(req any) *C.struct_fid {
	if t := reflect.TypeOf(req); t == nil || !t.Comparable() {
		return nil
	}
	connReqs.mu.Lock()
	defer connReqs.mu.Unlock()
	if cr, ok := connReqs.m[req]; ok {
		return &cr.c.fid
	}
	cr := &goConnReq{req: req}
	h, ok := handles.add(cr)
	if !ok {
		return nil
	}
	c := C.gofab_connreq_alloc(C.uint64_t(h))
	if c == nil {
		handles.remove(h)
		return nil
	}
	cr.c, cr.h = c, h
	if connReqs.m == nil {
		connReqs.m = map[any]*goConnReq{}
	}
	connReqs.m[req] = cr
	return &c.fid
}

// connReqOf returns the live connection request of fid, or nil.
func connReqOf(fid *C.struct_fid) *goConnReq {
	if fid == nil || fid.fclass != C.FI_CLASS_CONNREQ {
		return nil
	}
	cr, _ := lookup[*goConnReq](uint64((*C.struct_gofab_connreq)(unsafe.Pointer(fid)).h))
	return cr
}

// freeConnReq frees cr's C struct and handle (once; nil is a no-op).
func freeConnReq(cr *goConnReq) {
	if cr == nil {
		return
	}
	connReqs.mu.Lock()
	defer connReqs.mu.Unlock()
	if connReqs.m[cr.req] != cr {
		return
	}
	delete(connReqs.m, cr.req)
	handles.remove(cr.h)
	C.free(unsafe.Pointer(cr.c))
}

// handleToC is Info.Handle -> fi_info.handle (infoToC).
func handleToC(v any) *C.struct_fid {
	switch h := v.(type) {
	case nil:
		return nil
	case *fabric.PassiveEndpoint:
		return (*C.struct_fid)(fidOf(h))
	}
	return connReqToC(v)
}

// handleFromC is fi_info.handle -> Info.Handle (infoFromC): our passive
// endpoint or connection request; a stale one is an error, a fid of any
// other class is not ours to interpret and is ignored.
func handleFromC(fid *C.struct_fid) (any, bool) {
	if fid == nil {
		return nil, true
	}
	switch fid.fclass {
	case C.FI_CLASS_PEP:
		p, _, ok := pepOf(fid)
		if !ok {
			return nil, false
		}
		return p.pep, true
	case C.FI_CLASS_CONNREQ:
		cr := connReqOf(fid)
		if cr == nil {
			return nil, false
		}
		return cr.req, true
	}
	return nil, true
}
