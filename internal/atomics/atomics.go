// Package atomics is the operation table of fi_atomic(3) that providers
// share: which operations apply to which datatypes in each call family,
// and the element-wise computation of each operation on byte buffers in
// the host's little-endian layout.
//
// The table is not atomic: the caller (the provider owning the target
// memory) serializes every access to the target buffer, so that no other
// Apply call or writer touches it concurrently.
//
// Semantics follow fi_atomic(3) with the plain C operators of each type:
// integers wrap on overflow (two's complement), floating point comparisons
// are IEEE 754 (a NaN is never less, greater or equal to anything, -0 ==
// +0), logical operations yield 1 for true and 0 for false.
//
// Which operations apply to which datatypes (fi_atomic(3) defines the
// operations but has no per-datatype table; this is the project's table:
// bitwise operations need an integer's bits, ordered comparisons need an
// order, and the logical operations are kept to integers too):
//
//   - integers (8 to 128 bits, signed and unsigned): every operation;
//   - FI_FLOAT, FI_DOUBLE: all but the logical and bitwise operations
//     (FI_LOR, FI_LAND, FI_LXOR, FI_BOR, FI_BAND, FI_BXOR, FI_MSWAP);
//   - FI_FLOAT_COMPLEX, FI_DOUBLE_COMPLEX: FI_SUM, FI_PROD,
//     FI_ATOMIC_READ, FI_ATOMIC_WRITE, FI_CSWAP, FI_CSWAP_NE (complex
//     numbers are not ordered);
//   - FI_LONG_DOUBLE, FI_LONG_DOUBLE_COMPLEX: nothing; Go has no
//     extended-precision type, so their arithmetic cannot be carried out
//     exactly as C would.
//
// In the families: base (fi_atomic) takes FI_MIN..FI_BXOR and
// FI_ATOMIC_WRITE; fetch (fi_fetch_atomic) also FI_ATOMIC_READ; compare
// (fi_compare_atomic) takes FI_CSWAP..FI_MSWAP only.
package atomics

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/gofabric/fabric/provider"
)

var le = binary.LittleEndian

// Size returns the size in bytes of one element of dt, or 0 when dt is not
// a datatype this package computes on (invalid, or a long double type).
func Size(dt provider.Datatype) int {
	if dt == provider.DatatypeLongDouble || dt == provider.DatatypeLongDoubleComplex {
		return 0
	}
	return dt.Size()
}

// class is the family of a datatype for the validity table.
type class int

const (
	classNone class = iota
	classInt
	classFloat
	classComplex
)

func classOf(dt provider.Datatype) class {
	switch dt {
	case provider.DatatypeInt8, provider.DatatypeUint8, provider.DatatypeInt16, provider.DatatypeUint16,
		provider.DatatypeInt32, provider.DatatypeUint32, provider.DatatypeInt64, provider.DatatypeUint64,
		provider.DatatypeInt128, provider.DatatypeUint128:
		return classInt
	case provider.DatatypeFloat, provider.DatatypeDouble:
		return classFloat
	case provider.DatatypeFloatComplex, provider.DatatypeDoubleComplex:
		return classComplex
	}
	return classNone
}

// opOn reports whether op is defined on datatypes of class c (any family).
func opOn(op provider.AtomicOp, c class) bool {
	switch c {
	case classInt:
		return op.Valid()
	case classFloat:
		switch op {
		case provider.AtomicMin, provider.AtomicMax, provider.AtomicSum, provider.AtomicProd,
			provider.AtomicRead, provider.AtomicWrite,
			provider.AtomicCSwap, provider.AtomicCSwapNE, provider.AtomicCSwapLE,
			provider.AtomicCSwapLT, provider.AtomicCSwapGE, provider.AtomicCSwapGT:
			return true
		}
	case classComplex:
		switch op {
		case provider.AtomicSum, provider.AtomicProd, provider.AtomicRead, provider.AtomicWrite,
			provider.AtomicCSwap, provider.AtomicCSwapNE:
			return true
		}
	}
	return false
}

// KindValid reports whether op on dt is a valid atomic of kind k (base,
// fetch or compare; false for any other kind): Valid, FetchValid or
// CompareValid by k.
func KindValid(k provider.AtomicKind, op provider.AtomicOp, dt provider.Datatype) bool {
	return k.Allows(op) && opOn(op, classOf(dt))
}

// Valid reports whether op on dt is a valid base atomic (fi_atomic).
func Valid(op provider.AtomicOp, dt provider.Datatype) bool {
	return KindValid(provider.AtomicBase, op, dt)
}

