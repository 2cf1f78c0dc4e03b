package lnx

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// A mixed job of 2 hosts × 2 processes over lnx. Each host is a network
// namespace the test creates (joined to the other by a veth pair:
// 10.78.0.1 and 10.78.0.2); each process is this test binary re-executed
// there (`ip netns exec`, TestNetnsNode) and opens one lnx endpoint on its
// host's address. Every process sends netnsMsgs untagged and netnsMsgs
// tagged messages to each of the three others (some larger than an eager
// or inline message) and receives with FI_ADDR_UNSPEC: each message must
// be matched exactly once, in order per source and kind, from the source
// the completion names (FI_SOURCE), the process's peer on the same host
// over shm and the two on the other host over tcp.

const (
	envNetnsNode = "LNX_TEST_NETNS_NODE" // the rank of a TestNetnsNode process
	netnsMsgs    = 300                   // per peer and kind
	netnsTag     = 0x5a00
	netnsBigSize = 40 << 10 // every 50th message
)

// netnsSize is the size of message seq.
func netnsSize(seq int) int {
	if seq%50 == 49 {
		return netnsBigSize
	}
	return 16 + seq%48
}

// TestNetnsNode is one process of TestNetnsMixedJob when started by it
// (envNetnsNode set): it prints its address in hexadecimal, reads the
// addresses of all four ranks (one line, comma-separated, in rank order)
// from stdin, exchanges the messages, prints "done <summary>" and waits
// for a line "exit" on stdin (its peers may still need its progress)
// before it ends. Failures go to stderr and the exit status.
func TestNetnsNode(t *testing.T) {
	rs := os.Getenv(envNetnsNode)
	if rs == "" {
		return
	}
	rank, err := strconv.Atoi(rs)
	if err != nil {
		t.Fatal(err)
	}
	rt := watchRoutes(t)
	host := "10.78.0.1"
	if rank >= 2 {
		host = "10.78.0.2"
	}
	n := openNodeAt(t, host, fabric.CapTagged)
	fmt.Println(hex.EncodeToString(n.addr))
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadString('\n')
	if err != nil {
		t.Fatalf("addresses: %v", err)
	}
	var peers [4]fabric.Addr
	for i, h := range strings.Split(strings.TrimSpace(line), ",") {
		b, err := hex.DecodeString(h)
		if err != nil || i >= 4 {
			t.Fatalf("address line %q", line)
		}
		peers[i] = n.insert(b)
	}
	byAddr := map[fabric.Addr]int{}
	for i, a := range peers {
		if i != rank {
			byAddr[a] = i
		}
	}
	summary := netnsExchange(t, n, rank, peers, byAddr)
	for i, a := range peers {
		if i == rank {
			continue
		}
		want := pathTCP
		if i/2 == rank/2 {
			want = pathSHM
		}
		if p := rt.routeOf(n, a); p != want {
			t.Errorf("route to rank %d: %d, want %d", i, p, want)
		}
	}
	fmt.Println("done", summary)
	exit := make(chan struct{})
	go func() {
		for {
			l, err := in.ReadString('\n')
			if err != nil || strings.TrimSpace(l) == "exit" {
				close(exit)
				return
			}
		}
	}()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		select {
		case <-exit:
			return
		default:
		}
		n.txcq.Read(nil)
		n.rxcq.Read(nil)
		time.Sleep(50 * time.Microsecond)
	}
	t.Error("no exit line in 60 s")
}

// openNodeAt opens an lnx endpoint with FI_SOURCE and FI_DIRECTED_RECV
// (and caps) whose tcp endpoint binds host.
func openNodeAt(t *testing.T, host string, caps fabric.Caps) *node {
	t.Helper()
	return openNodeOn(t, host, "", "", caps, false)
}

