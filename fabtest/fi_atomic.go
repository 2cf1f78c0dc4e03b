package fabtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// atomicCases lists the fi_atomic(3) behaviours, in the order they run.
var atomicCases = []testCase{
	{"fi_atomic/calls_without_FI_ATOMIC_ENOSYS", atomicCallsWithoutFIATOMICENOSYS},
	{"fi_atomic/valid_queries_agree_with_query_atomic", atomicValidQueriesAgreeWithQueryAtomic},
	{"fi_atomic/base_every_op_and_datatype_vs_reference", atomicBaseEveryOpAndDatatypeVsReference},
	{"fi_atomic/fetch_every_op_and_datatype_vs_reference", atomicFetchEveryOpAndDatatypeVsReference},
	{"fi_atomic/compare_every_op_and_datatype_vs_reference", atomicCompareEveryOpAndDatatypeVsReference},
	{"fi_atomic/every_call_variant", atomicEveryCallVariant},
	{"fi_atomic/target_access_key_and_range_checked", atomicTargetAccessKeyAndRangeChecked},
	{"fi_atomic/rma_event_counters_count_atomics", atomicRMAEventCountersCountAtomics},
	{"fi_atomic/concurrent_sum_from_goroutines_loses_no_update", atomicConcurrentSumFromGoroutinesLosesNoUpdate},
	{"fi_atomic/concurrent_sum_from_processes_loses_no_update", atomicConcurrentSumFromProcessesLosesNoUpdate},
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

// atomicFamily is one family of atomic calls (fi_atomic(3)).
type atomicFamily struct {
	name    string       // its C call
	flags   fabric.Flags // its fi_query_atomic flags
	valid   func(ep *fabric.Endpoint, dt fabric.Datatype, op fabric.AtomicOp) (int, error)
	fetch   bool         // returns the target's initial values
	compare bool         // takes a compare operand
	comp    fabric.Flags // the flags of its completions
}

var (
	baseFamily = atomicFamily{"fi_atomic", 0, (*fabric.Endpoint).AtomicValid, false, false,
		fabric.FlagAtomic | fabric.FlagWrite}
	fetchFamily = atomicFamily{"fi_fetch_atomic", fabric.FlagFetchAtomic, (*fabric.Endpoint).FetchAtomicValid, true,
		false, fabric.FlagAtomic | fabric.FlagRead}
	compareFamily = atomicFamily{"fi_compare_atomic", fabric.FlagCompareAtomic, (*fabric.Endpoint).CompareAtomicValid,
		true, true, fabric.FlagAtomic | fabric.FlagRead}
)

// allows reports whether fi_atomic(3) lists op for the family: the base
// calls take FI_MIN to FI_BXOR and FI_ATOMIC_WRITE, the fetch calls those
// and FI_ATOMIC_READ, the compare calls FI_CSWAP to FI_MSWAP.
func (f atomicFamily) allows(op fabric.AtomicOp) bool {
	switch {
	case f.compare:
		return op >= fabric.AtomicCSwap && op <= fabric.AtomicMSwap
	case f.fetch:
		return op >= fabric.AtomicMin && op <= fabric.AtomicWrite
	}
	return op >= fabric.AtomicMin && op <= fabric.AtomicBXor || op == fabric.AtomicWrite
}

// atomicPair opens a pair with FI_ATOMIC, skipping a target that does not
// claim it.
func atomicPair(t *testing.T, tg Target, caps fabric.Caps) (a, b *env, ab fabric.Addr) {
	t.Helper()
	a, b, ab, _ = tg.pair(t, envOpts{caps: fabric.CapAtomic | caps})
	return a, b, ab
}

// needValid returns the count of family f's op on dt at e, skipping the
// test when the target does not support it.
func needValid(t *testing.T, e *env, f atomicFamily, dt fabric.Datatype, op fabric.AtomicOp) int {
	t.Helper()
	n, err := f.valid(e.ep, dt, op)
	skipIfNotSupported(t, fmt.Sprintf("%svalid(%v, %v)", f.name, dt, op), err)
	return n
}

// le64 encodes words in the host (little-endian) byte order.
func le64(words ...uint64) []byte {
	b := make([]byte, 0, 8*len(words))
	for _, w := range words {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

func atomicValidQueriesAgreeWithQueryAtomic(t *testing.T, tg Target) {
	a, _, _ := atomicPair(t, tg, 0)
	valid := 0
	for _, f := range []atomicFamily{baseFamily, fetchFamily, compareFamily} {
		for dt := fabric.Datatype(0); dt <= fabric.DatatypeUint128+1; dt++ {
			for op := fabric.AtomicOp(0); op <= fabric.AtomicMSwap+1; op++ {
				what := fmt.Sprintf("%svalid(%v, %v)", f.name, dt, op)
				n, err := f.valid(a.ep, dt, op)
				q, qerr := a.dom.QueryAtomic(dt, op, f.flags)
				if dt > fabric.DatatypeUint128 || op > fabric.AtomicMSwap || !f.allows(op) {
					isErr(t, what, err, fabric.ErrOpNotSupp)
					isErr(t, "fi_query_atomic for "+what, qerr, fabric.ErrOpNotSupp)
					continue
				}
				switch {
				case err != nil || qerr != nil:
					if !errors.Is(err, fabric.ErrOpNotSupp) || !errors.Is(qerr, fabric.ErrOpNotSupp) {
						t.Errorf("%s: %v; fi_query_atomic: %v; want both nil or both FI_EOPNOTSUPP", what, err, qerr)
					}
				case n < 1 || n != q.Count:
					t.Errorf("%s: count %d; fi_query_atomic count %d", what, n, q.Count)
				case refTypes[dt].size != 0 && q.Size != refTypes[dt].size:
					t.Errorf("fi_query_atomic for %s: size %d; want %d", what, q.Size, refTypes[dt].size)
				default:
					valid++
				}
			}
		}
	}
	if valid == 0 {
		t.Errorf("%s claims FI_ATOMIC but no operation is valid", tg.Provider)
	}
}

func atomicBaseEveryOpAndDatatypeVsReference(t *testing.T, tg Target) {
	atomicVsReference(t, tg, baseFamily)
}

func atomicFetchEveryOpAndDatatypeVsReference(t *testing.T, tg Target) {
	atomicVsReference(t, tg, fetchFamily)
}

func atomicCompareEveryOpAndDatatypeVsReference(t *testing.T, tg Target) {
	atomicVsReference(t, tg, compareFamily)
}

// atomicVsReference runs family f's every valid operation on every valid
// datatype over the test vectors, as many elements per call as the valid
// count allows, and checks the fetched values and the target memory
// against the suite's reference.
func atomicVsReference(t *testing.T, tg Target, f atomicFamily) {
	a, b, ab := atomicPair(t, tg, 0)
	type job struct {
		dt    fabric.Datatype
		op    fabric.AtomicOp
		ref   refType
		count int
		off   int // of its nvec target elements in the region
	}
	var jobs []job
	size := 0
	for dt := fabric.Datatype(0); dt <= fabric.DatatypeUint128; dt++ {
		for op := fabric.AtomicOp(0); op <= fabric.AtomicMSwap; op++ {
			if !f.allows(op) {
				continue
			}
			n, err := f.valid(a.ep, dt, op)
			if err != nil {
				isErr(t, fmt.Sprintf("%svalid(%v, %v)", f.name, dt, op), err, fabric.ErrOpNotSupp)
				continue
			}
			ref, ok := refTypes[dt]
			if ok {
				z := make([]byte, ref.size)
				_, ok = ref.apply(op, z, z, z)
			}
			if !ok {
				t.Logf("%s(%v, %v) is valid; the suite has no reference for it: not checked", f.name, dt, op)
				continue
			}
			jobs = append(jobs, job{dt, op, ref, n, size})
			size += nvec * ref.size
		}
	}
	if len(jobs) == 0 {
		t.Skipf("%s: no valid operation", f.name)
	}
	mem := make([]byte, size)
	for _, j := range jobs {
		for e := range nvec {
			tv, _, _ := j.ref.vec(e)
			copy(mem[j.off+e*j.ref.size:], tv)
		}
	}
	want := bytes.Clone(mem)
	r := b.expose(mem, remoteRW, 0x5900)
	for _, j := range jobs {
		sz := j.ref.size
		per := min(j.count, nvec)
		for i := 0; i < nvec; i += per {
			n := min(per, nvec-i)
			var opnd, cmp, init []byte
			for e := i; e < i+n; e++ {
				tv, ov, cv := j.ref.vec(e)
				opnd, cmp, init = append(opnd, ov...), append(cmp, cv...), append(init, tv...)
				nv, _ := j.ref.apply(j.op, tv, ov, cv)
				copy(want[j.off+e*sz:], nv)
			}
			if j.op == fabric.AtomicRead {
				opnd = nil
			}
			res := bytes.Repeat([]byte{0xa5}, n*sz)
			addr := r.addr + uint64(j.off+i*sz)
			ctx := new(int)
			what := fmt.Sprintf("%s(%v, %v) on elements %d..%d", f.name, j.dt, j.op, i, i+n-1)
			retry(t, what, func() error {
				switch {
				case f.compare:
					return a.ep.CompareAtomic(opnd, nil, cmp, nil, res, nil, ab, addr, r.key, j.dt, j.op, ctx)
				case f.fetch:
					return a.ep.FetchAtomic(opnd, nil, res, nil, ab, addr, r.key, j.dt, j.op, ctx)
				}
				return a.ep.Atomic(opnd, nil, ab, addr, r.key, j.dt, j.op, ctx)
			}, a.txcq)
			waitDone(t, what, a, b, ctx, f.comp)
			if f.fetch && !bytes.Equal(res, init) {
				t.Errorf("%s: fetched %x; want the initial %x", what, res, init)
			}
		}
	}
	settle(t, a, b, ab)
	for _, j := range jobs {
		sz := j.ref.size
		for e := range nvec {
			at := j.off + e*sz
			if got, w := mem[at:at+sz], want[at:at+sz]; !bytes.Equal(got, w) {
				tv, ov, cv := j.ref.vec(e)
				t.Errorf("%s(%v, %v) element %d: target %x; want %x (target was %x, operand %x, compare %x)",
					f.name, j.dt, j.op, e, got, w, tv, ov, cv)
			}
		}
	}
}

func atomicEveryCallVariant(t *testing.T, tg Target) {
	a, b, ab := atomicPair(t, tg, 0)
	u64, sum, cswap := fabric.DatatypeUint64, fabric.AtomicSum, fabric.AtomicCSwap
	n := min(needValid(t, a, baseFamily, u64, sum), needValid(t, a, fetchFamily, u64, sum),
		needValid(t, a, compareFamily, u64, cswap), 3)
	iovs := a.info.TxAttr.IOVLimit >= 2 && n >= 2
	rmas := a.info.TxAttr.RMAIOVLimit >= 2 && n >= 2
	// Each variant works on a slot of 4 words; word w of slot s starts
	// as 1000*s+w.
	const slotWords = 4
	type variant struct {
		name    string
		compare bool // CSWAP (else SUM)
		fetch   bool
		inject  bool
		post    func(opnd, cmp, res []byte, addr uint64, ctx any) error
	}
	msg := func(opnd []byte, addr uint64, op fabric.AtomicOp, ctx any) *fabric.MsgAtomic {
		m := &fabric.MsgAtomic{IOV: [][]byte{opnd}, Addr: ab, Datatype: u64, Op: op, Context: ctx,
			RMA: []fabric.RMAIOC{{Addr: addr, Count: uint64(len(opnd) / 8), Key: 0}}}
		if rmas { // two remote pieces: word 0, then words 2.. of the slot
			m.RMA = []fabric.RMAIOC{{Addr: addr, Count: 1}, {Addr: addr + 16, Count: uint64(len(opnd)/8 - 1)}}
		}
		return m
	}
	split := func(p []byte) [][]byte {
		if iovs {
			return [][]byte{p[:8], p[8:]}
		}
		return [][]byte{p}
	}
	var r *region
	keyed := func(m *fabric.MsgAtomic) *fabric.MsgAtomic {
		for i := range m.RMA {
			m.RMA[i].Key = r.key
		}
		return m
	}
	variants := []variant{
		{"fi_atomic", false, false, false, func(o, _, _ []byte, addr uint64, ctx any) error {
			return a.ep.Atomic(o, nil, ab, addr, r.key, u64, sum, ctx)
		}},
		{"fi_atomicv", false, false, false, func(o, _, _ []byte, addr uint64, ctx any) error {
			return a.ep.AtomicV(split(o), nil, ab, addr, r.key, u64, sum, ctx)
		}},
		{"fi_atomicmsg", false, false, false, func(o, _, _ []byte, addr uint64, ctx any) error {
			return a.ep.AtomicMsg(keyed(msg(o, addr, sum, ctx)), fabric.FlagCompletion)
		}},
		{"fi_fetch_atomic", false, true, false, func(o, _, res []byte, addr uint64, ctx any) error {
			return a.ep.FetchAtomic(o, nil, res, nil, ab, addr, r.key, u64, sum, ctx)
		}},
		{"fi_fetch_atomicv", false, true, false, func(o, _, res []byte, addr uint64, ctx any) error {
			return a.ep.FetchAtomicV(split(o), nil, split(res), nil, ab, addr, r.key, u64, sum, ctx)
		}},
		{"fi_fetch_atomicmsg", false, true, false, func(o, _, res []byte, addr uint64, ctx any) error {
			return a.ep.FetchAtomicMsg(keyed(msg(o, addr, sum, ctx)), split(res), nil, fabric.FlagCompletion)
		}},
		{"fi_compare_atomic", true, true, false, func(o, c, res []byte, addr uint64, ctx any) error {
			return a.ep.CompareAtomic(o, nil, c, nil, res, nil, ab, addr, r.key, u64, cswap, ctx)
		}},
		{"fi_compare_atomicv", true, true, false, func(o, c, res []byte, addr uint64, ctx any) error {
			return a.ep.CompareAtomicV(split(o), nil, split(c), nil, split(res), nil, ab, addr, r.key, u64, cswap, ctx)
		}},
		{"fi_compare_atomicmsg", true, true, false, func(o, c, res []byte, addr uint64, ctx any) error {
			return a.ep.CompareAtomicMsg(keyed(msg(o, addr, cswap, ctx)), split(c), nil, split(res), nil,
				fabric.FlagCompletion)
		}},
	}
	if a.info.TxAttr.InjectSize >= uint64(8*n) {
		variants = append(variants, variant{"fi_inject_atomic", false, false, true,
			func(o, _, _ []byte, addr uint64, _ any) error { return a.ep.AtomicInject(o, ab, addr, r.key, u64, sum) }})
	}
	mem := make([]byte, len(variants)*slotWords*8)
	for i := range len(variants) * slotWords {
		binary.LittleEndian.PutUint64(mem[8*i:], uint64(1000*(i/slotWords)+i%slotWords))
	}
	want := bytes.Clone(mem)
	r = b.expose(mem, remoteRW, 0x5a00)
	for s, v := range variants {
		// The words the call touches: 0..n-1, or 0 and 2.. with two
		// remote pieces.
		words := []int{0, 1, 2}[:n]
		if rmas && strings.HasSuffix(v.name, "msg") {
			words = []int{0, 2, 3}[:n]
		}
		var opnd, cmp, init []byte
		for k, w := range words {
			old := uint64(1000*s + w)
			o := uint64(7 + k)
			c := old
			if k == 1 {
				c = old + 1 // this element is not swapped
			}
			opnd, cmp, init = append(opnd, le64(o)...), append(cmp, le64(c)...), append(init, le64(old)...)
			nv := old + o
			if v.compare {
				nv = pick(c == old, o, old)
			}
			binary.LittleEndian.PutUint64(want[8*(s*slotWords+w):], nv)
		}
		res := bytes.Repeat([]byte{0xa5}, len(init))
		ctx := new(int)
		addr := r.addr + uint64(8*s*slotWords)
		retry(t, v.name, func() error { return v.post(opnd, cmp, res, addr, ctx) }, a.txcq)
		if v.inject {
			clear(opnd) // the buffer is the caller's again
			// No completion: watch the first word change instead.
			deadline := time.Now().Add(scaled(5 * time.Second))
			for got := make([]byte, 8); !bytes.Equal(got, want[8*s*slotWords:][:8]); {
				if time.Now().After(deadline) {
					t.Fatalf("%s: no effect within %v", v.name, scaled(5*time.Second))
				}
				zero, fctx := le64(0), new(int)
				retry(t, "fi_fetch_atomic", func() error {
					return a.ep.FetchAtomic(zero, nil, got, nil, ab, addr, r.key, u64, sum, fctx)
				}, a.txcq)
				waitDone(t, "fi_fetch_atomic", a, b, fctx, fetchFamily.comp)
			}
			continue
		}
		comp := baseFamily.comp
		if v.fetch {
			comp = fetchFamily.comp
		}
		waitDone(t, v.name, a, b, ctx, comp)
		if v.fetch && !bytes.Equal(res, init) {
			t.Errorf("%s: fetched %x; want %x", v.name, res, init)
		}
	}
	expectEmpty(t, a.txcq, scaled(10*time.Millisecond), b.rxcq)
	settle(t, a, b, ab)
	for s, v := range variants {
		at := 8 * s * slotWords
		if got, w := mem[at:at+8*slotWords], want[at:at+8*slotWords]; !bytes.Equal(got, w) {
			t.Errorf("%s: target words %x; want %x", v.name, got, w)
		}
	}
}

func atomicTargetAccessKeyAndRangeChecked(t *testing.T, tg Target) {
	a, b, ab := atomicPair(t, tg, 0)
	u64, sum := fabric.DatatypeUint64, fabric.AtomicSum
	count := needValid(t, a, baseFamily, u64, sum)
	_, ferr := a.ep.FetchAtomicValid(u64, sum)
	_, rerr := a.ep.FetchAtomicValid(u64, fabric.AtomicRead)
	_, cerr := a.ep.CompareAtomicValid(u64, fabric.AtomicCSwap)
	const size = 64
	fill := func(k uint64) []byte {
		p := make([]byte, size)
		for i := 0; i < size; i += 8 {
			binary.LittleEndian.PutUint64(p[i:], k+uint64(i))
		}
		return p
	}
	ro := b.expose(fill(100), fabric.FlagRemoteRead, 0x5d00)
	wo := b.expose(fill(200), fabric.FlagRemoteWrite, 0x5d01)
	rw := b.expose(fill(300), remoteRW, 0x5d02)
	want := [][]byte{bytes.Clone(ro.mem), bytes.Clone(wo.mem), bytes.Clone(rw.mem)}
	bad := unusedKey(ro, wo, rw)
	one, two, res, cmp := le64(1), le64(1, 1), make([]byte, 8), make([]byte, 8)
	type op struct {
		name string
		post func(ctx any) error
	}
	base := func(o []byte, addr, key uint64) func(any) error {
		return func(ctx any) error { return a.ep.Atomic(o, nil, ab, addr, key, u64, sum, ctx) }
	}
	fetch := func(op fabric.AtomicOp, addr, key uint64) func(any) error {
		return func(ctx any) error { return a.ep.FetchAtomic(one, nil, res, nil, ab, addr, key, u64, op, ctx) }
	}
	compare := func(addr, key uint64) func(any) error {
		return func(ctx any) error {
			return a.ep.CompareAtomic(one, nil, cmp, nil, res, nil, ab, addr, key, u64, fabric.AtomicCSwap, ctx)
		}
	}
	faults := []op{
		{"fi_atomic on a region without FI_REMOTE_WRITE", base(one, ro.addr, ro.key)},
		{"fi_atomic with an unknown key", base(one, rw.addr, bad)},
		{"fi_atomic just past the region's end", base(one, rw.addr+size, rw.key)},
		{"fi_atomic across the region's end", base(one, rw.addr+size-4, rw.key)},
		{"fi_atomic below the region's start", base(one, rw.addr-8, rw.key)},
		{"fi_atomic whose end wraps the address space", base(one, ^uint64(0)-3, rw.key)},
	}
	if count >= 2 {
		faults = append(faults, op{"fi_atomic of two elements, the second past the end",
			base(two, rw.addr+size-8, rw.key)})
	}
	if ferr == nil {
		faults = append(faults,
			op{"fi_fetch_atomic(FI_SUM) on a region without FI_REMOTE_WRITE", fetch(sum, ro.addr, ro.key)},
			op{"fi_fetch_atomic(FI_SUM) on a region without FI_REMOTE_READ", fetch(sum, wo.addr, wo.key)},
			op{"fi_fetch_atomic(FI_SUM) past the region's end", fetch(sum, rw.addr+size, rw.key)})
	}
	if rerr == nil {
		faults = append(faults, op{"fi_fetch_atomic(FI_ATOMIC_READ) on a region without FI_REMOTE_READ",
			fetch(fabric.AtomicRead, wo.addr, wo.key)},
			op{"fi_fetch_atomic(FI_ATOMIC_READ) with an unknown key", fetch(fabric.AtomicRead, ro.addr, bad)})
	}
	if cerr == nil {
		faults = append(faults,
			op{"fi_compare_atomic on a region without FI_REMOTE_WRITE", compare(ro.addr, ro.key)},
			op{"fi_compare_atomic on a region without FI_REMOTE_READ", compare(wo.addr, wo.key)})
	}
	for _, f := range faults {
		ctx := new(int)
		retry(t, f.name, func() error { return f.post(ctx) }, a.txcq)
		waitFail(t, f.name, a, b, ctx)
	}
	// What the access allows works, and the endpoint still does.
	ctx := new(int)
	retry(t, "fi_atomic on a region with FI_REMOTE_WRITE only", func() error { return base(one, wo.addr, wo.key)(ctx) },
		a.txcq)
	waitDone(t, "fi_atomic on a region with FI_REMOTE_WRITE only", a, b, ctx, baseFamily.comp)
	binary.LittleEndian.PutUint64(want[1], 201)
	if rerr == nil {
		retry(t, "fi_fetch_atomic(FI_ATOMIC_READ) on a region with FI_REMOTE_READ only", func() error {
			return fetch(fabric.AtomicRead, ro.addr+8, ro.key)(ctx)
		}, a.txcq)
		waitDone(t, "fi_fetch_atomic(FI_ATOMIC_READ)", a, b, ctx, fetchFamily.comp)
		if v := binary.LittleEndian.Uint64(res); v != 108 {
			t.Errorf("FI_ATOMIC_READ fetched %d; want 108", v)
		}
	}
	if ferr == nil {
		retry(t, "fi_fetch_atomic(FI_SUM)", func() error { return fetch(sum, rw.addr+size-8, rw.key)(ctx) }, a.txcq)
		waitDone(t, "fi_fetch_atomic(FI_SUM)", a, b, ctx, fetchFamily.comp)
		binary.LittleEndian.PutUint64(want[2][size-8:], 300+size-8+1)
		if v := binary.LittleEndian.Uint64(res); v != 300+size-8 {
			t.Errorf("FI_SUM fetched %d; want %d", v, 300+size-8)
		}
	}
	if cerr == nil {
		binary.LittleEndian.PutUint64(cmp, 300)
		retry(t, "fi_compare_atomic", func() error { return compare(rw.addr, rw.key)(ctx) }, a.txcq)
		waitDone(t, "fi_compare_atomic", a, b, ctx, compareFamily.comp)
		binary.LittleEndian.PutUint64(want[2], 1)
	}
	settle(t, a, b, ab)
	for i, r := range []*region{ro, wo, rw} {
		if !bytes.Equal(r.mem, want[i]) {
			t.Errorf("%s region: %x; want %x", []string{"FI_REMOTE_READ", "FI_REMOTE_WRITE",
				"FI_REMOTE_READ|FI_REMOTE_WRITE"}[i], r.mem, want[i])
		}
	}
}

func atomicRMAEventCountersCountAtomics(t *testing.T, tg Target) {
	hook, cntrs := bindRMACntrs(t)
	a, b, ab, _ := tg.pair(t, envOpts{caps: fabric.CapAtomic | fabric.CapRMAEvent, bind: hook})
	ca, cb := cntrs[a.dom], cntrs[b.dom]
	u64, sum := fabric.DatatypeUint64, fabric.AtomicSum
	needValid(t, a, baseFamily, u64, sum)
	needValid(t, a, fetchFamily, u64, sum)
	needValid(t, a, compareFamily, u64, fabric.AtomicCSwap)
	mc, err := b.dom.OpenCntr(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "counter", mc.Close()) })
	r := b.exposeCounted(make([]byte, 64), remoteRW, 0x5e00, mc)
	one, res, cmp := le64(1), make([]byte, 8), make([]byte, 8)
	ctx := new(int)
	for _, op := range []struct {
		name string
		post func() error
	}{
		{"fi_atomic", func() error { return a.ep.Atomic(one, nil, ab, r.addr, r.key, u64, sum, ctx) }},
		{"fi_atomic", func() error { return a.ep.Atomic(one, nil, ab, r.addr+8, r.key, u64, sum, ctx) }},
		{"fi_fetch_atomic", func() error { return a.ep.FetchAtomic(one, nil, res, nil, ab, r.addr, r.key, u64, sum, ctx) }},
		{"fi_compare_atomic", func() error {
			return a.ep.CompareAtomic(one, nil, cmp, nil, res, nil, ab, r.addr+16, r.key, u64, fabric.AtomicCSwap, ctx)
		}},
	} {
		retry(t, op.name, op.post, a.txcq)
		waitOK(t, op.name, a.txcq, b.rxcq)
	}
	waitCntr(t, "target FI_REMOTE_WRITE", cb.remoteWrite, 2, a.txcq, b.rxcq)
	waitCntr(t, "target FI_REMOTE_READ", cb.remoteRead, 2, a.txcq, b.rxcq)
	waitCntr(t, "region counter", mc, 2, a.txcq, b.rxcq)
	settle(t, a, b, ab)
	cntrIs(t, "initiator FI_WRITE (base atomics)", ca.write, 2, 0)
	cntrIs(t, "initiator FI_READ (fetch and compare atomics)", ca.read, 2, 0)
	cntrIs(t, "target FI_REMOTE_WRITE (base atomics)", cb.remoteWrite, 2, 0)
	cntrIs(t, "target FI_REMOTE_READ (fetch and compare atomics)", cb.remoteRead, 2, 0)
	// The region's counter counts the operations that modified it: the
	// two base atomics and the fetching sum (the compare swapped too:
	// the target word held 0).
	if v, _ := mc.Read(); v < 2 || v > 4 {
		t.Errorf("region counter %d after 4 modifying atomics of which 2 base; want 2 to 4", v)
	}
}

// sumWorker adds 1 iters times to the word at r through e (a fetching sum
// when fetch is set, recording the values fetched in olds), driving its
// own progress; it reports instead of failing, as it runs in its own
// goroutine.
func sumWorker(e *env, dst fabric.Addr, r *region, iters int, fetch bool, olds *[]uint64) error {
	one, res := le64(1), make([]byte, 8)
	ent := make([]fabric.CQEntry, 1)
	deadline := time.Now().Add(scaled(20 * time.Second))
	for i := 0; i < iters; i++ {
		for {
			var err error
			if fetch {
				err = e.ep.FetchAtomic(one, nil, res, nil, dst, r.addr, r.key, fabric.DatatypeUint64, fabric.AtomicSum, nil)
			} else {
				err = e.ep.Atomic(one, nil, dst, r.addr, r.key, fabric.DatatypeUint64, fabric.AtomicSum, nil)
			}
			if err == nil {
				break
			}
			if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
				return fmt.Errorf("atomic %d: %w", i, err)
			}
			e.txcq.Read(nil)
		}
		for {
			n, err := e.txcq.Read(ent)
			if n == 1 {
				break
			}
			if errors.Is(err, fabric.ErrAvail) {
				var ee fabric.CQErrEntry
				e.txcq.ReadErr(&ee)
				return fmt.Errorf("atomic %d: error completion %v", i, ee.Err)
			}
			if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
				return fmt.Errorf("atomic %d: no completion: %v", i, err)
			}
		}
		if fetch {
			*olds = append(*olds, binary.LittleEndian.Uint64(res))
		}
	}
	return nil
}

