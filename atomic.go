package fabric

import (
	"math"

	"github.com/gofabric/fabric/provider"
)

// Atomic vocabulary (fi_atomic(3)), shared with providers.
type (
	// AtomicOp is enum fi_op, the operation of an atomic call, with
	// libfabric's values (AtomicMin = 0 ... AtomicMSwap = 18). String
	// prints libfabric's name (FI_SUM ...), or AtomicOp(n) for other
	// values; Valid reports whether the value is one of the constants
	// below. With buf the operand, target the remote element, compare the
	// compare operand and result what a fetch or compare call returns (the
	// target's value before the operation):
	//
	//	AtomicMin      FI_MIN          target = min(target, buf)
	//	AtomicMax      FI_MAX          target = max(target, buf)
	//	AtomicSum      FI_SUM          target += buf
	//	AtomicProd     FI_PROD         target *= buf
	//	AtomicLOr      FI_LOR          target = target || buf (logical: 0 or 1)
	//	AtomicLAnd     FI_LAND         target = target && buf
	//	AtomicBOr      FI_BOR          target |= buf
	//	AtomicBAnd     FI_BAND         target &= buf
	//	AtomicLXor     FI_LXOR         target = (target != 0) != (buf != 0)
	//	AtomicBXor     FI_BXOR         target ^= buf
	//	AtomicRead     FI_ATOMIC_READ  result = target (fetch calls only; buf unused)
	//	AtomicWrite    FI_ATOMIC_WRITE target = buf
	//	AtomicCSwap    FI_CSWAP        if compare == target { target = buf }
	//	AtomicCSwapNE  FI_CSWAP_NE     if compare != target { target = buf }
	//	AtomicCSwapLE  FI_CSWAP_LE     if compare <= target { target = buf }
	//	AtomicCSwapLT  FI_CSWAP_LT     if compare < target { target = buf }
	//	AtomicCSwapGE  FI_CSWAP_GE     if compare >= target { target = buf }
	//	AtomicCSwapGT  FI_CSWAP_GT     if compare > target { target = buf }
	//	AtomicMSwap    FI_MSWAP        target = buf&compare | target&^compare
	//
	// The base calls (Atomic, AtomicV, AtomicMsg, AtomicInject) take
	// AtomicMin to AtomicBXor and AtomicWrite; the fetch calls
	// (FetchAtomic...) take those and AtomicRead; the compare calls
	// (CompareAtomic...) take AtomicCSwap to AtomicMSwap. Any other
	// operation answers ErrOpNotSupp.
	AtomicOp = provider.AtomicOp
	// Datatype is enum fi_datatype, the element type of an atomic call,
	// with libfabric's values (DatatypeInt8 = 0 ... DatatypeUint128 = 15).
	// Elements are in the host's byte order:
	//
	//	DatatypeInt8, DatatypeUint8                  FI_INT8, FI_UINT8              1 byte
	//	DatatypeInt16, DatatypeUint16                FI_INT16, FI_UINT16            2 bytes
	//	DatatypeInt32, DatatypeUint32                FI_INT32, FI_UINT32            4 bytes
	//	DatatypeInt64, DatatypeUint64                FI_INT64, FI_UINT64            8 bytes
	//	DatatypeFloat, DatatypeDouble                FI_FLOAT, FI_DOUBLE            4, 8 bytes (IEEE 754)
	//	DatatypeFloatComplex, DatatypeDoubleComplex  FI_FLOAT_COMPLEX, FI_DOUBLE_COMPLEX  8, 16 bytes (real, imaginary)
	//	DatatypeLongDouble                           FI_LONG_DOUBLE                 16 bytes (C long double)
	//	DatatypeLongDoubleComplex                    FI_LONG_DOUBLE_COMPLEX         32 bytes
	//	DatatypeInt128, DatatypeUint128              FI_INT128, FI_UINT128          16 bytes
	//
	// Size returns the element size in bytes (0 for a value that is not
	// a datatype; AtomicAttr.Size is the provider's word for the
	// platform-dependent ones); Valid reports whether the value is one of
	// the constants; String prints libfabric's name (FI_UINT64 ...), or
	// Datatype(n). The local buffers of an atomic call hold a whole number
	// of elements.
	Datatype = provider.Datatype
	// RMAIOC is fi_rma_ioc, one remote target of an atomic operation
	// (MsgAtomic.RMA), a struct with the fields
	//
	//	Addr  uint64 // remote address (with FI_MR_VIRT_ADDR) or offset into the region
	//	Count uint64 // number of Datatype elements at Addr
	//	Key   uint64 // the remote region's key (MR.Key at the peer)
	//
	// The Counts of a call's targets add up to the number of elements of
	// its local operand.
	RMAIOC = provider.RMAIOC
)

