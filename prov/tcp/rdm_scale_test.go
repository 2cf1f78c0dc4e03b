package tcp

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Scale: many peers on one endpoint, the idle-connection bound, per-op
// cost against the number of peers and of posted receives.

// fltPeers opens n nodes.
func fltPeers(t testing.TB, n int) []*fltNode {
	t.Helper()
	ps := make([]*fltNode, n)
	for i := range ps {
		ps[i] = newFlt(t, fltOpts{})
	}
	return ps
}

// pollAll progresses every node (reading its CQs into the maps by
// context) until done reports true or d passes.
func pollAll(t testing.TB, nodes []*fltNode, d time.Duration, done func() bool, on func(i int, c fltComp, tx bool)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var buf []fltComp
	for !done() {
		for i, n := range nodes {
			for _, c := range poll(n.rx, buf[:0]) {
				on(i, c, false)
			}
			for _, c := range poll(n.tx, buf[:0]) {
				on(i, c, true)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done within %v", d)
		}
	}
}

// TestRDMThousandPeers: one endpoint with an idle bound of 100 exchanges
// tagged messages with 1,000 peers, three rounds (to every peer, from
// every peer, to every peer again), connections opened on demand: idle
// ones beyond the bound are closed gracefully and reopened by whichever
// side sends next; every message arrives exactly once and every send
// succeeds; the hub never holds much more than the bound.
func TestRDMThousandPeers(t *testing.T) {
	peers := 1000
	if testing.Short() {
		peers = 200
	}
	const bound = 100
	leakCheck(t)
	t.Setenv(envMaxConns, strconv.Itoa(bound))
	hub := newFlt(t, fltOpts{})
	if hub.ep.maxConns != bound {
		t.Fatalf("bound %d, want %d from %s", hub.ep.maxConns, bound, envMaxConns)
	}
	t.Setenv(envMaxConns, "")
	ps := fltPeers(t, peers)
	addrs := make([]provider.Addr, peers)
	for i, p := range ps {
		addrs[i] = hub.mustInsert(t, p.name)
		p.mustInsert(t, hub.name)
	}
	maxLive := 0
	nodes := append([]*fltNode{hub}, ps...)
	track := func() {
		hub.ep.mu.Lock()
		maxLive = max(maxLive, hub.ep.nconns)
		hub.ep.mu.Unlock()
	}
	bufs := make([][]byte, peers)
	for round := 0; round < 3; round++ {
		toPeers := round != 1
		got, sent := make([]int, peers), 0
		for i, p := range ps {
			bufs[i] = make([]byte, 32)
			var err error
			if toPeers {
				err = p.recv(bufs[i], true, uint64(round), 0, i)
			} else {
				err = hub.recv(bufs[i], true, uint64(i), 0, i)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		recvd := 0
		on := func(k int, c fltComp, tx bool) {
			if c.err != 0 {
				t.Fatalf("round %d node %d: error completion %+v", round, k, c)
			}
			if tx {
				sent++
				return
			}
			i := c.ctx.(int)
			got[i]++
			recvd++
			if want := fmt.Sprintf("round %d peer %d", round, i); got[i] != 1 || string(bufs[i][:c.len]) != want {
				t.Fatalf("round %d message %d: %q (%d times)", round, i, bufs[i][:c.len], got[i])
			}
		}
		// Sends in batches of 50, each batch sent before the next: the
		// connections being set up for a batch are busy (not closed), so
		// the hub holds at most about bound + batch connections.
		const batch = batchSize
		for i, p := range ps {
			msg := []byte(fmt.Sprintf("round %d peer %d", round, i))
			var err error
			if toPeers {
				err = hub.send(addrs[i], msg, true, uint64(round), i)
			} else {
				err = p.send(0, msg, true, uint64(i), i)
			}
			if err != nil {
				t.Fatalf("round %d send %d: %v", round, i, err)
			}
			track()
			if (i+1)%batch == 0 {
				pollAll(t, nodes, 30*time.Second, func() bool { track(); return sent == i+1 }, on)
			}
		}
		pollAll(t, nodes, 30*time.Second, func() bool { track(); return recvd == peers && sent == peers }, on)
		hub.ep.mu.Lock()
		live := hub.ep.nconns
		t.Logf("round %d: %d connections open at the hub (%d draining), at most %d so far", round,
			live, len(hub.ep.draining), maxLive)
		hub.ep.mu.Unlock()
		if live > bound {
			t.Fatalf("round %d: %d connections open at the hub, bound %d", round, live, bound)
		}
	}
	if maxLive > bound+2*batchSize {
		t.Fatalf("the hub had %d connections open, bound %d", maxLive, bound)
	}
}

// batchSize is the batch of TestRDMThousandPeers.
const batchSize = 50

// idlePeers connects n raw rxm peers to hub (valid connect data, then
// silence): n idle connections at the hub, without n endpoints' worth of
// goroutines in the process.
func idlePeers(tb testing.TB, hub *fltNode, n int) {
	tb.Helper()
	port := strconv.Itoa(listenPortOf(hub.name))
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp4", "127.0.0.1:"+port, waitLimit)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { c.Close() })
		data := rxmwire.AppendConnect(nil, &rxmwire.Connect{Port: uint16(20000 + i), FlowCtrl: rxmwire.FlowCtrlPeerOff,
			EagerLimit: rxmwire.EagerLimit, RxSize: rxmwire.RxSize, ConnID: rxmwire.ConnID(4242, uint32(i))})
		req, _ := tcpwire.AppendCM(nil, tcpwire.CMConnReq, data)
		if _, err := c.Write(req); err != nil {
			tb.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(waitLimit))
		if _, err := io.ReadFull(c, make([]byte, tcpwire.CMHeaderSize+rxmwire.AcceptSize)); err != nil {
			tb.Fatalf("accept %d: %v", i, err)
		}
	}
}

// BenchmarkRDMPeers: one round trip of a tagged 64-byte message between
// a hub and one peer (the hub receives, so its progress runs) while the
// hub has n other peers connected and idle: flat in n means progress does
// not visit every connection.
func BenchmarkRDMPeers(b *testing.B) {
	for _, auto := range []bool{false, true} {
		for _, n := range []int{0, 100, 1000} {
			benchPeers(b, n, auto)
		}
	}
}

func benchPeers(b *testing.B, n int, auto bool) {
	name := fmt.Sprintf("manual/idle=%d", n)
	if auto {
		name = fmt.Sprintf("auto/idle=%d", n)
	}
	{
		b.Run(name, func(b *testing.B) {
			b.Setenv(envMaxConns, "0")
			hub, peer := newFlt(b, fltOpts{auto: auto}), newFlt(b, fltOpts{auto: auto})
			idlePeers(b, hub, n)
			hp, ph := hub.mustInsert(b, peer.name), peer.mustInsert(b, hub.name)
			msg, rb, hb := make([]byte, 64), make([]byte, 64), make([]byte, 64)
			var e [4]provider.CQEntry
			read := func(q *cq.CQ) {
				for got := 0; got < 1; {
					k, _ := q.Read(e[:])
					got += max(k, 0)
				}
			}
			round := func() {
				if err := peer.recv(rb, true, 2, 0, nil); err != nil {
					b.Fatal(err)
				}
				if err := hub.recv(hb, true, 3, 0, nil); err != nil {
					b.Fatal(err)
				}
				if err := hub.send(hp, msg, true, 2, nil); err != nil {
					b.Fatal(err)
				}
				read(peer.rx)
				if err := peer.send(ph, msg, true, 3, nil); err != nil {
					b.Fatal(err)
				}
				read(hub.rx)
				read(hub.tx)
				read(peer.tx)
			}
			round()
			hub.ep.mu.Lock()
			conns := hub.ep.nconns
			hub.ep.mu.Unlock()
			if conns != n+1 {
				b.Fatalf("%d connections at the hub, want %d", conns, n+1)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				round()
			}
		})
	}
}

// BenchmarkRDMPostedTagged: the cost of one tagged 64-byte message
// (send, receive, both completions) while n tagged receives are posted.
// match=newest: n receives with other tags stay posted and each message
// matches a receive posted after them (the worst case for a search in
// posting order); match=oldest: the n receives all take the message's tag
// and it matches the oldest (one is posted again after each).
func BenchmarkRDMPostedTagged(b *testing.B) {
	for _, n := range []int{10, 10000} {
		for _, newest := range []bool{false, true} {
			name := fmt.Sprintf("posted=%d/match=oldest", n)
			if newest {
				name = fmt.Sprintf("posted=%d/match=newest", n)
			}
			b.Run(name, func(b *testing.B) {
				a, r := newFlt(b, fltOpts{}), newFlt(b, fltOpts{})
				r.rq.Close() // a queue that takes 10,000 posted receives
				r.rq = srx.New(srx.Config{Tagged: true, Size: 1 << 16})
				r.rq.SetCompletion(r.rx, nil)
				r.ep.mu.Lock()
				r.ep.rq = r.rq
				r.ep.mu.Unlock()
				dst := a.mustInsert(b, r.name)
				rb := make([]byte, 64)
				const tag = 2
				for i := 0; i < n; i++ {
					t := uint64(tag)
					if newest {
						t = uint64(1000 + i)
					}
					if err := r.recv(rb, true, t, 0, nil); err != nil {
						b.Fatal(err)
					}
				}
				msg := make([]byte, 64)
				var e [4]provider.CQEntry
				round := func() {
					if err := r.recv(rb, true, tag, 0, nil); err != nil {
						b.Fatal(err)
					}
					if err := a.send(dst, msg, true, tag, nil); err != nil {
						b.Fatal(err)
					}
					for got := 0; got < 1; {
						k, _ := r.rx.Read(e[:])
						got += max(k, 0)
					}
					for got := 0; got < 1; {
						k, _ := a.tx.Read(e[:])
						got += max(k, 0)
					}
				}
				round() // connect
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					round()
				}
			})
		}
	}
}

// TestRDMIdleCloseUnderTraffic: with an idle bound of one connection, a
// hub receives a stream of tagged messages from one peer while it keeps
// switching to another peer (each switch closes the stream's connection
// whenever it is idle between two messages): the streaming peer's frames
// still queued move to a new connection, those on the old one are read
// first, and every message arrives once, in order, every send succeeding.
func TestRDMIdleCloseUnderTraffic(t *testing.T) {
	leakCheck(t)
	t.Setenv(envMaxConns, "1")
	hub := newFlt(t, fltOpts{})
	t.Setenv(envMaxConns, "")
	p1, p2 := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	h1, toP2 := p1.mustInsert(t, hub.name), hub.mustInsert(t, p2.name)
	hub.mustInsert(t, p1.name)
	const n = 3000
	bufs := make([][]byte, 64)
	for i := range bufs {
		bufs[i] = make([]byte, 64+msgPad)
		if err := hub.recv(bufs[i], true, 1<<32, 1<<32-1, i); err != nil {
			t.Fatal(err)
		}
	}
	pb := make([]byte, 16)
	for i := 0; i < n/100; i++ {
		if err := p2.recv(pb, true, 0, ^uint64(0), "p2"); err != nil {
			t.Fatal(err)
		}
	}
	next, got, sent, pings, pinged := 0, 0, 0, 0, 0
	var buf []fltComp
	deadline := time.Now().Add(60 * time.Second)
	for got < n || sent < n {
		time.Sleep(100 * time.Microsecond)
		for burst := 0; next < n && next-sent < 256 && burst < 10; burst++ {
			msg := append([]byte(strconv.Itoa(next)), make([]byte, msgPad)...)
			err := p1.send(h1, msg, true, 1<<32|uint64(next), next)
			if err == provider.EAGAIN {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			next++
		}
		for _, c := range poll(p1.tx, buf[:0]) {
			if c.err != 0 {
				t.Fatalf("send %v failed: %v", c.ctx, c.err)
			}
			sent++
		}
		for _, c := range poll(hub.rx, buf[:0]) {
			i := c.ctx.(int)
			if want := strconv.Itoa(got); c.err != 0 || c.tag != 1<<32|uint64(got) || string(bufs[i][:len(want)]) != want {
				t.Fatalf("hub received %+v %q, want message %d", c, bufs[i][:c.len], got)
			}
			got++
			if err := hub.recv(bufs[i], true, 1<<32, 1<<32-1, i); err != nil {
				t.Fatal(err)
			}
			if got%100 == 0 {
				if err := hub.send(toP2, []byte("ping"), true, 7, "ping"); err != nil {
					t.Fatal(err)
				}
				pings++
			}
		}
		for _, c := range poll(hub.tx, buf[:0]) {
			if c.err != 0 {
				t.Fatalf("ping failed: %+v", c)
			}
		}
		for _, c := range poll(p2.rx, buf[:0]) {
			if c.err != 0 {
				t.Fatalf("p2: %+v", c)
			}
			pinged++
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sent, %d received of %d within 60 s", sent, got, n)
		}
	}
	waitComps(t, p2.rx, pings-pinged, waitLimit, hub)
	hub.ep.mu.Lock()
	drained := hub.ep.drained
	hub.ep.mu.Unlock()
	t.Logf("%d messages in order; %d pings; %d connections closed for idleness", n, pings, drained)
	if drained < 5 {
		t.Fatalf("%d idle closes: the stream's connection was rarely closed; the test tested little", drained)
	}
}

// msgPad pads the messages of TestRDMIdleCloseUnderTraffic (large frames
// are more often half written when a connection is closed).
var msgPad = 16000
