package chaos_test

import (
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
)

// sendOne sends payload i from a to b and returns what the send
// completed with (nil or the error completion's Err) and whether it
// arrived (b has a receive posted for it, read within wait).
func sendOne(t *testing.T, a, b *node, i int, wait time.Duration) (error, bool) {
	t.Helper()
	buf := make([]byte, 64)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, i); err != nil {
		t.Fatal(err)
	}
	if err := a.ep.Send(payload(i), nil, a.peer, i); err != nil {
		t.Fatalf("send %d: %v", i, err)
	}
	tx := drain(t, a.txcq, 1, 5*time.Second)
	var res error
	switch {
	case len(tx.errs) == 1:
		res = tx.errs[0].Err
		if tx.errs[0].OpContext != i {
			t.Fatalf("error completion context %v, want %d", tx.errs[0].OpContext, i)
		}
	case len(tx.ok) != 1:
		t.Fatalf("send %d: no completion within 5 s", i)
	}
	rx := drain(t, b.rxcq, 1, wait)
	if len(rx.ok) == 1 && payloadOf(buf) != uint32(i) {
		t.Fatalf("received %d, want %d", payloadOf(buf), i)
	}
	if len(rx.ok) == 0 {
		// The receive stays posted: cancel it so that it does not
		// take a later message.
		if err := b.ep.Cancel(i); err != nil {
			t.Fatalf("cancel receive %d: %v", i, err)
		}
		if got := drain(t, b.rxcq, 1, 5*time.Second); len(got.errs) != 1 || !errors.Is(got.errs[0].Err, fabric.ErrCanceled) {
			t.Fatalf("canceled receive: %+v", got)
		}
	}
	return res, len(rx.ok) == 1
}

// TestKill: once a peer is killed, transmits to it, and its own, complete
// at once with ErrCut on RDM (no message arrives), and are dropped on
// DGRAM (the send completes, nothing arrives); Heal revives it. The hook
// has no fault configured: the controls work on a transparent hook.
func TestKill(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.prov+"/"+tg.ept.String(), func(t *testing.T) {
			h, a, b := pair(t, tg.prov, tg.ept, 0, nil)
			if err, ok := sendOne(t, a, b, 0, 5*time.Second); err != nil || !ok {
				t.Fatalf("before the kill: %v, arrived %v", err, ok)
			}
			h.Kill(b.name)
			start := time.Now()
			for i, dir := range [][2]*node{{a, b}, {b, a}} {
				err, ok := sendOne(t, dir[0], dir[1], 1+i, 50*time.Millisecond)
				switch {
				case ok:
					t.Fatalf("direction %d: a message reached or left the killed peer", i)
				case tg.ept == fabric.EPDgram && err != nil:
					t.Fatalf("direction %d: datagram send to a killed peer completed with %v, want success (dropped)", i, err)
				case tg.ept != fabric.EPDgram && !errors.Is(err, chaos.ErrCut):
					t.Fatalf("direction %d: completed with %v, want %v", i, err, chaos.ErrCut)
				}
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the kill took %v to surface", d)
			}
			if s := h.Stats(); s.Cut != 2 {
				t.Fatalf("Stats().Cut = %d, want 2", s.Cut)
			}
			if tg.ept != fabric.EPDgram {
				if _, e := cntr(t, a.tx); e != 1 {
					t.Fatalf("send counter errors %d, want 1", e)
				}
			}
			h.Heal()
			if err, ok := sendOne(t, a, b, 3, 5*time.Second); err != nil || !ok {
				t.Fatalf("after Heal: %v, arrived %v", err, ok)
			}
		})
	}
}

// TestPartition: for the partition's duration, transmits between its
// members and the others are cut (both ways, both endpoints being the
// hook's); afterwards they flow again by themselves.
func TestPartition(t *testing.T) {
	const d = time.Second
	for _, tg := range targets {
		t.Run(tg.prov+"/"+tg.ept.String(), func(t *testing.T) {
			t.Parallel()
			h, a, b := pair(t, tg.prov, tg.ept, 0, nil)
			start := time.Now()
			h.Partition(d, a.name)
			for i, dir := range [][2]*node{{a, b}, {b, a}} {
				err, ok := sendOne(t, dir[0], dir[1], i, 10*time.Millisecond)
				if time.Since(start) >= d {
					t.Fatalf("sending twice took over %v: the partition ended before it could be checked", d)
				}
				if ok || (tg.ept == fabric.EPDgram) != (err == nil) || err != nil && !errors.Is(err, chaos.ErrCut) {
					t.Fatalf("direction %d during the partition: %v, arrived %v", i, err, ok)
				}
			}
			time.Sleep(time.Until(start.Add(d + 10*time.Millisecond)))
			for i, dir := range [][2]*node{{a, b}, {b, a}} {
				if err, ok := sendOne(t, dir[0], dir[1], 2+i, 5*time.Second); err != nil || !ok {
					t.Fatalf("direction %d after the partition: %v, arrived %v", i, err, ok)
				}
			}
			if s := h.Stats(); s.Cut != 2 {
				t.Fatalf("Stats().Cut = %d, want 2", s.Cut)
			}
		})
	}
}

