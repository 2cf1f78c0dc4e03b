package tcp

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// CMA between two of our endpoints on one host (rdm_cma.go).

// cmaPair is streamPair with CMA on (threshold min).
func cmaPair(t *testing.T, minSize int) (a, b *fltNode, ab, ba provider.Addr) {
	t.Helper()
	if ok, why := sys.CMAAvailable(); !ok {
		t.Fatalf("CMA unavailable on this machine: %s", why)
	}
	t.Setenv(envCMA, "1")
	t.Setenv(envCMAMin, fmt.Sprint(minSize))
	return goPair(t)
}

func (n *fltNode) cmaCopies() int {
	n.ep.mu.Lock()
	defer n.ep.mu.Unlock()
	return n.ep.cmaCopies
}

// cmaSend sends msg from x to its peer (receive posted first unless
// unexpected) and checks what arrives.
func cmaSend(t *testing.T, from, to *fltNode, dest provider.Addr, msg []byte, rlen int, tagged, unexpected bool) fltComp {
	t.Helper()
	rb := make([]byte, rlen)
	if !unexpected {
		if err := to.recv(rb, tagged, 5, 0, "rx"); err != nil {
			t.Fatal(err)
		}
	}
	if err := from.send(dest, msg, tagged, 5, "tx"); err != nil {
		t.Fatal(err)
	}
	if unexpected {
		waitUnexp(t, to, 1)
		if err := to.recv(rb, tagged, 5, 0, "rx"); err != nil {
			t.Fatal(err)
		}
	}
	c := waitComps(t, to.rx, 1, waitLimit, from)
	if tx := waitComps(t, from.tx, 1, waitLimit, to); tx[0].err != 0 {
		t.Fatalf("send %+v", tx[0])
	}
	n := min(len(msg), rlen)
	if !bytes.Equal(rb[:n], msg[:n]) {
		t.Fatalf("%d bytes into %d: data differs", len(msg), rlen)
	}
	return c[0]
}

// TestRDMCMA: above the threshold the first message of a connection goes
// over tcp (the receiver challenges the sender), the next ones are copied
// by CMA: sizes, tagged and not, posted and unexpected, truncated; below
// the threshold messages stream.
func TestRDMCMA(t *testing.T) {
	leakCheck(t)
	freeMemory(t)
	const minSize = 128 << 10
	a, b, ab, _ := cmaPair(t, minSize)
	first := cmaSend(t, a, b, ab, streamPattern(minSize, 1), minSize, false, false)
	if first.err != 0 || first.len != minSize || b.cmaCopies() != 0 {
		t.Fatalf("first message: %+v, %d CMA copies (want 0: the check comes first)", first, b.cmaCopies())
	}
	copies := 0
	for i, size := range []int{minSize, minSize + 1, 1<<20 + 3, 8 << 20} {
		for _, tagged := range []bool{false, true} {
			for _, unexpected := range []bool{false, true} {
				c := cmaSend(t, a, b, ab, streamPattern(size, byte(i)), size, tagged, unexpected)
				copies++
				if c.err != 0 || c.len != uint64(size) || b.cmaCopies() != copies {
					t.Fatalf("size %d tagged %v unexpected %v: %+v, %d CMA copies (want %d)", size, tagged, unexpected,
						c, b.cmaCopies(), copies)
				}
			}
		}
	}
	// Truncated: FI_ETRUNC with the part that fits.
	c := cmaSend(t, a, b, ab, streamPattern(1<<20, 7), 1000, false, false)
	if c.err != provider.ETRUNC || c.len != 1000 || b.cmaCopies() != copies+1 {
		t.Fatalf("truncated: %+v", c)
	}
	// Below the threshold: streamed.
	s := a.streamed()
	if c := cmaSend(t, a, b, ab, streamPattern(minSize-1, 2), minSize, false, false); c.err != 0 || a.streamed() != s+1 {
		t.Fatalf("below the threshold: %+v, streamed %d", c, a.streamed()-s)
	}
}

