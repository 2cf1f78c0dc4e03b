package fabtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// rmaCases lists the fi_rma(3) behaviours, in the order they run. Each
// needs FI_RMA (and is skipped for a target that does not claim it); the
// counter cases need FI_RMA_EVENT too.
//
// Memory a case exposes to its peer is filled before it is registered and
// is looked at again only after settle: registration and the receive
// completion of settle are what order the test's accesses against the
// target's, for the race detector as well (a provider's own ordering, a
// socket or a shared-memory ring, is invisible to it).
var rmaCases = []testCase{
	{"fi_rma/write_then_read_back_every_size", rmaWriteThenReadBackEverySize},
	{"fi_rma/writev_readv_scatter_gather", rmaWritevReadvScatterGather},
	{"fi_rma/writemsg_readmsg_several_regions", rmaWritemsgReadmsgSeveralRegions},
	{"fi_rma/writedata_remote_cq_data_at_target", rmaWritedataRemoteCqDataAtTarget},
	{"fi_rma/inject_write_buffer_reusable_no_completion", rmaInjectWriteBufferReusableNoCompletion},
	{"fi_rma/key_access_range_errors_leave_target_untouched", rmaKeyAccessRangeErrorsLeaveTargetUntouched},
	{"fi_rma/rma_event_endpoint_counters", rmaRMAEventEndpointCounters},
	{"fi_rma/mr_counter_counts_its_region_only", rmaMRCounterCountsItsRegionOnly},
	{"fi_rma/read_write_writedata_from_separate_process", rmaReadWriteWritedataFromSeparateProcess},
}

// region is memory of a target env registered for remote access.
type region struct {
	mr   *fabric.MR
	mem  []byte
	addr uint64 // the remote address of mem[0]
	key  uint64
}

// expose registers mem, already filled by the caller, for remote access
// with key (the provider's own key under FI_MR_PROV_KEY); it is closed at
// cleanup.
func (e *env) expose(mem []byte, access fabric.Flags, key uint64) *region {
	e.t.Helper()
	return e.exposeCounted(mem, access, key, nil)
}

// exposeCounted is expose with counter c bound to the region for
// FI_REMOTE_WRITE (fi_mr_bind) when c is not nil.
func (e *env) exposeCounted(mem []byte, access fabric.Flags, key uint64, c *fabric.Cntr) *region {
	e.t.Helper()
	var flags fabric.Flags
	if c != nil && e.info.DomainAttr.MRMode&fabric.MRRMAEvent != 0 {
		flags = fabric.FlagRMAEvent
	}
	mr, err := e.dom.RegMR(mem, access, 0, key, flags)
	if err != nil {
		e.t.Fatalf("fi_mr_reg(%d bytes, %v, key %#x): %v", len(mem), access, key, err)
	}
	e.t.Cleanup(func() { closeOK(e.t, "mr", mr.Close()) })
	if c != nil {
		if err := mr.Bind(c, fabric.FlagRemoteWrite); err != nil {
			e.t.Fatalf("fi_mr_bind(counter, FI_REMOTE_WRITE): %v", err)
		}
		if err := mr.Enable(); err != nil {
			e.t.Fatalf("fi_mr_enable: %v", err)
		}
	}
	return &region{mr: mr, mem: mem, addr: mr.Address(), key: mr.Key()}
}

// unusedKey returns a key none of rs is registered with.
func unusedKey(rs ...*region) uint64 {
	k := uint64(0x7e57)
	for again := true; again; {
		again = false
		for _, r := range rs {
			if r.key == k {
				k++
				again = true
			}
		}
	}
	return k
}

// settleCtx is the receive context of settle's message.
var settleCtx = new(int)

// settle makes what target b did for earlier operations of a visible to
// the test: a message from a, sent after those operations completed at a
// (or, for inject writes, after the test saw their effect through a
// read), is received at b, and reading its completion orders the test
// after everything b's progress did before. b's receive CQ must hold no
// other entry.
func settle(t testing.TB, a, b *env, ab fabric.Addr) {
	t.Helper()
	buf := make([]byte, 8)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, settleCtx); err != nil {
		t.Fatalf("settle: recv: %v", err)
	}
	retry(t, "settle: send", func() error { return a.ep.Send([]byte("settle"), nil, ab, nil) }, a.txcq)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.OpContext != settleCtx || string(buf[:got.Len]) != "settle" {
		t.Fatalf("settle: receive %+v %+v", got, ee)
	}
	if _, ee := waitCQ(t, a.txcq, b.rxcq); ee != nil {
		t.Fatalf("settle: send completion %+v", ee)
	}
}

