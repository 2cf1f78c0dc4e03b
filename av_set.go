package fabric

import (
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/peer"
)

// AV set creation flags (fi_av_set(3) FLAGS).
const (
	// FlagUniverse (FI_UNIVERSE): the set starts with every address of
	// the AV.
	FlagUniverse Flags = 1 << 57
	// FlagBarrierSet (FI_BARRIER_SET) and the flags below restrict the
	// collectives a set supports. This package offers no collective
	// operation, so asking for one gives ErrOpNotSupp (fi_av_set(3): "It
	// is an error for a user to request an unsupported collective").
	FlagBarrierSet Flags = 1 << 40
	// FlagBroadcastSet is FI_BROADCAST_SET (see FlagBarrierSet).
	FlagBroadcastSet Flags = 1 << 41
	// FlagAlltoallSet is FI_ALLTOALL_SET (see FlagBarrierSet).
	FlagAlltoallSet Flags = 1 << 42
	// FlagAllreduceSet is FI_ALLREDUCE_SET (see FlagBarrierSet).
	FlagAllreduceSet Flags = 1 << 43
	// FlagAllgatherSet is FI_ALLGATHER_SET (see FlagBarrierSet).
	FlagAllgatherSet Flags = 1 << 44
	// FlagReduceScatterSet is FI_REDUCE_SCATTER_SET (see FlagBarrierSet).
	FlagReduceScatterSet Flags = 1 << 45
	// FlagReduceSet is FI_REDUCE_SET (see FlagBarrierSet).
	FlagReduceSet Flags = 1 << 46
	// FlagScatterSet is FI_SCATTER_SET (see FlagBarrierSet).
	FlagScatterSet Flags = 1 << 47
	// FlagGatherSet is FI_GATHER_SET (see FlagBarrierSet).
	FlagGatherSet Flags = 1 << 48
)

const avSetCollFlags = FlagBarrierSet | FlagBroadcastSet | FlagAlltoallSet | FlagAllreduceSet |
	FlagAllgatherSet | FlagReduceScatterSet | FlagReduceSet | FlagScatterSet | FlagGatherSet

// AVSetAttr is fi_av_set_attr. The zero value (or a nil *AVSetAttr) opens
// an empty set.
type AVSetAttr struct {
	// Count is the expected number of members, a sizing hint; when set,
	// a range (StartAddr..EndAddr) may not name more addresses than Count
	// (ErrInval). Default 0: no limit.
	Count uint64
	// StartAddr and EndAddr, inclusive, with Stride, give the initial
	// members: the addresses of the AV at StartAddr + i*Stride up to
	// EndAddr (those not in the AV are left out). A range needs an
	// AVTable AV (ErrInval for AVMap) and Stride >= 1. With Stride 0 (the
	// default) there is no range, and StartAddr and EndAddr must be
	// AddrNotAvail (as C asks for an empty set) or both 0 (the zero
	// value); anything else gives ErrInval, as do EndAddr < StartAddr
	// and a range with a CommKey.
	StartAddr Addr
	EndAddr   Addr
	Stride    uint64
	// CommKey is a communication key of the fabric's membership service
	// (comm_key, comm_key_size). No provider of this module supports one:
	// a non-empty CommKey gives ErrNoSys. Default nil.
	CommKey []byte
	// Flags: FlagUniverse (every address of the AV; no range then, else
	// ErrInval). The collective restrictions (FlagBarrierSet ...) give
	// ErrOpNotSupp; other bits ErrBadFlags. Default 0.
	Flags Flags
	// Peer is the owner's AV set imported by this one (fi_peer(3) "PEER
	// AV SET", struct fi_peer_av_set_context): the set's members are
	// Peer.Set's, read whenever they are asked for, and the calls that
	// change the set (Union, Intersect, Diff, Insert, Remove as dst)
	// return ErrNoSys. A range, FlagUniverse or CommKey with Peer gives
	// ErrInval. fi_peer(3) selects this with a flag that libfabric 1.17
	// does not define (and FI_PEER's bit is FI_ALLREDUCE_SET here): a
	// non-nil Peer is the selection. Default nil.
	Peer *peer.AVSetContext
}

// AVSet is an address vector set (fi_av_set(3)): an ordered subset of
// the addresses of one AV, as collective operations name their
// participants. Creating and changing a set is local. An AVSet is safe
// for concurrent use. It keeps the fi_addrs it was given: removing an
// address from the AV does not remove it from the set.
type AVSet struct {
	lc    lifecycle
	av    *AV
	attr  AVSetAttr
	coll  Addr
	mu    sync.Mutex
	addrs []Addr          // members in order (not for an import)
	imp   peer.AVSetOwner // the owner's set of an import
	owner *AVSet          // imp, when it is this package's set (held open)
}

var _ peer.AVSetOwner = (*AVSet)(nil)

// avSetColl numbers the collective addresses of AV sets.
var avSetColl atomic.Uint64

// avSetCollBase marks collective addresses (AVSet.Addr): beyond any
// index an AV hands out, below AddrNotAvail and AddrUnspec.
const avSetCollBase = Addr(0xc0de) << 48