// TestRDMCMADiscard: an unexpected CMA message discarded (FI_DISCARD
// through the receive queue's claim) is not copied; its send completes.
func TestRDMCMADiscard(t *testing.T) {
	leakCheck(t)
	a, b, ab, _ := cmaPair(t, 64<<10)
	cmaSend(t, a, b, ab, streamPattern(64<<10, 1), 64<<10, true, false) // the check
	if err := a.send(ab, make([]byte, 1<<20), true, 9, "big"); err != nil {
		t.Fatal(err)
	}
	waitUnexp(t, b, 1)
	m := provider.Msg{Addr: provider.AddrUnspec, Tag: 9, Context: "peek", Flags: provider.FlagPeek | provider.FlagDiscard | provider.FlagCompletion}
	if err := b.rq.Post(&m, true); err != nil {
		t.Fatal(err)
	}
	if tx := waitComps(t, a.tx, 1, waitLimit, b); tx[0].ctx != "big" || tx[0].err != 0 {
		t.Fatalf("send %+v", tx[0])
	}
	if b.cmaCopies() != 0 {
		t.Fatalf("%d CMA copies of a discarded message", b.cmaCopies())
	}
}

// TestRDMCMAWrongProof: a Go-marked raw peer whose CMA request names a
// proof that is not the nonce we sent (here: none, then a wrong address)
// is read over tcp, never by CMA.
func TestRDMCMAWrongProof(t *testing.T) {
	leakCheck(t)
	t.Setenv(envCMA, "1")
	a := newFlt(t, fltOpts{})
	// It claims our pid: the copy of the wrong proof works, and differs.
	r := newRawGoRDMPid(t, a, uint32(os.Getpid()))
	const size = 256 << 10
	req := func(key uint64, proof uint64) []byte {
		rv := rxmwire.Rndv{Count: 1}
		rv.IOV[0] = rxmwire.RndvIOV{Len: size, Key: key}
		body := make([]byte, rxmwire.RndvSize+rxmwire.GoCMASize)
		rv.Put(body)
		secret := []byte("not the nonce!!!")
		(&rxmwire.GoCMA{ProofAddr: proof, Base: sys.IOVOf(secret).Base, Len: size}).Put(body[rxmwire.RndvSize:])
		return rxmFrame(rxmwire.Header{Type: rxmwire.TypeGoCMAReq, Op: rxmwire.OpMsg, Size: size, MsgID: key}, body)
	}
	wrong := []byte("0123456789abcdef")
	for i, proof := range []uint64{0, sys.IOVOf(wrong).Base} {
		rb := make([]byte, size)
		if err := a.recv(rb, false, 0, 0, i); err != nil {
			t.Fatal(err)
		}
		key := rxmwire.KeyBase | uint64(i+1)
		if _, err := r.c.Write(req(key, proof)); err != nil {
			t.Fatal(err)
		}
		// The endpoint answers with a tcp read request (and, the first
		// time, a challenge before it).
		var h tcpwire.Header
		for {
			var p []byte
			done := make(chan struct{})
			go func() { h, p = r.readFrame(); close(done) }()
			waitDone(t, done, a)
			if h.Op == tcpwire.OpReadReq {
				break
			}
			var rh rxmwire.Header
			if rh.Parse(p) != nil || rh.Type != rxmwire.TypeGoCMAChallenge || i != 0 {
				t.Fatalf("request %d: frame %+v %+v before the read request", i, h, rh)
			}
		}
		if h.RMACount != 1 || h.RMA[0].Key != key || h.RMA[0].Len != size {
			t.Fatalf("read request %+v", h)
		}
		data := streamPattern(size, byte(i))
		rsp := tcpwire.Header{Op: tcpwire.OpReadRsp}
		rsp.SetPayload(size)
		if _, err := r.c.Write(append(tcpwire.AppendHeader(nil, &rsp, false), data...)); err != nil {
			t.Fatal(err)
		}
		c := waitComps(t, a.rx, 1, waitLimit)
		if c[0].err != 0 || !bytes.Equal(rb, data) {
			t.Fatalf("receive %d: %+v", i, c[0])
		}
		done := make(chan struct{})
		go func() { r.readFrame(); close(done) }() // the read-done
		waitDone(t, done, a)
	}
	if a.cmaCopies() != 0 {
		t.Fatalf("%d CMA copies", a.cmaCopies())
	}
}

