package main

/*
#include "gofab.h"
*/
import "C"

import (
	"slices"
	"sync"
	"time"
	"unsafe"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

// Shared by the queue objects (CQ, counter, EQ), and wait sets, poll sets
// and fi_trywait.
//
// A wait set (fi_wait_open) is an epoll descriptor holding the wait
// descriptors (Go WaitFD) of the CQs, counters and EQs opened with
// FI_WAIT_SET on it: such an object is opened in Go with WaitFD and its
// descriptor added to the set. fi_wait calls every member's TryWait (which
// drives progress and arms the descriptor) and returns at once when one
// has events; otherwise it blocks in epoll_wait. A poll set (fi_poll_open)
// lists CQs and counters; fi_poll drives each and returns the contexts of
// those with events.

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
// wait object. C's FI_WAIT_NONE is Go's WaitNone (numbered differently).
// FI_WAIT_UNSPEC opens the Go object with WaitFD, as libfabric's own queues
// resolve it to a file descriptor: callers such as ofi_rxm ask FI_GETWAITOBJ
// and FI_GETWAIT of an UNSPEC queue and need a descriptor (resolvedWait
// reports FD for it). FI_WAIT_SET opens the Go object with WaitFD, which the
// caller adds to the returned set.
func waitFromC(wo C.enum_fi_wait_obj, set *C.struct_fid_wait) (fabric.WaitObj, *goWait, C.int) {
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
		return provider.WaitFD, w, 0
	case C.FI_WAIT_FD, C.FI_WAIT_MUTEX_COND, C.FI_WAIT_YIELD:
		return fabric.WaitObj(wo), nil, 0 // same numbers (consts.go)
	case C.FI_WAIT_POLLFD:
		// The Go objects offer it (WaitPollFD), but FI_GETWAIT does not
		// yet fill a struct fi_wait_pollfd here: refuse it at open.
		return 0, nil, -C.FI_ENOSYS
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

// queueOf returns the Go wait interface of a CQ, counter or EQ fid and its
// wait object as C asked for it.
func queueOf(fid *C.struct_fid) (waiter, C.enum_fi_wait_obj, bool) {
	switch o := fidObject(fid).(type) {
	case *goCQ:
		return o.cq, o.waitObj, fid.fclass == C.FI_CLASS_CQ
	case *goCntr:
		return o, o.waitObj, fid.fclass == C.FI_CLASS_CNTR
	case *goEQ:
		return o, o.waitObj, fid.fclass == C.FI_CLASS_EQ
	}
	return nil, 0, false
}

// gofab_go_queue_control is fi_control of CQs, counters, EQs and wait
// sets: FI_GETWAIT (int *: the wait descriptor) and FI_GETWAITOBJ (enum
// fi_wait_obj *).
//
//export gofab_go_queue_control
func gofab_go_queue_control(fid *C.struct_fid, command C.int, arg C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_control", &rc)
	var (
		w  waiter
		wo C.enum_fi_wait_obj
		ok bool
	)
	if fid != nil && fid.fclass == C.FI_CLASS_WAIT {
		var ws *goWait
		if ws, ok = fidObject(fid).(*goWait); ok {
			w, wo = ws, C.FI_WAIT_FD
		}
	} else {
		w, wo, ok = queueOf(fid)
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
	fd, err := w.WaitFD()
	if err != nil {
		return errno(err)
	}
	*(*C.int)(cmem(uintptr(arg))) = C.int(fd)
	return 0
}

// ---- wait sets ----

// goWait is a wait set: an epoll descriptor over its members' wait
// descriptors.
type goWait struct {
	epfd    int
	mu      sync.Mutex
	members []waiter
}

func waitOf(w *C.struct_fid_wait) (*goWait, bool) {
	if w == nil || w.fid.fclass != C.FI_CLASS_WAIT {
		return nil, false
	}
	g, ok := lookup[*goWait](uint64((*C.struct_gofab_wait)(unsafe.Pointer(w)).h))
	return g, ok
}

// add puts member m (opened with WaitFD) into the set.
// inWaitSet is a queue's membership in a wait set (FI_WAIT_SET): the set
// and the member the set watches. The zero value is no membership.
type inWaitSet struct {
	ws *goWait
	m  waiter
}

// join adds m to ws (nil ws: no wait set). On failure it closes the queue
// with closeQ, as an open that fails leaves nothing behind.
func (s *inWaitSet) join(ws *goWait, m waiter, closeQ func() error) C.int {
	if ws == nil {
		return 0
	}
	if rc := ws.add(m); rc != 0 {
		_ = closeQ()
		return rc
	}
	s.ws, s.m = ws, m
	return 0
}

// leaveAndClose leaves the wait set and closes the queue with closeQ; when
// the close fails the queue stays in the set.
func (s *inWaitSet) leaveAndClose(closeQ func() error) error {
	if s.ws != nil {
		s.ws.del(s.m)
	}
	err := closeQ()
	if err != nil && s.ws != nil {
		s.ws.add(s.m)
	}
	return err
}

func (w *goWait) add(m waiter) C.int {
	fd, err := m.WaitFD()
	if err != nil {
		return errno(err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return -C.FI_EOTHER
	}
	w.mu.Lock()
	w.members = append(w.members, m)
	w.mu.Unlock()
	return 0
}

// del removes member m (before it closes).
func (w *goWait) del(m waiter) {
	if fd, err := m.WaitFD(); err == nil {
		_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	}
	w.mu.Lock()
	if i := slices.Index(w.members, m); i >= 0 {
		w.members = slices.Delete(w.members, i, i+1)
	}
	w.mu.Unlock()
}

// TryWait is fi_trywait of the set: ErrAgain when a member has events.
func (w *goWait) TryWait() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.members {
		if err := m.TryWait(); err == fabric.ErrAgain {
			return err
		}
	}
	return nil
}

// WaitFD is FI_GETWAIT of the set: its epoll descriptor.
func (w *goWait) WaitFD() (int, error) { return w.epfd, nil }

//export gofab_go_fabric_wait_open
func gofab_go_fabric_wait_open(cf *C.struct_fid_fabric, attr *C.struct_fi_wait_attr,
	out **C.struct_fid_wait) (rc C.int) {
	defer recoverRC("fi_wait_open", &rc)
	if cf == nil || attr == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	if _, _, ok := fabricOf(&cf.fid); !ok {
		return -C.FI_EINVAL
	}
	if attr.flags != 0 {
		return -C.FI_EBADFLAGS
	}
	switch attr.wait_obj {
	case C.FI_WAIT_UNSPEC, C.FI_WAIT_FD:
	case C.FI_WAIT_MUTEX_COND, C.FI_WAIT_YIELD, C.FI_WAIT_POLLFD:
		return -C.FI_ENOSYS
	default:
		return -C.FI_EINVAL
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return -C.FI_EMFILE
	}
	w := &goWait{epfd: epfd}
	h, ok := handles.add(w)
	if !ok {
		unix.Close(epfd)
		return -C.FI_ENOMEM
	}
	cw := C.gofab_wait_alloc(C.uint64_t(h))
	if cw == nil {
		handles.remove(h)
		unix.Close(epfd)
		return -C.FI_ENOMEM
	}
	*out = &cw.wait
	return 0
}

//export gofab_go_wait_wait
func gofab_go_wait_wait(cw *C.struct_fid_wait, timeout C.int) (rc C.int) {
	defer recoverRC("fi_wait", &rc)
	w, ok := waitOf(cw)
	if !ok {
		return -C.FI_EINVAL
	}
	if w.TryWait() == fabric.ErrAgain {
		return 0
	}
	var deadline time.Time
	if timeout >= 0 {
		deadline = time.Now().Add(timeoutFromC(timeout))
	}
	var evs [8]unix.EpollEvent
	ms := int(timeout)
	for {
		n, err := unix.EpollWait(w.epfd, evs[:], ms)
		switch {
		case err == unix.EINTR:
			if ms >= 0 {
				ms = max(int(time.Until(deadline)/time.Millisecond), 0)
			}
			continue
		case err != nil:
			return -C.FI_EOTHER
		case n == 0:
			return -C.FI_ETIMEDOUT
		}
		return 0
	}
}

//export gofab_go_wait_close
func gofab_go_wait_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	w, ok := waitOf((*C.struct_fid_wait)(unsafe.Pointer(fid)))
	if !ok {
		return -C.FI_EINVAL
	}
	w.mu.Lock()
	busy := len(w.members) > 0
	w.mu.Unlock()
	if busy {
		return -C.FI_EBUSY
	}
	handles.remove(uint64((*C.struct_gofab_wait)(unsafe.Pointer(fid)).h))
	unix.Close(w.epfd)
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
			w = ws
		} else {
			var ok bool
			if w, _, ok = queueOf(fid); !ok {
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

// pollable is a CQ or counter wrapper a poll set can hold.
type pollable interface {
	// pollReady drives progress and reports whether there are events.
	pollReady() bool
	// pollRef counts the poll sets holding the object (its close gives
	// -FI_EBUSY while any does).
	pollRef(delta int32)
}

type pollMember struct {
	fid unsafe.Pointer // C struct fid *, whose context fi_poll returns
	obj pollable
}

type goPoll struct {
	mu      sync.Mutex
	members []pollMember
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
	if _, _, ok := domainOf(&cd.fid); !ok {
		return -C.FI_EINVAL
	}
	if attr.flags != 0 {
		return -C.FI_EBADFLAGS
	}
	h, ok := handles.add(&goPoll{})
	if !ok {
		return -C.FI_ENOMEM
	}
	cp := C.gofab_poll_alloc(C.uint64_t(h))
	if cp == nil {
		handles.remove(h)
		return -C.FI_ENOMEM
	}
	*out = &cp.poll
	return 0
}

// gofab_go_poll_add is fi_poll_add (add != 0) and fi_poll_del.
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
	var obj pollable
	switch o := fidObject(fid).(type) {
	case *goCQ:
		if fid.fclass == C.FI_CLASS_CQ {
			obj = o
		}
	case *goCntr:
		if fid.fclass == C.FI_CLASS_CNTR {
			obj = o
		}
	}
	if obj == nil {
		return -C.FI_EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.IndexFunc(p.members, func(m pollMember) bool { return m.obj == obj })
	switch {
	case add != 0 && i >= 0, add == 0 && i < 0:
		return -C.FI_EINVAL
	case add != 0:
		p.members = append(p.members, pollMember{fid: unsafe.Pointer(fid), obj: obj})
		obj.pollRef(1)
	default:
		p.members = slices.Delete(p.members, i, i+1)
		obj.pollRef(-1)
	}
	return 0
}

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
	n := 0
	for _, m := range p.members {
		if n == len(out) {
			break
		}
		if m.obj.pollReady() {
			out[n] = getPtr(unsafe.Pointer(&(*C.struct_fid)(m.fid).context))
			n++
		}
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
	p.mu.Lock()
	busy := len(p.members) > 0
	p.mu.Unlock()
	if busy {
		return -C.FI_EBUSY
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
