package main

import (
	"testing"
	"time"
	"unsafe"

	fabric "github.com/gofabric/fabric"
)

// udpSelf opens a udp endpoint on 127.0.0.1 that sends to itself, bound
// to cq (transmit and receive).
func udpSelf(t *testing.T) (*fabric.Domain, func(cq *fabric.CQ) (*fabric.Endpoint, fabric.Addr)) {
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
	return dom, func(cq *fabric.CQ) (*fabric.Endpoint, fabric.Addr) {
		ep, err := dom.OpenEndpoint(info)
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
		fa := make([]fabric.Addr, 1)
		if _, err := av.Insert([][]byte{name}, fa, 0); err != nil {
			t.Fatal(err)
		}
		return ep, fa[0]
	}
}

// readN reads n entries through the C entry point, bounded in time.
func readN(t *testing.T, cq, buf unsafe.Pointer, format, n int) []qtEntry {
	t.Helper()
	var out []qtEntry
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < n {
		rc := qtCQRead(cq, buf, 1)
		switch {
		case rc == 1:
			out = append(out, qtGetEntry(buf, format, 0))
		case rc != -11: // FI_EAGAIN
			t.Fatalf("read: %d", rc)
		case time.Now().After(deadline):
			t.Fatalf("read %d of %d entries", len(out), n)
		}
	}
	return out
}

// TestCQFormats: completions of a Go udp endpoint read through the C
// entry point in every format.
func TestCQFormats(t *testing.T) {
	dom, open := udpSelf(t)
	cdom, free := qtDomain(dom)
	defer free()
	for format := 0; format <= 4; format++ {
		cq, gcq, rc := qtCQOpen(cdom, format, 1 /* FI_WAIT_UNSPEC */)
		if rc != 0 {
			t.Fatalf("format %d: open %d", format, rc)
		}
		ep, self := open(gcq)
		cbuf := qtMalloc(4096)
		ent := qtMalloc(64 * 48)
		if rc := qtCQRead(cq, ent, 4); rc != -11 {
			t.Errorf("format %d: empty read %d, want -FI_EAGAIN", format, rc)
		}
		rbuf := unsafe.Slice((*byte)(cbuf), 4096)
		if err := ep.Recv(rbuf, nil, fabric.AddrUnspec, ctxToGo(0x7000)); err != nil {
			t.Fatal(err)
		}
		if err := ep.Send([]byte("hello"), nil, self, ctxToGo(9)); err != nil {
			t.Fatal(err)
		}
		want := format
		if want == 0 {
			want = 1 // FI_CQ_FORMAT_UNSPEC is CONTEXT
		}
		got := readN(t, cq, ent, want, 2)
		var sawSend, sawRecv bool
		for _, e := range got {
			switch e.ctx {
			case 9:
				sawSend = true
				if want >= 2 && e.flags&uint64(fabric.FlagSend) == 0 {
					t.Errorf("format %d: send flags %#x", format, e.flags)
				}
			case 0x7000:
				sawRecv = true
				if want >= 2 && (e.len != 5 || e.flags&uint64(fabric.FlagRecv) == 0) {
					t.Errorf("format %d: recv len %d flags %#x", format, e.len, e.flags)
				}
			default:
				t.Errorf("format %d: context %#x", format, e.ctx)
			}
		}
		if !sawSend || !sawRecv {
			t.Errorf("format %d: entries %+v", format, got)
		}
		if rc := qtCQClose(cq); rc != -16 { // FI_EBUSY: the endpoint is bound
			t.Errorf("close with a bound endpoint: %d", rc)
		}
		ep.Close()
		if rc := qtCQClose(cq); rc != 0 {
			t.Errorf("close: %d", rc)
		}
		qtFree(cbuf)
		qtFree(ent)
	}
	for _, bad := range [][2]int{{9, 1}, {1, 99}, {1, 2 /* FI_WAIT_SET without a set */}} {
		if _, _, rc := qtCQOpen(cdom, bad[0], bad[1]); rc >= 0 {
			t.Errorf("open format %d wait %d: %d, want an error", bad[0], bad[1], rc)
		}
	}
}

