package tcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// Interop with the C libfabric 1.17 tools. The tests run when the tools
// are installed; with FABRIC_INTEROP=1 a missing tool is a failure (see
// testutil.InteropEnv).

func cTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	testutil.InteropCheck(t, name, err)
	return p
}

// ppAlphabet is fi_pingpong's -c data pattern: message k of a process
// has byte i = ppAlphabet[(7k+i) mod 62].
const ppAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func ppFill(b []byte, k int) {
	for i := range b {
		b[i] = ppAlphabet[(7*k+i)%len(ppAlphabet)]
	}
}

func ppCheck(b []byte, k int) bool {
	for i := range b {
		if b[i] != ppAlphabet[(7*k+i)%len(ppAlphabet)] {
			return false
		}
	}
	return true
}

// ppSizes is fi_pingpong's "-S all" list up to its 6 MiB transfer limit.
func ppSizes(max int) []int {
	var s []int
	for i := 0; ; i++ {
		p, h := 0, 1
		if i > 0 {
			p, h = 1<<i, 1<<i+1<<(i-1)
		}
		if p > max {
			break
		}
		s = append(s, p)
		if h > max {
			break
		}
		s = append(s, h)
	}
	return s
}

const ppMaxSize = 6 << 20

// ppPeer runs fi_pingpong's msg protocol over our provider: node is the
// connected endpoint, ctl the control connection.
type ppPeer struct {
	t      *testing.T
	n      *node
	ctl    net.Conn
	rbuf   []byte
	sbuf   []byte
	tx, rx int // message counters for the -c pattern
	iters  int
}

func (p *ppPeer) ctlWrite(b []byte) {
	p.t.Helper()
	if _, err := p.ctl.Write(b); err != nil {
		p.t.Fatalf("control write: %v", err)
	}
}

func (p *ppPeer) ctlRead(n int) []byte {
	p.t.Helper()
	b := make([]byte, n)
	p.ctl.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(p.ctl, b); err != nil {
		p.t.Fatalf("control read: %v", err)
	}
	return b
}

func (p *ppPeer) postRecv() { p.n.post(p.rbuf, "rx") }

func (p *ppPeer) waitRecv(size int, check bool) {
	p.t.Helper()
	e := expectComp(p.t, p.n.rxCQ, "rx", provider.FlagRecv|provider.FlagMsg)
	if e.Len != uint64(size) {
		p.t.Fatalf("received %d bytes, want %d", e.Len, size)
	}
	if check && !ppCheck(p.rbuf[:size], p.rx) {
		p.t.Fatalf("data check failed for message %d (%d bytes)", p.rx, size)
	}
	if check {
		p.rx++
	}
	p.postRecv()
}

func (p *ppPeer) sendMsg(size int) {
	p.t.Helper()
	b := p.sbuf[:size]
	ppFill(b, p.tx)
	p.tx++
	if size < InjectSize {
		for {
			err := p.n.ep.Send(provider.Msg{Buf: b, Flags: provider.FlagInject})
			if err == nil {
				return
			}
			if err != provider.EAGAIN {
				p.t.Fatalf("inject: %v", err)
			}
			p.n.ep.Progress()
		}
	}
	p.n.send(b, "tx", 0)
	expectComp(p.t, p.n.txCQ, "tx", provider.FlagSend|provider.FlagMsg)
}

// finalize is pp_finalize: send "fin\0" with FI_TRANSMIT_COMPLETE, wait
// for its completion (the peer's ACK), then for the peer's fin.
func (p *ppPeer) finalize() {
	p.t.Helper()
	p.n.send([]byte("fin\x00"), "fin", provider.FlagTransmitComplete)
	expectComp(p.t, p.n.txCQ, "fin", provider.FlagSend|provider.FlagMsg)
	expectComp(p.t, p.n.rxCQ, "rx", provider.FlagRecv|provider.FlagMsg)
}

func (p *ppPeer) runServer(sizes []int) {
	for _, size := range sizes {
		if q := p.ctlRead(2); string(q) != "q\x00" {
			p.t.Fatalf("sync %q", q)
		}
		p.ctlWrite([]byte("a\x00"))
		for i := 0; i < p.iters; i++ {
			p.waitRecv(size, true)
			p.sendMsg(size)
		}
		cnt := p.ctlRead(10)
		if n, _ := strconv.Atoi(string(bytes.TrimRight(cnt, "\x00"))); n != p.iters {
			p.t.Fatalf("client count %q", cnt)
		}
		p.ctlWrite([]byte("cnt ok\x00"))
	}
	p.finalize()
}

