package tcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/testutil"
)

// Interop of RDM tagged messages, RMA and atomics with a small C program
// (testdata/rdm_ops.c) on libfabric 1.17's tcp;ofi_rxm, both ways.

// rdmOpsEnv is an RDM endpoint with RMA and atomics, one CQ for both
// directions and a domain to register memory in.
type rdmOpsEnv struct {
	t    testing.TB
	dom  *fabric.Domain
	ep   *fabric.Endpoint
	av   *fabric.AV
	cq   *fabric.CQ
	name []byte
	done map[any]error
	// remote holds the completions that belong to no operation of ours
	// (remote CQ data).
	remote []fabric.CQEntry
}

// openRDMOps opens the endpoint; cqSize, if given, is the CQ's size.
func openRDMOps(t testing.TB, cqSize ...uint64) *rdmOpsEnv {
	t.Helper()
	t.Setenv("FI_TCP_IFACE", "lo")
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg | fabric.CapTagged | fabric.CapRMA | fabric.CapAtomic
	h.EPAttr.Type = fabric.EPRDM
	h.FabricAttr.ProvName = "tcp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fab.Close() })
	e := &rdmOpsEnv{t: t, done: map[any]error{}}
	if e.dom, err = fab.OpenDomain(info); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.dom.Close() })
	attr := &fabric.CQAttr{Format: fabric.CQFormatTagged}
	if len(cqSize) > 0 {
		attr.Size = cqSize[0]
	}
	if e.cq, err = e.dom.OpenCQ(attr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.cq.Close() })
	if e.av, err = e.dom.OpenAV(&fabric.AVAttr{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.av.Close() })
	if e.ep, err = e.dom.OpenEndpoint(info); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.ep.Close() })
	if err := e.ep.BindCQ(e.cq, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
		t.Fatal(err)
	}
	if err := e.ep.BindAV(e.av); err != nil {
		t.Fatal(err)
	}
	if err := e.ep.Enable(); err != nil {
		t.Fatal(err)
	}
	if e.name, err = e.ep.Name(); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *rdmOpsEnv) insert(name []byte) fabric.Addr {
	e.t.Helper()
	fa := make([]fabric.Addr, 1)
	if n, err := e.av.Insert([][]byte{name}, fa, 0); err != nil || n != 1 {
		e.t.Fatalf("AV insert: %d %v", n, err)
	}
	return fa[0]
}

// pump reads completions (progressing the endpoint) and records them.
func (e *rdmOpsEnv) pump() {
	ent := make([]fabric.CQEntry, 8)
	n, err := e.cq.Read(ent)
	for _, c := range ent[:max(n, 0)] {
		if c.OpContext == nil {
			e.remote = append(e.remote, c)
			continue
		}
		e.done[c.OpContext] = nil
	}
	if errors.Is(err, fabric.ErrAvail) {
		var ee fabric.CQErrEntry
		if err := e.cq.ReadErr(&ee); err == nil {
			e.done[ee.OpContext] = ee.Err
		}
	}
}

// wait progresses until ctx completed, and returns its error.
func (e *rdmOpsEnv) wait(what string, ctx any) error {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err, ok := e.done[ctx]; ok {
			delete(e.done, ctx)
			return err
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: no completion within 10 s", what)
		}
		e.pump()
	}
}

func (e *rdmOpsEnv) waitOK(what string, ctx any) {
	e.t.Helper()
	if err := e.wait(what, ctx); err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// post retries a post while it answers EAGAIN.
func (e *rdmOpsEnv) post(what string, f func() error) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			e.t.Fatalf("%s: %v", what, err)
		}
		e.pump()
	}
}

// opsPattern is rdm_ops.c's pattern(): base + i%23.
func opsPattern(n int, base byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = base + byte(i%23)
	}
	return b
}

// rdmCPeer is the running C program, with line-oriented stdout and stdin.
type rdmCPeer struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  chan string
	in   io.WriteCloser
	errb bytes.Buffer
}