// Atomic operations (enum fi_op). Base calls (Atomic*) take AtomicMin to
// AtomicBXor and AtomicWrite; fetch calls (FetchAtomic*) also take
// AtomicRead; compare calls (CompareAtomic*) take AtomicCSwap to
// AtomicMSwap.
const (
	AtomicMin     = provider.AtomicMin     // FI_MIN
	AtomicMax     = provider.AtomicMax     // FI_MAX
	AtomicSum     = provider.AtomicSum     // FI_SUM
	AtomicProd    = provider.AtomicProd    // FI_PROD
	AtomicLOr     = provider.AtomicLOr     // FI_LOR
	AtomicLAnd    = provider.AtomicLAnd    // FI_LAND
	AtomicBOr     = provider.AtomicBOr     // FI_BOR
	AtomicBAnd    = provider.AtomicBAnd    // FI_BAND
	AtomicLXor    = provider.AtomicLXor    // FI_LXOR
	AtomicBXor    = provider.AtomicBXor    // FI_BXOR
	AtomicRead    = provider.AtomicRead    // FI_ATOMIC_READ
	AtomicWrite   = provider.AtomicWrite   // FI_ATOMIC_WRITE
	AtomicCSwap   = provider.AtomicCSwap   // FI_CSWAP
	AtomicCSwapNE = provider.AtomicCSwapNE // FI_CSWAP_NE
	AtomicCSwapLE = provider.AtomicCSwapLE // FI_CSWAP_LE
	AtomicCSwapLT = provider.AtomicCSwapLT // FI_CSWAP_LT
	AtomicCSwapGE = provider.AtomicCSwapGE // FI_CSWAP_GE
	AtomicCSwapGT = provider.AtomicCSwapGT // FI_CSWAP_GT
	AtomicMSwap   = provider.AtomicMSwap   // FI_MSWAP
)

// Atomic datatypes (enum fi_datatype).
const (
	DatatypeInt8              = provider.DatatypeInt8              // FI_INT8
	DatatypeUint8             = provider.DatatypeUint8             // FI_UINT8
	DatatypeInt16             = provider.DatatypeInt16             // FI_INT16
	DatatypeUint16            = provider.DatatypeUint16            // FI_UINT16
	DatatypeInt32             = provider.DatatypeInt32             // FI_INT32
	DatatypeUint32            = provider.DatatypeUint32            // FI_UINT32
	DatatypeInt64             = provider.DatatypeInt64             // FI_INT64
	DatatypeUint64            = provider.DatatypeUint64            // FI_UINT64
	DatatypeFloat             = provider.DatatypeFloat             // FI_FLOAT
	DatatypeDouble            = provider.DatatypeDouble            // FI_DOUBLE
	DatatypeFloatComplex      = provider.DatatypeFloatComplex      // FI_FLOAT_COMPLEX
	DatatypeDoubleComplex     = provider.DatatypeDoubleComplex     // FI_DOUBLE_COMPLEX
	DatatypeLongDouble        = provider.DatatypeLongDouble        // FI_LONG_DOUBLE (16 bytes)
	DatatypeLongDoubleComplex = provider.DatatypeLongDoubleComplex // FI_LONG_DOUBLE_COMPLEX (32 bytes)
	DatatypeInt128            = provider.DatatypeInt128            // FI_INT128
	DatatypeUint128           = provider.DatatypeUint128           // FI_UINT128
)

// MsgAtomic is struct fi_msg_atomic, for AtomicMsg, FetchAtomicMsg and
// CompareAtomicMsg. Each local buffer of IOV (an fi_ioc) holds a whole
// number of Datatype elements; RMA's counts are in elements too and add up
// to the number of elements of IOV.
type MsgAtomic struct {
	IOV      [][]byte // local operands; the caller owns them until the completion
	Desc     []MRDesc // their memory descriptors: nil, or one per buffer
	Addr     Addr     // destination (ignored on connected endpoints)
	RMA      []RMAIOC // remote targets
	Datatype Datatype
	Op       AtomicOp
	Context  any    // operation context reported in the completion
	Data     uint64 // remote CQ data (with FI_REMOTE_CQ_DATA)
}