// netnsExchange sends rank's messages to its three peers and receives
// theirs, checking each; it returns a one-line summary.
func netnsExchange(t *testing.T, n *node, rank int, peers [4]fabric.Addr, byAddr map[fabric.Addr]int) string {
	const window = 64
	type rx struct {
		buf    []byte
		tagged bool
	}
	var (
		posted     = map[int]*rx{} // by context
		nextCtx    int
		postedKind [2]int // receives posted, untagged and tagged
		got        [4][2]int
		toRecv     = 3 * netnsMsgs
		sent       [4][2]int
		sendsDone  int
		sendsTotal = 2 * 3 * netnsMsgs
		received   int
		ctxOf      [4][2][netnsMsgs]int // receive context + 1 that each message matched
	)
	post := func(tagged bool) error {
		r := &rx{buf: make([]byte, netnsBigSize), tagged: tagged}
		ctx := nextCtx
		var err error
		if tagged {
			err = n.ep.TRecv(r.buf, nil, fabric.AddrUnspec, netnsTag, 0, ctx)
		} else {
			err = n.ep.Recv(r.buf, nil, fabric.AddrUnspec, ctx)
		}
		if err == nil {
			posted[ctx] = r
			nextCtx++
		}
		return err
	}
	ents := make([]fabric.CQEntry, 16)
	srcs := make([]fabric.Addr, 16)
	deadline := time.Now().Add(60 * time.Second)
	for received < 2*toRecv || sendsDone < sendsTotal {
		if time.Now().After(deadline) {
			t.Fatalf("rank %d: after 60 s: received %d of %d, sends completed %d of %d (got %v)",
				rank, received, 2*toRecv, sendsDone, sendsTotal, got)
		}
		for k := 0; k < 2; k++ {
			for postedKind[k] < toRecv && postedKind[k]-countKind(got, k) < window {
				if err := post(k == 1); err != nil {
					if errors.Is(err, fabric.ErrAgain) {
						break
					}
					t.Fatalf("post receive: %v", err)
				}
				postedKind[k]++
			}
		}
		// Send to each peer, both kinds, interleaved, a few at a time.
		for p := 0; p < 4; p++ {
			if p == rank {
				continue
			}
			for k := 0; k < 2; k++ {
				for i := 0; i < 4 && sent[p][k] < netnsMsgs; i++ {
					seq := sent[p][k]
					// Each send its own buffer: it is the provider's
					// until the completion.
					b := make([]byte, netnsSize(seq))
					binary.LittleEndian.PutUint32(b[0:], uint32(rank))
					binary.LittleEndian.PutUint32(b[4:], uint32(seq))
					binary.LittleEndian.PutUint32(b[8:], uint32(k))
					for j := 12; j < len(b); j++ {
						b[j] = byte(rank*31 + seq + j)
					}
					var err error
					if k == 1 {
						err = n.ep.TSend(b, nil, peers[p], netnsTag, nil)
					} else {
						err = n.ep.Send(b, nil, peers[p], nil)
					}
					if errors.Is(err, fabric.ErrAgain) {
						break
					}
					if err != nil {
						t.Fatalf("send to rank %d: %v", p, err)
					}
					sent[p][k]++
				}
			}
		}
		for {
			c, err := n.txcq.Read(ents)
			sendsDone += c
			if errors.Is(err, fabric.ErrAvail) {
				var ee fabric.CQErrEntry
				n.txcq.ReadErr(&ee)
				t.Fatalf("send error completion: %+v", ee)
			}
			if c == 0 {
				break
			}
		}
		c, err := n.rxcq.ReadFrom(ents, srcs)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			n.rxcq.ReadErr(&ee)
			t.Fatalf("receive error completion: %+v", ee)
		}
		for i := 0; i < c; i++ {
			ctx, _ := ents[i].OpContext.(int)
			r := posted[ctx]
			if r == nil {
				t.Fatalf("completion of an unknown receive %+v", ents[i])
			}
			delete(posted, ctx)
			b := r.buf[:ents[i].Len]
			if len(b) < 12 {
				t.Fatalf("short message %d bytes", len(b))
			}
			from, seq, kind := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:])), int(binary.LittleEndian.Uint32(b[8:]))
			if from < 0 || from > 3 || from == rank || kind > 1 {
				t.Fatalf("message from rank %d kind %d", from, kind)
			}
			if src, ok := byAddr[srcs[i]]; !ok || src != from {
				t.Fatalf("message of rank %d completed with source %v (rank %d, known %v)", from, srcs[i], src, ok)
			}
			if (kind == 1) != r.tagged || (kind == 1) != (ents[i].Flags&fabric.FlagTagged != 0) {
				t.Fatalf("message kind %d matched a receive tagged=%v (flags %v)", kind, r.tagged, ents[i].Flags)
			}
			// Completions may come in any order (comp_order
			// FI_ORDER_NONE), matching may not (msg_order FI_ORDER_SAS):
			// a source's messages take the receives in posting order.
			if seq < 0 || seq >= netnsMsgs || ctxOf[from][kind][seq] != 0 {
				t.Fatalf("from rank %d kind %d: message %d again or out of range", from, kind, seq)
			}
			ctxOf[from][kind][seq] = ctx + 1
			if len(b) != netnsSize(seq) {
				t.Fatalf("from rank %d message %d: %d bytes, want %d", from, seq, len(b), netnsSize(seq))
			}
			for j := 12; j < len(b); j++ {
				if b[j] != byte(from*31+seq+j) {
					t.Fatalf("from rank %d message %d: byte %d corrupt", from, seq, j)
				}
			}
			got[from][kind]++
			received++
		}
	}
	for from := range ctxOf {
		for kind := range ctxOf[from] {
			if from == rank {
				continue
			}
			for seq := 1; seq < netnsMsgs; seq++ {
				if ctxOf[from][kind][seq] <= ctxOf[from][kind][seq-1] {
					t.Fatalf("from rank %d kind %d: message %d matched receive %d, message %d receive %d (not in posting order)",
						from, kind, seq-1, ctxOf[from][kind][seq-1]-1, seq, ctxOf[from][kind][seq]-1)
				}
			}
		}
	}
	return fmt.Sprintf("rank %d received %d sent %d", rank, received, sendsDone)
}

