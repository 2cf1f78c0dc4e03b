package main

/*
#include "gofab.h"
*/
import "C"

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// goEQ is the handle-table object of a C event queue.
type goEQ struct {
	eq      *fabric.EQ
	waitObj C.enum_fi_wait_obj
	legacy  bool

	// mu serializes the reads that peek before consuming (a buffer too
	// small for an fi_eq_entry, which fits only a CM entry).
	mu sync.Mutex

	errMu  sync.Mutex
	errBuf cBuf

	refs atomic.Int32 // AVs bound to the EQ (its close gives -FI_EBUSY)

	// Events the plugin itself reports (asynchronous AV inserts, see
	// goAV), read before the Go EQ's.
	injMu sync.Mutex
	inj   []eqInjected
}

// eqInjected is an event queued by the plugin: ev, or the error ee.
type eqInjected struct {
	err bool
	ev  fabric.EQEntry
	ee  fabric.EQErrEntry
}

func (g *goEQ) inject(e eqInjected) {
	g.injMu.Lock()
	g.inj = append(g.inj, e)
	g.injMu.Unlock()
}

// injected returns the head of the plugin's events; pop removes it.
func (g *goEQ) injected(pop bool) (eqInjected, bool) {
	g.injMu.Lock()
	defer g.injMu.Unlock()
	if len(g.inj) == 0 {
		return eqInjected{}, false
	}
	e := g.inj[0]
	if pop {
		g.inj = g.inj[1:]
	}
	return e, true
}

// WaitFD is the EQ's wait descriptor (wait sets, FI_GETWAIT).
func (g *goEQ) WaitFD() (int, error) { return g.eq.WaitFD() }

// TryWait is the Go TryWait, and ErrAgain while the plugin has events.
func (g *goEQ) TryWait() error {
	if err := g.eq.TryWait(); err != nil {
		return err
	}
	g.injMu.Lock()
	defer g.injMu.Unlock()
	if len(g.inj) > 0 {
		return fabric.ErrAgain
	}
	return nil
}

func (g *goEQ) bindTarget() fabric.Bindable { return g.eq }

func eqOf(e *C.struct_fid_eq) (*goEQ, uint64, bool) {
	if e == nil || e.fid.fclass != C.FI_CLASS_EQ {
		return nil, 0, false
	}
	h := uint64((*C.struct_gofab_eq)(unsafe.Pointer(e)).h)
	g, ok := lookup[*goEQ](h)
	return g, h, ok
}

//export gofab_go_fabric_eq_open
func gofab_go_fabric_eq_open(cf *C.struct_fid_fabric, attr *C.struct_fi_eq_attr, out **C.struct_fid_eq,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_eq_open", &rc)
	if cf == nil || attr == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	f, _, ok := fabricOf(&cf.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	wo, ws, rc := waitFromC(attr.wait_obj, attr.wait_set)
	if rc != 0 {
		return rc
	}
	eq, err := f.f.OpenEQ(&fabric.EQAttr{Size: uint64(attr.size), Flags: fabric.Flags(attr.flags), WaitObj: wo,
		WaitSet: ws, SignalingVector: int(attr.signaling_vector)})
	if err != nil {
		return errno(err)
	}
	g := &goEQ{eq: eq, waitObj: resolvedWait(attr.wait_obj), legacy: legacyErrData(f.f)}
	h, ok := handles.add(g)
	if !ok {
		g.closeGo()
		return -C.FI_ENOMEM
	}
	ce := C.gofab_eq_alloc(C.uint64_t(h), ctx)
	if ce == nil {
		handles.remove(h)
		g.closeGo()
		return -C.FI_ENOMEM
	}
	*out = &ce.eq
	return 0
}

// closeGo closes the Go EQ (which leaves its wait set).
func (g *goEQ) closeGo() error { return g.eq.Close() }

//export gofab_go_eq_close
func gofab_go_eq_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	g, h, ok := eqOf((*C.struct_fid_eq)(unsafe.Pointer(fid)))
	if !ok {
		return -C.FI_EINVAL
	}
	if g.refs.Load() > 0 {
		return -C.FI_EBUSY // an AV is bound to it
	}
	if err := g.closeGo(); err != nil {
		return errno(err)
	}
	handles.remove(h)
	g.errMu.Lock()
	g.errBuf.free()
	g.errMu.Unlock()
	C.free(unsafe.Pointer(fid))
	return 0
}

