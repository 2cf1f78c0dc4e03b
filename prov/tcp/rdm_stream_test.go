package tcp

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"runtime/debug"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Streamed messages between two of our endpoints (rdm_stream.go): above
// the eager limit up to the stream limit, one frame read straight into
// the receive instead of rxm's rendezvous.

// streamPair opens two nodes connected to each other (a small message
// each way), so that each knows the other is of this implementation.
func streamPair(t *testing.T) (a, b *fltNode, ab, ba provider.Addr) {
	t.Helper()
	t.Setenv(envCMA, "0") // streamed, not CMA, messages (rdm_cma_test.go)
	return goPair(t)
}

// goPair opens two nodes and connects them (a small message each way),
// checking that each recognised the other as of this implementation.
func goPair(t *testing.T) (a, b *fltNode, ab, ba provider.Addr) {
	t.Helper()
	a, b = newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	ab, ba = a.mustInsert(t, b.name), b.mustInsert(t, a.name)
	for _, x := range []struct {
		from, to *fltNode
		dest     provider.Addr
	}{{a, b, ab}, {b, a, ba}} {
		rb := make([]byte, 8)
		if err := x.to.recv(rb, false, 0, 0, "hi"); err != nil {
			t.Fatal(err)
		}
		if err := x.from.send(x.dest, []byte("hi"), false, 0, "hi"); err != nil {
			t.Fatal(err)
		}
		waitComps(t, x.to.rx, 1, waitLimit, x.from)
		waitComps(t, x.from.tx, 1, waitLimit, x.to)
	}
	for _, n := range []*fltNode{a, b} {
		n.ep.mu.Lock()
		ext := false
		for _, c := range n.ep.conns {
			ext = ext || (c != nil && c.ext)
		}
		n.ep.mu.Unlock()
		if !ext {
			t.Fatal("the peers did not recognise each other (GoMarker)")
		}
	}
	return a, b, ab, ba
}

// streamed returns how many messages n streamed.
func (n *fltNode) streamed() int {
	n.ep.mu.Lock()
	defer n.ep.mu.Unlock()
	return n.ep.streamed
}

// streamPattern returns size bytes that differ by seed and position.
func streamPattern(size int, seed byte) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

// TestRDMStreamSizes: sizes around the eager limit, the largest frame read
// whole, and the stream limit, untagged and tagged with remote CQ data,
// both ways: everything above the eager limit up to the stream limit is
// streamed, the rest is not, and every message arrives intact with its
// tag and data.
func TestRDMStreamSizes(t *testing.T) {
	leakCheck(t)
	freeMemory(t)
	a, b, ab, ba := streamPair(t)
	const limit = 2 << 20
	for _, n := range []*fltNode{a, b} {
		n.ep.mu.Lock()
		n.ep.streamLimit = limit
		n.ep.mu.Unlock()
	}
	whole := rdmMaxFrame - tcpwire.MaxHeaderSize - rxmwire.HeaderSize
	sizes := []int{rdmEagerSize - 1, rdmEagerSize, rdmEagerSize + 1, whole - 1, whole, whole + 1, 64 << 10,
		1<<20 + 3, limit, limit + 1}
	for i, size := range sizes {
		for _, tagged := range []bool{false, true} {
			for dir, x := range []struct {
				from, to *fltNode
				dest     provider.Addr
			}{{a, b, ab}, {b, a, ba}} {
				msg := streamPattern(size, byte(i))
				rb := make([]byte, size+10)
				tag := uint64(1000*i + dir)
				if err := x.to.recv(rb, tagged, tag, 0, "rx"); err != nil {
					t.Fatal(err)
				}
				before := x.from.streamed()
				m := provider.Msg{Buf: msg, Addr: x.dest, Tag: tag, Data: uint64(size), Context: "tx",
					Flags: provider.FlagCompletion | provider.FlagRemoteCQData}
				var err error
				if tagged {
					err = x.from.ep.TSend(m)
				} else {
					err = x.from.ep.Send(m)
				}
				if err != nil {
					t.Fatal(err)
				}
				rc := waitRx(t, x.to, x.from)
				if tx := waitComps(t, x.from.tx, 1, waitLimit, x.to); tx[0].err != 0 {
					t.Fatalf("size %d tagged %v: send %+v", size, tagged, tx[0])
				}
				if rc.Len != uint64(size) || !bytes.Equal(rb[:size], msg) || rc.Data != uint64(size) ||
					rc.Flags&provider.FlagRemoteCQData == 0 || (tagged && rc.Tag != tag) {
					t.Fatalf("size %d tagged %v: completion %+v, data equal %v", size, tagged, rc, bytes.Equal(rb[:size], msg))
				}
				want := before
				if size > rdmEagerSize && size <= limit {
					want++
				}
				if got := x.from.streamed(); got != want {
					t.Fatalf("size %d: %d messages streamed, want %d", size, got-before, want-before)
				}
			}
		}
	}
}