// atomicMsgFlags are the flags the atomic *Msg calls accept (fi_atomic(3)
// FLAGS, plus remote CQ data and the completion levels of fi_cq(3)).
// FI_TAGGED (a tagged receive buffer as the target) is passed to the
// provider, which may answer ErrOpNotSupp.
const atomicMsgFlags = FlagCompletion | FlagMore | FlagInject | FlagFence | FlagTagged | FlagRemoteCQData |
	FlagTransmitComplete | FlagDeliveryComplete | FlagInjectComplete | FlagCommitComplete | FlagTransmit

// atomicBufs is one local operand: buf with desc, or iov with descs.
func atomicBufs(buf []byte, desc MRDesc) provider.AtomicBufs {
	return provider.AtomicBufs{Buf: buf, Desc: desc}
}

func atomicBufsV(iov [][]byte, descs []MRDesc) provider.AtomicBufs {
	return provider.AtomicBufs{IOV: nonNil(iov), Descs: descs}
}

// elems returns the number of elements of size sz in b, or false if a
// buffer is not a whole number of elements.
func elems(b *provider.AtomicBufs, sz uint64) (uint64, bool) {
	if b.IOV == nil {
		return uint64(len(b.Buf)) / sz, uint64(len(b.Buf))%sz == 0
	}
	var n uint64
	for _, s := range b.IOV {
		if uint64(len(s))%sz != 0 {
			return 0, false
		}
		n += uint64(len(s)) / sz
	}
	return n, true
}

// atomicDirOK reports whether the endpoint's capabilities allow family k
// with op: FI_ATOMIC, and, where FI_READ/FI_WRITE/FI_REMOTE_* restrict
// directions (fi_getinfo(3)), FI_WRITE for operations that update the
// target and FI_READ for those that return its value.
func (e *Endpoint) atomicDirOK(k provider.AtomicKind, op AtomicOp) bool {
	const dirs = CapRead | CapWrite | CapRemoteRead | CapRemoteWrite
	if e.caps&dirs == 0 {
		return true
	}
	read := k != provider.AtomicBase
	write := op != AtomicRead
	return (!read || e.caps&CapRead != 0) && (!write || e.caps&CapWrite != 0)
}

// FI_FETCH_ATOMIC and FI_COMPARE_ATOMIC, the flags of Domain.QueryAtomic
// that select the fetch or compare family (the base family without
// either). They share bits 58 and 59 with FlagDiscard and FlagClaim, as in
// libfabric, so String prints those names.
const (
	FlagFetchAtomic   Flags = 1 << 58 // FI_FETCH_ATOMIC
	FlagCompareAtomic Flags = 1 << 59 // FI_COMPARE_ATOMIC
)

// AtomicAttr is struct fi_atomic_attr, the answer of Domain.QueryAtomic.
type AtomicAttr struct {
	// Count is the number of elements one call of the family may operate
	// on (at least 1), what the endpoint valid queries return. A
	// provider's count above math.MaxInt (possible only where int has 32
	// bits) is reported as math.MaxInt.
	Count int
	// Size is the size of one element in bytes, as the provider lays it
	// out (it matters for FI_LONG_DOUBLE); by default Datatype.Size.
	Size int
}

// queryAtomic is the one answer to fi_query_atomic and the valid queries:
// op and dt must be in their enums and op offered for family k (else
// ErrOpNotSupp, as libfabric 1.17's ofi_atomic_valid answers), and the
// domain must implement provider.AtomicDomain (else ErrNoSys, as
// fi_no_query_atomic); then the provider decides, and a zero count is
// ErrOpNotSupp. Bare Errno values; no allocation.
func (d *Domain) queryAtomic(k provider.AtomicKind, dt Datatype, op AtomicOp, tagged bool) (provider.AtomicAttr, error) {
	if d.atomicQ == nil {
		return provider.AtomicAttr{}, ErrNoSys
	}
	if !dt.Valid() || !op.Valid() || !k.Allows(op) {
		return provider.AtomicAttr{}, ErrOpNotSupp
	}
	a, err := d.atomicQ.QueryAtomic(k, dt, op, tagged)
	if err != nil {
		return provider.AtomicAttr{}, err
	}
	if a.Count == 0 {
		return provider.AtomicAttr{}, ErrOpNotSupp
	}
	if a.Size == 0 {
		a.Size = uint64(dt.Size())
	}
	return a, nil
}

