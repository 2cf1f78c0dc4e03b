package tcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// buildOps compiles testdata/ops.c against the system libfabric.
func buildOps(t *testing.T) string {
	t.Helper()
	bin, err := compileOps(t)
	testutil.InteropCheck(t, "the C interop peer (gcc, libfabric-dev)", err)
	return bin
}

func compileOps(t *testing.T) (string, error) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat("/usr/include/rdma/fabric.h"); err != nil {
		return "", err
	}
	bin := filepath.Join(t.TempDir(), "ops")
	out, err := exec.Command(cc, "-O1", "-o", bin, "testdata/ops.c", "-lfabric").CombinedOutput()
	if err != nil {
		t.Logf("%s", out)
		return "", err
	}
	return bin, nil
}

// cPeer is the running C program.
type cPeer struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *bufio.Reader
	errb bytes.Buffer
}

func startC(t *testing.T, bin string, args ...string) *cPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	p := &cPeer{t: t, cmd: exec.CommandContext(ctx, bin, args...)}
	p.cmd.Env = append(os.Environ(), "FI_TCP_IFACE=lo", "FI_PROVIDER=tcp")
	p.cmd.Stderr = &p.errb
	so, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.out = bufio.NewReader(so)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

func (p *cPeer) line() string {
	p.t.Helper()
	s, err := p.out.ReadString('\n')
	if err != nil {
		p.t.Fatalf("C peer: %v; stderr:\n%s", err, p.errb.String())
	}
	return strings.TrimSpace(s)
}

func (p *cPeer) name() []byte {
	p.t.Helper()
	l := p.line()
	b, err := hex.DecodeString(strings.TrimPrefix(l, "NAME "))
	if !strings.HasPrefix(l, "NAME ") || err != nil {
		p.t.Fatalf("C peer name line %q", l)
	}
	return b
}

func (p *cPeer) finish() {
	p.t.Helper()
	if l := p.line(); l != "OK" {
		p.t.Fatalf("C peer said %q; stderr:\n%s", l, p.errb.String())
	}
	if err := p.cmd.Wait(); err != nil {
		p.t.Fatalf("C peer: %v; stderr:\n%s", err, p.errb.String())
	}
}