// waitOK waits for one successful completion on cq (driving others) and
// fails, saying what, on an error completion.
func waitOK(t testing.TB, what string, cq *fabric.CQ, others ...*fabric.CQ) fabric.CQEntry {
	t.Helper()
	got, ee := waitCQ(t, cq, others...)
	if ee != nil {
		t.Fatalf("%s: error completion %v %+v", what, ee.Err, ee)
	}
	return got
}

// waitDone waits for the successful completion of the operation with ctx
// on a's transmit CQ, driving b, and checks its flags.
func waitDone(t testing.TB, what string, a, b *env, ctx any, flags fabric.Flags) {
	t.Helper()
	got := waitOK(t, what, a.txcq, b.rxcq)
	if got.OpContext != ctx || got.Flags != flags {
		t.Fatalf("%s: completion %+v; want context %v, flags %v", what, got, ctx, flags)
	}
}

// waitFail waits for the error completion of the operation with ctx on
// a's transmit CQ, driving b. A remote access the target refuses (unknown
// key, missing access, range outside the region) completes with one of
// the errors libfabric providers use for it.
func waitFail(t testing.TB, what string, a, b *env, ctx any) {
	t.Helper()
	got, ee := waitCQ(t, a.txcq, b.rxcq)
	if ee == nil {
		t.Fatalf("%s: completed successfully (%+v); want an error completion", what, got)
	}
	if ee.OpContext != ctx {
		t.Fatalf("%s: error completion for context %v; want %v", what, ee.OpContext, ctx)
	}
	for _, want := range []error{fabric.ErrKeyRejected, fabric.ErrNoKey, fabric.ErrAccess, fabric.ErrInval} {
		if errors.Is(ee.Err, want) {
			return
		}
	}
	t.Fatalf("%s: error completion with %v; want FI_EKEYREJECTED, FI_ENOKEY, FI_EACCES or FI_EINVAL", what, ee.Err)
}