// QueryAtomic reports whether the domain supports atomic operation op on
// dt, for suitably configured endpoints, and how many elements one call
// may carry (fi_query_atomic). flags select the family: 0 for the base
// calls (as Endpoint.AtomicValid), FlagFetchAtomic for the fetch calls
// (FetchAtomicValid), FlagCompareAtomic for the compare calls
// (CompareAtomicValid); FlagTagged, alone or with one of those, asks about
// atomics targeting tagged receive buffers. Errors, wrapped in *OpError
// with Op "fi_query_atomic": ErrBadFlags for other flags or both family
// flags; ErrNoSys when the provider offers no atomics (as libfabric's
// domains without query_atomic); ErrOpNotSupp for an operation not offered
// for the family, an op or dt outside enum fi_op/fi_datatype (libfabric
// 1.17's answer), or one the provider does not support; ErrClosed after
// Close; ErrInval for a nil domain.
func (d *Domain) QueryAtomic(dt Datatype, op AtomicOp, flags Flags) (AtomicAttr, error) {
	const name = "fi_query_atomic"
	if d == nil {
		return AtomicAttr{}, ErrInval
	}
	if d.lc.isClosed() {
		return AtomicAttr{}, opErr(name, d.prov.Name(), ErrClosed)
	}
	if flags&^(FlagFetchAtomic|FlagCompareAtomic|FlagTagged) != 0 ||
		flags&(FlagFetchAtomic|FlagCompareAtomic) == FlagFetchAtomic|FlagCompareAtomic {
		return AtomicAttr{}, opErr(name, d.prov.Name(), ErrBadFlags)
	}
	k := provider.AtomicBase
	switch {
	case flags&FlagFetchAtomic != 0:
		k = provider.AtomicFetch
	case flags&FlagCompareAtomic != 0:
		k = provider.AtomicCompare
	}
	a, err := d.queryAtomic(k, dt, op, flags&FlagTagged != 0)
	if err != nil {
		return AtomicAttr{}, opErr(name, d.prov.Name(), err)
	}
	return AtomicAttr{Count: clampInt(a.Count), Size: clampInt(a.Size)}, nil
}

// clampInt converts a provider's size_t to int, saturating at math.MaxInt.
func clampInt(n uint64) int { return int(min(n, uint64(math.MaxInt))) }

// atomicValid answers the endpoint valid queries and checks an operation's
// arguments before it is posted: the endpoint has FI_ATOMIC and its
// provider endpoint implements provider.Atomic (else ErrNoSys), the
// operation's directions are allowed by the endpoint's capabilities (else
// ErrOpNotSupp); then it is the domain's fi_query_atomic answer, so the
// two never disagree. It returns the element count limit.
func (e *Endpoint) atomicValid(k provider.AtomicKind, dt Datatype, op AtomicOp, tagged bool) (uint64, error) {
	if e.atomic == nil || e.caps&CapAtomic == 0 {
		return 0, ErrNoSys
	}
	if op.Valid() && !e.atomicDirOK(k, op) {
		return 0, ErrOpNotSupp
	}
	a, err := e.dom.queryAtomic(k, dt, op, tagged)
	if err != nil {
		return 0, err
	}
	return a.Count, nil
}

func (ep *Endpoint) validQuery(k provider.AtomicKind, dt Datatype, op AtomicOp) (int, error) {
	if ep == nil {
		return 0, ErrInval
	}
	name := validNames[k]
	e := ep.root()
	if e.lc.isClosed() || ep.lc.isClosed() {
		return 0, opErr(name, e.prov, ErrClosed)
	}
	n, err := e.atomicValid(k, dt, op, false)
	if err != nil {
		return 0, opErr(name, e.prov, err)
	}
	return clampInt(n), nil
}

