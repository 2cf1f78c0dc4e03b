package lnx

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/testutil"
)

// envChild, when set, makes TestRemoteChild the body of the remote peer
// process of TestRemotePathFails.
const envChild = "LNX_TEST_REMOTE_CHILD"

// TestRemoteChild is the remote peer of TestRemotePathFails when started
// by it (envChild set; its host identity is another one): it opens an lnx
// endpoint, prints its address in hexadecimal, and then progresses
// without posting a receive until it is killed (or for 30 s).
func TestRemoteChild(t *testing.T) {
	if os.Getenv(envChild) == "" {
		return
	}
	c := openNode(t, "")
	fmt.Println(hex.EncodeToString(c.addr))
	end := time.Now().Add(30 * time.Second)
	for time.Now().Before(end) {
		c.txcq.Read(nil)
		c.rxcq.Read(nil)
		time.Sleep(100 * time.Microsecond)
	}
}

// TestRemotePathFails: a's remote peer c is another process, reached over
// tcp; a's local peer b over shm. c is killed (SIGKILL) while a's
// delivery-complete send of 8 MiB waits for it: that send completes in
// error, so do later sends and RMA writes for c, and the shm path keeps
// working (messages both ways, RMA) on the same endpoint, CQs and receive
// queue.
func TestRemotePathFails(t *testing.T) {
	rt := watchRoutes(t)
	a := openNodeCaps(t, "", fabric.CapRMA)
	b := openNodeCaps(t, "", fabric.CapRMA)

	cmd, caddr := startRemoteChild(t)
	killed := false
	t.Cleanup(func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	ac, ab := a.insert(caddr), a.insert(b.addr)
	ba := b.insert(a.addr)

	// The remote path works: a small send completes.
	retry(t, func() error { return a.ep.Send([]byte("hello"), nil, ac, "hello") }, a.txcq)
	if e := waitOne(t, a.txcq); e.OpContext != "hello" {
		t.Fatalf("hello completion %+v", e)
	}
	if p := rt.routeOf(a, ac); p != pathTCP {
		t.Fatalf("route to the child %d, want tcp", p)
	}
	// A delivery-complete send the child never receives (no receive
	// posted) stays outstanding.
	big := make([]byte, 8<<20)
	retry(t, func() error {
		return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{big}, Addr: ac, Context: "big"},
			fabric.FlagCompletion|fabric.FlagDeliveryComplete)
	}, a.txcq)
	ent := make([]fabric.CQEntry, 1)
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		if n, _ := a.txcq.Read(ent); n == 1 {
			t.Fatalf("delivery-complete send completed before the child received it: %+v", ent[0])
		}
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true

	remotePathFailed(t, rt, a, b, ac, ab, ba)
}

