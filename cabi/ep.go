package main

/*
#include "gofab.h"
*/
import "C"

import (
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// Endpoints: the control side of everything C reaches through a struct
// fid_ep (struct gofab_ep: FI_CLASS_EP endpoints and aliases, FI_CLASS_SEP
// scalable endpoints, FI_CLASS_TX_CTX/RX_CTX their contexts,
// FI_CLASS_SRX_CTX shared receive contexts), and the fi_ops_ep / fi_ops_cm
// entries passive endpoints share with them. The data calls are in
// epdata.go, passive endpoints and connection requests in pep.go, shared
// contexts and scalable endpoints in srx.go.

// goEP is the handle-table object of an active endpoint, an alias, or a
// scalable endpoint's transmit or receive context.
type goEP struct {
	ep *fabric.Endpoint
	// iov limits of the data calls (tx_attr/rx_attr iov_limit,
	// rma_iov_limit, clamped to 1 ... 1<<20): a vector longer than its
	// limit is refused before anything is built from it.
	txIOV, rxIOV, rmaIOV int
	addrFormat           fabric.AddrFormat
	cr                   *goConnReq // the connection request it was opened from, freed at accept or close
}

// epClass reports whether fclass is one of the classes of struct gofab_ep.
func epClass(fclass C.size_t) bool {
	switch fclass {
	case C.FI_CLASS_EP, C.FI_CLASS_SEP, C.FI_CLASS_TX_CTX, C.FI_CLASS_RX_CTX, C.FI_CLASS_SRX_CTX:
		return true
	}
	return false
}

// epObj returns the handle-table object of a struct gofab_ep (a *goEP,
// *goSEP or *goSRX); nil for NULL, another class, or a stale or forged
// handle. It is the lock-free lookup of the data path.
func epObj(fid *C.struct_fid) (any, uint64) {
	if fid == nil || !epClass(fid.fclass) {
		return nil, 0
	}
	h := uint64((*C.struct_gofab_ep)(unsafe.Pointer(fid)).h)
	return handles.get(h), h
}

// epOf returns the *goEP of fid (endpoints, aliases, contexts).
func epOf(fid *C.struct_fid) (*goEP, uint64, bool) {
	o, h := epObj(fid)
	e, ok := o.(*goEP)
	return e, h, ok
}

// limit clamps an attribute's iov limit as the Go API does.
func limit(v uint64) int { return int(max(1, min(v, 1<<20))) }

// wrapEP hands ep to C as a struct gofab_ep of class fclass; nil when
// memory runs out (the caller closes ep).
func wrapEP(ep *fabric.Endpoint, fclass C.int, ctx C.uintptr_t) (*goEP, *C.struct_gofab_ep) {
	g := &goEP{ep: ep}
	if info := ep.Info(); info != nil {
		g.addrFormat = info.AddrFormat
		if t := info.TxAttr; t != nil {
			g.txIOV, g.rmaIOV = limit(t.IOVLimit), limit(t.RMAIOVLimit)
		}
		if r := info.RxAttr; r != nil {
			g.rxIOV = limit(r.IOVLimit)
		}
	}
	g.txIOV, g.rxIOV, g.rmaIOV = max(g.txIOV, 1), max(g.rxIOV, 1), max(g.rmaIOV, 1)
	h, ok := handles.add(g)
	if !ok {
		return nil, nil
	}
	ce := C.gofab_ep_alloc(C.uint64_t(h), fclass, ctx)
	if ce == nil {
		handles.remove(h)
		return nil, nil
	}
	setFID(ep, unsafe.Pointer(ce))
	return g, ce
}

// gofab_go_domain_endpoint is fi_endpoint and fi_endpoint2
// (Domain.OpenEndpoint2: FI_PEER_TRANSFER answers FI_ENOSYS, other flags
// FI_EBADFLAGS).
//
//export gofab_go_domain_endpoint
func gofab_go_domain_endpoint(cd *C.struct_fid_domain, info *C.struct_fi_info, out **C.struct_fid_ep,
	flags C.uint64_t, ctx C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_endpoint", &rc)
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
	ep, err := d.d.OpenEndpoint2(gi, fabric.Flags(flags))
	if err != nil {
		return errno(err)
	}
	g, ce := wrapEP(ep, C.FI_CLASS_EP, ctx)
	if ce == nil {
		_ = ep.Close()
		return -C.FI_ENOMEM
	}
	g.cr = connReqOf(info.handle)
	*out = &ce.ep
	return 0
}

//export gofab_go_ep_close
func gofab_go_ep_close(fid *C.struct_fid) (rc C.int) {
	defer recoverRC("fi_close", &rc)
	o, h := epObj(fid)
	var err error
	switch g := o.(type) {
	case *goEP:
		if err = g.ep.Close(); err == nil {
			delFID(g.ep)
			freeConnReq(g.cr)
		}
	case *goSEP:
		if err = g.sep.Close(); err == nil {
			delFID(g.sep)
		}
	case *goSRX:
		err = g.srx.Close()
	default:
		return -C.FI_EINVAL
	}
	if err != nil {
		return errno(err)
	}
	handles.remove(h)
	C.free(unsafe.Pointer(fid))
	return 0
}

// bindObj resolves the bfid of a bind call to the Go object its wrapper
// offers (bindTarget, fidmap.go); nil for NULL or an object that cannot be
// bound.
func bindObj(bfid *C.struct_fid) fabric.Bindable {
	if bfid == nil {
		return nil
	}
	bt, ok := handles.get(uint64(C.gofab_fid_handle(bfid))).(bindTarget)
	if !ok || bindClass(bt) != bfid.fclass {
		return nil // also a live handle under another class's fid
	}
	return bt.bindTarget()
}

// bindClass is the fid class of a bind target's C struct.
func bindClass(bt bindTarget) C.size_t {
	switch bt.(type) {
	case *goCQ:
		return C.FI_CLASS_CQ
	case *goCntr:
		return C.FI_CLASS_CNTR
	case *goEQ:
		return C.FI_CLASS_EQ
	case *goAV:
		return C.FI_CLASS_AV
	case *goSRX:
		return C.FI_CLASS_SRX_CTX
	case *goSTX:
		return C.FI_CLASS_STX_CTX
	}
	return C.FI_CLASS_UNSPEC
}

//export gofab_go_ep_bind
func gofab_go_ep_bind(fid, bfid *C.struct_fid, flags C.uint64_t) (rc C.int) {
	defer recoverRC("fi_ep_bind", &rc)
	o, _ := epObj(fid)
	b := bindObj(bfid)
	if o == nil || b == nil {
		return -C.FI_EINVAL
	}
	switch g := o.(type) {
	case *goEP:
		return errno(g.ep.Bind(b, fabric.Flags(flags)))
	case *goSEP:
		av, ok := b.(*fabric.AV)
		if !ok {
			return -C.FI_EINVAL
		}
		return errno(g.sep.Bind(av, fabric.Flags(flags)))
	}
	return -C.FI_ENOSYS // shared receive contexts bind nothing
}

//export gofab_go_ep_control
func gofab_go_ep_control(fid *C.struct_fid, command C.int, arg C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_control", &rc)
	o, _ := epObj(fid)
	if o == nil {
		return -C.FI_EINVAL
	}
	switch g := o.(type) {
	case *goSEP:
		if command == C.FI_ENABLE {
			return errno(g.sep.Enable())
		}
		return -C.FI_ENOSYS
	case *goSRX:
		if command == C.FI_ENABLE {
			return 0 // usable from its opening
		}
		return -C.FI_ENOSYS
	}
	g := o.(*goEP)
	switch command {
	case C.FI_ENABLE:
		return errno(g.ep.Enable())
	case C.FI_GETOPSFLAG, C.FI_SETOPSFLAG:
		if arg < minPointer {
			return -C.FI_EINVAL
		}
		p := (*uint64)(cptr(uintptr(arg)))
		if command == C.FI_SETOPSFLAG {
			return errno(g.ep.SetOpsFlags(fabric.Flags(*p)))
		}
		f, err := g.ep.OpsFlags(fabric.Flags(*p))
		if err != nil {
			return errno(err)
		}
		*p = uint64(f)
		return 0
	case C.FI_ALIAS:
		if arg < minPointer {
			return -C.FI_EINVAL
		}
		a := (*C.struct_fi_alias)(cptr(uintptr(arg)))
		if a.fid == nil {
			return -C.FI_EINVAL
		}
		alias, err := g.ep.Alias(fabric.Flags(a.flags))
		if err != nil {
			return errno(err)
		}
		// The alias shares the endpoint's context (read as an integer:
		// it may be any value, see ctx.go).
		ctx := *(*C.uintptr_t)(unsafe.Pointer(&fid.context))
		_, ce := wrapEP(alias, C.FI_CLASS_EP, ctx)
		if ce == nil {
			_ = alias.Close()
			return -C.FI_ENOMEM
		}
		*a.fid = &ce.ep.fid
		return 0
	}
	return -C.FI_ENOSYS
}

//export gofab_go_ep_cancel
func gofab_go_ep_cancel(fid *C.struct_fid, ctx C.uintptr_t) (rc C.ssize_t) {
	defer recoverRC("fi_cancel", &rc)
	o, _ := epObj(fid)
	switch g := o.(type) {
	case *goEP:
		return errnoSize(g.ep.Cancel(ctxToGo(uintptr(ctx))))
	case *goSRX:
		return errnoSize(g.srx.Cancel(ctxToGo(uintptr(ctx))))
	case *goSEP:
		return -C.FI_ENOSYS
	}
	return -C.FI_EINVAL
}

// optObj is what fi_getopt/fi_setopt reach: endpoints, passive endpoints,
// shared receive contexts.
type optObj interface {
	GetOpt(level, name int) (uint64, error)
	SetOpt(level, name int, v uint64) error
}

func optOf(fid *C.struct_fid) optObj {
	if fid != nil && fid.fclass == C.FI_CLASS_PEP {
		if p, _, ok := pepOf(fid); ok {
			return p.pep
		}
		return nil
	}
	o, _ := epObj(fid)
	switch g := o.(type) {
	case *goEP:
		return g.ep
	case *goSRX:
		return g.srx
	}
	return nil
}

// gofab_go_ep_getopt is fi_getopt: every option of FI_OPT_ENDPOINT is a
// size_t.
//
//export gofab_go_ep_getopt
func gofab_go_ep_getopt(fid *C.struct_fid, level, name C.int, optval, optlen C.uintptr_t) (rc C.int) {
	defer recoverRC("fi_getopt", &rc)
	o := optOf(fid)
	if o == nil || optlen < minPointer {
		return -C.FI_EINVAL
	}
	v, err := o.GetOpt(int(level), int(name))
	if err != nil {
		return errno(err)
	}
	n := (*C.size_t)(cptr(uintptr(optlen)))
	if *n < 8 {
		*n = 8
		return -C.FI_ETOOSMALL
	}
	if optval < minPointer {
		return -C.FI_EINVAL
	}
	*(*uint64)(cptr(uintptr(optval))) = v
	*n = 8
	return 0
}

//export gofab_go_ep_setopt
func gofab_go_ep_setopt(fid *C.struct_fid, level, name C.int, optval C.uintptr_t, optlen C.size_t) (rc C.int) {
	defer recoverRC("fi_setopt", &rc)
	o := optOf(fid)
	if o == nil || optval < minPointer {
		return -C.FI_EINVAL
	}
	if level == C.FI_OPT_ENDPOINT && (name == C.FI_OPT_FI_HMEM_P2P || name == C.FI_OPT_XPU_TRIGGER) {
		// An int and a struct, not a size_t: no provider has them, and
		// the Go call says so (FI_ENOPROTOOPT) whatever the length.
		return errno(o.SetOpt(int(level), int(name), 0))
	}
	if optlen != 8 {
		if level != C.FI_OPT_ENDPOINT {
			return -C.FI_ENOPROTOOPT
		}
		return -C.FI_EINVAL
	}
	return errno(o.SetOpt(int(level), int(name), *(*uint64)(cptr(uintptr(optval)))))
}

//export gofab_go_ep_size_left
func gofab_go_ep_size_left(cep *C.struct_fid_ep, tx C.int) (rc C.ssize_t) {
	defer recoverRC("fi_size_left", &rc)
	if cep == nil {
		return -C.FI_EINVAL
	}
	g, _, ok := epOf(&cep.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	var n int
	var err error
	if tx != 0 {
		n, err = g.ep.TxSizeLeft()
	} else {
		n, err = g.ep.RxSizeLeft()
	}
	if err != nil {
		return errnoSize(err)
	}
	return C.ssize_t(n)
}

// ---- fi_ops_cm ----

// namer is what fi_getname and fi_setname reach.
type namer interface {
	Name() ([]byte, error)
	SetName(addr []byte) error
}

// sepNamer gives a scalable endpoint (no SetName in the Go API) the namer
// shape.
type sepNamer struct{ s *fabric.ScalableEndpoint }

func (n sepNamer) Name() ([]byte, error)  { return n.s.Name() }
func (n sepNamer) SetName(_ []byte) error { return fabric.ErrNoSys }

func namerOf(fid *C.struct_fid) namer {
	if fid != nil && fid.fclass == C.FI_CLASS_PEP {
		if p, _, ok := pepOf(fid); ok {
			return p.pep
		}
		return nil
	}
	o, _ := epObj(fid)
	switch g := o.(type) {
	case *goEP:
		return g.ep
	case *goSEP:
		return sepNamer{g.sep}
	}
	return nil
}

//export gofab_go_ep_setname
func gofab_go_ep_setname(fid *C.struct_fid, addr C.uintptr_t, addrlen C.size_t) (rc C.int) {
	defer recoverRC("fi_setname", &rc)
	n := namerOf(fid)
	if n == nil || addr < minPointer || addrlen == 0 || addrlen > maxCMBytes {
		return -C.FI_EINVAL
	}
	return errno(n.SetName(C.GoBytes(cptr(uintptr(addr)), C.int(addrlen))))
}

// gofab_go_ep_getname is fi_getname (peer 0) and fi_getpeer (peer 1): the
// address is copied into addr up to *addrlen bytes, *addrlen is set to its
// length, and a short buffer is -FI_ETOOSMALL.
//
//export gofab_go_ep_getname
func gofab_go_ep_getname(fid *C.struct_fid, addr, addrlen C.uintptr_t, peer C.int) (rc C.int) {
	defer recoverRC("fi_getname", &rc)
	if addrlen < minPointer {
		return -C.FI_EINVAL
	}
	var b []byte
	var err error
	if peer != 0 {
		g, _, ok := epOf(fid)
		if !ok {
			return -C.FI_EINVAL
		}
		b, err = g.ep.Peer()
	} else {
		n := namerOf(fid)
		if n == nil {
			return -C.FI_EINVAL
		}
		b, err = n.Name()
	}
	if err != nil {
		return errno(err)
	}
	lp := (*C.size_t)(cptr(uintptr(addrlen)))
	avail := int(min(uint64(*lp), 1<<20))
	*lp = C.size_t(len(b))
	if avail < len(b) {
		if avail > 0 && addr >= minPointer {
			copy(unsafe.Slice((*byte)(cptr(uintptr(addr))), avail), b)
		}
		return -C.FI_ETOOSMALL
	}
	if addr < minPointer {
		return -C.FI_EINVAL
	}
	copy(unsafe.Slice((*byte)(cptr(uintptr(addr))), avail), b)
	return 0
}

// maxCMBytes bounds what the CM calls copy from C (connection data,
// addresses): far above any provider's FI_OPT_CM_DATA_SIZE, and a length
// beyond it is bad input, not a copy of gigabytes.
const maxCMBytes = 1 << 16

// cmData copies connection data from C; ok false for NULL with a nonzero
// length or an absurd length.
func cmData(p C.uintptr_t, n C.size_t) ([]byte, bool) {
	switch {
	case n == 0:
		return nil, true
	case p < minPointer || n > maxCMBytes:
		return nil, false
	}
	return C.GoBytes(cptr(uintptr(p)), C.int(n)), true
}

// addrBytes copies a peer address of the endpoint's format from C: a
// sockaddr is as long as its family says, an FI_ADDR_STR string runs to
// its NUL.
func addrBytes(f fabric.AddrFormat, p C.uintptr_t) ([]byte, bool) {
	if p == 0 {
		return nil, true
	}
	if p < minPointer {
		return nil, false
	}
	if f == fabric.AddrStr {
		return []byte(C.GoString((*C.char)(cptr(uintptr(p))))), true
	}
	sa := (*C.struct_sockaddr)(cptr(uintptr(p)))
	switch sa.sa_family {
	case C.AF_INET:
		return C.GoBytes(cptr(uintptr(p)), C.int(C.sizeof_struct_sockaddr_in)), true
	case C.AF_INET6:
		return C.GoBytes(cptr(uintptr(p)), C.int(C.sizeof_struct_sockaddr_in6)), true
	}
	return nil, false
}

//export gofab_go_ep_connect
func gofab_go_ep_connect(cep *C.struct_fid_ep, addr, param C.uintptr_t, paramlen C.size_t) (rc C.int) {
	defer recoverRC("fi_connect", &rc)
	if cep == nil {
		return -C.FI_EINVAL
	}
	g, _, ok := epOf(&cep.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	a, ok := addrBytes(g.addrFormat, addr)
	if !ok {
		return -C.FI_EINVAL
	}
	data, ok := cmData(param, paramlen)
	if !ok {
		return -C.FI_EINVAL
	}
	return errno(g.ep.Connect(a, data))
}

//export gofab_go_ep_accept
func gofab_go_ep_accept(cep *C.struct_fid_ep, param C.uintptr_t, paramlen C.size_t) (rc C.int) {
	defer recoverRC("fi_accept", &rc)
	if cep == nil {
		return -C.FI_EINVAL
	}
	g, _, ok := epOf(&cep.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	data, ok := cmData(param, paramlen)
	if !ok {
		return -C.FI_EINVAL
	}
	if err := g.ep.Accept(data); err != nil {
		return errno(err)
	}
	freeConnReq(g.cr) // consumed; the endpoint's close finds it gone
	return 0
}

//export gofab_go_ep_shutdown
func gofab_go_ep_shutdown(cep *C.struct_fid_ep, flags C.uint64_t) (rc C.int) {
	defer recoverRC("fi_shutdown", &rc)
	if cep == nil {
		return -C.FI_EINVAL
	}
	g, _, ok := epOf(&cep.fid)
	if !ok {
		return -C.FI_EINVAL
	}
	return errno(g.ep.Shutdown(fabric.Flags(flags)))
}

// cptr turns a C address (at least minPointer, checked by the caller) into
// a pointer without a uintptr -> unsafe.Pointer conversion that vet flags:
// the memory is C's, never the Go heap's.
func cptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }
