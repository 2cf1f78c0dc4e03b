package srx

import (
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/provider"
)

// fakeSource is a Receiver holding messages to hand out, one per call; it
// completes them into cq (without source) and records the last entry.
type fakeSource struct {
	msgs  [][]byte
	calls int
	cq    provider.CQOwner
	last  provider.RxEntry
	n     int
	olen  uint64
}

func (s *fakeSource) ReceivedDirect(e *provider.RxEntry, n int, olen uint64) {
	s.last, s.n, s.olen = *e, n, olen
	Complete(s.cq, nil, e, n, olen, provider.AddrNotAvail)
}

func (s *fakeSource) ReceiveInto(iov [][]byte) (int, bool) {
	s.calls++
	if len(s.msgs) == 0 {
		return 0, false
	}
	m := s.msgs[0]
	s.msgs = append(s.msgs[:0], s.msgs[1:]...)
	rest := m
	for _, b := range iov {
		rest = rest[copy(b, rest):]
	}
	return len(m), true
}

func TestReceiveDirectUnavailable(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   Config
		setup func(t *testing.T, q *Queue)
	}{
		{"nothing posted", Config{}, func(t *testing.T, q *Queue) {}},
		{"tagged receive only", Config{Tagged: true}, func(t *testing.T, q *Queue) {
			post(t, q, make([]byte, 8), nil, true, 1, 0, 0)
		}},
		{"directed receive first", Config{Directed: true}, func(t *testing.T, q *Queue) {
			m := provider.Msg{Buf: make([]byte, 8), Addr: 3, Flags: provider.FlagCompletion}
			if err := q.Post(&m, false); err != nil {
				t.Fatal(err)
			}
			post(t, q, make([]byte, 8), nil, false, 0, 0, 0)
		}},
		{"multi-receive buffer first", Config{}, func(t *testing.T, q *Queue) {
			post(t, q, make([]byte, 64), nil, false, 0, 0, provider.FlagMultiRecv)
		}},
		{"closed", Config{}, func(t *testing.T, q *Queue) {
			post(t, q, make([]byte, 8), nil, false, 0, 0, 0)
			q.Close()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := New(c.cfg)
			newPeer(q)
			c.setup(t, q)
			src := &fakeSource{msgs: [][]byte{[]byte("x")}}
			if st := q.ReceiveDirect(src); st != DirectUnavailable {
				t.Fatalf("status %v, want DirectUnavailable", st)
			}
			if src.calls != 0 {
				t.Fatal("the receiver was called")
			}
		})
	}
}

