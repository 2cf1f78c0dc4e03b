// Package sepctx holds what the providers' scalable endpoints
// (fi_scalable_ep) share: the transmit and receive context wrappers around
// ordinary provider endpoints, and the address view through which a
// transmit context reaches a peer's receive context i.
//
// The design every provider follows: receive context i of a scalable
// endpoint is an ordinary endpoint of the provider bound at an address
// derived from the scalable endpoint's own (its base address; udp and tcp:
// the base port + i, shm: the base region id + i), receive context 0 at
// the base address itself, so that an endpoint that is not scalable, a C
// peer included, reaches receive context 0 unchanged. A transmit context
// is an ordinary endpoint of the provider, with its own queues and locks,
// whose AV is seen through TxAV: an fi_addr with receive context bits
// (fi_rx_addr) resolves to the derived address of that receive context.
// No wire format changes, and no lock is shared between contexts on the
// data path.
package sepctx

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/provider"
)

// Derive returns the address of receive context idx (> 0) of the scalable
// endpoint whose base address is base, or nil if there is none (a port
// beyond 65535). It must not modify base.
type Derive func(base []byte, idx int) []byte

// rxBitser is implemented by AVs with receive context bits (internal/av).
type rxBitser interface{ RxCtxBits() int }

// TxAV is the address view of a transmit context. The application's
// fi_addr a with receive context index i in its top RxCtxBits bits is
// handed to the provider endpoint as the virtual address
// (base index << bits | i) (Virt), which Lookup resolves to the derived
// address of receive context i. Providers keep per-peer state by fi_addr
// (connections, mapped regions): each receive context of a peer is then a
// peer of its own, and the virtual addresses stay dense table indices.
type TxAV struct {
	inner  provider.AVView
	bits   uint
	mask   uint64
	derive Derive
	cache  derivedCache
}

type derived struct {
	base, addr []byte
}

// derivedCache remembers the derived addresses of receive contexts by
// the address that names them, with the base address they were derived
// from (an AV entry may be replaced). Readers do not lock.
type derivedCache struct {
	mu sync.Mutex                                 // writers
	m  atomic.Pointer[map[provider.Addr]*derived] // copy on write
}

// get returns the address of receive context idx (> 0) of the peer at
// base, which a names: from the cache, or derive's (then remembered).
func (c *derivedCache) get(a provider.Addr, base []byte, idx int, derive Derive) []byte {
	if m := c.m.Load(); m != nil {
		if d := (*m)[a]; d != nil && bytes.Equal(d.base, base) {
			return d.addr
		}
	}
	return c.add(a, base, derive(base, idx))
}

func (c *derivedCache) add(a provider.Addr, base, addr []byte) []byte {
	if addr == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	n := 1
	if old != nil {
		n += len(*old)
	}
	m := make(map[provider.Addr]*derived, n)
	if old != nil {
		for k, d := range *old {
			m[k] = d
		}
	}
	m[a] = &derived{base: append([]byte(nil), base...), addr: addr}
	c.m.Store(&m)
	return addr
}

// NewTxAV returns the transmit context view of inner.
func NewTxAV(inner provider.AVView, derive Derive) *TxAV {
	a := &TxAV{inner: inner, derive: derive}
	if b, ok := inner.(rxBitser); ok && b.RxCtxBits() > 0 && b.RxCtxBits() < 32 {
		a.bits = uint(b.RxCtxBits())
		a.mask = 1<<a.bits - 1
	}
	return a
}

// Virt converts an application fi_addr to the address the provider
// endpoint of the transmit context is given.
func (a *TxAV) Virt(addr provider.Addr) provider.Addr {
	if a == nil || a.bits == 0 || addr == provider.AddrNotAvail {
		return addr
	}
	idx := uint64(addr) >> (64 - a.bits)
	base := uint64(addr) << a.bits >> a.bits
	if base >= 1<<(64-2*a.bits) {
		return provider.AddrNotAvail
	}
	return provider.Addr(base<<a.bits | idx)
}

// Lookup implements provider.AVView for virtual addresses.
func (a *TxAV) Lookup(v provider.Addr) []byte {
	if a.bits == 0 || v == provider.AddrNotAvail {
		return a.inner.Lookup(v)
	}
	idx := uint64(v) & a.mask
	base := a.inner.Lookup(provider.Addr(uint64(v) >> a.bits))
	if base == nil || idx == 0 {
		return base
	}
	return a.cache.get(v, base, int(idx), a.derive)
}

// Reverse implements provider.AVView: the virtual address of receive
// context 0 of the peer (a transmit context receives no messages; its
// provider endpoint may still resolve peers it answers).
func (a *TxAV) Reverse(b []byte) provider.Addr {
	r := a.inner.Reverse(b)
	if a.bits == 0 || r == provider.AddrNotAvail {
		return r
	}
	return a.Virt(r)
}