// waitRx waits for one successful receive completion of n (progressing
// other) and returns it.
func waitRx(t *testing.T, n, other *fltNode) provider.CQEntry {
	t.Helper()
	var e [1]provider.CQEntry
	deadline := time.Now().Add(waitLimit)
	for {
		k, err := n.rx.Read(e[:])
		if k == 1 {
			return e[0]
		}
		if err == provider.EAVAIL {
			var ee provider.CQErrEntry
			n.rx.ReadErr(&ee)
			t.Fatalf("receive error %+v", ee)
		}
		other.ep.Progress()
		if time.Now().After(deadline) {
			t.Fatal("no receive completion within 5 s")
		}
	}
}

// TestRDMStreamTruncated: a streamed message larger than its receive
// completes with FI_ETRUNC (the excess is dropped), posted or unexpected,
// and the connection carries the next message intact.
func TestRDMStreamTruncated(t *testing.T) {
	leakCheck(t)
	freeMemory(t)
	a, b, ab, _ := streamPair(t)
	const size = 200 << 10
	for _, unexpected := range []bool{false, true} {
		msg := streamPattern(size, 3)
		rb := make([]byte, size/2)
		if !unexpected {
			if err := b.recv(rb, false, 0, 0, "short"); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.send(ab, msg, false, 0, "big"); err != nil {
			t.Fatal(err)
		}
		if unexpected {
			waitComps(t, a.tx, 1, waitLimit, b)
			waitUnexp(t, b, 1)
			if err := b.recv(rb, false, 0, 0, "short"); err != nil {
				t.Fatal(err)
			}
		} else {
			waitComps(t, a.tx, 1, waitLimit, b)
		}
		c := waitComps(t, b.rx, 1, waitLimit, a)
		if c[0].ctx != "short" || c[0].err != provider.ETRUNC || !bytes.Equal(rb, msg[:size/2]) {
			t.Fatalf("unexpected %v: completion %+v, want FI_ETRUNC with the first half", unexpected, c[0])
		}
		next := streamPattern(size, 9)
		rb2 := make([]byte, size)
		if err := b.recv(rb2, false, 0, 0, "next"); err != nil {
			t.Fatal(err)
		}
		if err := a.send(ab, next, false, 0, "next"); err != nil {
			t.Fatal(err)
		}
		if c := waitComps(t, b.rx, 1, waitLimit, a); c[0].err != 0 || c[0].len != size || !bytes.Equal(rb2, next) {
			t.Fatalf("message after the truncated one: %+v", c[0])
		}
		waitComps(t, a.tx, 1, waitLimit, b)
	}
	if s := a.streamed(); s != 4 {
		t.Fatalf("%d messages streamed, want 4", s)
	}
}

// waitUnexp progresses n until it holds want unexpected messages.
func waitUnexp(t *testing.T, n *fltNode, want int64) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		n.ep.Progress()
		n.ep.mu.Lock()
		k := n.ep.unexpN.Load()
		n.ep.mu.Unlock()
		if k == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d unexpected messages, want %d", k, want)
		}
	}
}

