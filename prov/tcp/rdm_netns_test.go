package tcp

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Two hosts in network namespaces joined by a user-space TCP relay of the
// test's own, which delays, stalls and resets connections while the link
// of one host also goes down for 2 s: tagged messages from one host to the
// other are each delivered exactly once or reported to their sender as an
// error completion (the sends ask for FI_DELIVERY_COMPLETE), in order, and
// the endpoints recover.
//
// The endpoints are helper processes (this test binary re-executed with
// `ip netns exec`). Message count: 10^6 (about 15 s here); 50,000 under
// -short or with CI set, unless FABRIC_NETNS_LONG=1 asks for the long form
// there too (`CI= go test ./prov/tcp -run TestRDMNetns -v` runs it).
//
// Addresses: host A is 10.77.1.2 behind veth A (relay side 10.77.1.1), host
// B 10.77.2.2 behind veth B (relay side 10.77.2.1); the namespaces have no
// route to each other. The relay ends of the links are in a third namespace
// of the test's own, never in the namespace the test runs in: an address
// there would be the default source of endpoints that other tests (other
// packages run in parallel) open without one, and those would lose their
// connections when this test takes the link down or deletes it (a stall
// of the soak, found that way). The relay, goroutines of this test whose
// sockets are made in that namespace (inNetns), listens at
// 10.77.1.1:<B's port> for B and at 10.77.2.1:<A's port> for A and
// connects from the other side's host address, so each endpoint sees its
// peer at the relay address it put in its AV.

func init() { testHelpers["netns"] = netnsHelperMain }

// netnsSetup creates the namespaces and links; cleanup removes them also
// when the test fails.
type netns struct {
	t      *testing.T
	prefix string
}

func (n *netns) run(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (n *netns) must(args ...string) {
	n.t.Helper()
	if err := n.run(args...); err != nil {
		n.t.Fatal(err)
	}
}

func (n *netns) ns(side string) string { return n.prefix + side }

// hostLink is the relay-side end of a host's veth pair.
func (n *netns) hostLink(side string) string { return n.prefix + side + "h" }

func newNetns(t *testing.T) *netns {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("network namespaces cannot be created here: %v", err)
	}
	n := &netns{t: t, prefix: fmt.Sprintf("gfr%d", os.Getpid()%100000)}
	if err := n.run("netns", "add", n.ns("a")); err != nil {
		t.Skipf("network namespaces cannot be created here: %v", err)
	}
	t.Cleanup(func() {
		for _, s := range []string{"a", "b", "r"} {
			n.run("netns", "del", n.ns(s)) // with the links in it
		}
	})
	n.must("netns", "add", n.ns("b"))
	n.must("netns", "add", n.ns("r"))
	n.must("-n", n.ns("r"), "link", "set", "lo", "up")
	for i, s := range []string{"a", "b"} {
		ns, h, g := n.ns(s), n.hostLink(s), n.prefix+s+"g"
		n.must("link", "add", h, "netns", n.ns("r"), "type", "veth", "peer", "name", g, "netns", ns)
		n.must("-n", n.ns("r"), "addr", "add", fmt.Sprintf("10.77.%d.1/24", i+1), "dev", h)
		n.must("-n", n.ns("r"), "link", "set", h, "up")
		n.must("-n", ns, "addr", "add", fmt.Sprintf("10.77.%d.2/24", i+1), "dev", g)
		n.must("-n", ns, "link", "set", g, "up")
		n.must("-n", ns, "link", "set", "lo", "up")
	}
	return n
}

func sockaddr4(a [4]byte, port int) []byte {
	return appendSockaddr(nil, sockaddr{AP: netip.AddrPortFrom(netip.AddrFrom4(a), uint16(port))})
}

// inNetns runs f with the calling thread in the network namespace ns
// (sys.InNetns): the sockets f makes are in that namespace.
func inNetns(ns string, f func() error) error { return sys.InNetns("/var/run/netns/"+ns, f) }

// relay forwards TCP connections between the namespaces and misbehaves on
// demand. Its sockets are in the namespace ns.
type relay struct {
	ns      string
	mu      sync.Mutex
	lns     []net.Listener
	pairs   map[*relayPair]bool
	delay   atomic.Int64 // per chunk, ns
	stalled atomic.Bool
	conns   atomic.Int64 // connections accepted
	wg      sync.WaitGroup
}

type relayPair struct{ a, b *net.TCPConn }

