package chaos

import (
	"sync"
	"time"

	"github.com/gofabric/fabric/provider"
)

// endpoint is a hooked endpoint: it forwards every call to the core
// endpoint, and, when the fabric's configuration asks for it, injects
// faults into the transmits and traces them on the way (submit).
type endpoint struct {
	st *state
	p  provider.Endpoint
	id uint64 // per hook, in order of opening: the endpoint's random stream

	// The core endpoint's optional operations (nil when absent).
	tagged provider.Tagged
	rma    provider.RMA
	atomic provider.Atomic
	conn   provider.Connector
	inj    provider.Injector
	bsend  provider.BufSender
	namer  provider.Namer
	opts   provider.OptionHandler
	avl    provider.AVListener

	epType  provider.EPType
	ordered bool // tx_attr.msg_order has FI_ORDER_SAS: no reordering
	self    any  // the wrapper value the root holds (set by wrapEndpoint)

	mu  sync.Mutex
	res provider.Resources // as the root gave them at Enable
	f   faults             // fault state (faults.go), under mu
}

var (
	_ provider.Endpoint      = (*endpoint)(nil)
	_ provider.Tagged        = (*endpoint)(nil)
	_ provider.RMA           = (*endpoint)(nil)
	_ provider.Atomic        = (*endpoint)(nil)
	_ provider.Connector     = (*endpoint)(nil)
	_ provider.Injector      = (*endpoint)(nil)
	_ provider.BufSender     = (*endpoint)(nil)
	_ provider.Namer         = (*endpoint)(nil)
	_ provider.OptionHandler = (*endpoint)(nil)
	_ provider.AVListener    = (*endpoint)(nil)
)

// wrapEndpoint wraps the core endpoint p opened from info, in the wrapper
// type with exactly p's set of provider.Waiter, provider.FDWaiter and
// provider.BufferedEndpoint (whose presence the root acts on).
func wrapEndpoint(st *state, p provider.Endpoint, info *provider.Info) provider.Endpoint {
	e := &endpoint{st: st, p: p, id: st.hook.nextEP.Add(1) - 1}
	e.tagged, _ = p.(provider.Tagged)
	e.rma, _ = p.(provider.RMA)
	e.atomic, _ = p.(provider.Atomic)
	e.conn, _ = p.(provider.Connector)
	e.inj, _ = p.(provider.Injector)
	e.bsend, _ = p.(provider.BufSender)
	e.namer, _ = p.(provider.Namer)
	e.opts, _ = p.(provider.OptionHandler)
	e.avl, _ = p.(provider.AVListener)
	if info != nil && info.EPAttr != nil {
		e.epType = info.EPAttr.Type
	}
	if info != nil && info.TxAttr != nil {
		e.ordered = info.TxAttr.MsgOrder&provider.OrderSAS != 0
	}
	w, ok1 := p.(provider.Waiter)
	fw, ok2 := p.(provider.FDWaiter)
	b, ok3 := p.(provider.BufferedEndpoint)
	var out provider.Endpoint
	switch {
	case ok1 && ok2 && ok3:
		out = epWFB{e, waitFwd{e, w}, fdFwd{fw}, bufFwd{b}}
	case ok1 && ok2:
		out = epWF{e, waitFwd{e, w}, fdFwd{fw}}
	case ok1 && ok3:
		out = epWB{e, waitFwd{e, w}, bufFwd{b}}
	case ok2 && ok3:
		out = epFB{e, fdFwd{fw}, bufFwd{b}}
	case ok1:
		out = epW{e, waitFwd{e, w}}
	case ok2:
		out = epF{e, fdFwd{fw}}
	case ok3:
		out = epB{e, bufFwd{b}}
	default:
		out = e
	}
	e.f.init(st, e.id, info)
	e.self = out
	return out
}

// The wrapper types with optional interfaces of the core endpoint.
type (
	epW struct {
		*endpoint
		waitFwd
	}
	epF struct {
		*endpoint
		fdFwd
	}
	epB struct {
		*endpoint
		bufFwd
	}
	epWF struct {
		*endpoint
		waitFwd
		fdFwd
	}
	epWB struct {
		*endpoint
		waitFwd
		bufFwd
	}
	epFB struct {
		*endpoint
		fdFwd
		bufFwd
	}
	epWFB struct {
		*endpoint
		waitFwd
		fdFwd
		bufFwd
	}
)

// waitFwd forwards provider.Waiter, waking when a held transmit falls
// due, so that a blocking read (fi_cq_sread) posts it in time.
type waitFwd struct {
	e *endpoint
	w provider.Waiter
}

func (f waitFwd) WaitReady(deadline time.Time) error {
	due, ok := f.e.nextDue()
	if !ok || (!deadline.IsZero() && deadline.Before(due)) {
		return f.w.WaitReady(deadline)
	}
	if err := f.w.WaitReady(due); err != nil && !isTimeout(err) {
		return err
	}
	f.e.Progress()
	return nil
}

func isTimeout(err error) bool {
	e, ok := err.(provider.Errno)
	return ok && (e == provider.ETIMEDOUT || e == provider.EAGAIN)
}

type fdFwd struct{ w provider.FDWaiter }

func (f fdFwd) WaitFD() int { return f.w.WaitFD() }

type bufFwd struct{ b provider.BufferedEndpoint }

func (f bufFwd) BufferedDefaults() (min, limit, max uint64) { return f.b.BufferedDefaults() }

// Progress drives the core endpoint and posts the held transmits that
// fell due.
func (e *endpoint) Progress() {
	e.p.Progress()
	if e.f.holding.Load() {
		e.release(false)
	}
}