// validNames are the C names of the valid queries, by family.
var validNames = [...]string{
	provider.AtomicBase:    "fi_atomicvalid",
	provider.AtomicFetch:   "fi_fetch_atomicvalid",
	provider.AtomicCompare: "fi_compare_atomicvalid",
}

// AtomicValid reports whether the endpoint supports base atomic operation
// op on dt (fi_atomicvalid) and how many elements one call may carry: the
// Count of Domain.QueryAtomic(dt, op, 0) once the endpoint's capabilities
// allow the operation. Errors (wrapped in *OpError with Op
// "fi_atomicvalid"): ErrNoSys without FI_ATOMIC, ErrOpNotSupp for an
// operation not offered (not a base operation, a value outside enum
// fi_op/fi_datatype as libfabric 1.17 answers, a direction the endpoint's
// FI_READ/FI_WRITE capabilities exclude, or not supported by the
// provider), ErrClosed after Close. A count above math.MaxInt is reported
// as math.MaxInt (see AtomicAttr.Count).
func (ep *Endpoint) AtomicValid(dt Datatype, op AtomicOp) (count int, err error) {
	return ep.validQuery(provider.AtomicBase, dt, op)
}

// FetchAtomicValid is AtomicValid for the fetch calls
// (fi_fetch_atomicvalid; Domain.QueryAtomic with FlagFetchAtomic); its
// errors name fi_fetch_atomicvalid.
func (ep *Endpoint) FetchAtomicValid(dt Datatype, op AtomicOp) (count int, err error) {
	return ep.validQuery(provider.AtomicFetch, dt, op)
}

// CompareAtomicValid is AtomicValid for the compare calls
// (fi_compare_atomicvalid; Domain.QueryAtomic with FlagCompareAtomic); its
// errors name fi_compare_atomicvalid.
func (ep *Endpoint) CompareAtomicValid(dt Datatype, op AtomicOp) (count int, err error) {
	return ep.validQuery(provider.AtomicCompare, dt, op)
}

// atomicOp validates an atomic operation once, for every provider, and
// hands it to the provider: the endpoint is enabled with FI_ATOMIC (else
// ErrOpBadState, ErrClosed, ErrNoSys); op and datatype are in range and
// offered for the family, by the endpoint's capabilities and by the
// domain's fi_query_atomic answer, for tagged targets with FI_TAGGED
// (ErrOpNotSupp); every local buffer is a whole number of elements, the
// operand holds 1 to the valid count of elements (ErrInval; ErrMsgSize
// above the count), the result and compare operands hold as many, and the
// remote targets as many (ErrInval); vectors are within the endpoint's
// iov_limit and the remote targets within its rma_iov_limit, and have
// matching descriptors (ErrInval, also for missing descriptors under
// FI_MR_LOCAL, except for AtomicInject, which takes none); then the
// transmit rules shared with messages and RMA (flags, inject size, remote
// CQ data, a CQ or counter for the completion).
//
// AtomicInject (inject) does not go through txCheck: like Inject and
// RMAInjectWrite it reaches the provider with FlagInject alone, without
// the endpoint's default op flags (OpsFlags), because it asks for no
// completion and takes no other flag (fi_atomic(3): it "behaves as if the
// FI_INJECT transfer flag were set, and FI_COMPLETION were not"; libfabric's
// rxm passes FI_INJECT alone too). Its size is checked against the inject
// size here, and it needs no CQ.
func (ep *Endpoint) atomicOp(m provider.AtomicMsg, flags Flags, explicit, inject bool) error {
	e, err := ep.ready()
	if err != nil {
		return err
	}
	limit, err := e.atomicValid(m.Kind, m.Datatype, m.Op, flags&FlagTagged != 0)
	if err != nil {
		return err
	}
	sz := uint64(m.Datatype.Size())
	count, ok := elems(&m.Operand, sz)
	if !ok {
		return ErrInval
	}
	if m.Op == AtomicRead {
		m.Operand = provider.AtomicBufs{}
		if count, ok = elems(&m.Result, sz); !ok {
			return ErrInval
		}
	}
	if count == 0 {
		return ErrInval
	}
	if count > limit {
		return ErrMsgSize
	}
	if m.Kind != provider.AtomicBase {
		if n, ok := elems(&m.Result, sz); !ok || n != count {
			return ErrInval
		}
	}
	if m.Kind == provider.AtomicCompare {
		if n, ok := elems(&m.Compare, sz); !ok || n != count {
			return ErrInval
		}
	}
	for _, b := range [...]*provider.AtomicBufs{&m.Operand, &m.Compare, &m.Result} {
		if b.IOV != nil && len(b.IOV) > e.txIOVLimit {
			return ErrInval
		}
	}
	if m.RMA != nil {
		if len(m.RMA) > e.rmaIOVLimit {
			return ErrInval
		}
		var n uint64
		for _, r := range m.RMA {
			n += r.Count
		}
		if n != count {
			return ErrInval
		}
	} else {
		m.RMAOne.Count = count
	}
	d := e.dom
	if !inject && !d.descsOK(m.Operand.Buf, m.Operand.IOV, m.Operand.Desc, m.Operand.Descs, FlagWrite) ||
		!d.descsOK(m.Compare.Buf, m.Compare.IOV, m.Compare.Desc, m.Compare.Descs, FlagWrite) ||
		!d.descsOK(m.Result.Buf, m.Result.IOV, m.Result.Desc, m.Result.Descs, FlagRead) {
		return ErrInval
	}
	cntr := provider.CntrWrite
	if m.Kind != provider.AtomicBase {
		cntr = provider.CntrRead
	}
	m.Count = count
	n := (m.Operand.Len() + m.Compare.Len())
	if inject {
		if err = e.injectCheck(n, 0); err != nil {
			return err
		}
		m.Flags = FlagInject
	} else if m.Flags, err = ep.txCheck(e, flags, explicit, atomicMsgFlags, n, cntr); err != nil {
		return err
	}
	return e.atomic.Atomic(m)
}

