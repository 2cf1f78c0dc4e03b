package main

/*
#include "gofab.h"
*/
import "C"

import (
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// Shared receive contexts (struct gofab_ep of class FI_CLASS_SRX_CTX),
// shared transmit contexts (struct gofab_stx), scalable endpoints (struct
// gofab_ep of class FI_CLASS_SEP) and their contexts, and the domain's
// atomic query. Each calls the Go API and returns its answer as is (our
// providers offer no scalable endpoints or shared transmit contexts: the
// Go API's ErrNoSys reaches C as -FI_ENOSYS).

// goSRX is the handle-table object of a shared receive context.
type goSRX struct {
	srx   *fabric.SRX
	rxIOV int
}

func (g *goSRX) bindTarget() fabric.Bindable { return g.srx }

// goSTX is the handle-table object of a shared transmit context.
type goSTX struct {
	stx *fabric.STX
}

func (g *goSTX) bindTarget() fabric.Bindable { return g.stx }

// goSEP is the handle-table object of a scalable endpoint.
type goSEP struct {
	sep *fabric.ScalableEndpoint
}

//export gofab_go_domain_srx_ctx
func gofab_go_domain_srx_ctx(cd *C.struct_fid_domain, attr C.uintptr_t, out **C.struct_fid_ep,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_srx_context", &rc)
	if cd == nil || out == nil || (attr != 0 && attr < minPointer) {
		return -C.FI_EINVAL
	}
	*out = nil
	d, _, ok := domainOf(&cd.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	var ra *fabric.RxAttr
	if attr != 0 {
		ra = rxAttrFromC((*C.struct_fi_rx_attr)(cptr(uintptr(attr))))
	}
	s, err := d.d.OpenSRX(ra, nil)
	if err != nil {
		return errno(err)
	}
	at := s.Attr()
	h, ok := handles.add(&goSRX{srx: s, rxIOV: limit(at.IOVLimit)})
	if !ok {
		_ = s.Close()
		return -C.FI_ENOMEM
	}
	ce := C.gofab_ep_alloc(C.uint64_t(h), C.FI_CLASS_SRX_CTX, ctx)
	if ce == nil {
		handles.remove(h)
		_ = s.Close()
		return -C.FI_ENOMEM
	}
	*out = &ce.ep
	return 0
}

//export gofab_go_domain_stx_ctx
func gofab_go_domain_stx_ctx(cd *C.struct_fid_domain, attr C.uintptr_t, out **C.struct_fid_stx,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_stx_context", &rc)
	if cd == nil || out == nil || (attr != 0 && attr < minPointer) {
		return -C.FI_EINVAL
	}
	*out = nil
	d, _, ok := domainOf(&cd.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	var ta *fabric.TxAttr
	if attr != 0 {
		ta = txAttrFromC((*C.struct_fi_tx_attr)(cptr(uintptr(attr))))
	}
	x, err := d.d.OpenSTX(ta)
	if err != nil {
		return errno(err)
	}
	h, ok := handles.add(&goSTX{stx: x})
	if !ok {
		_ = x.Close()
		return -C.FI_ENOMEM
	}
	cx := C.gofab_stx_alloc(C.uint64_t(h), ctx)
	if cx == nil {
		handles.remove(h)
		_ = x.Close()
		return -C.FI_ENOMEM
	}
	*out = &cx.stx
	return 0
}

//export gofab_go_stx_close
func gofab_go_stx_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	if fid == nil || fid.fclass != C.FI_CLASS_STX_CTX {
		return -C.FI_EINVAL
	}
	h := uint64((*C.struct_gofab_stx)(unsafe.Pointer(fid)).h)
	x, ok := lookup[*goSTX](h)
	if !ok {
		return -C.FI_EINVAL
	}
	if err := x.stx.Close(); err != nil {
		return errno(err)
	}
	handles.remove(h)
	C.free(unsafe.Pointer(fid))
	return 0
}

//export gofab_go_domain_scalable_ep
func gofab_go_domain_scalable_ep(cd *C.struct_fid_domain, info *C.struct_fi_info, out **C.struct_fid_ep,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_scalable_ep", &rc)
	if cd == nil || info == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	d, _, ok := domainOf(&cd.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	gi, err := infoFromC(info)
	if err != nil {
		return errno(err)
	}
	s, err := d.d.OpenScalableEndpoint(gi)
	if err != nil {
		return errno(err)
	}
	h, ok := handles.add(&goSEP{sep: s})
	if !ok {
		_ = s.Close()
		return -C.FI_ENOMEM
	}
	ce := C.gofab_ep_alloc(C.uint64_t(h), C.FI_CLASS_SEP, ctx)
	if ce == nil {
		handles.remove(h)
		_ = s.Close()
		return -C.FI_ENOMEM
	}
	setFID(s, unsafe.Pointer(ce))
	*out = &ce.ep
	return 0
}

// gofab_go_sep_ctx is fi_tx_context (tx 1) and fi_rx_context (tx 0).
//
//export gofab_go_sep_ctx
func gofab_go_sep_ctx(csep *C.struct_fid_ep, tx, index C.int, attr C.uintptr_t, out **C.struct_fid_ep,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_tx_context", &rc)
	if csep == nil || out == nil || (attr != 0 && attr < minPointer) {
		return -C.FI_EINVAL
	}
	*out = nil
	o, _ := epObj(&csep.fid)
	s, ok := o.(*goSEP)
	if !ok {
		return -C.FI_EINVAL
	}
	var ep *fabric.Endpoint
	var err error
	class := C.int(C.FI_CLASS_RX_CTX)
	if tx != 0 {
		class = C.FI_CLASS_TX_CTX
		var ta *fabric.TxAttr
		if attr != 0 {
			ta = txAttrFromC((*C.struct_fi_tx_attr)(cptr(uintptr(attr))))
		}
		ep, err = s.sep.TxContext(int(index), ta)
	} else {
		var ra *fabric.RxAttr
		if attr != 0 {
			ra = rxAttrFromC((*C.struct_fi_rx_attr)(cptr(uintptr(attr))))
		}
		ep, err = s.sep.RxContext(int(index), ra)
	}
	if err != nil {
		return errno(err)
	}
	_, ce := wrapEP(ep, class, ctx)
	if ce == nil {
		_ = ep.Close()
		return -C.FI_ENOMEM
	}
	*out = &ce.ep
	return 0
}

//export gofab_go_domain_query_atomic
func gofab_go_domain_query_atomic(cd *C.struct_fid_domain, dt, op C.int, attr C.uintptr_t,
	flags C.uint64_t) (rc C.int) {
	defer recoverRC("fi_query_atomic", &rc)
	if cd == nil || attr < minPointer {
		return -C.FI_EINVAL
	}
	d, _, ok := domainOf(&cd.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	a, err := d.d.QueryAtomic(fabric.Datatype(dt), fabric.AtomicOp(op), fabric.Flags(flags))
	if err != nil {
		return errno(err)
	}
	ca := (*C.struct_fi_atomic_attr)(cptr(uintptr(attr)))
	ca.count = C.size_t(a.Count)
	ca.size = C.size_t(a.Size)
	return 0
}
