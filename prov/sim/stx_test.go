package sim_test

import (
	"errors"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

// TestSTXCreditsShared: two endpoints on one shared transmit context of
// size 2 hold its two slots with one send each (a send completes only when
// progress delivers it); a third send, on either, gets FI_EAGAIN; once
// progress completed the sends, the slots are free again. (The suite's
// fi_stx_context size cases need sends that wait for a receive, which sim's
// buffered delivery does not give, and skip on sim.)
func TestSTXCreditsShared(t *testing.T) {
	nw := newNetwork(t, sim.Config{})
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg
	h.EPAttr.Type = fabric.EPRDM
	h.FabricAttr.ProvName = "sim"
	h.FabricAttr.Name = nw.Name()
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err != nil {
		t.Fatal(err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	defer fab.Close()
	dom, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Close()
	av, err := dom.OpenAV(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer av.Close()
	cq, err := dom.OpenCQ(&fabric.CQAttr{Size: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer cq.Close()
	attr := *info.TxAttr
	attr.Size = 2
	x, err := dom.OpenSTX(&attr)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	open := func(shared bool) *fabric.Endpoint {
		i := info.Dup()
		if shared {
			i.EPAttr.TxCtxCnt = fabric.SharedContext
			i.TxAttr.Size = attr.Size // within the context's
		}
		ep, err := dom.OpenEndpoint(i)
		if err != nil {
			t.Fatal(err)
		}
		if shared {
			if err := ep.BindSTX(x); err != nil {
				t.Fatal(err)
			}
		}
		for _, err := range []error{ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv), ep.BindAV(av), ep.Enable()} {
			if err != nil {
				t.Fatal(err)
			}
		}
		return ep
	}
	a, b, dst := open(true), open(true), open(false)
	defer func() {
		for _, ep := range []*fabric.Endpoint{a, b, dst} {
			ep.Close()
		}
	}()
	name, err := dst.Name()
	if err != nil {
		t.Fatal(err)
	}
	to := make([]fabric.Addr, 1)
	if k, err := av.Insert([][]byte{name}, to, 0); k != 1 || err != nil {
		t.Fatalf("av insert: %d, %v", k, err)
	}
	msg := []byte("credit")
	for _, ep := range []*fabric.Endpoint{a, b} {
		if err := ep.Send(msg, nil, to[0], nil); err != nil {
			t.Fatalf("send with a slot free: %v", err)
		}
	}
	for i, ep := range []*fabric.Endpoint{a, b} {
		if err := ep.Send(msg, nil, to[0], nil); !errors.Is(err, fabric.ErrAgain) {
			t.Fatalf("endpoint %d: a third send on a context of size 2: %v, want FI_EAGAIN", i, err)
		}
	}
	// Progress delivers both messages (queued at dst as unexpected) and
	// completes both sends, giving their slots back.
	var ent [8]fabric.CQEntry
	got := 0
	for spins := 0; got < 2; spins++ {
		k, err := cq.Read(ent[:])
		if err != nil && !errors.Is(err, fabric.ErrAgain) {
			t.Fatal(err)
		}
		got += max(k, 0)
		if spins > 1_000_000 {
			t.Fatalf("%d of 2 send completions", got)
		}
	}
	for _, ep := range []*fabric.Endpoint{a, b} {
		if err := ep.Send(msg, nil, to[0], nil); err != nil {
			t.Fatalf("send after the slots came back: %v", err)
		}
	}
}
