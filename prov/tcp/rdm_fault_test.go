package tcp

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/av"
	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Faults of RDM endpoints: peers killed in the middle of a transfer (real
// processes, SIGKILL), peers restarting at the same address. The peers are
// this test binary re-executed with TCP_TEST_HELPER=rdm (fltHelperMain).

func init() { testHelpers["rdm"] = fltHelperMain }

// fltOpts configure an RDM node.
type fltOpts struct {
	auto   bool   // FI_PROGRESS_AUTO data progress
	noRM   bool   // FI_RM_DISABLED
	addr   []byte // listening address; nil: 127.0.0.1, any port
	cqSize int    // CQ size (default 4096)
	txSize uint64 // tx_attr.size (default RDMQueueSize)
	// bufMin, when not 0, puts the receive queue in buffered mode
	// (FI_BUFFERED_RECV) with this FI_OPT_BUFFERED_MIN and a limit of
	// 64 KiB; reports carry their srx.BufRef as context.
	bufMin uint64
}

// fltNode is an RDM endpoint with real resources from the internal
// machinery (CQs, AV, receive queue).
type fltNode struct {
	ep   *rdmEP
	tx   *cq.CQ
	rx   *cq.CQ
	av   *av.AV
	rq   *srx.Queue
	name []byte
}

func loopback(port uint16) []byte {
	return appendSockaddr(nil, sockaddr{AP: netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)})
}

// openFlt opens a node (FI_TCP_IFACE must name lo, or addr be given).
func openFlt(o fltOpts) (*fltNode, error) {
	hints := &provider.Info{AddrFormat: provider.SockAddrIn, Caps: provider.CapMsg | provider.CapTagged,
		DomainAttr: &provider.DomainAttr{}, EPAttr: &provider.EPAttr{Type: provider.EPRDM}}
	if o.auto {
		hints.DomainAttr.DataProgress = provider.ProgressAuto
	}
	infos, err := tcpProvider{}.GetInfo(provider.APIVersion, "", "", 0, hints)
	if err != nil {
		return nil, err
	}
	info := infos[0]
	info.SrcAddr = o.addr
	if info.SrcAddr == nil {
		info.SrcAddr = loopback(0)
	}
	if o.noRM {
		info.DomainAttr.ResourceMgmt = provider.RMDisabled
	}
	if o.txSize != 0 {
		info.TxAttr.Size = o.txSize
	}
	ep, err := newRDM(info)
	if err != nil {
		return nil, err
	}
	n := &fltNode{ep: ep}
	size := o.cqSize
	if size == 0 {
		size = 4096
	}
	cfg := cq.Config{Size: size, Format: provider.CQFormatTagged, WaitObj: provider.WaitUnspec, ResourceMgmt: !o.noRM}
	if n.tx, err = cq.New(cfg); err == nil {
		n.rx, err = cq.New(cfg)
	}
	if err == nil {
		n.av, err = av.New(av.Config{Format: provider.SockAddrIn})
	}
	if err != nil {
		n.close()
		return nil, err
	}
	n.rq = srx.New(srx.Config{Tagged: true, ResourceMgmt: !o.noRM})
	n.rq.SetCompletion(n.rx, nil)
	if o.bufMin != 0 {
		n.rq.SetBuffered(&srx.BufConfig{Min: o.bufMin, Limit: 64 << 10})
	}
	n.tx.AddSource(ep)
	n.rx.AddSource(ep)
	if err := ep.Enable(&provider.Resources{TxCQ: n.tx, RxCQ: n.rx, SRX: n.rq, AV: n.av, OwnSRX: true}); err != nil {
		n.close()
		return nil, err
	}
	if n.name, err = ep.Name(); err != nil {
		n.close()
		return nil, err
	}
	return n, nil
}

// newFlt opens a node closed at the end of the test.
func newFlt(t testing.TB, o fltOpts) *fltNode {
	t.Helper()
	t.Setenv(envIface, "lo")
	n, err := openFlt(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.close)
	return n
}

func (n *fltNode) close() {
	if n.rq != nil {
		n.rq.Close()
	}
	n.ep.Close()
	for _, c := range []*cq.CQ{n.tx, n.rx} {
		if c != nil {
			c.Close()
		}
	}
	if n.av != nil {
		n.av.Close()
	}
}

// insert puts addr in the node's AV.
func (n *fltNode) insert(addr []byte) (provider.Addr, error) {
	fa := make([]provider.Addr, 1)
	if k, err := n.av.Insert([][]byte{addr}, fa, 0, nil); err != nil || k != 1 {
		return 0, fmt.Errorf("AV insert: %d %v", k, err)
	}
	return fa[0], nil
}

