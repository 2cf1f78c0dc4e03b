package fabtest

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// processCases lists the cross-process behaviours, in the order they run.
var processCases = []testCase{
	{"process/buffered_recv_from_separate_process", processBufferedRecvFromSeparateProcess},
	{"process/msg_pingpong_with_separate_process", processMsgPingpongWithSeparateProcess},
	{"process/pingpong_with_separate_process", processPingpongWithSeparateProcess},
	{"process/wait_set_pingpong_with_separate_process", processWaitSetPingpong},
	{"process/scalable_ep_contexts_with_separate_process", processSEPContexts},  // fi_scalable_ep.go
	{"process/stx_endpoints_with_separate_process", processSTXEndpoints},        // process_stx.go
	{"process/stx_msg_endpoints_with_separate_process", processSTXMsgEndpoints}, // process_stx.go
}

func processMsgPingpongWithSeparateProcess(t *testing.T, tg Target) {
	msgOnly(t, tg)
	l := tg.listen(t, envOpts{})
	const iters = 50
	wait := startHelper(t, tg, "msg-echo", l.name, iters)
	b := tg.accept(t, l, envOpts{}, nil)
	ev, ee := waitEvent(t, b.eq)
	if ee != nil || ev.Event != fabric.EventConnected {
		t.Fatalf("accept: %+v %+v", ev, ee)
	}
	buf := make([]byte, 2048)
	for i := 0; i < iters; i++ {
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		msg := pattern(make([]byte, 1+i*29), i)
		retry(t, "send", func() error { return b.ep.Send(msg, nil, fabric.AddrUnspec, nil) }, b.txcq)
		waitCQ(t, b.txcq)
		got, ee := waitCQ(t, b.rxcq, b.txcq)
		if ee != nil || !bytes.Equal(buf[:got.Len], msg) {
			t.Fatalf("echo %d: %+v %+v", i, got, ee)
		}
	}
	if err := b.ep.Shutdown(0); err != nil {
		t.Fatal(err)
	}
	wait()
}

func processPingpongWithSeparateProcess(t *testing.T, tg Target) { pingpongProcess(t, tg, false) }

// processWaitSetPingpong is the pingpong with both CQs in a wait set
// (fi_poll(3)): every arrival from the other process is waited for with
// fi_wait on the set.
func processWaitSetPingpong(t *testing.T, tg Target) { pingpongProcess(t, tg, true) }

// waitSetRecv waits on e's wait set until e.rxcq holds a completion and
// returns it, draining e.txcq meanwhile; it fails after the bound.
func waitSetRecv(t testing.TB, e *env) (fabric.CQEntry, *fabric.CQErrEntry) {
	t.Helper()
	deadline := time.Now().Add(scaled(10 * time.Second))
	ent := make([]fabric.CQEntry, 1)
	for time.Now().Before(deadline) {
		err := e.ws.Wait(scaled(time.Second))
		if err != nil && !errors.Is(err, fabric.ErrTimedOut) {
			t.Fatalf("fi_wait: %v", err)
		}
		for {
			if _, err := e.txcq.Read(ent); err != nil {
				break
			}
		}
		n, err := e.rxcq.Read(ent)
		if n == 1 {
			return ent[0], nil
		}
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			e.rxcq.ReadErr(&ee)
			return fabric.CQEntry{}, &ee
		}
	}
	t.Fatal("fi_wait: no receive completion within the bound")
	return fabric.CQEntry{}, nil
}

func pingpongProcess(t *testing.T, tg Target, waitSet bool) {
	needsProcesses(t, tg)
	connectionless(t, tg)
	e := tg.open(t, envOpts{waitSet: waitSet})
	recv := func() (fabric.CQEntry, *fabric.CQErrEntry) {
		if waitSet {
			return waitSetRecv(t, e)
		}
		return waitCQ(t, e.rxcq, e.txcq)
	}
	buf := make([]byte, 2048)
	if err := e.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	const iters = 50
	ctx, cancel := context.WithTimeout(context.Background(), scaled(30*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFabtestHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		helperEnv+"=echo",
		"FABTEST_PROVIDER="+tg.Provider,
		"FABTEST_EPTYPE="+strconv.Itoa(int(tg.EPType)),
		"FABTEST_NODE="+tg.node(),
		"FABTEST_PEER="+hex.EncodeToString(e.addr),
		"FABTEST_ITERS="+strconv.Itoa(iters))
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
				t.Errorf("peer process: %v\n%s", err, out.String())
			}
		case <-time.After(scaled(10 * time.Second)):
			cmd.Process.Kill()
			t.Errorf("peer process did not exit\n%s", out.String())
		}
	}()
	got, ee := recv()
	if ee != nil {
		t.Fatalf("name message: %+v", ee)
	}
	dst := e.insert(append([]byte(nil), buf[:got.Len]...))
	for i := 0; i < iters; i++ {
		if err := e.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		msg := pattern(make([]byte, 1+i*17), i)
		retry(t, "send", func() error { return e.ep.Send(msg, nil, dst, nil) }, e.txcq)
		if !waitSet {
			waitCQ(t, e.txcq)
		}
		got, ee := recv()
		if ee != nil || !bytes.Equal(buf[:got.Len], msg) {
			t.Fatalf("echo %d: %+v %+v", i, got, ee)
		}
	}
}

const helperEnv = "FABTEST_HELPER"

// needsProcesses skips a case that needs a peer in another process when
// the target's fabric stays inside one (Target.InProcess).
func needsProcesses(t testing.TB, tg Target) {
	if tg.InProcess {
		t.Helper()
		t.Skipf("%s: the fabric does not reach other processes", tg.Provider)
	}
}

