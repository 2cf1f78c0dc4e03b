package fabric

import (
	"sync"

	"github.com/gofabric/fabric/provider"
)

// PassiveEndpoint listens for connection requests (fi_passive_ep). Requests
// arrive on the bound EQ as EventConnReq entries whose Info opens the
// accepting endpoint.
type PassiveEndpoint struct {
	lc   lifecycle
	fab  *Fabric
	info *Info
	p    provider.PassiveEndpoint
	prov string
	eq   *EQ
	mu   sync.Mutex
}

// OpenPassiveEndpoint opens a passive endpoint (fi_passive_ep).
func (f *Fabric) OpenPassiveEndpoint(info *Info) (*PassiveEndpoint, error) {
	if f == nil {
		return nil, ErrInval
	}
	const op = "fi_passive_ep"
	if info == nil || info.EPAttr == nil {
		return nil, opErr(op, f.prov.Name(), ErrInval)
	}
	pf, ok := f.f.(provider.PassiveFabric)
	if !ok {
		return nil, opErr(op, f.prov.Name(), ErrNoSys)
	}
	if err := f.lc.hold(); err != nil {
		return nil, opErr(op, f.prov.Name(), err)
	}
	ci := info.Dup()
	p, err := pf.PassiveEndpoint(ci)
	if err != nil {
		f.lc.release()
		return nil, opErr(op, f.prov.Name(), err)
	}
	return &PassiveEndpoint{fab: f, info: ci, p: p, prov: f.prov.Name()}, nil
}

// Bind binds the passive endpoint to an event queue (fi_pep_bind).
func (pe *PassiveEndpoint) Bind(eq *EQ, flags Flags) error {
	if pe == nil {
		return ErrInval
	}
	const op = "fi_pep_bind"
	if eq == nil || flags != 0 {
		return opErr(op, pe.prov, ErrInval)
	}
	pe.mu.Lock()
	defer pe.mu.Unlock()
	if pe.lc.isClosed() {
		return opErr(op, pe.prov, ErrClosed)
	}
	if eq.fabric() != pe.fab {
		return opErr(op, pe.prov, ErrDomain)
	}
	if pe.eq != nil {
		return opErr(op, pe.prov, ErrInval)
	}
	var pr provider.Progresser
	if p, ok := pe.p.(provider.Progresser); ok {
		pr = p
	}
	if err := eq.bindEndpoint(pr); err != nil {
		return opErr(op, pe.prov, err)
	}
	pe.eq = eq
	return nil
}

// Listen starts listening (fi_listen); ErrNoEQ without a bound EQ.
func (pe *PassiveEndpoint) Listen() error {
	if pe == nil {
		return ErrInval
	}
	const op = "fi_listen"
	pe.mu.Lock()
	defer pe.mu.Unlock()
	if pe.lc.isClosed() {
		return opErr(op, pe.prov, ErrClosed)
	}
	if pe.eq == nil {
		return opErr(op, pe.prov, ErrNoEQ)
	}
	return opErr(op, pe.prov, pe.p.Listen(fidWriter{w: pe.eq.writer(), prov: pe.p, root: pe}))
}

// SetBacklog sets the connection request backlog (fi_control with
// FI_BACKLOG): the number of requests that may wait to be reported before
// the provider refuses more. It may be called before Listen (Listen uses
// it) or while listening. n must be positive (ErrInval otherwise);
// providers whose passive endpoints have no settable backlog answer
// ErrNoSys. The tcp provider passes n to listen(2), so the kernel caps it
// at net.core.somaxconn.
func (pe *PassiveEndpoint) SetBacklog(n int) error {
	if pe == nil {
		return ErrInval
	}
	const op = "fi_control"
	pe.mu.Lock()
	defer pe.mu.Unlock()
	if pe.lc.isClosed() {
		return opErr(op, pe.prov, ErrClosed)
	}
	if n <= 0 {
		return opErr(op, pe.prov, ErrInval)
	}
	b, ok := pe.p.(provider.Backlogger)
	if !ok {
		return opErr(op, pe.prov, ErrNoSys)
	}
	return opErr(op, pe.prov, b.SetBacklog(n))
}