func atomicConcurrentSumFromGoroutinesLosesNoUpdate(t *testing.T, tg Target) {
	connectionless(t, tg)
	b := tg.open(t, envOpts{caps: fabric.CapAtomic})
	needValid(t, b, baseFamily, fabric.DatatypeUint64, fabric.AtomicSum)
	_, ferr := b.ep.FetchAtomicValid(fabric.DatatypeUint64, fabric.AtomicSum)
	r := b.expose(make([]byte, 8), remoteRW, 0x5b00)
	const workers, iters = 4, 250
	inits, dsts := make([]*env, workers), make([]fabric.Addr, workers)
	for w := range inits {
		inits[w] = tg.open(t, envOpts{caps: fabric.CapAtomic})
		dsts[w] = inits[w].insert(b.addr)
	}
	olds := make([][]uint64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range inits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = sumWorker(inits[w], dsts[w], r, iters, ferr == nil && w%2 == 0, &olds[w])
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// The target progresses here (its CQ reads) while the workers run;
	// they give up on their own after their bound.
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			b.rxcq.Read(nil)
		}
	}
	for w, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", w, err)
		}
	}
	fetched := slices.Concat(olds...)
	slices.Sort(fetched)
	for i := 1; i < len(fetched); i++ {
		if fetched[i] == fetched[i-1] || fetched[i] >= workers*iters {
			t.Fatalf("fetching sums returned %d twice or out of range: two updates saw one value", fetched[i])
		}
	}
	settle(t, inits[0], b, dsts[0])
	if v := binary.LittleEndian.Uint64(r.mem); v != workers*iters {
		t.Fatalf("the word holds %d after %d sums of 1 from %d goroutines", v, workers*iters, workers)
	}
}