// TestRDMStreamUnexpected: streamed tagged messages that arrive before
// their receives are buffered (and counted), then matched by tag in
// another order than they came; the accounting returns to zero.
func TestRDMStreamUnexpected(t *testing.T) {
	leakCheck(t)
	freeMemory(t)
	a, b, ab, _ := streamPair(t)
	sizes := []int{20000, 100 << 10, 1 << 20, 3<<20 + 1}
	msgs := make([][]byte, len(sizes))
	for i, size := range sizes {
		msgs[i] = streamPattern(size, byte(i))
		if err := a.send(ab, msgs[i], true, uint64(i), i); err != nil {
			t.Fatal(err)
		}
	}
	waitComps(t, a.tx, len(sizes), waitLimit, b)
	waitUnexp(t, b, int64(len(sizes)))
	var total int64
	for _, s := range sizes {
		total += int64(s + rdmUnexpCost)
	}
	if ub := b.ep.unexpBytes.Load(); ub != total {
		t.Fatalf("%d unexpected bytes counted, want %d", ub, total)
	}
	for i := len(sizes) - 1; i >= 0; i-- {
		rb := make([]byte, sizes[i])
		if err := b.recv(rb, true, uint64(i), 0, i); err != nil {
			t.Fatal(err)
		}
		c := waitComps(t, b.rx, 1, waitLimit, a)
		if c[0].ctx != i || c[0].err != 0 || c[0].tag != uint64(i) || !bytes.Equal(rb, msgs[i]) {
			t.Fatalf("tag %d: %+v", i, c[0])
		}
	}
	if un, ub := b.ep.unexpN.Load(), b.ep.unexpBytes.Load(); un != 0 || ub != 0 {
		t.Fatalf("after matching: %d unexpected (%d bytes)", un, ub)
	}
	if s := a.streamed(); s != len(sizes) {
		t.Fatalf("%d messages streamed, want %d", s, len(sizes))
	}
}

