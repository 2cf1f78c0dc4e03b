package provider

import "reflect"

// MRRegion is one memory registration (fi_mr) as a provider sees it: the
// registered buffers, their access rights and the remote key. The shared
// MR machinery creates one per registration; it is immutable and safe for
// concurrent use. Providers reach it through the MRDesc values of Msg,
// AtomicMsg and RxEntry (for example to transfer from a buffer they have
// mapped or pinned for the region).
type MRRegion struct {
	key    uint64
	access Flags
	base   uint64
	segs   [][]byte
	addrs  []uint64 // virtual address of each segment
	reg    any
}

// MRDesc is a local memory descriptor (fi_mr_desc): the registered region a
// data-transfer buffer lies in, as returned by the root package's
// MR.Desc. nil is "no descriptor". It is a pointer: passing it, storing it
// in a []MRDesc or comparing it costs nothing and never allocates.
type MRDesc = *MRRegion

// NewMRRegion describes a registration of segs (in order, addressed as
// their concatenation from base) with the given access bits and key. reg
// is the registering object (the MR machinery's own record), returned by
// Registration. Called by the MR machinery, not by providers.
func NewMRRegion(key uint64, access Flags, base uint64, segs [][]byte, reg any) *MRRegion {
	r := &MRRegion{key: key, access: access, base: base, reg: reg}
	r.segs = make([][]byte, 0, len(segs))
	r.addrs = make([]uint64, 0, len(segs))
	for _, s := range segs {
		if len(s) == 0 {
			continue
		}
		r.segs = append(r.segs, s)
		r.addrs = append(r.addrs, bufAddr(s))
	}
	return r
}

// bufAddr returns the address of b's first byte (b not empty). A pointer
// boxes without allocating; reflect needs no unsafe.
func bufAddr(b []byte) uint64 { return uint64(reflect.ValueOf(&b[0]).Pointer()) }

// Key returns the region's remote key (fi_mr_key).
func (r *MRRegion) Key() uint64 {
	if r == nil {
		return 0
	}
	return r.key
}

// Access returns the region's access bits (FI_SEND, FI_RECV, FI_READ,
// FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE ...).
func (r *MRRegion) Access() Flags {
	if r == nil {
		return 0
	}
	return r.access
}

// Base returns the remote address of the region's first byte.
func (r *MRRegion) Base() uint64 {
	if r == nil {
		return 0
	}
	return r.base
}

// Segments returns the registered buffers, empty ones left out. The
// caller must not modify the returned slice.
func (r *MRRegion) Segments() [][]byte {
	if r == nil {
		return nil
	}
	return r.segs
}

// Registration returns the object that registered the region (opaque to
// providers; the root package uses it to tell whose region it is).
func (r *MRRegion) Registration() any {
	if r == nil {
		return nil
	}
	return r.reg
}

// Contains reports whether b lies entirely within one registered buffer.
// An empty b is contained in every region. It does not allocate.
//
// The methods of MRRegion accept a nil receiver (no descriptor) and
// return zero values.
func (r *MRRegion) Contains(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if r == nil {
		return false
	}
	a, n := bufAddr(b), uint64(len(b))
	for i, s := range r.segs {
		lo := r.addrs[i]
		if a >= lo && a-lo <= uint64(len(s)) && n <= uint64(len(s))-(a-lo) {
			return true
		}
	}
	return false
}