// Atomic applies op to count elements of dt at the remote address addr of
// the region with key, with buf as the operand (fi_atomic); count is
// len(buf)/dt.Size(). desc is buf's memory descriptor or nil. The target
// region needs FI_REMOTE_WRITE. Until a provider claims FI_ATOMIC every
// atomic call returns ErrNoSys.
func (ep *Endpoint) Atomic(buf []byte, desc MRDesc, dest Addr, addr, key uint64, dt Datatype, op AtomicOp, ctx any) error {
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicBase, Op: op, Datatype: dt,
		Operand: atomicBufs(buf, desc), Addr: dest, RMAOne: RMAIOC{Addr: addr, Key: key}, Context: ctx},
		0, false, false)
}

// AtomicV is Atomic with the operand gathered from iov (fi_atomicv).
func (ep *Endpoint) AtomicV(iov [][]byte, desc []MRDesc, dest Addr, addr, key uint64, dt Datatype, op AtomicOp, ctx any) error {
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicBase, Op: op, Datatype: dt,
		Operand: atomicBufsV(iov, desc), Addr: dest, RMAOne: RMAIOC{Addr: addr, Key: key}, Context: ctx},
		0, false, false)
}

// AtomicMsg is Atomic with explicit flags (fi_atomicmsg): FI_COMPLETION,
// FI_MORE, FI_INJECT, FI_FENCE, FI_TAGGED, FI_REMOTE_CQ_DATA and the
// completion levels.
func (ep *Endpoint) AtomicMsg(m *MsgAtomic, flags Flags) error {
	if m == nil || len(m.RMA) == 0 {
		return ErrInval
	}
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicBase, Op: m.Op, Datatype: m.Datatype,
		Operand: atomicBufsV(m.IOV, m.Desc), Addr: m.Addr, RMA: m.RMA, Context: m.Context, Data: m.Data},
		flags, true, false)
}

// AtomicInject is Atomic whose buffer may be reused as soon as the call
// returns, without a completion (fi_inject_atomic); len(buf) is at most
// the inject size.
func (ep *Endpoint) AtomicInject(buf []byte, dest Addr, addr, key uint64, dt Datatype, op AtomicOp) error {
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicBase, Op: op, Datatype: dt,
		Operand: atomicBufs(buf, nil), Addr: dest, RMAOne: RMAIOC{Addr: addr, Key: key}}, 0, false, true)
}