// TestRDMStreamRecvPostedMidway: a receive posted while an unexpected
// streamed message is being read gets it once it is whole.
func TestRDMStreamRecvPostedMidway(t *testing.T) {
	leakCheck(t)
	freeMemory(t)
	a, b, ab, _ := streamPair(t)
	smallSockBufs(a, b) // so that the message cannot be read at once
	const size = 8 << 20
	msg := streamPattern(size, 5)
	if err := a.send(ab, msg, false, 0, "big"); err != nil {
		t.Fatal(err)
	}
	midway := func() bool {
		b.ep.mu.Lock()
		defer b.ep.mu.Unlock()
		for _, c := range b.ep.conns {
			if c != nil && c.rx.direct != nil && c.rx.direct.pend != nil && c.rx.direct.placed > 0 {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(waitLimit)
	for !midway() {
		a.ep.Progress()
		b.ep.Progress()
		if time.Now().After(deadline) {
			t.Fatal("the message was never seen half read")
		}
	}
	rb := make([]byte, size)
	if err := b.recv(rb, false, 0, 0, "rx"); err != nil {
		t.Fatal(err)
	}
	c := waitComps(t, b.rx, 1, waitLimit, a)
	if c[0].ctx != "rx" || c[0].err != 0 || c[0].len != size || !bytes.Equal(rb, msg) {
		t.Fatalf("receive %+v, data equal %v", c[0], bytes.Equal(rb, msg))
	}
	waitComps(t, a.tx, 1, waitLimit, b)
	if un := b.ep.unexpN.Load(); un != 0 {
		t.Fatalf("%d unexpected left", un)
	}
}

// TestRDMStreamDeliveryComplete: a delivery-complete streamed send
// completes on the peer's ACK, sent once the message is placed (or
// buffered, unexpected).
func TestRDMStreamDeliveryComplete(t *testing.T) {
	leakCheck(t)
	a, b, ab, _ := streamPair(t)
	const size = 300 << 10
	for _, unexpected := range []bool{false, true} {
		rb := make([]byte, size)
		if !unexpected {
			if err := b.recv(rb, false, 0, 0, "rx"); err != nil {
				t.Fatal(err)
			}
		}
		msg := streamPattern(size, 1)
		m := provider.Msg{Buf: msg, Addr: ab, Context: "dc", Flags: provider.FlagCompletion | provider.FlagDeliveryComplete}
		if err := a.ep.Send(m); err != nil {
			t.Fatal(err)
		}
		// Without b's progress the send cannot complete.
		for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
			if c := poll(a.tx, nil); len(c) > 0 {
				t.Fatalf("unexpected %v: send completed before the peer read it: %+v", unexpected, c)
			}
		}
		if c := waitComps(t, a.tx, 1, waitLimit, b); c[0].err != 0 {
			t.Fatalf("send %+v", c[0])
		}
		if unexpected {
			if err := b.recv(rb, false, 0, 0, "rx"); err != nil {
				t.Fatal(err)
			}
		}
		if c := waitComps(t, b.rx, 1, waitLimit, a); c[0].err != 0 || !bytes.Equal(rb, msg) {
			t.Fatalf("receive %+v", c[0])
		}
	}
}

// TestRDMStreamMultiRecv: streamed messages land in a multi-receive
// buffer one after the other, posted or unexpected.
func TestRDMStreamMultiRecv(t *testing.T) {
	leakCheck(t)
	a, b, ab, _ := streamPair(t)
	const size = 40 << 10
	m1, m2 := streamPattern(size, 1), streamPattern(size, 2)
	if err := a.send(ab, m1, false, 0, 1); err != nil {
		t.Fatal(err)
	}
	waitComps(t, a.tx, 1, waitLimit, b)
	waitUnexp(t, b, 1)
	buf := make([]byte, 3*size)
	m := provider.Msg{Buf: buf, Addr: provider.AddrUnspec, Context: "multi", Flags: provider.FlagCompletion | provider.FlagMultiRecv}
	if err := b.rq.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	if err := a.send(ab, m2, false, 0, 2); err != nil {
		t.Fatal(err)
	}
	c := waitComps(t, b.rx, 2, waitLimit, a)
	for _, x := range c {
		if x.err != 0 || x.len != size {
			t.Fatalf("multi-receive completion %+v", x)
		}
	}
	if !bytes.Equal(buf[:size], m1) || !bytes.Equal(buf[size:2*size], m2) {
		t.Fatal("multi-receive buffer holds other data")
	}
}

// TestRDMStreamUnexpectedBounded: unexpected streamed messages count
// against the unexpected-message bound by their length: a flood of them
// is held back (the sender backs up), and all arrive in order once
// receives come.
func TestRDMStreamUnexpectedBounded(t *testing.T) {
	leakCheck(t)
	freeMemory(t)
	a, b, ab, _ := streamPair(t)
	n := floodUnexpectedBounded(t, a, b, ab)
	if s := a.streamed(); s != n {
		t.Fatalf("%d messages streamed, want %d", s, n)
	}
}

// TestRDMPeerKilledStreamSend: streamed messages towards a peer of ours
// that reads nothing fill the socket and queue up (one partly written);
// the peer is killed: every send completes within 5 s, some in error.
func TestRDMPeerKilledStreamSend(t *testing.T) {
	leakCheck(t)
	freeMemory(t)
	t.Setenv(envCMA, "0")
	a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	p := startPeer(t, "stall")
	dest := a.mustInsert(t, p.name)
	// A first small message: the connection comes up and tells a that
	// the peer is one of ours.
	if err := a.send(dest, []byte("hi"), false, 0, "hi"); err != nil {
		t.Fatal(err)
	}
	waitComps(t, a.tx, 1, waitLimit)
	buf := make([]byte, 100<<10)
	const n = 300 // 30 MiB
	for i := 0; i < n; i++ {
		if err := a.send(dest, buf, false, 0, i); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if s := a.streamed(); s != n {
		t.Fatalf("%d of %d messages streamed", s, n)
	}
	var comps []fltComp
	deadline := time.Now().Add(waitLimit)
	for q := a.queuedOn(); ; q = a.queuedOn() {
		comps = poll(a.tx, comps)
		time.Sleep(20 * time.Millisecond)
		if q > 0 && q == a.queuedOn() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sends never backed up (%d queued)", q)
		}
	}
	killSendsFail(t, p, a, other, comps, n)
}

// newRawGoRDM is newRawRDM for a raw peer that says it is of this
// implementation (GoMarker), and checks the endpoint says so too.
func newRawGoRDM(t *testing.T, n *fltNode) *rawRDM {
	t.Helper()
	return newRawGoRDMPid(t, n, 4243)
}

// newRawGoRDMPid is newRawGoRDM announcing pid.
func newRawGoRDMPid(t *testing.T, n *fltNode, pid uint32) *rawRDM {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	data := rxmwire.AppendConnect(nil, &rxmwire.Connect{Port: port, FlowCtrl: rxmwire.FlowCtrlPeerOff,
		Pad: rxmwire.GoMarker, EagerLimit: rxmwire.EagerLimit, RxSize: rxmwire.RxSize, ConnID: rxmwire.ConnID(pid, 0)})
	r := &rawRDM{t: t, c: dialRDM(t, n, data), addr: loopback(port)}
	resp := make([]byte, tcpwire.CMHeaderSize+rxmwire.AcceptSize)
	if _, err := io.ReadFull(r.c, resp); err != nil {
		t.Fatalf("accept: %v", err)
	}
	a, err := rxmwire.ParseAccept(resp[tcpwire.CMHeaderSize:])
	if err != nil || a.Pad != rxmwire.GoMarker {
		t.Fatalf("accept %+v: %v", a, err)
	}
	return r
}

// goEagerFrame encodes the start of a streamed message of size bytes:
// the headers and body (which may be shorter than size).
func goEagerFrame(rh rxmwire.Header, size uint64, body []byte) []byte {
	h := tcpwire.Header{Op: tcpwire.OpMsg}
	h.SetPayload(rxmwire.HeaderSize + size)
	b := tcpwire.AppendHeader(nil, &h, false)
	rh.Type = rxmwire.TypeGoEager
	var x [rxmwire.HeaderSize]byte
	rh.Put(x[:])
	return append(append(b, x[:]...), body...)
}

// TestRDMPeerKilledStreamRecv: the peer dies (its socket closes) after
// 1 MiB of a 64 MiB streamed message that matched our receive: the
// receive completes in error within 5 s, and the endpoint serves others.
// An unexpected one cut short the same way is dropped, its accounting
// released.
func TestRDMPeerKilledStreamRecv(t *testing.T) {
	leakCheck(t)
	freeMemory(t)
	a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	for _, unexpected := range []bool{false, true} {
		if !unexpected {
			if err := a.recv(make([]byte, fltBig), false, 0, 0, "big"); err != nil {
				t.Fatal(err)
			}
		}
		r := newRawGoRDM(t, a)
		if _, err := r.c.Write(goEagerFrame(rxmwire.Header{Op: rxmwire.OpMsg, Size: fltBig}, fltBig, make([]byte, 1<<20))); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(waitLimit)
		for a.placed() < 1<<20 {
			a.ep.Progress()
			if c := poll(a.rx, nil); len(c) > 0 {
				t.Fatalf("receive completed before the peer died: %+v", c)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d bytes of the message within 5 s", a.placed())
			}
		}
		r.c.Close()
		if !unexpected {
			start := time.Now()
			c := waitComps(t, a.rx, 1, waitLimit)
			t.Logf("receive done in %v after the close: %v", time.Since(start), c[0].err)
			if c[0].ctx != "big" || c[0].err == 0 {
				t.Fatalf("receive completion %+v, want an error", c[0])
			}
		} else {
			deadline := time.Now().Add(waitLimit)
			for a.conns() != 0 {
				a.ep.Progress()
				if time.Now().After(deadline) {
					t.Fatal("the connection did not end within 5 s")
				}
			}
			if un, ub := a.ep.unexpN.Load(), a.ep.unexpBytes.Load(); un != 0 || ub != 0 {
				t.Fatalf("%d unexpected messages (%d bytes) left by the cut message", un, ub)
			}
			if c := poll(a.rx, nil); len(c) > 0 {
				t.Fatalf("completions for a message cut short: %+v", c)
			}
		}
	}
	fltCheckServes(t, a, other)
}

// TestRDMStreamHostile: malformed streamed messages, CMA requests and
// challenges end the sender's connection: one from a peer that did not say
// it is ours, a size that disagrees with the frame, a tcp tag flag, an
// unexpected one too large to buffer, a challenge of the wrong size, a
// source announcement (rxmwire.TypeGoSource) from a C peer or malformed;
// the endpoint keeps serving others.
func TestRDMStreamHostile(t *testing.T) {
	leakCheck(t)
	a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	big := uint64(rdmMaxFrame)       // read as a stream, not whole
	const short = rdmEagerSize + 100 // above the eager limit, read whole
	cases := []struct {
		name  string
		goPad bool
		frame func() []byte
	}{
		{"from a C peer, short", false, func() []byte {
			return goEagerFrame(rxmwire.Header{Op: rxmwire.OpMsg, Size: short}, short, make([]byte, short))
		}},
		{"from a C peer, long", false, func() []byte {
			return goEagerFrame(rxmwire.Header{Op: rxmwire.OpMsg, Size: big}, big, nil)
		}},
		{"size mismatch", true, func() []byte {
			return goEagerFrame(rxmwire.Header{Op: rxmwire.OpMsg, Size: big + 1}, big, nil)
		}},
		{"short size mismatch", true, func() []byte {
			return goEagerFrame(rxmwire.Header{Op: rxmwire.OpMsg, Size: short + 1}, short, make([]byte, short))
		}},
		{"bad op", true, func() []byte {
			return goEagerFrame(rxmwire.Header{Op: 7, Size: big}, big, nil)
		}},
		{"tcp tag flag", true, func() []byte {
			h := tcpwire.Header{Op: tcpwire.OpMsg, Flags: tcpwire.FlagTagged, Tag: 1}
			h.SetPayload(rxmwire.HeaderSize + big)
			b := tcpwire.AppendHeader(nil, &h, false)
			var x [rxmwire.HeaderSize]byte
			(&rxmwire.Header{Type: rxmwire.TypeGoEager, Op: rxmwire.OpMsg, Size: big}).Put(x[:])
			return append(b, x[:]...)
		}},
		{"unexpected, too large to buffer", true, func() []byte {
			return goEagerFrame(rxmwire.Header{Op: rxmwire.OpTagged, Tag: 99, Size: rdmSARMax + 1}, rdmSARMax+1, nil)
		}},
		{"CMA request from a C peer", false, func() []byte { return cmaReqFrame(1<<20, 1<<20) }},
		{"CMA request, length mismatch", true, func() []byte { return cmaReqFrame(1<<20, 1<<20+1) }},
		{"CMA challenge from a C peer", false, func() []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeGoCMAChallenge}, make([]byte, rxmwire.GoCMANonceSize))
		}},
		{"CMA challenge, wrong size", true, func() []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeGoCMAChallenge}, make([]byte, rxmwire.GoCMANonceSize+1))
		}},
		{"source from a C peer", false, func() []byte { return rxmFrame(rxmwire.GoSource(4000), nil) }},
		{"source port 0", true, func() []byte { return rxmFrame(rxmwire.GoSource(0), nil) }},
		{"source port beyond 65535", true, func() []byte {
			return rxmFrame(rxmwire.Header{Type: rxmwire.TypeGoSource, Data: 1 << 16}, nil)
		}},
		{"source with a body", true, func() []byte { return rxmFrame(rxmwire.GoSource(4000), []byte{1}) }},
	}
	for _, tc := range cases {
		var r *rawRDM
		if tc.goPad {
			r = newRawGoRDM(t, a)
		} else {
			r = newRawRDM(t, a)
		}
		if _, err := r.c.Write(tc.frame()); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		closedBy(t, r.c, a)
		if un, ub := a.ep.unexpN.Load(), a.ep.unexpBytes.Load(); un != 0 || ub != 0 {
			t.Fatalf("%s: %d unexpected messages (%d bytes) left", tc.name, un, ub)
		}
	}
	fltCheckServes(t, a, other)
}

