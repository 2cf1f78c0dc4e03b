package main

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

func TestCLayouts(t *testing.T) {
	var v fabric.RMAIOV
	var c fabric.RMAIOC
	want := map[string]uintptr{
		"iovec":          unsafe.Sizeof(cIOV{}),
		"fi_ioc":         unsafe.Sizeof(cIOC{}),
		"fi_rma_iov":     unsafe.Sizeof(v),
		"fi_rma_iov.len": unsafe.Offsetof(v.Len),
		"fi_rma_iov.key": unsafe.Offsetof(v.Key),
		"fi_rma_ioc":     unsafe.Sizeof(c),
		"fi_rma_ioc.cnt": unsafe.Offsetof(c.Count),
		"fi_rma_ioc.key": unsafe.Offsetof(c.Key),
	}
	for k, cv := range cLayouts() {
		if want[k] != cv {
			t.Errorf("%s: C %d, Go view %d", k, cv, want[k])
		}
	}
}

// udpPair opens a udp domain with one endpoint bound to a CQ and an AV
// holding its own address, through the Go API; the endpoint is then handed
// to C as the plugin does.
func udpLoop(t testing.TB) (fid unsafe.Pointer, cq *fabric.CQ) {
	fid, cq, _ = udpLoopEP(t)
	return fid, cq
}

// udpLoopEP is udpLoop that also returns the Go endpoint.
func udpLoopEP(t testing.TB) (fid unsafe.Pointer, cq *fabric.CQ, ep *fabric.Endpoint) {
	t.Helper()
	hints := fabric.AllocInfo()
	hints.Caps = fabric.CapMsg
	hints.EPAttr.Type = fabric.EPDgram
	hints.FabricAttr.ProvName = "udp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, hints)
	if err != nil {
		t.Fatal(err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fab.Close() })
	dom, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dom.Close() })
	av, err := dom.OpenAV(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { av.Close() })
	cq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cq.Close() })
	ep, err = dom.OpenEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
		t.Fatal(err)
	}
	if err := ep.BindAV(av); err != nil {
		t.Fatal(err)
	}
	if err := ep.Enable(); err != nil {
		t.Fatal(err)
	}
	name, err := ep.Name()
	if err != nil {
		t.Fatal(err)
	}
	addrs := []fabric.Addr{0}
	if n, err := av.Insert([][]byte{name}, addrs, 0); n != 1 || err != nil || addrs[0] != 0 {
		t.Fatalf("AV insert: %d %v %v", n, addrs, err)
	}
	before := handles.count()
	fid = testWrapEP(ep)
	if fid == nil || handles.count() != before+1 {
		t.Fatal("wrapEP failed")
	}
	t.Cleanup(func() {
		if rc := testCloseEP(fid); rc != 0 {
			t.Errorf("fi_close: %d", rc)
		}
		if handles.count() != before {
			t.Errorf("handles: %d live, want %d", handles.count(), before)
		}
	})
	return fid, cq, ep
}

// drain reads n completions from cq (bounded) into ents.
func drain(t *testing.T, cq *fabric.CQ, ents []fabric.CQEntry) {
	t.Helper()
	got := 0
	deadline := time.Now().Add(10 * time.Second)
	for got < len(ents) {
		n, err := cq.Read(ents[got:])
		if err != nil && !errors.Is(err, fabric.ErrAgain) {
			t.Fatalf("cq read: %v", err)
		}
		got += n
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d completions", got, len(ents))
		}
	}
}

