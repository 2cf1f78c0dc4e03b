package fabric

import (
	"errors"
	"testing"

	"github.com/gofabric/fabric/provider"
)

func TestAtomicEnums(t *testing.T) {
	// Values and names are libfabric 1.17's (rdma/fi_domain.h).
	ops := []struct {
		op   AtomicOp
		v    int
		name string
	}{
		{AtomicMin, 0, "FI_MIN"}, {AtomicBXor, 9, "FI_BXOR"}, {AtomicRead, 10, "FI_ATOMIC_READ"},
		{AtomicWrite, 11, "FI_ATOMIC_WRITE"}, {AtomicCSwap, 12, "FI_CSWAP"}, {AtomicMSwap, 18, "FI_MSWAP"},
	}
	for _, c := range ops {
		if int(c.op) != c.v || c.op.String() != c.name {
			t.Errorf("op %d %q, want %d %q", int(c.op), c.op, c.v, c.name)
		}
	}
	dts := []struct {
		dt   Datatype
		v    int
		size int
		name string
	}{
		{DatatypeInt8, 0, 1, "FI_INT8"}, {DatatypeUint64, 7, 8, "FI_UINT64"}, {DatatypeFloat, 8, 4, "FI_FLOAT"},
		{DatatypeDoubleComplex, 11, 16, "FI_DOUBLE_COMPLEX"}, {DatatypeLongDouble, 12, 16, "FI_LONG_DOUBLE"},
		{DatatypeLongDoubleComplex, 13, 32, "FI_LONG_DOUBLE_COMPLEX"}, {DatatypeInt128, 14, 16, "FI_INT128"},
		{DatatypeUint128, 15, 16, "FI_UINT128"},
	}
	for _, c := range dts {
		if int(c.dt) != c.v || c.dt.Size() != c.size || c.dt.String() != c.name {
			t.Errorf("datatype %d %q size %d, want %d %q %d", int(c.dt), c.dt, c.dt.Size(), c.v, c.name, c.size)
		}
	}
	if Datatype(16).Valid() || Datatype(-1).Size() != 0 || AtomicOp(19).Valid() || AtomicOp(19).String() != "AtomicOp(19)" {
		t.Error("values past the enums must be invalid")
	}
}

