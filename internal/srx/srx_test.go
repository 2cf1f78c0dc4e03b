package srx

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// ---- fakes ----

type cqRec struct {
	ok  []provider.CQEntry
	src []provider.Addr
	err []provider.CQErrEntry
}

type fakeCQ struct {
	mu sync.Mutex
	cqRec
}

func (c *fakeCQ) Write(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, src provider.Addr) error {
	c.mu.Lock()
	c.ok = append(c.ok, provider.CQEntry{OpContext: ctx, Flags: flags, Len: length, Buf: buf, Data: data, Tag: tag})
	c.src = append(c.src, src)
	c.mu.Unlock()
	return nil
}

func (c *fakeCQ) WriteErr(e *provider.CQErrEntry) error {
	c.mu.Lock()
	c.err = append(c.err, *e)
	c.mu.Unlock()
	return nil
}

func (c *fakeCQ) take() cqRec {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.cqRec
	c.cqRec = cqRec{}
	return r
}

type fakeCntr struct {
	mu       sync.Mutex
	val, err int
}

func (c *fakeCntr) Inc()    { c.mu.Lock(); c.val++; c.mu.Unlock() }
func (c *fakeCntr) IncErr() { c.mu.Lock(); c.err++; c.mu.Unlock() }

type peerMsg struct {
	payload []byte
	src     provider.Addr
}

// fakePeer plays the peer provider: it delivers expected messages at once
// and buffers unexpected ones until the owner starts or discards them.
type fakePeer struct {
	q    *Queue
	cq   *fakeCQ
	cntr *fakeCntr

	mu        sync.Mutex
	discarded [][]byte
	started   int
}

func newPeer(q *Queue) *fakePeer {
	p := &fakePeer{q: q, cq: &fakeCQ{}, cntr: &fakeCntr{}}
	q.SetCompletion(p.cq, p.cntr)
	return p
}

func (p *fakePeer) send(tagged bool, src provider.Addr, tag uint64, payload []byte) error {
	return p.sendData(tagged, src, tag, payload, nil)
}

func (p *fakePeer) sendData(tagged bool, src provider.Addr, tag uint64, payload []byte, data *uint64) error {
	var e *provider.RxEntry
	var err error
	if tagged {
		e, err = p.q.GetTag(src, uint64(len(payload)), tag)
	} else {
		e, err = p.q.GetMsg(src, uint64(len(payload)))
	}
	switch err {
	case nil:
		if data != nil {
			e.CQData = *data
			e.Flags |= provider.FlagRemoteCQData
		}
		n, olen := Deliver(e, payload)
		Complete(p.cq, p.cntr, e, n, olen, src)
		p.q.FreeEntry(e)
		return nil
	case provider.ENOENT:
		e.Peer = p
		e.PeerContext = &peerMsg{payload: append([]byte(nil), payload...), src: src}
		if data != nil {
			e.CQData = *data
			e.Flags |= provider.FlagRemoteCQData
		}
		if tagged {
			return p.q.QueueTag(e)
		}
		return p.q.QueueMsg(e)
	}
	return err
}

func (p *fakePeer) startAny(e *provider.RxEntry) error {
	m := e.PeerContext.(*peerMsg)
	n, olen := Deliver(e, m.payload)
	Complete(p.cq, p.cntr, e, n, olen, m.src)
	p.mu.Lock()
	p.started++
	p.mu.Unlock()
	p.q.FreeEntry(e)
	return nil
}

func (p *fakePeer) discardAny(e *provider.RxEntry) error {
	m := e.PeerContext.(*peerMsg)
	p.mu.Lock()
	p.discarded = append(p.discarded, m.payload)
	p.mu.Unlock()
	p.q.FreeEntry(e)
	return nil
}

func (p *fakePeer) StartMsg(e *provider.RxEntry) error   { return p.startAny(e) }
func (p *fakePeer) StartTag(e *provider.RxEntry) error   { return p.startAny(e) }
func (p *fakePeer) DiscardMsg(e *provider.RxEntry) error { return p.discardAny(e) }
func (p *fakePeer) DiscardTag(e *provider.RxEntry) error { return p.discardAny(e) }

func post(t *testing.T, q *Queue, buf []byte, ctx any, tagged bool, tag, ignore uint64, flags provider.Flags) {
	t.Helper()
	m := provider.Msg{Buf: buf, Addr: provider.AddrUnspec, Context: ctx, Tag: tag, Ignore: ignore,
		Flags: flags | provider.FlagCompletion}
	if err := q.Post(&m, tagged); err != nil {
		t.Fatalf("Post(ctx=%v, tag=%#x, flags=%v): %v", ctx, tag, flags, err)
	}
}

func mustOne(t *testing.T, r cqRec) provider.CQEntry {
	t.Helper()
	if len(r.ok) != 1 || len(r.err) != 0 {
		t.Fatalf("want 1 completion, got %d ok %d err: %+v %+v", len(r.ok), len(r.err), r.ok, r.err)
	}
	return r.ok[0]
}

func tq(cfg Config) *Queue {
	cfg.Tagged = true
	return New(cfg)
}

// ---- tests ----

