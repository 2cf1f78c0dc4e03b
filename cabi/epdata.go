package main

/*
#include "gofab.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// The data path: fi_ops_msg, fi_ops_tagged, fi_ops_rma (gofab_go_ep_xfer)
// and fi_ops_atomic (gofab_go_ep_atomic). C buffers and iovecs are used in
// place (slices of C memory); no allocation per call: single-buffer calls
// build nothing, vector calls borrow a scratch from a sync.Pool (per-P,
// no lock shared by the endpoint's callers), remote iovecs are viewed in
// place (fi_rma_iov and fi_rma_ioc have the Go API's layout, checked by
// TestCLayouts).
//
// Memory descriptors: fi_mr_desc returns the MR's struct fid_mr itself
// (mem_desc points to the struct gofab_mr, cabi-queues), so a desc is a
// struct fid * of class FI_CLASS_MR followed, after the struct fid_mr, by
// the handle of an object implementing mrDescer.

// mrDescer is implemented by the handle-table object of an MR (goMR): the
// Go API's descriptor of the region.
type mrDescer interface {
	mrDesc() fabric.MRDesc
}

// maxLen bounds a C length (bytes, or elements times their size): beyond
// it a length is bad input (no message is that long).
const maxLen = 1 << 40

// cIOV, cIOC: struct iovec and struct fi_ioc as Go reads them, without a
// pointer-typed field (a bad base below 4096 must not become a Go pointer).
type cIOV struct {
	base uintptr
	len  uintptr
}

type cIOC struct {
	addr  uintptr
	count uintptr
}

// cbuf returns n bytes at C address p; rc is negative for NULL (or a
// value below 4096) with n > 0, or an absurd n.
func cbuf(p uintptr, n uint64) ([]byte, C.ssize_t) {
	switch {
	case n == 0:
		return nil, 0
	case p < minPointer:
		return nil, -C.FI_EINVAL
	case n > maxLen:
		return nil, -C.FI_EMSGSIZE
	}
	return unsafe.Slice((*byte)(cptr(p)), int(n)), 0
}

// xbuf is cbuf for the buffer of a single-buffer call, with one
// exception: the buffer of a receive may be NULL whatever its length and
// is then a zero-length buffer (a message with data completes with
// FI_ETRUNC; nothing is written). fabtests' fi_shared_ctx -e msg posts
// such receives for its zero-byte messages, and the C providers take them.
// A NULL send, RMA or atomic buffer with a length is -FI_EINVAL.
func xbuf(x *C.struct_gofab_xfer) ([]byte, C.ssize_t) {
	if x.buf == 0 && isRecv(x.kind) {
		return nil, 0
	}
	return cbuf(uintptr(x.buf), uint64(x.len))
}

// descOf maps a C desc (what fi_mr_desc returned) to the Go descriptor;
// false for anything that is not a live MR of the plugin.
func descOf(d uintptr) (fabric.MRDesc, bool) {
	if d == 0 {
		return nil, true
	}
	if d < minPointer {
		return nil, false
	}
	p := cptr(d)
	if (*C.struct_fid)(p).fclass != C.FI_CLASS_MR {
		return nil, false
	}
	h := *(*uint64)(unsafe.Add(p, C.sizeof_struct_fid_mr))
	m, ok := handles.get(h).(mrDescer)
	if !ok {
		return nil, false
	}
	return m.mrDesc(), true
}

// scratch holds the Go views of one vector call's C arrays.
type scratch struct {
	iov, cmp, res          [][]byte
	desc, cmpDesc, resDesc []fabric.MRDesc
	msg                    fabric.Msg
	amsg                   fabric.MsgAtomic
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// put clears what the call left (no C address or descriptor outlives it)
// and returns s to the pool.
func (s *scratch) put() {
	clear(s.iov)
	clear(s.cmp)
	clear(s.res)
	clear(s.desc)
	clear(s.cmpDesc)
	clear(s.resDesc)
	s.iov, s.cmp, s.res = s.iov[:0], s.cmp[:0], s.res[:0]
	s.desc, s.cmpDesc, s.resDesc = s.desc[:0], s.cmpDesc[:0], s.resDesc[:0]
	s.msg = fabric.Msg{}
	s.amsg = fabric.MsgAtomic{}
	scratchPool.Put(s)
}

// grow returns b resized to n, reallocating only beyond its capacity.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// descs fills dst with the descriptors of a C void *desc[count] (nil for
// a NULL array).
func descs(dst []fabric.MRDesc, p uintptr, count int) ([]fabric.MRDesc, bool) {
	if p == 0 {
		return nil, true
	}
	if p < minPointer {
		return nil, false
	}
	dst = grow(dst, count)
	for i, d := range unsafe.Slice((*uintptr)(cptr(p)), count) {
		var ok bool
		if dst[i], ok = descOf(d); !ok {
			return nil, false
		}
	}
	return dst, true
}

// iovs fills dst with the buffers of a C struct iovec[count] and dd with
// their descriptors; count is at most lim (else -FI_EINVAL).
func iovs(dst [][]byte, dd []fabric.MRDesc, iov, desc uintptr, count C.size_t, lim int) (
	[][]byte, []fabric.MRDesc, C.ssize_t) {
	n := int(min(uint64(count), 1<<30))
	switch {
	case uint64(count) > uint64(lim):
		return nil, nil, -C.FI_EINVAL
	case n == 0:
		return dst[:0], nil, 0
	case iov < minPointer:
		return nil, nil, -C.FI_EINVAL
	}
	dst = grow(dst, n)
	for i, v := range unsafe.Slice((*cIOV)(cptr(iov)), n) {
		b, rc := cbuf(v.base, uint64(v.len))
		if rc != 0 {
			return nil, nil, rc
		}
		dst[i] = b
	}
	dd, ok := descs(dd, desc, n)
	if !ok {
		return nil, nil, -C.FI_EINVAL
	}
	return dst, dd, 0
}

// iocs is iovs for a C struct fi_ioc[count] of elements of sz bytes.
func iocs(dst [][]byte, dd []fabric.MRDesc, ioc, desc uintptr, count C.size_t, lim, sz int) (
	[][]byte, []fabric.MRDesc, C.ssize_t) {
	n := int(min(uint64(count), 1<<30))
	switch {
	case uint64(count) > uint64(lim):
		return nil, nil, -C.FI_EINVAL
	case n == 0:
		return dst[:0], nil, 0
	case ioc < minPointer:
		return nil, nil, -C.FI_EINVAL
	}
	dst = grow(dst, n)
	for i, v := range unsafe.Slice((*cIOC)(cptr(ioc)), n) {
		if uint64(v.count) > maxLen/uint64(sz) {
			return nil, nil, -C.FI_EMSGSIZE
		}
		b, rc := cbuf(v.addr, uint64(v.count)*uint64(sz))
		if rc != 0 {
			return nil, nil, rc
		}
		dst[i] = b
	}
	dd, ok := descs(dd, desc, n)
	if !ok {
		return nil, nil, -C.FI_EINVAL
	}
	return dst, dd, 0
}

// rmaIOVs views a C struct fi_rma_iov[count] in place.
func rmaIOVs(p uintptr, count C.size_t, lim int) ([]fabric.RMAIOV, bool) {
	switch {
	case uint64(count) > uint64(lim):
		return nil, false
	case count == 0:
		return nil, true
	case p < minPointer:
		return nil, false
	}
	return unsafe.Slice((*fabric.RMAIOV)(cptr(p)), int(count)), true
}

// rmaIOCs views a C struct fi_rma_ioc[count] in place.
func rmaIOCs(p uintptr, count C.size_t, lim int) ([]fabric.RMAIOC, bool) {
	switch {
	case uint64(count) > uint64(lim):
		return nil, false
	case count == 0:
		return nil, true
	case p < minPointer:
		return nil, false
	}
	return unsafe.Slice((*fabric.RMAIOC)(cptr(p)), int(count)), true
}

// gofab_go_ep_xfer is every msg, tagged and rma data call (ep.c fills x).
//
//export gofab_go_ep_xfer
func gofab_go_ep_xfer(cep *C.struct_fid_ep, x *C.struct_gofab_xfer) (rc C.ssize_t) {
	defer recoverRC("fi_xfer", &rc)
	if cep == nil || x == nil {
		return -C.FI_EINVAL
	}
	o, _ := epObj(&cep.fid)
	switch g := o.(type) {
	case *goEP:
		return g.xfer(x)
	case *goSRX:
		return g.xfer(x)
	case *goSEP:
		return -C.FI_ENOSYS // data goes through its contexts
	}
	return -C.FI_EINVAL
}

func isRecv(kind C.int) bool { return kind == C.GOFAB_XK_RECV || kind == C.GOFAB_XK_TRECV }

func (g *goEP) xfer(x *C.struct_gofab_xfer) C.ssize_t {
	ctx := ctxToGo(uintptr(x.context))
	addr := fabric.Addr(x.addr)
	var err error
	switch x.form {
	case C.GOFAB_XF_BUF, C.GOFAB_XF_DATA, C.GOFAB_XF_INJECT, C.GOFAB_XF_INJECTDATA:
		buf, rc := xbuf(x)
		if rc != 0 {
			return rc
		}
		desc, ok := descOf(uintptr(x.desc))
		if !ok {
			return -C.FI_EINVAL
		}
		err = g.one(x, buf, desc, addr, ctx)
	case C.GOFAB_XF_IOV, C.GOFAB_XF_MSG:
		lim := g.txIOV
		if isRecv(x.kind) {
			lim = g.rxIOV
		}
		s := getScratch()
		defer s.put()
		var rc C.ssize_t
		s.iov, s.desc, rc = iovs(s.iov, s.desc, uintptr(x.iov), uintptr(x.descs), x.count, lim)
		if rc != 0 {
			return rc
		}
		if x.form == C.GOFAB_XF_IOV {
			err = g.vec(x, s.iov, s.desc, addr, ctx)
			break
		}
		m := &s.msg
		*m = fabric.Msg{IOV: s.iov, Desc: s.desc, Addr: addr, Context: ctx, Data: uint64(x.data),
			Tag: uint64(x.tag), Ignore: uint64(x.ignore)}
		if x.kind == C.GOFAB_XK_READ || x.kind == C.GOFAB_XK_WRITE {
			var ok bool
			if m.RMA, ok = rmaIOVs(uintptr(x.rma_iov), x.rma_count, g.rmaIOV); !ok {
				return -C.FI_EINVAL
			}
		}
		if isRecv(x.kind) && x.flags&(C.FI_CLAIM|C.FI_DISCARD) != 0 {
			err = g.claimMsg(x, m, fabric.Flags(x.flags)) // bufrecv.go
			break
		}
		err = g.msg(x, m)
	default:
		return -C.FI_EINVAL
	}
	return errnoSize(err)
}

// one is the single-buffer forms.
func (g *goEP) one(x *C.struct_gofab_xfer, buf []byte, desc fabric.MRDesc, addr fabric.Addr, ctx any) error {
	ep := g.ep
	data, tag, raddr, key := uint64(x.data), uint64(x.tag), uint64(x.raddr), uint64(x.key)
	switch x.kind<<8 | x.form {
	case C.GOFAB_XK_SEND<<8 | C.GOFAB_XF_BUF:
		return ep.Send(buf, desc, addr, ctx)
	case C.GOFAB_XK_SEND<<8 | C.GOFAB_XF_DATA:
		return ep.SendData(buf, desc, data, addr, ctx)
	case C.GOFAB_XK_SEND<<8 | C.GOFAB_XF_INJECT:
		return ep.Inject(buf, addr)
	case C.GOFAB_XK_SEND<<8 | C.GOFAB_XF_INJECTDATA:
		return ep.InjectData(buf, data, addr)
	case C.GOFAB_XK_RECV<<8 | C.GOFAB_XF_BUF:
		return ep.Recv(buf, desc, addr, ctx)
	case C.GOFAB_XK_TSEND<<8 | C.GOFAB_XF_BUF:
		return ep.TSend(buf, desc, addr, tag, ctx)
	case C.GOFAB_XK_TSEND<<8 | C.GOFAB_XF_DATA:
		return ep.TSendData(buf, desc, data, addr, tag, ctx)
	case C.GOFAB_XK_TSEND<<8 | C.GOFAB_XF_INJECT:
		return ep.TInject(buf, addr, tag)
	case C.GOFAB_XK_TSEND<<8 | C.GOFAB_XF_INJECTDATA:
		return ep.TInjectData(buf, data, addr, tag)
	case C.GOFAB_XK_TRECV<<8 | C.GOFAB_XF_BUF:
		return ep.TRecv(buf, desc, addr, tag, uint64(x.ignore), ctx)
	case C.GOFAB_XK_READ<<8 | C.GOFAB_XF_BUF:
		return ep.RMARead(buf, desc, addr, raddr, key, ctx)
	case C.GOFAB_XK_WRITE<<8 | C.GOFAB_XF_BUF:
		return ep.RMAWrite(buf, desc, addr, raddr, key, ctx)
	case C.GOFAB_XK_WRITE<<8 | C.GOFAB_XF_DATA:
		return ep.RMAWriteData(buf, desc, data, addr, raddr, key, ctx)
	case C.GOFAB_XK_WRITE<<8 | C.GOFAB_XF_INJECT:
		return ep.RMAInjectWrite(buf, addr, raddr, key)
	case C.GOFAB_XK_WRITE<<8 | C.GOFAB_XF_INJECTDATA:
		return ep.RMAInjectWriteData(buf, data, addr, raddr, key)
	}
	return fabric.ErrInval
}

// vec is the iovec forms.
func (g *goEP) vec(x *C.struct_gofab_xfer, iov [][]byte, desc []fabric.MRDesc, addr fabric.Addr, ctx any) error {
	ep := g.ep
	switch x.kind {
	case C.GOFAB_XK_SEND:
		return ep.SendV(iov, desc, addr, ctx)
	case C.GOFAB_XK_RECV:
		return ep.RecvV(iov, desc, addr, ctx)
	case C.GOFAB_XK_TSEND:
		return ep.TSendV(iov, desc, addr, uint64(x.tag), ctx)
	case C.GOFAB_XK_TRECV:
		return ep.TRecvV(iov, desc, addr, uint64(x.tag), uint64(x.ignore), ctx)
	case C.GOFAB_XK_READ:
		return ep.RMAReadV(iov, desc, addr, uint64(x.raddr), uint64(x.key), ctx)
	case C.GOFAB_XK_WRITE:
		return ep.RMAWriteV(iov, desc, addr, uint64(x.raddr), uint64(x.key), ctx)
	}
	return fabric.ErrInval
}

// msg is the *msg forms, with their explicit flags.
func (g *goEP) msg(x *C.struct_gofab_xfer, m *fabric.Msg) error {
	ep := g.ep
	f := fabric.Flags(x.flags)
	switch x.kind {
	case C.GOFAB_XK_SEND:
		return ep.SendMsg(m, f)
	case C.GOFAB_XK_RECV:
		return ep.RecvMsg(m, f)
	case C.GOFAB_XK_TSEND:
		return ep.TSendMsg(m, f)
	case C.GOFAB_XK_TRECV:
		return ep.TRecvMsg(m, f)
	case C.GOFAB_XK_READ:
		return ep.RMAReadMsg(m, f)
	case C.GOFAB_XK_WRITE:
		return ep.RMAWriteMsg(m, f)
	}
	return fabric.ErrInval
}

// xfer of a shared receive context: the receive calls only.
func (g *goSRX) xfer(x *C.struct_gofab_xfer) C.ssize_t {
	if !isRecv(x.kind) {
		return -C.FI_ENOSYS
	}
	s := g.srx
	tagged := x.kind == C.GOFAB_XK_TRECV
	ctx := ctxToGo(uintptr(x.context))
	addr := fabric.Addr(x.addr)
	tag, ignore := uint64(x.tag), uint64(x.ignore)
	var err error
	switch x.form {
	case C.GOFAB_XF_BUF:
		buf, rc := xbuf(x)
		if rc != 0 {
			return rc
		}
		desc, ok := descOf(uintptr(x.desc))
		if !ok {
			return -C.FI_EINVAL
		}
		if tagged {
			err = s.TRecv(buf, desc, addr, tag, ignore, ctx)
		} else {
			err = s.Recv(buf, desc, addr, ctx)
		}
	case C.GOFAB_XF_IOV, C.GOFAB_XF_MSG:
		sc := getScratch()
		defer sc.put()
		var rc C.ssize_t
		sc.iov, sc.desc, rc = iovs(sc.iov, sc.desc, uintptr(x.iov), uintptr(x.descs), x.count, g.rxIOV)
		if rc != 0 {
			return rc
		}
		switch {
		case x.form == C.GOFAB_XF_IOV && tagged:
			err = s.TRecvV(sc.iov, sc.desc, addr, tag, ignore, ctx)
		case x.form == C.GOFAB_XF_IOV:
			err = s.RecvV(sc.iov, sc.desc, addr, ctx)
		default:
			m := &sc.msg
			*m = fabric.Msg{IOV: sc.iov, Desc: sc.desc, Addr: addr, Context: ctx, Tag: tag, Ignore: ignore}
			if tagged {
				err = s.TRecvMsg(m, fabric.Flags(x.flags))
			} else {
				err = s.RecvMsg(m, fabric.Flags(x.flags))
			}
		}
	default:
		return -C.FI_EINVAL
	}
	return errnoSize(err)
}

// ---- atomics ----

// gofab_go_ep_atomic is every atomic data call (ep.c fills x).
//
//export gofab_go_ep_atomic
func gofab_go_ep_atomic(cep *C.struct_fid_ep, x *C.struct_gofab_axfer) (rc C.ssize_t) {
	defer recoverRC("fi_atomic", &rc)
	if cep == nil || x == nil {
		return -C.FI_EINVAL
	}
	g, _, ok := epOf(&cep.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	return g.atomic(x)
}

// abuf is one single-buffer atomic operand: count elements of sz bytes.
func abuf(p, d uintptr, count C.size_t, sz int) ([]byte, fabric.MRDesc, C.ssize_t) {
	if uint64(count) > maxLen/uint64(sz) {
		return nil, nil, -C.FI_EMSGSIZE
	}
	b, rc := cbuf(p, uint64(count)*uint64(sz))
	if rc != 0 {
		return nil, nil, rc
	}
	desc, ok := descOf(d)
	if !ok {
		return nil, nil, -C.FI_EINVAL
	}
	return b, desc, 0
}

func (g *goEP) atomic(x *C.struct_gofab_axfer) C.ssize_t {
	ep := g.ep
	dt, op := fabric.Datatype(x.datatype), fabric.AtomicOp(x.op)
	sz := dt.Size()
	if sz <= 0 {
		return -C.FI_EINVAL
	}
	ctx := ctxToGo(uintptr(x.context))
	addr, raddr, key := fabric.Addr(x.addr), uint64(x.raddr), uint64(x.key)
	var err error
	switch x.form {
	case C.GOFAB_XF_BUF, C.GOFAB_XF_INJECT:
		var buf []byte
		var desc fabric.MRDesc
		var rc C.ssize_t
		// A fetching FI_ATOMIC_READ has no operand: buf may be NULL.
		if x.buf != 0 || x.kind != C.GOFAB_AK_READWRITE || op != fabric.AtomicRead {
			if buf, desc, rc = abuf(uintptr(x.buf), uintptr(x.desc), x.count, sz); rc != 0 {
				return rc
			}
		}
		if x.form == C.GOFAB_XF_INJECT {
			if x.kind != C.GOFAB_AK_WRITE {
				return -C.FI_EINVAL
			}
			return errnoSize(ep.AtomicInject(buf, addr, raddr, key, dt, op))
		}
		switch x.kind {
		case C.GOFAB_AK_WRITE:
			err = ep.Atomic(buf, desc, addr, raddr, key, dt, op, ctx)
		case C.GOFAB_AK_READWRITE:
			res, resDesc, rc := abuf(uintptr(x.res), uintptr(x.res_desc), x.count, sz)
			if rc != 0 {
				return rc
			}
			err = ep.FetchAtomic(buf, desc, res, resDesc, addr, raddr, key, dt, op, ctx)
		case C.GOFAB_AK_COMPWRITE:
			cmp, cmpDesc, rc := abuf(uintptr(x.cmp), uintptr(x.cmp_desc), x.count, sz)
			if rc != 0 {
				return rc
			}
			res, resDesc, rc := abuf(uintptr(x.res), uintptr(x.res_desc), x.count, sz)
			if rc != 0 {
				return rc
			}
			err = ep.CompareAtomic(buf, desc, cmp, cmpDesc, res, resDesc, addr, raddr, key, dt, op, ctx)
		default:
			return -C.FI_EINVAL
		}
	case C.GOFAB_XF_IOV, C.GOFAB_XF_MSG:
		s := getScratch()
		defer s.put()
		var rc C.ssize_t
		if s.iov, s.desc, rc = iocs(s.iov, s.desc, uintptr(x.ioc), uintptr(x.descs), x.count, g.txIOV, sz); rc != 0 {
			return rc
		}
		if x.kind != C.GOFAB_AK_WRITE {
			if s.res, s.resDesc, rc = iocs(s.res, s.resDesc, uintptr(x.res_ioc), uintptr(x.res_descs),
				x.res_count, g.txIOV, sz); rc != 0 {
				return rc
			}
		}
		if x.kind == C.GOFAB_AK_COMPWRITE {
			if s.cmp, s.cmpDesc, rc = iocs(s.cmp, s.cmpDesc, uintptr(x.cmp_ioc), uintptr(x.cmp_descs),
				x.cmp_count, g.txIOV, sz); rc != 0 {
				return rc
			}
		}
		if x.form == C.GOFAB_XF_IOV {
			switch x.kind {
			case C.GOFAB_AK_WRITE:
				err = ep.AtomicV(s.iov, s.desc, addr, raddr, key, dt, op, ctx)
			case C.GOFAB_AK_READWRITE:
				err = ep.FetchAtomicV(s.iov, s.desc, s.res, s.resDesc, addr, raddr, key, dt, op, ctx)
			case C.GOFAB_AK_COMPWRITE:
				err = ep.CompareAtomicV(s.iov, s.desc, s.cmp, s.cmpDesc, s.res, s.resDesc, addr, raddr, key,
					dt, op, ctx)
			default:
				return -C.FI_EINVAL
			}
			break
		}
		rma, ok := rmaIOCs(uintptr(x.rma_ioc), x.rma_count, g.rmaIOV)
		if !ok {
			return -C.FI_EINVAL
		}
		m := &s.amsg
		*m = fabric.MsgAtomic{IOV: s.iov, Desc: s.desc, Addr: addr, RMA: rma, Datatype: dt, Op: op,
			Context: ctx, Data: uint64(x.data)}
		f := fabric.Flags(x.flags)
		switch x.kind {
		case C.GOFAB_AK_WRITE:
			err = ep.AtomicMsg(m, f)
		case C.GOFAB_AK_READWRITE:
			err = ep.FetchAtomicMsg(m, s.res, s.resDesc, f)
		case C.GOFAB_AK_COMPWRITE:
			err = ep.CompareAtomicMsg(m, s.cmp, s.cmpDesc, s.res, s.resDesc, f)
		default:
			return -C.FI_EINVAL
		}
	default:
		return -C.FI_EINVAL
	}
	return errnoSize(err)
}

// gofab_go_ep_atomicvalid is fi_atomicvalid, fi_fetch_atomicvalid and
// fi_compare_atomicvalid (kind GOFAB_AK_*).
//
//export gofab_go_ep_atomicvalid
func gofab_go_ep_atomicvalid(cep *C.struct_fid_ep, kind, dt, op C.int, count C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_atomicvalid", &rc)
	if cep == nil || count < minPointer {
		return -C.FI_EINVAL
	}
	g, _, ok := epOf(&cep.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	var n int
	var err error
	switch kind {
	case C.GOFAB_AK_WRITE:
		n, err = g.ep.AtomicValid(fabric.Datatype(dt), fabric.AtomicOp(op))
	case C.GOFAB_AK_READWRITE:
		n, err = g.ep.FetchAtomicValid(fabric.Datatype(dt), fabric.AtomicOp(op))
	case C.GOFAB_AK_COMPWRITE:
		n, err = g.ep.CompareAtomicValid(fabric.Datatype(dt), fabric.AtomicOp(op))
	default:
		return -C.FI_EINVAL
	}
	if err != nil {
		return errno(err)
	}
	*(*C.size_t)(cptr(uintptr(count))) = C.size_t(n)
	return 0
}
