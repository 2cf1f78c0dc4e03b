package atomics

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// The reference below decodes elements with encoding/binary's reflection
// path into typed Go values, computes with Go's typed operators (or
// math/big for 128-bit integers), and encodes back the same way: a code
// path independent of the package's.

func dec[T any](b []byte) T {
	var v T
	if b != nil {
		if err := binary.Read(bytes.NewReader(b), binary.LittleEndian, &v); err != nil {
			panic(err)
		}
	}
	return v
}

func enc[T any](v T) []byte {
	var w bytes.Buffer
	if err := binary.Write(&w, binary.LittleEndian, v); err != nil {
		panic(err)
	}
	return w.Bytes()
}

type integer interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

func refInt[T integer](op provider.AtomicOp, a, b, c T) T {
	t := func(x bool) T {
		if x {
			return 1
		}
		return 0
	}
	switch op {
	case provider.AtomicMin:
		if b < a {
			return b
		}
		return a
	case provider.AtomicMax:
		if b > a {
			return b
		}
		return a
	case provider.AtomicSum:
		return a + b
	case provider.AtomicProd:
		return a * b
	case provider.AtomicLOr:
		return t(a != 0 || b != 0)
	case provider.AtomicLAnd:
		return t(a != 0 && b != 0)
	case provider.AtomicBOr:
		return a | b
	case provider.AtomicBAnd:
		return a & b
	case provider.AtomicLXor:
		return t((a != 0 && b == 0) || (a == 0 && b != 0))
	case provider.AtomicBXor:
		return a ^ b
	case provider.AtomicRead:
		return a
	case provider.AtomicWrite:
		return b
	case provider.AtomicMSwap:
		return (b & c) | (a & ^c)
	}
	return refSwap(op, a, b, c)
}

type ordered interface {
	integer | ~float32 | ~float64
}

func refSwap[T ordered](op provider.AtomicOp, a, b, c T) T {
	var sw bool
	switch op {
	case provider.AtomicCSwap:
		sw = c == a
	case provider.AtomicCSwapNE:
		sw = c != a
	case provider.AtomicCSwapLE:
		sw = c <= a
	case provider.AtomicCSwapLT:
		sw = c < a
	case provider.AtomicCSwapGE:
		sw = c >= a
	case provider.AtomicCSwapGT:
		sw = c > a
	default:
		panic("refSwap: " + op.String())
	}
	if sw {
		return b
	}
	return a
}

func refFloat[T ~float32 | ~float64](op provider.AtomicOp, a, b, c T) T {
	switch op {
	case provider.AtomicMin:
		if b < a {
			return b
		}
		return a
	case provider.AtomicMax:
		if b > a {
			return b
		}
		return a
	case provider.AtomicSum:
		return a + b
	case provider.AtomicProd:
		return a * b
	case provider.AtomicRead:
		return a
	case provider.AtomicWrite:
		return b
	}
	return refSwap(op, a, b, c)
}

func refComplex[T ~complex64 | ~complex128](op provider.AtomicOp, a, b, c T) T {
	switch op {
	case provider.AtomicSum:
		return a + b
	case provider.AtomicProd:
		return a * b
	case provider.AtomicRead:
		return a
	case provider.AtomicWrite:
		return b
	case provider.AtomicCSwap:
		if c == a {
			return b
		}
		return a
	case provider.AtomicCSwapNE:
		if c != a {
			return b
		}
		return a
	}
	panic("refComplex: " + op.String())
}

// w128 is a 128-bit integer as binary.Read lays it out (low half first).
type w128 struct{ Lo, Hi uint64 }

var two128 = new(big.Int).Lsh(big.NewInt(1), 128)

func toBig(x w128, signed bool) *big.Int {
	v := new(big.Int).SetUint64(x.Hi)
	v.Lsh(v, 64)
	v.Or(v, new(big.Int).SetUint64(x.Lo))
	if signed && x.Hi>>63 == 1 {
		v.Sub(v, two128)
	}
	return v
}