// smallSockBufs gives the nodes' connections, present and future, 256 KiB
// socket buffers (FI_OPT_*_BUF_SIZE) instead of rdmSockBuf, for tests that
// fill sockets.
func smallSockBufs(nodes ...*fltNode) {
	for _, n := range nodes {
		n.ep.mu.Lock()
		n.ep.sockBuf = [2]int{256 << 10, 256 << 10}
		for _, c := range n.ep.conns {
			if c != nil && c.sock != nil {
				n.ep.applySockBufs(c.sock)
			}
		}
		n.ep.mu.Unlock()
	}
}

// cmaReqFrame encodes a CMA request for a message of size bytes whose
// CMA extension says cmaLen.
func cmaReqFrame(size, cmaLen uint64) []byte {
	rv := rxmwire.Rndv{Count: 1}
	rv.IOV[0] = rxmwire.RndvIOV{Len: size, Key: rxmwire.KeyBase | 1}
	body := make([]byte, rxmwire.RndvSize+rxmwire.GoCMASize)
	rv.Put(body)
	(&rxmwire.GoCMA{Base: 0x1000, Len: cmaLen}).Put(body[rxmwire.RndvSize:])
	return rxmFrame(rxmwire.Header{Type: rxmwire.TypeGoCMAReq, Op: rxmwire.OpMsg, Size: size, MsgID: 1}, body)
}

