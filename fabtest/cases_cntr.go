package fabtest

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// cntrOwner is a test counter owner (fi_peer(3) PEER COUNTER).
type cntrOwner struct{ ok, errs atomic.Int64 }

func (c *cntrOwner) Inc()    { c.ok.Add(1) }
func (c *cntrOwner) IncErr() { c.errs.Add(1) }

func init() {
	register("fi_cntr/send_recv_counters_count_completions", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("opens extra endpoints that need connectionless addressing")
		}
		a, b, _, _ := tg.pair(t, envOpts{})
		tx, err := a.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec})
		if errors.Is(err, fabric.ErrNoSys) {
			t.Skip("no counters")
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOK(t, "cntr", tx.Close()) })
		rx, err := b.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOK(t, "cntr", rx.Close()) })
		// Fresh endpoints so that counters can be bound before enable.
		txcq := a.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		rxcq := b.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		sep, err := a.dom.OpenEndpoint(a.info)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOK(t, "endpoint", sep.Close()) })
		rep, err := b.dom.OpenEndpoint(b.info)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOK(t, "endpoint", rep.Close()) })
		for _, e := range []error{
			sep.BindCQ(txcq, fabric.FlagTransmit|fabric.FlagRecv|fabric.FlagSelectiveCompletion), sep.BindAV(a.av),
			sep.BindCntr(tx, fabric.FlagSend),
			rep.BindCQ(rxcq, fabric.FlagTransmit|fabric.FlagRecv), rep.BindAV(b.av), rep.BindCntr(rx, fabric.FlagRecv),
		} {
			if e != nil {
				t.Fatal(e)
			}
		}
		isErr(t, "second FI_SEND counter", sep.BindCntr(tx, fabric.FlagSend), fabric.ErrInval)
		isErr(t, "counter bind without flags", sep.BindCntr(tx, 0), fabric.ErrBadFlags)
		if err := sep.Enable(); err != nil {
			t.Fatal(err)
		}
		if err := rep.Enable(); err != nil {
			t.Fatal(err)
		}
		name, _ := rep.Name()
		dst := a.insert(name)
		const n = 5
		for i := 0; i < n; i++ {
			if err := rep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < n; i++ {
			retry(t, "send", func() error { return sep.Send([]byte("c"), nil, dst, nil) }, txcq)
		}
		if err := tx.Wait(n, int(scaled(5*time.Second)/time.Millisecond)); err != nil {
			t.Fatalf("tx counter wait: %v", err)
		}
		if err := rx.Wait(n, int(scaled(5*time.Second)/time.Millisecond)); err != nil {
			v, _ := rx.Read()
			t.Fatalf("rx counter wait: %v (value %d)", err, v)
		}
		expectEmpty(t, txcq, scaled(5*time.Millisecond))
	})
	register("fi_peer/import_cntr_increments_owner", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("opens extra endpoints that need connectionless addressing")
		}
		a, _, ab, _ := tg.pair(t, envOpts{})
		owner := &cntrOwner{}
		pc, err := a.dom.OpenCntr(&fabric.CntrAttr{Flags: fabric.FlagPeer, Peer: owner})
		if errors.Is(err, fabric.ErrNoSys) {
			t.Skip("no counters")
		}
		if err != nil {
			t.Fatalf("import counter: %v", err)
		}
		t.Cleanup(func() { closeOK(t, "cntr", pc.Close()) })
		txcq := a.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		ep, err := a.dom.OpenEndpoint(a.info)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOK(t, "endpoint", ep.Close()) })
		for _, e := range []error{ep.BindCQ(txcq, fabric.FlagTransmit|fabric.FlagRecv), ep.BindAV(a.av),
			ep.BindCntr(pc, fabric.FlagSend), ep.Enable()} {
			if e != nil {
				t.Fatal(e)
			}
		}
		_, err = pc.ReadErr()
		isErr(t, "readerr on an imported counter", err, fabric.ErrNoSys)
		isErr(t, "set on an imported counter", pc.Set(1), fabric.ErrNoSys)
		retry(t, "send", func() error { return ep.Send([]byte("p"), nil, ab, nil) }, txcq)
		deadline := time.Now().Add(scaled(2 * time.Second))
		for owner.ok.Load() == 0 && time.Now().Before(deadline) {
			pc.Read()
		}
		if owner.ok.Load() != 1 || owner.errs.Load() != 0 {
			t.Fatalf("owner counter = %d ok, %d err; want 1, 0", owner.ok.Load(), owner.errs.Load())
		}
	})
}