func (n *fltNode) mustInsert(t testing.TB, addr []byte) provider.Addr {
	t.Helper()
	a, err := n.insert(addr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// send posts a message (tagged when tagged) with a completion.
func (n *fltNode) send(dest provider.Addr, buf []byte, tagged bool, tag uint64, ctx any) error {
	m := provider.Msg{Buf: buf, Addr: dest, Tag: tag, Context: ctx, Flags: provider.FlagCompletion}
	if tagged {
		return n.ep.TSend(m)
	}
	return n.ep.Send(m)
}

// recv posts a receive from anyone.
func (n *fltNode) recv(buf []byte, tagged bool, tag, ignore uint64, ctx any) error {
	m := provider.Msg{Buf: buf, Addr: provider.AddrUnspec, Tag: tag, Ignore: ignore, Context: ctx,
		Flags: provider.FlagCompletion}
	return n.rq.Post(&m, tagged)
}

// fltComp is a completion or an error completion.
type fltComp struct {
	ctx any
	len uint64
	tag uint64
	err provider.Errno // 0: success
}

// poll reads what q has (progressing the node), without waiting.
func poll(q *cq.CQ, out []fltComp) []fltComp {
	var e [32]provider.CQEntry
	for {
		k, err := q.Read(e[:])
		for _, x := range e[:max(k, 0)] {
			out = append(out, fltComp{ctx: x.OpContext, len: x.Len, tag: x.Tag})
		}
		if err == provider.EAVAIL {
			var ee provider.CQErrEntry
			if q.ReadErr(&ee) == nil {
				out = append(out, fltComp{ctx: ee.OpContext, err: ee.Err, len: ee.Len})
			}
			continue
		}
		if k <= 0 {
			return out
		}
	}
}

// waitComps reads want completions from q within d, progressing the other
// nodes meanwhile; it fails t when they do not all come.
func waitComps(t testing.TB, q *cq.CQ, want int, d time.Duration, others ...*fltNode) []fltComp {
	t.Helper()
	var got []fltComp
	deadline := time.Now().Add(d)
	for len(got) < want {
		got = poll(q, got)
		for _, o := range others {
			o.ep.Progress()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d completions within %v", len(got), want, d)
		}
		runtime.Gosched()
	}
	return got
}

// conns returns the number of live connections of the node.
func (n *fltNode) conns() int {
	n.ep.mu.Lock()
	defer n.ep.mu.Unlock()
	k := 0
	for _, c := range n.ep.conns {
		if c != nil {
			k++
		}
	}
	return k
}

// leakCheck fails t when goroutines or descriptors started during the test
// are still there when its cleanups (registered later, so run earlier)
// have run.
func leakCheck(t *testing.T) {
	t.Helper()
	b := testutil.Snapshot()
	t.Cleanup(func() {
		if err := b.Check(testutil.LeakWait, os.Stderr); err != nil {
			t.Error(err)
		}
	})
}

// fltPeer is a helper process playing an RDM peer.
type fltPeer struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	name  []byte
	errb  strings.Builder
}

// startPeer runs the test binary as an RDM peer in mode, with env added
// (NAME=value), and reads its listening address.
func startPeer(t *testing.T, mode string, env ...string) *fltPeer {
	t.Helper()
	return startPeerCmd(t, exec.Command(os.Args[0], "-test.run=^$"), mode, env...)
}

// startPeerCmd is startPeer with the command to run (the test binary,
// perhaps under `ip netns exec`).
func startPeerCmd(t *testing.T, cmd *exec.Cmd, mode string, env ...string) *fltPeer {
	t.Helper()
	p := &fltPeer{t: t, cmd: cmd, lines: make(chan string, 64)}
	p.cmd.Env = append(os.Environ(), "TCP_TEST_HELPER=rdm", "TCP_TEST_RDM_MODE="+mode, envIface+"=lo")
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stderr = &syncWriter{b: &p.errb}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(p.kill)
	l := p.line(10 * time.Second)
	b, err := hex.DecodeString(strings.TrimPrefix(l, "NAME "))
	if !strings.HasPrefix(l, "NAME ") || err != nil {
		t.Fatalf("peer name line %q", l)
	}
	p.name = b
	return p
}

// syncWriter collects a child's stderr (written by exec's copying
// goroutine, read by the test after Wait).
type syncWriter struct{ b *strings.Builder }

func (w *syncWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

// line returns the peer's next output line, failing t after d.
func (p *fltPeer) line(d time.Duration) string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.cmd.Wait()
			p.t.Fatalf("peer ended; stderr:\n%s", p.errb.String())
		}
		return l
	case <-time.After(d):
		p.t.Fatalf("no line from the peer within %v; stderr:\n%s", d, p.errb.String())
	}
	return ""
}

// expect waits (progressing nodes) for the peer to print want.
func (p *fltPeer) expect(want string, d time.Duration, progress ...*fltNode) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.cmd.Wait()
				p.t.Fatalf("peer ended before %q; stderr:\n%s", want, p.errb.String())
			}
			if l == want {
				return
			}
			p.t.Logf("peer: %s", l)
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("peer did not say %q within %v; stderr:\n%s", want, d, p.errb.String())
		}
		for _, n := range progress {
			n.ep.Progress()
		}
		time.Sleep(time.Millisecond)
	}
}