// freeMemory returns the test's large buffers to the system when it ends,
// so that the runtime's scavenger does not do it during a later test that
// counts this process's context switches (testutil.ExpectIdle).
func freeMemory(t *testing.T) { t.Cleanup(debug.FreeOSMemory) }

// floodUnexpectedBounded sends 300 tagged 100 KiB messages from a to b (at
// ab) with no receive posted at b, whose unexpected-message bound it sets
// to 1 MiB: the flood must settle with b holding no more than the bound and
// some sends not completed (backpressure, nothing dropped); then every
// message must arrive, in order, once b posts receives, and every send
// complete without error. It returns the number of messages sent.
func floodUnexpectedBounded(t *testing.T, a, b *fltNode, ab provider.Addr) int {
	t.Helper()
	const size, n, bound = 100 << 10, 300, 1 << 20
	b.ep.mu.Lock()
	b.ep.maxUnexpBytes = bound
	b.ep.mu.Unlock()
	for i := 0; i < n; i++ {
		msg := make([]byte, size)
		binary.LittleEndian.PutUint32(msg, uint32(i))
		if err := a.send(ab, msg, true, uint64(i), i); err != nil {
			t.Fatal(err)
		}
	}
	var sent []fltComp
	last, stable := int64(-1), 0
	deadline := time.Now().Add(10 * time.Second)
	for stable < 20 {
		sent = poll(a.tx, sent)
		b.ep.Progress()
		time.Sleep(5 * time.Millisecond)
		if s := b.ep.unexpBytes.Load() + int64(len(sent))<<40; s == last {
			stable++
		} else {
			last, stable = s, 0
		}
		if time.Now().After(deadline) {
			t.Fatal("the flood never settled")
		}
	}
	ub := b.ep.unexpBytes.Load()
	t.Logf("settled: %d sends done, receiver holds %d unexpected bytes (bound %d)", len(sent), ub, bound)
	if ub > bound {
		t.Fatalf("%d unexpected bytes held, bound %d", ub, bound)
	}
	if len(sent) == n {
		t.Fatal("every send completed: no backpressure")
	}
	rb := make([]byte, size)
	for i := 0; i < n; i++ {
		if err := b.recv(rb, true, 0, ^uint64(0), i); err != nil {
			t.Fatal(err)
		}
		c := waitComps(t, b.rx, 1, waitLimit, a)
		if c[0].err != 0 || c[0].tag != uint64(i) || binary.LittleEndian.Uint32(rb) != uint32(i) {
			t.Fatalf("receive %d: %+v (message %d)", i, c[0], binary.LittleEndian.Uint32(rb))
		}
		sent = poll(a.tx, sent)
	}
	sent = append(sent, waitComps(t, a.tx, n-len(sent), waitLimit)...)
	for _, c := range sent {
		if c.err != 0 {
			t.Fatalf("send %+v", c)
		}
	}
	return n
}