// sameMem fails when region memory got differs from want, naming the
// first differing byte.
func sameMem(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if i := firstDiff(got, want); i >= 0 {
		t.Fatalf("%s: target memory differs at byte %d of %d", what, i, len(want))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// rmaPair opens a pair with FI_RMA and caps, skipping a target that does
// not claim them.
func rmaPair(t *testing.T, tg Target, caps fabric.Caps) (a, b *env, ab fabric.Addr) {
	t.Helper()
	a, b, ab, _ = tg.pair(t, envOpts{caps: fabric.CapRMA | caps})
	return a, b, ab
}

const remoteRW = fabric.FlagRemoteRead | fabric.FlagRemoteWrite

func rmaWriteThenReadBackEverySize(t *testing.T, tg Target) {
	a, b, ab := rmaPair(t, tg, 0)
	const off = 7 // unaligned
	mem := pattern(make([]byte, off+1<<20+64), 1)
	want := bytes.Clone(mem)
	r := b.expose(mem, remoteRW, 0x5100)
	for k, n := range sizes(a.info.EPAttr.MaxMsgSize) {
		src := pattern(make([]byte, n), k+2)
		wctx, rctx := new(int), new(int)
		retry(t, "fi_write", func() error { return a.ep.RMAWrite(src, nil, ab, r.addr+off, r.key, wctx) }, a.txcq)
		waitDone(t, "fi_write", a, b, wctx, fabric.FlagRMA|fabric.FlagWrite)
		copy(want[off:], src)
		dst := bytes.Repeat([]byte{0xee}, n)
		retry(t, "fi_read", func() error { return a.ep.RMARead(dst, nil, ab, r.addr+off, r.key, rctx) }, a.txcq)
		waitDone(t, "fi_read", a, b, rctx, fabric.FlagRMA|fabric.FlagRead)
		if i := firstDiff(dst, src); i >= 0 {
			t.Fatalf("%d bytes: read back differs at byte %d", n, i)
		}
	}
	// A write without remote CQ data generates no event at the target.
	expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
	settle(t, a, b, ab)
	sameMem(t, "after the writes", mem, want)
}

func rmaWritevReadvScatterGather(t *testing.T, tg Target) {
	a, b, ab := rmaPair(t, tg, 0)
	mem := pattern(make([]byte, 8192), 3)
	want := bytes.Clone(mem)
	r := b.expose(mem, remoteRW, 0x5200)
	n := int(min(a.info.TxAttr.IOVLimit, 3))
	if n < 1 {
		t.Fatalf("tx iov_limit %d", a.info.TxAttr.IOVLimit)
	}
	iov := [][]byte{pattern(make([]byte, 1), 4), pattern(make([]byte, 100), 5), pattern(make([]byte, 3000), 6)}[:n]
	all := bytes.Join(iov, nil)
	ctx := new(int)
	retry(t, "fi_writev", func() error { return a.ep.RMAWriteV(iov, nil, ab, r.addr+5, r.key, ctx) }, a.txcq)
	waitDone(t, "fi_writev", a, b, ctx, fabric.FlagRMA|fabric.FlagWrite)
	copy(want[5:], all)
	// Read it back split differently: the last piece first in size.
	var back [][]byte
	rest := len(all)
	for i := n - 1; i > 0; i-- {
		back = append(back, make([]byte, len(iov[i])))
		rest -= len(iov[i])
	}
	back = append(back, make([]byte, rest))
	retry(t, "fi_readv", func() error { return a.ep.RMAReadV(back, nil, ab, r.addr+5, r.key, ctx) }, a.txcq)
	waitDone(t, "fi_readv", a, b, ctx, fabric.FlagRMA|fabric.FlagRead)
	if got := bytes.Join(back, nil); !bytes.Equal(got, all) {
		t.Fatalf("fi_readv gathered %d bytes differing at %d", len(got), firstDiff(got, all))
	}
	settle(t, a, b, ab)
	sameMem(t, "after fi_writev", mem, want)
}

func rmaWritemsgReadmsgSeveralRegions(t *testing.T, tg Target) {
	a, b, ab := rmaPair(t, tg, 0)
	m1, m2 := pattern(make([]byte, 4096), 7), pattern(make([]byte, 4096), 8)
	w1, w2 := bytes.Clone(m1), bytes.Clone(m2)
	r1, r2 := b.expose(m1, remoteRW, 0x5300), b.expose(m2, remoteRW, 0x5301)
	// Up to three remote pieces in two regions, out of address order.
	rma := []fabric.RMAIOV{{Addr: r1.addr + 10, Len: 50, Key: r1.key}, {Addr: r2.addr + 300, Len: 70, Key: r2.key},
		{Addr: r1.addr + 200, Len: 30, Key: r1.key}}
	dsts := [][]byte{w1[10:60], w2[300:370], w1[200:230]}
	nr := int(min(a.info.TxAttr.RMAIOVLimit, 3))
	if nr < 1 {
		t.Fatalf("rma_iov_limit %d", a.info.TxAttr.RMAIOVLimit)
	}
	rma, dsts = rma[:nr], dsts[:nr]
	var total uint64
	for _, p := range rma {
		total += p.Len
	}
	src := pattern(make([]byte, total), 9)
	local := [][]byte{src}
	if a.info.TxAttr.IOVLimit >= 2 {
		local = [][]byte{src[:total/3], src[total/3:]}
	}
	ctx := new(int)
	retry(t, "fi_writemsg", func() error {
		return a.ep.RMAWriteMsg(&fabric.Msg{IOV: local, Addr: ab, RMA: rma, Context: ctx}, fabric.FlagCompletion)
	}, a.txcq)
	waitDone(t, "fi_writemsg", a, b, ctx, fabric.FlagRMA|fabric.FlagWrite)
	rest := src
	for _, d := range dsts {
		rest = rest[copy(d, rest):]
	}
	back := make([]byte, total)
	retry(t, "fi_readmsg", func() error {
		return a.ep.RMAReadMsg(&fabric.Msg{IOV: [][]byte{back}, Addr: ab, RMA: rma, Context: ctx}, fabric.FlagCompletion)
	}, a.txcq)
	waitDone(t, "fi_readmsg", a, b, ctx, fabric.FlagRMA|fabric.FlagRead)
	if !bytes.Equal(back, src) {
		t.Fatalf("fi_readmsg over %d remote pieces differs at byte %d", nr, firstDiff(back, src))
	}
	settle(t, a, b, ab)
	sameMem(t, "first region after fi_writemsg", m1, w1)
	sameMem(t, "second region after fi_writemsg", m2, w2)
}

// cqDataMask is the mask of the remote CQ data a's domain carries, or
// skips when it carries none.
func cqDataMask(t *testing.T, e *env) uint64 {
	t.Helper()
	n := e.info.DomainAttr.CQDataSize
	switch {
	case n == 0:
		t.Skip("cq_data_size 0: no remote CQ data")
	case n >= 8:
		return ^uint64(0)
	}
	return 1<<(8*n) - 1
}

// waitRemoteData waits for the target completion of a write carrying
// remote CQ data.
func waitRemoteData(t testing.TB, what string, a, b *env, data uint64) {
	t.Helper()
	got := waitOK(t, what+" at the target", b.rxcq, a.txcq)
	const want = fabric.FlagRemoteWrite | fabric.FlagRemoteCQData
	if got.Flags&want != want || got.Flags&^(want|fabric.FlagRMA) != 0 || got.Data != data || got.OpContext != nil {
		t.Fatalf("%s: target completion %+v; want flags %v (FI_RMA allowed), data %#x, no context", what, got,
			want, data)
	}
}

func rmaWritedataRemoteCqDataAtTarget(t *testing.T, tg Target) {
	a, b, ab := rmaPair(t, tg, 0)
	mask := cqDataMask(t, a)
	mem := pattern(make([]byte, 1024), 10)
	want := bytes.Clone(mem)
	r := b.expose(mem, remoteRW, 0x5400)
	src := pattern(make([]byte, 33), 11)
	ctx := new(int)
	data := 0x0123456789abcdef & mask
	retry(t, "fi_writedata", func() error { return a.ep.RMAWriteData(src, nil, data, ab, r.addr+64, r.key, ctx) }, a.txcq)
	waitRemoteData(t, "fi_writedata", a, b, data)
	waitDone(t, "fi_writedata", a, b, ctx, fabric.FlagRMA|fabric.FlagWrite)
	copy(want[64:], src)
	if a.info.TxAttr.InjectSize >= 8 {
		inj := pattern(make([]byte, 8), 12)
		retry(t, "fi_inject_writedata", func() error {
			return a.ep.RMAInjectWriteData(inj, 0x77&mask, ab, r.addr+200, r.key)
		}, a.txcq)
		copy(want[200:], inj)
		clear(inj) // the buffer is the caller's again
		waitRemoteData(t, "fi_inject_writedata", a, b, 0x77&mask)
	}
	retry(t, "fi_writemsg with FI_REMOTE_CQ_DATA", func() error {
		return a.ep.RMAWriteMsg(&fabric.Msg{IOV: [][]byte{src[:5]}, Addr: ab, Context: ctx, Data: 0xfeed & mask,
			RMA: []fabric.RMAIOV{{Addr: r.addr + 500, Len: 5, Key: r.key}}}, fabric.FlagCompletion|fabric.FlagRemoteCQData)
	}, a.txcq)
	waitRemoteData(t, "fi_writemsg with FI_REMOTE_CQ_DATA", a, b, 0xfeed&mask)
	waitDone(t, "fi_writemsg with FI_REMOTE_CQ_DATA", a, b, ctx, fabric.FlagRMA|fabric.FlagWrite)
	copy(want[500:], src[:5])
	// The inject writes no completion at the initiator.
	expectEmpty(t, a.txcq, scaled(10*time.Millisecond), b.rxcq)
	settle(t, a, b, ab)
	sameMem(t, "after the writes with data", mem, want)
}

func rmaInjectWriteBufferReusableNoCompletion(t *testing.T, tg Target) {
	a, b, ab := rmaPair(t, tg, 0)
	n := int(min(a.info.TxAttr.InjectSize, 48))
	if n == 0 {
		t.Skip("inject_size 0")
	}
	mem := pattern(make([]byte, 256), 13)
	want := bytes.Clone(mem)
	r := b.expose(mem, remoteRW, 0x5500)
	src := pattern(make([]byte, n), 14)
	sent := bytes.Clone(src)
	retry(t, "fi_inject_write", func() error { return a.ep.RMAInjectWrite(src, ab, r.addr+3, r.key) }, a.txcq)
	copy(want[3:], sent)
	for i := range src {
		src[i] = 'x' // the buffer is the caller's again
	}
	expectEmpty(t, a.txcq, scaled(20*time.Millisecond), b.rxcq)
	readBackUntil(t, a, b, ab, r.addr+3, r.key, sent)
	// fi_writemsg with FI_INJECT: the buffer is free at return, and the
	// write still completes.
	ctx := new(int)
	copy(src, pattern(make([]byte, n), 15))
	sent2 := bytes.Clone(src)
	retry(t, "fi_writemsg with FI_INJECT", func() error {
		return a.ep.RMAWriteMsg(&fabric.Msg{IOV: [][]byte{src}, Addr: ab, Context: ctx,
			RMA: []fabric.RMAIOV{{Addr: r.addr + 100, Len: uint64(n), Key: r.key}}}, fabric.FlagInject|fabric.FlagCompletion)
	}, a.txcq)
	clear(src)
	waitDone(t, "fi_writemsg with FI_INJECT", a, b, ctx, fabric.FlagRMA|fabric.FlagWrite)
	copy(want[100:], sent2)
	readBackUntil(t, a, b, ab, r.addr+100, r.key, sent2)
	settle(t, a, b, ab)
	sameMem(t, "after the inject writes", mem, want)
}

// readBackUntil reads len(want) bytes at addr until they equal want (an
// inject write has no completion that says when it landed), bounded.
func readBackUntil(t testing.TB, a, b *env, ab fabric.Addr, addr, key uint64, want []byte) {
	t.Helper()
	got := make([]byte, len(want))
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		ctx := new(int)
		retry(t, "fi_read", func() error { return a.ep.RMARead(got, nil, ab, addr, key, ctx) }, a.txcq)
		waitDone(t, "fi_read", a, b, ctx, fabric.FlagRMA|fabric.FlagRead)
		if bytes.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("written data not readable at the target within %v", scaled(5*time.Second))
		}
	}
}