// forward listens at listen and relays every connection to target, dialed
// from the address src.
func (r *relay) forward(listen, target, src string) error {
	var ln net.Listener
	err := inNetns(r.ns, func() (err error) {
		ln, err = net.Listen("tcp4", listen)
		return err
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.lns = append(r.lns, ln)
	if r.pairs == nil {
		r.pairs = map[*relayPair]bool{}
	}
	r.mu.Unlock()
	srcAddr, err := net.ResolveTCPAddr("tcp4", src+":0")
	if err != nil {
		return err
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.conns.Add(1)
			d := net.Dialer{LocalAddr: srcAddr, Timeout: 5 * time.Second}
			var o net.Conn
			err = inNetns(r.ns, func() (err error) {
				o, err = d.Dial("tcp4", target)
				return err
			})
			if err != nil {
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
				continue
			}
			p := &relayPair{a: c.(*net.TCPConn), b: o.(*net.TCPConn)}
			r.mu.Lock()
			r.pairs[p] = true
			r.mu.Unlock()
			var once sync.Once
			end := func(reset bool) {
				once.Do(func() {
					if reset {
						p.a.SetLinger(0)
						p.b.SetLinger(0)
					}
					p.a.Close()
					p.b.Close()
					r.mu.Lock()
					delete(r.pairs, p)
					r.mu.Unlock()
				})
			}
			var half atomic.Int32
			pump := func(src, dst *net.TCPConn) {
				defer r.wg.Done()
				buf := make([]byte, 64<<10)
				for {
					n, err := src.Read(buf)
					if n > 0 {
						if d := r.delay.Load(); d > 0 {
							time.Sleep(time.Duration(d))
						}
						for r.stalled.Load() {
							time.Sleep(5 * time.Millisecond)
						}
						if _, werr := dst.Write(buf[:n]); werr != nil {
							end(true)
							return
						}
					}
					if errors.Is(err, io.EOF) {
						// Pass the half-close on; the pair ends when both
						// directions have.
						dst.CloseWrite()
						if half.Add(1) == 2 {
							end(false)
						}
						return
					}
					if err != nil {
						end(true)
						return
					}
				}
			}
			r.wg.Add(2)
			go pump(p.a, p.b)
			go pump(p.b, p.a)
		}
	}()
	return nil
}

// reset ends every relayed connection with a reset on both sides.
func (r *relay) reset() int {
	r.mu.Lock()
	ps := make([]*relayPair, 0, len(r.pairs))
	for p := range r.pairs {
		ps = append(ps, p)
	}
	r.mu.Unlock()
	for _, p := range ps {
		p.a.SetLinger(0)
		p.b.SetLinger(0)
		p.a.Close()
		p.b.Close()
	}
	return len(ps)
}

func (r *relay) close() {
	r.stalled.Store(false)
	r.mu.Lock()
	for _, ln := range r.lns {
		ln.Close()
	}
	r.mu.Unlock()
	r.reset()
	r.wg.Wait()
}

// netnsCount returns the number of messages of the run.
func netnsCount() int {
	if (testing.Short() || os.Getenv("CI") != "") && os.Getenv("FABRIC_NETNS_LONG") != "1" {
		return 50000
	}
	return 1000000
}

// TestRDMNetns: see the comment at the top of the file.
func TestRDMNetns(t *testing.T) {
	leakCheck(t)
	n := newNetns(t)
	total := netnsCount()
	pa, pb := freePort(t), freePort(t)
	aAddr, bAddr := sockaddr4([4]byte{10, 77, 1, 2}, pa), sockaddr4([4]byte{10, 77, 2, 2}, pb)
	// What each endpoint puts in its AV: the relay's address on its side.
	bForA, aForB := sockaddr4([4]byte{10, 77, 1, 1}, pb), sockaddr4([4]byte{10, 77, 2, 1}, pa)
	r := &relay{ns: n.ns("r")}
	defer r.close()
	if err := r.forward(fmt.Sprintf("10.77.1.1:%d", pb), fmt.Sprintf("10.77.2.2:%d", pb), "10.77.2.1"); err != nil {
		t.Fatal(err)
	}
	if err := r.forward(fmt.Sprintf("10.77.2.1:%d", pa), fmt.Sprintf("10.77.1.2:%d", pa), "10.77.1.1"); err != nil {
		t.Fatal(err)
	}
	start := func(side, role string, self, peer []byte) *fltPeer {
		cmd := exec.Command("ip", "netns", "exec", n.ns(side), os.Args[0], "-test.run=^$")
		p := startPeerCmd(t, cmd, role, "TCP_TEST_HELPER=netns", "TCP_TEST_RDM_ADDR="+hex.EncodeToString(self),
			"TCP_TEST_RDM_PEER="+hex.EncodeToString(peer), "TCP_TEST_NETNS_COUNT="+strconv.Itoa(total),
			envIface+"="+n.prefix+side+"g")
		return p
	}
	recv := start("b", "recv", bAddr, aForB)
	send := start("a", "send", aAddr, bForA)
	t0 := time.Now()
	fmt.Fprintln(send.in, "GO")
	// Faults by progress (the sender says "AT k" every total/50
	// completions): delay, stall, reset, link down.
	type fault struct {
		at   int
		name string
		do   func()
	}
	faults := []fault{
		{total / 10, "delay 2 ms per chunk for 1 s", func() {
			r.delay.Store(int64(2 * time.Millisecond))
			time.AfterFunc(time.Second, func() { r.delay.Store(0) })
		}},
		{total * 3 / 10, "stall 1.5 s", func() {
			r.stalled.Store(true)
			time.AfterFunc(1500*time.Millisecond, func() { r.stalled.Store(false) })
		}},
		{total / 2, "reset", func() { t.Logf("reset %d connections", r.reset()) }},
		{total * 6 / 10, "reset", func() { t.Logf("reset %d connections", r.reset()) }},
		{total * 7 / 10, "link of A down for 2 s", func() {
			n.must("-n", n.ns("r"), "link", "set", n.hostLink("a"), "down")
			time.AfterFunc(2*time.Second, func() { n.run("-n", n.ns("r"), "link", "set", n.hostLink("a"), "up") })
		}},
	}
	var failed []int
	ok := -1
	deadline := time.Now().Add(5 * time.Minute)
	for ok < 0 {
		l := send.line(time.Until(deadline))
		switch {
		case strings.HasPrefix(l, "AT "):
			k, _ := strconv.Atoi(l[3:])
			for len(faults) > 0 && k >= faults[0].at {
				t.Logf("%v: %d messages done: %s", time.Since(t0).Round(time.Millisecond), k, faults[0].name)
				faults[0].do()
				faults = faults[1:]
			}
		case strings.HasPrefix(l, "F "):
			var a, b int
			fmt.Sscan(l[2:], &a, &b)
			for s := a; s <= b; s++ {
				failed = append(failed, s)
			}
		case strings.HasPrefix(l, "SENT "):
			var f int
			fmt.Sscan(l[5:], &ok, &f)
			if f != len(failed) {
				t.Fatalf("sender: %d failed, %d listed", f, len(failed))
			}
		default:
			t.Logf("sender: %s", l)
		}
	}
	t.Logf("%v: sender done: %d delivered (acknowledged), %d failed; relay accepted %d connections",
		time.Since(t0).Round(time.Millisecond), ok, len(failed), r.conns.Load())
	if ok+len(failed) != total {
		t.Fatalf("sender: %d + %d completions for %d messages", ok, len(failed), total)
	}
	if len(faults) > 0 {
		t.Fatalf("faults not injected: %v", faults)
	}
	fmt.Fprintln(recv.in, "DONE")
	missing := map[int]bool{}
	for done := false; !done; {
		l := recv.line(30 * time.Second)
		switch {
		case strings.HasPrefix(l, "M "):
			var a, b int
			fmt.Sscan(l[2:], &a, &b)
			for s := a; s <= b; s++ {
				missing[s] = true
			}
		case strings.HasPrefix(l, "RECV "):
			var got, dup, disorder int
			fmt.Sscan(l[5:], &got, &dup, &disorder)
			t.Logf("receiver: %d received, %d duplicates, %d out of order", got, dup, disorder)
			if dup != 0 || disorder != 0 {
				t.Errorf("receiver: %d duplicates, %d out of order", dup, disorder)
			}
			if got+len(missing) != total {
				t.Errorf("receiver: %d received + %d missing != %d", got, len(missing), total)
			}
			done = true
		default:
			t.Logf("receiver: %s", l)
		}
	}
	isFailed := map[int]bool{}
	for _, s := range failed {
		isFailed[s] = true
	}
	lost := 0
	for s := range missing {
		if !isFailed[s] {
			lost++
			if lost <= 10 {
				t.Errorf("message %d was not delivered, and its send completed successfully", s)
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d messages silently lost", lost)
	}
	// Recovery: the last tenth went through.
	for _, s := range failed {
		if s >= total*9/10 {
			t.Fatalf("message %d (after the last fault) failed: the endpoints did not recover", s)
		}
	}
}

// netnsHelperMain is a host of TestRDMNetns: TCP_TEST_RDM_MODE "send"
// sends TCP_TEST_NETNS_COUNT tagged messages (tag = sequence number) to
// the peer with FI_DELIVERY_COMPLETE after "GO" on stdin, saying "AT k"
// every count/50 completions, then "F a b" for each range of failed
// sequence numbers and "SENT ok failed"; "recv" receives them, checking
// order and duplicates, and after "DONE" on stdin says "M a b" for each
// range of missing ones, then "RECV received duplicates disordered".
func netnsHelperMain() int {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "netns helper: %s: %v\n", what, err)
		return 1
	}
	total, err := strconv.Atoi(os.Getenv("TCP_TEST_NETNS_COUNT"))
	if err != nil {
		return fail("count", err)
	}
	self, err := hex.DecodeString(os.Getenv("TCP_TEST_RDM_ADDR"))
	if err != nil {
		return fail("addr", err)
	}
	peerAddr, err := hex.DecodeString(os.Getenv("TCP_TEST_RDM_PEER"))
	if err != nil {
		return fail("peer", err)
	}
	go func() {
		time.Sleep(10 * time.Minute)
		fmt.Fprintln(os.Stderr, "netns helper: ten minutes passed")
		os.Exit(2)
	}()
	n, err := openFlt(fltOpts{addr: self})
	if err != nil {
		return fail("open", err)
	}
	peer, err := n.insert(peerAddr)
	if err != nil {
		return fail("insert", err)
	}
	fmt.Printf("NAME %x\n", n.name)
	in := bufio.NewScanner(os.Stdin)
	lines := make(chan string, 4)
	go func() {
		for in.Scan() {
			lines <- in.Text()
		}
		close(lines)
	}()
	ranges := func(prefix string, has func(int) bool) {
		for s := 0; s < total; s++ {
			if has(s) {
				e := s
				for e+1 < total && has(e+1) {
					e++
				}
				fmt.Printf("%s %d %d\n", prefix, s, e)
				s = e
			}
		}
	}
	switch os.Getenv("TCP_TEST_RDM_MODE") {
	case "send":
		if l := <-lines; l != "GO" {
			return fail("go", fmt.Errorf("%q", l))
		}
		st := make([]uint8, total) // 1 ok, 2 failed
		var comps []fltComp
		done, okN, failN, next := 0, 0, 0, 0
		step := max(total/50, 1)
		msg := make([]byte, 64)
		for done < total {
			for next < total {
				copy(msg, strconv.Itoa(next))
				err := n.ep.TSend(provider.Msg{Buf: msg, Addr: peer, Tag: uint64(next), Context: next,
					Flags: provider.FlagCompletion | provider.FlagDeliveryComplete})
				if err == provider.EAGAIN {
					break
				}
				if err != nil {
					return fail("send", err)
				}
				next++
			}
			comps = poll(n.tx, comps[:0])
			for _, c := range comps {
				s := c.ctx.(int)
				if st[s] != 0 {
					return fail("completion", fmt.Errorf("message %d completed twice", s))
				}
				if c.err != 0 {
					st[s] = 2
					failN++
				} else {
					st[s] = 1
					okN++
				}
				done++
				if done%step == 0 {
					fmt.Printf("AT %d\n", done)
				}
			}
		}
		ranges("F", func(s int) bool { return st[s] == 2 })
		fmt.Printf("SENT %d %d\n", okN, failN)
	case "recv":
		cnt := make([]uint8, total)
		const window = 512
		bufs := make([][]byte, window)
		for i := range bufs {
			bufs[i] = make([]byte, 64)
			if err := n.recv(bufs[i], true, 0, ^uint64(0), i); err != nil {
				return fail("recv", err)
			}
		}
		got, dup, disorder, last := 0, 0, 0, -1
		var comps []fltComp
		for finished := false; !finished; {
			select {
			case <-lines:
				finished = true
			default:
			}
			comps = poll(n.rx, comps[:0])
			for _, c := range comps {
				if c.err != 0 {
					return fail("receive", fmt.Errorf("error completion %v", c.err))
				}
				s := int(c.tag)
				if s < 0 || s >= total || string(bufs[c.ctx.(int)][:len(strconv.Itoa(s))]) != strconv.Itoa(s) {
					return fail("receive", fmt.Errorf("message tag %d: %q", s, bufs[c.ctx.(int)]))
				}
				if cnt[s] > 0 {
					dup++
				} else {
					got++
				}
				cnt[s]++
				if s < last {
					disorder++
				}
				last = s
				if err := n.recv(bufs[c.ctx.(int)], true, 0, ^uint64(0), c.ctx.(int)); err != nil {
					return fail("recv", err)
				}
			}
			if len(comps) == 0 {
				time.Sleep(50 * time.Microsecond)
			}
		}
		ranges("M", func(s int) bool { return cnt[s] == 0 })
		fmt.Printf("RECV %d %d %d\n", got, dup, disorder)
	default:
		return fail("mode", errors.New(os.Getenv("TCP_TEST_RDM_MODE")))
	}
	for range lines {
	}
	n.close()
	return 0
}