// Backlog returns the connection request backlog in use (FI_BACKLOG), or
// ErrNoSys where the provider has none to report.
func (pe *PassiveEndpoint) Backlog() (int, error) {
	if pe == nil {
		return 0, ErrInval
	}
	pe.mu.Lock()
	defer pe.mu.Unlock()
	if pe.lc.isClosed() {
		return 0, opErr("fi_control", pe.prov, ErrClosed)
	}
	b, ok := pe.p.(provider.Backlogger)
	if !ok {
		return 0, opErr("fi_control", pe.prov, ErrNoSys)
	}
	return b.Backlog(), nil
}

// Name returns the listening address (fi_getname).
func (pe *PassiveEndpoint) Name() ([]byte, error) {
	if pe == nil {
		return nil, ErrInval
	}
	b, err := pe.p.Name()
	return b, opErr("fi_getname", pe.prov, err)
}

// SetName sets the address to listen on (fi_setname), before Listen.
func (pe *PassiveEndpoint) SetName(addr []byte) error {
	if pe == nil {
		return ErrInval
	}
	if len(addr) == 0 {
		return opErr("fi_setname", pe.prov, ErrInval)
	}
	return opErr("fi_setname", pe.prov, pe.p.SetName(addr))
}

// Reject refuses a connection request (fi_reject); handle is the Info.Handle
// of the EventConnReq entry, data is returned to the requester.
func (pe *PassiveEndpoint) Reject(handle any, data []byte) error {
	if pe == nil {
		return ErrInval
	}
	if handle == nil {
		return opErr("fi_reject", pe.prov, ErrInval)
	}
	return opErr("fi_reject", pe.prov, pe.p.Reject(handle, data))
}

// Info returns a copy of the passive endpoint's info.
func (pe *PassiveEndpoint) Info() *Info {
	if pe == nil {
		return nil
	}
	return pe.info.Dup()
}

// Close closes the passive endpoint.
func (pe *PassiveEndpoint) Close() error {
	if pe == nil {
		return ErrInval
	}
	pe.mu.Lock()
	defer pe.mu.Unlock()
	if err := pe.lc.beginClose(); err != nil {
		return opErr("fi_close", pe.prov, err)
	}
	err := pe.p.Close()
	if pe.eq != nil {
		var pr provider.Progresser
		if p, ok := pe.p.(provider.Progresser); ok {
			pr = p
		}
		pe.eq.unbindEndpoint(pr)
	}
	pe.fab.lc.release()
	return opErr("fi_close", pe.prov, err)
}

// fidWriter rewrites the FID of events a provider object reports into the
// root object the application holds.
type fidWriter struct {
	w    provider.EQWriter
	prov any
	root any
}

func (f fidWriter) Write(e *EQEntry) error {
	if e.FID == f.prov {
		c := *e
		c.FID = f.root
		return f.w.Write(&c)
	}
	return f.w.Write(e)
}

func (f fidWriter) WriteErr(e *EQErrEntry) error {
	if e.FID == f.prov {
		c := *e
		c.FID = f.root
		return f.w.WriteErr(&c)
	}
	return f.w.WriteErr(e)
}

// GetOpt returns a passive endpoint option (fi_getopt): FI_OPT_CM_DATA_SIZE
// where the provider supports it. Unknown options return ErrNoProtoOpt.
func (pe *PassiveEndpoint) GetOpt(level, name int) (uint64, error) {
	if pe == nil {
		return 0, ErrInval
	}
	if pe.lc.isClosed() {
		return 0, opErr("fi_getopt", pe.prov, ErrClosed)
	}
	if level != OptEndpoint {
		return 0, opErr("fi_getopt", pe.prov, ErrNoProtoOpt)
	}
	if h, ok := pe.p.(provider.OptionHandler); ok {
		v, err := h.GetOpt(name)
		return v, opErr("fi_getopt", pe.prov, err)
	}
	return 0, opErr("fi_getopt", pe.prov, ErrNoProtoOpt)
}

// SetOpt sets a passive endpoint option (fi_setopt); FI_OPT_CM_DATA_SIZE is
// read-only.
func (pe *PassiveEndpoint) SetOpt(level, name int, v uint64) error {
	if pe == nil {
		return ErrInval
	}
	if pe.lc.isClosed() {
		return opErr("fi_setopt", pe.prov, ErrClosed)
	}
	if level != OptEndpoint || name == OptCMDataSize {
		return opErr("fi_setopt", pe.prov, ErrNoProtoOpt)
	}
	if h, ok := pe.p.(provider.OptionHandler); ok {
		return opErr("fi_setopt", pe.prov, h.SetOpt(name, v))
	}
	return opErr("fi_setopt", pe.prov, ErrNoProtoOpt)
}