func fromBig(v *big.Int) w128 {
	m := new(big.Int).Mod(v, two128) // Euclidean: in [0, 2^128)
	lo := new(big.Int).And(m, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(m, 64).Uint64()
	return w128{lo, hi}
}

func ref128(op provider.AtomicOp, signed bool, a, b, c w128) w128 {
	x, y, z := toBig(a, signed), toBig(b, signed), toBig(c, signed)
	one, zero := big.NewInt(1), big.NewInt(0)
	t := func(v bool) *big.Int {
		if v {
			return one
		}
		return zero
	}
	nz := func(v *big.Int) bool { return v.Sign() != 0 }
	var r *big.Int
	switch op {
	case provider.AtomicMin:
		r = x
		if y.Cmp(x) < 0 {
			r = y
		}
	case provider.AtomicMax:
		r = x
		if y.Cmp(x) > 0 {
			r = y
		}
	case provider.AtomicSum:
		r = new(big.Int).Add(x, y)
	case provider.AtomicProd:
		r = new(big.Int).Mul(x, y)
	case provider.AtomicLOr:
		r = t(nz(x) || nz(y))
	case provider.AtomicLAnd:
		r = t(nz(x) && nz(y))
	case provider.AtomicLXor:
		r = t(nz(x) != nz(y))
	case provider.AtomicBOr, provider.AtomicBAnd, provider.AtomicBXor, provider.AtomicMSwap:
		// Bitwise on the two's complement patterns.
		xu, yu, zu := toBig(a, false), toBig(b, false), toBig(c, false)
		switch op {
		case provider.AtomicBOr:
			r = new(big.Int).Or(xu, yu)
		case provider.AtomicBAnd:
			r = new(big.Int).And(xu, yu)
		case provider.AtomicBXor:
			r = new(big.Int).Xor(xu, yu)
		default:
			notz := new(big.Int).Xor(zu, new(big.Int).Sub(two128, one))
			r = new(big.Int).Or(new(big.Int).And(yu, zu), new(big.Int).And(xu, notz))
		}
	case provider.AtomicRead:
		r = x
	case provider.AtomicWrite:
		r = y
	default:
		k := z.Cmp(x)
		var sw bool
		switch op {
		case provider.AtomicCSwap:
			sw = k == 0
		case provider.AtomicCSwapNE:
			sw = k != 0
		case provider.AtomicCSwapLE:
			sw = k <= 0
		case provider.AtomicCSwapLT:
			sw = k < 0
		case provider.AtomicCSwapGE:
			sw = k >= 0
		case provider.AtomicCSwapGT:
			sw = k > 0
		}
		r = x
		if sw {
			r = y
		}
	}
	return fromBig(r)
}

func refI[T integer](op provider.AtomicOp, a, b, c []byte) []byte {
	return enc(refInt(op, dec[T](a), dec[T](b), dec[T](c)))
}

func refF[T ~float32 | ~float64](op provider.AtomicOp, a, b, c []byte) []byte {
	return enc(refFloat(op, dec[T](a), dec[T](b), dec[T](c)))
}

func refC[T ~complex64 | ~complex128](op provider.AtomicOp, a, b, c []byte) []byte {
	return enc(refComplex(op, dec[T](a), dec[T](b), dec[T](c)))
}

// refElem returns the new target element for op on dt, target a, operand
// b and compare c (b and c may be nil when unused).
func refElem(op provider.AtomicOp, dt provider.Datatype, a, b, c []byte) []byte {
	switch dt {
	case provider.DatatypeInt8:
		return refI[int8](op, a, b, c)
	case provider.DatatypeUint8:
		return refI[uint8](op, a, b, c)
	case provider.DatatypeInt16:
		return refI[int16](op, a, b, c)
	case provider.DatatypeUint16:
		return refI[uint16](op, a, b, c)
	case provider.DatatypeInt32:
		return refI[int32](op, a, b, c)
	case provider.DatatypeUint32:
		return refI[uint32](op, a, b, c)
	case provider.DatatypeInt64:
		return refI[int64](op, a, b, c)
	case provider.DatatypeUint64:
		return refI[uint64](op, a, b, c)
	case provider.DatatypeInt128, provider.DatatypeUint128:
		return enc(ref128(op, dt == provider.DatatypeInt128, dec[w128](a), dec[w128](b), dec[w128](c)))
	case provider.DatatypeFloat:
		return refF[float32](op, a, b, c)
	case provider.DatatypeDouble:
		return refF[float64](op, a, b, c)
	case provider.DatatypeFloatComplex:
		return refC[complex64](op, a, b, c)
	case provider.DatatypeDoubleComplex:
		return refC[complex128](op, a, b, c)
	}
	panic("refElem: " + dt.String())
}

// The validity table, written out from fi_atomic(3): the families each
// operation belongs to, and the datatype classes it applies to
// (I integers, F float/double, C float/double complex).
var validTable = []struct {
	op                    provider.AtomicOp
	base, fetch, compare  bool
	ints, floats, complex bool
}{
	{provider.AtomicMin, true, true, false, true, true, false},
	{provider.AtomicMax, true, true, false, true, true, false},
	{provider.AtomicSum, true, true, false, true, true, true},
	{provider.AtomicProd, true, true, false, true, true, true},
	{provider.AtomicLOr, true, true, false, true, false, false},
	{provider.AtomicLAnd, true, true, false, true, false, false},
	{provider.AtomicBOr, true, true, false, true, false, false},
	{provider.AtomicBAnd, true, true, false, true, false, false},
	{provider.AtomicLXor, true, true, false, true, false, false},
	{provider.AtomicBXor, true, true, false, true, false, false},
	{provider.AtomicRead, false, true, false, true, true, true},
	{provider.AtomicWrite, true, true, false, true, true, true},
	{provider.AtomicCSwap, false, false, true, true, true, true},
	{provider.AtomicCSwapNE, false, false, true, true, true, true},
	{provider.AtomicCSwapLE, false, false, true, true, true, false},
	{provider.AtomicCSwapLT, false, false, true, true, true, false},
	{provider.AtomicCSwapGE, false, false, true, true, true, false},
	{provider.AtomicCSwapGT, false, false, true, true, true, false},
	{provider.AtomicMSwap, false, false, true, true, false, false},
}

var allTypes = []provider.Datatype{
	provider.DatatypeInt8, provider.DatatypeUint8, provider.DatatypeInt16, provider.DatatypeUint16,
	provider.DatatypeInt32, provider.DatatypeUint32, provider.DatatypeInt64, provider.DatatypeUint64,
	provider.DatatypeFloat, provider.DatatypeDouble, provider.DatatypeFloatComplex, provider.DatatypeDoubleComplex,
	provider.DatatypeLongDouble, provider.DatatypeLongDoubleComplex, provider.DatatypeInt128, provider.DatatypeUint128,
}

var wantSize = map[provider.Datatype]int{
	provider.DatatypeInt8: 1, provider.DatatypeUint8: 1, provider.DatatypeInt16: 2, provider.DatatypeUint16: 2,
	provider.DatatypeInt32: 4, provider.DatatypeUint32: 4, provider.DatatypeInt64: 8, provider.DatatypeUint64: 8,
	provider.DatatypeFloat: 4, provider.DatatypeDouble: 8, provider.DatatypeFloatComplex: 8, provider.DatatypeDoubleComplex: 16,
	provider.DatatypeLongDouble: 0, provider.DatatypeLongDoubleComplex: 0, provider.DatatypeInt128: 16, provider.DatatypeUint128: 16,
}

func typeClass(dt provider.Datatype) string {
	switch dt {
	case provider.DatatypeFloat, provider.DatatypeDouble:
		return "F"
	case provider.DatatypeFloatComplex, provider.DatatypeDoubleComplex:
		return "C"
	case provider.DatatypeLongDouble, provider.DatatypeLongDoubleComplex:
		return "-"
	}
	if !dt.Valid() {
		return "-"
	}
	return "I"
}

// sameElem compares two encoded elements of dt bit for bit, except that
// any two NaNs match: C leaves a NaN result's sign and payload to the
// hardware and the compiler.
func sameElem(dt provider.Datatype, x, y []byte) bool {
	if bytes.Equal(x, y) {
		return true
	}
	if len(x) != len(y) || typeClass(dt) != "F" && typeClass(dt) != "C" {
		return false
	}
	part := 8
	if dt == provider.DatatypeFloat || dt == provider.DatatypeFloatComplex {
		part = 4
	}
	for i := 0; i < len(x); i += part {
		var fx, fy float64
		if part == 4 {
			fx, fy = float64(dec[float32](x[i:i+4])), float64(dec[float32](y[i:i+4]))
		} else {
			fx, fy = dec[float64](x[i:i+8]), dec[float64](y[i:i+8])
		}
		if !(math.IsNaN(fx) && math.IsNaN(fy)) && !bytes.Equal(x[i:i+part], y[i:i+part]) {
			return false
		}
	}
	return true
}

// want reports the table's answer for family k.
func want(k provider.AtomicKind, op provider.AtomicOp, dt provider.Datatype) bool {
	for _, e := range validTable {
		if e.op != op {
			continue
		}
		fam := map[provider.AtomicKind]bool{provider.AtomicBase: e.base, provider.AtomicFetch: e.fetch, provider.AtomicCompare: e.compare}[k]
		switch typeClass(dt) {
		case "I":
			return fam && e.ints
		case "F":
			return fam && e.floats
		case "C":
			return fam && e.complex
		}
		return false
	}
	return false
}

var kinds = []provider.AtomicKind{provider.AtomicBase, provider.AtomicFetch, provider.AtomicCompare}

func query(k provider.AtomicKind, op provider.AtomicOp, dt provider.Datatype) bool {
	switch k {
	case provider.AtomicBase:
		return Valid(op, dt)
	case provider.AtomicFetch:
		return FetchValid(op, dt)
	}
	return CompareValid(op, dt)
}

func TestValid(t *testing.T) {
	if len(validTable) != provider.AtomicOpLast {
		t.Fatalf("table has %d ops, want %d", len(validTable), provider.AtomicOpLast)
	}
	n := 0
	for _, k := range kinds {
		for op := provider.AtomicOp(-2); int(op) < provider.AtomicOpLast+2; op++ {
			for dt := provider.Datatype(-2); dt <= provider.DatatypeUint128+2; dt++ {
				w := want(k, op, dt)
				if got := query(k, op, dt); got != w {
					t.Errorf("%v %v %v: valid %v, want %v", k, op, dt, got, w)
				}
				if w {
					n++
				}
			}
		}
	}
	// 10 integer types: 11+12+7; 2 float: 5+6+6; 2 complex: 3+4+2.
	if want := 10*30 + 2*17 + 2*9; n != want {
		t.Errorf("%d valid combinations, want %d", n, want)
	}
}

func TestSize(t *testing.T) {
	for dt := provider.Datatype(-3); dt <= provider.DatatypeUint128+3; dt++ {
		if got := Size(dt); got != wantSize[dt] {
			t.Errorf("Size(%v) = %d, want %d", dt, got, wantSize[dt])
		}
	}
}

// intPatterns are edge bit patterns; an element of size n takes the low n
// bytes (so each width sees 0, 1, -1, its min and max, and wrapping pairs).
var intPatterns = []uint64{
	0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
	1<<63 - 1, 1 << 63, math.MaxUint64, 0x0123456789abcdef, 0xfedcba9876543210,
}

var f32s = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1.5, -2.25, 3, float32(math.NaN()),
	float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, math.SmallestNonzeroFloat32, 16777216}