// isCM reports whether events of type ev carry a struct fi_eq_cm_entry.
func isCM(ev fabric.EventType) bool {
	switch ev {
	case provider.EventConnReq, provider.EventConnected, provider.EventShutdown:
		return true
	}
	return false
}

// fidToC is the struct fid * of an EQ entry's FID: what C wrote with
// fi_eq_write comes back unchanged, a Go object is mapped by fidOf.
func fidToC(v any) uintptr {
	if u := ctxToC(v); u != 0 {
		return u
	}
	return uintptr(fidOf(v))
}

const (
	eqEntrySize   = C.sizeof_struct_fi_eq_entry
	eqCMEntrySize = C.sizeof_struct_fi_eq_cm_entry
	// eqWriteMax bounds what fi_eq_write accepts: a CM entry with far
	// more connection data than any provider carries. A larger length
	// cannot be the caller's buffer (the bytes after the entry are
	// copied as connection data).
	eqWriteMax = eqCMEntrySize + 1<<16
)

// gofab_go_eq_read is fi_eq_read (block 0) and fi_eq_sread. It returns
// the bytes written to buf: an fi_eq_entry, or an fi_eq_cm_entry and as
// much connection data as fits.
//
//export gofab_go_eq_read
func gofab_go_eq_read(ce *C.struct_fid_eq, event, buf C.uintptr_t, n C.size_t, timeout C.int, flags C.uint64_t,
	block C.int) (rc C.ssize_t) {
	defer recoverRC("fi_eq_read", &rc)
	g, _, ok := eqOf(ce)
	if !ok || uintptr(event) < minPointer || uintptr(buf) < minPointer {
		return -C.FI_EINVAL
	}
	if flags&^C.FI_PEEK != 0 {
		return -C.FI_EBADFLAGS
	}
	if n < eqCMEntrySize {
		return -C.FI_ETOOSMALL
	}
	f := fabric.Flags(flags)
	if rc, ok := g.readInjected(event, buf, n, f); ok {
		return rc
	}
	read := func(f fabric.Flags) (fabric.EQEntry, error) {
		if block == 0 {
			return g.eq.Read(f)
		}
		to := timeoutFromC(timeout)
		if g.refs.Load() == 0 {
			return g.eq.SRead(to, f)
		}
		// An AV is bound: wait in steps, so that its events (queued by the
		// plugin, not in the Go EQ) end the wait too.
		deadline := time.Now().Add(to)
		for {
			step := 10 * time.Millisecond
			if to >= 0 {
				step = max(min(step, time.Until(deadline)), 0)
			}
			ev, err := g.eq.SRead(step, f)
			if err != fabric.ErrAgain || (to >= 0 && !time.Now().Before(deadline)) {
				return ev, err
			}
			if _, ok := g.injected(false); ok {
				return ev, errInjected
			}
		}
	}
	var (
		ev  fabric.EQEntry
		err error
	)
	if n >= eqEntrySize {
		ev, err = read(f)
	} else {
		// Room for a CM entry only: look first, leave anything else queued.
		g.mu.Lock()
		defer g.mu.Unlock()
		if ev, err = read(f | provider.FlagPeek); err == nil {
			if !isCM(ev.Event) {
				return -C.FI_ETOOSMALL
			}
			if f&provider.FlagPeek == 0 {
				ev, err = g.eq.Read(f)
			}
		}
	}
	if err == errInjected {
		if rc, ok := g.readInjected(event, buf, n, f); ok {
			return rc
		}
		return -C.FI_EAGAIN // another reader took it
	}
	if err != nil {
		return errnoSize(err)
	}
	if !isCM(ev.Event) && n < eqEntrySize {
		return -C.FI_ETOOSMALL // another reader took the peeked entry
	}
	return g.putEntry(event, buf, n, &ev)
}