// The root validates atomic calls once, for every provider.
func TestAtomicValidation(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, 0)
	ep := v.ep
	u64 := func(n int) []byte { return make([]byte, 8*n) }
	rma := func(counts ...uint64) []RMAIOC {
		out := make([]RMAIOC, len(counts))
		for i, c := range counts {
			out[i] = RMAIOC{Addr: uint64(i) * 64, Count: c, Key: 1}
		}
		return out
	}
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"sum", func() error { return ep.Atomic(u64(2), nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil) }, nil},
		{"write", func() error { return ep.Atomic(u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicWrite, nil) }, nil},
		{"op_out_of_range", func() error { return ep.Atomic(u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicOp(19), nil) }, ErrOpNotSupp},
		{"negative_op", func() error { return ep.Atomic(u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicOp(-1), nil) }, ErrOpNotSupp},
		{"datatype_out_of_range", func() error { return ep.Atomic(u64(1), nil, 0, 0, 1, Datatype(16), AtomicSum, nil) }, ErrOpNotSupp},
		{"cswap_in_base_call", func() error { return ep.Atomic(u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicCSwap, nil) }, ErrOpNotSupp},
		{"read_in_base_call", func() error { return ep.Atomic(u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicRead, nil) }, ErrOpNotSupp},
		{"provider_refuses", func() error { return ep.Atomic(u64(1), nil, 0, 0, 1, DatatypeDouble, AtomicBOr, nil) }, ErrOpNotSupp},
		{"partial_element", func() error { return ep.Atomic(make([]byte, 7), nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil) }, ErrInval},
		{"no_element", func() error { return ep.Atomic(nil, nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil) }, ErrInval},
		{"over_valid_count", func() error { return ep.Atomic(u64(5), nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil) }, ErrMsgSize},
		{"atomicv_partial_element", func() error {
			return ep.AtomicV([][]byte{u64(1), make([]byte, 4)}, nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil)
		}, ErrInval},
		{"atomicv_over_iov_limit", func() error {
			return ep.AtomicV(make([][]byte, 5), nil, 0, 0, 1, DatatypeUint8, AtomicSum, nil)
		}, ErrInval},
		{"fetch_read_without_operand", func() error {
			return ep.FetchAtomic(nil, nil, u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicRead, nil)
		}, nil},
		{"fetch_result_too_short", func() error {
			return ep.FetchAtomic(u64(2), nil, u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil)
		}, ErrInval},
		{"fetch_cswap", func() error {
			return ep.FetchAtomic(u64(1), nil, u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicCSwap, nil)
		}, ErrOpNotSupp},
		{"compare", func() error {
			return ep.CompareAtomic(u64(1), nil, u64(1), nil, u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicCSwap, nil)
		}, nil},
		{"compare_sum", func() error {
			return ep.CompareAtomic(u64(1), nil, u64(1), nil, u64(1), nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil)
		}, ErrOpNotSupp},
		{"compare_operand_too_short", func() error {
			return ep.CompareAtomic(u64(2), nil, u64(1), nil, u64(2), nil, 0, 0, 1, DatatypeUint64, AtomicMSwap, nil)
		}, ErrInval},
		{"msg", func() error {
			return ep.AtomicMsg(&MsgAtomic{IOV: [][]byte{u64(3)}, RMA: rma(1, 2), Datatype: DatatypeUint64, Op: AtomicMax}, FlagFence)
		}, nil},
		{"msg_rma_count_mismatch", func() error {
			return ep.AtomicMsg(&MsgAtomic{IOV: [][]byte{u64(3)}, RMA: rma(1, 1), Datatype: DatatypeUint64, Op: AtomicMax}, 0)
		}, ErrInval},
		{"msg_no_rma", func() error {
			return ep.AtomicMsg(&MsgAtomic{IOV: [][]byte{u64(1)}, Datatype: DatatypeUint64, Op: AtomicMax}, 0)
		}, ErrInval},
		{"msg_bad_flags", func() error {
			return ep.AtomicMsg(&MsgAtomic{IOV: [][]byte{u64(1)}, RMA: rma(1), Datatype: DatatypeUint64, Op: AtomicMax}, FlagMultiRecv)
		}, ErrBadFlags},
		{"msg_inject_too_big", func() error {
			return ep.AtomicMsg(&MsgAtomic{IOV: [][]byte{u64(3)}, RMA: rma(3), Datatype: DatatypeUint64, Op: AtomicMax}, FlagInject)
		}, ErrInval},
		{"fetch_msg", func() error {
			return ep.FetchAtomicMsg(&MsgAtomic{IOV: [][]byte{u64(2)}, RMA: rma(2), Datatype: DatatypeInt64, Op: AtomicSum},
				[][]byte{u64(1), u64(1)}, nil, 0)
		}, nil},
		{"compare_msg_result_mismatch", func() error {
			return ep.CompareAtomicMsg(&MsgAtomic{IOV: [][]byte{u64(2)}, RMA: rma(2), Datatype: DatatypeInt64, Op: AtomicCSwapGE},
				[][]byte{u64(2)}, nil, [][]byte{u64(1)}, nil, 0)
		}, ErrInval},
		{"inject", func() error { return ep.AtomicInject(u64(2), 0, 0, 1, DatatypeUint64, AtomicBAnd) }, nil},
		{"inject_too_big", func() error { return ep.AtomicInject(u64(3), 0, 0, 1, DatatypeUint64, AtomicBAnd) }, ErrInval},
		{"remote_cq_data", func() error {
			return ep.AtomicMsg(&MsgAtomic{IOV: [][]byte{u64(1)}, RMA: rma(1), Datatype: DatatypeUint64, Op: AtomicSum, Data: 9},
				FlagRemoteCQData|FlagCompletion)
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := v.p.calls
			err := c.call()
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if (v.p.calls != n) != (c.want == nil) {
				t.Fatalf("provider calls %d -> %d", n, v.p.calls)
			}
		})
	}

	// What the provider is handed.
	var ctx int
	if err := ep.Atomic(u64(3), nil, 5, 64, 7, DatatypeUint64, AtomicSum, &ctx); err != nil {
		t.Fatal(err)
	}
	m := v.p.atomic
	if m.Kind != provider.AtomicBase || m.Count != 3 || m.RMAOne != (RMAIOC{Addr: 64, Count: 3, Key: 7}) ||
		m.Addr != 5 || m.Context != &ctx || m.Flags&FlagCompletion == 0 {
		t.Fatalf("provider got %+v", m)
	}
	if err := ep.AtomicInject(u64(1), 0, 0, 1, DatatypeUint64, AtomicSum); err != nil {
		t.Fatal(err)
	}
	if v.p.atomic.Flags != FlagInject {
		t.Fatalf("inject flags %v, want FI_INJECT only", v.p.atomic.Flags)
	}
	res := u64(2)
	if err := ep.FetchAtomic(nil, nil, res, nil, 0, 0, 1, DatatypeUint32, AtomicRead, nil); err != nil {
		t.Fatal(err)
	}
	if v.p.atomic.Count != 4 || v.p.atomic.Kind != provider.AtomicFetch {
		t.Fatalf("FI_ATOMIC_READ of 16 bytes of uint32: count %d, want 4", v.p.atomic.Count)
	}

	// Valid queries.
	if n, err := ep.AtomicValid(DatatypeUint64, AtomicSum); err != nil || n != fakeAtomicMax {
		t.Errorf("AtomicValid = %d, %v", n, err)
	}
	if _, err := ep.AtomicValid(DatatypeUint64, AtomicRead); !errors.Is(err, ErrOpNotSupp) {
		t.Errorf("AtomicValid(FI_ATOMIC_READ) = %v, want ErrOpNotSupp", err)
	}
	if n, err := ep.FetchAtomicValid(DatatypeUint64, AtomicRead); err != nil || n != fakeAtomicMax {
		t.Errorf("FetchAtomicValid(FI_ATOMIC_READ) = %d, %v", n, err)
	}
	if _, err := ep.CompareAtomicValid(DatatypeUint64, AtomicSum); !errors.Is(err, ErrOpNotSupp) {
		t.Errorf("CompareAtomicValid(FI_SUM) = %v, want ErrOpNotSupp", err)
	}
	if _, err := ep.CompareAtomicValid(Datatype(99), AtomicCSwap); !errors.Is(err, ErrOpNotSupp) {
		t.Errorf("CompareAtomicValid(bad datatype) = %v, want ErrOpNotSupp (libfabric 1.17's answer)", err)
	}

	if n := testing.AllocsPerRun(100, func() {
		if err := ep.Atomic(u64(1)[:8], nil, 0, 0, 1, DatatypeUint64, AtomicSum, &ctx); err != nil {
			t.Fatal(err)
		}
	}); n > 1 { // u64 allocates the operand
		t.Errorf("Atomic: %v allocs/op beyond the operand", n-1)
	}
	buf := u64(1)
	if n := testing.AllocsPerRun(100, func() {
		if err := ep.Atomic(buf, nil, 0, 0, 1, DatatypeUint64, AtomicSum, &ctx); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Atomic: %v allocs/op, want 0", n)
	}
}