// rmaKeyAccessRangeErrorsLeaveTargetUntouched: on a reliable
// connectionless endpoint the target checks every remote access against
// its registrations before it touches memory, and its refusal reaches
// the initiator as an error completion of the operation. (A connected
// FI_EP_MSG endpoint may complete a write once it is sent, before the
// target has looked at it.)
func rmaKeyAccessRangeErrorsLeaveTargetUntouched(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, b, ab := rmaPair(t, tg, 0)
	const size = 4096
	rw := b.expose(pattern(make([]byte, size), 16), remoteRW, 0x5600)
	ro := b.expose(pattern(make([]byte, size), 17), fabric.FlagRemoteRead, 0x5601)
	wo := b.expose(pattern(make([]byte, size), 18), fabric.FlagRemoteWrite, 0x5602)
	ok := b.expose(make([]byte, 64), remoteRW, 0x5603)
	keep := [][]byte{bytes.Clone(rw.mem), bytes.Clone(ro.mem), bytes.Clone(wo.mem)}
	bad := unusedKey(rw, ro, wo, ok)
	src, dst := bytes.Repeat([]byte{'E'}, 16), make([]byte, 16)
	type fault struct {
		name string
		post func(ctx any) error
	}
	faults := []fault{
		{"fi_write with an unknown key", func(ctx any) error { return a.ep.RMAWrite(src, nil, ab, rw.addr, bad, ctx) }},
		{"fi_read with an unknown key", func(ctx any) error { return a.ep.RMARead(dst, nil, ab, rw.addr, bad, ctx) }},
		{"fi_write to a region without FI_REMOTE_WRITE", func(ctx any) error {
			return a.ep.RMAWrite(src, nil, ab, ro.addr, ro.key, ctx)
		}},
		{"fi_read from a region without FI_REMOTE_READ", func(ctx any) error {
			return a.ep.RMARead(dst, nil, ab, wo.addr, wo.key, ctx)
		}},
		{"fi_write across the region's end", func(ctx any) error {
			return a.ep.RMAWrite(src, nil, ab, rw.addr+size-8, rw.key, ctx)
		}},
		{"fi_write just past the region's end", func(ctx any) error {
			return a.ep.RMAWrite(src[:1], nil, ab, rw.addr+size, rw.key, ctx)
		}},
		{"fi_read across the region's end", func(ctx any) error {
			return a.ep.RMARead(dst, nil, ab, rw.addr+size-1, rw.key, ctx)
		}},
		{"fi_write below the region's start", func(ctx any) error {
			return a.ep.RMAWrite(src, nil, ab, rw.addr-8, rw.key, ctx)
		}},
		{"fi_write whose end wraps the address space", func(ctx any) error {
			return a.ep.RMAWrite(src, nil, ab, ^uint64(0)-7, rw.key, ctx)
		}},
		{"fi_writev across the region's end", func(ctx any) error {
			return a.ep.RMAWriteV([][]byte{src}, nil, ab, rw.addr+size-15, rw.key, ctx)
		}},
	}
	if a.info.DomainAttr.CQDataSize > 0 {
		faults = append(faults, fault{"fi_writedata with an unknown key", func(ctx any) error {
			return a.ep.RMAWriteData(src, nil, 1, ab, rw.addr, bad, ctx)
		}})
	}
	if a.info.TxAttr.RMAIOVLimit >= 2 {
		faults = append(faults, fault{"fi_writemsg with a valid and an out-of-range piece", func(ctx any) error {
			return a.ep.RMAWriteMsg(&fabric.Msg{IOV: [][]byte{src}, Addr: ab, Context: ctx, RMA: []fabric.RMAIOV{
				{Addr: rw.addr, Len: 8, Key: rw.key}, {Addr: rw.addr + size, Len: 8, Key: rw.key}}}, fabric.FlagCompletion)
		}}, fault{"fi_writemsg with a valid piece and one without access", func(ctx any) error {
			return a.ep.RMAWriteMsg(&fabric.Msg{IOV: [][]byte{src}, Addr: ab, Context: ctx, RMA: []fabric.RMAIOV{
				{Addr: rw.addr + 8, Len: 8, Key: rw.key}, {Addr: ro.addr, Len: 8, Key: ro.key}}}, fabric.FlagCompletion)
		}}, fault{"fi_readmsg with a valid piece and an unknown key", func(ctx any) error {
			return a.ep.RMAReadMsg(&fabric.Msg{IOV: [][]byte{dst}, Addr: ab, Context: ctx, RMA: []fabric.RMAIOV{
				{Addr: rw.addr, Len: 8, Key: rw.key}, {Addr: rw.addr, Len: 8, Key: bad}}}, fabric.FlagCompletion)
		}})
	}
	for i, f := range faults {
		ctx := new(int)
		retry(t, f.name, func() error { return f.post(ctx) }, a.txcq)
		waitFail(t, f.name, a, b, ctx)
		// The endpoint keeps working after the error.
		val := pattern(make([]byte, 8), i)
		okCtx := new(int)
		retry(t, "fi_write after "+f.name, func() error { return a.ep.RMAWrite(val, nil, ab, ok.addr, ok.key, okCtx) }, a.txcq)
		waitDone(t, "fi_write after "+f.name, a, b, okCtx, fabric.FlagRMA|fabric.FlagWrite)
		back := make([]byte, 8)
		retry(t, "fi_read after "+f.name, func() error { return a.ep.RMARead(back, nil, ab, ok.addr, ok.key, okCtx) }, a.txcq)
		waitDone(t, "fi_read after "+f.name, a, b, okCtx, fabric.FlagRMA|fabric.FlagRead)
		if !bytes.Equal(back, val) {
			t.Fatalf("after %s: read back %q; want %q", f.name, back, val)
		}
	}
	// A refused writedata delivers nothing at the target.
	expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
	settle(t, a, b, ab)
	for i, r := range []*region{rw, ro, wo} {
		sameMem(t, []string{"FI_REMOTE_READ|FI_REMOTE_WRITE region", "FI_REMOTE_READ region",
			"FI_REMOTE_WRITE region"}[i]+" after refused accesses", r.mem, keep[i])
	}
}

