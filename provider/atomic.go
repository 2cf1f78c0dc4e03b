package provider

import "strconv"

// AtomicOp is enum fi_op: the operation of an atomic call (fi_atomic(3)).
// The values are libfabric's; String prints libfabric's names.
type AtomicOp int

// Atomic operations (enum fi_op, libfabric 1.17). With buf the operand,
// addr the target, compare the compare operand and result what a fetch
// returns (the target's initial value):
//
//	FI_MIN          if buf < addr { addr = buf }
//	FI_MAX          if buf > addr { addr = buf }
//	FI_SUM          addr += buf
//	FI_PROD         addr *= buf
//	FI_LOR          addr = addr || buf
//	FI_LAND         addr = addr && buf
//	FI_BOR          addr |= buf
//	FI_BAND         addr &= buf
//	FI_LXOR         addr = addr != buf (logical)
//	FI_BXOR         addr ^= buf
//	FI_ATOMIC_READ  result = addr (fetch calls only)
//	FI_ATOMIC_WRITE addr = buf
//	FI_CSWAP        if compare == addr { addr = buf }
//	FI_CSWAP_NE     if compare != addr { addr = buf }
//	FI_CSWAP_LE     if compare <= addr { addr = buf }
//	FI_CSWAP_LT     if compare < addr { addr = buf }
//	FI_CSWAP_GE     if compare >= addr { addr = buf }
//	FI_CSWAP_GT     if compare > addr { addr = buf }
//	FI_MSWAP        addr = buf&compare | addr&^compare
const (
	AtomicMin     AtomicOp = iota // FI_MIN
	AtomicMax                     // FI_MAX
	AtomicSum                     // FI_SUM
	AtomicProd                    // FI_PROD
	AtomicLOr                     // FI_LOR
	AtomicLAnd                    // FI_LAND
	AtomicBOr                     // FI_BOR
	AtomicBAnd                    // FI_BAND
	AtomicLXor                    // FI_LXOR
	AtomicBXor                    // FI_BXOR
	AtomicRead                    // FI_ATOMIC_READ
	AtomicWrite                   // FI_ATOMIC_WRITE
	AtomicCSwap                   // FI_CSWAP
	AtomicCSwapNE                 // FI_CSWAP_NE
	AtomicCSwapLE                 // FI_CSWAP_LE
	AtomicCSwapLT                 // FI_CSWAP_LT
	AtomicCSwapGE                 // FI_CSWAP_GE
	AtomicCSwapGT                 // FI_CSWAP_GT
	AtomicMSwap                   // FI_MSWAP
)

// AtomicOpLast is FI_ATOMIC_OP_LAST: the number of point-to-point atomic
// operations (not an operation).
const AtomicOpLast = int(AtomicMSwap) + 1

// Valid reports whether o is one of the point-to-point operations.
func (o AtomicOp) Valid() bool { return o >= 0 && int(o) < AtomicOpLast }

// Datatype is enum fi_datatype: the element type of an atomic operation.
type Datatype int

// Atomic datatypes (enum fi_datatype, libfabric 1.17). FI_INT128 and
// FI_UINT128 follow FI_DATATYPE_LAST, as in C. FI_LONG_DOUBLE is C's long
// double, 16 bytes on amd64 and arm64; the complex types are (real,
// imaginary) pairs.
const (
	DatatypeInt8              Datatype = iota // FI_INT8
	DatatypeUint8                             // FI_UINT8
	DatatypeInt16                             // FI_INT16
	DatatypeUint16                            // FI_UINT16
	DatatypeInt32                             // FI_INT32
	DatatypeUint32                            // FI_UINT32
	DatatypeInt64                             // FI_INT64
	DatatypeUint64                            // FI_UINT64
	DatatypeFloat                             // FI_FLOAT
	DatatypeDouble                            // FI_DOUBLE
	DatatypeFloatComplex                      // FI_FLOAT_COMPLEX
	DatatypeDoubleComplex                     // FI_DOUBLE_COMPLEX
	DatatypeLongDouble                        // FI_LONG_DOUBLE
	DatatypeLongDoubleComplex                 // FI_LONG_DOUBLE_COMPLEX
	DatatypeInt128                            // FI_INT128
	DatatypeUint128                           // FI_UINT128
)

// numDatatypes is the number of atomic datatypes.
const numDatatypes = int(DatatypeUint128) + 1

var datatypeSizes = [numDatatypes]int{1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16, 16, 32, 16, 16}

// Valid reports whether d is one of the atomic datatypes.
func (d Datatype) Valid() bool { return d >= 0 && int(d) < numDatatypes }

// Size returns the size of one element in bytes (fi_atomic_attr.size), or
// 0 for an invalid datatype.
func (d Datatype) Size() int {
	if !d.Valid() {
		return 0
	}
	return datatypeSizes[d]
}

// AtomicKind selects the family of an atomic call: base (fi_atomic*),
// fetch (fi_fetch_atomic*) or compare (fi_compare_atomic*).
type AtomicKind int

// Atomic call families.
const (
	AtomicBase    AtomicKind = iota // fi_atomic, fi_atomicv, fi_atomicmsg, fi_inject_atomic
	AtomicFetch                     // fi_fetch_atomic* (FI_FETCH_ATOMIC in fi_query_atomic)
	AtomicCompare                   // fi_compare_atomic* (FI_COMPARE_ATOMIC)
)