// TestCQReadAllocs: fi_cq_read costs no Go allocation, empty or not.
func TestCQReadAllocs(t *testing.T) {
	dom, open := udpSelf(t)
	cdom, free := qtDomain(dom)
	defer free()
	cq, gcq, rc := qtCQOpen(cdom, 4, 1)
	if rc != 0 {
		t.Fatal(rc)
	}
	ep, self := open(gcq)
	ent := qtMalloc(64 * 48)
	defer qtFree(ent)
	if n := testing.AllocsPerRun(200, func() { qtCQRead(cq, ent, 8) }); n != 0 {
		t.Errorf("empty read: %v allocs", n)
	}
	const sends = 300
	msg := []byte("x")
	for i := 0; i < sends; i++ {
		for {
			err := ep.Send(msg, nil, self, ctxToGo(uintptr(0x10000+i)))
			if err == nil {
				break
			}
			if err != fabric.ErrAgain {
				t.Fatal(err)
			}
			qtCQRead(cq, nil, 0) // progress
		}
	}
	// Send completions are queued at post or by progress; read one at a time.
	var got int
	n := testing.AllocsPerRun(200, func() {
		if qtCQRead(cq, ent, 1) == 1 {
			got++
		}
	})
	if n != 0 {
		t.Errorf("read: %v allocs", n)
	}
	if got == 0 {
		t.Error("no completion read")
	}
	ep.Close()
	if rc := qtCQClose(cq); rc != 0 {
		t.Errorf("close %d", rc)
	}
}

const (
	fiEAGAIN    = -11
	fiEBUSY     = -16
	fiETIMEDOUT = -110
	fiEAVAIL    = -259
	fiETRUNC    = 265
)

// TestCQReadErr: a truncated receive is an error completion: fi_cq_read
// says -FI_EAVAIL, fi_cq_readerr returns it with its context and olen.
func TestCQReadErr(t *testing.T) {
	dom, open := udpSelf(t)
	cdom, free := qtDomain(dom)
	defer free()
	cq, gcq, rc := qtCQOpen(cdom, 4, 1)
	if rc != 0 {
		t.Fatal(rc)
	}
	ep, self := open(gcq)
	rb, ent, eb := qtMalloc(4), qtMalloc(4*48), qtMalloc(128)
	defer qtFree(rb)
	defer qtFree(ent)
	defer qtFree(eb)
	if err := ep.Recv(unsafe.Slice((*byte)(rb), 4), nil, fabric.AddrUnspec, ctxToGo(0x8000)); err != nil {
		t.Fatal(err)
	}
	if err := ep.Send([]byte("0123456789"), nil, self, ctxToGo(3)); err != nil {
		t.Fatal(err)
	}
	if rc := qtCQReadErr(cq, eb); rc != fiEAGAIN {
		t.Errorf("readerr before the error: %d", rc)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rc := qtCQRead(cq, ent, 4)
		if rc == fiEAVAIL {
			break
		}
		if (rc != fiEAGAIN && rc != 1) || time.Now().After(deadline) {
			t.Fatalf("read: %d, want -FI_EAVAIL", rc)
		}
	}
	if rc := qtCQReadErr(cq, eb); rc != 1 {
		t.Fatalf("readerr: %d", rc)
	}
	e := qtGetErr(eb)
	if e.ctx != 0x8000 || e.err != fiETRUNC || e.olen != 6 {
		t.Errorf("error entry %+v, want context 0x8000, FI_ETRUNC, olen 6", e)
	}
	if rc := qtCQReadErr(cq, eb); rc != fiEAGAIN {
		t.Errorf("second readerr: %d", rc)
	}
	ep.Close()
	if rc := qtCQClose(cq); rc != 0 {
		t.Errorf("close %d", rc)
	}
}