// rmaCntrs are the counters of one endpoint, one per kind of event
// (fi_cntr(3) bind flags).
type rmaCntrs struct {
	write, read, remoteWrite, remoteRead *fabric.Cntr
}

// bindRMACntrs returns an envOpts.bind hook that opens and binds FI_WRITE,
// FI_READ, FI_REMOTE_WRITE and FI_REMOTE_READ counters to each env, and the
// map in which it records them by domain.
func bindRMACntrs(t *testing.T) (func(e *env), map[*fabric.Domain]*rmaCntrs) {
	got := map[*fabric.Domain]*rmaCntrs{}
	return func(e *env) {
		t.Helper()
		open := func() *fabric.Cntr {
			c, err := e.dom.OpenCntr(nil)
			skipIfNotSupported(t, "fi_cntr_open", err)
			t.Cleanup(func() {
				// The endpoint, opened before, is closed after: close
				// it first (its own cleanup then finds it closed).
				closeOK(t, "endpoint", e.ep.Close())
				closeOK(t, "counter", c.Close())
			})
			return c
		}
		c := &rmaCntrs{write: open(), read: open(), remoteWrite: open(), remoteRead: open()}
		for _, b := range []struct {
			c *fabric.Cntr
			f fabric.Flags
		}{{c.write, fabric.FlagWrite}, {c.read, fabric.FlagRead}, {c.remoteWrite, fabric.FlagRemoteWrite},
			{c.remoteRead, fabric.FlagRemoteRead}} {
			if err := e.ep.BindCntr(b.c, b.f); err != nil {
				t.Fatalf("fi_ep_bind(counter, %v) on an FI_RMA_EVENT endpoint: %v", b.f, err)
			}
		}
		got[e.dom] = c
	}, got
}