var f64s = []float64{0, math.Copysign(0, -1), 1, -1, 1.5, -2.25, 3, math.NaN(), math.Inf(1), math.Inf(-1),
	math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 0.1}

// edges returns the edge values of dt, each encoded as one element.
func edges(dt provider.Datatype) [][]byte {
	var out [][]byte
	sz := wantSize[dt]
	switch typeClass(dt) {
	case "I":
		for _, p := range intPatterns {
			if sz == 16 {
				for _, q := range []uint64{0, 1, 1 << 63, math.MaxUint64, 0x0123456789abcdef} {
					out = append(out, enc(w128{p, q}))
				}
				continue
			}
			out = append(out, enc(p)[:sz])
		}
	case "F":
		if sz == 4 {
			for _, f := range f32s {
				out = append(out, enc(f))
			}
		} else {
			for _, f := range f64s {
				out = append(out, enc(f))
			}
		}
	case "C":
		if sz == 8 {
			for i, f := range f32s {
				out = append(out, enc(complex(f, f32s[(i*5+3)%len(f32s)])), enc(complex(f, 0)))
			}
		} else {
			for i, f := range f64s {
				out = append(out, enc(complex(f, f64s[(i*5+3)%len(f64s)])), enc(complex(f, 0)))
			}
		}
	}
	return out
}