// Without FI_ATOMIC every atomic call and query answers ErrNoSys; a
// disabled endpoint answers ErrOpBadState; directions restricted by
// FI_READ/FI_WRITE are honoured.
func TestAtomicCapabilities(t *testing.T) {
	v := dataTestOpen(t, CapMsg|CapRMA, 0)
	b := make([]byte, 8)
	if err := v.ep.Atomic(b, nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil); !errors.Is(err, ErrNoSys) {
		t.Errorf("Atomic without FI_ATOMIC: %v, want ErrNoSys", err)
	}
	if _, err := v.ep.AtomicValid(DatatypeUint64, AtomicSum); !errors.Is(err, ErrNoSys) {
		t.Errorf("AtomicValid without FI_ATOMIC: %v, want ErrNoSys", err)
	}

	w := dataTestOpen(t, CapAtomic|CapWrite, 0)
	if err := w.ep.Atomic(b, nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil); err != nil {
		t.Errorf("write-only atomic: %v", err)
	}
	if err := w.ep.FetchAtomic(b, nil, make([]byte, 8), nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil); !errors.Is(err, ErrOpNotSupp) {
		t.Errorf("fetch on a write-only endpoint: %v, want ErrOpNotSupp", err)
	}
	r := dataTestOpen(t, CapAtomic|CapRead, 0)
	if err := r.ep.FetchAtomic(nil, nil, make([]byte, 8), nil, 0, 0, 1, DatatypeUint64, AtomicRead, nil); err != nil {
		t.Errorf("FI_ATOMIC_READ on a read-only endpoint: %v", err)
	}
	if err := r.ep.Atomic(b, nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil); !errors.Is(err, ErrOpNotSupp) {
		t.Errorf("base atomic on a read-only endpoint: %v, want ErrOpNotSupp", err)
	}

	info := dataTestInfo(CapAtomic, 0)
	ep, err := v.dom.OpenEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if err := ep.Atomic(b, nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil); !errors.Is(err, ErrOpBadState) {
		t.Errorf("Atomic before Enable: %v, want ErrOpBadState", err)
	}
}

