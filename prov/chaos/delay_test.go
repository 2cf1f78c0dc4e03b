package chaos_test

import (
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
)

// TestFaultDelay: the transmits the stream picks are held for DelayTime
// and those after them queue behind: nothing arrives early, everything
// arrives, in order, on every endpoint type.
func TestFaultDelay(t *testing.T) {
	const n, seed, rate = 32, 2, 0.2
	const delay = 150 * time.Millisecond
	want := draws(seed, rate, n)
	first := -1
	for i, w := range want {
		if w {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatalf("seed %d delays nothing", seed)
	}
	for _, tg := range targets {
		t.Run(tg.prov+"/"+tg.ept.String(), func(t *testing.T) {
			h, a, b := pair(t, tg.prov, tg.ept, 0, &chaos.Config{Seed: seed, Delay: rate, DelayTime: delay})
			start := time.Now()
			bufs := sendAll(t, a, b, n)
			early := drain(t, b.rxcq, n, delay/3)
			if time.Since(start) < delay && len(early.ok) > first {
				t.Fatalf("%d messages arrived within %v, but message %d is delayed %v", len(early.ok), time.Since(start), first, delay)
			}
			if tx := drain(t, a.txcq, n, 10*time.Second); len(tx.ok) != n {
				t.Fatalf("%d send completions", len(tx.ok))
			}
			if time.Since(start) < delay {
				t.Fatalf("all sent within %v, under the delay", time.Since(start))
			}
			rest := received(t, b, bufs, n-len(early.ok))
			var got []int
			for _, e := range early.ok {
				got = append(got, int(payloadOf(bufs[e.OpContext.(int)])))
			}
			got = append(got, rest...)
			if !equal(got, indexes(n, func(int) bool { return true })) {
				t.Fatalf("received %v: not all, in order", got)
			}
			if s := h.Stats(); s.Delayed != uint64(len(indexes(n, func(i int) bool { return want[i] }))) {
				t.Fatalf("Stats().Delayed = %d", s.Delayed)
			}
		})
	}
}

// TestFaultReorder: over udp (no FI_ORDER_SAS), each transmit the stream
// picks is overtaken by the next one (ReorderTime is long enough that the
// next one always comes first); over tcp RDM (FI_ORDER_SAS) nothing is
// reordered and nothing is drawn.
func TestFaultReorder(t *testing.T) {
	const n, seed, rate = 32, 9, 0.25
	want := draws(seed, rate, n)
	// What the documented rule gives: a picked transmit waits; the next
	// transmit that is not picked is posted, then those waiting.
	var expect, waiting []int
	for i := 0; i < n; i++ {
		if want[i] {
			waiting = append(waiting, i)
			continue
		}
		expect = append(expect, i)
		expect = append(expect, waiting...)
		waiting = nil
	}
	expect = append(expect, waiting...) // posted once ReorderTime passed
	if equal(expect, indexes(n, func(int) bool { return true })) {
		t.Fatalf("seed %d reorders nothing", seed)
	}
	h, a, b := pair(t, "udp", fabric.EPDgram, 0, &chaos.Config{Seed: seed, Reorder: rate, ReorderTime: 500 * time.Millisecond})
	bufs := sendAll(t, a, b, n)
	if tx := drain(t, a.txcq, n, 10*time.Second); len(tx.ok) != n {
		t.Fatalf("%d send completions", len(tx.ok))
	}
	if got := received(t, b, bufs, n); !equal(got, expect) {
		t.Fatalf("received %v, want %v", got, expect)
	}
	if s := h.Stats(); s.Reordered != uint64(len(indexes(n, func(i int) bool { return want[i] }))) {
		t.Fatalf("Stats().Reordered = %d", s.Reordered)
	}

	h, a, b = pair(t, "tcp", fabric.EPRDM, 0, &chaos.Config{Seed: seed, Reorder: 1})
	bufs = sendAll(t, a, b, n)
	if got := received(t, b, bufs, n); !equal(got, indexes(n, func(int) bool { return true })) {
		t.Fatalf("tcp RDM (FI_ORDER_SAS) received %v", got)
	}
	if s := h.Stats(); s.Reordered != 0 {
		t.Fatalf("Stats().Reordered = %d on an ordered endpoint", s.Reordered)
	}
}

// TestFaultDelayCancelClose: a held transmit is found by Cancel (an
// FI_ECANCELED error completion, and it is never sent), and Close posts
// what is still held before the endpoint closes.
func TestFaultDelayCancelClose(t *testing.T) {
	_, a, b := pair(t, "udp", fabric.EPDgram, 0, &chaos.Config{Delay: 1, DelayTime: time.Hour})
	bufs := sendAll(t, a, b, 3)
	if err := a.ep.Cancel(1); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	tx := drain(t, a.txcq, 1, 5*time.Second)
	if len(tx.errs) != 1 || tx.errs[0].OpContext != 1 || !errors.Is(tx.errs[0].Err, fabric.ErrCanceled) {
		t.Fatalf("after Cancel: %+v", tx)
	}
	if err := a.ep.Close(); err != nil {
		t.Fatal(err)
	}
	if got := received(t, b, bufs, 2); !equal(got, []int{0, 2}) {
		t.Fatalf("received %v after Close, want [0 2]", got)
	}
}

// TestFaultDelayBlockingRead: a blocking CQ read (fi_cq_sread) wakes when
// a held transmit falls due and posts it, in a domain without timers
// (FI_THREAD_DOMAIN): progress needs no helper goroutine.
func TestFaultDelayBlockingRead(t *testing.T) {
	_, a, b := pairThreading(t, fabric.ThreadDomain, &chaos.Config{Delay: 1, DelayTime: 30 * time.Millisecond})
	bufs := sendAll(t, a, b, 1)
	ent := make([]fabric.CQEntry, 1)
	start := time.Now()
	if n, err := a.txcq.SRead(ent, 1, 5*time.Second); err != nil || n != 1 || ent[0].OpContext != 0 {
		t.Fatalf("ReadWait: %d %v %+v", n, err, ent)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("send completed after %v, before its delay", d)
	}
	if got := received(t, b, bufs, 1); !equal(got, []int{0}) {
		t.Fatalf("received %v", got)
	}
}

func payloadOf(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// TestFaultDelayCopies: a held inject's data, and a held send's vector
// (not its buffers, which the application owns until the completion), are
// copied: the application may reuse them once the call returned.
func TestFaultDelayCopies(t *testing.T) {
	_, a, b := pair(t, "udp", fabric.EPDgram, 0, &chaos.Config{Delay: 1, DelayTime: 20 * time.Millisecond})
	bufs := [][]byte{make([]byte, 64), make([]byte, 64)}
	for j, buf := range bufs {
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, j); err != nil {
			t.Fatal(err)
		}
	}
	inj := []byte("inject")
	if err := a.ep.Inject(inj, a.peer); err != nil {
		t.Fatal(err)
	}
	copy(inj, "XXXXXX")
	iov := [][]byte{[]byte("vec"), []byte("tor")}
	if err := a.ep.SendV(iov, nil, a.peer, "v"); err != nil {
		t.Fatal(err)
	}
	iov[0] = []byte("###")
	rx := drain(t, b.rxcq, 2, 5*time.Second)
	if len(rx.ok) != 2 {
		t.Fatalf("%+v", rx)
	}
	got := []string{string(bufs[0][:rx.ok[0].Len]), string(bufs[1][:rx.ok[1].Len])}
	if got[0] != "inject" || got[1] != "vector" {
		t.Fatalf("received %q, want [inject vector]", got)
	}
}

// TestFaultDelayKeepsRoom: under resource management a held transmit
// keeps room for its completion in the transmit CQ, as the core
// provider's post would: once the CQ's 256 entries are promised, a post
// answers FI_EAGAIN; canceling the held transmits writes their
// FI_ECANCELED entries into that room, one each.
func TestFaultDelayKeepsRoom(t *testing.T) {
	_, a, _ := pair(t, "udp", fabric.EPDgram, 0, &chaos.Config{Delay: 1, DelayTime: time.Hour})
	posted := 0
	for i := 0; i < 300; i++ {
		err := a.ep.Send(payload(i), nil, a.peer, i)
		if errors.Is(err, fabric.ErrAgain) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		posted++
	}
	if posted != 256 {
		t.Fatalf("%d sends held before FI_EAGAIN, want 256 (the CQ's size)", posted)
	}
	for i := 0; i < posted; i++ {
		if err := a.ep.Cancel(i); err != nil {
			t.Fatalf("cancel %d: %v", i, err)
		}
	}
	tx := drain(t, a.txcq, posted+1, 200*time.Millisecond)
	if len(tx.errs) != posted || len(tx.ok) != 0 {
		t.Fatalf("%d completions, %d errors; want %d FI_ECANCELED", len(tx.ok), len(tx.errs), posted)
	}
	for i, e := range tx.errs {
		if e.OpContext != i || !errors.Is(e.Err, fabric.ErrCanceled) {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if err := a.ep.Send(payload(0), nil, a.peer, "after"); err != nil {
		t.Fatalf("send once the room is free again: %v", err)
	}
}