// FetchValid reports whether op on dt is a valid fetch atomic
// (fi_fetch_atomic).
func FetchValid(op provider.AtomicOp, dt provider.Datatype) bool {
	return KindValid(provider.AtomicFetch, op, dt)
}

// CompareValid reports whether op on dt is a valid compare atomic
// (fi_compare_atomic).
func CompareValid(op provider.AtomicOp, dt provider.Datatype) bool {
	return KindValid(provider.AtomicCompare, op, dt)
}

// Apply performs the base atomic op on len(dst)/Size(dt) elements: dst is
// the target, src the operand, of the same length. It returns EINVAL, and
// changes nothing, when op is not valid on dt for fi_atomic or the lengths
// are not the same whole number of elements.
func Apply(op provider.AtomicOp, dt provider.Datatype, dst, src []byte) error {
	return run(provider.AtomicBase, op, dt, dst, src, nil, nil)
}

// ApplyFetch performs the fetch atomic op: as Apply, and result (as long as
// dst) receives the target's initial values. For FI_ATOMIC_READ src is
// ignored and may be nil; otherwise it is as long as dst. result must not
// overlap dst or src.
func ApplyFetch(op provider.AtomicOp, dt provider.Datatype, dst, src, result []byte) error {
	return run(provider.AtomicFetch, op, dt, dst, src, nil, result)
}

// ApplyCompare performs the compare atomic op (FI_CSWAP..FI_MSWAP): dst,
// src, compare and result have the same length; result receives the
// target's initial values and must not overlap the other buffers. For the
// ordered compares the compare value is the left operand, as in
// fi_atomic(3): FI_CSWAP_LE swaps when compare <= *dst.
func ApplyCompare(op provider.AtomicOp, dt provider.Datatype, dst, src, compare, result []byte) error {
	return run(provider.AtomicCompare, op, dt, dst, src, compare, result)
}

func run(k provider.AtomicKind, op provider.AtomicOp, dt provider.Datatype, dst, src, cmp, res []byte) error {
	if !KindValid(k, op, dt) {
		return provider.EINVAL
	}
	sz := Size(dt)
	n := len(dst)
	if n%sz != 0 {
		return provider.EINVAL
	}
	if len(src) != n && !(op == provider.AtomicRead && len(src) == 0) {
		return provider.EINVAL
	}
	if k == provider.AtomicCompare && len(cmp) != n {
		return provider.EINVAL
	}
	if k != provider.AtomicBase && len(res) != n {
		return provider.EINVAL
	}
	for i := 0; i < n; i += sz {
		d := dst[i : i+sz]
		var s, c, r []byte
		if op != provider.AtomicRead {
			s = src[i : i+sz]
		}
		if cmp != nil {
			c = cmp[i : i+sz]
		}
		if res != nil {
			r = res[i : i+sz]
		}
		switch dt {
		case provider.DatatypeInt128, provider.DatatypeUint128:
			elem128(op, dt == provider.DatatypeInt128, d, s, c, r)
		case provider.DatatypeFloat:
			elemFloat32(op, d, s, c, r)
		case provider.DatatypeDouble:
			elemFloat64(op, d, s, c, r)
		case provider.DatatypeFloatComplex:
			elemComplex64(op, d, s, c, r)
		case provider.DatatypeDoubleComplex:
			elemComplex128(op, d, s, c, r)
		default:
			elemInt(op, dt, d, s, c, r)
		}
	}
	return nil
}

// loadInt reads an integer element of size len(b) as its bit pattern,
// sign-extended for signed types so that int64(v) is its value.
func loadInt(b []byte, signed bool) uint64 {
	switch len(b) {
	case 1:
		if signed {
			return uint64(int64(int8(b[0])))
		}
		return uint64(b[0])
	case 2:
		v := le.Uint16(b)
		if signed {
			return uint64(int64(int16(v)))
		}
		return uint64(v)
	case 4:
		v := le.Uint32(b)
		if signed {
			return uint64(int64(int32(v)))
		}
		return uint64(v)
	}
	return le.Uint64(b)
}