func atomicConcurrentSumFromProcessesLosesNoUpdate(t *testing.T, tg Target) {
	connectionless(t, tg)
	b := tg.open(t, envOpts{caps: fabric.CapAtomic})
	needValid(t, b, baseFamily, fabric.DatatypeUint64, fabric.AtomicSum)
	r := b.expose(make([]byte, 8), remoteRW, 0x5c00)
	peer := append(bytes.Clone(b.addr), le64(r.addr, r.key)...)
	const procs, iters = 3, 200
	hs := make([]*helperProc, procs)
	for i := range hs {
		hs[i] = spawnHelper(t, tg, "atomic-sum", peer, iters)
	}
	// The target progresses here while the processes run.
	deadline := time.Now().Add(scaled(30 * time.Second))
	for left := procs; left > 0; {
		for i, h := range hs {
			if h == nil {
				continue
			}
			select {
			case err := <-h.done:
				h.report(t, err)
				hs[i] = nil
				left--
			default:
			}
		}
		b.rxcq.Read(nil)
		if time.Now().After(deadline) {
			for _, h := range hs {
				if h != nil {
					h.kill(t)
				}
			}
			t.FailNow()
		}
	}
	a := tg.open(t, envOpts{})
	settle(t, a, b, a.insert(b.addr))
	if v := binary.LittleEndian.Uint64(r.mem); v != procs*iters {
		t.Fatalf("the word holds %d after %d sums of 1 from %d processes", v, procs*iters, procs)
	}
}