// TestDgramThroughC sends and receives through the C inline calls (fi_send,
// fi_recv, fi_sendv) on a udp endpoint wrapped by the plugin: the data
// arrives, the contexts come back unchanged (small integer and pointer-like
// values), and bad input gets negative errors.
func TestDgramThroughC(t *testing.T) {
	fid, cq := udpLoop(t)
	const n = 64
	sbuf, rbuf := testMalloc(n), testMalloc(2*n)
	defer testFree(sbuf)
	defer testFree(rbuf)
	src := unsafe.Slice((*byte)(sbuf), n)
	for i := range src {
		src[i] = byte(i + 1)
	}
	ents := make([]fabric.CQEntry, 2)
	for _, ctx := range []uintptr{7, 0x10000} {
		if rc := testRecv(fid, rbuf, 2*n, ctx+1); rc != 0 {
			t.Fatalf("fi_recv: %d", rc)
		}
		if rc := testSend(fid, sbuf, n, ctx); rc != 0 {
			t.Fatalf("fi_send: %d", rc)
		}
		drain(t, cq, ents)
		var sawSend, sawRecv bool
		for _, e := range ents {
			switch c := ctxToC(e.OpContext); {
			case c == ctx && e.Flags&fabric.FlagSend != 0:
				sawSend = true
			case c == ctx+1 && e.Flags&fabric.FlagRecv != 0 && e.Len == n:
				sawRecv = true
			default:
				t.Errorf("unexpected completion %+v", e)
			}
		}
		if !sawSend || !sawRecv {
			t.Fatalf("completions %+v", ents)
		}
		if got := unsafe.Slice((*byte)(rbuf), n); string(got) != string(src) {
			t.Fatalf("received %v", got)
		}
	}

	// A gathered send: two C buffers.
	iov := testIOV([]unsafe.Pointer{sbuf, unsafe.Add(sbuf, 10)}, []int{10, n - 10})
	defer testFree(iov)
	clear(unsafe.Slice((*byte)(rbuf), 2*n))
	if rc := testRecv(fid, rbuf, 2*n, 0); rc != 0 {
		t.Fatalf("fi_recv: %d", rc)
	}
	if rc := testSendV(fid, iov, 2, 0); rc != 0 {
		t.Fatalf("fi_sendv: %d", rc)
	}
	drain(t, cq, ents)
	if got := unsafe.Slice((*byte)(rbuf), n); string(got) != string(src) {
		t.Fatalf("sendv received %v", got)
	}

	// A NULL receive buffer is a zero-length one, whatever its length: a
	// zero-byte message completes, a longer one is truncated (nothing is
	// written).
	if rc := testRecv(fid, nil, 8, 21); rc != 0 {
		t.Fatalf("fi_recv NULL: %d", rc)
	}
	if rc := testSend(fid, sbuf, 0, 22); rc != 0 {
		t.Fatalf("fi_send 0 bytes: %d", rc)
	}
	drain(t, cq, ents)
	for _, e := range ents {
		if c := ctxToC(e.OpContext); (c != 21 && c != 22) || e.Len != 0 {
			t.Errorf("zero-byte message: completion %+v", e)
		}
	}
	if rc := testRecv(fid, nil, 8, 23); rc != 0 {
		t.Fatalf("fi_recv NULL: %d", rc)
	}
	if rc := testSend(fid, sbuf, n, 24); rc != 0 {
		t.Fatalf("fi_send: %d", rc)
	}
	var ee fabric.CQErrEntry
	deadline := time.Now().Add(10 * time.Second)
	for sawErr, sawSend := false, false; !sawErr || !sawSend; {
		n, err := cq.Read(ents[:1])
		switch {
		case n == 1 && ctxToC(ents[0].OpContext) == 24:
			sawSend = true
		case errors.Is(err, fabric.ErrAvail):
			if err := cq.ReadErr(&ee); err != nil {
				t.Fatal(err)
			}
			if ctxToC(ee.OpContext) != 23 || ee.Err != fabric.ErrTrunc {
				t.Fatalf("error entry %+v, want FI_ETRUNC for context 23", ee)
			}
			sawErr = true
		case err != nil && !errors.Is(err, fabric.ErrAgain):
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no truncation error")
		}
	}

	// Bad input.
	for _, c := range []struct {
		name string
		rc   int
	}{
		{"send NULL buf", testSend(fid, nil, 8, 0)},
		{"sendv NULL iov", testSendV(fid, nil, 2, 0)},
		{"sendv count above iov_limit", testSendV(fid, iov, 1<<20+1, 0)},
		{"send huge len", testSend(fid, sbuf, 1<<62, 0)},
	} {
		if c.rc >= 0 {
			t.Errorf("%s: rc %d, want a negative error", c.name, c.rc)
		}
	}
}

// TestSendAllocs: the send and receive wrappers allocate nothing on the Go
// side (C -> Go -> Go API, completions read through the Go API).
func TestSendAllocs(t *testing.T) {
	fid, cq := udpLoop(t)
	const n = 32
	sbuf, rbuf := testMalloc(n), testMalloc(n)
	defer testFree(sbuf)
	defer testFree(rbuf)
	iov := testIOV([]unsafe.Pointer{sbuf, unsafe.Add(sbuf, 8)}, []int{8, n - 8})
	defer testFree(iov)
	ents := make([]fabric.CQEntry, 2)
	round := func() {
		if rc := testRecv(fid, rbuf, n, 9); rc != 0 {
			t.Fatalf("fi_recv: %d", rc)
		}
		if rc := testSend(fid, sbuf, n, 0x20000); rc != 0 {
			t.Fatalf("fi_send: %d", rc)
		}
		drain(t, cq, ents)
		if rc := testRecv(fid, rbuf, n, 9); rc != 0 {
			t.Fatalf("fi_recv: %d", rc)
		}
		if rc := testSendV(fid, iov, 2, 3); rc != 0 {
			t.Fatalf("fi_sendv: %d", rc)
		}
		drain(t, cq, ents)
	}
	round()
	if a := testing.AllocsPerRun(200, round); a != 0 {
		t.Errorf("%.1f allocs per round (send, sendv, 2 recvs, 2 CQ reads), want 0", a)
	}
}

// cProgram compiles testdata/name.c against the C libfabric.
func cProgram(t *testing.T, name string) string {
	t.Helper()
	return compileC(t, name+".c")
}

// TestCEndpointBasic drives endpoints, passive endpoints, aliases and
// shared contexts from C without queues (testdata/ep_basic.c): states,
// bad input, stale fids, no handle leak.
func TestCEndpointBasic(t *testing.T) {
	dir := plugin(t)
	bin := cProgram(t, "ep_basic")
	for _, p := range []string{"gotcp", "goudp"} {
		t.Run(p, func(t *testing.T) {
			if out := run(t, dir, bin, p, filepath.Join(dir, "libgofabric.so")); out != "ok\n" {
				t.Fatalf("output %q", out)
			}
		})
	}
}