// String returns the family's C call name.
func (k AtomicKind) String() string {
	switch k {
	case AtomicBase:
		return "fi_atomic"
	case AtomicFetch:
		return "fi_fetch_atomic"
	case AtomicCompare:
		return "fi_compare_atomic"
	}
	return "AtomicKind(" + strconv.Itoa(int(k)) + ")"
}

// Allows reports whether fi_atomic(3) lists op for the family: base takes
// FI_MIN..FI_BXOR and FI_ATOMIC_WRITE; fetch also FI_ATOMIC_READ; compare
// takes FI_CSWAP..FI_MSWAP.
func (k AtomicKind) Allows(op AtomicOp) bool {
	switch k {
	case AtomicBase:
		return op >= AtomicMin && op <= AtomicBXor || op == AtomicWrite
	case AtomicFetch:
		return op >= AtomicMin && op <= AtomicWrite
	case AtomicCompare:
		return op >= AtomicCSwap && op <= AtomicMSwap
	}
	return false
}

// RMAIOC is fi_rma_ioc: a remote target of an atomic operation, in
// elements of the operation's datatype.
type RMAIOC struct {
	Addr  uint64 // remote address (FI_MR_VIRT_ADDR) or offset into the region
	Count uint64 // number of elements
	Key   uint64 // the region's key
}

// AtomicBufs is one local operand of an atomic operation (the source
// operand, the compare operand or the result buffer): a single buffer
// (Buf, used when IOV is nil) or a list (IOV, each element a whole number
// of datatype elements: fi_ioc), with their memory descriptors.
type AtomicBufs struct {
	Buf   []byte
	IOV   [][]byte
	Desc  MRDesc   // descriptor of Buf, or nil
	Descs []MRDesc // descriptors of IOV (nil, or one per element)
}

// Len returns the total size of b's buffers in bytes.
func (b *AtomicBufs) Len() uint64 {
	if b.IOV == nil {
		return uint64(len(b.Buf))
	}
	var n uint64
	for _, s := range b.IOV {
		n += uint64(len(s))
	}
	return n
}

// AtomicMsg describes one atomic operation on the provider SPI. The root
// package has validated it before the provider sees it:
//
//   - the endpoint is enabled and has FI_ATOMIC (and FI_READ/FI_WRITE
//     where the capabilities restrict directions);
//   - Op and Datatype are valid and Op is allowed for Kind;
//   - every local buffer is a whole number of elements; Count (>= 1) is
//     the number of elements of the operand (of the result for
//     FI_ATOMIC_READ), the result and compare operands hold exactly Count
//     elements where Kind uses them, the remote targets add up to Count,
//     and Count does not exceed the count the domain's QueryAtomic
//     reported;
//   - vector lengths are within the endpoint's limits, Flags holds the
//     effective flags (FlagCompletion when a completion is due,
//     FlagInject for inject calls), and with FI_MR_LOCAL every buffer
//     has a descriptor of the domain.
//
// It is passed by value so that posting allocates nothing.
type AtomicMsg struct {
	Kind     AtomicKind
	Op       AtomicOp
	Datatype Datatype
	Count    uint64
	Operand  AtomicBufs // ignored for FI_ATOMIC_READ
	Compare  AtomicBufs // AtomicCompare only
	Result   AtomicBufs // AtomicFetch and AtomicCompare
	Addr     Addr       // destination (ignored on connected endpoints)
	RMA      []RMAIOC   // remote targets; RMAOne is used when nil
	RMAOne   RMAIOC
	Context  any
	Data     uint64 // remote CQ data, with FlagRemoteCQData
	Flags    Flags
}

// AtomicAttr is struct fi_atomic_attr: what one atomic call of a family may
// carry for a datatype and operation.
type AtomicAttr struct {
	Count uint64 // elements one call may operate on (> 0 when supported)
	Size  uint64 // bytes per element; 0 means Datatype.Size
}

// AtomicDomain is implemented by domains of providers that claim FI_ATOMIC
// (fi_query_atomic). It is the one source of the atomic limits: the root
// package answers Domain.QueryAtomic and the endpoint valid queries
// (fi_atomicvalid, fi_fetch_atomicvalid, fi_compare_atomicvalid) from it,
// and checks every atomic operation against it, so it must be cheap (a
// table lookup) and must not allocate. Domains without it answer ENOSYS,
// as libfabric's fi_no_query_atomic does.
type AtomicDomain interface {
	// QueryAtomic reports the attributes of op on datatype d for family
	// k, with tagged set for atomics targeting tagged receive buffers
	// (FI_TAGGED), or EOPNOTSUPP (or ENOSYS for tagged atomics the
	// provider does not implement). d and op are valid and op is allowed
	// for k.
	QueryAtomic(k AtomicKind, d Datatype, op AtomicOp, tagged bool) (AtomicAttr, error)
}

// Atomic is implemented by endpoints of providers that claim FI_ATOMIC
// (fi_atomic(3)); their domain implements AtomicDomain. Endpoints without
// it answer ENOSYS.
type Atomic interface {
	// Atomic starts the operation m.
	Atomic(m AtomicMsg) error
}
