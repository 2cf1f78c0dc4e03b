package tcp_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestRDMSARSizes: with rxm's dynamic receive buffers off
// (FI_OFI_RXM_ENABLE_DYN_RBUF=0), messages above the eager limit up to the
// SAR limit go by SAR between two of our endpoints (and above it by
// rendezvous): every size arrives whole, untagged and tagged, into
// receives posted before the message and as unexpected messages.
func TestRDMSARSizes(t *testing.T) {
	t.Setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0")
	a, b := openRDM(t), openRDM(t)
	ab := a.insert(b.name)
	sizes := []int{16385, 32767, 32768, 32769, 65536, 100000, 131072, 131073, 7, 16384}
	rbufs := make([][]byte, len(sizes))
	post := func(i int) {
		rbufs[i] = make([]byte, sizes[i])
		var err error
		if i%2 == 1 {
			err = b.ep.TRecv(rbufs[i], nil, fabric.AddrUnspec, uint64(i), 0, i)
		} else {
			err = b.ep.Recv(rbufs[i], nil, fabric.AddrUnspec, i)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	half := len(sizes) / 2
	for i := 0; i < half; i++ {
		post(i)
	}
	msgs := make([][]byte, len(sizes))
	for i, n := range sizes {
		msgs[i] = opsPattern(n, 'a'+byte(i%7))
		var err error
		if i%2 == 1 {
			err = a.ep.TSend(msgs[i], nil, ab, uint64(i), i)
		} else {
			err = a.ep.Send(msgs[i], nil, ab, i)
		}
		if err != nil {
			t.Fatalf("send %d: %v", n, err)
		}
	}
	// The unexpected ones arrive (and are buffered) before their receives.
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		a.tx.Read(nil)
		b.rx.Read(nil)
	}
	for i := half; i < len(sizes); i++ {
		post(i)
	}
	for _, e := range drain(t, b.rx, len(sizes), a.tx) {
		i := e.OpContext.(int)
		if int(e.Len) != sizes[i] || !bytes.Equal(rbufs[i], msgs[i]) {
			t.Errorf("message %d (%d bytes): len %d, content equal %v", i, sizes[i], e.Len, bytes.Equal(rbufs[i], msgs[i]))
		}
	}
	drain(t, a.tx, len(sizes), b.rx)
}

// TestRDMSARTruncated: a SAR message larger than its receive fills the
// receive and completes it with FI_ETRUNC (olen the excess); the next
// message on the same connection arrives intact.
func TestRDMSARTruncated(t *testing.T) {
	t.Setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0")
	a, b := openRDM(t), openRDM(t)
	ab := a.insert(b.name)
	small := make([]byte, 20000)
	next := make([]byte, 100)
	if err := b.ep.Recv(small, nil, fabric.AddrUnspec, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.ep.Recv(next, nil, fabric.AddrUnspec, 2); err != nil {
		t.Fatal(err)
	}
	big := opsPattern(50000, 'k')
	if err := a.ep.Send(big, nil, ab, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.ep.Send([]byte("after"), nil, ab, 2); err != nil {
		t.Fatal(err)
	}
	var ee fabric.CQErrEntry
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := b.rx.Read(make([]fabric.CQEntry, 1))
		if errors.Is(err, fabric.ErrAvail) {
			if err := b.rx.ReadErr(&ee); err != nil {
				t.Fatal(err)
			}
			break
		}
		if err == nil {
			t.Fatal("the truncated receive completed successfully")
		}
		a.tx.Read(nil)
		if time.Now().After(deadline) {
			t.Fatal("no completion of the truncated receive")
		}
	}
	if !errors.Is(ee.Err, fabric.ErrTrunc) || ee.Olen != 30000 || ee.OpContext != 1 {
		t.Fatalf("error entry %+v; want FI_ETRUNC, olen 30000", ee)
	}
	if !bytes.Equal(small, big[:20000]) {
		t.Fatal("truncated receive does not hold the message's start")
	}
	got := drain(t, b.rx, 1, a.tx)
	if got[0].OpContext != 2 || string(next[:got[0].Len]) != "after" {
		t.Fatalf("next message: %+v %q", got[0], next[:got[0].Len])
	}
}

// TestRDMSARToCSizesLimit: FI_OFI_RXM_SAR_LIMIT raises the SAR limit as in
// rxm (messages up to it go by SAR, still whole).
func TestRDMSARLimitVariable(t *testing.T) {
	t.Setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0")
	t.Setenv("FI_OFI_RXM_SAR_LIMIT", "1048576")
	a, b := openRDM(t), openRDM(t)
	ab := a.insert(b.name)
	for i, n := range []int{500000, 1048576, 1048577} {
		msg := opsPattern(n, 'm'+byte(i))
		buf := make([]byte, n)
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
		if err := a.ep.Send(msg, nil, ab, i); err != nil {
			t.Fatal(err)
		}
		drain(t, b.rx, 1, a.tx)
		drain(t, a.tx, 1, b.rx)
		if !bytes.Equal(buf, msg) {
			t.Fatalf("%d bytes: message differs", n)
		}
	}
}

// TestRDMDeliveryComplete: a send with FI_DELIVERY_COMPLETE completes only
// once the target has placed it (the target's ACK), while one with
// FI_TRANSMIT_COMPLETE completes when it is sent; a write completes once
// the target acknowledged it, and a send fenced behind it (FI_FENCE) is
// held back until then.
func TestRDMDeliveryComplete(t *testing.T) {
	a, b := openRDMOps(t), openRDMOps(t)
	ab := a.insert(b.name)
	mem := make([]byte, 64)
	mr, err := b.dom.RegMR(mem, fabric.FlagRemoteWrite|fabric.FlagRemoteRead, 0, 0x77, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Close() })
	rbuf := make([]byte, 64)
	// Warm up: the connection exists and b's side of it is idle.
	for i := 0; i < 2; i++ {
		ctx := new(int)
		b.post("fi_recv", func() error { return b.ep.Recv(rbuf, nil, fabric.AddrUnspec, ctx) })
		sctx := new(int)
		a.post("fi_send", func() error { return a.ep.Send([]byte("warm"), nil, ab, sctx) })
		for _, ok := a.done[sctx]; !ok; _, ok = a.done[sctx] {
			a.pump()
			b.pump()
		}
		b.waitOK("fi_recv", ctx)
		delete(a.done, sctx)
	}
	quiet := func(what string, ctxs ...any) {
		t.Helper()
		for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
			a.pump()
		}
		for _, c := range ctxs {
			if _, ok := a.done[c]; ok {
				t.Fatalf("%s completed while the target made no progress", what)
			}
		}
	}
	for _, lv := range []struct {
		name  string
		flags fabric.Flags
		early bool
	}{
		{"FI_TRANSMIT_COMPLETE", fabric.FlagTransmitComplete, true},
		{"FI_DELIVERY_COMPLETE", fabric.FlagDeliveryComplete, false},
	} {
		rctx, sctx := new(int), new(int)
		b.post("fi_recv", func() error { return b.ep.Recv(rbuf, nil, fabric.AddrUnspec, rctx) })
		a.post("fi_sendmsg", func() error {
			return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{[]byte(lv.name)}, Addr: ab, Context: sctx},
				lv.flags|fabric.FlagCompletion)
		})
		if lv.early {
			a.waitOK(lv.name, sctx)
		} else {
			quiet(lv.name, sctx)
		}
		b.waitOK("fi_recv "+lv.name, rctx)
		if !lv.early {
			a.waitOK(lv.name, sctx)
		}
	}
	wctx, fctx := new(int), new(int)
	a.post("fi_write", func() error { return a.ep.RMAWrite([]byte("written"), nil, ab, 0, 0x77, wctx) })
	rctx := new(int)
	b.post("fi_recv", func() error { return b.ep.Recv(rbuf, nil, fabric.AddrUnspec, rctx) })
	a.post("fi_sendmsg FI_FENCE", func() error {
		return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{[]byte("fenced")}, Addr: ab, Context: fctx},
			fabric.FlagFence|fabric.FlagCompletion)
	})
	quiet("fi_write and the fenced send", wctx, fctx)
	for _, ok := b.done[rctx]; !ok; _, ok = b.done[rctx] {
		b.pump()
		a.pump()
	}
	a.waitOK("fi_write", wctx)
	a.waitOK("fenced send", fctx)
	if string(rbuf[:6]) != "fenced" || string(mem[:7]) != "written" {
		t.Fatalf("received %q, memory %q", rbuf[:6], mem[:7])
	}
}