// lineProgressing reads the peer's next line, progressing n meanwhile.
func lineProgressing(t *testing.T, p *fltPeer, n *fltNode) string {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("the peer ended; stderr:\n%s", p.errb.String())
			}
			return l
		default:
		}
		n.ep.Progress()
		if time.Now().After(deadline) {
			t.Fatalf("no line from the peer within 5 s; stderr:\n%s", p.errb.String())
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// waitDone progresses n until done closes (within 5 s).
func waitDone(t *testing.T, done chan struct{}, n *fltNode) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		select {
		case <-done:
			return
		default:
		}
		n.ep.Progress()
		if time.Now().After(deadline) {
			t.Fatal("nothing within 5 s")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestRDMCMAProcesses: between two processes, large messages after the
// first are copied by CMA and arrive intact.
func TestRDMCMAProcesses(t *testing.T) {
	leakCheck(t)
	freeMemory(t)
	t.Setenv(envCMA, "1")
	t.Setenv(envCMAMin, "131072")
	a := newFlt(t, fltOpts{})
	p := startPeer(t, "cmarecv")
	dest := a.mustInsert(t, p.name)
	// A first small message: the connection comes up, and tells a that
	// the peer is one of ours.
	if err := a.send(dest, []byte("hi"), false, 0, "hi"); err != nil {
		t.Fatal(err)
	}
	if l := p.line(waitLimit); !strings.HasPrefix(l, "RECV 2 ") {
		t.Fatalf("peer says %q", l)
	}
	waitComps(t, a.tx, 1, waitLimit)
	for i := 0; i < 4; i++ {
		msg := streamPattern(1<<20+i, byte(i))
		if err := a.send(dest, msg, false, 0, i); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("RECV %d %08x", len(msg), crc32.ChecksumIEEE(msg))
		l := lineProgressing(t, p, a)
		if got := l[:min(len(l), len(want))]; got != want {
			t.Fatalf("message %d: peer says %q, want %q", i, l, want)
		}
		if c := waitComps(t, a.tx, 1, waitLimit); c[0].err != 0 {
			t.Fatalf("send %d: %+v", i, c[0])
		}
		var copies int
		fmt.Sscanf(l[len(want):], " CMA %d", &copies)
		if i > 0 && copies != i {
			t.Fatalf("message %d: %d CMA copies at the peer, want %d (%q)", i, copies, i, l)
		}
	}
}

// cmaRecvHelper is the cmarecv helper mode: it receives messages of up to
// 2 MiB, saying "RECV <len> <crc32> CMA <copies so far>" for each.
func cmaRecvHelper(n *fltNode) error {
	bufs := make([][]byte, 4)
	for i := range bufs {
		bufs[i] = make([]byte, 2<<20)
		if err := n.recv(bufs[i], false, 0, 0, i); err != nil {
			return err
		}
	}
	for {
		for _, c := range poll(n.rx, nil) {
			i := c.ctx.(int)
			if c.err != 0 {
				fmt.Printf("RECVERR %d\n", c.err)
			} else {
				fmt.Printf("RECV %d %08x CMA %d\n", c.len, crc32.ChecksumIEEE(bufs[i][:c.len]), n.cmaCopies())
			}
			if err := n.recv(bufs[i], false, 0, 0, i); err != nil {
				return err
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
}