// TestInteropOpsGoClient: a Go client against a C libfabric server: cm
// data, send, senddata, a 200-byte send, delivery complete (the C side
// ACKs), write, writedata (C's target completion), 2-region write, read;
// then the C side sends, senddata, a message larger than our receive
// (FI_ETRUNC, and our connection stays usable), reads and writes our
// memory, writedata; finally we send more than C's receive and C drops
// the connection (FI_SHUTDOWN here).
func TestInteropOpsGoClient(t *testing.T) {
	bin := buildOps(t)
	c := startC(t, bin, "server")
	name := c.name()
	info := loInfo(t, opts{})
	n := newNode(t, info, opts{})
	mem := make([]byte, 64)
	copy(mem, "go-memory-contents")
	if _, err := n.mr.Register([][]byte{mem}, rmaAccess, 0, 0xbeef, true); err != nil {
		t.Fatal(err)
	}
	r1, r2, r3, r4, r5 := make([]byte, 64), make([]byte, 64), make([]byte, 50), make([]byte, 64), make([]byte, 64)
	for i, b := range [][]byte{r1, r2, r3, r4, r5} {
		n.post(b, i+1)
	}
	if err := n.ep.Connect(name, []byte("go-conn-req")); err != nil {
		t.Fatal(err)
	}
	if ev := expectEvent(t, n.eq, provider.EventConnected); string(ev.CMData) != "c-accept-data" {
		t.Fatalf("accept data %q", ev.CMData)
	}
	send := func(m provider.Msg, ctx any, flags provider.Flags) {
		t.Helper()
		m.Context, m.Flags = ctx, m.Flags|flags
		if err := n.ep.Send(m); err != nil {
			t.Fatal(err)
		}
		expectComp(t, n.txCQ, ctx, provider.FlagSend|provider.FlagMsg)
	}
	send(provider.Msg{Buf: []byte("0123456789abcdef")}, "s1", provider.FlagCompletion)
	send(provider.Msg{Buf: []byte("0123456789abcdef"), Data: 0x1122334455667788}, "s2",
		provider.FlagCompletion|provider.FlagRemoteCQData)
	send(provider.Msg{Buf: pattern(make([]byte, 200), 0)}, "s3", provider.FlagCompletion)
	send(provider.Msg{Buf: []byte("01234567")}, "s4", provider.FlagCompletion|provider.FlagDeliveryComplete)
	rma := func(write bool, m provider.Msg, ctx any) {
		t.Helper()
		m.Context, m.Flags = ctx, m.Flags|provider.FlagCompletion
		var err error
		want := provider.FlagRMA | provider.FlagRead
		if write {
			err, want = n.ep.Write(m), provider.FlagRMA|provider.FlagWrite
		} else {
			err = n.ep.Read(m)
		}
		if err != nil {
			t.Fatal(err)
		}
		expectComp(t, n.txCQ, ctx, want)
	}
	rma(true, provider.Msg{Buf: []byte("0123456789abcdef"), RMAOne: provider.RMAIOV{Addr: 64, Len: 16, Key: 0xc0de}}, "w1")
	rma(true, provider.Msg{Buf: []byte("01234567"), Data: 0xaabbccdd, Flags: provider.FlagRemoteCQData,
		RMAOne: provider.RMAIOV{Addr: 96, Len: 8, Key: 0xc0de}}, "w2")
	rma(true, provider.Msg{IOV: [][]byte{[]byte("012345"), []byte("67")}, Flags: provider.FlagDeliveryComplete,
		RMA: []provider.RMAIOV{{Addr: 0x80, Len: 4, Key: 0xc0de}, {Addr: 0xa0, Len: 4, Key: 0xc0de}}}, "w3")
	rb := make([]byte, 16)
	rma(false, provider.Msg{Buf: rb, RMAOne: provider.RMAIOV{Addr: 0, Len: 16, Key: 0xc0de}}, "rd")
	if string(rb) != "remote-memory-co" {
		t.Fatalf("read from C: %q", rb)
	}
	send(provider.Msg{Buf: []byte("check")}, "s5", provider.FlagCompletion)

	e := expectComp(t, n.rxCQ, 1, provider.FlagRecv|provider.FlagMsg)
	if string(r1[:e.Len]) != "server-to-client" {
		t.Fatalf("r1 %q", r1[:e.Len])
	}
	e = expectComp(t, n.rxCQ, 2, provider.FlagRecv|provider.FlagMsg|provider.FlagRemoteCQData)
	if string(r2[:e.Len]) != "c-data" || e.Data != 0x55 {
		t.Fatalf("r2 %q %x", r2[:e.Len], e.Data)
	}
	ee := expectErr(t, n.rxCQ)
	if ee.Err != provider.ETRUNC || ee.OpContext != 3 || ee.Len != 50 || ee.Olen != 50 || r3[49] != 49 {
		t.Fatalf("truncation %+v", ee)
	}
	e = expectComp(t, n.rxCQ, 4, provider.FlagRecv|provider.FlagMsg)
	if string(r4[:e.Len]) != "after-trunc" {
		t.Fatalf("r4 %q", r4[:e.Len])
	}
	e = expectComp(t, n.rxCQ, nil, provider.FlagRMA|provider.FlagRemoteWrite|provider.FlagRemoteCQData)
	if e.Data != 0x77 || e.Len != 4 {
		t.Fatalf("writedata target completion %+v", e)
	}
	e = expectComp(t, n.rxCQ, 5, provider.FlagRecv|provider.FlagMsg)
	if string(r5[:e.Len]) != "sync" {
		t.Fatalf("r5 %q", r5[:e.Len])
	}
	if string(mem[32:40]) != "c-writes" || string(mem[48:52]) != "wdat" {
		t.Fatalf("C's writes: %q %q", mem[32:40], mem[48:52])
	}
	// 100 bytes into C's 50-byte receive: libfabric drops the connection.
	send(provider.Msg{Buf: make([]byte, 100)}, "s6", provider.FlagCompletion)
	expectEvent(t, n.eq, provider.EventShutdown)
	c.finish()
}