func TestExpectedPath(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	buf := make([]byte, 64)
	ctx := new(int)
	post(t, q, buf, ctx, false, 0, 0, 0)
	if err := p.send(false, 7, 0, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	c := mustOne(t, p.cq.take())
	if c.OpContext != ctx || c.Len != 5 || c.Flags != provider.FlagRecv|provider.FlagMsg || c.Buf != nil {
		t.Fatalf("completion %+v", c)
	}
	if string(buf[:5]) != "hello" {
		t.Fatalf("buf %q", buf[:5])
	}
	if p.cntr.val != 1 {
		t.Fatalf("counter %d", p.cntr.val)
	}
	if np, nu := q.Counts(); np != 0 || nu != 0 {
		t.Fatalf("counts %d %d", np, nu)
	}
}

func TestUnexpectedPath(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	if err := p.send(true, 3, 0x42, []byte("early")); err != nil {
		t.Fatal(err)
	}
	if _, nu := q.Counts(); nu != 1 {
		t.Fatalf("unexpected count %d", nu)
	}
	if r := p.cq.take(); len(r.ok)+len(r.err) != 0 {
		t.Fatalf("completion before receive: %+v", r)
	}
	buf := make([]byte, 16)
	ctx := new(int)
	post(t, q, buf, ctx, true, 0x42, 0, 0)
	c := mustOne(t, p.cq.take())
	if c.OpContext != ctx || c.Len != 5 || c.Tag != 0x42 || c.Flags != provider.FlagRecv|provider.FlagTagged {
		t.Fatalf("completion %+v", c)
	}
	if string(buf[:5]) != "early" {
		t.Fatalf("buf %q", buf[:5])
	}
	if np, nu := q.Counts(); np != 0 || nu != 0 {
		t.Fatalf("counts %d %d", np, nu)
	}
}

func TestPostingOrder(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	ctxs := []*int{new(int), new(int), new(int)}
	for _, c := range ctxs {
		post(t, q, make([]byte, 8), c, true, 1, 0, 0)
	}
	for i := range ctxs {
		if err := p.send(true, 0, 1, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	r := p.cq.take()
	if len(r.ok) != 3 {
		t.Fatalf("%d completions", len(r.ok))
	}
	for i, c := range r.ok {
		if c.OpContext != ctxs[i] {
			t.Fatalf("completion %d went to receive %v", i, c.OpContext)
		}
	}
}

func TestUnexpectedArrivalOrder(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	for i := 0; i < 5; i++ {
		if err := p.send(false, 0, 0, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		b := make([]byte, 1)
		post(t, q, b, i, false, 0, 0, 0)
		if b[0] != byte(i) {
			t.Fatalf("receive %d got message %d", i, b[0])
		}
	}
}

func TestUntaggedAndTaggedSeparate(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	post(t, q, make([]byte, 8), "tagged", true, 0, ^uint64(0), 0)
	if err := p.send(false, 0, 0, []byte("m")); err != nil {
		t.Fatal(err)
	}
	if r := p.cq.take(); len(r.ok) != 0 {
		t.Fatalf("untagged message matched a tagged receive: %+v", r.ok)
	}
	if np, nu := q.Counts(); np != 1 || nu != 1 {
		t.Fatalf("counts %d %d", np, nu)
	}
}

func TestTagMatching(t *testing.T) {
	cases := []struct {
		recv, ignore, send uint64
		match              bool
	}{
		{0x1234, 0, 0x1234, true},
		{0x1234, 0, 0x1235, false},
		{0x1230, 0xf, 0x123f, true},
		{0x1230, 0xf, 0x1240, false},
		{0, ^uint64(0), 0xdeadbeef, true},
		{0xff00000000000000, 0x00ffffffffffffff, 0xff00000000000001, true},
		{0xff00000000000000, 0x00ffffffffffffff, 0xfe00000000000001, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%x/%x/%x", c.recv, c.ignore, c.send), func(t *testing.T) {
			q := tq(Config{})
			p := newPeer(q)
			post(t, q, make([]byte, 8), 1, true, c.recv, c.ignore, 0)
			if err := p.send(true, 0, c.send, []byte("x")); err != nil {
				t.Fatal(err)
			}
			r := p.cq.take()
			if got := len(r.ok) == 1; got != c.match {
				t.Fatalf("match = %v, want %v", got, c.match)
			}
			if c.match && r.ok[0].Tag != c.send {
				t.Fatalf("completion tag %#x, want sender's %#x", r.ok[0].Tag, c.send)
			}
		})
	}
}

func TestDirectedReceive(t *testing.T) {
	q := tq(Config{Directed: true})
	p := newPeer(q)
	m := provider.Msg{Buf: make([]byte, 8), Addr: 5, Context: "from5", Flags: provider.FlagCompletion}
	if err := q.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	// From 6 and from an unknown source: no match.
	if err := p.send(false, 6, 0, []byte("six")); err != nil {
		t.Fatal(err)
	}
	if err := p.send(false, provider.AddrNotAvail, 0, []byte("unk")); err != nil {
		t.Fatal(err)
	}
	if r := p.cq.take(); len(r.ok) != 0 {
		t.Fatalf("directed receive matched the wrong source: %+v", r.ok)
	}
	if err := p.send(false, 5, 0, []byte("five")); err != nil {
		t.Fatal(err)
	}
	c := mustOne(t, p.cq.take())
	if c.OpContext != "from5" || c.Len != 4 {
		t.Fatalf("completion %+v", c)
	}
	// AddrUnspec receives take anyone, in arrival order.
	post(t, q, make([]byte, 8), "any", false, 0, 0, 0)
	c = mustOne(t, p.cq.take())
	if c.Len != 3 {
		t.Fatalf("unspec receive got %+v", c)
	}

	// Without Directed the address filter is ignored.
	q2 := tq(Config{})
	p2 := newPeer(q2)
	m = provider.Msg{Buf: make([]byte, 8), Addr: 5, Context: 1, Flags: provider.FlagCompletion}
	if err := q2.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	if err := p2.send(false, 9, 0, []byte("nine")); err != nil {
		t.Fatal(err)
	}
	mustOne(t, p2.cq.take())
}

func TestTruncation(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	buf := make([]byte, 4)
	post(t, q, buf, "t", true, 9, 0, 0)
	if err := p.send(true, 2, 9, []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	r := p.cq.take()
	if len(r.err) != 1 || len(r.ok) != 0 {
		t.Fatalf("want one error completion: %+v", r)
	}
	e := r.err[0]
	if e.Err != provider.ETRUNC || e.Len != 4 || e.Olen != 6 || e.OpContext != "t" || e.Tag != 9 ||
		e.Flags != provider.FlagRecv|provider.FlagTagged {
		t.Fatalf("error entry %+v", e)
	}
	if string(buf) != "0123" || p.cntr.err != 1 {
		t.Fatalf("buf %q cntr err %d", buf, p.cntr.err)
	}
}

func TestRemoteCQData(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	d := uint64(0xabcd)
	post(t, q, make([]byte, 8), 1, false, 0, 0, 0)
	if err := p.sendData(false, 0, 0, []byte("x"), &d); err != nil {
		t.Fatal(err)
	}
	c := mustOne(t, p.cq.take())
	if c.Data != d || c.Flags&provider.FlagRemoteCQData == 0 {
		t.Fatalf("expected path %+v", c)
	}
	// Unexpected path keeps the peer's CQ data across the match.
	if err := p.sendData(false, 0, 0, []byte("y"), &d); err != nil {
		t.Fatal(err)
	}
	post(t, q, make([]byte, 8), 2, false, 0, 0, 0)
	c = mustOne(t, p.cq.take())
	if c.Data != d || c.Flags != provider.FlagRecv|provider.FlagMsg|provider.FlagRemoteCQData {
		t.Fatalf("unexpected path %+v", c)
	}
}

func TestSelectiveCompletion(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	m := provider.Msg{Buf: make([]byte, 8), Context: 1} // no FlagCompletion
	if err := q.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	if err := p.send(false, 0, 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if r := p.cq.take(); len(r.ok) != 0 {
		t.Fatalf("completion written without FI_COMPLETION: %+v", r.ok)
	}
	if p.cntr.val != 1 {
		t.Fatalf("counter %d", p.cntr.val)
	}
}

// TestTaggedPeek mirrors fabtests functional/rdm_tagged_peek.
func TestTaggedPeek(t *testing.T) {
	peekMsg := func(q *Queue, tag uint64, ctx any, flags provider.Flags) error {
		m := provider.Msg{Buf: make([]byte, 16), Addr: provider.AddrUnspec, Context: ctx, Tag: tag,
			Flags: flags | provider.FlagCompletion}
		return q.Post(&m, true)
	}
	t.Run("no_match_ENOMSG", func(t *testing.T) {
		for _, fl := range []provider.Flags{provider.FlagPeek, provider.FlagPeek | provider.FlagClaim,
			provider.FlagPeek | provider.FlagDiscard} {
			q := tq(Config{})
			p := newPeer(q)
			if err := peekMsg(q, 0xbad, "ctx", fl); err != nil {
				t.Fatal(err)
			}
			r := p.cq.take()
			if len(r.err) != 1 || r.err[0].Err != provider.ENOMSG || r.err[0].OpContext != "ctx" || len(r.ok) != 0 {
				t.Fatalf("%v: %+v", fl, r)
			}
		}
	})
	t.Run("peek_leaves_message", func(t *testing.T) {
		q := tq(Config{})
		p := newPeer(q)
		d := uint64(77)
		if err := p.sendData(true, 4, 0x900d, []byte("peekaboo"), &d); err != nil {
			t.Fatal(err)
		}
		if err := peekMsg(q, 0x900d, "peek", provider.FlagPeek); err != nil {
			t.Fatal(err)
		}
		c := mustOne(t, p.cq.take())
		if c.OpContext != "peek" || c.Len != 8 || c.Tag != 0x900d || c.Data != 77 ||
			c.Flags != provider.FlagRecv|provider.FlagTagged|provider.FlagRemoteCQData {
			t.Fatalf("peek completion %+v", c)
		}
		// Peeking again still finds it; then a receive consumes it.
		if err := peekMsg(q, 0x900d, "peek2", provider.FlagPeek); err != nil {
			t.Fatal(err)
		}
		mustOne(t, p.cq.take())
		buf := make([]byte, 16)
		post(t, q, buf, "recv", true, 0x900d, 0, 0)
		c = mustOne(t, p.cq.take())
		if c.OpContext != "recv" || string(buf[:8]) != "peekaboo" {
			t.Fatalf("receive %+v %q", c, buf)
		}
		if err := peekMsg(q, 0x900d, "peek3", provider.FlagPeek); err != nil {
			t.Fatal(err)
		}
		if r := p.cq.take(); len(r.err) != 1 || r.err[0].Err != provider.ENOMSG {
			t.Fatalf("peek after receive: %+v", r)
		}
	})
	t.Run("peek_claim", func(t *testing.T) {
		q := tq(Config{})
		p := newPeer(q)
		if err := p.send(true, 0, 0xc1a1, []byte("claimed")); err != nil {
			t.Fatal(err)
		}
		ctx := new(int) // the fi_context of the claim pair
		if err := peekMsg(q, 0xc1a1, ctx, provider.FlagPeek|provider.FlagClaim); err != nil {
			t.Fatal(err)
		}
		c := mustOne(t, p.cq.take())
		if c.OpContext != ctx || c.Len != 7 || c.Flags&provider.FlagClaim == 0 {
			t.Fatalf("peek|claim completion %+v", c)
		}
		// Normal receives and peeks cannot steal the claimed message.
		if err := peekMsg(q, 0xc1a1, "other", provider.FlagPeek); err != nil {
			t.Fatal(err)
		}
		if r := p.cq.take(); len(r.err) != 1 || r.err[0].Err != provider.ENOMSG {
			t.Fatalf("peek saw a claimed message: %+v", r)
		}
		other := make([]byte, 16)
		post(t, q, other, "thief", true, 0xc1a1, 0, 0)
		if r := p.cq.take(); len(r.ok)+len(r.err) != 0 {
			t.Fatalf("normal receive stole a claimed message: %+v", r)
		}
		// A claim with a different context finds nothing.
		bad := provider.Msg{Buf: make([]byte, 16), Context: new(int), Flags: provider.FlagClaim}
		if err := q.Post(&bad, true); err != provider.EINVAL {
			t.Fatalf("claim with wrong context: %v", err)
		}
		buf := make([]byte, 16)
		m := provider.Msg{Buf: buf, Context: ctx, Flags: provider.FlagClaim | provider.FlagCompletion}
		if err := q.Post(&m, true); err != nil {
			t.Fatal(err)
		}
		c = mustOne(t, p.cq.take())
		if c.OpContext != ctx || c.Len != 7 || c.Flags != provider.FlagRecv|provider.FlagTagged|provider.FlagClaim ||
			string(buf[:7]) != "claimed" {
			t.Fatalf("claim completion %+v %q", c, buf)
		}
		// The thief receive is still pending and gets the next message.
		if err := p.send(true, 0, 0xc1a1, []byte("next")); err != nil {
			t.Fatal(err)
		}
		if c = mustOne(t, p.cq.take()); c.OpContext != "thief" || string(other[:4]) != "next" {
			t.Fatalf("thief completion %+v", c)
		}
	})
	t.Run("peek_discard", func(t *testing.T) {
		q := tq(Config{})
		p := newPeer(q)
		if err := p.send(true, 0, 0xd15c, []byte("drop me")); err != nil {
			t.Fatal(err)
		}
		if err := peekMsg(q, 0xd15c, "pd", provider.FlagPeek|provider.FlagDiscard); err != nil {
			t.Fatal(err)
		}
		c := mustOne(t, p.cq.take())
		if c.OpContext != "pd" || c.Buf != nil {
			t.Fatalf("peek|discard completion %+v", c)
		}
		if len(p.discarded) != 1 || string(p.discarded[0]) != "drop me" || p.started != 0 {
			t.Fatalf("discarded %q started %d", p.discarded, p.started)
		}
		if err := peekMsg(q, 0xd15c, "again", provider.FlagPeek); err != nil {
			t.Fatal(err)
		}
		if r := p.cq.take(); len(r.err) != 1 || r.err[0].Err != provider.ENOMSG {
			t.Fatalf("peek after discard: %+v", r)
		}
		if _, nu := q.Counts(); nu != 0 {
			t.Fatalf("unexpected left: %d", nu)
		}
	})
	t.Run("claim_discard", func(t *testing.T) {
		q := tq(Config{})
		p := newPeer(q)
		if err := p.send(true, 0, 0xcd, []byte("claim+drop")); err != nil {
			t.Fatal(err)
		}
		ctx := new(int)
		if err := peekMsg(q, 0xcd, ctx, provider.FlagPeek|provider.FlagClaim); err != nil {
			t.Fatal(err)
		}
		mustOne(t, p.cq.take())
		m := provider.Msg{Context: ctx, Flags: provider.FlagClaim | provider.FlagDiscard}
		if err := q.Post(&m, true); err != nil {
			t.Fatal(err)
		}
		c := mustOne(t, p.cq.take())
		if c.OpContext != ctx || c.Flags&provider.FlagClaim == 0 {
			t.Fatalf("claim|discard completion %+v", c)
		}
		if len(p.discarded) != 1 || p.started != 0 {
			t.Fatalf("discarded %d started %d", len(p.discarded), p.started)
		}
		if err := peekMsg(q, 0xcd, "again", provider.FlagPeek); err != nil {
			t.Fatal(err)
		}
		if r := p.cq.take(); len(r.err) != 1 || r.err[0].Err != provider.ENOMSG {
			t.Fatalf("peek after claim|discard: %+v", r)
		}
	})
	t.Run("bad_flags", func(t *testing.T) {
		q := tq(Config{})
		for _, fl := range []provider.Flags{provider.FlagDiscard, provider.FlagPeek | provider.FlagMultiRecv,
			provider.FlagClaim | provider.FlagMultiRecv} {
			m := provider.Msg{Buf: make([]byte, 8), Flags: fl}
			if err := q.Post(&m, true); err != provider.EINVAL {
				t.Errorf("flags %v: %v, want EINVAL", fl, err)
			}
		}
		m := provider.Msg{Buf: make([]byte, 8), Flags: provider.FlagClaim}
		if err := q.Post(&m, true); err != provider.EINVAL {
			t.Errorf("claim of nothing: %v", err)
		}
		if err := q.Post(nil, true); err != provider.EINVAL {
			t.Errorf("nil msg: %v", err)
		}
		untagged := New(Config{})
		if err := untagged.Post(&provider.Msg{Buf: make([]byte, 8)}, true); err != provider.EOPNOTSUPP {
			t.Errorf("tagged post on untagged queue: %v", err)
		}
	})
}

// TestReverseOrderTagged receives tagged messages from the unexpected
// queue in the reverse order of sending (fabtests rdm_tagged_peek test_ooo).
func TestReverseOrderTagged(t *testing.T) {
	const n = 16
	q := tq(Config{})
	p := newPeer(q)
	for i := 0; i < n; i++ {
		if err := p.send(true, 1, uint64(0x1000+i), []byte(fmt.Sprintf("msg-%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := n - 1; i >= 0; i-- {
		buf := make([]byte, 16)
		post(t, q, buf, i, true, uint64(0x1000+i), 0, 0)
		c := mustOne(t, p.cq.take())
		want := fmt.Sprintf("msg-%02d", i)
		if c.OpContext != i || c.Tag != uint64(0x1000+i) || string(buf[:c.Len]) != want {
			t.Fatalf("receive %d: %+v %q", i, c, buf[:c.Len])
		}
	}
	if np, nu := q.Counts(); np != 0 || nu != 0 {
		t.Fatalf("counts %d %d", np, nu)
	}
}

func TestMultiRecv(t *testing.T) {
	const bufSize, msgSize = 1024, 100
	q := tq(Config{MinMultiRecv: msgSize})
	if q.MinMultiRecv() != msgSize {
		t.Fatalf("MinMultiRecv %d", q.MinMultiRecv())
	}
	p := newPeer(q)
	buf := make([]byte, bufSize)
	post(t, q, buf, "mr", false, 0, 0, provider.FlagMultiRecv)
	want := bufSize / msgSize
	for i := 0; i < want; i++ {
		if err := p.send(false, 0, 0, bytes.Repeat([]byte{byte('a' + i)}, msgSize)); err != nil {
			t.Fatal(err)
		}
	}
	r := p.cq.take()
	if len(r.ok) != want {
		t.Fatalf("%d completions, want %d", len(r.ok), want)
	}
	for i, c := range r.ok {
		if c.OpContext != "mr" || c.Len != msgSize || len(c.Buf) != msgSize || c.Buf[0] != byte('a'+i) {
			t.Fatalf("completion %d: %+v", i, c)
		}
		if &c.Buf[0] != &buf[i*msgSize] {
			t.Fatalf("completion %d buf not at offset %d", i, i*msgSize)
		}
		last := i == want-1
		if got := c.Flags&provider.FlagMultiRecv != 0; got != last {
			t.Fatalf("completion %d FI_MULTI_RECV=%v", i, got)
		}
		if c.Flags&^provider.FlagMultiRecv != provider.FlagRecv|provider.FlagMsg {
			t.Fatalf("completion %d flags %v", i, c.Flags)
		}
	}
	// The buffer is released: the next message is unexpected.
	if err := p.send(false, 0, 0, []byte("later")); err != nil {
		t.Fatal(err)
	}
	if np, nu := q.Counts(); np != 0 || nu != 1 {
		t.Fatalf("after release: posted %d unexpected %d", np, nu)
	}
	// Re-posting works and takes the unexpected message at offset 0.
	post(t, q, buf, "mr2", false, 0, 0, provider.FlagMultiRecv)
	c := mustOne(t, p.cq.take())
	if c.OpContext != "mr2" || string(c.Buf) != "later" || &c.Buf[0] != &buf[0] {
		t.Fatalf("re-posted buffer: %+v", c)
	}
}

func TestMultiRecvDefaultMin(t *testing.T) {
	q := tq(Config{})
	if q.MinMultiRecv() != DefaultMinMultiRecv {
		t.Fatalf("default min %d", q.MinMultiRecv())
	}
	q.SetMinMultiRecv(10)
	if q.MinMultiRecv() != 10 {
		t.Fatal("SetMinMultiRecv")
	}
}

func TestMultiRecvSelectiveRelease(t *testing.T) {
	q := tq(Config{MinMultiRecv: 64})
	p := newPeer(q)
	m := provider.Msg{Buf: make([]byte, 256), Context: "sel", Flags: provider.FlagMultiRecv} // no FI_COMPLETION
	if err := q.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if err := p.send(false, 0, 0, make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
	}
	c := mustOne(t, p.cq.take())
	if c.Flags&provider.FlagMultiRecv == 0 || c.OpContext != "sel" {
		t.Fatalf("release completion %+v", c)
	}
	if p.cntr.val != 4 {
		t.Fatalf("counter %d", p.cntr.val)
	}
}

func TestMultiRecvUnexpected(t *testing.T) {
	q := tq(Config{MinMultiRecv: 5})
	p := newPeer(q)
	for i := 0; i < 4; i++ {
		if err := p.send(false, 0, 0, []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 25) // 10 + 10 + 5 (the third is truncated)
	post(t, q, buf, "u", false, 0, 0, provider.FlagMultiRecv)
	r := p.cq.take()
	// Three messages were handed out before any finished, so the release
	// is a separate entry after them.
	if len(r.ok) != 3 || len(r.err) != 1 {
		t.Fatalf("completions %+v", r)
	}
	for i := 0; i < 2; i++ {
		if c := r.ok[i]; c.Flags != provider.FlagRecv|provider.FlagMsg || c.Len != 10 || &c.Buf[0] != &buf[10*i] {
			t.Fatalf("message %d: %+v", i, c)
		}
	}
	e := r.err[0]
	if e.Err != provider.ETRUNC || e.Len != 5 || e.Olen != 5 || &e.Buf[0] != &buf[20] {
		t.Fatalf("truncated last message %+v", e)
	}
	if rel := r.ok[2]; rel.Flags != provider.FlagMultiRecv || rel.OpContext != "u" {
		t.Fatalf("release %+v", rel)
	}
	if np, nu := q.Counts(); np != 0 || nu != 1 {
		t.Fatalf("counts %d %d", np, nu)
	}
}

// TestMultiRecvSeparateRelease: when earlier messages of the buffer are
// still in flight at release, the owner writes a separate FI_MULTI_RECV
// entry once the last one is freed.
func TestMultiRecvSeparateRelease(t *testing.T) {
	q := tq(Config{MinMultiRecv: 8})
	cq := &fakeCQ{}
	q.SetCompletion(cq, nil)
	post(t, q, make([]byte, 16), "sep", false, 0, 0, provider.FlagMultiRecv)
	e1, err := q.GetMsg(0, 8)
	if err != nil {
		t.Fatal(err)
	}
	e2, err := q.GetMsg(0, 8)
	if err != nil {
		t.Fatal(err)
	}
	if e1.Flags&provider.FlagMultiRecv != 0 || e2.Flags&provider.FlagMultiRecv != 0 {
		t.Fatal("a child carries the release while another is in flight")
	}
	for _, e := range []*provider.RxEntry{e2, e1} {
		Complete(cq, nil, e, 8, 0, 0)
		q.FreeEntry(e)
	}
	r := cq.take()
	if len(r.ok) != 3 {
		t.Fatalf("%d completions: %+v", len(r.ok), r.ok)
	}
	rel := r.ok[2]
	if rel.Flags != provider.FlagMultiRecv || rel.OpContext != "sep" || rel.Len != 0 {
		t.Fatalf("release entry %+v", rel)
	}
	// Double free is ignored.
	q.FreeEntry(e1)
	if r := cq.take(); len(r.ok) != 0 {
		t.Fatalf("double free wrote %+v", r.ok)
	}
}

func TestMultiRecvBadBuffers(t *testing.T) {
	q := tq(Config{})
	for _, m := range []provider.Msg{
		{Flags: provider.FlagMultiRecv},
		{IOV: [][]byte{make([]byte, 4), make([]byte, 4)}, Flags: provider.FlagMultiRecv},
	} {
		if err := q.Post(&m, false); err != provider.EINVAL {
			t.Errorf("%+v: %v", m, err)
		}
	}
}

func TestCancel(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	keep := make([]byte, 8)
	cancelled := make([]byte, 8)
	post(t, q, cancelled, "c", true, 5, 0, 0)
	post(t, q, keep, "k", true, 5, 0, 0)
	if err := q.Cancel("c"); err != nil {
		t.Fatal(err)
	}
	r := p.cq.take()
	if len(r.err) != 1 || len(r.ok) != 0 {
		t.Fatalf("%+v", r)
	}
	e := r.err[0]
	if e.Err != provider.ECANCELED || e.OpContext != "c" || e.Flags&provider.FlagRecv == 0 {
		t.Fatalf("cancel entry %+v", e)
	}
	if err := q.Cancel("c"); err != provider.ENOENT {
		t.Fatalf("second cancel: %v", err)
	}
	if r := p.cq.take(); len(r.err)+len(r.ok) != 0 {
		t.Fatalf("second cancel wrote %+v", r)
	}
	if err := q.Cancel([]int{1}); err != provider.ENOENT { // incomparable context: no panic
		t.Fatalf("cancel of slice context: %v", err)
	}
	if err := p.send(true, 0, 5, []byte("data")); err != nil {
		t.Fatal(err)
	}
	c := mustOne(t, p.cq.take())
	if c.OpContext != "k" || string(keep[:4]) != "data" || cancelled[0] != 0 {
		t.Fatalf("after cancel: %+v keep=%q cancelled=%q", c, keep, cancelled)
	}
	// Re-posting with the same context works.
	post(t, q, cancelled, "c", true, 5, 0, 0)
	if err := p.send(true, 0, 5, []byte("again")); err != nil {
		t.Fatal(err)
	}
	if c := mustOne(t, p.cq.take()); c.OpContext != "c" {
		t.Fatalf("%+v", c)
	}
}

func TestCancelMultiRecvInFlight(t *testing.T) {
	q := tq(Config{MinMultiRecv: 1})
	cq := &fakeCQ{}
	q.SetCompletion(cq, nil)
	post(t, q, make([]byte, 64), "m", false, 0, 0, provider.FlagMultiRecv)
	e, err := q.GetMsg(0, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Cancel("m"); err != nil {
		t.Fatal(err)
	}
	if r := cq.take(); len(r.err) != 0 {
		t.Fatal("cancel completion before the in-flight message finished")
	}
	Complete(cq, nil, e, 8, 0, 0)
	q.FreeEntry(e)
	r := cq.take()
	if len(r.ok) != 1 || len(r.err) != 1 || r.err[0].Err != provider.ECANCELED ||
		r.err[0].Flags&provider.FlagMultiRecv == 0 {
		t.Fatalf("%+v", r)
	}
}

func TestEAGAINWhenFull(t *testing.T) {
	q := tq(Config{Size: 2})
	p := newPeer(q)
	if q.SizeLeft() != 2 {
		t.Fatalf("SizeLeft %d", q.SizeLeft())
	}
	post(t, q, make([]byte, 4), 1, false, 0, 0, 0)
	post(t, q, make([]byte, 4), 2, false, 0, 0, 0)
	if q.SizeLeft() != 0 {
		t.Fatalf("SizeLeft when full %d", q.SizeLeft())
	}
	m := provider.Msg{Buf: make([]byte, 4), Context: 3}
	if err := q.Post(&m, false); err != provider.EAGAIN {
		t.Fatalf("third post: %v", err)
	}
	if err := q.Post(&provider.Msg{Buf: make([]byte, 4), Flags: provider.FlagMultiRecv}, false); err != provider.EAGAIN {
		t.Fatalf("multi post when full: %v", err)
	}
	if err := p.send(false, 0, 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := q.Post(&m, false); err != nil {
		t.Fatalf("post after a completion: %v", err)
	}
}

func TestMaxUnexpected(t *testing.T) {
	q := tq(Config{MaxUnexpected: 2})
	p := newPeer(q)
	for i := 0; i < 2; i++ {
		if err := p.send(false, 0, 0, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	e, err := q.GetMsg(0, 1)
	if err != provider.EAGAIN || e != nil {
		t.Fatalf("GetMsg at bound: %v %v", e, err)
	}
	post(t, q, make([]byte, 1), 0, false, 0, 0, 0)
	if err := p.send(false, 0, 0, []byte{9}); err != nil {
		t.Fatalf("after draining one: %v", err)
	}
}

// TestPostBetweenGetAndQueue: a receive posted after GetMsg returned ENOENT
// but before QueueMsg is matched by QueueMsg (never lost).
func TestPostBetweenGetAndQueue(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	e, err := q.GetMsg(0, 3)
	if err != provider.ENOENT {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	post(t, q, buf, "late", false, 0, 0, 0)
	e.Peer = p
	e.PeerContext = &peerMsg{payload: []byte("abc")}
	if err := q.QueueMsg(e); err != nil {
		t.Fatal(err)
	}
	c := mustOne(t, p.cq.take())
	if c.OpContext != "late" || string(buf[:3]) != "abc" {
		t.Fatalf("%+v %q", c, buf)
	}
	if np, nu := q.Counts(); np != 0 || nu != 0 {
		t.Fatalf("counts %d %d", np, nu)
	}
	// Queueing an entry twice or a foreign entry is rejected.
	if err := q.QueueMsg(e); err != provider.EINVAL {
		t.Fatalf("requeue: %v", err)
	}
	if err := q.QueueMsg(&provider.RxEntry{Peer: p}); err != provider.EINVAL {
		t.Fatalf("foreign entry: %v", err)
	}
	if err := q.QueueMsg(nil); err != provider.EINVAL {
		t.Fatalf("nil entry: %v", err)
	}
}

func TestForeachUnspecAddr(t *testing.T) {
	q := tq(Config{Directed: true})
	p := newPeer(q)
	if err := p.send(true, provider.AddrUnspec, 1, []byte("who")); err != nil {
		t.Fatal(err)
	}
	m := provider.Msg{Buf: make([]byte, 8), Addr: 5, Tag: 1, Context: "d", Flags: provider.FlagCompletion}
	if err := q.Post(&m, true); err != nil {
		t.Fatal(err)
	}
	if r := p.cq.take(); len(r.ok) != 0 {
		t.Fatal("directed receive matched an unknown source")
	}
	calls := 0
	q.ForeachUnspecAddr(func(e *provider.RxEntry) provider.Addr {
		calls++
		if string(e.PeerContext.(*peerMsg).payload) != "who" {
			t.Errorf("unexpected entry %+v", e)
		}
		return 5
	})
	if calls != 1 {
		t.Fatalf("getAddr called %d times", calls)
	}
	c := mustOne(t, p.cq.take())
	if c.OpContext != "d" {
		t.Fatalf("%+v", c)
	}
	q.ForeachUnspecAddr(nil)
}

func TestClose(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	post(t, q, make([]byte, 8), "pending", true, 1, 0, 0)
	if err := p.send(false, 0, 0, []byte("unexp")); err != nil {
		t.Fatal(err)
	}
	got, err := q.GetTag(0, 1, 99) // got, not yet queued
	if err != provider.ENOENT {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	r := p.cq.take()
	if len(r.err) != 1 || r.err[0].Err != provider.ECANCELED || r.err[0].OpContext != "pending" || len(r.ok) != 0 {
		t.Fatalf("close completions %+v", r)
	}
	if len(p.discarded) != 1 || string(p.discarded[0]) != "unexp" {
		t.Fatalf("discarded %q", p.discarded)
	}
	// A late QueueTag of a got entry is discarded through the peer.
	got.Peer = p
	got.PeerContext = &peerMsg{payload: []byte("late")}
	if err := q.QueueTag(got); err != nil {
		t.Fatal(err)
	}
	if len(p.discarded) != 2 {
		t.Fatalf("late entry not discarded: %q", p.discarded)
	}
	if err := q.Post(&provider.Msg{Buf: make([]byte, 1)}, false); err != provider.EBADF {
		t.Fatalf("post after close: %v", err)
	}
	if e, err := q.GetMsg(0, 1); err != provider.EBADF || e != nil {
		t.Fatalf("GetMsg after close: %v %v", e, err)
	}
	if err := q.Close(); err != provider.EBADF {
		t.Fatalf("second close: %v", err)
	}
}

func TestIOVPost(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	a, b := make([]byte, 3), make([]byte, 3)
	iov := [][]byte{a, b}
	m := provider.Msg{IOV: iov, Context: 1, Flags: provider.FlagCompletion}
	if err := q.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	iov[0], iov[1] = nil, nil // the queue must not retain the caller's iovec array
	if err := p.send(false, 0, 0, []byte("abcdef")); err != nil {
		t.Fatal(err)
	}
	if c := mustOne(t, p.cq.take()); c.Len != 6 || string(a) != "abc" || string(b) != "def" {
		t.Fatalf("%+v %q %q", c, a, b)
	}
	// Many segments (beyond the inline array) on the unexpected path.
	if err := p.send(false, 0, 0, []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	segs := make([][]byte, 10)
	for i := range segs {
		segs[i] = make([]byte, 1)
	}
	m = provider.Msg{IOV: segs, Context: 2, Flags: provider.FlagCompletion}
	if err := q.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	mustOne(t, p.cq.take())
	for i, s := range segs {
		if s[0] != byte('0'+i) {
			t.Fatalf("segment %d = %q", i, s)
		}
	}
}

type countCQ struct{ n int }

func (c *countCQ) Write(any, provider.Flags, uint64, []byte, uint64, uint64, provider.Addr) error {
	c.n++
	return nil
}
func (c *countCQ) WriteErr(*provider.CQErrEntry) error { return nil }

func TestZeroAllocs(t *testing.T) {
	q := tq(Config{Size: 64})
	cq := &countCQ{}
	buf := make([]byte, 64)
	payload := []byte("payload")
	ctx := new(int)
	m := provider.Msg{Buf: buf, Context: ctx, Flags: provider.FlagCompletion}
	run := func(tagged bool) {
		m.Tag = 7
		if err := q.Post(&m, tagged); err != nil {
			t.Fatal(err)
		}
		var e *provider.RxEntry
		var err error
		if tagged {
			e, err = q.GetTag(1, uint64(len(payload)), 7)
		} else {
			e, err = q.GetMsg(1, uint64(len(payload)))
		}
		if err != nil {
			t.Fatal(err)
		}
		n, olen := Deliver(e, payload)
		Complete(cq, nil, e, n, olen, 1)
		q.FreeEntry(e)
	}
	for _, tagged := range []bool{false, true} {
		if a := testing.AllocsPerRun(1000, func() { run(tagged) }); a != 0 {
			t.Errorf("tagged=%v: %v allocs per Post+Get+Free", tagged, a)
		}
	}
	if cq.n == 0 {
		t.Fatal("no completions written")
	}
	// IOV form.
	iov := [][]byte{buf[:32], buf[32:]}
	mi := provider.Msg{IOV: iov, Context: ctx}
	if a := testing.AllocsPerRun(1000, func() {
		if err := q.Post(&mi, false); err != nil {
			t.Fatal(err)
		}
		e, err := q.GetMsg(1, 8)
		if err != nil {
			t.Fatal(err)
		}
		q.FreeEntry(e)
	}); a != 0 {
		t.Errorf("IOV: %v allocs", a)
	}
}

func TestConcurrent(t *testing.T) {
	q := tq(Config{Size: 4096})
	p := newPeer(q)
	const per = 200
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(2)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				m := provider.Msg{Buf: make([]byte, 8), Tag: uint64(g), Context: i, Flags: provider.FlagCompletion}
				for {
					err := q.Post(&m, true)
					if err == nil {
						break
					}
					if err != provider.EAGAIN {
						t.Error(err)
						return
					}
				}
			}
		}(g)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if err := p.send(true, provider.Addr(g), uint64(g), []byte("12345678")); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	r := p.cq.take()
	if len(r.ok) != 2*per || len(r.err) != 0 {
		t.Fatalf("%d completions, %d errors", len(r.ok), len(r.err))
	}
	if np, nu := q.Counts(); np != 0 || nu != 0 {
		t.Fatalf("counts %d %d", np, nu)
	}
}

// A plain receive (one buffer, untagged, no special flags) takes Post's
// short path while no unexpected message waits, and the general path
// otherwise: an unexpected untagged message is matched at once, in
// arrival order, and a receive posted without FI_COMPLETION completes
// silently (counter only) on either path.
func TestPlainPostPaths(t *testing.T) {
	q := tq(Config{})
	p := newPeer(q)
	if err := p.send(false, 4, 0, []byte("early")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	m := provider.Msg{Buf: buf, Addr: provider.AddrUnspec, Context: "late", Flags: provider.FlagCompletion}
	if err := q.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	if c := mustOne(t, p.cq.take()); c.OpContext != "late" || c.Len != 5 || string(buf[:5]) != "early" {
		t.Fatalf("unexpected message matched by a plain receive: %+v %q", c, buf[:5])
	}
	silent := provider.Msg{Buf: make([]byte, 8), Addr: provider.AddrUnspec, Context: "silent"}
	if err := q.Post(&silent, false); err != nil {
		t.Fatal(err)
	}
	if err := p.send(false, 4, 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if r := p.cq.take(); len(r.ok)+len(r.err) != 0 || p.cntr.val != 2 {
		t.Fatalf("receive without FI_COMPLETION: %+v, counter %d", r, p.cntr.val)
	}
	if np, nu := q.Counts(); np != 0 || nu != 0 {
		t.Fatalf("counts %d %d", np, nu)
	}
	small := tq(Config{Size: 1})
	if err := small.Post(&provider.Msg{Buf: make([]byte, 1)}, false); err != nil {
		t.Fatal(err)
	}
	if err := small.Post(&provider.Msg{Buf: make([]byte, 1)}, false); err != provider.EAGAIN {
		t.Fatalf("post beyond the queue size: %v", err)
	}
	if err := small.PostBuf(make([]byte, 1), provider.AddrUnspec, nil, 0); err != provider.EAGAIN {
		t.Fatalf("PostBuf beyond the queue size: %v", err)
	}
	small.Close()
	if err := small.PostBuf(make([]byte, 1), provider.AddrUnspec, nil, 0); err != provider.EBADF {
		t.Fatalf("PostBuf after Close: %v", err)
	}

	// PostBuf, Post's path without a Msg: the source filter only on a
	// directed queue, unexpected messages matched through Post's path.
	d := tq(Config{Directed: true})
	pd := newPeer(d)
	if err := d.PostBuf(make([]byte, 8), 5, "from5", provider.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	if err := pd.send(false, 6, 0, []byte("six")); err != nil {
		t.Fatal(err)
	}
	if r := pd.cq.take(); len(r.ok) != 0 {
		t.Fatalf("directed PostBuf matched the wrong source: %+v", r.ok)
	}
	if err := d.PostBuf(make([]byte, 8), provider.AddrUnspec, "any", provider.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	if c := mustOne(t, pd.cq.take()); c.OpContext != "any" || c.Len != 3 {
		t.Fatalf("PostBuf with an unexpected message waiting: %+v", c)
	}
	if err := pd.send(false, 5, 0, []byte("five")); err != nil {
		t.Fatal(err)
	}
	if c := mustOne(t, pd.cq.take()); c.OpContext != "from5" {
		t.Fatalf("directed PostBuf: %+v", c)
	}
	u := tq(Config{})
	pu := newPeer(u)
	if err := u.PostBuf(make([]byte, 8), 5, "ignored-filter", provider.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	if err := pu.send(false, 6, 0, []byte("six")); err != nil {
		t.Fatal(err)
	}
	if c := mustOne(t, pu.cq.take()); c.OpContext != "ignored-filter" {
		t.Fatalf("undirected PostBuf kept a source filter: %+v", c)
	}
}