func buildRDMOps(t *testing.T) string {
	t.Helper()
	bin, err := func() (string, error) {
		cc, err := exec.LookPath("gcc")
		if err != nil {
			return "", err
		}
		if _, err := os.Stat("/usr/include/rdma/fi_atomic.h"); err != nil {
			return "", err
		}
		bin := filepath.Join(t.TempDir(), "rdm_ops")
		if out, err := exec.Command(cc, "-O1", "-o", bin, "testdata/rdm_ops.c", "-lfabric").CombinedOutput(); err != nil {
			return "", fmt.Errorf("%v: %s", err, out)
		}
		return bin, nil
	}()
	testutil.InteropCheck(t, "the C RDM interop peer (gcc, libfabric-dev)", err)
	return bin
}

func startRDMC(t *testing.T, bin string, env []string, args ...string) *rdmCPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	p := &rdmCPeer{t: t, cmd: exec.CommandContext(ctx, bin, args...), out: make(chan string, 16)}
	p.cmd.Env = append(append(os.Environ(), "FI_TCP_IFACE=lo"), env...)
	p.cmd.Stderr = &p.errb
	so, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.out)
		sc := bufio.NewScanner(so)
		for sc.Scan() {
			p.out <- strings.TrimSpace(sc.Text())
		}
	}()
	t.Cleanup(func() {
		p.in.Close()
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

// line waits for the C program's next line, progressing e meanwhile.
func (p *rdmCPeer) line(e *rdmOpsEnv) string {
	p.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-p.out:
			if !ok {
				p.cmd.Wait()
				p.t.Fatalf("C peer ended; stderr:\n%s", p.errb.String())
			}
			return l
		case <-deadline:
			p.t.Fatalf("C peer: no line within 20 s; stderr:\n%s", p.errb.String())
		default:
			e.pump()
		}
	}
}

func (p *rdmCPeer) name(e *rdmOpsEnv) []byte {
	p.t.Helper()
	l := p.line(e)
	b, err := hex.DecodeString(strings.TrimPrefix(l, "NAME "))
	if !strings.HasPrefix(l, "NAME ") || err != nil {
		p.t.Fatalf("C peer name line %q; stderr:\n%s", l, p.errb.String())
	}
	return b
}

func (p *rdmCPeer) expectOK(e *rdmOpsEnv) {
	p.t.Helper()
	if l := p.line(e); l != "OK" {
		p.t.Fatalf("C peer said %q; stderr:\n%s", l, p.errb.String())
	}
}

func (p *rdmCPeer) send(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, s+"\n"); err != nil {
		p.t.Fatalf("C peer stdin: %v", err)
	}
}

// rdmOpsSizes are the tagged message sizes: eager, and (default rxm
// settings) rendezvous, or SAR with dynamic receive buffers off.
var rdmOpsSizes = []int{100, 50000}

// rdmOpsModes are the rxm settings both sides run with.
var rdmOpsModes = []struct {
	name string
	env  []string
}{
	{"default", nil},
	{"dyn_rbuf_off", []string{"FI_OFI_RXM_ENABLE_DYN_RBUF=0"}},
}