func TestReceiveDirect(t *testing.T) {
	q := New(Config{Directed: true})
	p := newPeer(q)
	src := &fakeSource{cq: p.cq}

	// Nothing waiting: the receive stays posted.
	buf := make([]byte, 8)
	ctx := new(int)
	post(t, q, buf, ctx, false, 0, 0, 0)
	if st := q.ReceiveDirect(src); st != DirectEmpty || src.calls != 1 {
		t.Fatalf("status %v after %d calls, want DirectEmpty after 1", st, src.calls)
	}
	if np, _ := q.Counts(); np != 1 {
		t.Fatalf("%d posted after an empty poll", np)
	}

	// A message fits: it lands in the posted buffer, the receive leaves
	// the queue and completes.
	src.msgs = [][]byte{[]byte("hello"), []byte("0123456789"), []byte("abcdefgh")}
	if st := q.ReceiveDirect(src); st != DirectDone || src.n != 5 || src.olen != 0 || string(buf[:5]) != "hello" {
		t.Fatalf("got %v n=%d olen=%d buf %q", st, src.n, src.olen, buf[:5])
	}
	if e := src.last; e.Context != ctx || e.Flags != provider.FlagRecv|provider.FlagMsg || !e.Complete ||
		e.MsgSize != 5 || e.Addr != provider.AddrUnspec {
		t.Fatalf("entry %+v", e)
	}
	if np, nu := q.Counts(); np != 0 || nu != 0 {
		t.Fatalf("counts %d %d", np, nu)
	}
	if c := mustOne(t, p.cq.take()); c.OpContext != ctx || c.Len != 5 || c.Buf != nil {
		t.Fatalf("completion %+v", c)
	}

	// Too long: the buffers are filled and the rest is olen; a scatter
	// receive is filled in order.
	a, b := make([]byte, 3), make([]byte, 4)
	m := provider.Msg{IOV: [][]byte{a, b}, Addr: provider.AddrUnspec, Context: "iov"}
	if err := q.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	st := q.ReceiveDirect(src)
	if st != DirectDone || src.n != 7 || src.olen != 3 || string(a)+string(b) != "0123456" || src.last.Complete {
		t.Fatalf("got %v n=%d olen=%d %q%q complete=%v", st, src.n, src.olen, a, b, src.last.Complete)
	}
	if r := p.cq.take(); len(r.err) != 1 || r.err[0].Err != provider.ETRUNC || r.err[0].Olen != 3 ||
		r.err[0].OpContext != "iov" {
		t.Fatalf("truncation: %+v", r)
	}

	// Posting order: a directed receive behind an any-source one waits
	// for its turn; once it is first, the direct path steps aside.
	first, second := make([]byte, 8), make([]byte, 8)
	post(t, q, first, "any", false, 0, 0, 0)
	dm := provider.Msg{Buf: second, Addr: 9, Context: "directed", Flags: provider.FlagCompletion}
	if err := q.Post(&dm, false); err != nil {
		t.Fatal(err)
	}
	if st := q.ReceiveDirect(src); st != DirectDone || src.last.Context != "any" {
		t.Fatalf("got %v for %v, want the first posted receive", st, src.last.Context)
	}
	if st := q.ReceiveDirect(src); st != DirectUnavailable {
		t.Fatalf("directed receive first: %v", st)
	}
	e, err := q.GetMsg(9, 1)
	if err != nil || e.Context != "directed" {
		t.Fatalf("GetMsg after the direct path: %v %+v", err, e)
	}
	q.FreeEntry(e)
}

func TestReceiveDirectAllocs(t *testing.T) {
	q := New(Config{Size: 64})
	cq := &countCQ{}
	buf := make([]byte, 64)
	msg := []byte("payload")
	src := &fakeSource{cq: cq}
	m := provider.Msg{Buf: buf, Context: new(int), Flags: provider.FlagCompletion}
	if a := testing.AllocsPerRun(1000, func() {
		if err := q.Post(&m, false); err != nil {
			t.Fatal(err)
		}
		q.ReceiveDirect(src) // empty
		src.msgs = append(src.msgs[:0], msg)
		if st := q.ReceiveDirect(src); st != DirectDone {
			t.Fatal(st)
		}
	}); a != 0 {
		t.Errorf("%v allocs per post + empty poll + direct receive", a)
	}
	if cq.n == 0 {
		t.Fatal("no completions written")
	}
}

// slowSource writes into the receive's buffers for a while, as a kernel
// copy would, so that a racing Cancel lands inside ReceiveInto.
type slowSource struct {
	writing  atomic.Bool
	n        atomic.Int64
	cq       provider.CQOwner
	received int
}

func (s *slowSource) ReceivedDirect(e *provider.RxEntry, n int, olen uint64) {
	s.received++
	Complete(s.cq, nil, e, n, olen, provider.AddrNotAvail)
}

func (s *slowSource) ReceiveInto(iov [][]byte) (int, bool) {
	if s.n.Add(1)%3 == 0 {
		return 0, false
	}
	s.writing.Store(true)
	defer s.writing.Store(false)
	for i := 0; i < 50; i++ {
		for _, b := range iov {
			for j := range b {
				b[j] = 0xee
			}
		}
	}
	return len(iov[0]), true
}

