package srx

import (
	"bytes"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// bufPeer is fakePeer that shows the owner the first held bytes of each
// queued message (provider.BufferedPeer); held < 0 shows all of it.
type bufPeer struct {
	*fakePeer
	held int
}

func (p *bufPeer) Buffered(e *provider.RxEntry) []byte {
	m := e.PeerContext.(*peerMsg)
	if p.held >= 0 && p.held < len(m.payload) {
		return m.payload[:p.held]
	}
	return m.payload
}

// send delivers a message from the peer: into a posted receive, or queued.
func (p *bufPeer) send(t *testing.T, tagged bool, tag uint64, payload []byte) {
	t.Helper()
	var e *provider.RxEntry
	var err error
	if tagged {
		e, err = p.q.GetTag(provider.AddrUnspec, uint64(len(payload)), tag)
	} else {
		e, err = p.q.GetMsg(provider.AddrUnspec, uint64(len(payload)))
	}
	switch err {
	case nil:
		n, olen := Deliver(e, payload)
		Complete(p.cq, p.cntr, e, n, olen, provider.AddrNotAvail)
		p.q.FreeEntry(e)
	case provider.ENOENT:
		e.Peer = p
		e.PeerContext = &peerMsg{payload: append([]byte(nil), payload...), src: provider.AddrNotAvail}
		if tagged {
			err = p.q.QueueTag(e)
		} else {
			err = p.q.QueueMsg(e)
		}
		if err != nil {
			t.Fatalf("queue: %v", err)
		}
	default:
		t.Fatalf("get: %v", err)
	}
}

type testRC struct {
	ref    BufRef
	ctx    any
	tagged bool
}

func bufQueue(min, limit uint64, held int) (*Queue, *bufPeer) {
	q := tq(Config{})
	q.SetBuffered(&BufConfig{Min: min, Limit: limit, Context: func(ref BufRef, ctx any, tagged bool) any {
		return &testRC{ref: ref, ctx: ctx, tagged: tagged}
	}})
	return q, &bufPeer{fakePeer: newPeer(q), held: held}
}

func report(t *testing.T, p *bufPeer) (provider.CQEntry, *testRC) {
	t.Helper()
	c := mustOne(t, p.cq.take())
	rc, ok := c.OpContext.(*testRC)
	if !ok {
		t.Fatalf("report context %T", c.OpContext)
	}
	return c, rc
}

func claimMsg(q *Queue, rc *testRC, buf []byte, ctx any, disc bool) error {
	m := &provider.Msg{Buf: buf, Context: ctx, Flags: provider.FlagCompletion}
	return q.ClaimBuffered(rc.ref, m, rc.tagged, disc)
}

func TestBufferedReportClaimDiscard(t *testing.T) {
	q, p := bufQueue(0, 1024, -1)
	if mn, lim, on := q.BufferedLimits(); !on || mn != 0 || lim != 1024 {
		t.Fatalf("BufferedLimits = %d %d %v", mn, lim, on)
	}
	p.send(t, false, 0, []byte("hello"))
	c, rc := report(t, p)
	if rc.ctx != nil || rc.tagged || string(c.Buf) != "hello" || c.Len != 5 ||
		c.Flags != provider.FlagMsg|provider.FlagRecv {
		t.Fatalf("report %+v %+v", c, rc)
	}
	if q.Buffered() != 1 {
		t.Fatalf("%d buffered", q.Buffered())
	}
	buf := make([]byte, 8)
	if err := claimMsg(q, rc, buf, "app", false); err != nil {
		t.Fatal(err)
	}
	c = mustOne(t, p.cq.take())
	if c.OpContext != "app" || c.Flags&provider.FlagClaim == 0 || c.Len != 5 || string(buf[:5]) != "hello" {
		t.Fatalf("claim completion %+v", c)
	}
	if err := claimMsg(q, rc, buf, "app", false); err != provider.EINVAL {
		t.Fatalf("second claim = %v, want EINVAL", err)
	}
	p.send(t, false, 0, []byte("bye"))
	_, rc = report(t, p)
	if err := claimMsg(q, rc, nil, nil, true); err != nil {
		t.Fatal(err)
	}
	if r := p.cq.take(); len(r.ok)+len(r.err) != 0 || len(p.discarded) != 1 || string(p.discarded[0]) != "bye" {
		t.Fatalf("discard: %+v, discarded %q", r, p.discarded)
	}
	if err := claimMsg(q, rc, nil, nil, true); err != provider.EINVAL {
		t.Fatalf("second discard = %v, want EINVAL", err)
	}
	if err := q.ClaimBuffered(BufRef{}, &provider.Msg{}, false, false); err != provider.EINVAL {
		t.Fatalf("zero ref = %v, want EINVAL", err)
	}
	if q.Buffered() != 0 {
		t.Fatalf("%d buffered after claim and discard", q.Buffered())
	}
	if p, u := q.Counts(); p != 0 || u != 0 {
		t.Fatalf("counts %d %d", p, u)
	}
}

// A stale reference never reaches a later message in a recycled entry.
func TestBufferedStaleRefAfterReuse(t *testing.T) {
	q, p := bufQueue(0, 1024, -1)
	p.send(t, false, 0, []byte("one"))
	_, old := report(t, p)
	if err := claimMsg(q, old, nil, nil, true); err != nil {
		t.Fatal(err)
	}
	p.send(t, false, 0, []byte("two")) // likely the same pooled entry
	_, cur := report(t, p)
	if err := claimMsg(q, old, make([]byte, 4), nil, false); err != provider.EINVAL {
		t.Fatalf("stale claim = %v, want EINVAL", err)
	}
	if err := claimMsg(q, cur, make([]byte, 4), nil, false); err != nil {
		t.Fatalf("current claim: %v", err)
	}
}

func TestBufferedLimitAndMore(t *testing.T) {
	q, p := bufQueue(2, 4, -1)
	p.send(t, false, 0, []byte("abcdefgh"))
	c, rc := report(t, p)
	if c.Flags&provider.FlagMore == 0 || string(c.Buf) != "abcd" || c.Len != 8 {
		t.Fatalf("report beyond the limit %+v", c)
	}
	buf := make([]byte, 8)
	if err := claimMsg(q, rc, buf, nil, false); err != nil {
		t.Fatal(err)
	}
	if c := mustOne(t, p.cq.take()); c.Flags&provider.FlagMore != 0 || string(buf) != "abcdefgh" {
		t.Fatalf("claim %+v %q", c, buf)
	}
	// A peer holding only part of the message: FI_MORE with what it holds.
	p.held = 3
	p.send(t, false, 0, []byte("0123456789"))
	c, _ = report(t, p)
	if c.Flags&provider.FlagMore == 0 || string(c.Buf) != "012" || c.Len != 10 {
		t.Fatalf("partial report %+v", c)
	}
	// A message within the limit is shown whole.
	p.held = -1
	p.send(t, false, 0, []byte("xyz"))
	if c, _ := report(t, p); c.Flags&provider.FlagMore != 0 || string(c.Buf) != "xyz" {
		t.Fatalf("small report %+v", c)
	}
}

func TestBufferedPostedReceiveFirst(t *testing.T) {
	q, p := bufQueue(0, 64, -1)
	buf := make([]byte, 8)
	post(t, q, buf, "posted", false, 0, 0, 0)
	p.send(t, false, 0, []byte("direct"))
	if c := mustOne(t, p.cq.take()); c.OpContext != "posted" || string(buf[:c.Len]) != "direct" {
		t.Fatalf("posted receive %+v", c)
	}
	if q.Buffered() != 0 {
		t.Fatal("a message taken by a posted receive was reported")
	}
}

func TestBufferedTagged(t *testing.T) {
	q, p := bufQueue(0, 64, -1)
	// A posted tag (its buffer ignored) is reported with its context.
	if err := q.Post(&provider.Msg{Addr: provider.AddrUnspec, Context: "t1", Tag: 1,
		Flags: provider.FlagCompletion}, true); err != nil {
		t.Fatal(err)
	}
	p.send(t, true, 1, []byte("one"))
	c, rc := report(t, p)
	if !rc.tagged || rc.ctx != "t1" || c.Tag != 1 || c.Flags&provider.FlagTagged == 0 || string(c.Buf) != "one" {
		t.Fatalf("tagged report %+v %+v", c, rc)
	}
	if err := q.ClaimBuffered(rc.ref, &provider.Msg{Buf: make([]byte, 4)}, false, false); err != provider.EINVAL {
		t.Fatalf("untagged claim of a tagged report = %v, want EINVAL", err)
	}
	buf := make([]byte, 4)
	if err := claimMsg(q, rc, buf, rc.ctx, false); err != nil {
		t.Fatal(err)
	}
	if c := mustOne(t, p.cq.take()); c.OpContext != "t1" || c.Flags&provider.FlagClaim == 0 || c.Tag != 1 {
		t.Fatalf("tagged claim %+v", c)
	}
	// An unexpected tagged message waits for its tag.
	p.send(t, true, 2, []byte("two"))
	if r := p.cq.take(); len(r.ok) != 0 {
		t.Fatalf("unexpected tag reported before its receive: %+v", r.ok)
	}
	if err := q.Post(&provider.Msg{Addr: provider.AddrUnspec, Context: "t2", Tag: 2}, true); err != nil {
		t.Fatal(err)
	}
	if c, rc := report(t, p); rc.ctx != "t2" || string(c.Buf) != "two" {
		t.Fatalf("late tag report %+v %+v", c, rc)
	}
}

// Close discards what is held: reported and unexpected messages alike go
// back to their peer, and later claims answer EBADF.
func TestBufferedCloseReleases(t *testing.T) {
	q, p := bufQueue(0, 64, -1)
	var rcs []*testRC
	for i := 0; i < 3; i++ {
		p.send(t, false, 0, []byte{byte(i)})
		_, rc := report(t, p)
		rcs = append(rcs, rc)
	}
	p.send(t, true, 9, []byte("tag"))
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if len(p.discarded) != 4 {
		t.Fatalf("%d messages released at close, want 4", len(p.discarded))
	}
	if err := claimMsg(q, rcs[0], make([]byte, 1), nil, false); err != provider.EBADF {
		t.Fatalf("claim after close = %v, want EBADF", err)
	}
	if q.Buffered() != 0 {
		t.Fatalf("%d held after close", q.Buffered())
	}
}

// A peer that frees a reported message (its connection failed) takes it
// out of the queue: a later claim answers EINVAL.
func TestBufferedPeerFrees(t *testing.T) {
	q, p := bufQueue(0, 64, -1)
	p.send(t, false, 0, []byte("x"))
	_, rc := report(t, p)
	q.FreeEntry(&rc.ref.e.rx)
	if q.Buffered() != 0 {
		t.Fatal("freed entry still held")
	}
	if err := claimMsg(q, rc, make([]byte, 1), nil, false); err != provider.EINVAL {
		t.Fatalf("claim of a freed message = %v, want EINVAL", err)
	}
}

// Config.MaxUnexpected counts reported messages: the peer is refused
// (EAGAIN) until one is claimed or discarded.
func TestBufferedBounded(t *testing.T) {
	q := tq(Config{MaxUnexpected: 2})
	q.SetBuffered(&BufConfig{Limit: 64})
	p := &bufPeer{fakePeer: newPeer(q), held: -1}
	p.send(t, false, 0, []byte("a"))
	p.send(t, false, 0, []byte("b"))
	if _, err := q.GetMsg(provider.AddrUnspec, 1); err != provider.EAGAIN {
		t.Fatalf("third message: %v, want EAGAIN", err)
	}
	r := p.cq.take()
	if len(r.ok) != 2 {
		t.Fatalf("%d reports", len(r.ok))
	}
	ref := r.ok[0].OpContext.(BufRef) // no Context function: the BufRef itself
	if err := q.ClaimBuffered(ref, &provider.Msg{}, false, true); err != nil {
		t.Fatal(err)
	}
	p.send(t, false, 0, []byte("c"))
	if c := mustOne(t, p.cq.take()); !bytes.Equal(c.Buf, []byte("c")) {
		t.Fatalf("report %+v", c)
	}
}

// With resource management a report holds room in the CQ from GetMsg on:
// no room, no report (EAGAIN to the peer), and a claim needs room too.
func TestBufferedRM(t *testing.T) {
	q, c := rmQueue(t, 1)
	q.SetBuffered(&BufConfig{Limit: 64})
	fp := &fakePeer{q: q, cq: &fakeCQ{}, cntr: &fakeCntr{}}
	p := &bufPeer{fakePeer: fp, held: -1}
	e, err := q.GetMsg(provider.AddrUnspec, 1)
	if err != provider.ENOENT {
		t.Fatalf("GetMsg = %v", err)
	}
	if !c.Full() {
		t.Fatal("a message to be reported holds no room")
	}
	if _, err := q.GetMsg(provider.AddrUnspec, 1); err != provider.EAGAIN {
		t.Fatalf("GetMsg with the CQ full = %v, want EAGAIN", err)
	}
	e.Peer = p
	e.PeerContext = &peerMsg{payload: []byte("r")}
	if err := q.QueueMsg(e); err != nil {
		t.Fatal(err)
	}
	ents := make([]provider.CQEntry, 2)
	// The CQ is full with the report: the claim waits for room.
	q.mu.Lock()
	ref := BufRef{e: q.buf.list.head, gen: q.buf.list.head.seq}
	q.mu.Unlock()
	if err := q.ClaimBuffered(ref, &provider.Msg{Buf: make([]byte, 1), Flags: provider.FlagCompletion}, false, false); err != provider.EAGAIN {
		t.Fatalf("claim with the CQ full = %v, want EAGAIN", err)
	}
	if n, err := c.Read(ents); n != 1 || err != nil || string(ents[0].Buf) != "r" {
		t.Fatalf("report read %d %v %+v", n, err, ents[0])
	}
	if err := q.ClaimBuffered(ref, &provider.Msg{Buf: make([]byte, 1), Flags: provider.FlagCompletion}, false, false); err != nil {
		t.Fatalf("claim: %v", err)
	}
}

// waitPeer is a bufPeer that holds no data of a queued message until
// arrive (provider.BufferedWaiter).
type waitPeer struct {
	*bufPeer
	ready map[*peerMsg]bool // entries are recycled: keyed by message
}

func (p *waitPeer) BufferedReady(e *provider.RxEntry) bool { return p.ready[e.PeerContext.(*peerMsg)] }

// arrive makes the data of queued message e held, and tells q.
func (p *waitPeer) arrive(q *Queue, e *provider.RxEntry) {
	p.ready[e.PeerContext.(*peerMsg)] = true
	q.BufferedArrived(e)
}

// A message queued before its peer holds its first bytes is listed but
// reported only when the peer says they arrived, with its context; what
// arrives for an entry not waiting (or twice) changes nothing; close
// releases one still waiting.
func TestBufferedWaitsForPeerData(t *testing.T) {
	q, bp := bufQueue(0, 64, -1)
	p := &waitPeer{bufPeer: bp, ready: map[*peerMsg]bool{}}
	var queued []*provider.RxEntry
	sendWait := func(tagged bool, tag uint64, payload string) {
		t.Helper()
		var e *provider.RxEntry
		var err error
		if tagged {
			e, err = q.GetTag(provider.AddrUnspec, uint64(len(payload)), tag)
		} else {
			e, err = q.GetMsg(provider.AddrUnspec, uint64(len(payload)))
		}
		if err != provider.ENOENT {
			t.Fatalf("get: %v", err)
		}
		e.Peer = p
		e.PeerContext = &peerMsg{payload: []byte(payload), src: provider.AddrNotAvail}
		if tagged {
			err = q.QueueTag(e)
		} else {
			err = q.QueueMsg(e)
		}
		if err != nil {
			t.Fatal(err)
		}
		queued = append(queued, e)
	}
	sendWait(false, 0, "later")
	if r := p.cq.take(); len(r.ok) != 0 || q.Buffered() != 1 {
		t.Fatalf("reported before the peer held its data: %+v (%d held)", r.ok, q.Buffered())
	}
	p.arrive(q, queued[0])
	c, rc := report(t, p.bufPeer)
	if string(c.Buf) != "later" || rc.ctx != nil {
		t.Fatalf("report %+v %+v", c, rc)
	}
	q.BufferedArrived(queued[0]) // not waiting any more: nothing
	q.BufferedArrived(nil)
	if r := p.cq.take(); len(r.ok)+len(r.err) != 0 {
		t.Fatalf("a second arrival wrote %+v", r)
	}
	buf := make([]byte, 8)
	if err := claimMsg(q, rc, buf, "c", false); err != nil {
		t.Fatal(err)
	}
	if c := mustOne(t, p.cq.take()); c.OpContext != "c" || string(buf[:c.Len]) != "later" {
		t.Fatalf("claim %+v", c)
	}
	// A tagged one keeps its receive's context while it waits.
	sendWait(true, 3, "tagged")
	if err := q.Post(&provider.Msg{Addr: provider.AddrUnspec, Context: "t3", Tag: 3}, true); err != nil {
		t.Fatal(err)
	}
	if r := p.cq.take(); len(r.ok) != 0 {
		t.Fatalf("tagged report before the data: %+v", r.ok)
	}
	p.arrive(q, queued[1])
	if c, rc := report(t, p.bufPeer); rc.ctx != "t3" || string(c.Buf) != "tagged" {
		t.Fatalf("tagged report %+v %+v", c, rc)
	}
	// Close releases one still waiting.
	sendWait(false, 0, "never")
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(p.discarded); n != 2 || string(p.discarded[1]) != "never" {
		t.Fatalf("released at close: %q", p.discarded)
	}
}
