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

// Shared by the queue objects (CQ, counter, EQ), and wait sets, poll sets
// and fi_trywait.
//
// A wait set (fi_wait_open) is the Go API's *fabric.Wait: the CQs, counters
// and EQs opened with FI_WAIT_SET on it are opened in Go with WaitObj
// WaitSet and the set, so a write to any member marks that member ready
// and wakes fi_wait without the set looking at the others. A poll set
// (fi_poll_open) is the Go *fabric.Poll over the Go CQs and counters;
// fi_poll returns the C contexts of the members it reports. FI_WAIT_POLLFD
// objects answer FI_GETWAIT with a struct fi_wait_pollfd.

// cmem converts a C address (checked by the caller to be at least
// minPointer) to a pointer, as ctxToGo does.
func cmem(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

// putPtr stores v in the pointer-sized C field at p (a void * member),
// without making v a Go pointer.
func putPtr(p unsafe.Pointer, v uintptr) { *(*uintptr)(p) = v }

// getPtr reads the pointer-sized C field at p as an integer.
func getPtr(p unsafe.Pointer) uintptr { return *(*uintptr)(p) }

// cBytes returns the C bytes at u, n long (nil for n == 0).
func cBytes(u uintptr, n int) []byte {
	if n == 0 {
		return nil
	}
	if n < 0 || n > maxLen { // a size_t beyond any real buffer (SIZE_MAX ...): never a panic in unsafe.Slice
		n = maxLen
	}
	return unsafe.Slice((*byte)(cmem(u)), n)
}

// bufAddr returns the address of b's first byte: a C address when b is C
// memory (completion buffers are the application's), 0 for nil.
func bufAddr(b []byte) uintptr {
	if b == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

// fastErrno is errno for the data path: a bare Errno (what the Go read
// calls return) converts without errors.As, which would allocate.
func fastErrno(err error) C.ssize_t {
	if e, ok := err.(provider.Errno); ok && e > 0 {
		return -C.ssize_t(e)
	}
	return errnoSize(err)
}

// timeoutFromC converts a C timeout in milliseconds (negative: forever).
func timeoutFromC(ms C.int) time.Duration {
	if ms < 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// cBuf is C memory owned by an object (err_data returned to C), grown as
// needed and freed with the object.
type cBuf struct {
	p unsafe.Pointer
	n int
}

// set copies b into the buffer and returns its C address (0 for empty b).
func (b *cBuf) set(data []byte) uintptr {
	if len(data) == 0 {
		return 0
	}
	if b.n < len(data) {
		C.free(b.p)
		b.p, b.n = C.malloc(C.size_t(len(data))), len(data)
		if b.p == nil {
			b.n = 0
			return 0
		}
	}
	copy(unsafe.Slice((*byte)(b.p), len(data)), data)
	return uintptr(b.p)
}

func (b *cBuf) free() {
	C.free(b.p)
	b.p, b.n = nil, 0
}

// legacyErrData reports whether the domain's fabric was opened for an API
// older than 1.5: err_data is then always provider-owned and the C error
// entries have no err_data_size member (fi_cq(3), fi_eq(3)).
func legacyErrData(f *fabric.Fabric) bool {
	v := f.Attr().APIVersion
	return v != 0 && v < fabric.Version(1, 5)
}

// waiter is what a wait set, fi_trywait and FI_GETWAIT use of a Go CQ,
// counter or EQ.
type waiter interface {
	WaitFD() (int, error)
	TryWait() error
}

// waitFromC maps a C wait_obj (and wait_set, for FI_WAIT_SET) to the Go
// wait object and, for FI_WAIT_SET, the Go wait set. C's FI_WAIT_NONE is
// Go's WaitNone (numbered differently). FI_WAIT_UNSPEC opens the Go object
// with WaitFD, as libfabric's own queues resolve it to a file descriptor:
// callers such as ofi_rxm ask FI_GETWAITOBJ and FI_GETWAIT of an UNSPEC
// queue and need a descriptor (resolvedWait reports FD for it).
func waitFromC(wo C.enum_fi_wait_obj, set *C.struct_fid_wait) (fabric.WaitObj, *fabric.Wait, C.int) {
	switch wo {
	case C.FI_WAIT_NONE:
		return provider.WaitNone, nil, 0
	case C.FI_WAIT_UNSPEC:
		return provider.WaitFD, nil, 0
	case C.FI_WAIT_SET:
		w, ok := waitOf(set)
		if !ok {
			return 0, nil, -C.FI_EINVAL
		}
		return provider.WaitSet, w.w, 0
	case C.FI_WAIT_FD, C.FI_WAIT_MUTEX_COND, C.FI_WAIT_YIELD, C.FI_WAIT_POLLFD:
		return fabric.WaitObj(wo), nil, 0 // same numbers (consts.go)
	}
	return 0, nil, -C.FI_EINVAL
}

// resolvedWait is the wait object FI_GETWAITOBJ reports for a queue opened
// with wo: FI_WAIT_UNSPEC became a descriptor (waitFromC).
func resolvedWait(wo C.enum_fi_wait_obj) C.enum_fi_wait_obj {
	if wo == C.FI_WAIT_UNSPEC {
		return C.FI_WAIT_FD
	}
	return wo
}

// fidObject returns the handle-table object of a plugin fid (nil for
// NULL, a foreign or stale fid).
func fidObject(fid *C.struct_fid) any {
	if fid == nil {
		return nil
	}
	return handles.get(uint64(C.gofab_fid_handle(fid)))
}

// pollFDer is the FI_WAIT_POLLFD side of a Go CQ, counter or EQ.
type pollFDer interface {
	WaitPollFD() ([]fabric.PollFD, uint64, error)
}

// queueOf returns the Go wait interface of a CQ, counter or EQ fid, its
// FI_WAIT_POLLFD side and its wait object as C asked for it.
func queueOf(fid *C.struct_fid) (waiter, pollFDer, C.enum_fi_wait_obj, bool) {
	switch o := fidObject(fid).(type) {
	case *goCQ:
		return o.cq, o.cq, o.waitObj, fid.fclass == C.FI_CLASS_CQ
	case *goCntr:
		return o, o.c, o.waitObj, fid.fclass == C.FI_CLASS_CNTR
	case *goEQ:
		return o, o.eq, o.waitObj, fid.fclass == C.FI_CLASS_EQ
	}
	return nil, nil, 0, false
}

// gofab_go_queue_control is fi_control of CQs, counters, EQs and wait
// sets: FI_GETWAIT (int *: the wait descriptor; struct fi_wait_pollfd *
// for FI_WAIT_POLLFD) and FI_GETWAITOBJ (enum fi_wait_obj *).
//
//export gofab_go_queue_control
func gofab_go_queue_control(fid *C.struct_fid, command C.int, arg C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_control", &rc)
	var (
		w  waiter
		pf pollFDer
		wo C.enum_fi_wait_obj
		ok bool
	)
	if fid != nil && fid.fclass == C.FI_CLASS_WAIT {
		var ws *goWait
		if ws, ok = fidObject(fid).(*goWait); ok {
			w, wo = ws.w, ws.waitObj
		}
	} else {
		w, pf, wo, ok = queueOf(fid)
	}
	if !ok {
		return -C.FI_EINVAL
	}
	switch command {
	case C.FI_GETWAIT, C.FI_GETWAITOBJ:
	default:
		return -C.FI_ENOSYS
	}
	if uintptr(arg) < minPointer {
		return -C.FI_EINVAL
	}
	if command == C.FI_GETWAITOBJ {
		*(*C.enum_fi_wait_obj)(cmem(uintptr(arg))) = wo
		return 0
	}
	if wo == C.FI_WAIT_POLLFD && pf != nil {
		return getWaitPollFD(pf, (*C.struct_fi_wait_pollfd)(cmem(uintptr(arg))))
	}
	fd, err := w.WaitFD()
	if err != nil {
		return errno(err)
	}
	*(*C.int)(cmem(uintptr(arg))) = C.int(fd)
	return 0
}

// getWaitPollFD is FI_GETWAIT of an FI_WAIT_POLLFD object (fi_poll(3)
// NOTES): it sets change_index and nfds (the entries needed) and, when
// the caller's nfds is at least that, fills its struct pollfd array;
// otherwise it returns -FI_ETOOSMALL (nfds 0 reads the change index).
func getWaitPollFD(o pollFDer, p *C.struct_fi_wait_pollfd) C.int {
	fds, change, err := o.WaitPollFD()
	if err != nil {
		return errno(err)
	}
	have := uint64(p.nfds)
	p.change_index = C.uint64_t(change)
	p.nfds = C.size_t(len(fds))
	if have < uint64(len(fds)) {
		return -C.FI_ETOOSMALL
	}
	if len(fds) == 0 {
		return 0
	}
	base := getPtr(unsafe.Pointer(&p.fd))
	if base < minPointer {
		return -C.FI_EINVAL
	}
	out := unsafe.Slice((*C.struct_pollfd)(cmem(base)), len(fds))
	for i, f := range fds {
		out[i] = C.struct_pollfd{fd: C.int(f.FD), events: C.short(f.Events)}
	}
	return 0
}

// ---- wait sets ----

// goWait is a wait set: the Go API's, and the wait object C asked for.
type goWait struct {
	w       *fabric.Wait
	waitObj C.enum_fi_wait_obj // as FI_GETWAITOBJ reports it
}

func waitOf(w *C.struct_fid_wait) (*goWait, bool) {
	if w == nil || w.fid.fclass != C.FI_CLASS_WAIT {
		return nil, false
	}
	g, ok := lookup[*goWait](uint64((*C.struct_gofab_wait)(unsafe.Pointer(w)).h))
	return g, ok
}

//export gofab_go_fabric_wait_open
func gofab_go_fabric_wait_open(cf *C.struct_fid_fabric, attr *C.struct_fi_wait_attr,
	out **C.struct_fid_wait) (rc C.int) {
	defer recoverRC("fi_wait_open", &rc)
	if cf == nil || attr == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	f, _, ok := fabricOf(&cf.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	if attr.flags != 0 {
		return -C.FI_EBADFLAGS
	}
	var wo fabric.WaitObj
	switch attr.wait_obj {
	case C.FI_WAIT_UNSPEC, C.FI_WAIT_FD:
		// UNSPEC resolves to a descriptor, as for the queues.
		wo = fabric.WaitFD
	case C.FI_WAIT_YIELD:
		wo = fabric.WaitYield
	case C.FI_WAIT_MUTEX_COND:
		// fi_wait works; FI_GETWAIT cannot hand C a pthread mutex and
		// condition of Go's (the Go set answers ENOSYS).
		wo = fabric.WaitMutexCond
	case C.FI_WAIT_POLLFD:
		// A set is one wait object; its members' descriptors are not
		// gathered into a pollfd list (ask the members instead).
		return -C.FI_ENOSYS
	default:
		return -C.FI_EINVAL
	}
	ws, err := f.f.OpenWait(&fabric.WaitAttr{WaitObj: wo})
	if err != nil {
		return errno(err)
	}
	g := &goWait{w: ws, waitObj: resolvedWait(attr.wait_obj)}
	h, ok := handles.add(g)
	if !ok {
		_ = ws.Close()
		return -C.FI_ENOMEM
	}
	cw := C.gofab_wait_alloc(C.uint64_t(h))
	if cw == nil {
		handles.remove(h)
		_ = ws.Close()
		return -C.FI_ENOMEM
	}
	*out = &cw.wait
	return 0
}

// gofab_go_wait_wait is fi_wait: 0 once a member has work, -FI_ETIMEDOUT
// after timeout milliseconds (negative: forever).
//
//export gofab_go_wait_wait
func gofab_go_wait_wait(cw *C.struct_fid_wait, timeout C.int) (rc C.int) {
	defer recoverRC("fi_wait", &rc)
	w, ok := waitOf(cw)
	if !ok {
		return -C.FI_EINVAL
	}
	return errno(w.w.Wait(timeoutFromC(timeout)))
}

//export gofab_go_wait_close
func gofab_go_wait_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	w, ok := waitOf((*C.struct_fid_wait)(unsafe.Pointer(fid)))
	if !ok {
		return -C.FI_EINVAL
	}
	if err := w.w.Close(); err != nil {
		return errno(err) // -FI_EBUSY while a CQ, counter or EQ uses it
	}
	handles.remove(uint64((*C.struct_gofab_wait)(unsafe.Pointer(fid)).h))
	C.free(unsafe.Pointer(fid))
	return 0
}

// gofab_go_fabric_trywait is fi_trywait: ErrAgain (-FI_EAGAIN) as soon as
// one of the CQs, counters, EQs or wait sets has events.
//
//export gofab_go_fabric_trywait
func gofab_go_fabric_trywait(cf *C.struct_fid_fabric, fids C.uintptr_t, count C.int) (rc C.int) {
	defer recoverRC("fi_trywait", &rc)
	if cf == nil || count < 0 || (count > 0 && uintptr(fids) < minPointer) {
		return -C.FI_EINVAL
	}
	if _, _, ok := fabricOf(&cf.fid); !ok {
		return -C.FI_EINVAL
	}
	for _, p := range unsafe.Slice((*uintptr)(cmem(uintptr(fids))), int(count)) {
		if p < minPointer {
			return -C.FI_EINVAL
		}
		fid := (*C.struct_fid)(cmem(p))
		var w waiter
		if fid.fclass == C.FI_CLASS_WAIT {
			ws, ok := fidObject(fid).(*goWait)
			if !ok {
				return -C.FI_EINVAL
			}
			w = ws.w
		} else {
			var ok bool
			if w, _, _, ok = queueOf(fid); !ok {
				return -C.FI_EINVAL
			}
		}
		if err := w.TryWait(); err != nil {
			return errno(err)
		}
	}
	return 0
}

// ---- poll sets ----

// goPoll is a poll set: the Go API's, with the C fid of each member
// (fi_poll returns the fid's context).
type goPoll struct {
	p *fabric.Poll

	mu   sync.Mutex
	fids map[fabric.Pollable]unsafe.Pointer // guarded by mu
	out  []fabric.Pollable                  // fi_poll's scratch; guarded by mu
}

func pollOf(p *C.struct_fid_poll) (*goPoll, bool) {
	if p == nil || p.fid.fclass != C.FI_CLASS_POLL {
		return nil, false
	}
	return lookup[*goPoll](uint64((*C.struct_gofab_poll)(unsafe.Pointer(p)).h))
}

//export gofab_go_domain_poll_open
func gofab_go_domain_poll_open(cd *C.struct_fid_domain, attr *C.struct_fi_poll_attr,
	out **C.struct_fid_poll) (rc C.int) {
	defer recoverRC("fi_poll_open", &rc)
	if cd == nil || attr == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	d, _, ok := domainOf(&cd.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	if attr.flags != 0 {
		return -C.FI_EBADFLAGS
	}
	ps, err := d.d.OpenPoll(nil)
	if err != nil {
		return errno(err)
	}
	h, ok := handles.add(&goPoll{p: ps, fids: map[fabric.Pollable]unsafe.Pointer{}})
	if !ok {
		_ = ps.Close()
		return -C.FI_ENOMEM
	}
	cp := C.gofab_poll_alloc(C.uint64_t(h))
	if cp == nil {
		handles.remove(h)
		_ = ps.Close()
		return -C.FI_ENOMEM
	}
	*out = &cp.poll
	return 0
}

// gofab_go_poll_add is fi_poll_add (add != 0) and fi_poll_del. A member
// cannot be closed (-FI_EBUSY) until it is deleted.
//
//export gofab_go_poll_add
func gofab_go_poll_add(cp *C.struct_fid_poll, fid *C.struct_fid, flags C.uint64_t, add C.int) (rc C.int) {
	defer recoverRC("fi_poll_add", &rc)
	p, ok := pollOf(cp)
	if !ok || fid == nil {
		return -C.FI_EINVAL
	}
	if flags != 0 {
		return -C.FI_EBADFLAGS
	}
	var obj fabric.Pollable
	switch o := fidObject(fid).(type) {
	case *goCQ:
		if fid.fclass == C.FI_CLASS_CQ {
			obj = o.cq
		}
	case *goCntr:
		if fid.fclass == C.FI_CLASS_CNTR {
			obj = o.c
		}
	}
	if obj == nil {
		return -C.FI_EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if add == 0 {
		if err := p.p.Del(obj, 0); err != nil {
			return errno(err)
		}
		delete(p.fids, obj)
		return 0
	}
	if err := p.p.Add(obj, 0); err != nil {
		return errno(err)
	}
	p.fids[obj] = unsafe.Pointer(fid)
	return 0
}

// gofab_go_poll_poll is fi_poll: the contexts of the members with events
// (at most count), 0 for none.
//
//export gofab_go_poll_poll
func gofab_go_poll_poll(cp *C.struct_fid_poll, ctxs C.uintptr_t, count C.int) (rc C.int) {
	defer recoverRC("fi_poll", &rc)
	p, ok := pollOf(cp)
	if !ok || count < 0 || (count > 0 && uintptr(ctxs) < minPointer) {
		return -C.FI_EINVAL
	}
	out := unsafe.Slice((*uintptr)(cmem(uintptr(ctxs))), int(count))
	p.mu.Lock()
	defer p.mu.Unlock()
	if want := min(len(out), len(p.fids)); len(p.out) < want {
		p.out = make([]fabric.Pollable, want)
	}
	n, err := p.p.Poll(p.out[:min(len(out), len(p.out))])
	if err != nil {
		return errno(err)
	}
	for i, m := range p.out[:n] {
		out[i] = getPtr(unsafe.Pointer(&(*C.struct_fid)(p.fids[m]).context))
		p.out[i] = nil
	}
	return C.int(n)
}

//export gofab_go_poll_close
func gofab_go_poll_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	p, ok := pollOf((*C.struct_fid_poll)(unsafe.Pointer(fid)))
	if !ok {
		return -C.FI_EINVAL
	}
	if err := p.p.Close(); err != nil {
		return errno(err) // -FI_EBUSY while it has members
	}
	handles.remove(uint64((*C.struct_gofab_poll)(unsafe.Pointer(fid)).h))
	C.free(unsafe.Pointer(fid))
	return 0
}

// strerrors caches the C strings fi_cq_strerror and fi_eq_strerror return
// (libfabric returns static strings; these live as long as the process).
var (
	strerrMu sync.Mutex
	strerrs  = map[int]*C.char{}
)

// gofab_go_strerror returns the message of a provider error number.
//
//export gofab_go_strerror
func gofab_go_strerror(provErrno C.int) (s *C.char) {
	defer func() {
		if recover() != nil {
			s = nil
		}
	}()
	strerrMu.Lock()
	defer strerrMu.Unlock()
	if s, ok := strerrs[int(provErrno)]; ok {
		return s
	}
	msg := provider.StrError(int(provErrno))
	if len(strerrs) >= 4096 { // bound the cache: unknown numbers share one string
		provErrno, msg = -1, "unknown provider error"
		if s, ok := strerrs[-1]; ok {
			return s
		}
	}
	s = C.CString(msg)
	strerrs[int(provErrno)] = s
	return s
}
