package shm

import (
	"bytes"
	"testing"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

// taggedRecv is a receive of TestDirectTaggedReceive and what it must get.
type taggedRecv struct {
	ctx       string
	from      provider.Addr
	tag, ign  uint64
	size      int
	wantLen   int
	wantTag   uint64
	wantTrunc bool
}

// TestDirectTaggedReceive: tagged messages that are inline or in one
// bounce buffer go straight into the receive GetTag would match (the
// direct path): a directed receive takes only its source's message and
// an earlier wildcard one the others, ignore bits widen a receive, a
// short buffer truncates (FI_ETRUNC), and each completion reports its
// tag and remote CQ data. Messages that find no receive, ask for
// delivery complete or go by CMA take the general path, and every
// message arrives once, intact.
func TestDirectTaggedReceive(t *testing.T) {
	a, acq, aav := testEPConfig(t, provider.ProgressManual, srx.Config{Tagged: true, Directed: true})
	b, bcq, bav := testEP(t)
	c, ccq, cav := testEP(t)
	ab, ac := insertName(t, aav, b.name), insertName(t, aav, c.name)
	ba, ca := insertName(t, bav, a.name), insertName(t, cav, a.name)
	if !a.needSrc {
		t.Fatal("a directed receive queue must make the endpoint look sources up")
	}
	rq := a.rq.(*srx.Queue)
	seg := SlotSize + 100 // one bounce buffer
	recvs := []taggedRecv{
		{ctx: "from c", from: ac, tag: 1, size: 64, wantLen: 4, wantTag: 1},
		{ctx: "any 1", from: provider.AddrUnspec, tag: 1, size: 64, wantLen: 4, wantTag: 1},
		{ctx: "short", from: provider.AddrUnspec, tag: 2, size: 10, wantLen: 10, wantTag: 2, wantTrunc: true},
		{ctx: "0x30-0x3f", from: ab, tag: 0x30, ign: 0x0f, size: 64, wantLen: 5, wantTag: 0x3a},
		{ctx: "segment", from: provider.AddrUnspec, tag: 4, size: seg, wantLen: seg, wantTag: 4},
		{ctx: "deliver", from: provider.AddrUnspec, tag: 5, size: 64, wantLen: 7, wantTag: 5},
	}
	bufs := map[string][]byte{}
	for _, r := range recvs {
		bufs[r.ctx] = make([]byte, r.size)
		m := &provider.Msg{Buf: bufs[r.ctx], Addr: r.from, Tag: r.tag, Ignore: r.ign, Context: r.ctx, Flags: provider.FlagCompletion}
		if err := rq.Post(m, true); err != nil {
			t.Fatal(err)
		}
	}
	type msg struct {
		from  *endpoint
		to    provider.Addr
		tag   uint64
		data  []byte
		flags provider.Flags
	}
	msgs := []msg{
		{b, ba, 1, []byte("b->1"), 0},                                // not c's: the wildcard receive
		{c, ca, 1, []byte("c->1"), 0},                                // the directed receive
		{b, ba, 2, patternBytes(40, 2), 0},                           // truncated
		{b, ba, 0x3a, []byte("b->3a"), 0},                            // ignore bits
		{b, ba, 4, patternBytes(seg, 4), 0},                          // one bounce buffer
		{b, ba, 5, []byte("deliver"), provider.FlagDeliveryComplete}, // ack asked: general path
		{c, ca, 9, []byte("nobody"), 0},                              // unexpected: general path
	}
	for i, m := range msgs {
		err := m.from.TSend(provider.Msg{Buf: m.data, Addr: m.to, Tag: m.tag, Data: uint64(100 + i),
			Flags: provider.FlagCompletion | provider.FlagRemoteCQData | m.flags, Context: i})
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		// One at a time, so that which receive each takes is decided
		// with only the receives above posted.
		if i < 6 {
			checkDirectTagged(t, i, recvs[[]int{1, 0, 2, 3, 4, 5}[i]], bufs, m.data, acq, a, b, c)
		}
		fromCQ := bcq
		if m.from == c {
			fromCQ = ccq
		}
		if e, ee := next(t, fromCQ, a, b, c); ee != nil || e.OpContext != i {
			t.Fatalf("message %d: send completion %+v %+v", i, e, ee)
		}
	}
	if got := a.rx.directRecv; got != 5 {
		t.Fatalf("%d messages took the direct path, want 5 (the first five)", got)
	}
	late := make([]byte, 16)
	if err := rq.Post(&provider.Msg{Buf: late, Addr: ac, Tag: 9, Context: "late", Flags: provider.FlagCompletion}, true); err != nil {
		t.Fatal(err)
	}
	if e, ee := next(t, acq, a, b, c); ee != nil || e.OpContext != "late" || string(late[:e.Len]) != "nobody" || e.Tag != 9 {
		t.Fatalf("unexpected message: %+v %+v", e, ee)
	}
}

// checkDirectTagged reads message i's receive completion from acq and
// checks it against r: context, length, FI_ETRUNC, tag, CQ data (100+i)
// and the bytes placed.
func checkDirectTagged(t *testing.T, i int, r taggedRecv, bufs map[string][]byte, data []byte, acq *cq.CQ, eps ...*endpoint) {
	t.Helper()
	e, ee := next(t, acq, eps...)
	var ctx any
	var n, olen, tag, cqData uint64
	switch {
	case ee != nil && (!r.wantTrunc || ee.Err != provider.ETRUNC):
		t.Fatalf("message %d: %+v", i, ee)
	case ee != nil:
		ctx, n, olen, tag, cqData = ee.OpContext, ee.Len, ee.Olen, ee.Tag, ee.Data
	case r.wantTrunc:
		t.Fatalf("message %d: %+v, want FI_ETRUNC", i, e)
	default:
		ctx, n, tag, cqData = e.OpContext, e.Len, e.Tag, e.Data
	}
	if ctx != r.ctx || n != uint64(r.wantLen) || tag != r.wantTag || cqData != uint64(100+i) ||
		(r.wantTrunc && olen != uint64(len(data)-r.size)) {
		t.Fatalf("message %d went to %v (%d bytes, %d more, tag %#x, data %d), want %q",
			i, ctx, n, olen, tag, cqData, r.ctx)
	}
	if !bytes.Equal(bufs[r.ctx][:n], data[:n]) {
		t.Fatalf("message %d: data differs", i)
	}
}