// OpenSet opens an AV set of the AV's addresses (fi_av_set). attr may be
// nil for an empty set. Errors (wrapped in *OpError naming fi_av_set):
// ErrInval, ErrNoSys, ErrOpNotSupp and ErrBadFlags as AVSetAttr says,
// ErrClosed for a closed AV. The AV cannot be closed while the set is
// open (ErrBusy).
func (a *AV) OpenSet(attr *AVSetAttr) (*AVSet, error) {
	if a == nil {
		return nil, ErrInval
	}
	const op = "fi_av_set"
	var at AVSetAttr
	if attr != nil {
		at = *attr
	}
	if err := a.checkSetAttr(&at); err != nil {
		return nil, a.err(op, err)
	}
	if err := a.lc.hold(); err != nil {
		return nil, a.err(op, err)
	}
	s := &AVSet{av: a, attr: at, coll: avSetCollBase | Addr(avSetColl.Add(1))}
	if at.Peer != nil {
		s.imp = at.Peer.Set
		if o, ok := s.imp.(*AVSet); ok {
			if err := o.lc.hold(); err != nil {
				a.lc.release()
				return nil, a.err(op, err)
			}
			s.owner = o
		}
		return s, nil
	}
	switch {
	case at.Flags&FlagUniverse != 0:
		a.a.Foreach(func(fa Addr, _ []byte, _ Addr, _ bool) { s.addrs = append(s.addrs, fa) })
	case at.Stride != 0:
		for fa := at.StartAddr; fa <= at.EndAddr; fa += Addr(at.Stride) {
			if a.a.Lookup(fa) != nil {
				s.addrs = append(s.addrs, fa)
			}
			if fa+Addr(at.Stride) < fa { // wrapped
				break
			}
		}
	}
	return s, nil
}

// checkSetAttr validates an AV set's attributes (fi_av_set(3)).
func (a *AV) checkSetAttr(at *AVSetAttr) error {
	if at.Flags&^(FlagUniverse|avSetCollFlags) != 0 {
		return ErrBadFlags
	}
	if at.Flags&avSetCollFlags != 0 {
		return ErrOpNotSupp
	}
	noRange := at.StartAddr == AddrNotAvail && at.EndAddr == AddrNotAvail ||
		at.StartAddr == 0 && at.EndAddr == 0
	if at.Stride == 0 {
		if !noRange {
			return ErrInval
		}
	} else {
		if at.EndAddr < at.StartAddr || at.StartAddr == AddrNotAvail || at.EndAddr == AddrNotAvail ||
			at.Flags&FlagUniverse != 0 || len(at.CommKey) > 0 || a.attr.Type != AVTable {
			return ErrInval
		}
		if n := uint64(at.EndAddr-at.StartAddr)/at.Stride + 1; at.Count != 0 && n > at.Count {
			return ErrInval
		}
	}
	if at.Peer != nil {
		if at.Peer.Set == nil || at.Stride != 0 || at.Flags&FlagUniverse != 0 || len(at.CommKey) > 0 {
			return ErrInval
		}
		if o, ok := at.Peer.Set.(*AVSet); ok && o == nil {
			return ErrInval
		}
		return nil
	}
	if len(at.CommKey) > 0 {
		return ErrNoSys
	}
	return nil
}

// Attr returns the attributes the set was opened with.
func (s *AVSet) Attr() AVSetAttr {
	if s == nil {
		return AVSetAttr{}
	}
	return s.attr
}

// AV returns the set's address vector.
func (s *AVSet) AV() *AV {
	if s == nil {
		return nil
	}
	return s.av
}

