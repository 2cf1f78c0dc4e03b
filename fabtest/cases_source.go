package fabtest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

func init() {
	register("fi_cq/source_err_unknown_sender_EADDRNOTAVAIL", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("connectionless only")
		}
		b := tg.open(t, envOpts{caps: fabric.CapSource | fabric.CapSourceErr})
		a := tg.open(t, envOpts{})
		ab := a.insert(b.addr) // b does not know a
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "r"); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("who"), nil, ab, nil) }, a.txcq)
		_, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee == nil || !errors.Is(ee.Err, fabric.ErrAddrNotAvail) || ee.OpContext != "r" || ee.Len != 3 {
			t.Fatalf("unknown source completion = %+v; want FI_EADDRNOTAVAIL", ee)
		}
		if !bytes.Equal(ee.ErrData, a.addr) {
			t.Fatalf("err_data = % x; want the sender's address % x", ee.ErrData, a.addr)
		}
	})
	register("fi_msg/unexpected_from_unknown_then_directed_after_insert", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("connectionless only")
		}
		b := tg.open(t, envOpts{caps: fabric.CapDirectedRecv})
		a := tg.open(t, envOpts{})
		ab := a.insert(b.addr)
		retry(t, "send", func() error { return a.ep.Send([]byte("early"), nil, ab, nil) }, a.txcq)
		waitCQ(t, a.txcq)
		deadline := time.Now().Add(scaled(20 * time.Millisecond))
		for time.Now().Before(deadline) {
			b.rxcq.Read(nil)
		}
		ba := b.insert(a.addr) // the owner resolves the queued message's source now
		buf := make([]byte, 16)
		if err := b.ep.Recv(buf, nil, ba, "directed"); err != nil {
			t.Fatal(err)
		}
		got, ee := waitCQ(t, b.rxcq)
		if ee != nil || got.OpContext != "directed" || string(buf[:got.Len]) != "early" {
			t.Fatalf("directed receive of an early message: %+v %+v", got, ee)
		}
	})
}
