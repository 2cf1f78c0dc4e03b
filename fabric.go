package fabric

import (
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/gofabric/fabric/provider"
)

// Fabric is an open fabric (fi_fabric): the root of a provider's objects.
type Fabric struct {
	lc   lifecycle
	prov provider.Provider
	f    provider.Fabric
	attr FabricAttr
}

// Open opens the fabric described by info (fi_fabric(info->fabric_attr)).
func Open(info *Info) (*Fabric, error) {
	if info == nil || info.FabricAttr == nil {
		return nil, opErr("fi_fabric", "", ErrInval)
	}
	return OpenFabric(info.FabricAttr)
}

// OpenFabric opens a fabric from its attributes (fi_fabric). ProvName
// selects the provider.
//
// The hooks the FI_HOOK environment variable names (a comma-separated
// list, read on each call: "chaos") are installed over the fabric, the
// first named innermost, as libfabric installs its hooking providers
// (fabric(7) FI_HOOK): each sees the calls made on the fabric and on every
// object opened from it. A name that no registered hook has is ignored, as
// libfabric ignores it (and logged at info). The fabric keeps the core
// provider's name. See provider.Hook.
func OpenFabric(attr *FabricAttr) (*Fabric, error) {
	return openFabric(attr, envHooks())
}

// OpenHooked is Open with the given hooks installed over the fabric (the
// first innermost) instead of those FI_HOOK names: a Go program or test
// selects a hook, configured in Go, without the environment (for
// example chaos.New(cfg) of package prov/chaos). With no hooks it opens
// the fabric unhooked, whatever FI_HOOK says.
func OpenHooked(info *Info, hooks ...provider.Hook) (*Fabric, error) {
	if info == nil || info.FabricAttr == nil {
		return nil, opErr("fi_fabric", "", ErrInval)
	}
	for _, h := range hooks {
		if h == nil {
			return nil, opErr("fi_fabric", "", ErrInval)
		}
	}
	return openFabric(info.FabricAttr, hooks)
}

// infoEnvHook names the hooks OpenFabric installs.
const infoEnvHook = "FI_HOOK"

// envHooks returns the registered hooks FI_HOOK names.
func envHooks() []provider.Hook {
	v := os.Getenv(infoEnvHook)
	if v == "" {
		return nil
	}
	var hooks []provider.Hook
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		h, ok := provider.LookupHook(name)
		if !ok {
			// Info, not warn: under the C plugin FI_HOOK may name one
			// of the C library's hooks, which the C core installs.
			infoLogger("core").Info(provider.SubsysCore, "no hook of that name in "+infoEnvHook+", ignored", slog.String("hook", name))
			continue
		}
		hooks = append(hooks, h)
	}
	return hooks
}

func openFabric(attr *FabricAttr, hooks []provider.Hook) (*Fabric, error) {
	if attr == nil || attr.ProvName == "" {
		return nil, opErr("fi_fabric", "", ErrInval)
	}
	p, ok := provider.Lookup(attr.ProvName)
	if !ok {
		return nil, opErr("fi_fabric", attr.ProvName, ErrNoData)
	}
	pf, err := p.Fabric(attr)
	if err != nil {
		return nil, opErr("fi_fabric", p.Name(), err)
	}
	for _, h := range hooks {
		hf, err := h.Fabric(attr, p, pf)
		if err != nil {
			pf.Close()
			return nil, opErr("fi_fabric", p.Name(), err)
		}
		pf = hf
	}
	return &Fabric{prov: p, f: pf, attr: *attr}, nil
}

// Attr returns the fabric's attributes.
func (f *Fabric) Attr() FabricAttr {
	if f == nil {
		return FabricAttr{}
	}
	return f.attr
}

// Provider returns the provider's name.
func (f *Fabric) Provider() string {
	if f == nil {
		return ""
	}
	return f.prov.Name()
}

// Close closes the fabric. It returns ErrBusy while domains or event queues
// opened from it are open.
func (f *Fabric) Close() error {
	if f == nil {
		return ErrInval
	}
	if err := f.lc.beginClose(); err != nil {
		return opErr("fi_close", f.prov.Name(), err)
	}
	return opErr("fi_close", f.prov.Name(), f.f.Close())
}

// Domain is an open resource domain (fi_domain).
type Domain struct {
	lc     lifecycle
	fabric *Fabric
	d      provider.Domain
	info   *Info
	prov   provider.Provider
	ext    domainExt // state owned by the shared machinery (MR keys ...)
	// mrLocal is FI_MR_LOCAL: data calls check their descriptors.
	mrLocal bool
	// atomicQ answers fi_query_atomic and the endpoint valid queries; nil
	// when the provider's domain does not implement it (ENOSYS).
	atomicQ provider.AtomicDomain
	// peerOwner is the owner domain imported with OpenPeerDomain.
	peerOwner *Domain
	eqMu      sync.Mutex
	eq        *EQ // bound with BindEQ
}

