package tcp

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/provider"
)

// Resource management (fi_domain(3) FI_RM_ENABLED): no completion is ever
// lost. Posts that would need room the CQ does not have fail with EAGAIN;
// messages whose completion has no room wait in the stream.

// drainCQ reads every queued entry of q (errors too) and fails on an
// overrun. It returns the number of entries read.
func drainCQ(t testing.TB, q *cq.CQ) int {
	t.Helper()
	var ents [16]provider.CQEntry
	got := 0
	for {
		n, err := q.Read(ents[:])
		got += n
		switch err {
		case nil:
			continue
		case provider.EAVAIL:
			var ee provider.CQErrEntry
			if err := q.ReadErr(&ee); err != nil {
				t.Fatalf("readerr: %v", err)
			}
			got++
			continue
		case provider.EAGAIN:
			return got
		case provider.EOVERRUN:
			t.Fatalf("CQ overran under FI_RM_ENABLED after %d entries", got)
		default:
			t.Fatalf("cq read: %v", err)
		}
	}
}

// TestRMManyPosters: 64 goroutines post 64,000 sends through one endpoint
// whose CQs hold 1,024 entries; every accepted send yields exactly one
// completion, every message one receive completion, and no CQ overruns
// (the defect: 1,024 completions readable, the rest lost).
func TestRMManyPosters(t *testing.T) {
	const posters, each = 64, 1000
	total := posters * each
	if testing.Short() {
		total = posters * 100
	}
	per := total / posters
	cli, srv := pair(t, opts{cqSize: 1024})
	var accepted, txDone, rxDone atomic.Int64
	stop := make(chan struct{})
	var fail atomic.Value
	failf := func(s string) {
		fail.CompareAndSwap(nil, s)
	}
	var wg sync.WaitGroup
	deadline := time.Now().Add(60 * time.Second)
	for g := 0; g < posters; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; {
				err := cli.ep.Send(provider.Msg{Buf: []byte("0123456789"), Context: i, Flags: provider.FlagCompletion})
				switch err {
				case nil:
					accepted.Add(1)
					i++
				case provider.EAGAIN:
					if time.Now().After(deadline) {
						failf("sends still refused at the deadline")
						return
					}
					runtime.Gosched()
				default:
					failf("send: " + err.Error())
					return
				}
			}
		}()
	}
	// The sender's CQ reader (which also drives progress).
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ents [64]provider.CQEntry
		for txDone.Load() < int64(total) {
			select {
			case <-stop:
				return
			default:
			}
			n, err := cli.txCQ.Read(ents[:])
			txDone.Add(int64(n))
			if err == provider.EOVERRUN {
				failf("transmit CQ overran")
				return
			}
			if err != nil && err != provider.EAGAIN {
				failf("tx read: " + err.Error())
				return
			}
			runtime.Gosched()
		}
	}()
	// The receiver keeps receives posted and reads its CQ.
	var ents [64]provider.CQEntry
	buf := make([]byte, 16)
	posted := 0
	for rxDone.Load() < int64(total) && fail.Load() == nil && time.Now().Before(deadline) {
		for posted < total {
			m := provider.Msg{Buf: buf, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
			if srv.rq.Post(&m, false) != nil {
				break
			}
			posted++
		}
		n, err := srv.rxCQ.Read(ents[:])
		rxDone.Add(int64(n))
		if err == provider.EOVERRUN {
			failf("receive CQ overran")
			break
		}
		if err != nil && err != provider.EAGAIN {
			failf("rx read: " + err.Error())
			break
		}
		runtime.Gosched()
	}
	// Wait for the posters too: one may have had its send accepted (and
	// even completed) without having counted it in accepted yet.
	for (accepted.Load() < int64(total) || txDone.Load() < accepted.Load()) && fail.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if f := fail.Load(); f != nil {
		t.Fatal(f)
	}
	if a, tx, rx := accepted.Load(), txDone.Load(), rxDone.Load(); a != int64(total) || tx != a || rx != a {
		t.Fatalf("%d sends accepted, %d send completions, %d receive completions; want %d of each", a, tx, rx, total)
	}
	if ov, dropped := cli.txCQ.Overrun(); ov || dropped != 0 {
		t.Fatalf("transmit CQ overrun %v, %d dropped", ov, dropped)
	}
}

