package shm_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// deathChildEnv makes the test binary run TestDeathChild as the peer of
// the death tests: its value is "<mode> <parent name in hex>".
const deathChildEnv = "SHM_DEATH_CHILD"

// deathMsg is larger than a region's bounce buffers (Bufs*BufSize), so a
// transfer stalls half-way when its peer stops progressing.
const deathMsg = 8 << 20

// startDeathChild runs TestDeathChild in mode and returns it with its
// output lines; the child is killed and reaped at cleanup.
func startDeathChild(t *testing.T, mode string, parent []byte, env ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDeathChild$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), deathChildEnv+"="+mode+" "+hex.EncodeToString(parent)), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	lines := make(chan string, 8)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			if l, ok := strings.CutPrefix(s.Text(), "child: "); ok {
				lines <- l
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		cancel()
	})
	return cmd, lines
}

func childLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("child ended")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("child said nothing within 10s")
	}
	return ""
}

// TestPeerKilledMidTransfer: a peer process is killed with SIGKILL while
// an 8 MiB message goes to it (stalled: it stopped draining its queue, and
// our CMA request waits for its answer) and another comes from it
// (segmented, stalled half-way: it stopped pushing). Both our
// operations complete with FI_ECONNRESET within 1 s of the kill, a later
// send to it fails at once, and its region file is gone.
func TestPeerKilledMidTransfer(t *testing.T) {
	a := newNode(t, nodeOpts{})
	// Segments both ways (the child refuses our CMA request and sends
	// segmented), so both transfers stall half-way when the child stops
	// progressing.
	cmd, lines := startDeathChild(t, "stall", a.addr, "FI_SHM_DISABLE_CMA=1")
	name := make([]byte, 64)
	if err := a.ep.Recv(name, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	got, ee := wait(t, a.rxcq, a.txcq)
	if ee != nil {
		t.Fatalf("child name: %+v", ee)
	}
	name = append([]byte(nil), name[:got.Len]...)
	peer := a.insert(name)
	in := make([]byte, deathMsg)
	if err := a.ep.TRecv(in, nil, fabric.AddrUnspec, 1, 0, "recv"); err != nil {
		t.Fatal(err)
	}
	// The receive is posted: the child may send (the data then goes
	// straight into in, where we can see it arrive).
	retry(t, "go", func() error { return a.ep.Send([]byte("go"), nil, peer, "go") }, a.txcq)
	if _, ee := wait(t, a.txcq, a.rxcq); ee != nil {
		t.Fatalf("go: %+v", ee)
	}
	if err := a.ep.TSend(pattern(deathMsg, 2), nil, peer, 2, "send"); err != nil {
		t.Fatal(err)
	}
	if l := childLine(t, lines); l != "stalled" {
		t.Fatalf("child: %q", l)
	}
	// Both transfers run until they stall; nothing completes.
	expectNone(t, a.rxcq, 50*time.Millisecond, a.txcq)
	expectNone(t, a.txcq, 10*time.Millisecond, a.rxcq)
	if in[0] == 0 && in[1] == 0 && in[100] == 0 {
		t.Fatal("no data arrived from the child before the kill")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	for _, c := range []struct {
		cq   *fabric.CQ
		ctx  string
		peer *fabric.CQ
	}{{a.txcq, "send", a.rxcq}, {a.rxcq, "recv", a.txcq}} {
		_, ee := wait(t, c.cq, c.peer)
		if ee == nil || ee.OpContext != c.ctx || !errors.Is(ee.Err, fabric.ErrConnReset) {
			t.Fatalf("%s: completion %+v, want FI_ECONNRESET", c.ctx, ee)
		}
		if d := time.Since(killed); d > time.Second {
			t.Fatalf("%s failed %v after the kill, want < 1s", c.ctx, d)
		}
		t.Logf("%s: FI_ECONNRESET %v after the kill", c.ctx, time.Since(killed).Round(time.Millisecond))
	}
	// A new send to the dead peer fails at once.
	if err := a.ep.TSend([]byte("late"), nil, peer, 3, "late"); err != nil && !errors.Is(err, fabric.ErrConnReset) {
		t.Fatal(err)
	} else if err == nil {
		if _, ee := wait(t, a.txcq, a.rxcq); ee == nil || !errors.Is(ee.Err, fabric.ErrConnReset) {
			t.Fatalf("send after the death: %+v, want FI_ECONNRESET", ee)
		}
	}
	file := strings.TrimPrefix(strings.TrimRight(string(name), "\x00"), "fi_shm://")
	if _, err := os.Stat("/dev/shm/" + file); !os.IsNotExist(err) {
		t.Fatalf("the dead peer's region %s is still there: %v", file, err)
	}
}

// TestRMAPeerKilled: an RMA read waiting for its answer from a peer
// process that stopped progressing completes with FI_ECONNRESET within
// 1 s of the peer's kill.
func TestRMAPeerKilled(t *testing.T) {
	a := newNode(t, nodeOpts{caps: fabric.CapRMA})
	cmd, lines := startDeathChild(t, "mr", a.addr)
	var addr, key uint64
	if l := childLine(t, lines); func() bool { _, err := fmt.Sscanf(l, "%x %x", &addr, &key); return err != nil }() {
		t.Fatalf("child: %q", l)
	}
	name := make([]byte, 64)
	if err := a.ep.Recv(name, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	got, ee := wait(t, a.rxcq, a.txcq)
	if ee != nil {
		t.Fatalf("child name: %+v", ee)
	}
	peer := a.insert(append([]byte(nil), name[:got.Len]...))
	buf := make([]byte, 1<<20)
	retry(t, "read", func() error { return a.ep.RMARead(buf, nil, peer, addr, key, "read") }, a.txcq)
	expectNone(t, a.txcq, 50*time.Millisecond) // the child does not answer
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	_, ee = wait(t, a.txcq, a.rxcq)
	if ee == nil || ee.OpContext != "read" || !errors.Is(ee.Err, fabric.ErrConnReset) {
		t.Fatalf("read: %+v, want FI_ECONNRESET", ee)
	}
	if d := time.Since(killed); d > time.Second {
		t.Fatalf("read failed %v after the kill, want < 1s", d)
	}
	t.Logf("read: FI_ECONNRESET %v after the kill", time.Since(killed).Round(time.Millisecond))
}

// TestStaleRegionRemovedAtOpen: a process killed before anyone talked to
// it leaves its region file; the next process that opens an shm fabric
// removes it.
func TestStaleRegionRemovedAtOpen(t *testing.T) {
	cmd, lines := startDeathChild(t, "name", nil)
	name := childLine(t, lines)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	file := "/dev/shm/" + strings.TrimPrefix(name, "fi_shm://")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the killed child's region is not there: %v", err)
	}
	cmd, lines = startDeathChild(t, "open", nil)
	if l := childLine(t, lines); l != "opened" {
		t.Fatalf("child: %q", l)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("the stale region %s survived the next fabric open: %v", file, err)
	}
}

// TestDeathChild is the peer process of the death tests (deathChildEnv):
//
//   - stall: posts an 8 MiB tagged receive, sends its name to the parent,
//     waits for its "go", posts an 8 MiB send to it, says "stalled" and
//     sleeps without progress until it is killed;
//   - mr: registers 1 MiB for remote reads and writes, sends its name to
//     the parent, waits for that send's completion, says its address and
//     key and sleeps without progress until it is killed;
//   - echo: receives a 1 MiB tagged message (tag 5) and sends it back
//     (tag 6), says "echoed";
//   - name: opens an endpoint, says its name, sleeps until killed;
//   - open: opens an shm fabric, says "opened", sleeps until killed.
func TestDeathChild(t *testing.T) {
	env := os.Getenv(deathChildEnv)
	if env == "" {
		t.Skip("runs only as the child of the death tests")
	}
	mode, parentHex, _ := strings.Cut(env, " ")
	switch mode {
	case "name":
		c := newNode(t, nodeOpts{})
		stalledNode = c // a collected endpoint would remove its region
		fmt.Printf("child: %s\n", strings.TrimRight(string(c.addr), "\x00"))
	case "open":
		infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, hints(nodeOpts{}))
		if err != nil {
			t.Fatal(err)
		}
		fab, err := fabric.Open(infos[0])
		if err != nil {
			t.Fatal(err)
		}
		defer fab.Close()
		fmt.Println("child: opened")
	case "mr":
		parent, err := hex.DecodeString(parentHex)
		if err != nil {
			t.Fatal(err)
		}
		c := newNode(t, nodeOpts{caps: fabric.CapRMA})
		p := c.insert(parent)
		mem := pattern(1<<20, 4)
		mr, err := c.dom.RegMR(mem, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, 0x5157, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer mr.Close()
		retry(t, "name", func() error { return c.ep.Send(c.addr, nil, p, nil) }, c.txcq)
		if _, ee := wait(t, c.txcq, c.rxcq); ee != nil {
			t.Fatalf("name: %+v", ee)
		}
		// No progress call after this line: the parent's read, posted
		// once it has read the line, must find nobody to answer it.
		stalledNode = c
		fmt.Printf("child: %x %x\n", mr.Address(), mr.Key())
	case "echo":
		parent, err := hex.DecodeString(parentHex)
		if err != nil {
			t.Fatal(err)
		}
		c := newNode(t, nodeOpts{})
		p := c.insert(parent)
		in := make([]byte, 1<<20)
		if err := c.ep.TRecv(in, nil, fabric.AddrUnspec, 5, 0, nil); err != nil {
			t.Fatal(err)
		}
		retry(t, "name", func() error { return c.ep.Send(c.addr, nil, p, nil) }, c.txcq)
		if _, ee := wait(t, c.txcq, c.rxcq); ee != nil {
			t.Fatalf("name: %+v", ee)
		}
		if got, ee := wait(t, c.rxcq, c.txcq); ee != nil || got.Len != uint64(len(in)) {
			t.Fatalf("echo receive: %+v %+v", got, ee)
		}
		retry(t, "echo", func() error { return c.ep.TSend(in, nil, p, 6, nil) }, c.txcq, c.rxcq)
		if _, ee := wait(t, c.txcq, c.rxcq); ee != nil {
			t.Fatalf("echo send: %+v", ee)
		}
		fmt.Println("child: echoed")
	case "stall":
		parent, err := hex.DecodeString(parentHex)
		if err != nil {
			t.Fatal(err)
		}
		c := newNode(t, nodeOpts{})
		p := c.insert(parent)
		goMsg := make([]byte, 8)
		if err := c.ep.Recv(goMsg, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		in := make([]byte, deathMsg)
		if err := c.ep.TRecv(in, nil, fabric.AddrUnspec, 2, 0, nil); err != nil {
			t.Fatal(err)
		}
		retry(t, "name", func() error { return c.ep.Send(c.addr, nil, p, nil) }, c.txcq)
		if _, ee := wait(t, c.rxcq, c.txcq); ee != nil {
			t.Fatalf("go: %+v", ee)
		}
		if err := c.ep.TSend(pattern(deathMsg, 1), nil, p, 1, nil); err != nil {
			t.Fatal(err)
		}
		c.txcq.Read(nil)
		stalledNode = c // kept open until the parent kills us
		fmt.Println("child: stalled")
	default:
		t.Fatalf("mode %q", mode)
	}
	time.Sleep(time.Minute)
}

// stalledNode keeps the endpoint of the stall, mr and name children
// reachable while they wait to be killed: an endpoint that is collected
// closes its region (cleanups), and the parent would see the child leave
// instead of die.
var stalledNode *node
