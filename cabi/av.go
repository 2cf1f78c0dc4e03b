package main

/*
#include "gofab.h"
#include <sys/socket.h>
#include <netinet/in.h>
#include <string.h>
*/
import "C"

import (
	"sync"
	"unsafe"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// goAV is the handle-table object of a C address vector.
//
// Asynchronous inserts (FI_EVENT) are emulated here: the Go AV inserts
// synchronously, and the plugin queues the events fi_av(3) describes on the
// bound EQ (goEQ.inject): an error event per failed address (data: its
// index), then FI_AV_COMPLETE (data: the addresses inserted).
type goAV struct {
	av      *fabric.AV
	format  fabric.AddrFormat // the domain's address format
	addrLen int               // fixed address size, 0 when it varies (FI_SOCKADDR, FI_ADDR_STR)
	async   bool              // opened with FI_EVENT
	fid     uintptr           // the C struct fid * (events name it)

	mu sync.Mutex
	eq *goEQ // bound with fi_av_bind
}

// boundEQ returns the EQ of an asynchronous AV; -FI_ENOEQ without one.
func (g *goAV) boundEQ() (*goEQ, C.int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.eq == nil {
		return nil, -C.FI_ENOEQ
	}
	return g.eq, 0
}

// complete queues the events of an asynchronous insert on eq: errs[i] !=
// nil for each failed address, then FI_AV_COMPLETE with n.
func (g *goAV) complete(eq *goEQ, ctx uintptr, n int, errs []error) {
	for i, err := range errs {
		if err != nil {
			eq.inject(eqInjected{err: true, ee: fabric.EQErrEntry{FID: ctxToGo(g.fid),
				Context: ctxToGo(ctx), Data: uint64(i), Err: provider.Errno(-errno(err))}})
		}
	}
	eq.inject(eqInjected{ev: fabric.EQEntry{Event: provider.EventAVComplete, FID: ctxToGo(g.fid),
		Context: ctxToGo(ctx), Data: uint64(n)}})
}

func (g *goAV) bindTarget() fabric.Bindable { return g.av }

func avOf(a *C.struct_fid_av) (*goAV, uint64, bool) {
	if a == nil || a.fid.fclass != C.FI_CLASS_AV {
		return nil, 0, false
	}
	h := uint64((*C.struct_gofab_av)(unsafe.Pointer(a)).h)
	g, ok := lookup[*goAV](h)
	return g, h, ok
}

// maxStrAddr bounds the length of an FI_ADDR_STR address read from C
// (FI_NAME_MAX is 64; room for longer provider strings).
const maxStrAddr = 4096

// addrAt returns the length of the address at C address p (0: unknown
// family or format).
func (g *goAV) addrAt(p uintptr) int {
	if g.addrLen > 0 {
		return g.addrLen
	}
	if g.format == provider.AddrStr {
		// A NUL-terminated string of its own length (lnx addresses
		// vary; shm names all have one length): the next address of an
		// array follows its NUL.
		n := int(C.strnlen((*C.char)(cmem(p)), maxStrAddr))
		if n == maxStrAddr {
			return 0
		}
		return n + 1
	}
	switch *(*C.sa_family_t)(cmem(p)) {
	case C.AF_INET:
		return C.sizeof_struct_sockaddr_in
	case C.AF_INET6:
		return C.sizeof_struct_sockaddr_in6
	}
	return 0
}

//export gofab_go_domain_av_open
func gofab_go_domain_av_open(cd *C.struct_fid_domain, attr *C.struct_fi_av_attr, out **C.struct_fid_av,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_av_open", &rc)
	if cd == nil || attr == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	d, _, ok := domainOf(&cd.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	a := fabric.AVAttr{Type: fabric.AVType(attr._type), RxCtxBits: int(attr.rx_ctx_bits),
		Count: uint64(attr.count), EPPerNode: uint64(attr.ep_per_node),
		Flags: fabric.Flags(attr.flags &^ C.FI_EVENT)}
	if attr.name != nil {
		a.Name = C.GoString(attr.name)
	}
	av, err := d.d.OpenAV(&a)
	if err != nil {
		return errno(err)
	}
	attr._type = C.enum_fi_av_type(a.Type) // the chosen type, as C providers report it
	g := &goAV{av: av, format: d.d.Info().AddrFormat, async: attr.flags&C.FI_EVENT != 0}
	switch g.format {
	case provider.SockAddrIn:
		g.addrLen = C.sizeof_struct_sockaddr_in
	case provider.SockAddrIn6:
		g.addrLen = C.sizeof_struct_sockaddr_in6
	case provider.SockAddr, provider.AddrStr:
	default:
		g.addrLen = len(d.d.Info().SrcAddr)
	}
	h, ok := handles.add(g)
	if !ok {
		_ = av.Close()
		return -C.FI_ENOMEM
	}
	ca := C.gofab_av_alloc(C.uint64_t(h), ctx)
	if ca == nil {
		handles.remove(h)
		_ = av.Close()
		return -C.FI_ENOMEM
	}
	setFID(av, unsafe.Pointer(&ca.av.fid))
	g.fid = uintptr(unsafe.Pointer(&ca.av.fid))
	*out = &ca.av
	return 0
}

//export gofab_go_av_close
func gofab_go_av_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	g, h, ok := avOf((*C.struct_fid_av)(unsafe.Pointer(fid)))
	if !ok {
		return -C.FI_EINVAL
	}
	if err := g.av.Close(); err != nil {
		return errno(err)
	}
	g.mu.Lock()
	if g.eq != nil {
		g.eq.refs.Add(-1)
		g.eq = nil
	}
	g.mu.Unlock()
	delFID(g.av)
	handles.remove(h)
	C.free(unsafe.Pointer(fid))
	return 0
}

// gofab_go_av_bind is fi_av_bind: the EQ of asynchronous inserts
// (FI_EVENT; accepted, and unused, for a synchronous AV). The EQ cannot
// close while bound.
//
//export gofab_go_av_bind
func gofab_go_av_bind(fid, bfid *C.struct_fid, flags C.uint64_t) (rc C.int) {
	defer recoverRC("fi_av_bind", &rc)
	g, _, ok := avOf((*C.struct_fid_av)(unsafe.Pointer(fid)))
	if !ok || bfid == nil {
		return -C.FI_EINVAL
	}
	e, _, ok := eqOf((*C.struct_fid_eq)(unsafe.Pointer(bfid)))
	if !ok {
		return -C.FI_EINVAL
	}
	if flags != 0 {
		return -C.FI_EBADFLAGS
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.eq != nil {
		return -C.FI_EINVAL
	}
	e.refs.Add(1)
	g.eq = e
	return 0
}

// maxAVCount bounds the count of one insert or remove (bad input beyond).
const maxAVCount = 1 << 24

// gofab_go_av_insert is fi_av_insert: count addresses packed at addr in
// the domain's format. syncErr (FI_SYNC_ERR) is an int array of count
// fabric errno codes (0 for inserted addresses).
//
//export gofab_go_av_insert
func gofab_go_av_insert(ca *C.struct_fid_av, addr C.uintptr_t, count C.size_t, fiAddr C.uintptr_t,
	flags C.uint64_t, ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_av_insert", &rc)
	g, _, ok := avOf(ca)
	if !ok || count > maxAVCount || (count > 0 && uintptr(addr) < minPointer) ||
		(fiAddr != 0 && uintptr(fiAddr) < minPointer) {
		return -C.FI_EINVAL
	}
	syncErr := uintptr(ctx)
	if flags&C.FI_SYNC_ERR != 0 && (g.async || (count > 0 && syncErr < minPointer)) {
		return -C.FI_EINVAL
	}
	var eq *goEQ
	if g.async {
		if eq, rc = g.boundEQ(); rc != 0 {
			return rc
		}
		flags |= C.FI_SYNC_ERR // per-address errors become error events
	}
	addrs := make([][]byte, count)
	p := uintptr(addr)
	for i := range addrs {
		n := g.addrAt(p)
		if n == 0 {
			return -C.FI_EINVAL
		}
		addrs[i] = cBytes(p, n)
		p += uintptr(n)
	}
	var fa []fabric.Addr
	if fiAddr != 0 {
		fa = unsafe.Slice((*fabric.Addr)(cmem(uintptr(fiAddr))), int(count))
	}
	var (
		n   int
		err error
	)
	if flags&C.FI_SYNC_ERR != 0 {
		errs := make([]error, count)
		n, err = g.av.InsertWithErrors(addrs, fa, errs, fabric.Flags(flags&^C.FI_SYNC_ERR))
		if err == nil && eq != nil {
			g.complete(eq, uintptr(ctx), n, errs)
			return 0
		}
		if err == nil && count > 0 {
			out := unsafe.Slice((*C.int)(cmem(syncErr)), int(count))
			for i, e := range errs {
				out[i] = -errno(e)
			}
		}
	} else {
		n, err = g.av.Insert(addrs, fa, fabric.Flags(flags))
	}
	if err != nil {
		return errno(err)
	}
	return C.int(n)
}

// gofab_go_av_insertsym is fi_av_insertsym, and fi_av_insertsvc when
// nodecnt is 0.
//
//export gofab_go_av_insertsym
func gofab_go_av_insertsym(ca *C.struct_fid_av, node C.uintptr_t, nodecnt C.size_t, service C.uintptr_t,
	svccnt C.size_t, fiAddr C.uintptr_t, flags C.uint64_t, ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_av_insertsym", &rc)
	g, _, ok := avOf(ca)
	if !ok || uintptr(node) < minPointer || uintptr(service) < minPointer ||
		(fiAddr != 0 && uintptr(fiAddr) < minPointer) || nodecnt > maxAVCount || svccnt > maxAVCount ||
		nodecnt*svccnt > maxAVCount {
		return -C.FI_EINVAL
	}
	var eq *goEQ
	if g.async {
		if eq, rc = g.boundEQ(); rc != 0 {
			return rc
		}
	}
	nd := C.GoString((*C.char)(cmem(uintptr(node))))
	sv := C.GoString((*C.char)(cmem(uintptr(service))))
	var (
		n   int
		err error
	)
	if nodecnt == 0 {
		var fa *fabric.Addr
		if fiAddr != 0 {
			fa = (*fabric.Addr)(cmem(uintptr(fiAddr)))
		}
		n, err = g.av.InsertSvc(nd, sv, fa, fabric.Flags(flags))
	} else {
		var fa []fabric.Addr
		if fiAddr != 0 {
			fa = unsafe.Slice((*fabric.Addr)(cmem(uintptr(fiAddr))), int(nodecnt*svccnt))
		}
		n, err = g.av.InsertSym(nd, int(nodecnt), sv, int(svccnt), fa, fabric.Flags(flags))
	}
	if err != nil {
		return errno(err)
	}
	if eq != nil {
		g.complete(eq, uintptr(ctx), n, nil)
		return 0
	}
	return C.int(n)
}

//export gofab_go_av_remove
func gofab_go_av_remove(ca *C.struct_fid_av, fiAddr C.uintptr_t, count C.size_t, flags C.uint64_t) (rc C.int) {
	defer recoverRC("fi_av_remove", &rc)
	g, _, ok := avOf(ca)
	if !ok || count > maxAVCount || (count > 0 && uintptr(fiAddr) < minPointer) {
		return -C.FI_EINVAL
	}
	var fa []fabric.Addr
	if count > 0 {
		fa = unsafe.Slice((*fabric.Addr)(cmem(uintptr(fiAddr))), int(count))
	}
	return errno(g.av.Remove(fa, fabric.Flags(flags)))
}

// gofab_go_av_lookup is fi_av_lookup: the address is copied into addr,
// truncated to *addrlen, and *addrlen set to its full size.
//
//export gofab_go_av_lookup
func gofab_go_av_lookup(ca *C.struct_fid_av, fiAddr C.fi_addr_t, addr, addrlen C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_av_lookup", &rc)
	g, _, ok := avOf(ca)
	if !ok || uintptr(addrlen) < minPointer {
		return -C.FI_EINVAL
	}
	lp := (*C.size_t)(cmem(uintptr(addrlen)))
	if *lp > 0 && uintptr(addr) < minPointer {
		return -C.FI_EINVAL
	}
	var buf []byte
	if *lp > 0 {
		buf = cBytes(uintptr(addr), int(min(*lp, 1<<16)))
	}
	n, err := g.av.Lookup(fabric.Addr(fiAddr), buf)
	if err != nil {
		return errno(err)
	}
	*lp = C.size_t(n)
	return 0
}

// gofab_go_av_straddr is fi_av_straddr: the address as a string in buf,
// truncated to *len (with its NUL), *len set to the full size; buf, or
// NULL for bad input.
//
//export gofab_go_av_straddr
func gofab_go_av_straddr(ca *C.struct_fid_av, addr, buf, n C.uintptr_t) (s *C.char) {
	defer func() {
		if recover() != nil {
			s = nil
		}
	}()
	g, _, ok := avOf(ca)
	if !ok || uintptr(addr) < minPointer || uintptr(n) < minPointer {
		return nil
	}
	lp := (*C.size_t)(cmem(uintptr(n)))
	if *lp > 0 && uintptr(buf) < minPointer {
		return nil
	}
	al := g.addrAt(uintptr(addr))
	if al == 0 {
		return nil
	}
	str := g.av.StrAddr(cBytes(uintptr(addr), al))
	if *lp > 0 {
		out := cBytes(uintptr(buf), int(*lp))
		m := copy(out[:len(out)-1], str)
		out[m] = 0
	}
	*lp = C.size_t(len(str) + 1)
	if uintptr(buf) < minPointer {
		return nil
	}
	return (*C.char)(cmem(uintptr(buf)))
}
