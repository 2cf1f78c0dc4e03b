package tcp

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/eq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// helperMain is the peer process of TestPeerProcessKilled (TestMain runs
// it when TCP_TEST_HELPER is set): it connects to the listener named in
// TCP_TEST_HELPER_PEER, starts sending a 64 MiB message, says "sending"
// and keeps progressing until it is killed.
func helperMain() int {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "helper: %s: %v\n", what, err)
		return 1
	}
	peer, err := hex.DecodeString(os.Getenv("TCP_TEST_HELPER_PEER"))
	if err != nil {
		return fail("peer", err)
	}
	os.Setenv(envIface, "lo")
	infos, err := tcpProvider{}.GetInfo(provider.APIVersion, "", "", 0,
		&provider.Info{AddrFormat: provider.SockAddrIn})
	if err != nil {
		return fail("getinfo", err)
	}
	ep, err := newEndpoint(infos[0])
	if err != nil {
		return fail("endpoint", err)
	}
	txcq, _ := cq.New(cq.Config{})
	q, _ := eq.New(eq.Config{WaitObj: provider.WaitUnspec})
	q.AddSource(ep)
	txcq.AddSource(ep)
	rq := srx.New(srx.Config{})
	if err := ep.Enable(&provider.Resources{TxCQ: txcq, RxCQ: txcq, EQ: q, SRX: rq}); err != nil {
		return fail("enable", err)
	}
	if err := ep.Connect(peer, []byte("child")); err != nil {
		return fail("connect", err)
	}
	if ev, err := q.SRead(0, time.Now().Add(5*time.Second), nil); err != nil || ev.Event != provider.EventConnected {
		return fail("connected", err)
	}
	if err := ep.Send(provider.Msg{Buf: make([]byte, 64<<20), Flags: provider.FlagCompletion}); err != nil {
		return fail("send", err)
	}
	fmt.Println("sending")
	// Write the first 2 MiB of the message (while the parent reads), then
	// stop progressing: the parent must find the transfer in the middle
	// when it kills us. (A helper that kept writing could, on a loaded
	// machine, see the whole message received in one of the parent's
	// progress calls and completed before the parent looked at it.)
	var e [4]provider.CQEntry
	for deadline := time.Now().Add(10 * time.Second); helperSent(ep) < 2<<20 && time.Now().Before(deadline); {
		txcq.Read(e[:])
	}
	// A collection now must not end the connection: ep is kept alive
	// below (its socket is closed by a cleanup once ep is unreachable,
	// which failed this test on loaded machines until it was kept).
	runtime.GC()
	for {
		time.Sleep(time.Hour) // until the parent kills us
		runtime.KeepAlive(ep)
	}
}

// helperSent is the number of bytes of the oldest posted operation's frame
// written to the socket so far.
func helperSent(ep *endpoint) int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.tx.head == ep.tx.tail {
		return 0
	}
	return ep.tx.at(ep.tx.head).sent
}

// TestPeerProcessKilled: the peer process is killed (SIGKILL) in the
// middle of a 64 MiB message while our delivery-complete send waits for
// its ACK: both complete in error, FI_SHUTDOWN is reported once, later
// posts fail.
func TestPeerProcessKilled(t *testing.T) {
	info := loInfo(t, opts{})
	l := listen(t, info)
	cmd, out := testutil.Spawn(t, "^$", "TCP_TEST_HELPER=1", "TCP_TEST_HELPER_PEER="+hex.EncodeToString(l.name))
	ev := expectEvent(t, l.eq, provider.EventConnReq)
	if string(ev.CMData) != "child" {
		t.Fatalf("connreq data %q", ev.CMData)
	}
	n := newNode(t, ev.Info, opts{})
	got := make([]byte, 64<<20)
	n.post(got, "recv")
	if err := n.ep.Accept(nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, n.eq, provider.EventConnected)
	n.send([]byte("needs-an-ack"), "dc", provider.FlagDeliveryComplete)
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "sending" {
		t.Fatalf("helper: %q %v", line, err)
	}
	// The bound is generous: on a loaded machine (CI runs packages in
	// parallel, several of them busy-polling) the helper may get little
	// CPU; the first megabyte usually takes milliseconds.
	start := time.Now()
	deadline := start.Add(4 * waitLimit)
	for n.ep.rx.placed < 1<<20 && n.ep.rx.st != rxDead && time.Now().Before(deadline) {
		n.ep.Progress() // at most 2 MiB and what the socket buffers hold arrive
	}
	if n.ep.rx.placed == 0 {
		n.ep.mu.Lock()
		st, left, kind, hneed := n.ep.rx.st, n.ep.rx.left, n.ep.rx.kind, n.ep.rx.hneed
		n.ep.mu.Unlock()
		alive := cmd.ProcessState == nil && cmd.Process.Signal(syscall.Signal(0)) == nil
		t.Fatalf("no data arrived from the helper in %v (helper alive: %v; receive state %d, kind %d, header need %d, payload left %d, connection error %v)",
			time.Since(start).Round(time.Millisecond), alive, st, kind, hneed, left, n.ep.downErr)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	ee := expectErr(t, n.rxCQ)
	if ee.OpContext != "recv" {
		t.Fatalf("receive error %+v", ee)
	}
	ee = expectErr(t, n.txCQ)
	if ee.OpContext != "dc" {
		t.Fatalf("send error %+v", ee)
	}
	expectEvent(t, n.eq, provider.EventShutdown)
	expectNoEvent(t, n.eq, 30*time.Millisecond)
	if err := n.ep.Send(provider.Msg{Buf: []byte("late"), Flags: provider.FlagCompletion}); err != provider.ENOTCONN {
		t.Fatalf("send after the peer died: %v", err)
	}
}
