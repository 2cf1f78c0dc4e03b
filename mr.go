package fabric

import (
	"sync"

	"github.com/gofabric/fabric/internal/mrkey"
	"github.com/gofabric/fabric/provider"
)

// MR access bits (fi_mr(3) access): the operations a registered region may
// be used for.
const (
	// MRAccessFlags is every access bit a registration may ask for
	// (MRAttr.Access, RegMR's access).
	MRAccessFlags = FlagSend | FlagRecv | FlagRead | FlagWrite | FlagRemoteRead | FlagRemoteWrite |
		provider.FlagCollective
)

// Registration flags (fi_mr_reg flags).
const (
	// FlagRMAPmem is FI_RMA_PMEM: the region is backed by persistent memory.
	FlagRMAPmem Flags = 1 << 49
	// FlagHMEMDeviceOnly is FI_HMEM_DEVICE_ONLY.
	FlagHMEMDeviceOnly Flags = 1 << 46
)

const mrRegFlags = FlagRMAEvent | FlagRMAPmem | FlagHMEMDeviceOnly

// MRAttr is fi_mr_attr: the description of a registration for RegMRAttr.
type MRAttr struct {
	// IOV is the memory to register; at most the domain's mr_iov_limit
	// buffers. The caller keeps the memory alive and unmoved (any Go slice
	// qualifies) until the MR is closed.
	IOV [][]byte
	// Access is the set of operations allowed (MRAccessFlags bits).
	Access Flags
	// Offset is added to the region's base address (0 or, with
	// FI_MR_VIRT_ADDR, the buffer's virtual address); normally 0.
	Offset uint64
	// RequestedKey is the key wanted when the domain does not use
	// FI_MR_PROV_KEY; ignored otherwise.
	RequestedKey uint64
	// Context is the application context (reported with asynchronous
	// registration events; registration here is synchronous).
	Context any
	// AuthKey is the domain authorization key (unused by the providers).
	AuthKey []byte
}

// MR is a registered memory region (fi_mr). Its Desc is passed as the
// desc argument of data transfer calls; its Key and Address are what a
// peer needs for RMA and atomic operations targeting it.
type MR struct {
	lc      lifecycle
	dom     *Domain
	r       *mrkey.Region
	access  Flags
	context any

	mu    sync.Mutex
	cntrs []*Cntr // counters bound with Bind, released at Close
}

// RegMR registers buf (fi_mr_reg). access is a set of MRAccessFlags bits;
// offset and requestedKey are as in MRAttr; flags may hold FlagRMAEvent,
// FlagRMAPmem, FlagHMEMDeviceOnly.
func (d *Domain) RegMR(buf []byte, access Flags, offset uint64, requestedKey uint64, flags Flags) (*MR, error) {
	if d == nil {
		return nil, ErrInval
	}
	return d.RegMRAttr(&MRAttr{IOV: [][]byte{buf}, Access: access, Offset: offset, RequestedKey: requestedKey}, flags)
}

// RegMRv registers several buffers as one region (fi_mr_regv); the region
// is addressed as their concatenation.
func (d *Domain) RegMRv(iov [][]byte, access Flags, offset uint64, requestedKey uint64, flags Flags) (*MR, error) {
	if d == nil {
		return nil, ErrInval
	}
	return d.RegMRAttr(&MRAttr{IOV: iov, Access: access, Offset: offset, RequestedKey: requestedKey}, flags)
}

// RegMRAttr registers memory described by attr (fi_mr_regattr). Errors
// (wrapped in *OpError): ErrInval for a nil attr, more buffers than
// mr_iov_limit or access bits outside MRAccessFlags; ErrBadFlags for
// unknown flags; ErrNoKey for a requested key in use; ErrKeyRejected for a
// key out of range; ErrClosed for a closed domain.
//
// Regions of a domain with FI_MR_ENDPOINT, or registered with FlagRMAEvent
// in a domain with FI_MR_RMA_EVENT, start disabled: bind counters, then
// call Enable.
func (d *Domain) RegMRAttr(attr *MRAttr, flags Flags) (*MR, error) {
	if d == nil {
		return nil, ErrInval
	}
	prov := d.prov.Name()
	if attr == nil {
		return nil, opErr("fi_mr_regattr", prov, ErrInval)
	}
	if flags&^mrRegFlags != 0 {
		return nil, opErr("fi_mr_regattr", prov, ErrBadFlags)
	}
	if attr.Access&^MRAccessFlags != 0 {
		return nil, opErr("fi_mr_regattr", prov, ErrInval)
	}
	limit := uint64(1)
	if a := d.info.DomainAttr; a != nil && a.MRIOVLimit > 1 {
		limit = a.MRIOVLimit
	}
	if uint64(len(attr.IOV)) > limit {
		return nil, opErr("fi_mr_regattr", prov, ErrInval)
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr("fi_mr_regattr", prov, err)
	}
	mode := d.mrEffectiveMode()
	enabled := mode&MREndpoint == 0 && !(mode&MRRMAEvent != 0 && flags&FlagRMAEvent != 0)
	r, err := d.ext.mr.Register(attr.IOV, attr.Access, attr.Offset, attr.RequestedKey, enabled)
	if err != nil {
		d.lc.release()
		return nil, opErr("fi_mr_regattr", prov, err)
	}
	return &MR{dom: d, r: r, access: attr.Access, context: attr.Context}, nil
}

// Key returns the region's remote protection key (fi_mr_key).
func (m *MR) Key() uint64 {
	if m == nil {
		return 0
	}
	return m.r.Key()
}