func (p *ppPeer) runClient(sizes []int) {
	for _, size := range sizes {
		p.ctlWrite([]byte("q\x00"))
		if a := p.ctlRead(2); string(a) != "a\x00" {
			p.t.Fatalf("sync reply %q", a)
		}
		for i := 0; i < p.iters; i++ {
			p.sendMsg(size)
			p.waitRecv(size, true)
		}
		var cnt [10]byte
		copy(cnt[:], strconv.Itoa(p.iters))
		p.ctlWrite(cnt[:])
		if ok := p.ctlRead(7); string(ok) != "cnt ok\x00" {
			p.t.Fatalf("count ack %q", ok)
		}
	}
	p.finalize()
}

// freePort returns a port that nobody binds now, outside the kernel's
// ephemeral range (testutil.FreePort).
func freePort(t *testing.T) int { return testutil.FreePort(t) }

func ppCommand(ctx context.Context, bin string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "FI_TCP_IFACE=lo", "FI_UDP_IFACE=lo", "FI_PROVIDER=tcp")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// TestInteropPingpongGoServer runs the C fi_pingpong client against a Go
// server on our provider, with -c data checks at every size of -S all.
func TestInteropPingpongGoServer(t *testing.T) {
	bin := cTool(t, "fi_pingpong")
	sizes := ppSizes(ppMaxSize)
	ctlLn, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ctlLn.Close()
	port := ctlLn.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, out := ppCommand(ctx, bin, "-p", "tcp", "-e", "msg", "-S", "all", "-I", "3", "-c",
		"-P", strconv.Itoa(port), "127.0.0.1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("fi_pingpong output:\n%s", out)
		}
	}()
	ctlLn.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	ctl, err := ctlLn.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()

	info := loInfo(t, opts{})
	l := listen(t, info)
	var name []byte
	name = binary.BigEndian.AppendUint32(name, uint32(len(l.name)))
	name = binary.LittleEndian.AppendUint32(name, uint32(provider.SockAddrIn))
	name = append(name, l.name...)
	if _, err := ctl.Write(name); err != nil {
		t.Fatal(err)
	}
	ev := expectEvent(t, l.eq, provider.EventConnReq)
	srv := newNode(t, ev.Info, opts{})
	p := &ppPeer{t: t, n: srv, ctl: ctl, rbuf: make([]byte, ppMaxSize), sbuf: make([]byte, ppMaxSize), iters: 3}
	p.postRecv()
	if err := srv.ep.Accept(nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, srv.eq, provider.EventConnected)
	p.runServer(sizes)
	ctl.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fi_pingpong: %v", err)
	}
	checkPPOutput(t, out.String(), sizes)
	t.Logf("fi_pingpong (C client):\n%s", out)
	expectEvent(t, srv.eq, provider.EventShutdown)
}

// TestInteropPingpongGoClient runs a Go client on our provider against
// the C fi_pingpong server, with -c data checks at every size of -S all.
func TestInteropPingpongGoClient(t *testing.T) {
	bin := cTool(t, "fi_pingpong")
	sizes := ppSizes(ppMaxSize)
	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, out := ppCommand(ctx, bin, "-p", "tcp", "-e", "msg", "-S", "all", "-I", "3", "-c", "-B", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("fi_pingpong output:\n%s", out)
		}
	}()
	var ctl net.Conn
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		ctl, err = net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("control connect: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer ctl.Close()
	p := &ppPeer{t: t, ctl: ctl, rbuf: make([]byte, ppMaxSize), sbuf: make([]byte, ppMaxSize), iters: 3}
	hdr := p.ctlRead(8)
	nlen := binary.BigEndian.Uint32(hdr)
	if f := binary.LittleEndian.Uint32(hdr[4:]); f != uint32(provider.SockAddrIn) || nlen != 16 {
		t.Fatalf("server name header %x", hdr)
	}
	srvName := p.ctlRead(int(nlen))
	info := loInfo(t, opts{})
	info.DestAddr = srvName
	p.n = newNode(t, info, opts{})
	p.postRecv()
	if err := p.n.ep.Connect(srvName, nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, p.n.eq, provider.EventConnected)
	p.runClient(sizes)
	ctl.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fi_pingpong: %v", err)
	}
	checkPPOutput(t, out.String(), sizes)
	t.Logf("fi_pingpong (C server):\n%s", out)
	expectEvent(t, p.n.eq, provider.EventShutdown)
}

// checkPPOutput checks fi_pingpong printed one result row per size with
// "=iters" acknowledged.
func checkPPOutput(t *testing.T, out string, sizes []int) {
	t.Helper()
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 8 && strings.HasPrefix(f[2], "=") {
			rows++
		}
	}
	if rows != len(sizes) {
		t.Fatalf("fi_pingpong printed %d result rows, want %d:\n%s", rows, len(sizes), out)
	}
}