// helperAtomicSum is the peer process of the cross-process sum: peer is
// the target's address followed by the word's remote address and key; it
// adds 1 to the word iters times, every other time with a fetching sum
// where the target supports it.
func helperAtomicSum(t *testing.T, tg Target, peer []byte, iters int) {
	if len(peer) < 16 {
		t.Fatalf("peer %x: want an address, a remote address and a key", peer)
	}
	name, tail := peer[:len(peer)-16], peer[len(peer)-16:]
	r := &region{addr: binary.LittleEndian.Uint64(tail), key: binary.LittleEndian.Uint64(tail[8:])}
	e := tg.open(t, envOpts{caps: fabric.CapAtomic})
	dst := e.insert(name)
	_, ferr := e.ep.FetchAtomicValid(fabric.DatatypeUint64, fabric.AtomicSum)
	var olds []uint64
	for i := 0; i < iters; i++ {
		if err := sumWorker(e, dst, r, 1, ferr == nil && i%2 == 1, &olds); err != nil {
			t.Fatal(err)
		}
	}
}

// ---- the suite's reference for fi_atomic(3) ----
//
// The reference is computed here, independently of any provider's
// implementation: for each datatype a table of Go expressions, one per
// operation, applied to elements decoded from the host byte order. An
// operation missing from a type's table has no meaning the suite can
// compute (bitwise operations on floating point, ordered ones on complex
// numbers, anything on long double, which Go cannot represent); a provider
// that reports it valid is told so in the log, and the combination is
// left unchecked.