// remotePathFailed checks what follows the failure of a's tcp path to
// the remote peer ac, whose delivery-complete send "big" was outstanding:
// that send completes in error, so do (or are refused) later sends and
// RMA writes for ac, and a's shm path to b (ab, ba) keeps working both
// ways, messages and RMA, through the same endpoints, CQs and receive
// queues.
func remotePathFailed(t *testing.T, rt *routes, a, b *node, ac, ab, ba fabric.Addr) {
	t.Helper()
	ent := make([]fabric.CQEntry, 1)
	// The outstanding send completes in error.
	if ee := waitErr(t, a.txcq); ee.OpContext != "big" {
		t.Fatalf("error completion %+v, want the big send's", ee)
	}
	// So does (or is refused) what is posted for the child afterwards.
	deadline := time.Now().Add(10 * time.Second)
	for failed := false; !failed; {
		if time.Now().After(deadline) {
			t.Fatal("sends to the killed child still succeed after 10 s")
		}
		err := a.ep.Send([]byte("late"), nil, ac, "late")
		switch {
		case errors.Is(err, fabric.ErrAgain):
			a.txcq.Read(nil)
			continue
		case err != nil:
			failed = true
			continue
		}
		for {
			n, err := a.txcq.Read(ent)
			if n == 1 {
				if ent[0].OpContext != "late" {
					t.Fatalf("unexpected completion %+v", ent[0])
				}
				break // buffered before the reset was seen; again
			}
			if errors.Is(err, fabric.ErrAvail) {
				var ee fabric.CQErrEntry
				if err := a.txcq.ReadErr(&ee); err != nil || ee.OpContext != "late" {
					t.Fatalf("error entry %+v %v", ee, err)
				}
				failed = true
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("late send: no completion in 10 s")
			}
		}
	}

	// An RMA write for the child fails too (at posting or in its
	// completion).
	switch err := a.ep.RMAWrite([]byte("rma"), nil, ac, 0, 1, "rma-dead"); {
	case errors.Is(err, fabric.ErrAgain):
		t.Fatal("RMA write to the dead child: ErrAgain")
	case err == nil:
		if ee := waitErr(t, a.txcq); ee.OpContext != "rma-dead" {
			t.Fatalf("error completion %+v, want the RMA write's", ee)
		}
	}

	// The shm path still works, both ways, through the same objects:
	// messages, and an RMA write into b's region.
	region := make([]byte, 16)
	mr, err := b.dom.RegMR(region, fabric.FlagRemoteWrite, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, mr.Close()) })
	retry(t, func() error {
		return a.ep.RMAWrite([]byte("shm-rma-ok"), nil, ab, mr.Address(), mr.Key(), "rma-b")
	}, a.txcq)
	if e := waitOne(t, a.txcq, b.rxcq); e.OpContext != "rma-b" || string(region[:10]) != "shm-rma-ok" {
		t.Fatalf("RMA write to b: %+v, region %q", e, region)
	}
	buf := make([]byte, 32)
	if err := a.ep.Recv(buf, nil, fabric.AddrUnspec, "from-b"); err != nil {
		t.Fatal(err)
	}
	retry(t, func() error { return b.ep.Send([]byte("b-after-kill"), nil, ba, "bs") }, b.txcq)
	src := make([]fabric.Addr, 1)
	for end := time.Now().Add(10 * time.Second); ; {
		n, err := a.rxcq.ReadFrom(ent, src)
		if n == 1 {
			if ent[0].OpContext != "from-b" || src[0] != ab || string(buf[:ent[0].Len]) != "b-after-kill" {
				t.Fatalf("receive %+v from %v: %q", ent[0], src[0], buf[:ent[0].Len])
			}
			break
		}
		if err != nil && !errors.Is(err, fabric.ErrAgain) {
			t.Fatalf("a rx cq: %v", err)
		}
		if time.Now().After(end) {
			t.Fatal("b's message not received in 10 s")
		}
		b.txcq.Read(nil)
	}
	waitOne(t, b.txcq, a.rxcq)
	bbuf := make([]byte, 32)
	if err := b.ep.Recv(bbuf, nil, fabric.AddrUnspec, "from-a"); err != nil {
		t.Fatal(err)
	}
	retry(t, func() error { return a.ep.Send([]byte("a-after-kill"), nil, ab, "as") }, a.txcq)
	if e := waitOne(t, a.txcq, b.rxcq); e.OpContext != "as" {
		t.Fatalf("a's send completion %+v", e)
	}
	if e := waitOne(t, b.rxcq, a.txcq); e.OpContext != "from-a" || string(bbuf[:e.Len]) != "a-after-kill" {
		t.Fatalf("b's receive %+v %q", e, bbuf[:e.Len])
	}
	if p := rt.routeOf(a, ab); p != pathSHM {
		t.Errorf("route to b %d, want shm", p)
	}
}

// startRemoteChild starts TestRemoteChild in a new process of another
// host identity and returns it with its lnx address. The caller ends it
// (by its PID, through cmd.Process).
func startRemoteChild(t *testing.T) (*exec.Cmd, []byte) {
	t.Helper()
	cmd, line := testutil.StartChild(t, "^TestRemoteChild$", 20*time.Second,
		envChild+"=1", EnvHostID+"=lnx-remote-child", EnvDisableSHM+"=")
	caddr, err := hex.DecodeString(line)
	if err != nil || len(caddr) == 0 {
		t.Fatalf("child address %q: %v", line, err)
	}
	return cmd, caddr
}

// waitErr waits (bounded) for an error completion on cq; a success
// completion fails the test.
func waitErr(t *testing.T, cq *fabric.CQ) fabric.CQErrEntry {
	t.Helper()
	ent := make([]fabric.CQEntry, 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := cq.Read(ent)
		if n == 1 {
			t.Fatalf("success completion %+v, want an error", ent[0])
		}
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			if err := cq.ReadErr(&ee); err != nil {
				t.Fatal(err)
			}
			return ee
		}
		if time.Now().After(deadline) {
			t.Fatal("no error completion in 10 s")
		}
	}
}