// Cancel and Close race with direct receives: every receive ends exactly
// once (received or FI_ECANCELED), and no buffer is written after its
// cancellation was reported.
func TestReceiveDirectCancelRace(t *testing.T) {
	q := New(Config{Size: 4096})
	p := newPeer(q)
	src := &slowSource{cq: p.cq}
	const total = 300
	bufs := make([][]byte, total)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			q.ReceiveDirect(src)
		}
	}()
	canceled := 0
	for i := 0; i < total; i++ {
		bufs[i] = make([]byte, 16)
		post(t, q, bufs[i], i, false, 0, 0, 0)
		if i%2 == 0 {
			// Cancel while the receiver is (most likely) writing.
			for k := 0; k < 100000 && !src.writing.Load(); k++ {
			}
			if q.Cancel(i) == nil {
				canceled++
				// Reported cancelled: the buffer must stay untouched.
				for k := 0; k < 20; k++ {
					for _, c := range bufs[i] {
						if c != 0 {
							t.Fatalf("receive %d written after its cancellation", i)
						}
					}
				}
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if np, _ := q.Counts(); np == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("receives still posted")
		}
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	r := p.cq.take()
	if len(r.ok)+len(r.err) != total || len(r.err) != canceled || src.received != len(r.ok) {
		t.Fatalf("%d received, %d cancelled (%d reported), of %d", len(r.ok), len(r.err), canceled, total)
	}
	seen := make(map[any]bool)
	for _, c := range r.ok {
		seen[c.OpContext] = true
	}
	for _, e := range r.err {
		if e.Err != provider.ECANCELED || seen[e.OpContext] {
			t.Fatalf("bad or duplicate end for %v: %+v", e.OpContext, e)
		}
		seen[e.OpContext] = true
	}
	if len(seen) != total {
		t.Fatalf("%d distinct receives ended, want %d", len(seen), total)
	}
}

// BenchmarkPostReceiveDirect is the receive queue's share of one datagram
// on the direct path: post, an empty poll, a receive and its completion.
func BenchmarkPostReceiveDirect(b *testing.B) {
	q := New(Config{Size: 64})
	cq := &countCQ{}
	buf := make([]byte, 64)
	src := &fakeSource{cq: cq}
	msg := []byte("payload")
	m := provider.Msg{Buf: buf, Context: new(int), Flags: provider.FlagCompletion}
	b.ReportAllocs()
	for b.Loop() {
		if err := q.Post(&m, false); err != nil {
			b.Fatal(err)
		}
		q.ReceiveDirect(src) // empty
		src.msgs = append(src.msgs[:0], msg)
		q.ReceiveDirect(src)
	}
}

// TestReceiveDirectFreesClean checks that the entries the direct path
// gives back (freePosted resets only what a plain posted receive uses)
// return to the queue (as its spare) as a fresh entry, holding no reference to the
// application's buffers, descriptors or context: single buffer with a
// descriptor, and a scatter list with one.
func TestReceiveDirectFreesClean(t *testing.T) {
	q := New(Config{})
	p := newPeer(q)
	src := &fakeSource{cq: p.cq}
	desc := provider.MRDesc(&provider.MRRegion{})
	for _, m := range []provider.Msg{
		{Buf: make([]byte, 8), Desc: desc, Context: "buf", Flags: provider.FlagCompletion},
		{IOV: [][]byte{make([]byte, 4), make([]byte, 4)}, Descs: []provider.MRDesc{desc, desc}, Context: "iov",
			Flags: provider.FlagCompletion},
	} {
		if err := q.Post(&m, false); err != nil {
			t.Fatal(err)
		}
		src.msgs = [][]byte{[]byte("12345678")}
		if st := q.ReceiveDirect(src); st != DirectDone {
			t.Fatalf("%v: status %v", m.Context, st)
		}
		q.mu.Lock()
		e := q.spare // the entry freed last (alloc took the spare for the receive)
		q.mu.Unlock()
		if e == nil {
			t.Fatalf("%v: the freed entry is not the spare", m.Context)
		}
		want := entry{q: q}
		want.rx.OwnerContext = e
		if !reflect.DeepEqual(*e, want) {
			t.Fatalf("%v: freed entry %+v, want a fresh one", m.Context, *e)
		}
	}
}