// errInjected ends a blocking read when the plugin queued an event.
var errInjected = errors.New("plugin event queued")

// readInjected reads the head of the plugin's events into event and buf;
// false when there is none.
func (g *goEQ) readInjected(event, buf C.uintptr_t, n C.size_t, f fabric.Flags) (C.ssize_t, bool) {
	in, ok := g.injected(false)
	switch {
	case !ok:
		return 0, false
	case in.err:
		return -C.FI_EAVAIL, true
	case n < eqEntrySize:
		return -C.FI_ETOOSMALL, true
	}
	g.injected(f&provider.FlagPeek == 0)
	return g.putEntry(event, buf, n, &in.ev), true
}

// putEntry writes event ev into C's event and buf (n bytes).
func (g *goEQ) putEntry(event, buf C.uintptr_t, n C.size_t, ev *fabric.EQEntry) C.ssize_t {
	*(*C.uint32_t)(cmem(uintptr(event))) = C.uint32_t(ev.Event)
	p := cmem(uintptr(buf))
	if !isCM(ev.Event) {
		e := (*C.struct_fi_eq_entry)(p)
		putPtr(unsafe.Pointer(&e.fid), fidToC(ev.FID))
		putPtr(unsafe.Pointer(&e.context), ctxToC(ev.Context))
		e.data = C.uint64_t(ev.Data)
		return eqEntrySize
	}
	e := (*C.struct_fi_eq_cm_entry)(p)
	putPtr(unsafe.Pointer(&e.fid), fidToC(ev.FID))
	e.info = nil
	if ev.Info != nil {
		if e.info = infoToC(ev.Info); e.info == nil {
			return -C.FI_ENOMEM
		}
	}
	data := cBytes(uintptr(buf)+uintptr(eqCMEntrySize), int(n-eqCMEntrySize))
	m := copy(data, ev.CMData)
	return C.ssize_t(int(eqCMEntrySize) + m)
}

// gofab_go_eq_readerr is fi_eq_readerr; err_data as fi_cq_readerr.
//
//export gofab_go_eq_readerr
func gofab_go_eq_readerr(ce *C.struct_fid_eq, buf C.uintptr_t, flags C.uint64_t) (rc C.ssize_t) {
	defer recoverRC("fi_eq_readerr", &rc)
	g, _, ok := eqOf(ce)
	if !ok || uintptr(buf) < minPointer {
		return -C.FI_EINVAL
	}
	if flags != 0 {
		return -C.FI_EBADFLAGS
	}
	ee := (*C.struct_fi_eq_err_entry)(cmem(uintptr(buf)))
	g.errMu.Lock()
	defer g.errMu.Unlock()
	if in, ok := g.injected(false); ok {
		if !in.err {
			return -C.FI_EAGAIN
		}
		g.injected(true)
		putPtr(unsafe.Pointer(&ee.fid), fidToC(in.ee.FID))
		putPtr(unsafe.Pointer(&ee.context), ctxToC(in.ee.Context))
		ee.data, ee.err, ee.prov_errno = C.uint64_t(in.ee.Data), C.int(in.ee.Err), 0
		putPtr(unsafe.Pointer(&ee.err_data), 0)
		if !g.legacy {
			ee.err_data_size = 0
		}
		return C.sizeof_struct_fi_eq_err_entry
	}
	var e fabric.EQErrEntry
	user := false
	if !g.legacy && ee.err_data_size > 0 {
		if p := getPtr(unsafe.Pointer(&ee.err_data)); p >= minPointer {
			e.ErrData, user = cBytes(p, int(ee.err_data_size)), true
		}
	}
	if err := g.eq.ReadErr(&e); err != nil {
		return errnoSize(err)
	}
	putPtr(unsafe.Pointer(&ee.fid), fidToC(e.FID))
	putPtr(unsafe.Pointer(&ee.context), ctxToC(e.Context))
	ee.data, ee.err, ee.prov_errno = C.uint64_t(e.Data), C.int(e.Err), C.int(e.ProvErrno)
	switch {
	case user:
		ee.err_data_size = C.size_t(len(e.ErrData))
	case g.legacy:
		putPtr(unsafe.Pointer(&ee.err_data), g.errBuf.set(e.ErrData))
	default:
		putPtr(unsafe.Pointer(&ee.err_data), g.errBuf.set(e.ErrData))
		ee.err_data_size = C.size_t(len(e.ErrData))
	}
	return C.sizeof_struct_fi_eq_err_entry
}