// FetchAtomic is Atomic that also returns the target's initial value in
// result (fi_fetch_atomic), which must hold as many elements as buf. With
// AtomicRead, buf is ignored (may be nil) and the count is taken from
// result. The target region needs FI_REMOTE_READ (and FI_REMOTE_WRITE
// unless op is AtomicRead).
func (ep *Endpoint) FetchAtomic(buf []byte, desc MRDesc, result []byte, resultDesc MRDesc, dest Addr,
	addr, key uint64, dt Datatype, op AtomicOp, ctx any) error {
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicFetch, Op: op, Datatype: dt,
		Operand: atomicBufs(buf, desc), Result: atomicBufs(result, resultDesc), Addr: dest,
		RMAOne: RMAIOC{Addr: addr, Key: key}, Context: ctx}, 0, false, false)
}

// FetchAtomicV is FetchAtomic with vectors (fi_fetch_atomicv).
func (ep *Endpoint) FetchAtomicV(iov [][]byte, desc []MRDesc, resultv [][]byte, resultDesc []MRDesc, dest Addr,
	addr, key uint64, dt Datatype, op AtomicOp, ctx any) error {
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicFetch, Op: op, Datatype: dt,
		Operand: atomicBufsV(iov, desc), Result: atomicBufsV(resultv, resultDesc), Addr: dest,
		RMAOne: RMAIOC{Addr: addr, Key: key}, Context: ctx}, 0, false, false)
}

// FetchAtomicMsg is FetchAtomic with explicit flags (fi_fetch_atomicmsg).
func (ep *Endpoint) FetchAtomicMsg(m *MsgAtomic, resultv [][]byte, resultDesc []MRDesc, flags Flags) error {
	if m == nil || len(m.RMA) == 0 {
		return ErrInval
	}
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicFetch, Op: m.Op, Datatype: m.Datatype,
		Operand: atomicBufsV(m.IOV, m.Desc), Result: atomicBufsV(resultv, resultDesc), Addr: m.Addr, RMA: m.RMA,
		Context: m.Context, Data: m.Data}, flags, true, false)
}

// CompareAtomic applies a compare operation (AtomicCSwap ... AtomicMSwap)
// with buf as the operand and compare as the compare operand, returning
// the target's initial value in result (fi_compare_atomic); all three hold
// the same number of elements.
func (ep *Endpoint) CompareAtomic(buf []byte, desc MRDesc, compare []byte, compareDesc MRDesc, result []byte,
	resultDesc MRDesc, dest Addr, addr, key uint64, dt Datatype, op AtomicOp, ctx any) error {
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicCompare, Op: op, Datatype: dt,
		Operand: atomicBufs(buf, desc), Compare: atomicBufs(compare, compareDesc),
		Result: atomicBufs(result, resultDesc), Addr: dest, RMAOne: RMAIOC{Addr: addr, Key: key}, Context: ctx},
		0, false, false)
}

// CompareAtomicV is CompareAtomic with vectors (fi_compare_atomicv).
func (ep *Endpoint) CompareAtomicV(iov [][]byte, desc []MRDesc, comparev [][]byte, compareDesc []MRDesc,
	resultv [][]byte, resultDesc []MRDesc, dest Addr, addr, key uint64, dt Datatype, op AtomicOp, ctx any) error {
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicCompare, Op: op, Datatype: dt,
		Operand: atomicBufsV(iov, desc), Compare: atomicBufsV(comparev, compareDesc),
		Result: atomicBufsV(resultv, resultDesc), Addr: dest, RMAOne: RMAIOC{Addr: addr, Key: key}, Context: ctx},
		0, false, false)
}

// CompareAtomicMsg is CompareAtomic with explicit flags
// (fi_compare_atomicmsg).
func (ep *Endpoint) CompareAtomicMsg(m *MsgAtomic, comparev [][]byte, compareDesc []MRDesc, resultv [][]byte,
	resultDesc []MRDesc, flags Flags) error {
	if m == nil || len(m.RMA) == 0 {
		return ErrInval
	}
	return ep.atomicOp(provider.AtomicMsg{Kind: provider.AtomicCompare, Op: m.Op, Datatype: m.Datatype,
		Operand: atomicBufsV(m.IOV, m.Desc), Compare: atomicBufsV(comparev, compareDesc),
		Result: atomicBufsV(resultv, resultDesc), Addr: m.Addr, RMA: m.RMA, Context: m.Context, Data: m.Data},
		flags, true, false)
}
