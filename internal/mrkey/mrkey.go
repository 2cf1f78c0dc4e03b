package mrkey

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/provider"
)

// AccessFlags are the valid access bits of a registration.
const AccessFlags = provider.FlagSend | provider.FlagRecv | provider.FlagRead | provider.FlagWrite |
	provider.FlagRemoteRead | provider.FlagRemoteWrite | provider.FlagCollective

// BindFlags are the valid flags for binding a counter to a region.
const BindFlags = provider.FlagRemoteRead | provider.FlagRemoteWrite

// Config describes the table of a domain.
type Config struct {
	// ProvKey is FI_MR_PROV_KEY: the table picks keys.
	ProvKey bool
	// VirtAddr is FI_MR_VIRT_ADDR: remote addresses are virtual addresses.
	VirtAddr bool
	// KeySize is mr_key_size in bytes; 0 (or 8 and more) allows any 64-bit
	// key.
	KeySize uint64
}

type binding struct {
	c     provider.CntrOwner
	flags provider.Flags
}

// Region is one registered memory region.
type Region struct {
	t          *Table
	key        uint64
	segs       [][]byte
	seg1       [1][]byte
	base       uint64
	length     uint64
	access     provider.Flags
	enabled    atomic.Bool
	needEnable bool
	bmu        sync.Mutex
	binds      atomic.Pointer[[]binding]
	removed    atomic.Bool
	desc       *provider.MRRegion
}

// Table is a domain's MR key table. It implements provider.MRKeys and is
// safe for concurrent use.
type Table struct {
	mu      sync.RWMutex
	cfg     Config
	regions map[uint64]*Region
	nextKey uint64
}

var _ provider.MRKeys = (*Table)(nil)

// New returns an empty table.
func New(cfg Config) *Table {
	return &Table{cfg: cfg, regions: make(map[uint64]*Region), nextKey: 1}
}

// Config returns the table's configuration.
func (t *Table) Config() Config { return t.cfg }

// Len returns the number of registered regions.
func (t *Table) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.regions)
}

func bufAddr(b []byte) uint64 {
	if cap(b) == 0 {
		return 0
	}
	return uint64(reflect.ValueOf(b[:1]).Pointer())
}

// mergeSegs joins buffers that are adjacent slices of one backing array.
func mergeSegs(in [][]byte) [][]byte {
	out := make([][]byte, 0, len(in))
	for _, b := range in {
		if len(b) == 0 {
			continue
		}
		if n := len(out); n > 0 {
			prev := out[n-1]
			if cap(prev) >= len(prev)+len(b) && bufAddr(prev)+uint64(len(prev)) == bufAddr(b) {
				out[n-1] = prev[:len(prev)+len(b)]
				continue
			}
		}
		out = append(out, b)
	}
	return out
}

// Register adds a region made of segs (fi_mr_reg/regv/regattr). offset is
// added to the region's base address; requestedKey is used unless the
// table picks keys. A region created with enabled false rejects remote
// accesses until Enable (FI_MR_RMA_EVENT, FI_MR_ENDPOINT). Errors: EINVAL
// for access bits outside AccessFlags, ENOKEY for a key in use,
// EKEYREJECTED for a key that does not fit KeySize.
func (t *Table) Register(segs [][]byte, access provider.Flags, offset, requestedKey uint64, enabled bool) (*Region, error) {
	if access&^AccessFlags != 0 {
		return nil, provider.EINVAL
	}
	r := &Region{t: t, access: access, needEnable: !enabled}
	if len(segs) == 1 {
		r.seg1[0] = segs[0]
		r.segs = r.seg1[:]
		if len(segs[0]) == 0 {
			r.segs = nil
		}
	} else {
		r.segs = mergeSegs(segs)
	}
	for _, s := range r.segs {
		r.length += uint64(len(s))
	}
	r.base = offset
	if t.cfg.VirtAddr && len(segs) > 0 {
		r.base += bufAddr(segs[0])
	}
	r.enabled.Store(enabled)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cfg.ProvKey {
		for {
			k := t.nextKey
			t.nextKey++
			if t.nextKey > t.maxKey() {
				t.nextKey = 1
			}
			if _, used := t.regions[k]; !used {
				r.key = k
				break
			}
		}
	} else {
		if requestedKey > t.maxKey() {
			return nil, provider.EKEYREJECTED
		}
		if _, used := t.regions[requestedKey]; used {
			return nil, provider.ENOKEY
		}
		r.key = requestedKey
	}
	t.regions[r.key] = r
	r.desc = provider.NewMRRegion(r.key, r.access, r.base, r.segs, r)
	return r, nil
}

// Desc returns the region's local memory descriptor (fi_mr_desc); its
// Registration is r.
func (r *Region) Desc() provider.MRDesc { return r.desc }

// Table returns the table r was registered in.
func (r *Region) Table() *Table { return r.t }

// Removed reports whether r has been unregistered.
func (r *Region) Removed() bool { return r.removed.Load() }

func (t *Table) maxKey() uint64 {
	if t.cfg.KeySize == 0 || t.cfg.KeySize >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*t.cfg.KeySize) - 1
}