// nvec is the number of test elements of each datatype.
const nvec = 6

// refType is the suite's model of one datatype.
type refType struct {
	size int
	// apply returns the new target element for op given the target a,
	// the operand b and the compare operand c, or false when the table
	// has no expression for op.
	apply func(op fabric.AtomicOp, a, b, c []byte) ([]byte, bool)
	// vec returns test element i (< nvec) of the target, the operand and
	// the compare operand. Together the elements take every compare both
	// ways and the arithmetic past its limits.
	vec func(i int) (target, operand, compare []byte)
}

// refTypes is the reference of every datatype the suite can compute on.
var refTypes = map[fabric.Datatype]refType{
	fabric.DatatypeInt8:          intRef[int8](1),
	fabric.DatatypeUint8:         intRef[uint8](1),
	fabric.DatatypeInt16:         intRef[int16](2),
	fabric.DatatypeUint16:        intRef[uint16](2),
	fabric.DatatypeInt32:         intRef[int32](4),
	fabric.DatatypeUint32:        intRef[uint32](4),
	fabric.DatatypeInt64:         intRef[int64](8),
	fabric.DatatypeUint64:        intRef[uint64](8),
	fabric.DatatypeInt128:        bigRef(true),
	fabric.DatatypeUint128:       bigRef(false),
	fabric.DatatypeFloat:         floatRef[float32](4),
	fabric.DatatypeDouble:        floatRef[float64](8),
	fabric.DatatypeFloatComplex:  complexRef[complex64](8),
	fabric.DatatypeDoubleComplex: complexRef[complex128](16),
}