// msgPair opens tcp FI_EP_MSG through a new hook of configuration cfg and
// connects a client to a server endpoint; both are nodes whose peer is
// FI_ADDR_UNSPEC.
func msgPair(t *testing.T, cfg *chaos.Config) (*chaos.Hook, *node, *node) {
	t.Helper()
	hints := fabric.AllocInfo()
	hints.Caps = fabric.CapMsg
	hints.EPAttr.Type = fabric.EPMsg
	hints.FabricAttr.ProvName = "tcp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, hints)
	if err != nil {
		t.Fatal(err)
	}
	info := infos[0]
	fab, h, err := chaos.Open(info, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var closers []func() error
	t.Cleanup(func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil && !errors.Is(err, fabric.ErrClosed) {
				t.Errorf("close: %v", err)
			}
		}
	})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	closers = append(closers, fab.Close)
	dom, err := fab.OpenDomain(info)
	must(err)
	closers = append(closers, dom.Close)
	event := func(eq *fabric.EQ, want fabric.EventType) fabric.EQEntry {
		t.Helper()
		ev, err := eq.SRead(5*time.Second, 0)
		if err != nil || ev.Event != want {
			t.Fatalf("event %v %v, want %v", ev.Event, err, want)
		}
		return ev
	}
	newNode := func(ep *fabric.Endpoint, eq *fabric.EQ) *node {
		n := &node{ep: ep, peer: fabric.AddrUnspec}
		for _, q := range []**fabric.CQ{&n.txcq, &n.rxcq} {
			*q, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged, Size: 64})
			must(err)
			closers = append(closers, (*q).Close)
		}
		for _, c := range []**fabric.Cntr{&n.tx, &n.rx} {
			*c, err = dom.OpenCntr(&fabric.CntrAttr{})
			must(err)
			closers = append(closers, (*c).Close)
		}
		closers = append(closers, ep.Close)
		must(ep.BindEQ(eq))
		must(ep.BindCQ(n.txcq, fabric.FlagTransmit))
		must(ep.BindCQ(n.rxcq, fabric.FlagRecv))
		must(ep.BindCntr(n.tx, fabric.FlagSend))
		must(ep.BindCntr(n.rx, fabric.FlagRecv))
		return n
	}
	seq, err := fab.OpenEQ(nil)
	must(err)
	closers = append(closers, seq.Close)
	ceq, err := fab.OpenEQ(nil)
	must(err)
	closers = append(closers, ceq.Close)
	pep, err := fab.OpenPassiveEndpoint(info)
	must(err)
	closers = append(closers, pep.Close)
	must(pep.Bind(seq, 0))
	must(pep.Listen())
	addr, err := pep.Name()
	must(err)
	cep, err := dom.OpenEndpoint(info)
	must(err)
	client := newNode(cep, ceq)
	must(cep.Connect(addr, nil))
	req := event(seq, fabric.EventConnReq)
	sep, err := dom.OpenEndpoint(req.Info)
	must(err)
	server := newNode(sep, seq)
	must(sep.Accept(nil))
	if ev := event(seq, fabric.EventConnected); ev.FID != sep {
		t.Fatalf("FI_CONNECTED about %T, not the server endpoint", ev.FID)
	}
	if ev := event(ceq, fabric.EventConnected); ev.FID != cep {
		t.Fatalf("FI_CONNECTED about %T, not the client endpoint", ev.FID)
	}
	client.name, err = cep.Name()
	must(err)
	server.name, err = sep.Name()
	must(err)
	return h, client, server
}

// TestKillMSG: on a connected FI_EP_MSG endpoint the destination is the
// connected peer: killing it fails the transmits of both sides (the
// server's own address is the one killed) with ErrCut; a fault-free hook
// passes data until then.
func TestKillMSG(t *testing.T) {
	h, c, s := msgPair(t, nil)
	if err, ok := sendOne(t, c, s, 0, 5*time.Second); err != nil || !ok {
		t.Fatalf("before the kill: %v, arrived %v", err, ok)
	}
	peer, err := c.ep.Peer()
	if err != nil {
		t.Fatal(err)
	}
	h.Kill(peer)
	for i, dir := range [][2]*node{{c, s}, {s, c}} {
		if err, ok := sendOne(t, dir[0], dir[1], 1+i, 50*time.Millisecond); ok || !errors.Is(err, chaos.ErrCut) {
			t.Fatalf("direction %d after the kill: %v, arrived %v", i, err, ok)
		}
	}
}

