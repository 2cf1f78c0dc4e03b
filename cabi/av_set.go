package main

/*
#include "gofab.h"
*/
import "C"

import (
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// goAVSet is the handle-table object of a C AV set (fi_av_set(3)).
type goAVSet struct {
	set *fabric.AVSet
}

func avSetOf(s *C.struct_fid_av_set) (*goAVSet, uint64, bool) {
	if s == nil || s.fid.fclass != C.FI_CLASS_AV_SET {
		return nil, 0, false
	}
	h := uint64((*C.struct_gofab_av_set)(unsafe.Pointer(s)).h)
	g, ok := lookup[*goAVSet](h)
	return g, h, ok
}

// maxCommKey bounds comm_key_size (bad input beyond).
const maxCommKey = 1 << 16

// gofab_go_av_set_open is fi_av_set. A NULL attr opens an empty set.
//
//export gofab_go_av_set_open
func gofab_go_av_set_open(ca *C.struct_fid_av, attr *C.struct_fi_av_set_attr, out **C.struct_fid_av_set,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_av_set", &rc)
	if out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	g, _, ok := avOf(ca)
	if !ok {
		return -C.FI_EINVAL
	}
	var a fabric.AVSetAttr
	if attr != nil {
		a = fabric.AVSetAttr{Count: uint64(attr.count), StartAddr: fabric.Addr(attr.start_addr),
			EndAddr: fabric.Addr(attr.end_addr), Stride: uint64(attr.stride), Flags: fabric.Flags(attr.flags)}
		if attr.comm_key_size > 0 {
			if attr.comm_key_size > maxCommKey || uintptr(unsafe.Pointer(attr.comm_key)) < minPointer {
				return -C.FI_EINVAL
			}
			a.CommKey = append([]byte(nil), cBytes(uintptr(unsafe.Pointer(attr.comm_key)), int(attr.comm_key_size))...)
		}
	}
	set, err := g.av.OpenSet(&a)
	if err != nil {
		return errno(err)
	}
	h, ok := handles.add(&goAVSet{set: set})
	if !ok {
		_ = set.Close()
		return -C.FI_ENOMEM
	}
	cs := C.gofab_av_set_alloc(C.uint64_t(h), ctx)
	if cs == nil {
		handles.remove(h)
		_ = set.Close()
		return -C.FI_ENOMEM
	}
	*out = &cs.set
	return 0
}

//export gofab_go_av_set_close
func gofab_go_av_set_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	g, h, ok := avSetOf((*C.struct_fid_av_set)(unsafe.Pointer(fid)))
	if !ok {
		return -C.FI_EINVAL
	}
	if err := g.set.Close(); err != nil {
		return errno(err)
	}
	handles.remove(h)
	C.free(unsafe.Pointer(fid))
	return 0
}

// gofab_go_av_set_combine is fi_av_set_union (op 0), fi_av_set_intersect
// (1) and fi_av_set_diff (2).
//
//export gofab_go_av_set_combine
func gofab_go_av_set_combine(dst, src *C.struct_fid_av_set, op C.int) (rc C.int) {
	defer recoverRC("fi_av_set_union", &rc)
	d, _, ok := avSetOf(dst)
	if !ok {
		return -C.FI_EINVAL
	}
	s, _, ok := avSetOf(src)
	if !ok {
		return -C.FI_EINVAL
	}
	switch op {
	case 0:
		return errno(d.set.Union(s.set))
	case 1:
		return errno(d.set.Intersect(s.set))
	case 2:
		return errno(d.set.Diff(s.set))
	}
	return -C.FI_EINVAL
}

// gofab_go_av_set_member is fi_av_set_insert (op 0) and fi_av_set_remove
// (1).
//
//export gofab_go_av_set_member
func gofab_go_av_set_member(cs *C.struct_fid_av_set, addr C.fi_addr_t, op C.int) (rc C.int) {
	defer recoverRC("fi_av_set_insert", &rc)
	g, _, ok := avSetOf(cs)
	if !ok {
		return -C.FI_EINVAL
	}
	if op == 0 {
		return errno(g.set.Insert(fabric.Addr(addr)))
	}
	return errno(g.set.Remove(fabric.Addr(addr)))
}

//export gofab_go_av_set_addr
func gofab_go_av_set_addr(cs *C.struct_fid_av_set, collAddr C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_av_set_addr", &rc)
	g, _, ok := avSetOf(cs)
	if !ok || uintptr(collAddr) < minPointer {
		return -C.FI_EINVAL
	}
	a, err := g.set.Addr()
	if err != nil {
		return errno(err)
	}
	*(*C.fi_addr_t)(cmem(uintptr(collAddr))) = C.fi_addr_t(a)
	return 0
}