// TestRDMWritedataWaitsForCQRoom: under FI_RM_ENABLED a writedata whose
// remote CQ data finds the target's CQ full stays in the stream (the
// write is neither placed nor acknowledged) until the target application
// reads its CQ; then it completes, and no completion is lost.
func TestRDMWritedataWaitsForCQRoom(t *testing.T) {
	a := openRDMOps(t)
	b := openRDMOps(t, 1)
	ab := a.insert(b.name)
	mem := make([]byte, 16)
	mr, err := b.dom.RegMR(mem, fabric.FlagRemoteWrite, 0, 0x31, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Close() })
	c1, c2 := new(int), new(int)
	a.post("fi_writedata 1", func() error { return a.ep.RMAWriteData([]byte("1"), nil, 101, ab, 0, 0x31, c1) })
	a.post("fi_writedata 2", func() error { return a.ep.RMAWriteData([]byte("2"), nil, 102, ab, 1, 0x31, c2) })
	// b progresses without reading its CQ: room for one entry only.
	for end := time.Now().Add(150 * time.Millisecond); time.Now().Before(end); {
		a.pump()
		b.cq.Read(nil)
	}
	if _, ok := a.done[c1]; !ok {
		t.Fatal("the first writedata did not complete")
	}
	if _, ok := a.done[c2]; ok || mem[1] != 0 {
		t.Fatalf("the second writedata was placed (%q) or completed while the target CQ was full", mem[:2])
	}
	for deadline := time.Now().Add(5 * time.Second); len(b.remote) < 2; {
		b.pump()
		a.pump()
		if time.Now().After(deadline) {
			t.Fatalf("%d remote CQ data completions within 5 s", len(b.remote))
		}
	}
	a.waitOK("fi_writedata 2", c2)
	if b.remote[0].Data != 101 || b.remote[1].Data != 102 || string(mem[:2]) != "12" {
		t.Fatalf("remote completions %+v, memory %q", b.remote, mem[:2])
	}
}