// waitCntr reads c until it reaches v, driving cqs, bounded.
func waitCntr(t testing.TB, what string, c *fabric.Cntr, v uint64, cqs ...*fabric.CQ) {
	t.Helper()
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		n, err := c.Read()
		if err != nil {
			t.Fatalf("%s: fi_cntr_read: %v", what, err)
		}
		if n >= v {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: counter at %d; want %d within %v", what, n, v, scaled(5*time.Second))
		}
		for _, cq := range cqs {
			cq.Read(nil)
		}
	}
}

// cntrIs fails unless c reads v with error count e.
func cntrIs(t testing.TB, what string, c *fabric.Cntr, v, e uint64) {
	t.Helper()
	n, err1 := c.Read()
	ne, err2 := c.ReadErr()
	if n != v || ne != e || err1 != nil || err2 != nil {
		t.Fatalf("%s counter: %d, errors %d (%v %v); want %d, errors %d", what, n, ne, err1, err2, v, e)
	}
}

func rmaRMAEventEndpointCounters(t *testing.T, tg Target) {
	hook, cntrs := bindRMACntrs(t)
	a, b, ab, _ := tg.pair(t, envOpts{caps: fabric.CapRMA | fabric.CapRMAEvent, bind: hook})
	ca, cb := cntrs[a.dom], cntrs[b.dom]
	r := b.expose(make([]byte, 256), remoteRW, 0x5700)
	src, dst := pattern(make([]byte, 16), 19), make([]byte, 16)
	ctx := new(int)
	ops := []struct {
		name string
		post func() error
	}{
		{"fi_write", func() error { return a.ep.RMAWrite(src, nil, ab, r.addr, r.key, ctx) }},
		{"fi_writev", func() error { return a.ep.RMAWriteV([][]byte{src}, nil, ab, r.addr+16, r.key, ctx) }},
		{"fi_writemsg", func() error {
			return a.ep.RMAWriteMsg(&fabric.Msg{IOV: [][]byte{src}, Addr: ab, Context: ctx,
				RMA: []fabric.RMAIOV{{Addr: r.addr + 32, Len: 16, Key: r.key}}}, fabric.FlagCompletion)
		}},
		{"fi_read", func() error { return a.ep.RMARead(dst, nil, ab, r.addr, r.key, ctx) }},
		{"fi_readv", func() error { return a.ep.RMAReadV([][]byte{dst}, nil, ab, r.addr+16, r.key, ctx) }},
	}
	for _, op := range ops {
		retry(t, op.name, op.post, a.txcq)
		waitOK(t, op.name, a.txcq, b.rxcq)
	}
	waitCntr(t, "target FI_REMOTE_WRITE", cb.remoteWrite, 3, a.txcq, b.rxcq)
	waitCntr(t, "target FI_REMOTE_READ", cb.remoteRead, 2, a.txcq, b.rxcq)
	settle(t, a, b, ab)
	cntrIs(t, "initiator FI_WRITE", ca.write, 3, 0)
	cntrIs(t, "initiator FI_READ", ca.read, 2, 0)
	cntrIs(t, "target FI_REMOTE_WRITE", cb.remoteWrite, 3, 0)
	cntrIs(t, "target FI_REMOTE_READ", cb.remoteRead, 2, 0)
	cntrIs(t, "initiator FI_REMOTE_WRITE", ca.remoteWrite, 0, 0)
	cntrIs(t, "target FI_WRITE", cb.write, 0, 0)
	// An inject write counts at the target.
	retry(t, "fi_inject_write", func() error { return a.ep.RMAInjectWrite(src[:4], ab, r.addr+64, r.key) }, a.txcq)
	waitCntr(t, "target FI_REMOTE_WRITE after fi_inject_write", cb.remoteWrite, 4, a.txcq, b.rxcq)
	if tg.EPType == fabric.EPMsg {
		return // a refused write may complete successfully (see rmaKeyAccessRangeErrorsLeaveTargetUntouched)
	}
	// A refused write counts as an error at the initiator.
	retry(t, "fi_write with an unknown key", func() error {
		return a.ep.RMAWrite(src, nil, ab, r.addr, unusedKey(r), ctx)
	}, a.txcq)
	waitFail(t, "fi_write with an unknown key", a, b, ctx)
	settle(t, a, b, ab)
	n, _ := ca.write.Read()
	if e, _ := ca.write.ReadErr(); e != 1 || n < 3 || n > 4 {
		t.Fatalf("initiator FI_WRITE counter after a refused write: %d, errors %d; want 3 (4 if it counts the inject), errors 1", n, e)
	}
	cntrIs(t, "target FI_REMOTE_WRITE", cb.remoteWrite, 4, 0)
}