// TestInteropRDMOpsCInitiator: the C program (tcp;ofi_rxm) sends a tagged
// message to our RDM endpoint, writes (and writedata: our remote CQ data
// completion), reads and runs fetch and compare
// atomics on our memory, and a fetch atomic with a wrong key completes in
// error there; it receives our tagged message.
func TestInteropRDMOpsCInitiator(t *testing.T) {
	bin := buildRDMOps(t)
	for _, mode := range rdmOpsModes {
		for _, size := range rdmOpsSizes {
			t.Run(fmt.Sprintf("%s/size=%d", mode.name, size), func(t *testing.T) {
				for _, kv := range mode.env {
					k, v, _ := strings.Cut(kv, "=")
					t.Setenv(k, v)
				}
				e := openRDMOps(t)
				mem := make([]byte, 64)
				copy(mem[16:], "go-memory-16-31\x00")
				binary.LittleEndian.PutUint64(mem[32:], 40)
				binary.LittleEndian.PutUint64(mem[40:], 7)
				const key = 0xbeef
				mr, err := e.dom.RegMR(mem, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, key, 0)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { mr.Close() })
				rbuf := make([]byte, size+16)
				rctx := new(int)
				e.post("fi_trecv", func() error { return e.ep.TRecv(rbuf, nil, fabric.AddrUnspec, 0x1234, 0, rctx) })
				c := startRDMC(t, bin, mode.env, "initiator", hex.EncodeToString(e.name), fmt.Sprint(key), fmt.Sprint(size))
				peer := e.insert(c.name(e))
				sctx := new(int)
				msg := opsPattern(size, 'a')
				e.post("fi_tsend", func() error { return e.ep.TSend(msg, nil, peer, 0x5678, sctx) })
				e.waitOK("fi_tsend", sctx)
				e.waitOK("fi_trecv", rctx)
				if want := opsPattern(size, 'A'); !bytes.Equal(rbuf[:size], want) {
					t.Fatalf("tagged message from C differs")
				}
				c.expectOK(e)
				c.send("BYE")
				if err := c.cmd.Wait(); err != nil {
					t.Fatalf("C peer: %v; stderr:\n%s", err, c.errb.String())
				}
				if got := string(mem[:16]); got != "c-wrote-this!!!\x00" {
					t.Errorf("memory 0..15 = %q", got)
				}
				if v := binary.LittleEndian.Uint64(mem[32:]); v != 42 {
					t.Errorf("fetch-add target = %d, want 42", v)
				}
				if v := binary.LittleEndian.Uint64(mem[40:]); v != 9 {
					t.Errorf("compare-swap target = %d, want 9", v)
				}
				if string(mem[48:50]) != "wd" || len(e.remote) != 1 || e.remote[0].Data != 0xd00d ||
					e.remote[0].Flags&(fabric.FlagRemoteWrite|fabric.FlagRemoteCQData) !=
						fabric.FlagRemoteWrite|fabric.FlagRemoteCQData {
					t.Errorf("writedata: memory %q, remote completions %+v", mem[48:50], e.remote)
				}
			})
		}
	}
}