// Helper is the body of the peer process the suite starts for
// cross-process cases. A provider's test package must contain
//
//	func TestFabtestHelper(t *testing.T) { fabtest.Helper(t) }
//
// It returns immediately unless the process was started by the suite.
func Helper(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("only runs as the suite's peer process")
	}
	et, _ := strconv.Atoi(os.Getenv("FABTEST_EPTYPE"))
	tg := Target{Provider: os.Getenv("FABTEST_PROVIDER"), EPType: fabric.EPType(et), Node: os.Getenv("FABTEST_NODE")}
	peer, err := hex.DecodeString(os.Getenv("FABTEST_PEER"))
	if err != nil {
		t.Fatal(err)
	}
	iters, _ := strconv.Atoi(os.Getenv("FABTEST_ITERS"))
	switch role {
	case "buffered-send":
		helperBufferedSend(t, tg, peer)
	case "echo":
		helperEcho(t, tg, peer, iters)
	case "msg-echo":
		helperMsgEcho(t, tg, peer, iters)
	case "atomic-sum":
		helperAtomicSum(t, tg, peer, iters)
	case "rma-rw":
		helperRMAReadWrite(t, tg, peer)
	case "stx-send":
		helperSTXSend(t, tg, peer, iters)
	case "sep-echo":
		helperSEPEcho(t, tg, peer, iters)
	default:
		t.Fatalf("unknown helper role %q", role)
	}
}

// helperEcho sends its own address to peer, then echoes iters messages.
func helperEcho(t *testing.T, tg Target, peer []byte, iters int) {
	e := tg.open(t, envOpts{})
	dst := e.insert(peer)
	buf := make([]byte, 2048)
	if err := e.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "send name", func() error { return e.ep.Send(e.addr, nil, dst, nil) }, e.txcq)
	waitCQ(t, e.txcq)
	echo(t, e, buf, iters, dst)
}

// echo sends each of iters messages received into buf (a receive is
// already posted there) back to dst, reposting the receive first.
func echo(t *testing.T, e *env, buf []byte, iters int, dst fabric.Addr) {
	for i := 0; i < iters; i++ {
		got, ee := waitCQ(t, e.rxcq, e.txcq)
		if ee != nil {
			t.Fatalf("echo recv: %+v", ee)
		}
		msg := append([]byte(nil), buf[:got.Len]...)
		if err := e.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		retry(t, "echo", func() error { return e.ep.Send(msg, nil, dst, nil) }, e.txcq)
		waitCQ(t, e.txcq, e.rxcq)
	}
}

// helperMsgEcho connects to the passive endpoint at peer, then echoes
// iters messages.
func helperMsgEcho(t *testing.T, tg Target, peer []byte, iters int) {
	e := tg.open(t, envOpts{deferConn: true})
	buf := make([]byte, 2048)
	if err := e.ep.Connect(peer, []byte("child")); err != nil {
		t.Fatal(err)
	}
	ev, ee := waitEvent(t, e.eq)
	if ee != nil || ev.Event != fabric.EventConnected {
		t.Fatalf("connect: %+v %+v", ev, ee)
	}
	if err := e.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	echo(t, e, buf, iters, fabric.AddrUnspec)
	// Wait for the parent to shut the connection down.
	ev, ee = waitEvent(t, e.eq)
	if ee != nil || ev.Event != fabric.EventShutdown {
		t.Fatalf("want FI_SHUTDOWN from the parent, got %+v %+v", ev, ee)
	}
}

// startHelper starts this test binary as the suite's peer process; wait
// waits (bounded) for it to exit and reports its failure.
func startHelper(t *testing.T, tg Target, role string, peer []byte, iters int) (wait func()) {
	t.Helper()
	h := spawnHelper(t, tg, role, peer, iters)
	return func() {
		select {
		case err := <-h.done:
			h.report(t, err)
		case <-time.After(scaled(10 * time.Second)):
			h.kill(t)
		}
	}
}

// helperProc is a running peer process.
type helperProc struct {
	done   chan error // receives the exit status once
	out    *bytes.Buffer
	cmd    *exec.Cmd
	cancel context.CancelFunc
}

// spawnHelper starts this test binary as the suite's peer process in role
// and returns without waiting; its done channel delivers the exit status.
// The process is killed after 30 s (scaled) at the latest.
func spawnHelper(t *testing.T, tg Target, role string, peer []byte, iters int) *helperProc {
	t.Helper()
	needsProcesses(t, tg)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(30*time.Second))
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFabtestHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		helperEnv+"="+role,
		"FABTEST_PROVIDER="+tg.Provider,
		"FABTEST_EPTYPE="+strconv.Itoa(int(tg.EPType)),
		"FABTEST_NODE="+tg.node(),
		"FABTEST_PEER="+hex.EncodeToString(peer),
		"FABTEST_ITERS="+strconv.Itoa(iters))
	out := new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	h := &helperProc{done: make(chan error, 1), out: out, cmd: cmd, cancel: cancel}
	go func() { h.done <- cmd.Wait() }()
	return h
}

// report records the exit status err (from done) of the process.
func (h *helperProc) report(t testing.TB, err error) {
	t.Helper()
	h.cancel()
	if err != nil {
		t.Errorf("peer process: %v\n%s", err, h.out.String())
	}
}

// kill ends a process that did not exit in time and fails the test.
func (h *helperProc) kill(t testing.TB) {
	t.Helper()
	h.cmd.Process.Kill()
	<-h.done
	h.cancel()
	t.Errorf("peer process did not exit\n%s", h.out.String())
}