// OpenDomain opens a domain of this fabric (fi_domain). info is usually one
// returned by GetInfo.
func (f *Fabric) OpenDomain(info *Info) (*Domain, error) {
	if f == nil {
		return nil, ErrInval
	}
	if info == nil {
		return nil, opErr("fi_domain", f.prov.Name(), ErrInval)
	}
	if info.FabricAttr != nil && info.FabricAttr.ProvName != "" && info.FabricAttr.ProvName != f.prov.Name() {
		return nil, opErr("fi_domain", f.prov.Name(), ErrInval)
	}
	if err := f.lc.hold(); err != nil {
		return nil, opErr("fi_domain", f.prov.Name(), err)
	}
	ci := info.Dup()
	pd, err := f.f.Domain(ci)
	if err != nil {
		f.lc.release()
		return nil, opErr("fi_domain", f.prov.Name(), err)
	}
	d := &Domain{fabric: f, d: pd, info: ci, prov: f.prov}
	d.initExt()
	if s, ok := pd.(provider.MRSharer); ok {
		// A composite domain: its registrations are those of the
		// domain it names (see provider.MRSharer).
		if o, ok := s.MRDomain().(*Domain); ok && o != nil {
			d.ext.mr = o.ext.mr
		}
	}
	d.mrLocal = d.localMR()
	d.atomicQ, _ = pd.(provider.AtomicDomain)
	return d, nil
}

// Fabric returns the fabric the domain belongs to.
func (d *Domain) Fabric() *Fabric {
	if d == nil {
		return nil
	}
	return d.fabric
}

// Info returns a copy of the info the domain was opened with.
func (d *Domain) Info() *Info {
	if d == nil {
		return nil
	}
	return d.info.Dup()
}

// Attr returns the domain attributes.
func (d *Domain) Attr() DomainAttr {
	if d == nil {
		return DomainAttr{}
	}
	if d.info.DomainAttr == nil {
		return DomainAttr{}
	}
	return *d.info.DomainAttr
}

// Close closes the domain. It returns ErrBusy while endpoints, CQs,
// counters, AVs or memory regions opened from it are open.
func (d *Domain) Close() error {
	if d == nil {
		return ErrInval
	}
	if err := d.lc.beginClose(); err != nil {
		return opErr("fi_close", d.prov.Name(), err)
	}
	err := d.d.Close()
	d.eqMu.Lock()
	if d.eq != nil {
		d.eq.unbindEndpoint(nil)
		d.eq = nil
	}
	d.eqMu.Unlock()
	if d.peerOwner != nil {
		d.peerOwner.lc.release()
	}
	d.fabric.lc.release()
	return opErr("fi_close", d.prov.Name(), err)
}

// BindEQ binds the domain to an event queue (fi_domain_bind): flags 0 makes
// it the domain's EQ for asynchronous control events. FI_REG_MR
// (asynchronous memory registration) is not supported: ErrNoSys.
func (d *Domain) BindEQ(eq *EQ, flags Flags) error {
	if d == nil {
		return ErrInval
	}
	const op = "fi_domain_bind"
	const regMR = Flags(1) << 59 // FI_REG_MR
	if eq == nil {
		return opErr(op, d.prov.Name(), ErrInval)
	}
	if flags&regMR != 0 {
		return opErr(op, d.prov.Name(), ErrNoSys)
	}
	if flags != 0 {
		return opErr(op, d.prov.Name(), ErrBadFlags)
	}
	if eq.fabric() != d.fabric {
		return opErr(op, d.prov.Name(), ErrDomain)
	}
	d.eqMu.Lock()
	defer d.eqMu.Unlock()
	if d.lc.isClosed() {
		return opErr(op, d.prov.Name(), ErrClosed)
	}
	if d.eq != nil {
		return opErr(op, d.prov.Name(), ErrInval)
	}
	if err := eq.bindEndpoint(nil); err != nil {
		return opErr(op, d.prov.Name(), err)
	}
	d.eq = eq
	return nil
}

// EQ returns the event queue bound with BindEQ, or nil.
func (d *Domain) EQ() *EQ {
	if d == nil {
		return nil
	}
	d.eqMu.Lock()
	defer d.eqMu.Unlock()
	return d.eq
}