// triples builds target, operand and compare buffers from every pair of
// edge values, with compare both another edge value and the target itself.
func triples(e [][]byte) (dst, src, cmp []byte) {
	n := len(e)
	for i := range e {
		for j := range e {
			dst = append(dst, e[i]...)
			src = append(src, e[j]...)
			cmp = append(cmp, e[(i*3+j)%n]...)
			dst = append(dst, e[i]...)
			src = append(src, e[j]...)
			cmp = append(cmp, e[i]...)
		}
	}
	return dst, src, cmp
}

func call(k provider.AtomicKind, op provider.AtomicOp, dt provider.Datatype, dst, src, cmp, res []byte) error {
	switch k {
	case provider.AtomicBase:
		return Apply(op, dt, dst, src)
	case provider.AtomicFetch:
		return ApplyFetch(op, dt, dst, src, res)
	}
	return ApplyCompare(op, dt, dst, src, cmp, res)
}

// checkAgainstRef runs op and checks dst and res against the reference.
func checkAgainstRef(t *testing.T, k provider.AtomicKind, op provider.AtomicOp, dt provider.Datatype, dst0, src, cmp []byte) {
	t.Helper()
	sz := Size(dt)
	dst := bytes.Clone(dst0)
	res := make([]byte, len(dst))
	if err := call(k, op, dt, dst, src, cmp, res); err != nil {
		t.Fatalf("%v %v %v: %v", k, op, dt, err)
	}
	for i := 0; i < len(dst); i += sz {
		a := dst0[i : i+sz]
		var b, c []byte
		if op != provider.AtomicRead {
			b = src[i : i+sz]
		}
		if k == provider.AtomicCompare {
			c = cmp[i : i+sz]
		}
		if w := refElem(op, dt, a, b, c); !sameElem(dt, dst[i:i+sz], w) {
			t.Fatalf("%v %v %v element %d: addr %x buf %x compare %x: got %x, want %x", k, op, dt, i/sz, a, b, c, dst[i:i+sz], w)
		}
		if k != provider.AtomicBase && !bytes.Equal(res[i:i+sz], a) {
			t.Fatalf("%v %v %v element %d: result %x, want the initial %x", k, op, dt, i/sz, res[i:i+sz], a)
		}
	}
}