// waitCounts progresses the nodes until cond holds, failing at deadline.
func waitCounts(t *testing.T, what string, deadline time.Time, cond func() bool, nodes ...*node) {
	t.Helper()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out", what)
		}
		for _, n := range nodes {
			n.ep.Progress()
		}
		runtime.Gosched()
	}
}

// TestRMUnexpectedMatchNeedsRoom: a receive that matches a queued
// unexpected message completes at once, so with the receive CQ full it is
// refused (EAGAIN) and the message stays queued; once the CQ is read the
// receive is accepted and completes.
func TestRMUnexpectedMatchNeedsRoom(t *testing.T) {
	cli, srv := pair(t, opts{cqSize: 2})
	// Two expected messages fill the receive CQ.
	srv.post(make([]byte, 8), "a")
	srv.post(make([]byte, 8), "b")
	cli.send([]byte("a"), nil, 0)
	cli.send([]byte("b"), nil, 0)
	deadline := time.Now().Add(waitLimit)
	waitCounts(t, "receive CQ full", deadline, srv.rxCQ.Full, srv, cli)
	// The third message arrives unexpected (buffered, no completion yet).
	if n := drainCQ(t, cli.txCQ); n != 2 {
		t.Fatalf("%d send completions, want 2", n)
	}
	cli.send([]byte("c"), nil, 0)
	waitCounts(t, "unexpected message queued", deadline, func() bool { _, u := srv.rq.Counts(); return u == 1 }, srv, cli)
	m := provider.Msg{Buf: make([]byte, 8), Context: "c", Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
	if err := srv.rq.Post(&m, false); err != provider.EAGAIN {
		t.Fatalf("receive matching a queued message with the CQ full: %v, want EAGAIN", err)
	}
	if _, u := srv.rq.Counts(); u != 1 {
		t.Fatalf("the refused receive took the message (%d queued)", u)
	}
	if n := drainCQ(t, srv.rxCQ); n != 2 {
		t.Fatalf("read %d of the 2 queued receive completions", n)
	}
	if err := srv.rq.Post(&m, false); err != nil {
		t.Fatalf("receive after the CQ was read: %v", err)
	}
	expectComp(t, srv.rxCQ, "c", provider.FlagRecv|provider.FlagMsg, cli)
}

// TestRMMultiRecvSmallCQ: one multi-receive buffer serving more messages
// than the receive CQ holds: every message completes (the stream waits for
// room), the last with FI_MULTI_RECV, and the CQ never overruns.
func TestRMMultiRecvSmallCQ(t *testing.T) {
	for _, auto := range []bool{false, true} {
		cli, srv := pair(t, opts{cqSize: 2, auto: auto})
		const msgs, size = 10, 100
		srv.rq.SetMinMultiRecv(size)
		m := provider.Msg{Buf: make([]byte, msgs*size), Context: "multi", Addr: provider.AddrUnspec,
			Flags: provider.FlagCompletion | provider.FlagMultiRecv}
		if err := srv.rq.Post(&m, false); err != nil {
			t.Fatal(err)
		}
		// Injects need no transmit completion: all ten are on the wire
		// at once, more than the receive CQ holds.
		for i := 0; i < msgs; i++ {
			if err := cli.ep.Send(provider.Msg{Buf: pattern(make([]byte, size), i), Flags: provider.FlagInject}); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(waitLimit)
		waitCounts(t, "receive CQ full", deadline, srv.rxCQ.Full, srv, cli)
		var got []provider.CQEntry
		var ents [1]provider.CQEntry
		for len(got) < msgs {
			if time.Now().After(deadline) {
				t.Fatalf("auto=%v: %d receive completions", auto, len(got))
			}
			cli.ep.Progress()
			// One at a time, so that the CQ stays full.
			n, err := srv.rxCQ.Read(ents[:])
			if err != nil && err != provider.EAGAIN {
				t.Fatalf("auto=%v: receive CQ read after %d: %v", auto, len(got), err)
			}
			got = append(got, ents[:n]...)
			runtime.Gosched()
		}
		for i, e := range got {
			want := provider.FlagRecv | provider.FlagMsg
			if i == msgs-1 {
				want |= provider.FlagMultiRecv
			}
			if e.Flags != want || e.Len != size || e.OpContext != "multi" {
				t.Fatalf("auto=%v: completion %d: %+v", auto, i, e)
			}
		}
		expectEmpty(t, srv.rxCQ, 20*time.Millisecond, cli)
	}
}

// TestRMRMA: RMA initiator completions reserve room like sends (EAGAIN on a
// full transmit CQ); remote CQ data of writes waits at the target for room
// in its receive CQ and is never lost.
func TestRMRMA(t *testing.T) {
	cli, srv := pair(t, opts{cqSize: 2})
	mem := make([]byte, 4096)
	if _, err := srv.mr.Register([][]byte{mem}, rmaAccess, 0, 0xc0de, true); err != nil {
		t.Fatal(err)
	}
	wr := func(i int) error {
		return cli.ep.Write(provider.Msg{Buf: []byte("abcdefgh"), Context: i, Data: uint64(i),
			Flags:  provider.FlagCompletion | provider.FlagRemoteCQData,
			RMAOne: provider.RMAIOV{Addr: uint64(8 * i), Len: 8, Key: 0xc0de}})
	}
	rd := func(i int) error {
		return cli.ep.Read(provider.Msg{Buf: make([]byte, 8), Context: i, Flags: provider.FlagCompletion,
			RMAOne: provider.RMAIOV{Addr: 0, Len: 8, Key: 0xc0de}})
	}
	if err := wr(0); err != nil {
		t.Fatal(err)
	}
	if err := rd(1); err != nil {
		t.Fatal(err)
	}
	if err := wr(2); err != provider.EAGAIN {
		t.Fatalf("write with the transmit CQ full: %v, want EAGAIN", err)
	}
	if err := rd(2); err != provider.EAGAIN {
		t.Fatalf("read with the transmit CQ full: %v, want EAGAIN", err)
	}
	deadline := time.Now().Add(waitLimit)
	waitCounts(t, "initiator completions", deadline, func() bool { return cli.txCQ.Len() == 2 }, srv, cli)
	if n := drainCQ(t, cli.txCQ); n != 2 {
		t.Fatalf("%d initiator completions, want 2", n)
	}
	// Inject writes with remote CQ data (no initiator completion): more
	// target completions than the target's CQ holds.
	const writes = 6
	for i := 1; i < writes; i++ {
		if err := cli.ep.Write(provider.Msg{Buf: []byte("abcdefgh"), Data: uint64(i),
			Flags:  provider.FlagInject | provider.FlagRemoteCQData,
			RMAOne: provider.RMAIOV{Addr: uint64(8 * i), Len: 8, Key: 0xc0de}}); err != nil {
			t.Fatal(err)
		}
	}
	waitCounts(t, "target CQ full", deadline, srv.rxCQ.Full, srv, cli)
	var data []uint64
	var ents [1]provider.CQEntry
	for len(data) < writes {
		if time.Now().After(deadline) {
			t.Fatalf("%d target completions of %d", len(data), writes)
		}
		cli.ep.Progress()
		n, err := srv.rxCQ.Read(ents[:])
		if err != nil && err != provider.EAGAIN {
			t.Fatalf("target CQ: %v", err)
		}
		for _, e := range ents[:n] {
			data = append(data, e.Data)
		}
		runtime.Gosched()
	}
	for i, d := range data {
		if d != uint64(i) {
			t.Fatalf("remote CQ data out of order or lost: %v", data)
		}
	}
	expectEmpty(t, srv.rxCQ, 20*time.Millisecond, cli)
}

// TestRMNoCompletionNoReservation: an inject and a send without
// FlagCompletion (selective completion) write no CQ entry, so a full
// transmit CQ does not refuse them.
func TestRMNoCompletionNoReservation(t *testing.T) {
	cli, srv := pair(t, opts{cqSize: 2})
	for i := 0; i < 2; i++ {
		srv.post(make([]byte, 8), i)
		cli.send([]byte("x"), i, 0)
	}
	if !cli.txCQ.Full() {
		t.Fatal("transmit CQ not full after two sends")
	}
	if err := cli.ep.Send(provider.Msg{Buf: []byte("inj"), Flags: provider.FlagInject}); err != nil {
		t.Fatalf("inject with the transmit CQ full: %v", err)
	}
	if err := cli.ep.Send(provider.Msg{Buf: []byte("sel")}); err != nil {
		t.Fatalf("send without FlagCompletion with the transmit CQ full: %v", err)
	}
	if n := drainCQ(t, cli.txCQ); n != 2 {
		t.Fatalf("%d transmit completions, want the 2 requested", n)
	}
	expectEmpty(t, cli.txCQ, 20*time.Millisecond, srv)
}

// TestRMDisabledOverruns: with FI_RM_DISABLED nothing is reserved and a
// full CQ overruns, as fi_cq(3) describes.
func TestRMDisabledOverruns(t *testing.T) {
	cli, srv := pair(t, opts{cqSize: 2, noRM: true})
	for i := 0; i < 3; i++ {
		srv.post(make([]byte, 8), i)
		cli.send([]byte("x"), i, 0)
	}
	deadline := time.Now().Add(waitLimit)
	waitCounts(t, "overrun", deadline, func() bool { ov, _ := cli.txCQ.Overrun(); return ov }, srv, cli)
}

// TestRMSharedCQ: two endpoints (two connections) post into one transmit
// CQ of size 4 from several goroutines: the reservations of both count
// against the one CQ, every accepted send completes exactly once, and the
// CQ never overruns.
func TestRMSharedCQ(t *testing.T) {
	shared := must(cq.New(cq.Config{Size: 4, Format: provider.CQFormatContext, ResourceMgmt: true}))(t)
	defer shared.Close()
	info := loInfo(t, opts{})
	l := listen(t, info)
	o := opts{txCQ: shared}
	c1, s1 := pairWith(t, l, info, o, nil, nil)
	c2, s2 := pairWith(t, l, info, o, nil, nil)
	const per = 200
	type key struct{ ep, i int }
	var mu sync.Mutex
	seen := map[key]int{}
	var wg sync.WaitGroup
	deadline := time.Now().Add(30 * time.Second)
	var fail atomic.Value
	for k, c := range []*node{c1, c1, c2, c2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; {
				err := c.ep.Send(provider.Msg{Buf: []byte("s"), Context: key{k, i}, Flags: provider.FlagCompletion})
				switch {
				case err == nil:
					i++
				case err != provider.EAGAIN:
					fail.CompareAndSwap(nil, err.Error())
					return
				case time.Now().After(deadline):
					fail.CompareAndSwap(nil, "sends refused at the deadline")
					return
				}
				runtime.Gosched()
			}
		}()
	}
	// Receivers: each server keeps receives posted and drains its CQ.
	var ents [8]provider.CQEntry
	got := 0
	for got < 4*per && fail.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d completions", got, 4*per)
		}
		for _, s := range []*node{s1, s2} {
			m := provider.Msg{Buf: make([]byte, 4), Addr: provider.AddrUnspec}
			_ = s.rq.Post(&m, false)
			s.rxCQ.Read(ents[:])
		}
		n, err := shared.Read(ents[:])
		if err == provider.EOVERRUN {
			t.Fatal("shared CQ overran")
		}
		if shared.Len() > 4 {
			t.Fatalf("shared CQ of size 4 holds %d", shared.Len())
		}
		mu.Lock()
		for _, e := range ents[:n] {
			seen[e.OpContext.(key)]++
		}
		mu.Unlock()
		got += n
	}
	wg.Wait()
	if f := fail.Load(); f != nil {
		t.Fatal(f)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("send %v completed %d times", k, n)
		}
	}
	if len(seen) != 4*per {
		t.Fatalf("%d distinct completions, want %d", len(seen), 4*per)
	}
}

