package main

/*
#include "gofab.h"
*/
import "C"

import (
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// goFabric and goDomain are the handle-table objects of the C fabric and
// domain structs. Later helpers add per-object state here.
type goFabric struct {
	f *fabric.Fabric
}

type goDomain struct {
	d *fabric.Domain
}

// fabricOf returns the object of a C fabric fid; false for NULL, another
// class, or a stale or forged handle.
func fabricOf(fid *C.struct_fid) (*goFabric, uint64, bool) {
	if fid == nil || fid.fclass != C.FI_CLASS_FABRIC {
		return nil, 0, false
	}
	h := (*C.struct_gofab_fabric)(unsafe.Pointer(fid)).h
	f, ok := lookup[*goFabric](uint64(h))
	return f, uint64(h), ok
}

// domainOf is fabricOf for domains.
func domainOf(fid *C.struct_fid) (*goDomain, uint64, bool) {
	if fid == nil || fid.fclass != C.FI_CLASS_DOMAIN {
		return nil, 0, false
	}
	h := (*C.struct_gofab_domain)(unsafe.Pointer(fid)).h
	d, ok := lookup[*goDomain](uint64(h))
	return d, uint64(h), ok
}

// gofab_fabric is the fabric entry of the provider in slot (fi_fabric).
//
//export gofab_fabric
func gofab_fabric(slot C.int, attr *C.struct_fi_fabric_attr, out **C.struct_fid_fabric, ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_fabric", &rc)
	if attr == nil || out == nil || slot < 0 || int(slot) >= len(provNames) {
		return -C.FI_EINVAL
	}
	*out = nil
	pn := provNames[slot]
	a := fabricAttrFromC(attr)
	if a.ProvName != "" && a.ProvName != pn.goName {
		return -C.FI_EINVAL
	}
	a.ProvName = pn.goName
	f, err := fabric.OpenFabric(a)
	if err != nil {
		return errno(err)
	}
	h, ok := handles.add(&goFabric{f: f})
	if !ok {
		_ = f.Close()
		return -C.FI_ENOMEM
	}
	cf := C.gofab_fabric_alloc(C.uint64_t(h), ctx, attr.api_version)
	if cf == nil {
		handles.remove(h)
		_ = f.Close()
		return -C.FI_ENOMEM
	}
	*out = &cf.fabric
	return 0
}

//export gofab_go_fabric_close
func gofab_go_fabric_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	f, h, ok := fabricOf(fid)
	if !ok {
		return -C.FI_EINVAL
	}
	if err := f.f.Close(); err != nil {
		return errno(err)
	}
	handles.remove(h)
	C.free(unsafe.Pointer(fid))
	return 0
}

//export gofab_go_fabric_domain
func gofab_go_fabric_domain(cf *C.struct_fid_fabric, info *C.struct_fi_info, out **C.struct_fid_domain,
	flags C.uint64_t, ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_domain", &rc)
	if cf == nil || info == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	f, _, ok := fabricOf(&cf.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	switch {
	case flags&^C.FI_PEER != 0:
		return -C.FI_EBADFLAGS
	case flags != 0:
		return -C.FI_ENOSYS // peer domains are not offered through C
	}
	gi, err := infoFromC(info)
	if err != nil {
		return errno(err)
	}
	d, err := f.f.OpenDomain(gi)
	if err != nil {
		return errno(err)
	}
	h, ok := handles.add(&goDomain{d: d})
	if !ok {
		_ = d.Close()
		return -C.FI_ENOMEM
	}
	cd := C.gofab_domain_alloc(C.uint64_t(h), ctx)
	if cd == nil {
		handles.remove(h)
		_ = d.Close()
		return -C.FI_ENOMEM
	}
	*out = &cd.domain
	return 0
}

//export gofab_go_domain_close
func gofab_go_domain_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	d, h, ok := domainOf(fid)
	if !ok {
		return -C.FI_EINVAL
	}
	if err := d.d.Close(); err != nil {
		return errno(err)
	}
	handles.remove(h)
	C.free(unsafe.Pointer(fid))
	return 0
}