func TestApplyAll(t *testing.T) {
	checked := 0
	for _, dt := range allTypes {
		e := edges(dt)
		for _, k := range kinds {
			for op := provider.AtomicOp(0); int(op) < provider.AtomicOpLast; op++ {
				if !want(k, op, dt) {
					// Invalid: EINVAL and nothing touched.
					dst := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
					src := bytes.Clone(dst)
					if err := call(k, op, dt, dst, src, bytes.Clone(dst), make([]byte, 16)); !errors.Is(err, provider.EINVAL) {
						t.Errorf("%v %v %v: %v, want EINVAL", k, op, dt, err)
					}
					if !bytes.Equal(dst, src) {
						t.Errorf("%v %v %v: target changed on error", k, op, dt)
					}
					continue
				}
				dst, src, cmp := triples(e)
				var read []byte
				if op == provider.AtomicRead {
					read = nil // src ignored
				} else {
					read = src
				}
				checkAgainstRef(t, k, op, dt, dst, read, cmp)
				checked++
			}
		}
	}
	if checked != 10*30+2*17+2*9 {
		t.Errorf("checked %d combinations", checked)
	}
}

// Spot checks with hand-computed values, independent of the reference.
func TestApplyExamples(t *testing.T) {
	b := []byte{0x7f}
	if err := Apply(provider.AtomicSum, provider.DatatypeInt8, b, []byte{1}); err != nil || b[0] != 0x80 {
		t.Errorf("int8 127+1 = %x (%v), want 0x80", b, err)
	}
	// int8 MIN: -128 (0x80) < 1, unsigned 0x80 > 1.
	b = []byte{1}
	_ = Apply(provider.AtomicMin, provider.DatatypeInt8, b, []byte{0x80})
	if b[0] != 0x80 {
		t.Errorf("int8 min(1,-128) = %x", b)
	}
	b = []byte{1}
	_ = Apply(provider.AtomicMin, provider.DatatypeUint8, b, []byte{0x80})
	if b[0] != 1 {
		t.Errorf("uint8 min(1,128) = %x", b)
	}
	// CSWAP_LE: compare <= addr swaps. addr 5, compare 3 -> swap to 9.
	d, r := []byte{5, 0, 0, 0}, make([]byte, 4)
	_ = ApplyCompare(provider.AtomicCSwapLE, provider.DatatypeUint32, d, []byte{9, 0, 0, 0}, []byte{3, 0, 0, 0}, r)
	if d[0] != 9 || r[0] != 5 {
		t.Errorf("cswap_le(compare 3, addr 5, buf 9): addr %v result %v", d, r)
	}
	d = []byte{5, 0, 0, 0}
	_ = ApplyCompare(provider.AtomicCSwapLE, provider.DatatypeUint32, d, []byte{9, 0, 0, 0}, []byte{7, 0, 0, 0}, r)
	if d[0] != 5 {
		t.Errorf("cswap_le(compare 7, addr 5): addr %v, want unchanged", d)
	}
	// uint128 1<<64 - 1 plus 1 carries into the high half.
	d = append(bytes.Repeat([]byte{0xff}, 8), make([]byte, 8)...)
	s := make([]byte, 16)
	s[0] = 1
	_ = Apply(provider.AtomicSum, provider.DatatypeUint128, d, s)
	if want := append(make([]byte, 8), 1, 0, 0, 0, 0, 0, 0, 0); !bytes.Equal(d, want) {
		t.Errorf("uint128 carry: %x", d)
	}
	// float MIN keeps a NaN target (buf < NaN is false), and -0 < +0 is false.
	f := enc(math.NaN())
	_ = Apply(provider.AtomicMin, provider.DatatypeDouble, f, enc(1.0))
	if !math.IsNaN(dec[float64](f)) {
		t.Errorf("min(NaN, 1) = %v, want NaN kept", dec[float64](f))
	}
	f = enc(0.0)
	_ = Apply(provider.AtomicMin, provider.DatatypeDouble, f, enc(math.Copysign(0, -1)))
	if math.Signbit(dec[float64](f)) {
		t.Error("min(+0, -0) replaced +0")
	}
	// complex product (1+2i)(3+4i) = -5+10i.
	c := enc(complex64(1 + 2i))
	_ = Apply(provider.AtomicProd, provider.DatatypeFloatComplex, c, enc(complex64(3+4i)))
	if got := dec[complex64](c); got != -5+10i {
		t.Errorf("(1+2i)(3+4i) = %v", got)
	}
}