type integer interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// truth is C's value of a logical expression.
func truth[T integer | float](v bool) T {
	if v {
		return 1
	}
	return 0
}

// ordered is the table of the operations every ordered type has: fi_atomic(3)'s
// pseudo-code, with buf as b, addr as a and compare as c.
func ordered[T integer | float]() map[fabric.AtomicOp]func(a, b, c T) T {
	return map[fabric.AtomicOp]func(a, b, c T) T{
		fabric.AtomicMin: func(a, b, _ T) T {
			if b < a {
				return b
			}
			return a
		},
		fabric.AtomicMax: func(a, b, _ T) T {
			if b > a {
				return b
			}
			return a
		},
		fabric.AtomicSum:     func(a, b, _ T) T { return a + b },
		fabric.AtomicProd:    func(a, b, _ T) T { return a * b },
		fabric.AtomicLOr:     func(a, b, _ T) T { return truth[T](a != 0 || b != 0) },
		fabric.AtomicLAnd:    func(a, b, _ T) T { return truth[T](a != 0 && b != 0) },
		fabric.AtomicLXor:    func(a, b, _ T) T { return truth[T](a != 0 && b == 0 || a == 0 && b != 0) },
		fabric.AtomicRead:    func(a, _, _ T) T { return a },
		fabric.AtomicWrite:   func(_, b, _ T) T { return b },
		fabric.AtomicCSwap:   func(a, b, c T) T { return pick(c == a, b, a) },
		fabric.AtomicCSwapNE: func(a, b, c T) T { return pick(c != a, b, a) },
		fabric.AtomicCSwapLE: func(a, b, c T) T { return pick(c <= a, b, a) },
		fabric.AtomicCSwapLT: func(a, b, c T) T { return pick(c < a, b, a) },
		fabric.AtomicCSwapGE: func(a, b, c T) T { return pick(c >= a, b, a) },
		fabric.AtomicCSwapGT: func(a, b, c T) T { return pick(c > a, b, a) },
	}
}

