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