// TestConcurrentSendV: goroutines post gathered sends on one endpoint at
// once (FI_THREAD_SAFE; the scratch of the vector calls is per call): every
// message arrives whole.
func TestConcurrentSendV(t *testing.T) {
	fid, cq := udpLoop(t)
	const g, per, n = 4, 25, 16
	rbufs := testMalloc(g * per * n)
	defer testFree(rbufs)
	for i := 0; i < g*per; i++ {
		if rc := testRecv(fid, unsafe.Add(rbufs, i*n), n, 0); rc != 0 {
			t.Fatalf("fi_recv %d: %d", i, rc)
		}
	}
	errs := make(chan int, g)
	for w := 0; w < g; w++ {
		go func() {
			buf := testMalloc(n)
			defer testFree(buf)
			b := unsafe.Slice((*byte)(buf), n)
			for i := range b {
				b[i] = byte(w + 1)
			}
			iov := testIOV([]unsafe.Pointer{buf, unsafe.Add(buf, 5)}, []int{5, n - 5})
			defer testFree(iov)
			for i := 0; i < per; i++ {
				for {
					rc := testSendV(fid, iov, 2, uintptr(w+1))
					if rc == 0 {
						break
					}
					if rc != -int(fabric.ErrAgain) {
						errs <- rc
						return
					}
				}
			}
			errs <- 0
		}()
	}
	ents := make([]fabric.CQEntry, 2*g*per)
	drain(t, cq, ents) // progresses the sends too
	for w := 0; w < g; w++ {
		if rc := <-errs; rc != 0 {
			t.Fatalf("fi_sendv: %d", rc)
		}
	}
	got := map[byte]int{}
	for i := 0; i < g*per; i++ {
		m := unsafe.Slice((*byte)(unsafe.Add(rbufs, i*n)), n)
		for _, c := range m {
			if c != m[0] {
				t.Fatalf("message %d mixed: %v", i, m)
			}
		}
		got[m[0]]++
	}
	for w := 1; w <= g; w++ {
		if got[byte(w)] != per {
			t.Errorf("sender %d: %d messages arrived, want %d", w, got[byte(w)], per)
		}
	}
}

// TestCEndpointXfer runs testdata/ep_xfer.c: dgram transfers over goudp
// (msg and tagged; plain, vector, msg and inject forms; cancel) and a
// gotcp connection (listen, connect, FI_CONNREQ info with its handle,
// accept, FI_CONNECTED on both sides, messages both ways with remote CQ
// data, tagged messages, RMA write and read with MR descriptors, shutdown
// seen by the peer), with CQ and EQ reads, no handle leak.
func TestCEndpointXfer(t *testing.T) {
	dir := plugin(t)
	bin := cProgram(t, "ep_xfer")
	for _, p := range []string{"gotcp", "goudp"} {
		t.Run(p, func(t *testing.T) {
			if out := run(t, dir, bin, p, filepath.Join(dir, "libgofabric.so")); out != "ok\n" {
				t.Fatalf("output %q", out)
			}
		})
	}
}

// BenchmarkSendRecv: one receive, one send and the two completions per op
// on a udp endpoint talking to itself: "C" posts through the C inline
// calls into the plugin (C -> Go crossings), "Go" through the Go API
// directly; the difference is the plugin's cost (the loopback socket round
// trip is in both).
func BenchmarkSendRecv(b *testing.B) {
	b.Run("C", func(b *testing.B) { benchSendRecv(b, true) })
	b.Run("Go", func(b *testing.B) { benchSendRecv(b, false) })
}

func benchSendRecv(b *testing.B, viaC bool) {
	fid, cq, ep := udpLoopEP(b)
	const n = 64
	sbuf, rbuf := testMalloc(n), testMalloc(n)
	defer testFree(sbuf)
	defer testFree(rbuf)
	sb, rb := unsafe.Slice((*byte)(sbuf), n), unsafe.Slice((*byte)(rbuf), n)
	ents := make([]fabric.CQEntry, 2)
	b.ReportAllocs()
	for b.Loop() {
		if viaC {
			if rc := testRecv(fid, rbuf, n, 1); rc != 0 {
				b.Fatalf("fi_recv: %d", rc)
			}
			if rc := testSend(fid, sbuf, n, 2); rc != 0 {
				b.Fatalf("fi_send: %d", rc)
			}
		} else {
			if err := ep.Recv(rb, nil, fabric.AddrUnspec, nil); err != nil {
				b.Fatal(err)
			}
			if err := ep.Send(sb, nil, 0, nil); err != nil {
				b.Fatal(err)
			}
		}
		for got := 0; got < 2; {
			k, err := cq.Read(ents[got:])
			if err != nil && !errors.Is(err, fabric.ErrAgain) {
				b.Fatal(err)
			}
			got += k
		}
	}
}