// storeInt writes the low len(b) bytes of v (wrapping modulo the size).
func storeInt(b []byte, v uint64) {
	switch len(b) {
	case 1:
		b[0] = byte(v)
	case 2:
		le.PutUint16(b, uint16(v))
	case 4:
		le.PutUint32(b, uint32(v))
	default:
		le.PutUint64(b, v)
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func signedType(dt provider.Datatype) bool {
	switch dt {
	case provider.DatatypeInt8, provider.DatatypeInt16, provider.DatatypeInt32, provider.DatatypeInt64, provider.DatatypeInt128:
		return true
	}
	return false
}

// cmpInt returns -1, 0 or 1 as x <, == or > y.
func cmpInt(x, y uint64, signed bool) int {
	if signed {
		a, b := int64(x), int64(y)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// swapIf reports whether a compare op swaps given c = cmp(compare, addr).
func swapIf(op provider.AtomicOp, c int) bool {
	switch op {
	case provider.AtomicCSwap:
		return c == 0
	case provider.AtomicCSwapNE:
		return c != 0
	case provider.AtomicCSwapLE:
		return c <= 0
	case provider.AtomicCSwapLT:
		return c < 0
	case provider.AtomicCSwapGE:
		return c >= 0
	case provider.AtomicCSwapGT:
		return c > 0
	}
	return false
}

func elemInt(op provider.AtomicOp, dt provider.Datatype, d, s, c, r []byte) {
	signed := signedType(dt)
	a := loadInt(d, signed)
	if r != nil {
		storeInt(r, a)
	}
	if op == provider.AtomicRead {
		return
	}
	b := loadInt(s, signed)
	v := a
	switch op {
	case provider.AtomicMin:
		if cmpInt(b, a, signed) < 0 {
			v = b
		}
	case provider.AtomicMax:
		if cmpInt(b, a, signed) > 0 {
			v = b
		}
	case provider.AtomicSum:
		v = a + b
	case provider.AtomicProd:
		v = a * b
	case provider.AtomicLOr:
		v = b2u(a != 0 || b != 0)
	case provider.AtomicLAnd:
		v = b2u(a != 0 && b != 0)
	case provider.AtomicBOr:
		v = a | b
	case provider.AtomicBAnd:
		v = a & b
	case provider.AtomicLXor:
		v = b2u((a != 0) != (b != 0))
	case provider.AtomicBXor:
		v = a ^ b
	case provider.AtomicWrite:
		v = b
	case provider.AtomicMSwap:
		m := loadInt(c, signed)
		v = b&m | a&^m
	default:
		if swapIf(op, cmpInt(loadInt(c, signed), a, signed)) {
			v = b
		}
	}
	storeInt(d, v)
}

// u128 is a 128-bit integer as two 64-bit halves.
type u128 struct{ lo, hi uint64 }

func load128(b []byte) u128 { return u128{le.Uint64(b), le.Uint64(b[8:])} }

func store128(b []byte, v u128) {
	le.PutUint64(b, v.lo)
	le.PutUint64(b[8:], v.hi)
}

func cmp128(x, y u128, signed bool) int {
	if x.hi != y.hi {
		return cmpInt(x.hi, y.hi, signed)
	}
	return cmpInt(x.lo, y.lo, false)
}

func elem128(op provider.AtomicOp, signed bool, d, s, c, r []byte) {
	a := load128(d)
	if r != nil {
		store128(r, a)
	}
	if op == provider.AtomicRead {
		return
	}
	b := load128(s)
	v := a
	nz := func(x u128) bool { return x.lo|x.hi != 0 }
	switch op {
	case provider.AtomicMin:
		if cmp128(b, a, signed) < 0 {
			v = b
		}
	case provider.AtomicMax:
		if cmp128(b, a, signed) > 0 {
			v = b
		}
	case provider.AtomicSum:
		lo, carry := bits.Add64(a.lo, b.lo, 0)
		hi, _ := bits.Add64(a.hi, b.hi, carry)
		v = u128{lo, hi}
	case provider.AtomicProd:
		hi, lo := bits.Mul64(a.lo, b.lo)
		v = u128{lo, hi + a.lo*b.hi + a.hi*b.lo}
	case provider.AtomicLOr:
		v = u128{b2u(nz(a) || nz(b)), 0}
	case provider.AtomicLAnd:
		v = u128{b2u(nz(a) && nz(b)), 0}
	case provider.AtomicBOr:
		v = u128{a.lo | b.lo, a.hi | b.hi}
	case provider.AtomicBAnd:
		v = u128{a.lo & b.lo, a.hi & b.hi}
	case provider.AtomicLXor:
		v = u128{b2u(nz(a) != nz(b)), 0}
	case provider.AtomicBXor:
		v = u128{a.lo ^ b.lo, a.hi ^ b.hi}
	case provider.AtomicWrite:
		v = b
	case provider.AtomicMSwap:
		m := load128(c)
		v = u128{b.lo&m.lo | a.lo&^m.lo, b.hi&m.hi | a.hi&^m.hi}
	default:
		if swapIf(op, cmp128(load128(c), a, signed)) {
			v = b
		}
	}
	store128(d, v)
}

// swapFloat reports whether a compare op swaps for compare value c and
// target value a, with C's IEEE semantics: a NaN makes ==, <, <=, >, >=
// false and != true.
func swapFloat(op provider.AtomicOp, c, a float64) bool {
	switch op {
	case provider.AtomicCSwap:
		return c == a
	case provider.AtomicCSwapNE:
		return c != a
	case provider.AtomicCSwapLE:
		return c <= a
	case provider.AtomicCSwapLT:
		return c < a
	case provider.AtomicCSwapGE:
		return c >= a
	case provider.AtomicCSwapGT:
		return c > a
	}
	return false
}

func elemFloat32(op provider.AtomicOp, d, s, c, r []byte) {
	if r != nil {
		copy(r, d)
	}
	if op == provider.AtomicRead {
		return
	}
	a := math.Float32frombits(le.Uint32(d))
	b := math.Float32frombits(le.Uint32(s))
	switch op {
	case provider.AtomicMin:
		if b < a {
			copy(d, s)
		}
	case provider.AtomicMax:
		if b > a {
			copy(d, s)
		}
	case provider.AtomicSum:
		le.PutUint32(d, math.Float32bits(a+b))
	case provider.AtomicProd:
		le.PutUint32(d, math.Float32bits(a*b))
	case provider.AtomicWrite:
		copy(d, s)
	default:
		// float32 to float64 is exact, so the comparison is float32's.
		if swapFloat(op, float64(math.Float32frombits(le.Uint32(c))), float64(a)) {
			copy(d, s)
		}
	}
}

func elemFloat64(op provider.AtomicOp, d, s, c, r []byte) {
	if r != nil {
		copy(r, d)
	}
	if op == provider.AtomicRead {
		return
	}
	a := math.Float64frombits(le.Uint64(d))
	b := math.Float64frombits(le.Uint64(s))
	switch op {
	case provider.AtomicMin:
		if b < a {
			copy(d, s)
		}
	case provider.AtomicMax:
		if b > a {
			copy(d, s)
		}
	case provider.AtomicSum:
		le.PutUint64(d, math.Float64bits(a+b))
	case provider.AtomicProd:
		le.PutUint64(d, math.Float64bits(a*b))
	case provider.AtomicWrite:
		copy(d, s)
	default:
		if swapFloat(op, math.Float64frombits(le.Uint64(c)), a) {
			copy(d, s)
		}
	}
}

func loadC64(b []byte) complex64 {
	return complex(math.Float32frombits(le.Uint32(b)), math.Float32frombits(le.Uint32(b[4:])))
}

func storeC64(b []byte, v complex64) {
	le.PutUint32(b, math.Float32bits(real(v)))
	le.PutUint32(b[4:], math.Float32bits(imag(v)))
}

func elemComplex64(op provider.AtomicOp, d, s, c, r []byte) {
	if r != nil {
		copy(r, d)
	}
	if op == provider.AtomicRead {
		return
	}
	a, b := loadC64(d), loadC64(s)
	switch op {
	case provider.AtomicSum:
		storeC64(d, a+b)
	case provider.AtomicProd:
		storeC64(d, a*b)
	case provider.AtomicWrite:
		copy(d, s)
	case provider.AtomicCSwap:
		if loadC64(c) == a {
			copy(d, s)
		}
	case provider.AtomicCSwapNE:
		if loadC64(c) != a {
			copy(d, s)
		}
	}
}

func loadC128(b []byte) complex128 {
	return complex(math.Float64frombits(le.Uint64(b)), math.Float64frombits(le.Uint64(b[8:])))
}

func storeC128(b []byte, v complex128) {
	le.PutUint64(b, math.Float64bits(real(v)))
	le.PutUint64(b[8:], math.Float64bits(imag(v)))
}

func elemComplex128(op provider.AtomicOp, d, s, c, r []byte) {
	if r != nil {
		copy(r, d)
	}
	if op == provider.AtomicRead {
		return
	}
	a, b := loadC128(d), loadC128(s)
	switch op {
	case provider.AtomicSum:
		storeC128(d, a+b)
	case provider.AtomicProd:
		storeC128(d, a*b)
	case provider.AtomicWrite:
		copy(d, s)
	case provider.AtomicCSwap:
		if loadC128(c) == a {
			copy(d, s)
		}
	case provider.AtomicCSwapNE:
		if loadC128(c) != a {
			copy(d, s)
		}
	}
}
