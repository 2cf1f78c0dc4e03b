package chaos

import (
	"time"

	"github.com/gofabric/fabric/provider"
)

// The wrappers below forward every call of the provider SPI to the core
// provider's object. An optional interface the root package finds by type
// assertion is implemented by a wrapper only where its presence changes
// nothing: the wrapper answers as the root would have without it (ENOSYS,
// ENOPROTOOPT ...) when the core object lacks it. Where presence itself
// matters (provider.Waiter, FDWaiter, BufferedEndpoint, AtomicDomain,
// Progresser and Backlogger of passive endpoints), the wrapper's type is
// chosen to have exactly the core object's set (see wrapEndpoint).

// hookedFabric is a hooked fabric.
type hookedFabric struct {
	st *state
	p  provider.Fabric
}

var (
	_ provider.Fabric        = (*hookedFabric)(nil)
	_ provider.PassiveFabric = (*hookedFabric)(nil)
)

func (f *hookedFabric) Close() error { return f.p.Close() }

// Domain opens the core domain and wraps it.
func (f *hookedFabric) Domain(info *provider.Info) (provider.Domain, error) {
	d, err := f.p.Domain(info)
	if err != nil {
		return nil, err
	}
	w := &domain{st: f.st, p: d}
	if a, ok := d.(provider.AtomicDomain); ok {
		return &atomicDomain{domain: w, q: a}, nil
	}
	return w, nil
}

// PassiveEndpoint opens the core passive endpoint (FI_EP_MSG).
func (f *hookedFabric) PassiveEndpoint(info *provider.Info) (provider.PassiveEndpoint, error) {
	pf, ok := f.p.(provider.PassiveFabric)
	if !ok {
		return nil, provider.ENOSYS
	}
	p, err := pf.PassiveEndpoint(unwrapHandle(info))
	if err != nil {
		return nil, err
	}
	return wrapPEP(f.st, p), nil
}

// unwrapHandle returns info with a hooked passive endpoint as Handle
// replaced by the core one (the root hands providers their own passive
// endpoint), or info itself.
func unwrapHandle(info *provider.Info) *provider.Info {
	if info == nil {
		return nil
	}
	if p, ok := info.Handle.(pepUnwrapper); ok {
		c := *info
		c.Handle = p.core()
		return &c
	}
	return info
}

// domain is a hooked domain.
type domain struct {
	st *state
	p  provider.Domain
}

var (
	_ provider.Domain         = (*domain)(nil)
	_ provider.MRSharer       = (*domain)(nil)
	_ provider.ScalableDomain = (*domain)(nil)
	_ provider.SharedTxDomain = (*domain)(nil)
	_ provider.TransferDomain = (*domain)(nil)
	_ provider.AtomicDomain   = (*atomicDomain)(nil)
)

func (d *domain) Close() error { return d.p.Close() }

// Endpoint opens the core endpoint and wraps it.
func (d *domain) Endpoint(info *provider.Info) (provider.Endpoint, error) {
	ep, err := d.p.Endpoint(unwrapHandle(info))
	if err != nil {
		return nil, err
	}
	return wrapEndpoint(d.st, ep, info), nil
}

// MRDomain forwards provider.MRSharer (nil, ignored by the root, when the
// core domain has no such table).
func (d *domain) MRDomain() any {
	if s, ok := d.p.(provider.MRSharer); ok {
		return s.MRDomain()
	}
	return nil
}

// ScalableEndpoint opens a core scalable endpoint; its contexts are
// wrapped endpoints.
func (d *domain) ScalableEndpoint(info *provider.Info) (provider.ScalableEndpoint, error) {
	sd, ok := d.p.(provider.ScalableDomain)
	if !ok {
		return nil, provider.ENOSYS
	}
	s, err := sd.ScalableEndpoint(info)
	if err != nil {
		return nil, err
	}
	return &sep{st: d.st, p: s, info: info}, nil
}

// SharedTx forwards fi_stx_context (the context is the core one: endpoints
// are given only its attributes).
func (d *domain) SharedTx(attr *provider.TxAttr) (provider.SharedTx, error) {
	sd, ok := d.p.(provider.SharedTxDomain)
	if !ok {
		return nil, provider.ENOSYS
	}
	return sd.SharedTx(attr)
}

// TransferEndpoint forwards FI_PEER_TRANSFER endpoints, wrapped.
func (d *domain) TransferEndpoint(info *provider.Info, ctx *provider.TransferContext) (provider.Endpoint, error) {
	td, ok := d.p.(provider.TransferDomain)
	if !ok {
		return nil, provider.EINVAL
	}
	ep, err := td.TransferEndpoint(info, ctx)
	if err != nil {
		return nil, err
	}
	return wrapEndpoint(d.st, ep, info), nil
}

// atomicDomain is a hooked domain whose core domain answers
// fi_query_atomic.
type atomicDomain struct {
	*domain
	q provider.AtomicDomain
}

