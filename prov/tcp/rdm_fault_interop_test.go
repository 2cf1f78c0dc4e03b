package tcp

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// startCPeer starts the C program bin with args (FI_TCP_IFACE=lo) and
// returns its stdin, its stdout lines and its stderr. At the end of the test
// (before the cleanups registered earlier, such as a leak check) stdin is
// closed and the program is waited for, killed after 5 s.
func startCPeer(t *testing.T, bin string, args ...string) (io.WriteCloser, <-chan string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "FI_TCP_IFACE=lo")
	errb := new(bytes.Buffer)
	cmd.Stderr = errb
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	so, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(so)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		for range lines {
		}
	})
	return in, lines, errb
}

// buildCProgram compiles testdata/<name>.c against the system libfabric
// (skipping, or failing with FABRIC_INTEROP=1, without gcc or the headers).
func buildCProgram(t *testing.T, name string) string {
	t.Helper()
	bin, err := func() (string, error) {
		cc, err := exec.LookPath("gcc")
		if err != nil {
			return "", err
		}
		if _, err := os.Stat("/usr/include/rdma/fabric.h"); err != nil {
			return "", err
		}
		bin := filepath.Join(t.TempDir(), name)
		out, err := exec.Command(cc, "-O1", "-o", bin, "testdata/"+name+".c", "-lfabric").CombinedOutput()
		if err != nil {
			t.Logf("%s", out)
		}
		return bin, err
	}()
	testutil.InteropCheck(t, "the C RDM interop peer (gcc, libfabric-dev)", err)
	return bin
}

// tcpConns counts the established IPv4 TCP connections towards one of
// ports (each connection once: by the socket whose remote port it is).
func tcpConns(t *testing.T, ports ...int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || f[3] != "01" {
			continue
		}
		i := strings.LastIndexByte(f[2], ':')
		p, err := strconv.ParseUint(f[2][i+1:], 16, 16)
		if err != nil {
			continue
		}
		for _, want := range ports {
			if int(p) == want {
				n++
			}
		}
	}
	return n
}