// kill ends the peer with SIGKILL (once) and reaps it.
func (p *fltPeer) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Kill()
	p.in.Close()
	p.cmd.Wait()
	for range p.lines {
	}
}

// Sizes of the helper's messages.
const (
	fltBig   = 64 << 20 // a rendezvous message
	fltEager = rdmEagerSize
)

// rdmEagerSize is the largest eager message.
const rdmEagerSize = 16384

// fltHelperMain is the RDM peer process. TCP_TEST_RDM_MODE says what it
// does after printing "NAME <hex address>":
//
//   - stall: nothing (its connections are accepted by the control
//     goroutine, but nothing is read from them);
//   - rawrndvrecv: a raw rxm peer (no endpoint): accepts a connection,
//     reads a rendezvous request, asks for the data, reads 1 MiB of it,
//     says MIDWAY, then stalls (an endpoint would read it all at once);
//   - rawrndvsend: a raw rxm peer: connects to TCP_TEST_RDM_PEER, sends a
//     fltBig rendezvous request (SENT), answers the read request with
//     1 MiB of the data, says MIDWAY, then stalls;
//   - eagersend: sends eager messages to TCP_TEST_RDM_PEER without end,
//     progressing (says SENDING after the first);
//   - serve: posts receives and progresses, saying "RECV <len> <text>" for
//     each message; with TCP_TEST_RDM_HELLO it first sends that text to
//     TCP_TEST_RDM_PEER, saying "HELLO <status>" when it completes;
//   - cmarecv: receives large messages (cmaRecvHelper, rdm_cma_test.go).
//
// It listens on TCP_TEST_RDM_ADDR (hex) when set, and exits when its stdin
// closes (the test ended) or after a minute.
func fltHelperMain() int {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "rdm helper: %s: %v\n", what, err)
		return 1
	}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	go func() {
		time.Sleep(time.Minute)
		fmt.Fprintln(os.Stderr, "rdm helper: a minute passed")
		os.Exit(2)
	}()
	switch os.Getenv("TCP_TEST_RDM_MODE") {
	case "rawrndvrecv":
		if err := rawRndvRecv(); err != nil {
			return fail("rawrndvrecv", err)
		}
		select {}
	case "rawrndvsend":
		if err := rawRndvSend(); err != nil {
			return fail("rawrndvsend", err)
		}
		select {}
	}
	var o fltOpts
	if a := os.Getenv("TCP_TEST_RDM_ADDR"); a != "" {
		b, err := hex.DecodeString(a)
		if err != nil {
			return fail("addr", err)
		}
		o.addr = b
	}
	n, err := openFlt(o)
	if err != nil {
		return fail("open", err)
	}
	var peer provider.Addr
	if p := os.Getenv("TCP_TEST_RDM_PEER"); p != "" {
		b, err := hex.DecodeString(p)
		if err != nil {
			return fail("peer", err)
		}
		if peer, err = n.insert(b); err != nil {
			return fail("insert", err)
		}
	}
	keep(n)
	fmt.Printf("NAME %x\n", n.name)
	var comps []fltComp
	switch mode := os.Getenv("TCP_TEST_RDM_MODE"); mode {
	case "stall":
	case "eagersend":
		buf := make([]byte, fltEager)
		for k := 0; ; k++ {
			for n.send(peer, buf, false, 0, nil) == provider.EAGAIN {
				comps = poll(n.tx, comps[:0])
			}
			if k == 0 {
				fmt.Println("SENDING")
			}
			comps = poll(n.tx, comps[:0])
		}
	case "serve":
		if h := os.Getenv("TCP_TEST_RDM_HELLO"); h != "" {
			if err := n.send(peer, []byte(h), false, 0, "hello"); err != nil {
				return fail("hello", err)
			}
		}
		bufs := make([][]byte, 64)
		for i := range bufs {
			bufs[i] = make([]byte, fltEager)
			if err := n.recv(bufs[i], false, 0, 0, i); err != nil {
				return fail("recv", err)
			}
		}
		for {
			for _, c := range poll(n.tx, comps[:0]) {
				fmt.Printf("HELLO %d\n", c.err)
			}
			for _, c := range poll(n.rx, comps[:0]) {
				i := c.ctx.(int)
				if c.err != 0 {
					fmt.Printf("RECVERR %d\n", c.err)
				} else {
					fmt.Printf("RECV %d %s\n", c.len, bufs[i][:min(c.len, 32)])
				}
				if err := n.recv(bufs[i], false, 0, 0, i); err != nil {
					return fail("recv", err)
				}
			}
			time.Sleep(100 * time.Microsecond)
		}
	case "cmarecv":
		if err := cmaRecvHelper(n); err != nil {
			return fail("cmarecv", err)
		}
	default:
		return fail("mode", fmt.Errorf("%q", mode))
	}
	select {}
}