// members returns a copy of the set's members (the owner's, for an
// import).
func (s *AVSet) members() ([]Addr, error) {
	if s.imp != nil {
		buf := make([]Addr, 16)
		for {
			n, err := s.imp.Members(buf)
			if err == nil {
				return buf[:n], nil
			}
			if err != ErrTooSmall || n <= len(buf) {
				return nil, err
			}
			buf = make([]Addr, n)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Addr(nil), s.addrs...), nil
}

// Members copies the set's members, in order, into addrs and returns how
// many there are (fi_ops_av_set_owner.members: the set is a peer.AVSetOwner
// that a peer's set imports). If addrs is too short it copies nothing and
// returns the count needed and ErrTooSmall. Errors are bare: ErrClosed,
// ErrInval for a nil set, or the owner's error for an import.
func (s *AVSet) Members(addrs []Addr) (int, error) {
	if s == nil {
		return 0, ErrInval
	}
	if s.lc.isClosed() {
		return 0, ErrClosed
	}
	if s.imp != nil {
		return s.imp.Members(addrs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(addrs) < len(s.addrs) {
		return len(s.addrs), ErrTooSmall
	}
	return copy(addrs, s.addrs), nil
}

// Len returns the number of members (0 for a nil or closed set, or when
// the owner of an import fails).
func (s *AVSet) Len() int {
	if s == nil || s.lc.isClosed() {
		return 0
	}
	m, err := s.members()
	if err != nil {
		return 0
	}
	return len(m)
}

// change runs fn on the members of a set that may change (op names the
// call): ErrClosed, ErrNoSys for an import, wrapped in *OpError.
func (s *AVSet) change(op string, fn func() error) error {
	if s.lc.isClosed() {
		return opErr(op, s.av.dom.prov.Name(), ErrClosed)
	}
	if s.imp != nil {
		return opErr(op, s.av.dom.prov.Name(), ErrNoSys)
	}
	s.mu.Lock()
	err := fn()
	s.mu.Unlock()
	return opErr(op, s.av.dom.prov.Name(), err)
}

// source returns the members of src, a set of the same AV as s, for a
// set operation: ErrInval for nil or another AV's set, ErrClosed.
func (s *AVSet) source(src *AVSet) ([]Addr, error) {
	if src == nil || src.av != s.av {
		return nil, ErrInval
	}
	if src.lc.isClosed() {
		return nil, ErrClosed
	}
	return src.members()
}

func contains(addrs []Addr, a Addr) bool {
	for _, x := range addrs {
		if x == a {
			return true
		}
	}
	return false
}

// Union adds the members of src that are not in s to the end of s, in
// src's order (fi_av_set_union). src must be a set of the same AV
// (ErrInval); it may be s. Errors are wrapped in *OpError.
func (s *AVSet) Union(src *AVSet) error {
	if s == nil {
		return ErrInval
	}
	m, err := s.source(src)
	if err != nil {
		return opErr("fi_av_set_union", s.av.dom.prov.Name(), err)
	}
	return s.change("fi_av_set_union", func() error {
		for _, a := range m {
			if !contains(s.addrs, a) {
				s.addrs = append(s.addrs, a)
			}
		}
		return nil
	})
}

// Intersect removes the members of s that are not members of src,
// keeping the order of the rest (fi_av_set_intersect). src as for Union.
func (s *AVSet) Intersect(src *AVSet) error {
	if s == nil {
		return ErrInval
	}
	m, err := s.source(src)
	if err != nil {
		return opErr("fi_av_set_intersect", s.av.dom.prov.Name(), err)
	}
	return s.change("fi_av_set_intersect", func() error {
		s.addrs = filter(s.addrs, func(a Addr) bool { return contains(m, a) })
		return nil
	})
}

// Diff removes the members of s that are also members of src, keeping
// the order of the rest (fi_av_set_diff). src as for Union.
func (s *AVSet) Diff(src *AVSet) error {
	if s == nil {
		return ErrInval
	}
	m, err := s.source(src)
	if err != nil {
		return opErr("fi_av_set_diff", s.av.dom.prov.Name(), err)
	}
	return s.change("fi_av_set_diff", func() error {
		s.addrs = filter(s.addrs, func(a Addr) bool { return !contains(m, a) })
		return nil
	})
}

// filter keeps, in place, the elements of addrs for which keep is true.
func filter(addrs []Addr, keep func(Addr) bool) []Addr {
	out := addrs[:0]
	for _, a := range addrs {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// Insert appends addr to the set (fi_av_set_insert). Errors (wrapped):
// ErrInval when addr is not in the AV or already a member.
func (s *AVSet) Insert(addr Addr) error {
	if s == nil {
		return ErrInval
	}
	return s.change("fi_av_set_insert", func() error {
		if s.av.a.Lookup(addr) == nil || s.av.a.Base(addr) != addr || contains(s.addrs, addr) {
			return ErrInval
		}
		s.addrs = append(s.addrs, addr)
		return nil
	})
}

// Remove removes addr from the set, keeping the order of the rest
// (fi_av_set_remove). Errors (wrapped): ErrInval when addr is not a
// member.
func (s *AVSet) Remove(addr Addr) error {
	if s == nil {
		return ErrInval
	}
	return s.change("fi_av_set_remove", func() error {
		for i, a := range s.addrs {
			if a == addr {
				s.addrs = append(s.addrs[:i], s.addrs[i+1:]...)
				return nil
			}
		}
		return ErrInval
	})
}

// Addr returns the set's collective address (fi_av_set_addr): a value of
// its own, unlike any fi_addr of an AV, the same for the life of the set.
// It is local, as fi_av_set(3) says; this package offers no collective
// call to pass it to (fi_join_collective). Errors (wrapped): ErrClosed.
func (s *AVSet) Addr() (Addr, error) {
	if s == nil {
		return AddrNotAvail, ErrInval
	}
	if s.lc.isClosed() {
		return AddrNotAvail, opErr("fi_av_set_addr", s.av.dom.prov.Name(), ErrClosed)
	}
	return s.coll, nil
}

// Close closes the set (fi_close). It returns ErrBusy while a peer's set
// imports it.
func (s *AVSet) Close() error {
	if s == nil {
		return ErrInval
	}
	if err := s.lc.beginClose(); err != nil {
		return opErr("fi_close", s.av.dom.prov.Name(), err)
	}
	if s.owner != nil {
		s.owner.lc.release()
	}
	s.av.lc.release()
	return nil
}