func rmaMRCounterCountsItsRegionOnly(t *testing.T, tg Target) {
	a, b, ab := rmaPair(t, tg, fabric.CapRMAEvent)
	cx, err := b.dom.OpenCntr(nil)
	skipIfNotSupported(t, "fi_cntr_open", err)
	t.Cleanup(func() { closeOK(t, "counter", cx.Close()) })
	cy, err := b.dom.OpenCntr(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "counter", cy.Close()) })
	x := b.exposeCounted(make([]byte, 128), remoteRW, 0x5800, cx)
	y := b.exposeCounted(make([]byte, 128), remoteRW, 0x5801, cy)
	src, dst := pattern(make([]byte, 16), 20), make([]byte, 16)
	ctx := new(int)
	for _, op := range []struct {
		name string
		post func() error
	}{
		{"fi_write to x", func() error { return a.ep.RMAWrite(src, nil, ab, x.addr, x.key, ctx) }},
		{"fi_writev to x", func() error { return a.ep.RMAWriteV([][]byte{src}, nil, ab, x.addr+16, x.key, ctx) }},
		{"fi_write to y", func() error { return a.ep.RMAWrite(src, nil, ab, y.addr, y.key, ctx) }},
		{"fi_read from x", func() error { return a.ep.RMARead(dst, nil, ab, x.addr, x.key, ctx) }},
	} {
		retry(t, op.name, op.post, a.txcq)
		waitOK(t, op.name, a.txcq, b.rxcq)
	}
	waitCntr(t, "x's counter", cx, 2, a.txcq)
	waitCntr(t, "y's counter", cy, 1, a.txcq)
	settle(t, a, b, ab)
	cntrIs(t, "x's FI_REMOTE_WRITE", cx, 2, 0)
	cntrIs(t, "y's FI_REMOTE_WRITE", cy, 1, 0)
}