func pick[T any](cond bool, yes, no T) T {
	if cond {
		return yes
	}
	return no
}

// intRef is the reference of a fixed-size integer type of size bytes.
func intRef[T integer](size int) refType {
	ops := ordered[T]()
	ops[fabric.AtomicBOr] = func(a, b, _ T) T { return a | b }
	ops[fabric.AtomicBAnd] = func(a, b, _ T) T { return a & b }
	ops[fabric.AtomicBXor] = func(a, b, _ T) T { return a ^ b }
	ops[fabric.AtomicMSwap] = func(a, b, c T) T { return b&c | a&^c }
	dec := func(p []byte) T {
		var u uint64
		for i := size - 1; i >= 0; i-- {
			u = u<<8 | uint64(p[i])
		}
		return T(u)
	}
	enc := func(v T) []byte {
		p, u := make([]byte, size), uint64(v)
		for i := range p {
			p[i] = byte(u >> (8 * i))
		}
		return p
	}
	var zero T
	hi, lo := T(^uint64(0)>>(64-8*size)), zero // unsigned limits
	if zero-1 < 0 {
		hi = T(^uint64(0) >> (65 - 8*size))
		lo = -hi - 1
	}
	of := func(v int64) T { return T(v) }
	targets := []T{of(5), of(-3), 0, hi, lo, of(100)}
	operands := []T{of(7), 0, 0, 1, of(-1), of(-100)}
	compares := []T{of(5), of(-4), 1, 0, lo, of(101)}
	return refType{
		size: size,
		apply: func(op fabric.AtomicOp, a, b, c []byte) ([]byte, bool) {
			f := ops[op]
			if f == nil {
				return nil, false
			}
			return enc(f(dec(a), dec(b), dec(c))), true
		},
		vec: func(i int) ([]byte, []byte, []byte) { return enc(targets[i]), enc(operands[i]), enc(compares[i]) },
	}
}

// bigRef is the reference of FI_INT128 (signed) or FI_UINT128: the
// expressions on math/big integers, reduced to 128 bits.
func bigRef(signed bool) refType {
	mod := new(big.Int).Lsh(big.NewInt(1), 128)
	dec := func(p []byte) *big.Int {
		be := make([]byte, 16)
		for i := range be {
			be[i] = p[15-i]
		}
		v := new(big.Int).SetBytes(be)
		if signed && p[15]&0x80 != 0 {
			v.Sub(v, mod)
		}
		return v
	}
	enc := func(v *big.Int) []byte {
		v = new(big.Int).Mod(v, mod) // 0 <= v < 2^128: two's complement
		be := v.FillBytes(make([]byte, 16))
		p := make([]byte, 16)
		for i := range p {
			p[i] = be[15-i]
		}
		return p
	}
	b2 := func(v bool) *big.Int { return big.NewInt(int64(truth[int64](v))) }
	nz := func(v *big.Int) bool { return v.Sign() != 0 }
	// u is the unsigned view of v, for the bitwise operations.
	u := func(v *big.Int) *big.Int { return new(big.Int).Mod(v, mod) }
	ops := map[fabric.AtomicOp]func(a, b, c *big.Int) *big.Int{
		fabric.AtomicMin:     func(a, b, _ *big.Int) *big.Int { return pick(b.Cmp(a) < 0, b, a) },
		fabric.AtomicMax:     func(a, b, _ *big.Int) *big.Int { return pick(b.Cmp(a) > 0, b, a) },
		fabric.AtomicSum:     func(a, b, _ *big.Int) *big.Int { return new(big.Int).Add(a, b) },
		fabric.AtomicProd:    func(a, b, _ *big.Int) *big.Int { return new(big.Int).Mul(a, b) },
		fabric.AtomicLOr:     func(a, b, _ *big.Int) *big.Int { return b2(nz(a) || nz(b)) },
		fabric.AtomicLAnd:    func(a, b, _ *big.Int) *big.Int { return b2(nz(a) && nz(b)) },
		fabric.AtomicLXor:    func(a, b, _ *big.Int) *big.Int { return b2(nz(a) != nz(b)) },
		fabric.AtomicBOr:     func(a, b, _ *big.Int) *big.Int { return new(big.Int).Or(u(a), u(b)) },
		fabric.AtomicBAnd:    func(a, b, _ *big.Int) *big.Int { return new(big.Int).And(u(a), u(b)) },
		fabric.AtomicBXor:    func(a, b, _ *big.Int) *big.Int { return new(big.Int).Xor(u(a), u(b)) },
		fabric.AtomicRead:    func(a, _, _ *big.Int) *big.Int { return a },
		fabric.AtomicWrite:   func(_, b, _ *big.Int) *big.Int { return b },
		fabric.AtomicCSwap:   func(a, b, c *big.Int) *big.Int { return pick(c.Cmp(a) == 0, b, a) },
		fabric.AtomicCSwapNE: func(a, b, c *big.Int) *big.Int { return pick(c.Cmp(a) != 0, b, a) },
		fabric.AtomicCSwapLE: func(a, b, c *big.Int) *big.Int { return pick(c.Cmp(a) <= 0, b, a) },
		fabric.AtomicCSwapLT: func(a, b, c *big.Int) *big.Int { return pick(c.Cmp(a) < 0, b, a) },
		fabric.AtomicCSwapGE: func(a, b, c *big.Int) *big.Int { return pick(c.Cmp(a) >= 0, b, a) },
		fabric.AtomicCSwapGT: func(a, b, c *big.Int) *big.Int { return pick(c.Cmp(a) > 0, b, a) },
		fabric.AtomicMSwap: func(a, b, c *big.Int) *big.Int {
			keep := new(big.Int).AndNot(u(a), u(c))
			return keep.Or(keep, new(big.Int).And(u(b), u(c)))
		},
	}
	pow := func(n uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), n) }
	hi, lo := new(big.Int).Sub(mod, big.NewInt(1)), new(big.Int)
	if signed {
		hi = new(big.Int).Sub(pow(127), big.NewInt(1))
		lo = new(big.Int).Neg(pow(127))
	}
	n := big.NewInt
	targets := []*big.Int{n(5), n(-3), n(0), hi, lo, new(big.Int).Add(pow(70), n(100))}
	operands := []*big.Int{n(7), n(0), n(0), n(1), n(-1), new(big.Int).Sub(pow(64), n(100))}
	compares := []*big.Int{n(5), n(-4), n(1), n(0), lo, new(big.Int).Add(pow(70), n(101))}
	return refType{
		size: 16,
		apply: func(op fabric.AtomicOp, a, b, c []byte) ([]byte, bool) {
			f := ops[op]
			if f == nil {
				return nil, false
			}
			return enc(f(dec(a), dec(b), dec(c))), true
		},
		vec: func(i int) ([]byte, []byte, []byte) { return enc(targets[i]), enc(operands[i]), enc(compares[i]) },
	}
}