// NamedAV is the address view of an endpoint that is not scalable, bound
// to an AV with receive context bits: an fi_addr with receive context
// index i > 0 (fi_rx_addr) resolves to the derived address of that
// receive context, instead of the peer's base address (receive context
// 0). Providers keyed by fi_addr see such an address as a peer of its
// own.
type NamedAV struct {
	inner  provider.AVView
	bits   uint
	derive Derive
	cache  derivedCache
}

// NewNamedAV returns the view of inner for an endpoint that is not
// scalable; inner itself if its AV has no receive context bits.
func NewNamedAV(inner provider.AVView, derive Derive) provider.AVView {
	b, ok := inner.(rxBitser)
	if !ok || b.RxCtxBits() <= 0 || b.RxCtxBits() > 63 {
		return inner
	}
	return &NamedAV{inner: inner, bits: uint(b.RxCtxBits()), derive: derive}
}

// Lookup implements provider.AVView.
func (a *NamedAV) Lookup(addr provider.Addr) []byte {
	base := a.inner.Lookup(addr)
	if base == nil || addr == provider.AddrNotAvail {
		return base
	}
	idx := uint64(addr) >> (64 - a.bits)
	if idx == 0 {
		return base
	}
	return a.cache.get(addr, base, int(idx), a.derive)
}

// Reverse implements provider.AVView.
func (a *NamedAV) Reverse(b []byte) provider.Addr { return a.inner.Reverse(b) }

// Tx is a transmit context: the provider endpoint p, sending only, with
// its addresses translated by TxAV. It forwards the optional data
// interfaces p has.
type Tx struct {
	p        provider.Endpoint
	derive   Derive
	name     []byte
	progress bool
	av       *TxAV
	res      provider.Resources

	inj    provider.Injector
	bsend  provider.BufSender
	tagged provider.Tagged
	rma    provider.RMA
	atomic provider.Atomic
}

// TxWait is a Tx whose provider endpoint also waits (its progress handles
// acknowledgements, connections): it forwards provider.Waiter and
// provider.FDWaiter.
type TxWait struct {
	*Tx
	w  provider.Waiter
	fw provider.FDWaiter
}

// NewTx wraps the provider endpoint p as a transmit context of the
// scalable endpoint named name. With progress false, Progress does
// nothing (p shares its socket with a receive context, which receives).
func NewTx(p provider.Endpoint, derive Derive, name []byte, progress bool) provider.Endpoint {
	t := &Tx{p: p, derive: derive, name: append([]byte(nil), name...), progress: progress}
	t.inj, _ = p.(provider.Injector)
	t.bsend, _ = p.(provider.BufSender)
	t.tagged, _ = p.(provider.Tagged)
	t.rma, _ = p.(provider.RMA)
	t.atomic, _ = p.(provider.Atomic)
	if progress {
		w, ok1 := p.(provider.Waiter)
		fw, ok2 := p.(provider.FDWaiter)
		if ok1 && ok2 {
			return &TxWait{Tx: t, w: w, fw: fw}
		}
	}
	return t
}

// Inner returns the provider endpoint of a context (tests).
func Inner(p provider.Endpoint) provider.Endpoint {
	switch c := p.(type) {
	case *Tx:
		return c.p
	case *TxWait:
		return c.p
	case *Rx:
		return c.p
	}
	return p
}

// Enable enables p with the AV seen through TxAV. A missing receive CQ is
// the transmit CQ (nothing is received).
func (t *Tx) Enable(r *provider.Resources) error {
	if r == nil {
		return provider.EINVAL
	}
	t.res = *r
	if t.res.RxCQ == nil {
		t.res.RxCQ = t.res.TxCQ
	}
	if r.AV != nil {
		t.av = NewTxAV(r.AV, t.derive)
		t.res.AV = t.av
	}
	return t.p.Enable(&t.res)
}

// Close closes p.
func (t *Tx) Close() error { return t.p.Close() }

// Name returns the scalable endpoint's address.
func (t *Tx) Name() ([]byte, error) { return append([]byte(nil), t.name...), nil }

// Cancel forwards to p.
func (t *Tx) Cancel(ctx any) error { return t.p.Cancel(ctx) }

// Progress progresses p, unless its progress is the receive context's.
func (t *Tx) Progress() {
	if t.progress {
		t.p.Progress()
	}
}

// Send sends m to the translated address.
func (t *Tx) Send(m provider.Msg) error {
	m.Addr = t.av.Virt(m.Addr)
	return t.p.Send(m)
}

// Inject implements provider.Injector.
func (t *Tx) Inject(buf []byte, dest provider.Addr) error {
	if t.inj == nil {
		return t.Send(provider.Msg{Buf: buf, Addr: dest, Flags: provider.FlagInject})
	}
	return t.inj.Inject(buf, t.av.Virt(dest))
}

