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
)

// goCntr is the handle-table object of a C counter.
type goCntr struct {
	c       *fabric.Cntr
	waitObj C.enum_fi_wait_obj

	// The values fi_trywait last saw (TryWait below).
	wsMu       sync.Mutex
	wsV, wsErr uint64
}

// WaitFD is the counter's wait descriptor (FI_GETWAIT).
func (g *goCntr) WaitFD() (int, error) { return g.c.WaitFD() }

// TryWait is the Go TryWait (which clears the descriptor's signal and
// drives progress), then ErrAgain when the values changed since the last
// TryWait: a change made before the application blocks, whose signal the
// Go TryWait clears, is still reported.
func (g *goCntr) TryWait() error {
	if err := g.c.TryWait(); err != nil {
		return err
	}
	v, _ := g.c.Read()
	e, _ := g.c.ReadErr()
	g.wsMu.Lock()
	defer g.wsMu.Unlock()
	if v == g.wsV && e == g.wsErr {
		return nil
	}
	g.wsV, g.wsErr = v, e
	return fabric.ErrAgain
}

func (g *goCntr) bindTarget() fabric.Bindable { return g.c }

func cntrOf(c *C.struct_fid_cntr) (*goCntr, uint64, bool) {
	if c == nil || c.fid.fclass != C.FI_CLASS_CNTR {
		return nil, 0, false
	}
	h := uint64((*C.struct_gofab_cntr)(unsafe.Pointer(c)).h)
	g, ok := lookup[*goCntr](h)
	return g, h, ok
}

//export gofab_go_domain_cntr_open
func gofab_go_domain_cntr_open(cd *C.struct_fid_domain, attr *C.struct_fi_cntr_attr, out **C.struct_fid_cntr,
	ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_cntr_open", &rc)
	if cd == nil || out == nil {
		return -C.FI_EINVAL
	}
	*out = nil
	d, _, ok := domainOf(&cd.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	// NULL attr: FI_WAIT_UNSPEC, which waitFromC resolves to a descriptor.
	a := fabric.CntrAttr{WaitObj: fabric.WaitFD}
	wobj := C.enum_fi_wait_obj(C.FI_WAIT_UNSPEC)
	var ws *fabric.Wait
	if attr != nil { // NULL: the defaults (fi_cntr(3))
		var rc C.int
		if a.WaitObj, ws, rc = waitFromC(attr.wait_obj, attr.wait_set); rc != 0 {
			return rc
		}
		a.Events, a.Flags, wobj = int(attr.events), fabric.Flags(attr.flags), attr.wait_obj
		a.WaitSet = ws
	}
	c, err := d.d.OpenCntr(&a)
	if err != nil {
		return errno(err)
	}
	g := &goCntr{c: c, waitObj: resolvedWait(wobj)}
	h, ok := handles.add(g)
	if !ok {
		g.closeGo()
		return -C.FI_ENOMEM
	}
	cc := C.gofab_cntr_alloc(C.uint64_t(h), ctx)
	if cc == nil {
		handles.remove(h)
		g.closeGo()
		return -C.FI_ENOMEM
	}
	*out = &cc.cntr
	return 0
}

// closeGo closes the Go counter (which leaves its wait set; -FI_EBUSY
// while in a poll set or bound).
func (g *goCntr) closeGo() error { return g.c.Close() }

//export gofab_go_cntr_close
func gofab_go_cntr_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	g, h, ok := cntrOf((*C.struct_fid_cntr)(unsafe.Pointer(fid)))
	if !ok {
		return -C.FI_EINVAL
	}
	if err := g.closeGo(); err != nil {
		return errno(err)
	}
	handles.remove(h)
	C.free(unsafe.Pointer(fid))
	return 0
}

// gofab_go_cntr_read is fi_cntr_read (errVal 0) and fi_cntr_readerr; 0
// for a bad counter (the calls have no error return).
//
//export gofab_go_cntr_read
func gofab_go_cntr_read(c *C.struct_fid_cntr, errVal C.int) (v C.uint64_t) {
	defer func() {
		if recover() != nil {
			v = 0
		}
	}()
	g, _, ok := cntrOf(c)
	if !ok {
		return 0
	}
	var n uint64
	if errVal != 0 {
		n, _ = g.c.ReadErr()
	} else {
		n, _ = g.c.Read()
	}
	return C.uint64_t(n)
}

// gofab_go_cntr_update is fi_cntr_add (op 0), fi_cntr_set (1),
// fi_cntr_adderr (2) and fi_cntr_seterr (3).
//
//export gofab_go_cntr_update
func gofab_go_cntr_update(c *C.struct_fid_cntr, v C.uint64_t, op C.int) (rc C.int) {
	defer recoverRC("fi_cntr_add", &rc)
	g, _, ok := cntrOf(c)
	if !ok {
		return -C.FI_EINVAL
	}
	var err error
	switch op {
	case 0:
		err = g.c.Add(uint64(v))
	case 1:
		err = g.c.Set(uint64(v))
	case 2:
		err = g.c.AddErr(uint64(v))
	default:
		err = g.c.SetErr(uint64(v))
	}
	return errno(err)
}

//export gofab_go_cntr_wait
func gofab_go_cntr_wait(c *C.struct_fid_cntr, threshold C.uint64_t, timeout C.int) (rc C.int) {
	defer recoverRC("fi_cntr_wait", &rc)
	g, _, ok := cntrOf(c)
	if !ok {
		return -C.FI_EINVAL
	}
	if g.waitObj == C.FI_WAIT_NONE {
		return g.pollWait(uint64(threshold), timeoutFromC(timeout))
	}
	return errno(g.c.Wait(uint64(threshold), timeoutFromC(timeout)))
}

// pollWait is fi_cntr_wait on a counter without a wait object (the Go
// Wait gives ErrNoSys): it reads (driving progress) until the value
// reaches threshold (0), the error value changes (-FI_EAVAIL) or the
// timeout passes (-FI_ETIMEDOUT), as libfabric's util counters do.
func (g *goCntr) pollWait(threshold uint64, timeout time.Duration) C.int {
	start := time.Now()
	e0, err := g.c.ReadErr()
	if err != nil {
		return errno(err)
	}
	for i := 0; ; i++ {
		v, err := g.c.Read()
		if err != nil {
			return errno(err)
		}
		if v >= threshold {
			return 0
		}
		if e, _ := g.c.ReadErr(); e != e0 {
			return -C.FI_EAVAIL
		}
		if timeout >= 0 && time.Since(start) >= timeout {
			return -C.FI_ETIMEDOUT
		}
		if i > 100 {
			time.Sleep(20 * time.Microsecond)
		}
	}
}