// Enable enables the core endpoint with r, whose event queue reports
// events about the core endpoint as about the wrapper.
func (e *endpoint) Enable(r *provider.Resources) error {
	if r == nil {
		return provider.EINVAL
	}
	e.mu.Lock()
	e.res = *r
	e.mu.Unlock()
	if err := e.p.Enable(e.st.resources(e, r)); err != nil {
		e.st.traceCall(e, "fi_enable", nil, err)
		return err
	}
	self, _ := e.p.Name()
	e.mu.Lock()
	e.f.self = self
	e.mu.Unlock()
	e.st.traceCall(e, "fi_enable", self, nil)
	return nil
}

// Close posts the transmits still held (those the core endpoint refuses
// complete with FI_ECANCELED), then closes the core endpoint; the wrapper
// then refuses transmits (EBADF), as the core endpoint does.
func (e *endpoint) Close() error {
	e.closeHeld()
	err := e.p.Close()
	e.st.traceCall(e, "fi_close", nil, err)
	return err
}

func (e *endpoint) Name() ([]byte, error) { return e.p.Name() }

// Cancel cancels a held transmit (FI_ECANCELED) or asks the core endpoint.
func (e *endpoint) Cancel(ctx any) error {
	var err error
	if !e.cancelHeld(ctx) {
		err = e.p.Cancel(ctx)
	}
	e.st.traceCall(e, "fi_cancel", nil, err)
	return err
}

// ---- transmits ----

func (e *endpoint) Send(m provider.Msg) error {
	if e.fast() {
		return e.p.Send(m)
	}
	return e.submit(&op{kind: opSend, m: m})
}

func (e *endpoint) TSend(m provider.Msg) error {
	if e.tagged == nil {
		return provider.ENOSYS
	}
	if e.fast() {
		return e.tagged.TSend(m)
	}
	return e.submit(&op{kind: opTSend, m: m})
}

func (e *endpoint) Inject(buf []byte, dest provider.Addr) error {
	if e.fast() {
		if e.inj != nil {
			return e.inj.Inject(buf, dest)
		}
		return e.p.Send(provider.Msg{Buf: buf, Addr: dest, Flags: provider.FlagInject})
	}
	return e.submit(&op{kind: opSend, m: provider.Msg{Buf: buf, Addr: dest, Flags: provider.FlagInject}})
}

func (e *endpoint) SendBuf(buf []byte, dest provider.Addr, ctx any, flags provider.Flags) error {
	if e.fast() {
		if e.bsend != nil {
			return e.bsend.SendBuf(buf, dest, ctx, flags)
		}
		return e.p.Send(provider.Msg{Buf: buf, Addr: dest, Context: ctx, Flags: flags})
	}
	return e.submit(&op{kind: opSend, m: provider.Msg{Buf: buf, Addr: dest, Context: ctx, Flags: flags}})
}

func (e *endpoint) Read(m provider.Msg) error {
	if e.rma == nil {
		return provider.ENOSYS
	}
	if e.fast() {
		return e.rma.Read(m)
	}
	return e.submit(&op{kind: opRead, m: m})
}

func (e *endpoint) Write(m provider.Msg) error {
	if e.rma == nil {
		return provider.ENOSYS
	}
	if e.fast() {
		return e.rma.Write(m)
	}
	return e.submit(&op{kind: opWrite, m: m})
}

func (e *endpoint) Atomic(m provider.AtomicMsg) error {
	if e.atomic == nil {
		return provider.ENOSYS
	}
	if e.fast() {
		return e.atomic.Atomic(m)
	}
	return e.submit(&op{kind: opAtomic, a: m})
}

// ---- control ----

func (e *endpoint) Connect(addr []byte, data []byte) error {
	if e.conn == nil {
		return provider.ENOSYS
	}
	err := e.conn.Connect(addr, data)
	e.st.traceCall(e, "fi_connect", addr, err)
	return err
}

func (e *endpoint) Accept(data []byte) error {
	if e.conn == nil {
		return provider.ENOSYS
	}
	err := e.conn.Accept(data)
	e.st.traceCall(e, "fi_accept", nil, err)
	return err
}

func (e *endpoint) Shutdown(flags provider.Flags) error {
	if e.conn == nil {
		return provider.ENOSYS
	}
	err := e.conn.Shutdown(flags)
	e.st.traceCall(e, "fi_shutdown", nil, err)
	return err
}

func (e *endpoint) Peer() ([]byte, error) {
	if e.conn == nil {
		return nil, provider.ENOSYS
	}
	return e.conn.Peer()
}

func (e *endpoint) SetName(addr []byte) error {
	if e.namer == nil {
		return provider.ENOSYS
	}
	return e.namer.SetName(addr)
}

func (e *endpoint) GetOpt(name int) (uint64, error) {
	if e.opts == nil {
		return 0, provider.ENOPROTOOPT
	}
	return e.opts.GetOpt(name)
}

func (e *endpoint) SetOpt(name int, v uint64) error {
	if e.opts == nil {
		return provider.ENOPROTOOPT
	}
	return e.opts.SetOpt(name, v)
}

func (e *endpoint) AddrInserted() {
	if e.avl != nil {
		e.avl.AddrInserted()
	}
}

// eqWriter is the event queue a core object reports to: events about the
// core object (from) reach the root's queue (w) as about the wrapper the
// root holds (to), which the root then reports as its own object.
type eqWriter struct {
	w    provider.EQWriter
	from any
	to   any
}

func (q eqWriter) Write(ev *provider.EQEntry) error {
	if ev.FID == q.from {
		c := *ev
		c.FID = q.to
		return q.w.Write(&c)
	}
	return q.w.Write(ev)
}

func (q eqWriter) WriteErr(ev *provider.EQErrEntry) error {
	if ev.FID == q.from {
		c := *ev
		c.FID = q.to
		return q.w.WriteErr(&c)
	}
	return q.w.WriteErr(ev)
}
