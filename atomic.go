package fabric

import "github.com/gofabric/fabric/provider"

// Atomic vocabulary (fi_atomic(3)), shared with providers.
type (
	// AtomicOp is enum fi_op, the operation of an atomic call. String
	// prints libfabric's name (FI_SUM ...).
	AtomicOp = provider.AtomicOp
	// Datatype is enum fi_datatype, the element type of an atomic call.
	// Size gives the element size; String prints libfabric's name.
	Datatype = provider.Datatype
	// RMAIOC is fi_rma_ioc: a remote target of an atomic operation (address,
	// number of elements, key).
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

// atomicValid answers the valid queries and checks an operation's
// arguments before it is posted.
func (e *Endpoint) atomicValid(k provider.AtomicKind, dt Datatype, op AtomicOp) (uint64, error) {
	if e.atomic == nil || e.caps&CapAtomic == 0 {
		return 0, ErrNoSys
	}
	if !dt.Valid() || !op.Valid() {
		return 0, ErrInval
	}
	if !k.Allows(op) || !e.atomicDirOK(k, op) {
		return 0, ErrOpNotSupp
	}
	n, err := e.atomic.AtomicValid(k, dt, op)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, ErrOpNotSupp
	}
	return n, nil
}

func (ep *Endpoint) validQuery(k provider.AtomicKind, dt Datatype, op AtomicOp) (int, error) {
	const name = "fi_atomicvalid"
	if ep == nil {
		return 0, ErrInval
	}
	e := ep.root()
	if e.lc.isClosed() || ep.lc.isClosed() {
		return 0, opErr(name, e.prov, ErrClosed)
	}
	n, err := e.atomicValid(k, dt, op)
	if err != nil {
		return 0, opErr(name, e.prov, err)
	}
	return int(min(n, 1<<30)), nil
}

// AtomicValid reports whether the endpoint supports base atomic operation
// op on dt (fi_atomicvalid) and how many elements one call may carry.
// Errors (wrapped in *OpError): ErrNoSys without FI_ATOMIC, ErrInval for
// values outside enum fi_op/fi_datatype, ErrOpNotSupp for an operation
// not offered (not a base operation, or not supported by the provider).
func (ep *Endpoint) AtomicValid(dt Datatype, op AtomicOp) (count int, err error) {
	return ep.validQuery(provider.AtomicBase, dt, op)
}

// FetchAtomicValid is AtomicValid for the fetch calls (fi_fetch_atomicvalid).
func (ep *Endpoint) FetchAtomicValid(dt Datatype, op AtomicOp) (count int, err error) {
	return ep.validQuery(provider.AtomicFetch, dt, op)
}

// CompareAtomicValid is AtomicValid for the compare calls
// (fi_compare_atomicvalid).
func (ep *Endpoint) CompareAtomicValid(dt Datatype, op AtomicOp) (count int, err error) {
	return ep.validQuery(provider.AtomicCompare, dt, op)
}

// atomicOp validates an atomic operation once, for every provider, and
// hands it to the provider: the endpoint is enabled with FI_ATOMIC (else
// ErrOpBadState, ErrClosed, ErrNoSys); op and datatype are in range
// (ErrInval) and offered for the family (ErrOpNotSupp); every local buffer
// is a whole number of elements, the operand holds 1 to the valid count
// of elements (ErrInval; ErrMsgSize above the count), the result and
// compare operands hold as many, and the remote targets as many (ErrInval);
// vectors are within the endpoint's iov limits and have matching
// descriptors (ErrInval, also for missing descriptors under FI_MR_LOCAL,
// except for AtomicInject, which takes none); then the transmit rules
// shared with messages and RMA (flags, inject size, remote CQ data, a CQ
// or counter for the completion).
func (ep *Endpoint) atomicOp(m provider.AtomicMsg, flags Flags, explicit, inject bool) error {
	e, err := ep.ready()
	if err != nil {
		return err
	}
	limit, err := e.atomicValid(m.Kind, m.Datatype, m.Op)
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
		if n > e.injectSize {
			return ErrInval
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