func countKind(got [4][2]int, k int) int {
	s := 0
	for _, g := range got {
		s += g[k]
	}
	return s
}

// TestNetnsMixedJob runs the mixed job (see above). It needs root (or
// CAP_NET_ADMIN) and ip(8); elsewhere it is skipped, saying why.
func TestNetnsMixedJob(t *testing.T) {
	if os.Getenv(envNetnsNode) != "" {
		return
	}
	ns := newLnxNetns(t)
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		lines chan string
		log   []string // what next skipped (go test's output)
	}
	procs := make([]*proc, 4)
	var wg sync.WaitGroup
	for r := range procs {
		cmd := exec.Command("ip", "netns", "exec", ns.name(r/2), os.Args[0], "-test.run=^TestNetnsNode$", "-test.count=1")
		cmd.Env = append(os.Environ(), envNetnsNode+"="+strconv.Itoa(r), EnvHostID+"=", EnvDisableSHM+"=")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p := &proc{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
		procs[r] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(p.lines)
			s := bufio.NewScanner(out)
			s.Buffer(make([]byte, 64<<10), 64<<10)
			for s.Scan() {
				p.lines <- s.Text()
			}
		}()
		t.Cleanup(func() {
			stdin.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("rank %d: %v\n%s", r, err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Errorf("rank %d did not end in 10 s\n%s", r, stderr.String())
			}
			wg.Wait()
			if t.Failed() {
				for l := range p.lines {
					p.log = append(p.log, l)
				}
				t.Logf("rank %d's output:\n%s", r, strings.Join(p.log, "\n"))
			}
		})
	}
	// next returns a process's next line that is not go test's chatter.
	next := func(r int, d time.Duration) string {
		t.Helper()
		timer := time.NewTimer(d)
		defer timer.Stop()
		for {
			select {
			case l, ok := <-procs[r].lines:
				if !ok {
					t.Fatalf("rank %d ended early:\n%s", r, strings.Join(procs[r].log, "\n"))
				}
				if strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "    ") ||
					l == "FAIL" || l == "PASS" {
					procs[r].log = append(procs[r].log, l)
					continue
				}
				return l
			case <-timer.C:
				t.Fatalf("rank %d: nothing in %v:\n%s", r, d, strings.Join(procs[r].log, "\n"))
			}
		}
	}
	addrs := make([]string, 4)
	for r := range procs {
		addrs[r] = next(r, 30*time.Second)
		if _, err := hex.DecodeString(addrs[r]); err != nil || addrs[r] == "" {
			t.Fatalf("rank %d: address line %q", r, addrs[r])
		}
	}
	for _, p := range procs {
		if _, err := io.WriteString(p.stdin, strings.Join(addrs, ",")+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	for r := range procs {
		if l := next(r, 90*time.Second); !strings.HasPrefix(l, "done ") {
			t.Fatalf("rank %d: %q, want done", r, l)
		} else {
			t.Log(l)
		}
	}
	for _, p := range procs {
		io.WriteString(p.stdin, "exit\n")
	}
}

// lnxNetns is the two network namespaces of TestNetnsMixedJob.
type lnxNetns struct{ prefix string }

func (n *lnxNetns) name(i int) string { return n.prefix + strconv.Itoa(i) }

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// newLnxNetns creates namespaces <prefix>0 (10.78.0.1) and <prefix>1
// (10.78.0.2) joined by a veth pair; they are deleted at cleanup, also
// when the test fails. It skips when namespaces cannot be created.
func newLnxNetns(t *testing.T) *lnxNetns {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("network namespaces cannot be created here: %v", err)
	}
	n := &lnxNetns{prefix: fmt.Sprintf("gflnx%d-", os.Getpid()%100000)}
	if err := ipCmd("netns", "add", n.name(0)); err != nil {
		t.Skipf("network namespaces cannot be created here: %v", err)
	}
	t.Cleanup(func() {
		ipCmd("netns", "del", n.name(0))
		ipCmd("netns", "del", n.name(1))
	})
	must := func(args ...string) {
		t.Helper()
		if err := ipCmd(args...); err != nil {
			t.Fatal(err)
		}
	}
	must("netns", "add", n.name(1))
	v0, v1 := n.prefix+"v0", n.prefix+"v1"
	must("link", "add", v0, "netns", n.name(0), "type", "veth", "peer", "name", v1, "netns", n.name(1))
	for i, v := range []string{v0, v1} {
		must("-n", n.name(i), "addr", "add", fmt.Sprintf("10.78.0.%d/24", i+1), "dev", v)
		must("-n", n.name(i), "link", "set", v, "up")
		must("-n", n.name(i), "link", "set", "lo", "up")
	}
	return n
}