// rmaProcHalf is half the region of the cross-process case.
const rmaProcHalf = 128 << 10

// rmaReadWriteWritedataFromSeparateProcess: another process reads the
// first half of a region (pattern 21), writes the second half (pattern
// 22), then sends 8 bytes with remote CQ data 0xfeed at the end; the
// target sees the data completion after the write.
func rmaReadWriteWritedataFromSeparateProcess(t *testing.T, tg Target) {
	connectionless(t, tg)
	b := tg.open(t, envOpts{caps: fabric.CapRMA})
	mask := cqDataMask(t, b)
	mem := make([]byte, 2*rmaProcHalf+8)
	pattern(mem[:rmaProcHalf], 21)
	r := b.expose(mem, remoteRW, 0x5f00)
	peer := append(bytes.Clone(b.addr), le64(r.addr, r.key)...)
	h := spawnHelper(t, tg, "rma-rw", peer, 1)
	deadline := time.Now().Add(scaled(30 * time.Second))
	var ent [1]fabric.CQEntry
	exited := false
	for {
		n, err := b.rxcq.Read(ent[:])
		if n == 1 {
			const want = fabric.FlagRemoteWrite | fabric.FlagRemoteCQData
			if ent[0].Flags&want != want || ent[0].Data != 0xfeed&mask {
				t.Fatalf("target completion %+v; want flags %v, data %#x", ent[0], want, 0xfeed&mask)
			}
			break
		}
		if err != nil && !errors.Is(err, fabric.ErrAgain) {
			var ee fabric.CQErrEntry
			b.rxcq.ReadErr(&ee)
			t.Fatalf("target CQ: %v %+v", err, ee)
		}
		if !exited {
			select {
			case err := <-h.done:
				h.report(t, err)
				exited = true
			default:
			}
		}
		if time.Now().After(deadline) || exited && t.Failed() {
			if !exited {
				h.kill(t)
			}
			t.Fatalf("no remote CQ data from the peer process")
		}
	}
	want := pattern(make([]byte, rmaProcHalf), 22)
	sameMem(t, "second half written by the peer process", mem[rmaProcHalf:2*rmaProcHalf], want)
	if !bytes.Equal(mem[2*rmaProcHalf:], le64(0x0123456789abcdef)) {
		t.Fatalf("writedata bytes %x", mem[2*rmaProcHalf:])
	}
	if exited {
		// The peer exited before its data completion was read: its
		// status is already reported (done delivers it once).
		return
	}
	select {
	case err := <-h.done:
		h.report(t, err)
	case <-time.After(scaled(10 * time.Second)):
		h.kill(t)
	}
}

// helperRMAReadWrite is the peer process of
// rmaReadWriteWritedataFromSeparateProcess: peer is the target's address
// followed by the region's remote address and key.
func helperRMAReadWrite(t *testing.T, tg Target, peer []byte) {
	if len(peer) < 16 {
		t.Fatalf("peer %x: want an address, a remote address and a key", peer)
	}
	name, tail := peer[:len(peer)-16], peer[len(peer)-16:]
	addr, key := binary.LittleEndian.Uint64(tail), binary.LittleEndian.Uint64(tail[8:])
	e := tg.open(t, envOpts{caps: fabric.CapRMA})
	dst := e.insert(name)
	ctx := new(int)
	got := make([]byte, rmaProcHalf)
	retry(t, "fi_read", func() error { return e.ep.RMARead(got, nil, dst, addr, key, ctx) }, e.txcq)
	waitOK(t, "fi_read", e.txcq)
	if i := firstDiff(got, pattern(make([]byte, rmaProcHalf), 21)); i >= 0 {
		t.Fatalf("read from the parent differs at byte %d", i)
	}
	src := pattern(make([]byte, rmaProcHalf), 22)
	retry(t, "fi_write", func() error { return e.ep.RMAWrite(src, nil, dst, addr+rmaProcHalf, key, ctx) }, e.txcq)
	waitOK(t, "fi_write", e.txcq)
	mask := cqDataMask(t, e)
	last := le64(0x0123456789abcdef)
	retry(t, "fi_writedata", func() error {
		return e.ep.RMAWriteData(last, nil, 0xfeed&mask, dst, addr+2*rmaProcHalf, key, ctx)
	}, e.txcq)
	waitOK(t, "fi_writedata", e.txcq)
}