// fi_query_atomic: the family flags, the flag rules of libfabric 1.17's
// ofi_atomic_valid, the element size, and the error names.
func TestQueryAtomic(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, 0)
	d := v.dom
	cases := []struct {
		name  string
		dt    Datatype
		op    AtomicOp
		flags Flags
		want  error
		size  int
	}{
		{"base", DatatypeUint64, AtomicSum, 0, nil, 8},
		{"base_write", DatatypeInt8, AtomicWrite, 0, nil, 1},
		{"base_read", DatatypeUint64, AtomicRead, 0, ErrOpNotSupp, 0},
		{"base_cswap", DatatypeUint64, AtomicCSwap, 0, ErrOpNotSupp, 0},
		{"fetch_read", DatatypeUint32, AtomicRead, FlagFetchAtomic, nil, 4},
		{"fetch_cswap", DatatypeUint32, AtomicCSwap, FlagFetchAtomic, ErrOpNotSupp, 0},
		{"compare_mswap", DatatypeDoubleComplex, AtomicMSwap, FlagCompareAtomic, nil, 16},
		{"compare_sum", DatatypeUint64, AtomicSum, FlagCompareAtomic, ErrOpNotSupp, 0},
		{"provider_size", DatatypeLongDouble, AtomicSum, 0, nil, 10},
		{"provider_refuses", DatatypeFloat, AtomicBOr, 0, ErrOpNotSupp, 0},
		{"op_out_of_range", DatatypeUint64, AtomicOp(19), 0, ErrOpNotSupp, 0},
		{"negative_op", DatatypeUint64, AtomicOp(-1), FlagFetchAtomic, ErrOpNotSupp, 0},
		{"datatype_out_of_range", Datatype(16), AtomicSum, 0, ErrOpNotSupp, 0},
		{"fetch_and_compare", DatatypeUint64, AtomicSum, FlagFetchAtomic | FlagCompareAtomic, ErrBadFlags, 0},
		{"unknown_flag", DatatypeUint64, AtomicSum, FlagInject, ErrBadFlags, 0},
		{"tagged_write", DatatypeUint64, AtomicWrite, FlagTagged, nil, 8},
		{"tagged_fetch", DatatypeUint64, AtomicSum, FlagTagged | FlagFetchAtomic, ErrNoSys, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := d.QueryAtomic(c.dt, c.op, c.flags)
			if c.want != nil {
				var oe *OpError
				if !errors.Is(err, c.want) || !errors.As(err, &oe) || oe.Op != "fi_query_atomic" {
					t.Fatalf("QueryAtomic = %+v, %v; want an fi_query_atomic error matching %v", a, err, c.want)
				}
				if a != (AtomicAttr{}) {
					t.Fatalf("failed query returned %+v", a)
				}
				return
			}
			if err != nil || a != (AtomicAttr{Count: fakeAtomicMax, Size: c.size}) {
				t.Fatalf("QueryAtomic = %+v, %v; want count %d size %d", a, err, fakeAtomicMax, c.size)
			}
		})
	}

	// The atomic call with FI_TAGGED asks the tagged question.
	m := &MsgAtomic{IOV: [][]byte{make([]byte, 8)}, RMA: []RMAIOC{{Count: 1, Key: 1}}, Datatype: DatatypeUint64}
	m.Op = AtomicWrite
	if err := v.ep.AtomicMsg(m, FlagTagged); err != nil {
		t.Errorf("tagged FI_ATOMIC_WRITE: %v", err)
	}
	m.Op = AtomicSum
	if err := v.ep.AtomicMsg(m, FlagTagged); !errors.Is(err, ErrNoSys) {
		t.Errorf("tagged FI_SUM: %v, want the provider's ENOSYS", err)
	}

	// A provider whose domain has no QueryAtomic offers no atomics: ENOSYS
	// from the query, the valid queries and the calls, as libfabric's
	// fi_no_query_atomic.
	w := dataTestOpen(t, dataTestCaps, 0)
	w.dom.atomicQ = nil
	if _, err := w.dom.QueryAtomic(DatatypeUint64, AtomicSum, 0); !errors.Is(err, ErrNoSys) {
		t.Errorf("QueryAtomic without provider support: %v, want ErrNoSys", err)
	}
	if _, err := w.ep.AtomicValid(DatatypeUint64, AtomicSum); !errors.Is(err, ErrNoSys) {
		t.Errorf("AtomicValid without provider support: %v, want ErrNoSys", err)
	}
	if err := w.ep.Atomic(make([]byte, 8), nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil); !errors.Is(err, ErrNoSys) {
		t.Errorf("Atomic without provider support: %v, want ErrNoSys", err)
	}

	var nilDom *Domain
	if _, err := nilDom.QueryAtomic(DatatypeUint64, AtomicSum, 0); !errors.Is(err, ErrInval) {
		t.Errorf("nil domain: %v, want ErrInval", err)
	}
	info := dataTestInfo(dataTestCaps, 0)
	fab, err := Open(info)
	if err != nil {
		t.Fatal(err)
	}
	defer fab.Close()
	cd, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	cd.Close()
	if _, err := cd.QueryAtomic(DatatypeUint64, AtomicSum, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("closed domain: %v, want ErrClosed", err)
	}
}

