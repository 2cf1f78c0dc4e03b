package fabric

import (
	"errors"
	"testing"
)

// The root package checks, for every provider, that the remote regions of
// an RMA call add up to its local length, that FI_INJECT is not asked of a
// read, and that the inject writes ask for no completion (provider package
// documentation, "What the root package guarantees").
func TestRMARules(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, 0)
	buf := make([]byte, 8)
	calls := v.p.calls
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"writemsg regions shorter than the buffer", v.ep.RMAWriteMsg(&Msg{IOV: [][]byte{buf},
			RMA: []RMAIOV{{Len: 4, Key: 1}}}, 0), ErrInval},
		{"readmsg regions longer than the buffers", v.ep.RMAReadMsg(&Msg{IOV: [][]byte{buf[:4], buf[4:]},
			RMA: []RMAIOV{{Len: 8, Key: 1}, {Len: 1, Key: 1}}}, 0), ErrInval},
		{"readmsg with FI_INJECT", v.ep.RMAReadMsg(&Msg{IOV: [][]byte{buf}, RMA: []RMAIOV{{Len: 8, Key: 1}}},
			FlagInject), ErrBadFlags},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if v.p.calls != calls {
		t.Fatalf("the provider was called %d times for refused operations", v.p.calls-calls)
	}
	if err := v.ep.RMAReadMsg(&Msg{IOV: [][]byte{buf[:4], buf[4:]}, RMA: []RMAIOV{{Len: 3, Key: 1}, {Len: 5, Key: 1}}},
		0); err != nil {
		t.Fatalf("readmsg with regions covering the buffers: %v", err)
	}
	if err := v.ep.RMAInjectWrite(buf, 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	if f := v.p.msg.Flags; f&FlagCompletion != 0 || f&FlagInject == 0 {
		t.Fatalf("fi_inject_write reached the provider with flags %v", f)
	}
}

// The remote target lists of the RMA and atomic *Msg calls are within the
// endpoint's rma_iov_limit (fi_endpoint(3) tx_attr): RMAIOVLimit targets
// are posted, RMAIOVLimit+1 answer ErrInval without reaching the provider.
func TestRMAIOVLimit(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, 0)
	lim := int(v.ep.info.TxAttr.RMAIOVLimit)
	if lim < 1 {
		t.Fatalf("rma_iov_limit %d", lim)
	}
	// n targets of one byte (RMA) or one element (atomics), the last
	// atomic targets empty so that the element count stays within the
	// valid count.
	rma := func(n int) []RMAIOV {
		out := make([]RMAIOV, n)
		for i := range out {
			out[i] = RMAIOV{Addr: uint64(i), Len: 1, Key: 1}
		}
		return out
	}
	ioc := func(n int) []RMAIOC {
		out := make([]RMAIOC, n)
		for i := range out {
			out[i] = RMAIOC{Addr: uint64(i), Key: 1}
			if i < fakeAtomicMax {
				out[i].Count = 1
			}
		}
		return out
	}
	elems := min(lim, fakeAtomicMax)
	am := func(n int, op AtomicOp) *MsgAtomic {
		return &MsgAtomic{IOV: [][]byte{make([]byte, elems)}, RMA: ioc(n), Datatype: DatatypeUint8, Op: op}
	}
	res := func() [][]byte { return [][]byte{make([]byte, elems)} }
	calls := []struct {
		name string
		post func(n int) error
	}{
		{"fi_writemsg", func(n int) error {
			return v.ep.RMAWriteMsg(&Msg{IOV: [][]byte{make([]byte, n)}, RMA: rma(n)}, 0)
		}},
		{"fi_readmsg", func(n int) error {
			return v.ep.RMAReadMsg(&Msg{IOV: [][]byte{make([]byte, n)}, RMA: rma(n)}, 0)
		}},
		{"fi_atomicmsg", func(n int) error { return v.ep.AtomicMsg(am(n, AtomicSum), 0) }},
		{"fi_fetch_atomicmsg", func(n int) error { return v.ep.FetchAtomicMsg(am(n, AtomicSum), res(), nil, 0) }},
		{"fi_compare_atomicmsg", func(n int) error {
			return v.ep.CompareAtomicMsg(am(n, AtomicCSwap), res(), nil, res(), nil, 0)
		}},
	}
	for _, c := range calls {
		if err := c.post(lim); err != nil {
			t.Errorf("%s with rma_iov_limit (%d) targets: %v", c.name, lim, err)
		}
		n := v.p.calls
		if err := c.post(lim + 1); !errors.Is(err, ErrInval) {
			t.Errorf("%s with rma_iov_limit+1 targets: %v, want ErrInval", c.name, err)
		}
		if v.p.calls != n {
			t.Errorf("%s with rma_iov_limit+1 targets reached the provider", c.name)
		}
	}
}