// TestRDMSimultaneousConnectC: a C tcp;ofi_rxm endpoint and ours send to
// each other at the same moment, before either has a connection; both get
// every message, and one connection remains between them. Each round
// places our listening port above or below the C one, so that both sides
// of rxm's tie-break (the higher address's request wins) are taken.
func TestRDMSimultaneousConnectC(t *testing.T) {
	bin := buildCProgram(t, "rdm_simul")
	const n = 64
	simul := 0 // rounds where both requests met (the timing decides)
	for round := 0; round < 20 && (round < 6 || simul < 2); round++ {
		higher := round%2 == 0
		name := fmt.Sprintf("%d/go-lower", round)
		if higher {
			name = fmt.Sprintf("%d/go-higher", round)
		}
		t.Run(name, func(t *testing.T) {
			leakCheck(t)
			t.Setenv(envIface, "lo")
			in, lines, errb := startCPeer(t, bin, strconv.Itoa(n))
			next := func(d time.Duration, progress *fltNode) string {
				t.Helper()
				deadline := time.Now().Add(d)
				for {
					select {
					case l, ok := <-lines:
						if !ok {
							t.Fatalf("C peer ended; stderr:\n%s", errb.String())
						}
						return l
					default:
					}
					if time.Now().After(deadline) {
						t.Fatalf("no line from the C peer within %v; stderr:\n%s", d, errb.String())
					}
					if progress != nil {
						progress.ep.Progress()
					}
					time.Sleep(100 * time.Microsecond)
				}
			}
			l := next(10*time.Second, nil)
			cname, err := hex.DecodeString(strings.TrimPrefix(l, "NAME "))
			if err != nil || !strings.HasPrefix(l, "NAME ") || len(cname) < 4 {
				t.Fatalf("C name line %q", l)
			}
			cport := listenPortOf(cname)
			// Our endpoint at a free port above (or below) the C one.
			var a *fltNode
			for d := 1; a == nil && d < 200; d++ {
				p := cport - d
				if higher {
					p = cport + d
				}
				if p <= 1024 || p > 65535 {
					break
				}
				if n, err := openFlt(fltOpts{addr: loopback(uint16(p))}); err == nil {
					a = n
				}
			}
			if a == nil {
				t.Fatalf("no free port near %d", cport)
			}
			t.Cleanup(a.close)
			dest := a.mustInsert(t, cname)
			bufs := make([][]byte, n)
			for i := range bufs {
				bufs[i] = make([]byte, 32)
				if err := a.recv(bufs[i], true, 0, ^uint64(0), i); err != nil {
					t.Fatal(err)
				}
			}
			fmt.Fprintf(in, "PEER %x\n", a.name)
			fmt.Fprintf(in, "GO\n")
			// The C side reads GO within about a millisecond: vary our
			// start around that, so that the requests cross in some rounds.
			time.Sleep(time.Duration(round%4) * 400 * time.Microsecond)
			for i := 0; i < n; i++ {
				if err := a.send(dest, []byte(fmt.Sprintf("g%d", i)), true, uint64(i), i); err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
			}
			var sent, got []fltComp
			start := time.Now()
			deadline := time.Now().Add(10 * time.Second)
			for len(sent) < n || len(got) < n {
				sent, got = poll(a.tx, sent), poll(a.rx, got)
				if time.Now().After(deadline) {
					t.Fatalf("%d sends and %d receives of %d within 10 s; C stderr:\n%s", len(sent), len(got), n, errb.String())
				}
			}
			seen := map[uint64]bool{}
			for _, c := range got {
				i := c.ctx.(int)
				if want := fmt.Sprintf("c%d", c.tag); c.err != 0 || seen[c.tag] || string(bufs[i][:c.len]) != want {
					t.Fatalf("receive %+v: %q (seen %v)", c, bufs[i][:c.len], seen[c.tag])
				}
				seen[c.tag] = true
			}
			for _, c := range sent {
				if c.err != 0 {
					t.Fatalf("send %+v", c)
				}
			}
			t.Logf("our sends and receives done in %v", time.Since(start))
			if l := next(10*time.Second, a); l != "OK" {
				t.Fatalf("C peer said %q; stderr:\n%s", l, errb.String())
			}
			t.Logf("C done after %v", time.Since(start))
			aport := listenPortOf(a.name)
			deadline = time.Now().Add(3 * time.Second)
			for {
				a.ep.Progress()
				k := tcpConns(t, aport, cport)
				if k == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d connections between the endpoints, want 1", k)
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Logf("one connection after %v", time.Since(start))
			a.ep.mu.Lock()
			live := a.ep.nconns
			if a.ep.simul > 0 {
				simul++
			}
			a.ep.mu.Unlock()
			if live != 1 {
				t.Fatalf("%d connections at our endpoint, want 1", live)
			}
			fmt.Fprintf(in, "BYE\n")
		})
	}
	if simul < 2 {
		t.Fatalf("the requests met in %d rounds only: the test did not test simultaneous connects", simul)
	}
	t.Logf("simultaneous connects in %d rounds", simul)
}

// TestRDMIdleCloseC: with an idle bound of one connection, our endpoint
// alternates between a C tcp;ofi_rxm peer (which answers each ping) and
// one of ours: every switch closes the idle connection to the other peer
// gracefully. The C peer sees its connection end (FI_SHUTDOWN inside rxm)
// and the next ping arrive on a new one, and answers on it; no operation
// fails on either side.
func TestRDMIdleCloseC(t *testing.T) {
	bin := buildCProgram(t, "rdm_simul")
	leakCheck(t)
	t.Setenv(envMaxConns, "1")
	hub := newFlt(t, fltOpts{})
	t.Setenv(envMaxConns, "")
	other := newFlt(t, fltOpts{})
	in, lines, errb := startCPeer(t, bin, "echo")
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("C peer ended; stderr:\n%s", errb.String())
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("no line from the C peer; stderr:\n%s", errb.String())
		}
		return ""
	}
	l := next()
	cname, err := hex.DecodeString(strings.TrimPrefix(l, "NAME "))
	if err != nil || !strings.HasPrefix(l, "NAME ") {
		t.Fatalf("C name line %q", l)
	}
	toC, toO, oh := hub.mustInsert(t, cname), hub.mustInsert(t, other.name), other.mustInsert(t, hub.name)
	fmt.Fprintf(in, "PEER %x\n", hub.name)
	ob := make([]byte, 32)
	if err := other.recv(ob, true, 0, ^uint64(0), "o"); err != nil {
		t.Fatal(err)
	}
	// ping sends "ping i" to dest and waits for "pong i", the other Go
	// endpoint answering like the C one.
	ping := func(dest provider.Addr, i int) {
		t.Helper()
		rb := make([]byte, 32)
		if err := hub.recv(rb, true, uint64(i), 0, "pong"); err != nil {
			t.Fatal(err)
		}
		if err := hub.send(dest, []byte(fmt.Sprintf("ping %d", i)), true, uint64(i), "ping"); err != nil {
			t.Fatal(err)
		}
		var got, sent []fltComp
		deadline := time.Now().Add(10 * time.Second)
		for len(got) == 0 || len(sent) == 0 {
			got, sent = poll(hub.rx, got), poll(hub.tx, sent)
			for _, c := range poll(other.rx, nil) {
				if c.err != 0 {
					t.Fatalf("other endpoint: %+v", c)
				}
				reply := []byte("pong" + string(ob[4:c.len]))
				if err := other.send(oh, reply, true, c.tag, nil); err != nil {
					t.Fatal(err)
				}
				if err := other.recv(ob, true, 0, ^uint64(0), "o"); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range poll(other.tx, nil) {
				if c.err != 0 {
					t.Fatalf("other endpoint's reply: %+v", c)
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("ping %d to %d: no answer within 10 s; C stderr:\n%s", i, dest, errb.String())
			}
		}
		if sent[0].err != 0 || got[0].err != 0 || string(rb[:got[0].len]) != fmt.Sprintf("pong %d", i) {
			t.Fatalf("ping %d to %d: send %+v, answer %+v %q", i, dest, sent[0], got[0], rb[:got[0].len])
		}
	}
	const rounds = 10
	for i := 0; i < rounds; i++ {
		ping(toC, i)
		ping(toO, i)
	}
	hub.ep.mu.Lock()
	drained := hub.ep.drained
	hub.ep.mu.Unlock()
	t.Logf("%d idle connections closed", drained)
	if drained < 2*rounds-2 {
		t.Fatalf("%d idle connections closed, want at least %d (one per switch)", drained, 2*rounds-2)
	}
	fmt.Fprintf(in, "BYE\n")
	if l := next(); l != fmt.Sprintf("ECHOED %d", rounds) {
		t.Fatalf("C peer: %q; stderr:\n%s", l, errb.String())
	}
}