func TestBadLengths(t *testing.T) {
	eight, seven, four := make([]byte, 8), make([]byte, 7), make([]byte, 4)
	cases := []struct {
		name string
		err  error
	}{
		{"dst not whole elements", Apply(provider.AtomicSum, provider.DatatypeInt32, seven, seven)},
		{"src shorter", Apply(provider.AtomicSum, provider.DatatypeInt32, eight, four)},
		{"src nil", Apply(provider.AtomicSum, provider.DatatypeInt32, eight, nil)},
		{"fetch result shorter", ApplyFetch(provider.AtomicSum, provider.DatatypeInt32, eight, eight, four)},
		{"fetch result nil", ApplyFetch(provider.AtomicSum, provider.DatatypeInt32, eight, eight, nil)},
		{"read result shorter", ApplyFetch(provider.AtomicRead, provider.DatatypeInt64, eight, nil, four)},
		{"read src of wrong length", ApplyFetch(provider.AtomicRead, provider.DatatypeInt64, eight, four, eight)},
		{"compare shorter", ApplyCompare(provider.AtomicCSwap, provider.DatatypeInt32, eight, eight, four, eight)},
		{"compare result nil", ApplyCompare(provider.AtomicCSwap, provider.DatatypeInt32, eight, eight, eight, nil)},
		{"double complex half element", Apply(provider.AtomicSum, provider.DatatypeDoubleComplex, eight, eight)},
		{"long double", Apply(provider.AtomicSum, provider.DatatypeLongDouble, make([]byte, 16), make([]byte, 16))},
		{"bad op", Apply(provider.AtomicOp(99), provider.DatatypeInt8, eight, eight)},
		{"negative op", Apply(provider.AtomicOp(-1), provider.DatatypeInt8, eight, eight)},
		{"bad datatype", Apply(provider.AtomicSum, provider.Datatype(99), eight, eight)},
		{"negative datatype", Apply(provider.AtomicSum, provider.Datatype(-1), eight, eight)},
	}
	for _, c := range cases {
		if !errors.Is(c.err, provider.EINVAL) {
			t.Errorf("%s: %v, want EINVAL", c.name, c.err)
		}
	}
	for _, b := range [][]byte{eight, seven, four} {
		if !bytes.Equal(b, make([]byte, len(b))) {
			t.Errorf("a buffer changed on error: %x", b)
		}
	}
	// Zero elements is no work, not an error.
	if err := Apply(provider.AtomicSum, provider.DatatypeInt32, nil, nil); err != nil {
		t.Errorf("zero elements: %v", err)
	}
}