// TestRMFlushAfterDisconnect: when the connection ends, the receives still
// posted complete with FI_ECANCELED; with more of them than the receive CQ
// holds, the rest are flushed as the application reads the CQ, none lost.
func TestRMFlushAfterDisconnect(t *testing.T) {
	cli, srv := pair(t, opts{cqSize: 2})
	const posted = 5
	for i := 0; i < posted; i++ {
		m := provider.Msg{Buf: make([]byte, 8), Context: i, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
		if err := srv.rq.Post(&m, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := cli.ep.Shutdown(0); err != nil {
		t.Fatal(err)
	}
	seen := map[any]bool{}
	deadline := time.Now().Add(waitLimit)
	for len(seen) < posted {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d receives flushed", len(seen), posted)
		}
		var ents [4]provider.CQEntry
		n, err := srv.rxCQ.Read(ents[:])
		switch {
		case n > 0:
			t.Fatalf("successful completion %+v after the peer left", ents[0])
		case err == provider.EAVAIL:
			var ee provider.CQErrEntry
			if err := srv.rxCQ.ReadErr(&ee); err != nil {
				t.Fatal(err)
			}
			if ee.Err != provider.ECANCELED || seen[ee.OpContext] {
				t.Fatalf("flush entry %+v (seen %v)", ee, seen)
			}
			seen[ee.OpContext] = true
		case err == provider.EOVERRUN:
			t.Fatal("receive CQ overran while flushing")
		}
		runtime.Gosched()
	}
}

// TestRMRefusedPostSkipsLock: a post refused because the transmit CQ has
// no room answers EAGAIN without taking the endpoint's lock (held across
// socket writes and receive progress), so refused posts do not queue
// behind it; an accepted post still does.
func TestRMRefusedPostSkipsLock(t *testing.T) {
	cli, srv := pair(t, opts{cqSize: 2})
	for i := 0; i < 2; i++ {
		srv.post(make([]byte, 8), i)
		cli.send([]byte("x"), i, 0)
	}
	waitCounts(t, "transmit CQ full", time.Now().Add(waitLimit), cli.txCQ.Full, srv, cli)
	cli.ep.mu.Lock()
	done := make(chan error, 1)
	go func() {
		done <- cli.ep.Send(provider.Msg{Buf: []byte("x"), Context: "refused", Flags: provider.FlagCompletion})
	}()
	select {
	case err := <-done:
		cli.ep.mu.Unlock()
		if err != provider.EAGAIN {
			t.Fatalf("send with the transmit CQ full: %v, want EAGAIN", err)
		}
	case <-time.After(waitLimit):
		cli.ep.mu.Unlock()
		<-done
		t.Fatal("a refused send waited for the endpoint's lock")
	}
	if n := drainCQ(t, cli.txCQ); n != 2 {
		t.Fatalf("%d transmit completions, want 2", n)
	}
	// A post that fails after its reservation (not connected) gives the
	// room back.
	cli.ep.mu.Lock()
	cli.ep.setState(epDown)
	cli.ep.mu.Unlock()
	for i := 0; i < 3; i++ {
		if err := cli.ep.Send(provider.Msg{Buf: []byte("x"), Flags: provider.FlagCompletion}); err != provider.ENOTCONN {
			t.Fatalf("send on a down endpoint: %v, want ENOTCONN", err)
		}
	}
	if cli.txCQ.Full() {
		t.Fatal("failed posts kept their reservations")
	}
}

// BenchmarkRMContendedPosts: 64 goroutines post sends through one endpoint
// whose transmit CQ holds 16 entries while one goroutine reads it. It
// reports the Send calls that took more than 1 ms (slow-calls, and their
// share of all calls, slow-%) and the share refused with EAGAIN
// (refused-%).
func BenchmarkRMContendedPosts(b *testing.B) {
	const posters = 64
	cli, srv := pair(b, opts{cqSize: 16})
	_ = srv
	var calls, slow, refused, accepted atomic.Int64
	var rxStop atomic.Bool
	var wg sync.WaitGroup
	// The receiver posts receives and reads its CQ; the sender's CQ is read
	// by one goroutine.
	wg.Add(2)
	go func() {
		defer wg.Done()
		var ents [16]provider.CQEntry
		buf := make([]byte, 16)
		for !rxStop.Load() {
			for {
				m := provider.Msg{Buf: buf, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
				if srv.rq.Post(&m, false) != nil {
					break
				}
			}
			srv.rxCQ.Read(ents[:])
			runtime.Gosched()
		}
	}()
	go func() {
		defer wg.Done()
		var ents [16]provider.CQEntry
		for !rxStop.Load() {
			cli.txCQ.Read(ents[:])
			runtime.Gosched()
		}
	}()
	b.ResetTimer()
	per := b.N/posters + 1
	var pw sync.WaitGroup
	for g := 0; g < posters; g++ {
		pw.Add(1)
		go func() {
			defer pw.Done()
			for i := 0; i < per; {
				t0 := time.Now()
				err := cli.ep.Send(provider.Msg{Buf: []byte("0123456789"), Flags: provider.FlagCompletion})
				if time.Since(t0) > time.Millisecond {
					slow.Add(1)
				}
				calls.Add(1)
				switch err {
				case nil:
					accepted.Add(1)
					i++
				case provider.EAGAIN:
					refused.Add(1)
					runtime.Gosched()
				default:
					b.Error(err)
					return
				}
			}
		}()
	}
	pw.Wait()
	b.StopTimer()
	rxStop.Store(true)
	wg.Wait()
	b.ReportMetric(float64(slow.Load()), "slow-calls")
	b.ReportMetric(100*float64(slow.Load())/float64(calls.Load()), "slow-%")
	b.ReportMetric(100*float64(refused.Load())/float64(calls.Load()), "refused-%")
}