// Address returns the remote address of the region's first byte: its
// virtual address with FI_MR_VIRT_ADDR, else 0 (plus the registration
// offset). Peers address byte i of the region as Address()+i.
func (m *MR) Address() uint64 {
	if m == nil {
		return 0
	}
	return m.r.Base()
}

// Len returns the region's length in bytes.
func (m *MR) Len() uint64 {
	if m == nil {
		return 0
	}
	return m.r.Len()
}

// Access returns the region's access bits.
func (m *MR) Access() Flags {
	if m == nil {
		return 0
	}
	return m.access
}

// Context returns the context given at registration.
func (m *MR) Context() any {
	if m == nil {
		return nil
	}
	return m.context
}

// MRDesc is a local memory descriptor (fi_mr_desc), from MR.Desc: the
// desc argument of data-transfer calls, naming the registered region a
// buffer lies in. nil means no descriptor, which is what calls take unless
// the domain's MRMode has FI_MR_LOCAL; then every non-empty buffer of a
// call needs the descriptor of a live region of the domain that covers it
// and allows the access the call makes (FI_SEND for sends, FI_RECV for
// receives, FI_READ for RMA read and fetched results, FI_WRITE for RMA
// write and atomic operands), else the call returns ErrInval. The inject
// calls (Inject, TInject, RMAInjectWrite, AtomicInject ...) take no
// descriptor: their buffer is copied before they return.
//
// An MRDesc is a pointer to the provider-side view of the registration (see
// "API decisions" in the package documentation): passing it, storing it in
// a []MRDesc or comparing it with == (same registration) or nil never
// allocates. Its methods, which accept a nil descriptor and then return
// zero values, are:
//
//	Key() uint64             the region's remote key (as MR.Key)
//	Access() Flags           the access bits it was registered with
//	Base() uint64            the remote address of its first byte (as MR.Address)
//	Segments() [][]byte      the registered buffers (do not modify)
//	Contains(b []byte) bool  whether b lies within one registered buffer
//
// Those are the ones an application may rely on. Registration is for the
// root package and providers (which registration made the region) and may
// change. A descriptor stays valid, and keeps naming the same buffers,
// until its MR is closed.
type MRDesc = provider.MRDesc

// Desc returns the local memory descriptor (fi_mr_desc) to pass as the
// desc argument of data transfer calls; nil for a nil MR.
func (m *MR) Desc() MRDesc {
	if m == nil {
		return nil
	}
	return m.r.Desc()
}

// Domain returns the MR's domain.
func (m *MR) Domain() *Domain {
	if m == nil {
		return nil
	}
	return m.dom
}

// Bind associates a counter with the region (fi_mr_bind): it counts remote
// accesses of the kinds in flags (FlagRemoteWrite, FlagRemoteRead;
// FI_RMA_EVENT). The counter cannot be closed while the MR is open. While
// it is bound to a region, reading or waiting on the counter drives the
// progress of every endpoint of the domain (manual progress: the accesses
// it counts happen as the target endpoint progresses), so an application
// that only reads the counter sees them.
// Errors: ErrBadFlags for other flags, ErrInval for none or a nil counter,
// ErrDomain for a counter of another domain, ErrOpBadState after Enable of
// a region created disabled, ErrClosed for a closed MR or counter.
func (m *MR) Bind(cntr *Cntr, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	prov := m.dom.prov.Name()
	if m.lc.isClosed() {
		return opErr("fi_mr_bind", prov, ErrClosed)
	}
	if cntr == nil {
		return opErr("fi_mr_bind", prov, ErrInval)
	}
	if cntr.domain() != m.dom {
		return opErr("fi_mr_bind", prov, ErrDomain)
	}
	if err := cntr.bindMR(); err != nil {
		return opErr("fi_mr_bind", prov, err)
	}
	if err := m.r.Bind(cntr.owner(), flags); err != nil {
		cntr.unbindMR()
		return opErr("fi_mr_bind", prov, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lc.isClosed() { // Close ran meanwhile: it has released its counters
		cntr.unbindMR()
		return opErr("fi_mr_bind", prov, ErrClosed)
	}
	m.cntrs = append(m.cntrs, cntr)
	// Reads and waits of the counter drive the domain's endpoints, which
	// perform the remote accesses it counts (mrcntr.go).
	m.dom.mrCntrBound(cntr)
	return nil
}

// Enable enables a region created disabled (fi_mr_enable); no bindings
// may follow. Enabling an enabled region does nothing.
func (m *MR) Enable() error {
	if m == nil {
		return ErrInval
	}
	if m.lc.isClosed() {
		return opErr("fi_mr_enable", m.dom.prov.Name(), ErrClosed)
	}
	if err := m.r.Enable(); err != nil {
		return opErr("fi_mr_enable", m.dom.prov.Name(), ErrClosed)
	}
	return nil
}

// Close deregisters the region: later remote accesses with its key fail.
// Counters bound to it are released.
func (m *MR) Close() error {
	if m == nil {
		return ErrInval
	}
	if err := m.lc.beginClose(); err != nil {
		return opErr("fi_close", m.dom.prov.Name(), err)
	}
	m.dom.ext.mr.Unregister(m.r)
	m.mu.Lock()
	cntrs := m.cntrs
	m.cntrs = nil
	m.mu.Unlock()
	for _, c := range cntrs {
		m.dom.mrCntrUnbound(c)
		c.unbindMR()
	}
	m.dom.lc.release()
	return nil
}