// SendBuf implements provider.BufSender.
func (t *Tx) SendBuf(buf []byte, dest provider.Addr, ctx any, flags provider.Flags) error {
	if t.bsend == nil {
		return t.Send(provider.Msg{Buf: buf, Addr: dest, Context: ctx, Flags: flags})
	}
	return t.bsend.SendBuf(buf, t.av.Virt(dest), ctx, flags)
}

// TSend implements provider.Tagged.
func (t *Tx) TSend(m provider.Msg) error {
	if t.tagged == nil {
		return provider.ENOSYS
	}
	m.Addr = t.av.Virt(m.Addr)
	return t.tagged.TSend(m)
}

// Read implements provider.RMA.
func (t *Tx) Read(m provider.Msg) error {
	if t.rma == nil {
		return provider.ENOSYS
	}
	m.Addr = t.av.Virt(m.Addr)
	return t.rma.Read(m)
}

// Write implements provider.RMA.
func (t *Tx) Write(m provider.Msg) error {
	if t.rma == nil {
		return provider.ENOSYS
	}
	m.Addr = t.av.Virt(m.Addr)
	return t.rma.Write(m)
}

// Atomic implements provider.Atomic.
func (t *Tx) Atomic(m provider.AtomicMsg) error {
	if t.atomic == nil {
		return provider.ENOSYS
	}
	m.Addr = t.av.Virt(m.Addr)
	return t.atomic.Atomic(m)
}

// WaitReady forwards to the provider endpoint.
func (t *TxWait) WaitReady(deadline time.Time) error { return t.w.WaitReady(deadline) }

// WaitFD forwards to the provider endpoint.
func (t *TxWait) WaitFD() int { return t.fw.WaitFD() }

// Rx is a receive context: the provider endpoint p, receiving only.
type Rx struct {
	p      provider.Endpoint
	name   []byte
	baseOf func(src []byte) []byte
	res    provider.Resources
	w      provider.Waiter
	fw     provider.FDWaiter
	l      provider.AVListener
}

// NewRx wraps the provider endpoint p as a receive context of the scalable
// endpoint named name. baseOf, if not nil, maps the source address of a
// peer's transmit context to its scalable endpoint's base address, for
// sources (FI_SOURCE) that the AV does not know directly.
func NewRx(p provider.Endpoint, name []byte, baseOf func(src []byte) []byte) *Rx {
	r := &Rx{p: p, name: append([]byte(nil), name...), baseOf: baseOf}
	r.w, _ = p.(provider.Waiter)
	r.fw, _ = p.(provider.FDWaiter)
	r.l, _ = p.(provider.AVListener)
	return r
}

// rxAV resolves the sources of transmit contexts to their scalable
// endpoint's address.
type rxAV struct {
	provider.AVView
	baseOf func([]byte) []byte
}

func (a rxAV) Reverse(b []byte) provider.Addr {
	r := a.AVView.Reverse(b)
	if r == provider.AddrNotAvail {
		if base := a.baseOf(b); base != nil {
			r = a.AVView.Reverse(base)
		}
	}
	return r
}

// Enable enables p. A missing transmit CQ is the receive CQ (nothing is
// sent).
func (r *Rx) Enable(res *provider.Resources) error {
	if res == nil {
		return provider.EINVAL
	}
	r.res = *res
	if r.res.TxCQ == nil {
		r.res.TxCQ = r.res.RxCQ
	}
	if r.baseOf != nil && r.res.AV != nil {
		r.res.AV = rxAV{AVView: r.res.AV, baseOf: r.baseOf}
	}
	return r.p.Enable(&r.res)
}

// Close closes p.
func (r *Rx) Close() error { return r.p.Close() }

// Name returns the scalable endpoint's address.
func (r *Rx) Name() ([]byte, error) { return append([]byte(nil), r.name...), nil }

// Send returns ENOSYS: a receive context does not transmit.
func (r *Rx) Send(provider.Msg) error { return provider.ENOSYS }

// Cancel forwards to p.
func (r *Rx) Cancel(ctx any) error { return r.p.Cancel(ctx) }

// Progress progresses p.
func (r *Rx) Progress() { r.p.Progress() }

// WaitReady forwards to p (nil if it cannot wait: the caller polls).
func (r *Rx) WaitReady(deadline time.Time) error {
	if r.w == nil {
		return nil
	}
	return r.w.WaitReady(deadline)
}

// WaitFD forwards to p (-1 if it has no descriptor).
func (r *Rx) WaitFD() int {
	if r.fw == nil {
		return -1
	}
	return r.fw.WaitFD()
}

// AddrInserted forwards to p.
func (r *Rx) AddrInserted() {
	if r.l != nil {
		r.l.AddrInserted()
	}
}