// The endpoint valid queries give the domain's fi_query_atomic answer for
// every datatype and operation (in and out of the enums), under the name of
// their own C call.
func TestAtomicValidMatchesQueryAtomic(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, 0)
	queries := []struct {
		name  string
		flags Flags
		valid func(Datatype, AtomicOp) (int, error)
	}{
		{"fi_atomicvalid", 0, v.ep.AtomicValid},
		{"fi_fetch_atomicvalid", FlagFetchAtomic, v.ep.FetchAtomicValid},
		{"fi_compare_atomicvalid", FlagCompareAtomic, v.ep.CompareAtomicValid},
	}
	supported := 0
	for _, q := range queries {
		for dt := Datatype(-1); dt <= DatatypeUint128+1; dt++ {
			for op := AtomicOp(-1); op <= AtomicMSwap+1; op++ {
				n, err := q.valid(dt, op)
				a, qerr := v.dom.QueryAtomic(dt, op, q.flags)
				if (err == nil) != (qerr == nil) || err != nil && !errors.Is(err, errors.Unwrap(qerr)) || n != a.Count {
					t.Fatalf("%s(%v, %v) = %d, %v; fi_query_atomic = %+v, %v", q.name, dt, op, n, err, a, qerr)
				}
				var oe *OpError
				if err != nil && (!errors.As(err, &oe) || oe.Op != q.name) {
					t.Fatalf("%s(%v, %v) error %v does not name %s", q.name, dt, op, err, q.name)
				}
				if err == nil {
					supported++
				}
			}
		}
	}
	if supported == 0 {
		t.Fatal("no query succeeded")
	}
}

// AtomicInject reaches the provider with FI_INJECT alone: the endpoint's
// default op flags (fi_control FI_SETOPSFLAG) apply to Atomic, not to the
// inject call, as with Inject and RMAInjectWrite.
func TestAtomicInjectIgnoresOpsFlags(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, 0)
	if err := v.ep.SetOpsFlags(FlagTransmit | FlagFence | FlagDeliveryComplete); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	if err := v.ep.Atomic(b, nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil); err != nil {
		t.Fatal(err)
	}
	if f := v.p.atomic.Flags; f&(FlagFence|FlagDeliveryComplete) != FlagFence|FlagDeliveryComplete {
		t.Fatalf("Atomic flags %v lack the default op flags", f)
	}
	if err := v.ep.AtomicInject(b, 0, 0, 1, DatatypeUint64, AtomicSum); err != nil {
		t.Fatal(err)
	}
	if f := v.p.atomic.Flags; f != FlagInject {
		t.Fatalf("AtomicInject flags %v, want FI_INJECT alone", f)
	}
	if err := v.ep.RMAInjectWrite(b, 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	if f := v.p.msg.Flags; f != FlagInject {
		t.Fatalf("RMAInjectWrite flags %v, want FI_INJECT alone", f)
	}
}