// TestFaultErrorMSG: injected errors on FI_EP_MSG: the transmits the
// stream picks fail, the others arrive in order.
func TestFaultErrorMSG(t *testing.T) {
	const n, seed, rate = 32, 7, 0.25
	want := draws(seed, rate, n)
	h, c, s := msgPair(t, &chaos.Config{Seed: seed, Error: rate})
	bufs := sendAll(t, c, s, n)
	tx := drain(t, c.txcq, n, 10*time.Second)
	failed := indexes(n, func(i int) bool { return want[i] })
	if len(tx.errs) != len(failed) || len(tx.ok) != n-len(failed) {
		t.Fatalf("%d completions, %d errors; want %d, %d", len(tx.ok), len(tx.errs), n-len(failed), len(failed))
	}
	for k, e := range tx.errs {
		if e.OpContext != failed[k] || !errors.Is(e.Err, chaos.ErrInjected) {
			t.Fatalf("error completion %d: %+v, want context %d", k, e, failed[k])
		}
	}
	if got := received(t, s, bufs, n-len(failed)); !equal(got, indexes(n, func(i int) bool { return !want[i] })) {
		t.Fatalf("received %v", got)
	}
	if st := h.Stats(); st.Errors != uint64(len(failed)) {
		t.Fatalf("Stats().Errors = %d", st.Errors)
	}
}

// TestConfigure: faults set for one endpoint's address apply to its
// transmits only (the hook has none of its own), nil takes them back,
// and an invalid configuration is FI_EINVAL.
func TestConfigure(t *testing.T) {
	h, a, b := pair(t, "udp", fabric.EPDgram, 0, nil)
	if err := h.Configure(a.name, &chaos.Config{Drop: 1}); err != nil {
		t.Fatal(err)
	}
	if err, ok := sendOne(t, a, b, 0, 50*time.Millisecond); err != nil || ok {
		t.Fatalf("a's send with Drop 1: %v, arrived %v", err, ok)
	}
	if err, ok := sendOne(t, b, a, 1, 5*time.Second); err != nil || !ok {
		t.Fatalf("b's send: %v, arrived %v", err, ok)
	}
	if err := h.Configure(a.name, &chaos.Config{Dup: 1}); err != nil {
		t.Fatal(err)
	}
	bufs := [][]byte{make([]byte, 64), make([]byte, 64)}
	for j, buf := range bufs {
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, j); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.ep.Send(payload(0), nil, a.peer, 0); err != nil {
		t.Fatal(err)
	}
	if got := received(t, b, bufs, 2); !equal(got, []int{0, 0}) {
		t.Fatalf("a's send with Dup 1 arrived as %v", got)
	}
	if tx := drain(t, a.txcq, 2, 50*time.Millisecond); len(tx.ok) != 1 {
		t.Fatalf("%d completions for one duplicated send", len(tx.ok))
	}
	if err := h.Configure(a.name, nil); err != nil {
		t.Fatal(err)
	}
	if err, ok := sendOne(t, a, b, 2, 5*time.Second); err != nil || !ok {
		t.Fatalf("a's send after Configure(nil): %v, arrived %v", err, ok)
	}
	if err := h.Configure(a.name, &chaos.Config{Delay: 2}); !errors.Is(err, fabric.ErrInval) {
		t.Fatalf("Configure with Delay 2: %v", err)
	}
	if s := h.Stats(); s.Dropped != 1 || s.Duplicated != 1 {
		t.Fatalf("%+v", s)
	}
}

// TestKillHeld: a transmit held (Delay) when its destination is killed
// fails with ErrCut when it falls due, instead of being sent.
func TestKillHeld(t *testing.T) {
	h, a, b := pair(t, "tcp", fabric.EPRDM, 0, &chaos.Config{Delay: 1, DelayTime: 30 * time.Millisecond})
	bufs := sendAll(t, a, b, 2)
	h.Kill(b.name)
	tx := drain(t, a.txcq, 2, 5*time.Second)
	if len(tx.errs) != 2 || !errors.Is(tx.errs[0].Err, chaos.ErrCut) || !errors.Is(tx.errs[1].Err, chaos.ErrCut) {
		t.Fatalf("held sends to a peer killed meanwhile: %+v", tx)
	}
	if rx := drain(t, b.rxcq, 1, 50*time.Millisecond); len(rx.ok) != 0 {
		t.Fatalf("a held send reached the killed peer: %v", payloadOf(bufs[0]))
	}
	if s := h.Stats(); s.Cut != 2 || s.Delayed != 2 {
		t.Fatalf("%+v", s)
	}
}
