package main

/*
#include "gofab.h"
*/
import "C"

import (
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// goMR is the handle-table object of a C memory region. fi_mr_desc(mr) is
// the struct gofab_mr itself (gofab_mr_alloc sets mem_desc to it): the
// data calls map a desc back with its fclass and handle (mrDesc).
//
// goMR has no bindTarget: nothing is bound to an MR through fi_*_bind (an
// MR binds to counters, fi_mr_bind, handled here), and *fabric.MR is not a
// fabric.Bindable.
type goMR struct {
	mr *fabric.MR
}

// mrDesc is the Go API's descriptor of the region (cabi-ep's mrDescer).
func (g *goMR) mrDesc() fabric.MRDesc { return g.mr.Desc() }

func mrOf(fid *C.struct_fid) (*goMR, uint64, bool) {
	if fid == nil || fid.fclass != C.FI_CLASS_MR {
		return nil, 0, false
	}
	h := uint64((*C.struct_gofab_mr)(unsafe.Pointer(fid)).h)
	g, ok := lookup[*goMR](h)
	return g, h, ok
}

// qIOV is struct iovec as Go reads it, without a pointer-typed field.
type qIOV struct {
	base uintptr
	len  uintptr
}

// maxMRIOV bounds iov_count (bad input beyond; domains allow far fewer).
const maxMRIOV = 1 << 16

// gofab_go_mr_regattr is fi_mr_regattr, and fi_mr_reg and fi_mr_regv
// through an attr built by their trampolines (mr.c).
//
//export gofab_go_mr_regattr
func gofab_go_mr_regattr(fid *C.struct_fid, attr *C.struct_fi_mr_attr, flags C.uint64_t,
	out **C.struct_fid_mr) (rc C.int) {
	defer recoverRC("fi_mr_reg", &rc)
	if fid == nil || attr == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	d, _, ok := domainOf(fid)
	if !ok {
		return -C.FI_EINVAL
	}
	if attr.iface != C.FI_HMEM_SYSTEM {
		return -C.FI_ENOSYS
	}
	count := int(attr.iov_count)
	iovp := getPtr(unsafe.Pointer(&attr.mr_iov))
	if attr.iov_count > maxMRIOV || (count > 0 && iovp < minPointer) {
		return -C.FI_EINVAL
	}
	a := fabric.MRAttr{
		Access:       fabric.Flags(attr.access),
		Offset:       uint64(attr.offset),
		RequestedKey: uint64(attr.requested_key),
		Context:      ctxToGo(getPtr(unsafe.Pointer(&attr.context))),
	}
	if count > 0 {
		a.IOV = make([][]byte, count)
		for i, v := range unsafe.Slice((*qIOV)(cmem(iovp)), count) {
			if (v.len > 0 && v.base < minPointer) || uint64(v.len) > maxLen {
				return -C.FI_EINVAL
			}
			a.IOV[i] = cBytes(v.base, int(v.len))
		}
	}
	if attr.auth_key_size > 0 {
		kp := uintptr(unsafe.Pointer(attr.auth_key))
		if kp < minPointer || attr.auth_key_size > 1<<16 {
			return -C.FI_EINVAL
		}
		a.AuthKey = C.GoBytes(unsafe.Pointer(attr.auth_key), C.int(attr.auth_key_size))
	}
	m, err := d.d.RegMRAttr(&a, fabric.Flags(flags))
	if err != nil {
		return errno(err)
	}
	h, ok := handles.add(&goMR{mr: m})
	if !ok {
		_ = m.Close()
		return -C.FI_ENOMEM
	}
	cm := C.gofab_mr_alloc(C.uint64_t(h), C.uintptr_t(ctxToC(a.Context)), C.uint64_t(m.Key()))
	if cm == nil {
		handles.remove(h)
		_ = m.Close()
		return -C.FI_ENOMEM
	}
	setFID(m, unsafe.Pointer(&cm.mr.fid))
	*out = &cm.mr
	return 0
}

//export gofab_go_mr_close
func gofab_go_mr_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	g, h, ok := mrOf(fid)
	if !ok {
		return -C.FI_EINVAL
	}
	if err := g.mr.Close(); err != nil {
		return errno(err)
	}
	delFID(g.mr)
	handles.remove(h)
	C.free(unsafe.Pointer(fid))
	return 0
}

// gofab_go_mr_bind is fi_mr_bind: a counter (FI_REMOTE_WRITE,
// FI_REMOTE_READ). Binding to an endpoint (FI_MR_ENDPOINT) has no Go API:
// -FI_ENOSYS.
//
//export gofab_go_mr_bind
func gofab_go_mr_bind(fid, bfid *C.struct_fid, flags C.uint64_t) (rc C.int) {
	defer recoverRC("fi_mr_bind", &rc)
	g, _, ok := mrOf(fid)
	if !ok || bfid == nil {
		return -C.FI_EINVAL
	}
	switch bfid.fclass {
	case C.FI_CLASS_CNTR:
		c, _, ok := cntrOf((*C.struct_fid_cntr)(unsafe.Pointer(bfid)))
		if !ok {
			return -C.FI_EINVAL
		}
		if err := g.mr.Bind(c.c, fabric.Flags(flags)); err != nil {
			return errno(err)
		}
		return 0
	case C.FI_CLASS_EP:
		return -C.FI_ENOSYS
	}
	return -C.FI_EINVAL
}

// gofab_go_mr_control is fi_control of an MR: FI_ENABLE (fi_mr_enable).
//
//export gofab_go_mr_control
func gofab_go_mr_control(fid *C.struct_fid, command C.int) (rc C.int) {
	defer recoverRC("fi_control", &rc)
	g, _, ok := mrOf(fid)
	if !ok {
		return -C.FI_EINVAL
	}
	if command != C.FI_ENABLE {
		return -C.FI_ENOSYS
	}
	return errno(g.mr.Enable())
}