func TestZeroAllocs(t *testing.T) {
	dst, src, cmp, res := make([]byte, 64), make([]byte, 64), make([]byte, 64), make([]byte, 64)
	for _, dt := range []provider.Datatype{provider.DatatypeInt8, provider.DatatypeUint64, provider.DatatypeInt128,
		provider.DatatypeFloat, provider.DatatypeDouble, provider.DatatypeFloatComplex, provider.DatatypeDoubleComplex} {
		n := testing.AllocsPerRun(50, func() {
			_ = Apply(provider.AtomicSum, dt, dst, src)
			_ = ApplyFetch(provider.AtomicProd, dt, dst, src, res)
			_ = ApplyFetch(provider.AtomicRead, dt, dst, nil, res)
			_ = ApplyCompare(provider.AtomicCSwap, dt, dst, src, cmp, res)
			_ = Apply(provider.AtomicLOr, dt, dst, src)
			_ = Apply(provider.AtomicSum, dt, dst[:3], src)
		})
		if n != 0 {
			t.Errorf("%v: %v allocs per run", dt, n)
		}
	}
}

func FuzzApply(f *testing.F) {
	f.Add(uint8(2), uint8(4), uint8(0), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add(uint8(14), uint8(9), uint8(2), bytes.Repeat([]byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, 6))
	f.Add(uint8(1), uint8(14), uint8(1), bytes.Repeat([]byte{0x80}, 48))
	f.Add(uint8(3), uint8(11), uint8(0), bytes.Repeat([]byte{0x7f}, 33))
	f.Fuzz(func(t *testing.T, op, dt, kind uint8, data []byte) {
		k := kinds[int(kind)%3]
		o, d := provider.AtomicOp(int(op)%24-2), provider.Datatype(int(dt)%20-2)
		third := len(data) / 3
		dst0, src, cmp := data[:third], data[third:2*third], data[2*third:3*third]
		if kind&4 != 0 && len(data) > 3*third {
			src = data[third : 2*third+1] // mismatched length
		}
		dst := bytes.Clone(dst0)
		res := make([]byte, len(dst))
		err := call(k, o, d, dst, src, cmp, res)
		sz := wantSize[d]
		ok := want(k, o, d) && sz > 0 && len(dst)%sz == 0 && len(src) == len(dst)
		if ok != (err == nil) {
			t.Fatalf("%v %v %v len %d/%d: err %v, want ok %v", k, o, d, len(dst), len(src), err, ok)
		}
		if !ok {
			if !bytes.Equal(dst, dst0) {
				t.Fatal("target changed on error")
			}
			return
		}
		checkAgainstRef(t, k, o, d, dst0, src, cmp)
	})
}
