package fabtest

import (
	"testing"

	fabric "github.com/gofabric/fabric"
)

// atomicCases lists the fi_atomic(3) behaviours, in the order they run.
var atomicCases = []testCase{
	{"fi_atomic/calls_without_FI_ATOMIC_ENOSYS", atomicCallsWithoutFIATOMICENOSYS},
}

// atomicCallsWithoutFIATOMICENOSYS: on an endpoint without FI_ATOMIC every
// atomic call and valid query returns FI_ENOSYS, and so does the domain's
// fi_query_atomic.
func atomicCallsWithoutFIATOMICENOSYS(t *testing.T, tg Target) {
	if tg.claims(fabric.CapAtomic) {
		t.Skip("the provider claims FI_ATOMIC")
	}
	a, _, ab, _ := tg.pair(t, envOpts{})
	u64 := make([]byte, 8)
	rma := []fabric.RMAIOC{{Count: 1}}
	dt, sum, cswap := fabric.DatatypeUint64, fabric.AtomicSum, fabric.AtomicCSwap
	_, validErr := a.ep.AtomicValid(dt, sum)
	_, fetchValidErr := a.ep.FetchAtomicValid(dt, sum)
	_, compareValidErr := a.ep.CompareAtomicValid(dt, cswap)
	_, queryErr := a.dom.QueryAtomic(dt, sum, 0)
	for name, err := range map[string]error{
		"fi_atomic":        a.ep.Atomic(u64, nil, ab, 0, 0, dt, sum, nil),
		"fi_atomicv":       a.ep.AtomicV([][]byte{u64}, nil, ab, 0, 0, dt, sum, nil),
		"fi_atomicmsg":     a.ep.AtomicMsg(&fabric.MsgAtomic{IOV: [][]byte{u64}, Addr: ab, RMA: rma, Datatype: dt, Op: sum}, 0),
		"fi_inject_atomic": a.ep.AtomicInject(u64, ab, 0, 0, dt, sum),
		"fi_fetch_atomic":  a.ep.FetchAtomic(u64, nil, make([]byte, 8), nil, ab, 0, 0, dt, sum, nil),
		"fi_fetch_atomicv": a.ep.FetchAtomicV([][]byte{u64}, nil, [][]byte{make([]byte, 8)}, nil, ab, 0, 0, dt, sum, nil),
		"fi_fetch_atomicmsg": a.ep.FetchAtomicMsg(&fabric.MsgAtomic{IOV: [][]byte{u64}, Addr: ab, RMA: rma,
			Datatype: dt, Op: sum}, [][]byte{make([]byte, 8)}, nil, 0),
		"fi_compare_atomic": a.ep.CompareAtomic(u64, nil, make([]byte, 8), nil, make([]byte, 8), nil, ab, 0, 0, dt,
			cswap, nil),
		"fi_compare_atomicv": a.ep.CompareAtomicV([][]byte{u64}, nil, [][]byte{make([]byte, 8)}, nil,
			[][]byte{make([]byte, 8)}, nil, ab, 0, 0, dt, cswap, nil),
		"fi_compare_atomicmsg": a.ep.CompareAtomicMsg(&fabric.MsgAtomic{IOV: [][]byte{u64}, Addr: ab, RMA: rma,
			Datatype: dt, Op: cswap}, [][]byte{make([]byte, 8)}, nil, [][]byte{make([]byte, 8)}, nil, 0),
		"fi_atomicvalid":         validErr,
		"fi_fetch_atomicvalid":   fetchValidErr,
		"fi_compare_atomicvalid": compareValidErr,
		"fi_query_atomic":        queryErr,
	} {
		isErr(t, name+" without FI_ATOMIC", err, fabric.ErrNoSys)
	}
}