// TestInteropOpsGoServer: a C libfabric client against a Go listener: cm
// data both ways, send, senddata, write, writedata, read of our memory,
// a transmit-complete send (we ACK), our reply, C's fi_shutdown.
func TestInteropOpsGoServer(t *testing.T) {
	bin := buildOps(t)
	info := loInfo(t, opts{})
	l := listen(t, info)
	c := startC(t, bin, "client", hex.EncodeToString(l.name))
	ev := expectEvent(t, l.eq, provider.EventConnReq)
	if string(ev.CMData) != "go-conn-req" {
		t.Fatalf("connreq data %q", ev.CMData)
	}
	n := newNode(t, ev.Info, opts{})
	mem := make([]byte, 64)
	copy(mem, "go-memory-contents")
	if _, err := n.mr.Register([][]byte{mem}, rmaAccess, 0, 0xbeef, true); err != nil {
		t.Fatal(err)
	}
	r1, r2, r3 := make([]byte, 64), make([]byte, 64), make([]byte, 64)
	for i, b := range [][]byte{r1, r2, r3} {
		n.post(b, i+1)
	}
	if err := n.ep.Accept([]byte("go-accept-data")); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, n.eq, provider.EventConnected)
	e := expectComp(t, n.rxCQ, 1, provider.FlagRecv|provider.FlagMsg)
	if string(r1[:e.Len]) != "c2s-message" {
		t.Fatalf("r1 %q", r1[:e.Len])
	}
	e = expectComp(t, n.rxCQ, 2, provider.FlagRecv|provider.FlagMsg|provider.FlagRemoteCQData)
	if string(r2[:e.Len]) != "c2s-data" || e.Data != 0x99 {
		t.Fatalf("r2 %q %x", r2[:e.Len], e.Data)
	}
	e = expectComp(t, n.rxCQ, nil, provider.FlagRMA|provider.FlagRemoteWrite|provider.FlagRemoteCQData)
	if e.Data != 0x66 {
		t.Fatalf("writedata %+v", e)
	}
	e = expectComp(t, n.rxCQ, 3, provider.FlagRecv|provider.FlagMsg)
	if string(r3[:e.Len]) != "done" {
		t.Fatalf("r3 %q", r3[:e.Len])
	}
	if string(mem[8:11]) != "c-w" || string(mem[16:19]) != "cwd" {
		t.Fatalf("C's writes %q %q", mem[8:11], mem[16:19])
	}
	n.send([]byte("bye"), "bye", 0)
	expectComp(t, n.txCQ, "bye", provider.FlagSend|provider.FlagMsg)
	expectEvent(t, n.eq, provider.EventShutdown)
	c.finish()
}

// TestInteropReject: rejects with data in both directions.
func TestInteropReject(t *testing.T) {
	bin := buildOps(t)
	t.Run("c-rejects", func(t *testing.T) {
		c := startC(t, bin, "server-reject")
		name := c.name()
		n := newNode(t, loInfo(t, opts{}), opts{})
		if err := n.ep.Connect(name, []byte("go-conn-req")); err != nil {
			t.Fatal(err)
		}
		_, ee := readEQ(t, n.eq)
		if ee == nil || ee.Err != provider.ECONNREFUSED || string(ee.ErrData) != "go-away" {
			t.Fatalf("reject %+v", ee)
		}
		c.finish()
	})
	t.Run("go-rejects", func(t *testing.T) {
		l := listen(t, loInfo(t, opts{}))
		c := startC(t, bin, "client-reject", hex.EncodeToString(l.name))
		ev := expectEvent(t, l.eq, provider.EventConnReq)
		if err := l.p.Reject(ev.Info.Handle, []byte("go-reject-data")); err != nil {
			t.Fatal(err)
		}
		c.finish()
	})
}