type float interface{ ~float32 | ~float64 }

// floatRef is the reference of FI_FLOAT (size 4) or FI_DOUBLE: C's
// operators, IEEE 754 (the logical operations are C's too: a float is
// true when it is not zero).
func floatRef[T float](size int) refType {
	ops := ordered[T]()
	dec := func(p []byte) T {
		if size == 4 {
			return T(math.Float32frombits(binary.LittleEndian.Uint32(p)))
		}
		return T(math.Float64frombits(binary.LittleEndian.Uint64(p)))
	}
	enc := func(v T) []byte {
		p := make([]byte, size)
		if size == 4 {
			binary.LittleEndian.PutUint32(p, math.Float32bits(float32(v)))
		} else {
			binary.LittleEndian.PutUint64(p, math.Float64bits(float64(v)))
		}
		return p
	}
	targets := []T{1.5, -2.25, 0, 1e30, -7, 100}
	operands := []T{0.25, 3, 0, 1e10, -7, -100}
	compares := []T{1.5, -3, 1, 0, -7, 101}
	return refType{
		size: size,
		apply: func(op fabric.AtomicOp, a, b, c []byte) ([]byte, bool) {
			f := ops[op]
			if f == nil {
				return nil, false
			}
			return enc(f(dec(a), dec(b), dec(c))), true
		},
		vec: func(i int) ([]byte, []byte, []byte) { return enc(targets[i]), enc(operands[i]), enc(compares[i]) },
	}
}

// complexRef is the reference of FI_FLOAT_COMPLEX (size 8) or
// FI_DOUBLE_COMPLEX: (real, imaginary) pairs; complex numbers have sums,
// products and equality, no order.
func complexRef[T ~complex64 | ~complex128](size int) refType {
	ops := map[fabric.AtomicOp]func(a, b, c T) T{
		fabric.AtomicSum:     func(a, b, _ T) T { return a + b },
		fabric.AtomicProd:    func(a, b, _ T) T { return a * b },
		fabric.AtomicRead:    func(a, _, _ T) T { return a },
		fabric.AtomicWrite:   func(_, b, _ T) T { return b },
		fabric.AtomicCSwap:   func(a, b, c T) T { return pick(c == a, b, a) },
		fabric.AtomicCSwapNE: func(a, b, c T) T { return pick(c != a, b, a) },
	}
	half := size / 2
	part := func(p []byte) float64 {
		if half == 4 {
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(p))
	}
	put := func(p []byte, v float64) {
		if half == 4 {
			binary.LittleEndian.PutUint32(p, math.Float32bits(float32(v)))
		} else {
			binary.LittleEndian.PutUint64(p, math.Float64bits(v))
		}
	}
	dec := func(p []byte) T { return T(complex(part(p), part(p[half:]))) }
	enc := func(v T) []byte {
		p := make([]byte, size)
		c := complex128(v)
		put(p, real(c))
		put(p[half:], imag(c))
		return p
	}
	// Small dyadic parts keep every product exact.
	targets := []T{1 + 2i, -3 + 0.5i, 0, 2 - 1i, 4 + 4i, 0.5 + 0.25i}
	operands := []T{0.5 + 1i, 2, 0, -1 + 1i, 4 + 4i, 8 - 2i}
	compares := []T{1 + 2i, 0, 1, 2 - 1i, 4 + 4i, 0}
	return refType{
		size: size,
		apply: func(op fabric.AtomicOp, a, b, c []byte) ([]byte, bool) {
			f := ops[op]
			if f == nil {
				return nil, false
			}
			return enc(f(dec(a), dec(b), dec(c))), true
		},
		vec: func(i int) ([]byte, []byte, []byte) { return enc(targets[i]), enc(operands[i]), enc(compares[i]) },
	}
}