// TestWaitAndPollSetCQ: a CQ in a wait set ends fi_wait when a completion
// arrives, and fi_poll returns its context.
func TestWaitAndPollSetCQ(t *testing.T) {
	dom, open := udpSelf(t)
	cfab, ffree := qtFabric(dom.Fabric())
	defer ffree()
	cdom, free := qtDomain(dom)
	defer free()
	ws, rc := qtWaitOpen(cfab)
	if rc != 0 {
		t.Fatal(rc)
	}
	cq, gcq, rc := qtCQOpenSet(cdom, 1, 2 /* FI_WAIT_SET */, ws, 0x9000)
	if rc != 0 {
		t.Fatal(rc)
	}
	ep, self := open(gcq)
	ps, rc := qtPollOpen(cdom)
	if rc != 0 {
		t.Fatal(rc)
	}
	if rc := qtPollAdd(ps, cq, true); rc != 0 {
		t.Fatal(rc)
	}
	ctxs, rb, ent := qtMalloc(4*8), qtMalloc(64), qtMalloc(8*8)
	defer qtFree(ctxs)
	defer qtFree(rb)
	defer qtFree(ent)

	start := time.Now()
	if rc := qtWait(ws, 100); rc != fiETIMEDOUT || time.Since(start) < 90*time.Millisecond {
		t.Errorf("empty wait: %d after %v", rc, time.Since(start))
	}
	if rc := qtPoll(ps, ctxs, 4); rc != 0 {
		t.Errorf("empty poll: %d", rc)
	}
	if err := ep.Recv(unsafe.Slice((*byte)(rb), 64), nil, fabric.AddrUnspec, ctxToGo(0x7000)); err != nil {
		t.Fatal(err)
	}
	if err := ep.Send([]byte("hi"), nil, self, ctxToGo(5)); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if rc := qtWait(ws, 5000); rc != 0 || time.Since(start) > 3*time.Second {
		t.Errorf("wait: %d after %v", rc, time.Since(start))
	}
	deadline := time.Now().Add(5 * time.Second)
	for qtPoll(ps, ctxs, 4) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("fi_poll never returned the CQ")
		}
	}
	if got := *(*uintptr)(ctxs); got != 0x9000 {
		t.Errorf("fi_poll context %#x, want the CQ's 0x9000", got)
	}
	readN(t, cq, ent, 1, 2)
	if rc := qtWaitClose(ws); rc != fiEBUSY {
		t.Errorf("close of a wait set in use: %d", rc)
	}
	if rc := qtCQClose(cq); rc != fiEBUSY {
		t.Errorf("close of a CQ in a poll set: %d", rc)
	}
	if rc := qtPollAdd(ps, cq, false); rc != 0 {
		t.Error(rc)
	}
	if rc := qtPollClose(ps); rc != 0 {
		t.Error(rc)
	}
	ep.Close()
	if rc := qtCQClose(cq); rc != 0 {
		t.Errorf("close: %d", rc)
	}
	if rc := qtWaitClose(ws); rc != 0 {
		t.Errorf("wait set close: %d", rc)
	}
}

// TestCQReadWhileSRead: a thread blocked in fi_cq_sread holds the CQ's
// scratch; fi_cq_read from another thread still returns at once, and
// fi_cq_signal ends the sread with -FI_EAGAIN.
func TestCQReadWhileSRead(t *testing.T) {
	dom, _ := udpSelf(t)
	cdom, free := qtDomain(dom)
	defer free()
	cq, _, rc := qtCQOpen(cdom, 1, 1)
	if rc != 0 {
		t.Fatal(rc)
	}
	a, b := qtMalloc(64*8), qtMalloc(64*8)
	defer qtFree(a)
	defer qtFree(b)
	done := make(chan int)
	go func() { done <- qtCQSRead(cq, a, 8, 20000) }()
	time.Sleep(50 * time.Millisecond) // let it block
	start := time.Now()
	if rc := qtCQRead(cq, b, 8); rc != fiEAGAIN || time.Since(start) > time.Second {
		t.Errorf("read beside a blocked sread: %d after %v", rc, time.Since(start))
	}
	if rc := qtCQSignal(cq); rc != 0 {
		t.Fatal(rc)
	}
	select {
	case rc := <-done:
		if rc != fiEAGAIN {
			t.Errorf("signalled sread: %d", rc)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fi_cq_signal did not end fi_cq_sread")
	}
	if rc := qtCQClose(cq); rc != 0 {
		t.Errorf("close %d", rc)
	}
}