// TestInteropRDMOpsGoInitiator: our RDM endpoint sends a tagged message
// to the C program, writes (and writedata), reads and runs fetch and compare atomics on
// its memory (a wrong key completes in error here), and receives its
// tagged answer.
func TestInteropRDMOpsGoInitiator(t *testing.T) {
	bin := buildRDMOps(t)
	for _, mode := range rdmOpsModes {
		for _, size := range rdmOpsSizes {
			t.Run(fmt.Sprintf("%s/size=%d", mode.name, size), func(t *testing.T) {
				for _, kv := range mode.env {
					k, v, _ := strings.Cut(kv, "=")
					t.Setenv(k, v)
				}
				e := openRDMOps(t)
				c := startRDMC(t, bin, mode.env, "target", fmt.Sprint(size))
				peer := e.insert(c.name(e))
				c.send("PEER " + hex.EncodeToString(e.name))
				const key = 0xc0de
				rbuf := make([]byte, size+16)
				rctx, sctx := new(int), new(int)
				e.post("fi_trecv", func() error { return e.ep.TRecv(rbuf, nil, fabric.AddrUnspec, 0x5678, 0, rctx) })
				msg := opsPattern(size, 'a')
				e.post("fi_tsend", func() error { return e.ep.TSend(msg, nil, peer, 0x1234, sctx) })
				e.waitOK("fi_tsend", sctx)
				e.waitOK("fi_trecv", rctx)
				if want := opsPattern(size, 'A'); !bytes.Equal(rbuf[:size], want) {
					t.Fatalf("tagged answer from C differs")
				}
				ctx := new(int)
				e.post("fi_write", func() error { return e.ep.RMAWrite([]byte("go-wrote-this!!\x00"), nil, peer, 0, key, ctx) })
				e.waitOK("fi_write", ctx)
				e.post("fi_writedata", func() error {
					return e.ep.RMAWriteData([]byte("wd"), nil, 0xd00d, peer, 48, key, ctx)
				})
				e.waitOK("fi_writedata", ctx)
				back := make([]byte, 16)
				e.post("fi_read", func() error { return e.ep.RMARead(back, nil, peer, 16, key, ctx) })
				e.waitOK("fi_read", ctx)
				if string(back) != "c-memory-16-31!\x00" {
					t.Fatalf("read %q", back)
				}
				res := make([]byte, 8)
				e.post("fi_fetch_atomic", func() error {
					return e.ep.FetchAtomic(le64(3), nil, res, nil, peer, 32, key, fabric.DatatypeUint64, fabric.AtomicSum, ctx)
				})
				e.waitOK("fi_fetch_atomic", ctx)
				if v := binary.LittleEndian.Uint64(res); v != 100 {
					t.Fatalf("fetched %d, want 100", v)
				}
				e.post("fi_compare_atomic", func() error {
					return e.ep.CompareAtomic(le64(11), nil, le64(5), nil, res, nil, peer, 40, key,
						fabric.DatatypeUint64, fabric.AtomicCSwap, ctx)
				})
				e.waitOK("fi_compare_atomic", ctx)
				if v := binary.LittleEndian.Uint64(res); v != 5 {
					t.Fatalf("compare fetched %d, want 5", v)
				}
				// A wrong key: the C target answers -FI_EACCES.
				e.post("fi_fetch_atomic (wrong key)", func() error {
					return e.ep.FetchAtomic(le64(3), nil, res, nil, peer, 32, key+1, fabric.DatatypeUint64, fabric.AtomicSum, ctx)
				})
				if err := e.wait("fi_fetch_atomic (wrong key)", ctx); err == nil {
					t.Fatal("fetch atomic with a wrong key succeeded")
				}
				c.send("CHECK")
				c.expectOK(e)
				if err := c.cmd.Wait(); err != nil {
					t.Fatalf("C peer: %v; stderr:\n%s", err, c.errb.String())
				}
			})
		}
	}
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// TestInteropRDMSARFromC: with dynamic receive buffers off, C rxm sends
// every message above the eager limit and up to its SAR limit (8 × 16384
// by default) as SAR segments; our endpoint receives each size correctly,
// into receives posted before the message arrives and as unexpected
// messages, untagged and tagged (the tagged eager ones now with the rxm
// header). The last size is past the SAR limit (rendezvous).
func TestInteropRDMSARFromC(t *testing.T) {
	bin := buildRDMOps(t)
	t.Setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0")
	sizes := []int{1, 16383, 16384, 16385, 20000, 32767, 32768, 32769, 49152, 65535, 65536, 65537, 100000,
		131071, 131072, 131073}
	e := openRDMOps(t)
	bufs := make([][]byte, len(sizes))
	ctxs := make([]*int, len(sizes))
	postRecv := func(i int) {
		bufs[i] = make([]byte, sizes[i])
		ctxs[i] = new(int)
		if i%2 == 1 {
			e.post("fi_trecv", func() error { return e.ep.TRecv(bufs[i], nil, fabric.AddrUnspec, uint64(i), 0, ctxs[i]) })
		} else {
			e.post("fi_recv", func() error { return e.ep.Recv(bufs[i], nil, fabric.AddrUnspec, ctxs[i]) })
		}
	}
	half := len(sizes) / 2
	for i := 0; i < half; i++ {
		postRecv(i)
	}
	args := []string{"stream", hex.EncodeToString(e.name)}
	for _, n := range sizes {
		args = append(args, fmt.Sprint(n))
	}
	c := startRDMC(t, bin, []string{"FI_OFI_RXM_ENABLE_DYN_RBUF=0"}, args...)
	c.name(e)
	if l := c.line(e); l != "SENT" {
		t.Fatalf("C peer said %q; stderr:\n%s", l, c.errb.String())
	}
	for i := half; i < len(sizes); i++ {
		postRecv(i)
	}
	for i, n := range sizes {
		e.waitOK(fmt.Sprintf("receive of %d bytes", n), ctxs[i])
		if want := opsPattern(n, 'a'+byte(i%7)); !bytes.Equal(bufs[i], want) {
			t.Errorf("message %d (%d bytes) differs at %d", i, n, firstDiffAt(bufs[i], want))
		}
	}
	c.send("BYE")
	if err := c.waitExit(e); err != nil {
		t.Fatalf("C peer: %v; stderr:\n%s", err, c.errb.String())
	}
}

// waitExit waits for the C program to exit, progressing e meanwhile (it
// may still wait for our side, e.g. a rendezvous read-done).
func (p *rdmCPeer) waitExit(e *rdmOpsEnv) error {
	ch := make(chan error, 1)
	go func() { ch <- p.cmd.Wait() }()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-ch:
			return err
		case <-deadline:
			return errors.New("C peer did not exit within 20 s")
		default:
			e.pump()
		}
	}
}

func firstDiffAt(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