// Lookup returns the region with key, or nil.
func (t *Table) Lookup(key uint64) *Region {
	t.mu.RLock()
	r := t.regions[key]
	t.mu.RUnlock()
	return r
}

// Unregister removes r from the table (fi_close of the MR). Later accesses
// with its key fail; the key may be reused.
func (t *Table) Unregister(r *Region) {
	if r == nil || r.t != t {
		return
	}
	t.mu.Lock()
	if !r.removed.Load() && t.regions[r.key] == r {
		delete(t.regions, r.key)
	}
	r.removed.Store(true)
	t.mu.Unlock()
	r.enabled.Store(false)
}

func (t *Table) check(key, addr, length uint64, access provider.Flags) (*Region, uint64, error) {
	t.mu.RLock()
	r := t.regions[key]
	t.mu.RUnlock()
	if r == nil || !r.enabled.Load() {
		return nil, 0, provider.EKEYREJECTED
	}
	if access&^r.access != 0 {
		return nil, 0, provider.EACCES
	}
	if addr < r.base {
		return nil, 0, provider.EINVAL
	}
	off := addr - r.base
	if off > r.length || length > r.length-off {
		return nil, 0, provider.EINVAL
	}
	return r, off, nil
}

// Access implements provider.MRKeys: the registered bytes [addr,
// addr+length) of the region with key, if it allows access. A range that
// spans two separate buffers of a vector registration gives EINVAL; use
// Segments for those.
func (t *Table) Access(key, addr, length uint64, access provider.Flags) ([]byte, error) {
	r, off, err := t.check(key, addr, length, access)
	if err != nil {
		return nil, err
	}
	for _, s := range r.segs {
		n := uint64(len(s))
		if off < n || off == n && length == 0 {
			if length > n-off {
				return nil, provider.EINVAL
			}
			return s[off : off+length : off+length], nil
		}
		off -= n
	}
	if length == 0 {
		return []byte{}, nil
	}
	return nil, provider.EINVAL
}

// Segments is Access for any range: it appends to dst the pieces of the
// registered buffers that make up [addr, addr+length).
func (t *Table) Segments(key, addr, length uint64, access provider.Flags, dst [][]byte) ([][]byte, error) {
	r, off, err := t.check(key, addr, length, access)
	if err != nil {
		return dst, err
	}
	for _, s := range r.segs {
		if length == 0 {
			break
		}
		n := uint64(len(s))
		if off >= n {
			off -= n
			continue
		}
		c := n - off
		if c > length {
			c = length
		}
		dst = append(dst, s[off:off+c:off+c])
		length -= c
		off = 0
	}
	return dst, nil
}

// Event implements provider.MRKeys: it increments the counters bound to
// the region with key for access (FI_REMOTE_WRITE, FI_REMOTE_READ).
func (t *Table) Event(key uint64, access provider.Flags) {
	t.mu.RLock()
	r := t.regions[key]
	t.mu.RUnlock()
	if r == nil {
		return
	}
	bp := r.binds.Load()
	if bp == nil {
		return
	}
	for _, b := range *bp {
		if b.flags&access != 0 {
			b.c.Inc()
		}
	}
}

// Key returns the region's key (fi_mr_key).
func (r *Region) Key() uint64 { return r.key }

// Base returns the remote address of the region's first byte.
func (r *Region) Base() uint64 { return r.base }

// Len returns the region's length in bytes.
func (r *Region) Len() uint64 { return r.length }

// AccessFlags returns the region's access bits.
func (r *Region) AccessFlags() provider.Flags { return r.access }

// Segs returns the region's buffers (adjacent ones merged).
func (r *Region) Segs() [][]byte { return r.segs }

// Enabled reports whether remote accesses are allowed.
func (r *Region) Enabled() bool { return r.enabled.Load() }

// Enable allows remote accesses (fi_mr_enable). Enabling an enabled region
// is a no-op.
func (r *Region) Enable() error {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	if r.removed.Load() {
		return provider.EBADF
	}
	r.enabled.Store(true)
	return nil
}

// Bind counts remote accesses of kinds flags (FI_REMOTE_WRITE,
// FI_REMOTE_READ) on c (fi_mr_bind with a counter). Errors: EBADFLAGS for
// other flags, EINVAL for none or a nil counter, EOPBADSTATE for a region
// created disabled and already enabled (bindings must precede
// fi_mr_enable).
func (r *Region) Bind(c provider.CntrOwner, flags provider.Flags) error {
	if flags&^BindFlags != 0 {
		return provider.EBADFLAGS
	}
	if flags == 0 || c == nil {
		return provider.EINVAL
	}
	r.bmu.Lock()
	defer r.bmu.Unlock()
	if r.needEnable && r.enabled.Load() {
		return provider.EOPBADSTATE
	}
	var nb []binding
	if old := r.binds.Load(); old != nil {
		nb = append(nb, (*old)...)
	}
	nb = append(nb, binding{c: c, flags: flags})
	r.binds.Store(&nb)
	return nil
}