// gofab_go_eq_write is fi_eq_write: buf is an fi_eq_cm_entry (and its
// connection data) for FI_CONNREQ, FI_CONNECTED and FI_SHUTDOWN, else an
// fi_eq_entry. It returns len.
//
//export gofab_go_eq_write
func gofab_go_eq_write(ce *C.struct_fid_eq, event C.uint32_t, buf C.uintptr_t, n C.size_t,
	flags C.uint64_t) (rc C.ssize_t) {
	defer recoverRC("fi_eq_write", &rc)
	g, _, ok := eqOf(ce)
	if !ok || uintptr(buf) < minPointer {
		return -C.FI_EINVAL
	}
	if flags != 0 {
		return -C.FI_EBADFLAGS
	}
	if n > eqWriteMax {
		// Also keeps the count returned below a positive ssize_t.
		return -C.FI_EINVAL
	}
	ev := fabric.EQEntry{Event: fabric.EventType(event)}
	p := cmem(uintptr(buf))
	if isCM(ev.Event) {
		if n < eqCMEntrySize {
			return -C.FI_EINVAL
		}
		e := (*C.struct_fi_eq_cm_entry)(p)
		ev.FID = ctxToGo(getPtr(unsafe.Pointer(&e.fid)))
		if ip := getPtr(unsafe.Pointer(&e.info)); ip >= minPointer {
			info, err := infoFromC((*C.struct_fi_info)(cmem(ip)))
			if err != nil {
				return errnoSize(err)
			}
			ev.Info = info
		}
		ev.CMData = cBytes(uintptr(buf)+uintptr(eqCMEntrySize), int(n-eqCMEntrySize))
	} else {
		if n < eqEntrySize {
			return -C.FI_EINVAL
		}
		e := (*C.struct_fi_eq_entry)(p)
		ev.FID = ctxToGo(getPtr(unsafe.Pointer(&e.fid)))
		ev.Context = ctxToGo(getPtr(unsafe.Pointer(&e.context)))
		ev.Data = uint64(e.data)
	}
	if err := g.eq.Write(&ev); err != nil {
		return errnoSize(err)
	}
	return C.ssize_t(n)
}

// gofab_go_domain_bind is fi_domain_bind: the domain's EQ.
//
//export gofab_go_domain_bind
func gofab_go_domain_bind(fid, bfid *C.struct_fid, flags C.uint64_t) (rc C.int) {
	defer recoverRC("fi_domain_bind", &rc)
	d, _, ok := domainOf(fid)
	if !ok || bfid == nil {
		return -C.FI_EINVAL
	}
	e, _, ok := eqOf((*C.struct_fid_eq)(unsafe.Pointer(bfid)))
	if !ok {
		return -C.FI_EINVAL
	}
	return errno(d.d.BindEQ(e.eq, fabric.Flags(flags)))
}