func (d *atomicDomain) QueryAtomic(k provider.AtomicKind, dt provider.Datatype, op provider.AtomicOp, tagged bool) (provider.AtomicAttr, error) {
	return d.q.QueryAtomic(k, dt, op, tagged)
}

// sep is a hooked scalable endpoint.
type sep struct {
	st   *state
	p    provider.ScalableEndpoint
	info *provider.Info
}

var _ provider.ScalableEndpoint = (*sep)(nil)

func (s *sep) TxContext(index int, attr *provider.TxAttr) (provider.Endpoint, error) {
	ep, err := s.p.TxContext(index, attr)
	if err != nil {
		return nil, err
	}
	return wrapEndpoint(s.st, ep, s.info), nil
}

func (s *sep) RxContext(index int, attr *provider.RxAttr) (provider.Endpoint, error) {
	ep, err := s.p.RxContext(index, attr)
	if err != nil {
		return nil, err
	}
	return wrapEndpoint(s.st, ep, s.info), nil
}

func (s *sep) Name() ([]byte, error)           { return s.p.Name() }
func (s *sep) Enable(av provider.AVView) error { return s.p.Enable(av) }
func (s *sep) Close() error                    { return s.p.Close() }

// pep is a hooked passive endpoint. Events the core passive endpoint
// reports about itself reach the root as about the wrapper.
type pep struct {
	st   *state
	p    provider.PassiveEndpoint
	self any // the wrapper the root holds (set by wrapPEP)
}

type pepUnwrapper interface {
	core() provider.PassiveEndpoint
}

func (p *pep) core() provider.PassiveEndpoint { return p.p }

func (p *pep) Listen(eq provider.EQWriter) error {
	return p.p.Listen(eqWriter{w: eq, from: p.p, to: p.self})
}
func (p *pep) Name() ([]byte, error)                { return p.p.Name() }
func (p *pep) SetName(addr []byte) error            { return p.p.SetName(addr) }
func (p *pep) Reject(handle any, data []byte) error { return p.p.Reject(handle, data) }
func (p *pep) Close() error                         { return p.p.Close() }

func (p *pep) GetOpt(name int) (uint64, error) {
	if h, ok := p.p.(provider.OptionHandler); ok {
		return h.GetOpt(name)
	}
	return 0, provider.ENOPROTOOPT
}

func (p *pep) SetOpt(name int, v uint64) error {
	if h, ok := p.p.(provider.OptionHandler); ok {
		return h.SetOpt(name, v)
	}
	return provider.ENOPROTOOPT
}

// pepP adds provider.Progresser, provider.Waiter and provider.FDWaiter,
// and pepB provider.Backlogger, where the core passive endpoint has them
// (the root binds a passive endpoint's progress to its EQ only then). A
// core passive endpoint with Progress is taken to have the waits too (tcp's
// has all three); one that lacks them is answered ready at once (Waiter)
// and without an fd (FDWaiter -1).
type (
	pepP  struct{ *pep }
	pepPB struct{ *pep }
	pepB  struct{ *pep }
)

func (p pepP) Progress()                           { p.p.(provider.Progresser).Progress() }
func (p pepP) WaitReady(deadline time.Time) error  { return waitReady(p.p, deadline) }
func (p pepP) WaitFD() int                         { return waitFD(p.p) }
func (p pepPB) Progress()                          { p.p.(provider.Progresser).Progress() }
func (p pepPB) WaitReady(deadline time.Time) error { return waitReady(p.p, deadline) }
func (p pepPB) WaitFD() int                        { return waitFD(p.p) }
func (p pepPB) SetBacklog(n int) error             { return p.p.(provider.Backlogger).SetBacklog(n) }
func (p pepPB) Backlog() int                       { return p.p.(provider.Backlogger).Backlog() }
func (p pepB) SetBacklog(n int) error              { return p.p.(provider.Backlogger).SetBacklog(n) }
func (p pepB) Backlog() int                        { return p.p.(provider.Backlogger).Backlog() }

// waitReady and waitFD forward to a core object that is a Waiter /
// FDWaiter; they are only reached through wrappers whose core object is
// (see wrapPEP): a core passive endpoint with Progress but no Waiter
// answers ready at once, one without an fd -1.
func waitReady(o any, deadline time.Time) error {
	if w, ok := o.(provider.Waiter); ok {
		return w.WaitReady(deadline)
	}
	return nil
}

func waitFD(o any) int {
	if w, ok := o.(provider.FDWaiter); ok {
		return w.WaitFD()
	}
	return -1
}

// wrapPEP wraps a core passive endpoint in the wrapper type with its
// optional interfaces.
func wrapPEP(st *state, p provider.PassiveEndpoint) provider.PassiveEndpoint {
	w := &pep{st: st, p: p}
	_, pr := p.(provider.Progresser)
	_, bl := p.(provider.Backlogger)
	var out provider.PassiveEndpoint
	switch {
	case pr && bl:
		out = pepPB{w}
	case pr:
		out = pepP{w}
	case bl:
		out = pepB{w}
	default:
		out = w
	}
	w.self = out
	return out
}