// resetRelay forwards tcp connections to a target until reset: then it
// resets (SO_LINGER 0 close: an RST, not a FIN) every connection it
// carries, both sides, and every connection it accepts afterwards.
type resetRelay struct {
	ln     *net.TCPListener
	target string
	mu     sync.Mutex
	reset  bool
	conns  []*net.TCPConn
	wg     sync.WaitGroup
}

// newResetRelay starts a relay to target on 127.0.0.1; it is closed, and
// its goroutines waited for, at cleanup.
func newResetRelay(t *testing.T, target string) *resetRelay {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &resetRelay{ln: ln, target: target}
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(func() {
		ln.Close()
		r.resetAll()
		r.wg.Wait()
	})
	return r
}

// sockaddr is the relay's address as a struct sockaddr_in.
func (r *resetRelay) sockaddr() []byte {
	a := r.ln.Addr().(*net.TCPAddr)
	sa := make([]byte, 16)
	sa[0], sa[2], sa[3] = 2, byte(a.Port>>8), byte(a.Port)
	copy(sa[4:8], a.IP.To4())
	return sa
}

func (r *resetRelay) accept() {
	defer r.wg.Done()
	for {
		in, err := r.ln.AcceptTCP()
		if err != nil {
			return
		}
		out, err := net.DialTimeout("tcp4", r.target, 5*time.Second)
		if err != nil {
			in.SetLinger(0)
			in.Close()
			continue
		}
		if !r.add(in, out.(*net.TCPConn)) {
			continue
		}
		r.wg.Add(2)
		go r.pipe(in, out.(*net.TCPConn))
		go r.pipe(out.(*net.TCPConn), in)
	}
}

// add records a pair, or resets it at once after the reset.
func (r *resetRelay) add(a, b *net.TCPConn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reset {
		for _, c := range []*net.TCPConn{a, b} {
			c.SetLinger(0)
			c.Close()
		}
		return false
	}
	r.conns = append(r.conns, a, b)
	return true
}

func (r *resetRelay) pipe(dst, src *net.TCPConn) {
	defer r.wg.Done()
	io.Copy(dst, src)
	dst.CloseWrite()
}

// resetAll resets every connection, now and from now on.
func (r *resetRelay) resetAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reset = true
	for _, c := range r.conns {
		c.SetLinger(0)
		c.Close()
	}
	r.conns = nil
}

// TestRemotePathReset: a reaches its remote peer c (another process) over
// tcp through a relay of the test, and its local peer b over shm. The
// relay resets the connection (RST on both sides) while a's
// delivery-complete send of 8 MiB waits for c: that send completes in
// error, later sends and RMA writes for c fail, and the shm path keeps
// working (messages both ways, RMA) on the same endpoint, CQs and receive
// queue. c itself stays alive: only the connection failed.
func TestRemotePathReset(t *testing.T) {
	rt := watchRoutes(t)
	a := openNodeCaps(t, "", fabric.CapRMA)
	b := openNodeCaps(t, "", fabric.CapRMA)

	cmd, caddr := startRemoteChild(t)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ca, ok := parseAddr(caddr)
	if !ok || !isSockaddrIn(ca.tcp) {
		t.Fatalf("child address %q", caddr)
	}
	target := net.JoinHostPort(net.IP(ca.tcp[4:8]).String(), strconv.Itoa(int(ca.tcp[2])<<8|int(ca.tcp[3])))
	relay := newResetRelay(t, target)
	// c as a knows it: its host and shm name, and the relay for tcp.
	ca.tcp = relay.sockaddr()
	ac, ab := a.insert(ca.encode()), a.insert(b.addr)
	ba := b.insert(a.addr)

	retry(t, func() error { return a.ep.Send([]byte("hello"), nil, ac, "hello") }, a.txcq)
	if e := waitOne(t, a.txcq); e.OpContext != "hello" {
		t.Fatalf("hello completion %+v", e)
	}
	if p := rt.routeOf(a, ac); p != pathTCP {
		t.Fatalf("route to the child %d, want tcp", p)
	}
	big := make([]byte, 8<<20)
	retry(t, func() error {
		return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{big}, Addr: ac, Context: "big"},
			fabric.FlagCompletion|fabric.FlagDeliveryComplete)
	}, a.txcq)
	ent := make([]fabric.CQEntry, 1)
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		if n, _ := a.txcq.Read(ent); n == 1 {
			t.Fatalf("delivery-complete send completed before the child received it: %+v", ent[0])
		}
	}
	relay.resetAll()
	remotePathFailed(t, rt, a, b, ac, ab, ba)
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the child is gone (%v): the test meant to fail only the connection", err)
	}
}