// placed returns how much of the rendezvous message being read on any
// connection has arrived.
func (n *fltNode) placed() int {
	n.ep.mu.Lock()
	defer n.ep.mu.Unlock()
	p := 0
	for _, c := range n.ep.conns {
		if c != nil && c.rx.direct != nil {
			p = max(p, c.rx.direct.placed)
		}
	}
	return p
}

// queuedOn returns the number of frames queued on the connections.
func (n *fltNode) queuedOn() int {
	n.ep.mu.Lock()
	defer n.ep.mu.Unlock()
	q := 0
	for _, c := range n.ep.conns {
		if c != nil {
			q += c.tx.len()
		}
	}
	return q
}

// TestRDMPeerKilledEager: eager sends towards a peer that reads nothing
// fill the socket and queue up; the peer is killed (SIGKILL): every send
// completes within 5 s, the queued ones in error, and the endpoint still
// serves another peer. No goroutine or descriptor is left.
func TestRDMPeerKilledEager(t *testing.T) {
	leakCheck(t)
	a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	p := startPeer(t, "stall")
	dest := a.mustInsert(t, p.name)
	buf := make([]byte, fltEager)
	const n = 1024 // 16 MiB: more than the socket buffers hold
	for i := 0; i < n; i++ {
		if err := a.send(dest, buf, false, 0, i); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	// Write until the socket is full and frames stay queued.
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
	for _, c := range comps {
		if c.err != 0 {
			t.Fatalf("send %v failed before the peer died: %v", c.ctx, c.err)
		}
	}
	killSendsFail(t, p, a, other, comps, n)
}

// killSendsFail kills peer p while a has n sends to it under way (comps
// are those already completed): every send must complete exactly once
// within waitLimit, at least one in error, and a must still exchange
// messages with other.
func killSendsFail(t *testing.T, p *fltPeer, a, other *fltNode, comps []fltComp, n int) {
	t.Helper()
	p.kill()
	start := time.Now()
	comps = append(comps, waitComps(t, a.tx, n-len(comps), waitLimit)...)
	t.Logf("%d sends done in %v after the kill", n, time.Since(start))
	failed, seen := 0, map[any]bool{}
	for _, c := range comps {
		if seen[c.ctx] {
			t.Fatalf("send %v completed twice", c.ctx)
		}
		seen[c.ctx] = true
		if c.err != 0 {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no send failed although messages were queued when the peer died")
	}
	fltCheckServes(t, a, other)
}

// killOneFails kills peer p while a's operation with context ctx (a send
// or a receive, completing on q) is under way: it must complete in error
// within waitLimit, and a must still exchange messages with other.
func killOneFails(t *testing.T, p *fltPeer, a, other *fltNode, q *cq.CQ, what string, ctx any) {
	t.Helper()
	p.kill()
	start := time.Now()
	c := waitComps(t, q, 1, waitLimit)
	t.Logf("%s done in %v after the kill: %v", what, time.Since(start), c[0].err)
	if c[0].ctx != ctx || c[0].err == 0 {
		t.Fatalf("%s completion %+v, want an error", what, c[0])
	}
	fltCheckServes(t, a, other)
}

// fltCheckServes checks that a still exchanges messages with another node
// both ways.
func fltCheckServes(t *testing.T, a, other *fltNode) {
	t.Helper()
	ao, oa := a.mustInsert(t, other.name), other.mustInsert(t, a.name)
	rb := make([]byte, 16)
	if err := other.recv(rb, true, 7, 0, "o"); err != nil {
		t.Fatal(err)
	}
	if err := a.send(ao, []byte("still here"), true, 7, "a"); err != nil {
		t.Fatal(err)
	}
	if c := waitComps(t, other.rx, 1, waitLimit, a); c[0].err != 0 || string(rb[:c[0].len]) != "still here" {
		t.Fatalf("after the fault: %+v %q", c[0], rb)
	}
	rb2 := make([]byte, 16)
	if err := a.recv(rb2, true, 8, 0, "a"); err != nil {
		t.Fatal(err)
	}
	if err := other.send(oa, []byte("and back"), true, 8, "o"); err != nil {
		t.Fatal(err)
	}
	if c := waitComps(t, a.rx, 1, waitLimit, other); c[0].err != 0 || string(rb2[:c[0].len]) != "and back" {
		t.Fatalf("after the fault, back: %+v %q", c[0], rb2)
	}
	waitComps(t, a.tx, 1, waitLimit, other)
	waitComps(t, other.tx, 1, waitLimit, a)
}

// TestRDMPeerKilledRendezvousSend: the peer is killed while it reads our
// rendezvous message (1 MiB of 64 MiB arrived, then it stopped reading):
// the send completes in error within 5 s. (The peer is a raw rxm peer, so
// that it stops reading at a known point.)
func TestRDMPeerKilledRendezvousSend(t *testing.T) {
	leakCheck(t)
	a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	p := startPeer(t, "rawrndvrecv")
	dest := a.mustInsert(t, p.name)
	if err := a.send(dest, make([]byte, fltBig), false, 0, "big"); err != nil {
		t.Fatal(err)
	}
	// Progress slowly, so that the peer sees the message arrive in parts.
	deadline := time.Now().Add(10 * time.Second)
	for mid := false; !mid; {
		select {
		case l, ok := <-p.lines:
			if !ok || l != "MIDWAY" {
				t.Fatalf("peer said %q (%v); stderr:\n%s", l, ok, p.errb.String())
			}
			mid = true
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the peer did not read part of the message within 10 s")
		}
		if c := poll(a.tx, nil); len(c) > 0 {
			t.Fatalf("send completed before the peer died: %+v", c)
		}
		time.Sleep(time.Millisecond)
	}
	killOneFails(t, p, a, other, a.tx, "send", "big")
}

// TestRDMPeerKilledRendezvousRecv: the peer is killed while we read its
// rendezvous message (it sent 1 MiB of 64 MiB): our receive completes in
// error within 5 s.
func TestRDMPeerKilledRendezvousRecv(t *testing.T) {
	leakCheck(t)
	a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	rb := make([]byte, fltBig)
	if err := a.recv(rb, false, 0, 0, "big"); err != nil {
		t.Fatal(err)
	}
	p := startPeer(t, "rawrndvsend", "TCP_TEST_RDM_PEER="+hex.EncodeToString(a.name))
	a.mustInsert(t, p.name)
	p.expect("SENT", waitLimit, a)
	p.expect("MIDWAY", waitLimit, a)
	deadline := time.Now().Add(waitLimit)
	for a.placed() < 1<<20 {
		if c := poll(a.rx, nil); len(c) > 0 {
			t.Fatalf("receive completed before the peer died: %+v", c)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of the message within 5 s", a.placed())
		}
	}
	killOneFails(t, p, a, other, a.rx, "receive", "big")
}

// TestRDMPeerKilledEagerRecv: the peer is killed while it streams eager
// messages at us: the connection ends (within 5 s), a message cut in half
// is not delivered, posted receives stay posted for other peers.
func TestRDMPeerKilledEagerRecv(t *testing.T) {
	leakCheck(t)
	a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	rb := make([][]byte, 8)
	for i := range rb {
		rb[i] = make([]byte, fltEager)
		if err := a.recv(rb[i], false, 0, 0, i); err != nil {
			t.Fatal(err)
		}
	}
	p := startPeer(t, "eagersend", "TCP_TEST_RDM_PEER="+hex.EncodeToString(a.name))
	a.mustInsert(t, p.name)
	p.expect("SENDING", waitLimit)
	got := waitComps(t, a.rx, 4, waitLimit)
	for _, c := range got {
		if c.err != 0 || c.len != fltEager {
			t.Fatalf("receive %+v", c)
		}
	}
	p.kill()
	deadline := time.Now().Add(waitLimit)
	for a.conns() != 0 {
		got = poll(a.rx, got)
		if time.Now().After(deadline) {
			t.Fatal("the connection to the dead peer is still there after 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	for _, c := range poll(a.rx, got)[len(got):] {
		if c.err != 0 || c.len != fltEager {
			t.Fatalf("receive after the kill %+v", c)
		}
	}
	// Unexpected messages of the dead peer were queued whole or not at
	// all.
	_, u := a.rq.Counts()
	t.Logf("%d messages received, %d queued when the peer died", len(got), u)
	for u > 0 {
		k := min(u, 64)
		for i := 0; i < k; i++ {
			if err := a.recv(make([]byte, fltEager+1), false, 0, 0, "q"); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range waitComps(t, a.rx, k, waitLimit) {
			if c.err != 0 || c.len != fltEager {
				t.Fatalf("queued message %+v", c)
			}
		}
		u -= k
	}
	fltCheckServes(t, a, other)
}

// pidOf returns the pid the node's connection to addr announced.
func (n *fltNode) pidOf(addr []byte) uint32 {
	n.ep.mu.Lock()
	defer n.ep.mu.Unlock()
	if c := n.ep.peers[string(addr)]; c != nil && c.state == connUp {
		return c.remotePID
	}
	return 0
}

// TestRDMPeerRestartNoticed: the peer dies with a rendezvous send of ours
// waiting for it; we notice (end of stream) and the send fails; the peer
// restarts at the same address, and the next send to the same fi_addr
// reaches the new incarnation (no AV change).
func TestRDMPeerRestartNoticed(t *testing.T) {
	leakCheck(t)
	t.Setenv(envStreamLimit, "0") // a rendezvous send, not a streamed one
	t.Setenv(envCMA, "0")
	a := newFlt(t, fltOpts{})
	addr := hex.EncodeToString(loopback(uint16(freePort(t))))
	p1 := startPeer(t, "stall", "TCP_TEST_RDM_ADDR="+addr)
	dest := a.mustInsert(t, p1.name)
	if err := a.send(dest, make([]byte, 1<<20), true, 5, "rndv"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitLimit)
	for a.pidOf(p1.name) != uint32(p1.cmd.Process.Pid) {
		a.ep.Progress()
		if time.Now().After(deadline) {
			t.Fatal("no connection to the first incarnation")
		}
		time.Sleep(time.Millisecond)
	}
	p1.kill()
	if c := waitComps(t, a.tx, 1, waitLimit); c[0].ctx != "rndv" || c[0].err == 0 {
		t.Fatalf("send in flight to the dead peer: %+v, want an error", c[0])
	}
	p2 := startPeer(t, "serve", "TCP_TEST_RDM_ADDR="+addr)
	if string(p2.name) != string(p1.name) {
		t.Fatalf("restarted at %x, not %x", p2.name, p1.name)
	}
	if err := a.send(dest, []byte("to-new"), false, 0, "new"); err != nil {
		t.Fatal(err)
	}
	p2.expect("RECV 6 to-new", waitLimit, a)
	if c := waitComps(t, a.tx, 1, waitLimit); c[0].ctx != "new" || c[0].err != 0 {
		t.Fatalf("send to the new incarnation: %+v", c[0])
	}
	if pid := a.pidOf(p1.name); pid != uint32(p2.cmd.Process.Pid) {
		t.Fatalf("connected to pid %d, want the new incarnation %d", pid, p2.cmd.Process.Pid)
	}
}

// TestRDMPeerRestartReconnects: the peer dies and its new incarnation
// connects to us before we progressed the old connection: the old
// connection is replaced at once (rxm's restart-by-pid), the rendezvous
// send in flight to the old incarnation fails, and both directions work
// with the new one.
func TestRDMPeerRestartReconnects(t *testing.T) {
	leakCheck(t)
	t.Setenv(envStreamLimit, "0") // a rendezvous send, not a streamed one
	t.Setenv(envCMA, "0")
	a := newFlt(t, fltOpts{})
	addr := hex.EncodeToString(loopback(uint16(freePort(t))))
	p1 := startPeer(t, "serve", "TCP_TEST_RDM_ADDR="+addr)
	dest := a.mustInsert(t, p1.name)
	if err := a.send(dest, []byte("to-old"), false, 0, "old"); err != nil {
		t.Fatal(err)
	}
	p1.expect("RECV 6 to-old", waitLimit, a)
	if c := waitComps(t, a.tx, 1, waitLimit); c[0].ctx != "old" || c[0].err != 0 {
		t.Fatalf("send to the first incarnation: %+v", c[0])
	}
	// A tagged rendezvous message the peer has no receive for: it waits.
	if err := a.send(dest, make([]byte, 1<<20), true, 5, "rndv"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		a.ep.Progress()
		a.ep.mu.Lock()
		sent := false
		for _, x := range a.ep.rndv {
			sent = sent || x.sent
		}
		a.ep.mu.Unlock()
		if sent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("rendezvous request not written")
		}
		time.Sleep(time.Millisecond)
	}
	rb := make([]byte, 64)
	if err := a.recv(rb, false, 0, 0, "hello"); err != nil {
		t.Fatal(err)
	}
	p1.kill()
	// No progress of ours until the new incarnation has connected and sent:
	// the control goroutine accepts it and replaces the old connection.
	p2 := startPeer(t, "serve", "TCP_TEST_RDM_ADDR="+addr, "TCP_TEST_RDM_HELLO=new incarnation",
		"TCP_TEST_RDM_PEER="+hex.EncodeToString(a.name))
	if l := p2.line(waitLimit); l != "HELLO 0" {
		t.Fatalf("new incarnation: %q", l)
	}
	if pid := a.pidOf(p1.name); pid != uint32(p2.cmd.Process.Pid) {
		t.Fatalf("connection to pid %d, want the new incarnation %d (replaced on its request)", pid, p2.cmd.Process.Pid)
	}
	got := waitComps(t, a.tx, 1, waitLimit)
	if got[0].ctx != "rndv" || got[0].err == 0 {
		t.Fatalf("send in flight to the old incarnation: %+v, want an error", got[0])
	}
	c := waitComps(t, a.rx, 1, waitLimit)
	if c[0].err != 0 || string(rb[:c[0].len]) != "new incarnation" {
		t.Fatalf("from the new incarnation: %+v %q", c[0], rb)
	}
	if err := a.send(dest, []byte("to-new"), false, 0, "new"); err != nil {
		t.Fatal(err)
	}
	p2.expect("RECV 6 to-new", waitLimit, a)
	if c := waitComps(t, a.tx, 1, waitLimit); c[0].ctx != "new" || c[0].err != 0 {
		t.Fatalf("send to the new incarnation: %+v", c[0])
	}
}

// rawConn is the helper's side of a raw rxm connection.
type rawConn struct{ c net.Conn }

func (r rawConn) readFull(b []byte) error {
	r.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := io.ReadFull(r.c, b)
	return err
}

// cm reads a CM message and returns its type and data.
func (r rawConn) cm() (uint8, []byte, error) {
	var h [tcpwire.CMHeaderSize]byte
	if err := r.readFull(h[:]); err != nil {
		return 0, nil, err
	}
	typ, dlen, _, err := tcpwire.ParseCMHeader(h[:])
	if err != nil {
		return 0, nil, err
	}
	d := make([]byte, dlen)
	return typ, d, r.readFull(d)
}

// frame reads a frame's tcp header and payload (up to max bytes of it;
// the rest is left in the stream).
func (r rawConn) frame(max int) (tcpwire.Header, []byte, error) {
	var h tcpwire.Header
	var b [tcpwire.MaxHeaderSize]byte
	if err := r.readFull(b[:tcpwire.BaseHeaderSize]); err != nil {
		return h, nil, err
	}
	hs, err := tcpwire.PeekHeaderSize(b[:tcpwire.BaseHeaderSize])
	if err != nil {
		return h, nil, err
	}
	if err := r.readFull(b[tcpwire.BaseHeaderSize:hs]); err != nil {
		return h, nil, err
	}
	if err := tcpwire.ParseHeader(b[:hs], &h, false); err != nil {
		return h, nil, err
	}
	p := make([]byte, min(h.Size-uint64(hs), uint64(max)))
	return h, p, r.readFull(p)
}

func rawConnect(port uint16) []byte {
	return rxmwire.AppendConnect(nil, &rxmwire.Connect{Port: port, FlowCtrl: rxmwire.FlowCtrlPeerOff,
		EagerLimit: rxmwire.EagerLimit, RxSize: rxmwire.RxSize, ConnID: rxmwire.ConnID(uint32(os.Getpid()), 0)})
}

// rawRndvRecv is the rawrndvrecv helper mode.
func rawRndvRecv() error {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("NAME %x\n", loopback(uint16(ln.Addr().(*net.TCPAddr).Port)))
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	r := rawConn{c}
	if typ, _, err := r.cm(); err != nil || typ != tcpwire.CMConnReq {
		return fmt.Errorf("connect request %d: %v", typ, err)
	}
	acc := rxmwire.AppendAccept(nil, &rxmwire.Accept{ConnID: rxmwire.ConnID(uint32(os.Getpid()), 0),
		RxSize: rxmwire.RxSize, FlowCtrl: rxmwire.FlowCtrlPeerOff})
	b, _ := tcpwire.AppendCM(nil, tcpwire.CMConnResp, acc)
	if _, err := c.Write(b); err != nil {
		return err
	}
	_, p, err := r.frame(1 << 20)
	if err != nil {
		return err
	}
	var rh rxmwire.Header
	if err := rh.Parse(p); err != nil || rh.Type != rxmwire.TypeRndvReq {
		return fmt.Errorf("rendezvous request %+v: %v", rh, err)
	}
	rv, err := rxmwire.ParseRndv(p[rxmwire.HeaderSize:], rh.Size)
	if err != nil {
		return err
	}
	h := tcpwire.Header{Op: tcpwire.OpReadReq, RMACount: rv.Count}
	for i := 0; i < int(rv.Count); i++ {
		h.RMA[i] = tcpwire.RMAIOV{Addr: rv.IOV[i].Addr, Len: rv.IOV[i].Len, Key: rv.IOV[i].Key}
	}
	h.SetPayload(0)
	if _, err := c.Write(tcpwire.AppendHeader(nil, &h, false)); err != nil {
		return err
	}
	if h, _, err = r.frame(1 << 20); err != nil || h.Op != tcpwire.OpReadRsp {
		return fmt.Errorf("read response %+v: %v", h, err)
	}
	keep(ln, c)
	fmt.Println("MIDWAY")
	return nil
}

// rawHelperConnect is the start of the raw helper modes: it prints a NAME
// line for a listener of its own (never accepted on) and connects to the
// rxm endpoint named by TCP_TEST_RDM_PEER as an rxm peer with that name.
func rawHelperConnect() (net.Conn, rawConn, error) {
	peer, err := hex.DecodeString(os.Getenv("TCP_TEST_RDM_PEER"))
	if err != nil {
		return nil, rawConn{}, err
	}
	a, _, ok := decodeSockaddr(peer)
	if !ok {
		return nil, rawConn{}, fmt.Errorf("peer %x", peer)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, rawConn{}, err
	}
	helperListener = ln
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	fmt.Printf("NAME %x\n", loopback(port))
	c, err := net.Dial("tcp4", a.AP.String())
	if err != nil {
		return nil, rawConn{}, err
	}
	r := rawConn{c}
	b, _ := tcpwire.AppendCM(nil, tcpwire.CMConnReq, rawConnect(port))
	if _, err := c.Write(b); err != nil {
		return nil, rawConn{}, err
	}
	if typ, _, err := r.cm(); err != nil || typ != tcpwire.CMConnResp {
		return nil, rawConn{}, fmt.Errorf("connect response %d: %v", typ, err)
	}
	return c, r, nil
}

// helperListener keeps the raw helper's named listener open for the life
// of the process.
var helperListener net.Listener

// rawRndvSend is the rawrndvsend helper mode.
func rawRndvSend() error {
	c, r, err := rawHelperConnect()
	if err != nil {
		return err
	}
	const key = rxmwire.KeyBase | 77
	rv := rxmwire.Rndv{Count: 1}
	rv.IOV[0] = rxmwire.RndvIOV{Len: fltBig, Key: key}
	body := make([]byte, rxmwire.RndvSize)
	rv.Put(body)
	if _, err := c.Write(rxmFrame(rxmwire.Header{Type: rxmwire.TypeRndvReq, Size: fltBig, MsgID: key}, body)); err != nil {
		return err
	}
	fmt.Println("SENT")
	h, _, err := r.frame(0)
	if err != nil || h.Op != tcpwire.OpReadReq || h.RMACount != 1 || h.RMA[0].Key != key || h.RMA[0].Len != fltBig {
		return fmt.Errorf("read request %+v: %v", h, err)
	}
	rsp := tcpwire.Header{Op: tcpwire.OpReadRsp}
	rsp.SetPayload(fltBig)
	if _, err := c.Write(append(tcpwire.AppendHeader(nil, &rsp, false), make([]byte, 1<<20)...)); err != nil {
		return err
	}
	keep(c)
	fmt.Println("MIDWAY")
	return nil
}

// TestRDMClosedMidFrame: the receiving side closes its connection for
// idleness (drain) while the sender has a frame half written and more
// queued: the sender finishes that frame on the old connection (still
// read by the drain), moves the rest to a new one, and every message
// arrives once, in order, every send succeeding.
func TestRDMClosedMidFrame(t *testing.T) {
	leakCheck(t)
	hub, p := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	smallSockBufs(hub, p)
	ph := p.mustInsert(t, hub.name)
	const n = 400 // 6.4 MiB of 16 KiB messages: more than the socket buffers
	msg := make([]byte, fltEager)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(msg, uint32(i))
		if err := p.send(ph, msg, true, uint64(i), i); err != nil {
			t.Fatal(err)
		}
	}
	// The hub reads nothing (manual progress, not called): the sender
	// fills the socket with a frame half written.
	var sent []fltComp
	deadline := time.Now().Add(waitLimit)
	for {
		sent = poll(p.tx, sent)
		p.ep.mu.Lock()
		c := p.ep.peers[string(hub.name)]
		partial := c != nil && c.state == connUp && c.tx.head() != nil && c.tx.head().off > 0
		p.ep.mu.Unlock()
		if partial {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no frame half written within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	hub.ep.mu.Lock()
	var hc *rdmConn
	for _, c := range hub.ep.conns {
		if c != nil {
			hc = c
		}
	}
	if hc == nil || hc.state != connUp {
		hub.ep.mu.Unlock()
		t.Fatal("no connection at the hub")
	}
	hc.drain()
	// Hold the hub (its control goroutine drains) until the sender has
	// seen the end of stream with its frame still half written.
	deadline = time.Now().Add(waitLimit)
	for {
		p.ep.Progress()
		p.ep.mu.Lock()
		c := p.ep.peers[string(hub.name)]
		eof := c != nil && c.eof
		p.ep.mu.Unlock()
		if eof {
			break
		}
		if time.Now().After(deadline) {
			hub.ep.mu.Unlock()
			t.Fatal("the sender did not see the end of stream mid-frame")
		}
		time.Sleep(time.Millisecond)
	}
	hub.ep.mu.Unlock()
	bufs := make([][]byte, 64)
	for i := range bufs {
		bufs[i] = make([]byte, fltEager)
		if err := hub.recv(bufs[i], true, 0, ^uint64(0), i); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	deadline = time.Now().Add(3 * waitLimit)
	for got < n || len(sent) < n {
		sent = poll(p.tx, sent)
		for _, c := range poll(hub.rx, nil) {
			i := c.ctx.(int)
			if k := binary.LittleEndian.Uint32(bufs[i]); c.err != 0 || c.tag != uint64(got) || k != uint32(got) {
				t.Fatalf("hub received %+v (message %d), want message %d", c, k, got)
			}
			got++
			if err := hub.recv(bufs[i], true, 0, ^uint64(0), i); err != nil {
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d received, %d sends done of %d", got, len(sent), n)
		}
	}
	for _, c := range sent {
		if c.err != 0 {
			t.Fatalf("send %v failed: %v", c.ctx, c.err)
		}
	}
	hub.ep.mu.Lock()
	drained := hub.ep.drained
	hub.ep.mu.Unlock()
	if drained != 1 {
		t.Fatalf("%d connections drained, want 1", drained)
	}
}

// helperKept holds what a helper process must keep open until its parent
// kills it: a socket, or an endpoint, that becomes unreachable is closed by
// its cleanup (net's, sys.Conn's) at the next collection, and the parent
// would see the connection end early.
var helperKept []any

// keep keeps v reachable for the rest of the helper process's life.
func keep(v ...any) { helperKept = append(helperKept, v...) }
