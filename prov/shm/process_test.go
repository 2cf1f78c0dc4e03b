package shm_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

const childEnv = "SHM_TEST_CHILD"

// TestCrossProcessTaggedAllSizes: a separate process (this test binary
// re-executed) sends tagged messages of every protocol size, some before
// the receives are posted, and echoes back what it receives; both sides
// check every byte.
func TestCrossProcessTaggedAllSizes(t *testing.T) {
	a := newNode(t, nodeOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+hex.EncodeToString(a.addr))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("child: %v\n%s", err, out.String())
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("child did not exit\n%s", out.String())
		}
	}()
	// The child's name arrives first (untagged).
	name := make([]byte, 64)
	if err := a.ep.Recv(name, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	got, ee := wait(t, a.rxcq, a.txcq)
	if ee != nil {
		t.Fatalf("name: %+v", ee)
	}
	peer := a.insert(append([]byte(nil), name[:got.Len]...))
	// The child sends every size without waiting: let the early ones
	// queue as unexpected before receiving.
	expectNone(t, a.rxcq, 50*time.Millisecond)
	for i, size := range boundarySizes {
		buf := make([]byte, size)
		if err := a.ep.TRecv(buf, nil, fabric.AddrUnspec, uint64(i), 0, nil); err != nil {
			t.Fatal(err)
		}
		got, ee := wait(t, a.rxcq, a.txcq)
		if ee != nil || got.Len != uint64(size) || got.Tag != uint64(i) || !bytes.Equal(buf, pattern(size, i)) {
			t.Fatalf("from child: size %d: %+v %+v", size, got, ee)
		}
		msg := pattern(size, i+1)
		retry(t, "tsend", func() error { return a.ep.TSend(msg, nil, peer, uint64(i), nil) }, a.txcq, a.rxcq)
		if _, ee := wait(t, a.txcq, a.rxcq); ee != nil {
			t.Fatalf("to child: size %d: %+v", size, ee)
		}
	}
}

// TestChildProcess is the child of TestCrossProcessTaggedAllSizes.
func TestChildProcess(t *testing.T) {
	parent := os.Getenv(childEnv)
	if parent == "" {
		t.Skip("runs only as the child of TestCrossProcessTaggedAllSizes")
	}
	addr, err := hex.DecodeString(parent)
	if err != nil {
		t.Fatal(err)
	}
	c := newNode(t, nodeOpts{})
	p := c.insert(addr)
	retry(t, "name", func() error { return c.ep.Send(c.addr, nil, p, nil) }, c.txcq)
	bufs := make([][]byte, len(boundarySizes))
	for i, size := range boundarySizes {
		bufs[i] = make([]byte, size)
		if err := c.ep.TRecv(bufs[i], nil, fabric.AddrUnspec, uint64(i), 0, i); err != nil {
			t.Fatal(err)
		}
	}
	for i, size := range boundarySizes {
		msg := pattern(size, i)
		retry(t, "tsend", func() error { return c.ep.TSend(msg, nil, p, uint64(i), nil) }, c.txcq, c.rxcq)
	}
	for i, size := range boundarySizes {
		got, ee := wait(t, c.rxcq, c.txcq)
		if ee != nil || got.OpContext != i || !bytes.Equal(bufs[i], pattern(size, i+1)) {
			t.Fatalf("from parent: size %d: %+v %+v", size, got, ee)
		}
	}
	// Drain the send completions.
	for range len(boundarySizes) + 1 {
		if _, ee := wait(t, c.txcq); ee != nil {
			t.Fatalf("send completion: %+v", ee)
		}
	}
}
