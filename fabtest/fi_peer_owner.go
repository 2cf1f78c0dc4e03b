package fabtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// The fi_peer(3) cases below import real objects of a second provider's
// domain, the owner (Target.Owner; the target itself when nil): its CQ,
// counter and shared receive context, as "EXAMPLE PEER CQ SETUP" and
// "EXAMPLE PEER SRX RECEIVE FLOW" describe, with the test playing the
// composite provider ("provider A") that glues them together. The
// target's endpoint (the peer, "provider B") is bound to FI_PEER imports
// of the owner's CQ, counter and SRX; the owner has an endpoint of its own
// bound to the same SRX and CQ, so that messages arriving over both
// providers are matched from one receive queue.
//
// Addressing: fi_addrs the peer reports (CQ sources, get_msg/get_tag
// sources) are relative to the peer's AV (fi_peer(3) "PEER CQ"); the
// composite makes them the owner's by inserting the peer's remote
// addresses with FI_AV_USER_ID, the user id being the fi_addr the owner
// gives that remote (peerUID). The FI_PEER AV import (fi_av_open with
// fi_peer_av_context), where the peer uses the owner's fi_addrs instead,
// has its own cases (fi_peer_import.go).

// peerUID is the fi_addr under which the composite (the test) knows the
// target's sender: far from the indices the owner's AV hands out.
const peerUID = fabric.Addr(0x5000)

// peerOwnerEnv is one owner/peer arrangement.
type peerOwnerEnv struct {
	t      *testing.T
	tagged bool // the target claims FI_TAGGED

	// Owner side (Target.Owner's provider).
	o     *env             // its domain and AV (o.ep is not used)
	ocq   *fabric.CQ       // the owner's CQ: every completion of both endpoints
	ocntr *fabric.Cntr     // the owner's counter
	osrx  *fabric.SRX      // the owner's shared receive context
	oep   *fabric.Endpoint // the owner's endpoint, bound to osrx and ocq
	os    *env             // an owner-provider sender
	osTo  fabric.Addr      // os's address of oep
	ou    fabric.Addr      // os in the owner's AV

	// Peer side (the target provider).
	p     *env             // its domain and AV (p.ep is not used)
	pcq   *fabric.CQ       // FI_PEER import of ocq
	pcntr *fabric.Cntr     // FI_PEER import of ocntr
	psrx  *fabric.SRX      // FI_PEER import of osrx
	pep   *fabric.Endpoint // the peer's endpoint
	s     *env             // a target-provider sender
	sTo   fabric.Addr      // s's address of pep
	pToS  fabric.Addr      // pep's address of s (inserted with user id peerUID)
}

func (tg Target) owner() Target {
	if tg.Owner != nil {
		return *tg.Owner
	}
	return tg
}

// openPeerOwner builds the arrangement, or skips when the target or the
// owner does not claim what it needs.
func openPeerOwner(t *testing.T, tg Target) *peerOwnerEnv {
	t.Helper()
	return openPeerOwnerCQ(t, tg, 0)
}

// openPeerOwnerCQ is openPeerOwner with the owner's CQs of cqSize entries
// (0: the default).
func openPeerOwnerCQ(t *testing.T, tg Target, cqSize uint64) *peerOwnerEnv {
	t.Helper()
	connectionless(t, tg)
	ot := tg.owner()
	connectionless(t, ot)
	const need = fabric.CapSource | fabric.CapDirectedRecv
	if !tg.claims(need) || !ot.claims(need) {
		t.Skip("needs FI_SOURCE and FI_DIRECTED_RECV on both providers")
	}
	pe := &peerOwnerEnv{t: t, tagged: tg.claims(fabric.CapTagged)}
	pcaps := need
	if pe.tagged {
		pcaps |= fabric.CapTagged
	}

	// The owner: its CQ (o.rxcq), counter, SRX and an endpoint of its own.
	o := ot.open(t, envOpts{caps: need, modify: sharedRxInfo, noEnable: true, cqSize: cqSize})
	pe.o, pe.ocq = o, o.rxcq
	var err error
	if pe.ocntr, err = o.dom.OpenCntr(nil); err != nil {
		t.Fatalf("owner counter: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "owner cntr", pe.ocntr.Close()) })
	// The owner's receive queue serves the composite's capabilities (tagged
	// receives included) whatever its own provider sends.
	rxCaps := fabric.CapMsg | fabric.CapRecv | fabric.CapDirectedRecv
	if pe.tagged {
		rxCaps |= fabric.CapTagged
	}
	if ot.claims(fabric.CapMultiRecv) {
		rxCaps |= fabric.CapMultiRecv
	}
	if pe.osrx, err = o.dom.OpenSRX(&fabric.RxAttr{Caps: rxCaps}, nil); err != nil {
		t.Fatalf("owner SRX: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "owner srx", pe.osrx.Close()) })
	pe.oep = pe.bindEnable(o.dom, o.info, "owner", o.txcq, pe.ocq, nil, pe.osrx, o.av)

	// The peer: imports of the owner's CQ, counter and SRX (FI_PEER).
	pe.p, pe.pcq, pe.pcntr, pe.psrx, pe.pep = pe.importInto(tg, pcaps)

	// Senders of both providers.
	paddr, err := pe.pep.Name()
	if err != nil {
		t.Fatal(err)
	}
	oaddr, err := pe.oep.Name()
	if err != nil {
		t.Fatal(err)
	}
	var scaps fabric.Caps
	if pe.tagged {
		scaps = fabric.CapTagged
	}
	pe.s = tg.open(t, envOpts{caps: scaps})
	pe.sTo = pe.s.insert(paddr)
	pe.pToS = pe.insertUID(pe.s.addr, peerUID)
	pe.os = ot.open(t, envOpts{})
	pe.osTo = pe.os.insert(oaddr)
	pe.ou = o.insert(pe.os.addr)
	if pe.ou == peerUID {
		t.Fatalf("the owner's AV gave %v, the id reserved for the peer's sender", pe.ou)
	}
	return pe
}

// importInto opens a domain of the target and an endpoint on it bound to
// FI_PEER imports of the owner's CQ, counter and SRX.
func (pe *peerOwnerEnv) importInto(tg Target, caps fabric.Caps) (*env, *fabric.CQ, *fabric.Cntr, *fabric.SRX,
	*fabric.Endpoint) {
	t := pe.t
	t.Helper()
	p := tg.open(t, envOpts{caps: caps, modify: sharedRxInfo, noEnable: true})
	pcq, err := p.dom.OpenCQ(&fabric.CQAttr{Flags: fabric.FlagPeer, Peer: pe.ocq.Owner(), Format: fabric.CQFormatTagged})
	if err != nil {
		t.Fatalf("import the owner's CQ: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "peer cq", pcq.Close()) })
	pcntr, err := p.dom.OpenCntr(&fabric.CntrAttr{Flags: fabric.FlagPeer, Peer: pe.ocntr.Owner()})
	if err != nil {
		t.Fatalf("import the owner's counter: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "peer cntr", pcntr.Close()) })
	psrx, err := p.dom.OpenSRX(&fabric.RxAttr{OpFlags: fabric.FlagPeer}, &fabric.PeerSRX{Owner: pe.osrx.Owner()})
	if err != nil {
		t.Fatalf("import the owner's SRX: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "peer srx", psrx.Close()) })
	pep := pe.bindEnable(p.dom, p.info, "peer", pcq, pcq, pcntr, psrx, p.av)
	return p, pcq, pcntr, psrx, pep
}

// bindEnable opens an endpoint sharing a receive context and binds it.
func (pe *peerOwnerEnv) bindEnable(d *fabric.Domain, info *fabric.Info, what string, tx, rx *fabric.CQ,
	cntr *fabric.Cntr, s *fabric.SRX, av *fabric.AV) *fabric.Endpoint {
	t := pe.t
	t.Helper()
	ep, err := d.OpenEndpoint(info)
	if err != nil {
		t.Fatalf("%s endpoint: %v", what, err)
	}
	t.Cleanup(func() { closeOK(t, what+" endpoint", ep.Close()) })
	errs := []error{ep.BindCQ(tx, fabric.FlagTransmit), ep.BindCQ(rx, fabric.FlagRecv), ep.BindSRX(s), ep.BindAV(av)}
	if cntr != nil {
		errs = append(errs, ep.BindCntr(cntr, fabric.FlagSend|fabric.FlagRecv))
	}
	for _, err := range append(errs, ep.Enable()) {
		if err != nil {
			t.Fatalf("%s endpoint: %v", what, err)
		}
	}
	return ep
}

// insertUID inserts addr into the peer's AV with FI_AV_USER_ID uid and
// returns its fi_addr (what pep sends to).
func (pe *peerOwnerEnv) insertUID(addr []byte, uid fabric.Addr) fabric.Addr {
	pe.t.Helper()
	return insertUID(pe.t, pe.p.av, addr, uid)
}

func insertUID(t *testing.T, av *fabric.AV, addr []byte, uid fabric.Addr) fabric.Addr {
	t.Helper()
	fa := []fabric.Addr{uid}
	if n, err := av.Insert([][]byte{addr}, fa, fabric.FlagAVUserID); n != 1 || err != nil {
		t.Fatalf("insert into the peer's AV with FI_AV_USER_ID: %d %v", n, err)
	}
	return fa[0]
}

// drive lists the CQs whose reads drive progress besides the owner's: the
// import (fi_cq_read(peer_cq, NULL, 0), as the owner does for its peers)
// and the senders'.
func (pe *peerOwnerEnv) drive() []*fabric.CQ {
	return []*fabric.CQ{pe.pcq, pe.s.txcq, pe.s.rxcq, pe.os.txcq}
}

// next waits for the next owner CQ entry and its source.
func (pe *peerOwnerEnv) next(what string) (fabric.CQEntry, *fabric.CQErrEntry, fabric.Addr) {
	t := pe.t
	t.Helper()
	ent := make([]fabric.CQEntry, 1)
	src := []fabric.Addr{7}
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		n, err := pe.ocq.ReadFrom(ent, src)
		if n == 1 {
			return ent[0], nil, src[0]
		}
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			if err := pe.ocq.ReadErr(&ee); err != nil {
				t.Fatalf("%s: ReadErr: %v", what, err)
			}
			return fabric.CQEntry{}, &ee, ee.Src
		}
		if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			t.Fatalf("%s: no completion in the owner's CQ: %v", what, err)
		}
		for _, c := range pe.drive() {
			c.Read(nil)
		}
	}
}

// want waits for a successful owner CQ entry with context ctx.
func (pe *peerOwnerEnv) want(what string, ctx any, flags fabric.Flags, buf []byte, msg string,
	src fabric.Addr) fabric.CQEntry {
	pe.t.Helper()
	got, ee, from := pe.next(what)
	if ee != nil {
		pe.t.Fatalf("%s: error completion %+v (%v)", what, ee, ee.Err)
	}
	if got.OpContext != ctx || got.Flags != flags {
		pe.t.Fatalf("%s: completion %+v; want context %v, flags %v", what, got, ctx, flags)
	}
	if buf != nil && (got.Len != uint64(len(msg)) || string(buf[:min(len(buf), int(got.Len))]) != msg) {
		pe.t.Fatalf("%s: %d bytes %q; want %q", what, got.Len, buf[:min(len(buf), int(got.Len))], msg)
	}
	if src != fabric.AddrNotAvail && from != src {
		pe.t.Fatalf("%s: source %v; want %v", what, from, src)
	}
	return got
}

func (pe *peerOwnerEnv) quiet(d time.Duration) {
	pe.t.Helper()
	expectEmpty(pe.t, pe.ocq, scaled(d), pe.drive()...)
}

// sendS sends msg from the target's sender to the peer endpoint (tagged
// with tag when tagged) and waits for the send's own completion.
func (pe *peerOwnerEnv) sendS(tagged bool, tag uint64, msg string) {
	t := pe.t
	t.Helper()
	retry(t, "send to the peer", func() error {
		if tagged {
			return pe.s.ep.TSend([]byte(msg), nil, pe.sTo, tag, nil)
		}
		return pe.s.ep.Send([]byte(msg), nil, pe.sTo, nil)
	}, pe.s.txcq)
	if _, ee := waitCQ(t, pe.s.txcq, pe.pcq); ee != nil {
		t.Fatalf("send %q to the peer: %+v", msg, ee)
	}
}

// sendOS sends msg from the owner-provider sender to the owner's endpoint.
func (pe *peerOwnerEnv) sendOS(msg string) {
	t := pe.t
	t.Helper()
	retry(t, "send to the owner", func() error { return pe.os.ep.Send([]byte(msg), nil, pe.osTo, nil) }, pe.os.txcq)
	if _, ee := waitCQ(t, pe.os.txcq, pe.ocq); ee != nil {
		t.Fatalf("send %q to the owner: %+v", msg, ee)
	}
}

// post posts a receive on the owner's SRX.
func (pe *peerOwnerEnv) post(tagged bool, buf []byte, src fabric.Addr, tag uint64, ctx any) {
	pe.t.Helper()
	var err error
	if tagged {
		err = pe.osrx.TRecv(buf, nil, src, tag, 0, ctx)
	} else {
		err = pe.osrx.Recv(buf, nil, src, ctx)
	}
	if err != nil {
		pe.t.Fatalf("post on the owner's SRX: %v", err)
	}
}

// waitQueued drives progress until a message from src (tag, when tagged)
// is queued as unexpected in the owner's SRX, found with FI_PEEK (which
// leaves it queued); it returns the peek's completion.
func (pe *peerOwnerEnv) waitQueued(what string, tagged bool, src fabric.Addr, tag uint64) fabric.CQEntry {
	t := pe.t
	t.Helper()
	ctx := "peek " + what
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		m := &fabric.RecvMsg{Addr: src, Tag: tag, Context: ctx}
		var err error
		if tagged {
			err = pe.osrx.TRecvMsg(m, fabric.FlagPeek)
		} else {
			err = pe.osrx.RecvMsg(m, fabric.FlagPeek)
		}
		if err != nil {
			t.Fatalf("%s: peek: %v", what, err)
		}
		got, ee, _ := pe.next(what + ": peek")
		if ee == nil {
			if got.OpContext != ctx || got.Flags&fabric.FlagRecv == 0 {
				t.Fatalf("%s: peek gave %+v", what, got)
			}
			return got
		}
		if ee.Err != fabric.ErrNoMsg || ee.OpContext != ctx {
			t.Fatalf("%s: peek gave %+v (%v)", what, ee, ee.Err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the message never reached the owner's SRX", what)
		}
		pe.ocq.Read(nil) // the owner's own endpoint progresses through its CQ
		for _, c := range pe.drive() {
			c.Read(nil)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func recvFlags(tagged bool) fabric.Flags {
	if tagged {
		return fabric.FlagRecv | fabric.FlagTagged
	}
	return fabric.FlagRecv | fabric.FlagMsg
}

// peerOwnerCqCntr: the peer's transmit and receive completions, success
// and error (a truncated receive), land in the owner's CQ through the
// import, with the sources the owner knows; its counter bumps land in the
// owner's counter.
func peerOwnerCqCntr(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	var ee fabric.CQErrEntry
	isErr(t, "readerr on the import", pe.pcq.ReadErr(&ee), fabric.ErrNoSys)
	_, err := pe.pcntr.ReadErr()
	isErr(t, "readerr on the imported counter", err, fabric.ErrNoSys)

	// Transmit: pep -> s.
	sbuf := make([]byte, 16)
	if err := pe.s.ep.Recv(sbuf, nil, fabric.AddrUnspec, "s recv"); err != nil {
		t.Fatal(err)
	}
	retry(t, "peer send", func() error { return pe.pep.Send([]byte("from peer"), nil, pe.pToS, "send") }, pe.pcq)
	pe.want("send completion", "send", fabric.FlagSend|fabric.FlagMsg, nil, "", fabric.AddrNotAvail)
	if got, ee := waitCQ(t, pe.s.rxcq, pe.pcq); ee != nil || string(sbuf[:got.Len]) != "from peer" {
		t.Fatalf("the peer's message: %+v %+v", got, ee)
	}

	// Receive, posted on the owner, arriving over the peer.
	buf := make([]byte, 16)
	pe.post(false, buf, fabric.AddrUnspec, 0, "recv")
	pe.sendS(false, 0, "hello")
	pe.want("receive completion", "recv", recvFlags(false), buf, "hello", peerUID)
	if tg.Progress == fabric.ProgressAuto {
		// The peer progresses by itself: a blocking read of the owner's
		// CQ wakes up for the peer's completion.
		pe.post(false, buf, fabric.AddrUnspec, 0, "sread")
		retry(t, "send", func() error { return pe.s.ep.Send([]byte("sread"), nil, pe.sTo, nil) }, pe.s.txcq)
		ent := make([]fabric.CQEntry, 1)
		if n, err := pe.ocq.SRead(ent, 0, scaled(5*time.Second)); n != 1 || err != nil ||
			ent[0].OpContext != "sread" || string(buf[:ent[0].Len]) != "sread" {
			t.Fatalf("owner sread: %d %v %+v", n, err, ent[0])
		}
		if _, ee := waitCQ(t, pe.s.txcq); ee != nil {
			t.Fatalf("send: %+v", ee)
		}
	}

	// Truncated receive: an error completion in the owner's CQ.
	small := make([]byte, 3)
	pe.post(false, small, fabric.AddrUnspec, 0, "trunc")
	pe.sendS(false, 0, "truncated")
	_, te, _ := pe.next("truncated receive")
	if te == nil || te.Err != fabric.ErrTrunc || te.OpContext != "trunc" || te.Olen != 6 || string(small) != "tru" {
		t.Fatalf("truncated receive: %+v, buffer %q; want FI_ETRUNC, olen 6", te, small)
	}

	// The owner's counter: one send, one receive, one error; reading the
	// import only drives progress.
	want := uint64(2)
	if tg.Progress == fabric.ProgressAuto {
		want = 3
	}
	deadline := time.Now().Add(scaled(2 * time.Second))
	for {
		pe.pcntr.Read()
		v, _ := pe.ocntr.Read()
		e, _ := pe.ocntr.ReadErr()
		if v == want && e == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("owner counter = %d, errors %d; want %d, 1", v, e, want)
		}
	}
	if v, _ := pe.pcntr.Read(); v != 0 {
		t.Fatalf("the imported counter reads %d; want 0 (the value is the owner's)", v)
	}
	pe.quiet(10 * time.Millisecond)
}

// peerOwnerTransmitError: a transmit of the peer that fails (delivery
// complete to an endpoint that closes before receiving it) completes in
// error in the owner's CQ and bumps the owner counter's error value.
//
// A provider may deliver the message before the target closes: one that
// buffers unexpected messages has then processed it, which is what delivery
// complete means (fi_cq(3)), and the send succeeds. The test then sends
// again, to the endpoint now closed, and wants that send to fail.
func peerOwnerTransmitError(t *testing.T, tg Target) {
	if tg.EPType != fabric.EPRDM {
		t.Skip("delivery complete is for reliable endpoints")
	}
	pe := openPeerOwner(t, tg)
	r := tg.open(t, envOpts{})
	to := pe.insertUID(r.addr, peerUID+1)
	m := &fabric.Msg{IOV: [][]byte{[]byte("never received")}, Addr: to, Context: "dc"}
	retry(t, "delivery-complete send", func() error {
		return pe.pep.SendMsg(m, fabric.FlagDeliveryComplete|fabric.FlagCompletion)
	}, pe.pcq)
	if err := r.ep.Close(); err != nil {
		t.Fatal(err)
	}
	ok, ee, _ := pe.next("transmit to a closed endpoint")
	if ee == nil && ok.OpContext == "dc" {
		m.Context = "dc again"
		retry(t, "delivery-complete send to the closed endpoint", func() error {
			return pe.pep.SendMsg(m, fabric.FlagDeliveryComplete|fabric.FlagCompletion)
		}, pe.pcq)
		ok, ee, _ = pe.next("transmit to a closed endpoint")
	}
	if ee == nil || ee.OpContext != m.Context || ee.Flags&fabric.FlagSend == 0 || ee.Err == 0 {
		t.Fatalf("transmit error: %+v (completion %+v); want an error completion for context %v", ee, ok, m.Context)
	}
	deadline := time.Now().Add(scaled(2 * time.Second))
	for {
		pe.pcntr.Read()
		if e, _ := pe.ocntr.ReadErr(); e == 1 {
			break
		}
		if time.Now().After(deadline) {
			e, _ := pe.ocntr.ReadErr()
			t.Fatalf("owner counter errors = %d; want 1", e)
		}
	}
}

// peerOwnerSrxFlow: fi_peer(3) EXAMPLE PEER SRX RECEIVE FLOW with the
// owner's SRX: expected (posted first), unexpected (the peer queues it
// with the owner; the owner's later post starts it) and discarded
// messages, untagged and tagged.
func peerOwnerSrxFlow(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	for _, tagged := range []bool{false, true} {
		if tagged && !pe.tagged {
			continue
		}
		kind := fmt.Sprintf("tagged=%v", tagged)
		const tag = 0x77
		flags := recvFlags(tagged)
		// Expected.
		buf := make([]byte, 32)
		pe.post(tagged, buf, fabric.AddrUnspec, tag, "expected")
		pe.sendS(tagged, tag, "expected message")
		got := pe.want(kind+" expected", "expected", flags, buf, "expected message", peerUID)
		if tagged && got.Tag != tag {
			t.Fatalf("%s: tag %#x", kind, got.Tag)
		}
		// Unexpected: queued with the owner, started by the post.
		pe.sendS(tagged, tag, "unexpected message")
		if pk := pe.waitQueued(kind+" unexpected", tagged, fabric.AddrUnspec, tag); pk.Len != 18 {
			t.Fatalf("%s: peek reports %d bytes; want 18", kind, pk.Len)
		}
		buf = make([]byte, 32)
		pe.post(tagged, buf, fabric.AddrUnspec, tag, "unexpected")
		pe.want(kind+" unexpected", "unexpected", flags, buf, "unexpected message", peerUID)
		// Discard (FI_PEEK|FI_DISCARD): no data, the message is gone.
		pe.sendS(tagged, tag, "discarded")
		pe.waitQueued(kind+" discard", tagged, fabric.AddrUnspec, tag)
		dm := &fabric.RecvMsg{Addr: fabric.AddrUnspec, Tag: tag, Context: "discard"}
		var err error
		if tagged {
			err = pe.osrx.TRecvMsg(dm, fabric.FlagPeek|fabric.FlagDiscard)
		} else {
			err = pe.osrx.RecvMsg(dm, fabric.FlagPeek|fabric.FlagDiscard)
		}
		if err != nil {
			t.Fatalf("%s: discard: %v", kind, err)
		}
		if d, ee, _ := pe.next(kind + " discard"); ee != nil || d.OpContext != "discard" || d.Len != 9 {
			t.Fatalf("%s: discard completion %+v %+v", kind, d, ee)
		}
		buf = make([]byte, 32)
		pe.post(tagged, buf, fabric.AddrUnspec, tag, "after discard")
		pe.quiet(20 * time.Millisecond)
		pe.sendS(tagged, tag, "next")
		pe.want(kind+" after discard", "after discard", flags, buf, "next", peerUID)
		// FI_PEEK|FI_CLAIM, then FI_CLAIM: the claimed message is started
		// for the claiming receive only.
		if !tagged {
			continue
		}
		pe.sendS(tagged, tag, "claimed")
		pe.waitQueued(kind+" claim", tagged, fabric.AddrUnspec, tag)
		cm := &fabric.RecvMsg{Addr: fabric.AddrUnspec, Tag: tag, Context: "claim"}
		if err := pe.osrx.TRecvMsg(cm, fabric.FlagPeek|fabric.FlagClaim); err != nil {
			t.Fatalf("peek|claim: %v", err)
		}
		if c, ee, _ := pe.next("peek|claim"); ee != nil || c.OpContext != "claim" || c.Flags&fabric.FlagClaim == 0 {
			t.Fatalf("peek|claim completion %+v %+v", c, ee)
		}
		other := make([]byte, 32)
		pe.post(tagged, other, fabric.AddrUnspec, tag, "not the claimer")
		pe.quiet(20 * time.Millisecond)
		buf = make([]byte, 32)
		cm.IOV = [][]byte{buf}
		if err := pe.osrx.TRecvMsg(cm, fabric.FlagClaim); err != nil {
			t.Fatalf("claim: %v", err)
		}
		pe.want(kind+" claim", "claim", flags|fabric.FlagClaim, buf, "claimed", peerUID)
		pe.sendS(tagged, tag, "for the other")
		pe.want(kind+" after claim", "not the claimer", flags, other, "for the other", peerUID)
	}
	pe.quiet(10 * time.Millisecond)
}

// peerOwnerSrxDirected: directed receives on the owner's SRX match the
// peer's messages by the fi_addr the owner knows the sender by; a message
// whose source is unknown matches only FI_ADDR_UNSPEC receives until the
// peer's AV learns it (foreach_unspec_addr); a directed receive for one
// sender is passed over by the other's messages.
func peerOwnerSrxDirected(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	// A second target sender, not in the peer's AV yet.
	s2 := tg.open(t, envOpts{})
	paddr, err := pe.pep.Name()
	if err != nil {
		t.Fatal(err)
	}
	s2To := s2.insert(paddr)
	const uid2 = peerUID + 2
	send2 := func(msg string) {
		t.Helper()
		retry(t, "send from s2", func() error { return s2.ep.Send([]byte(msg), nil, s2To, nil) }, s2.txcq)
		if _, ee := waitCQ(t, s2.txcq, pe.pcq); ee != nil {
			t.Fatalf("s2 send: %+v", ee)
		}
	}

	// Directed for s2 first, then any: s's message passes the first by.
	bd, bu := make([]byte, 16), make([]byte, 16)
	pe.post(false, bd, uid2, 0, "for s2")
	pe.post(false, bu, fabric.AddrUnspec, 0, "any")
	pe.sendS(false, 0, "from s")
	pe.want("directed receive passed over", "any", recvFlags(false), bu, "from s", peerUID)
	// s2 is unknown to the peer: its message cannot match the directed
	// receive and waits, queued with the owner with an unknown source.
	send2("from s2")
	pe.waitQueued("unknown source", false, fabric.AddrUnspec, 0)
	pe.quiet(20 * time.Millisecond)
	// The composite learns s2: inserted with the owner's fi_addr, the
	// queued message resolves and starts the directed receive.
	pe.insertUID(s2.addr, uid2)
	pe.want("resolved source", "for s2", recvFlags(false), bd, "from s2", uid2)

	// Unexpected first, directed receive after: matched by the owner's
	// fi_addr of the sender, not by another's.
	pe.sendS(false, 0, "queued")
	pe.waitQueued("directed unexpected", false, peerUID, 0)
	bo := make([]byte, 16)
	pe.post(false, bo, uid2, 0, "wrong sender")
	pe.quiet(20 * time.Millisecond)
	b := make([]byte, 16)
	pe.post(false, b, peerUID, 0, "right sender")
	pe.want("directed unexpected", "right sender", recvFlags(false), b, "queued", peerUID)
	send2("for the other")
	pe.want("second directed", "wrong sender", recvFlags(false), bo, "for the other", uid2)
	pe.quiet(10 * time.Millisecond)
}

// peerOwnerSrxBothProviders: one receive queue, two providers: receives
// posted on the owner's SRX are matched in posting order by messages
// arriving over the owner's provider and over the peer, expected or
// unexpected, and directed receives tell the two senders apart by the
// owner's fi_addrs.
func peerOwnerSrxBothProviders(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	fl := recvFlags(false)
	// Expected: the first message, whichever provider carries it, takes
	// the first receive.
	b1, b2 := make([]byte, 16), make([]byte, 16)
	pe.post(false, b1, fabric.AddrUnspec, 0, "first")
	pe.post(false, b2, fabric.AddrUnspec, 0, "second")
	pe.sendOS("over owner")
	pe.want("owner message, first receive", "first", fl, b1, "over owner", pe.ou)
	pe.sendS(false, 0, "over peer")
	pe.want("peer message, second receive", "second", fl, b2, "over peer", peerUID)

	b1, b2 = make([]byte, 16), make([]byte, 16)
	pe.post(false, b1, fabric.AddrUnspec, 0, "first")
	pe.post(false, b2, fabric.AddrUnspec, 0, "second")
	pe.sendS(false, 0, "peer first")
	pe.want("peer message, first receive", "first", fl, b1, "peer first", peerUID)
	pe.sendOS("owner second")
	pe.want("owner message, second receive", "second", fl, b2, "owner second", pe.ou)

	// Unexpected: both queued in one SRX, taken in arrival order.
	for _, peerFirst := range []bool{true, false} {
		if peerFirst {
			pe.sendS(false, 0, "peer early")
			pe.waitQueued("peer early", false, peerUID, 0)
			pe.sendOS("owner late")
			pe.waitQueued("owner late", false, pe.ou, 0)
		} else {
			pe.sendOS("owner early")
			pe.waitQueued("owner early", false, pe.ou, 0)
			pe.sendS(false, 0, "peer late")
			pe.waitQueued("peer late", false, peerUID, 0)
		}
		b1, b2 = make([]byte, 16), make([]byte, 16)
		pe.post(false, b1, fabric.AddrUnspec, 0, "first")
		g1 := pe.want("first queued", "first", fl, nil, "", fabric.AddrNotAvail)
		pe.post(false, b2, fabric.AddrUnspec, 0, "second")
		g2 := pe.want("second queued", "second", fl, nil, "", fabric.AddrNotAvail)
		w1, w2 := "owner early", "peer late"
		if peerFirst {
			w1, w2 = "peer early", "owner late"
		}
		if string(b1[:g1.Len]) != w1 || string(b2[:g2.Len]) != w2 {
			t.Fatalf("unexpected messages taken as %q, %q; want %q, %q (arrival order)",
				b1[:g1.Len], b2[:g2.Len], w1, w2)
		}
	}

	// Directed: each receive takes its own sender's message.
	bp, bo := make([]byte, 16), make([]byte, 16)
	pe.post(false, bp, peerUID, 0, "peer's")
	pe.post(false, bo, pe.ou, 0, "owner's")
	pe.sendOS("to owner's")
	pe.want("directed owner", "owner's", fl, bo, "to owner's", pe.ou)
	pe.sendS(false, 0, "to peer's")
	pe.want("directed peer", "peer's", fl, bp, "to peer's", peerUID)
	pe.quiet(10 * time.Millisecond)
}

// peerOwnerAV: the owner's AV answers the peer's queries
// (fi_ops_av_owner): its current count and the fi_addr of a local
// endpoint inserted in it.
func peerOwnerAV(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	o := pe.o
	attr, err := o.av.Query()
	if err != nil || attr.Count != 1 {
		t.Fatalf("owner AV query = %+v, %v; want count 1", attr, err)
	}
	if got := o.av.EPAddr(pe.os.ep); got != pe.ou {
		t.Fatalf("ep_addr(owner sender) = %v; want %v", got, pe.ou)
	}
	if got := o.av.EPAddr(pe.oep); got != fabric.AddrNotAvail {
		t.Fatalf("ep_addr of an endpoint not inserted = %v; want FI_ADDR_NOTAVAIL", got)
	}
	oaddr, _ := pe.oep.Name()
	self := o.insert(oaddr)
	if got := o.av.EPAddr(pe.oep); got != self {
		t.Fatalf("ep_addr(owner endpoint) = %v; want %v", got, self)
	}
}

// peerOwnerSrxSizesData: messages of every protocol size of the peer
// (inline, segmented, beyond its bounce buffers), expected and
// unexpected, truncated, and carrying remote CQ data, are placed into and
// completed for the owner's receives; a multi-receive buffer posted on
// the owner serves messages of both providers.
func peerOwnerSrxSizesData(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	max := pe.s.info.EPAttr.MaxMsgSize
	var szs []int
	for _, n := range []int{0, 200, 5000, 70000, 300000} {
		if uint64(n) <= max {
			szs = append(szs, n)
		}
	}
	withData := pe.s.info.DomainAttr.CQDataSize > 0
	for k, n := range szs {
		for _, unexp := range []bool{false, true} {
			for _, tagged := range []bool{false, true} {
				if tagged && !pe.tagged {
					continue
				}
				what := fmt.Sprintf("%d bytes, unexpected=%v, tagged=%v", n, unexp, tagged)
				msg := pattern(make([]byte, n), k)
				const tag = 0x9
				data := uint64(0xd0d0) + uint64(k)
				send := func() {
					t.Helper()
					retry(t, "send "+what, func() error {
						switch {
						case tagged && withData:
							return pe.s.ep.TSendData(msg, nil, data, pe.sTo, tag, nil)
						case tagged:
							return pe.s.ep.TSend(msg, nil, pe.sTo, tag, nil)
						case withData:
							return pe.s.ep.SendData(msg, nil, data, pe.sTo, nil)
						}
						return pe.s.ep.Send(msg, nil, pe.sTo, nil)
					}, pe.s.txcq, pe.pcq)
				}
				buf := make([]byte, n+8)
				if unexp {
					send()
					pe.waitQueued(what, tagged, peerUID, tag)
					pe.post(tagged, buf, fabric.AddrUnspec, tag, what)
				} else {
					pe.post(tagged, buf, fabric.AddrUnspec, tag, what)
					send()
				}
				flags := recvFlags(tagged)
				if withData {
					flags |= fabric.FlagRemoteCQData
				}
				got := pe.want(what, what, flags, buf, string(msg), peerUID)
				if withData && got.Data != data {
					t.Fatalf("%s: remote CQ data %#x; want %#x", what, got.Data, data)
				}
				if _, ee := waitCQ(t, pe.s.txcq, pe.pcq); ee != nil {
					t.Fatalf("%s: send completion %+v", what, ee)
				}
				if n < 2 {
					continue
				}
				// Truncated by one byte.
				short := make([]byte, n-1)
				if unexp {
					send()
					pe.waitQueued(what+" truncated", tagged, peerUID, tag)
					pe.post(tagged, short, fabric.AddrUnspec, tag, "short")
				} else {
					pe.post(tagged, short, fabric.AddrUnspec, tag, "short")
					send()
				}
				_, ee, _ := pe.next(what + " truncated")
				if ee == nil || ee.Err != fabric.ErrTrunc || ee.OpContext != "short" || ee.Olen != 1 ||
					string(short) != string(msg[:n-1]) {
					t.Fatalf("%s truncated: %+v; want FI_ETRUNC with olen 1 and the first %d bytes", what, ee, n-1)
				}
				if _, ee := waitCQ(t, pe.s.txcq, pe.pcq); ee != nil {
					t.Fatalf("%s: send completion %+v", what, ee)
				}
			}
		}
	}

	// FI_MULTI_RECV on the owner: one buffer, messages of both providers.
	if !tg.claims(fabric.CapMultiRecv) || !tg.owner().claims(fabric.CapMultiRecv) {
		return
	}
	if err := pe.osrx.SetOpt(fabric.OptEndpoint, fabric.OptMinMultiRecv, 16); err != nil {
		t.Fatal(err)
	}
	mb := make([]byte, 64)
	if err := pe.osrx.RecvMsg(&fabric.RecvMsg{IOV: [][]byte{mb}, Addr: fabric.AddrUnspec, Context: "multi"},
		fabric.FlagMultiRecv); err != nil {
		skipIfNotSupported(t, "FI_MULTI_RECV on the owner's SRX", err)
	}
	// Each message is received before the next is sent: 10 + 20 + 26
	// bytes leave 8, below the minimum of 16, which releases the buffer.
	sends := []func(){
		func() { pe.sendOS("0123456789") },
		func() { pe.sendS(false, 0, "abcdefghijklmnopqrst") },
		func() { pe.sendOS("ABCDEFGHIJKLMNOPQRSTUVWXYZ") },
	}
	var got []string
	for i, send := range sends {
		send()
		e, ee, _ := pe.next("multi-receive")
		if ee != nil || e.OpContext != "multi" || e.Flags&fabric.FlagRecv == 0 {
			t.Fatalf("multi-receive completion %d: %+v %+v", i, e, ee)
		}
		got = append(got, string(e.Buf[:e.Len]))
		if released := e.Flags&fabric.FlagMultiRecv != 0; released != (i == 2) {
			t.Fatalf("multi-receive completion %d: FI_MULTI_RECV %v (%q)", i, released, got)
		}
	}
	want := []string{"0123456789", "abcdefghijklmnopqrst", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("multi-receive got %q; want %q", got, want)
		}
	}
}

// peerOwnerSrxUnknownSourceTwoPeers: two endpoints of the target, in two
// domains with their own AVs, import the owner's SRX. A message whose
// source is unknown to the endpoint it arrived at is resolved by that
// endpoint's AV only: an insert into the other's AV (foreach_unspec_addr
// runs over the whole queue) leaves it unknown.
func peerOwnerSrxUnknownSourceTwoPeers(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	p2, pcq2, _, _, pep2 := pe.importInto(tg, fabric.CapSource|fabric.CapDirectedRecv)
	addr2, err := pep2.Name()
	if err != nil {
		t.Fatal(err)
	}
	s2 := tg.open(t, envOpts{})
	to := s2.insert(addr2)
	retry(t, "send to the second peer", func() error { return s2.ep.Send([]byte("via pep2"), nil, to, nil) }, s2.txcq)
	if _, ee := waitCQ(t, s2.txcq, pcq2); ee != nil {
		t.Fatalf("send: %+v", ee)
	}
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		// The message waits in the owner's SRX with an unknown source.
		pcq2.Read(nil)
		m := &fabric.RecvMsg{Addr: fabric.AddrUnspec, Context: "peek"}
		if err := pe.osrx.RecvMsg(m, fabric.FlagPeek); err != nil {
			t.Fatal(err)
		}
		got, ee, _ := pe.next("peek")
		if ee == nil {
			if got.OpContext != "peek" || got.Len != 8 {
				t.Fatalf("peek: %+v", got)
			}
			break
		}
		if ee.Err != fabric.ErrNoMsg || time.Now().After(deadline) {
			t.Fatalf("peek: %+v", ee)
		}
	}
	const uidA, uidB = peerUID + 10, peerUID + 11
	// s2 becomes known to the first peer (as uidA), not to the one its
	// message arrived at.
	pe.insertUID(s2.addr, uidA)
	b := make([]byte, 16)
	pe.post(false, b, uidB, 0, "as pep2 knows it")
	insertUID(t, p2.av, s2.addr, uidB)
	got, ee, src := pe.next("resolved by the second peer's AV")
	if ee != nil || got.OpContext != "as pep2 knows it" || string(b[:got.Len]) != "via pep2" || src != uidB {
		t.Fatalf("completion %+v %+v from %v; want context \"as pep2 knows it\" from %v", got, ee, src, uidB)
	}
}

// peerOwnerPeerClosed: a peer endpoint that closes with unexpected
// messages queued in the owner's SRX leaves them deliverable (the data
// was accepted and copied out of the sender's reach); the owner's later
// receive gets them, and closing the owner's SRX afterwards is clean.
func peerOwnerPeerClosed(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	pe.sendS(false, 0, "before close")
	pe.waitQueued("before close", false, peerUID, 0)
	if err := pe.pep.Close(); err != nil {
		t.Fatalf("close the peer endpoint: %v", err)
	}
	buf := make([]byte, 16)
	pe.post(false, buf, fabric.AddrUnspec, 0, "after close")
	pe.want("queued before close", "after close", recvFlags(false), buf, "before close", peerUID)
	pe.quiet(10 * time.Millisecond)
}

// peerOwnerDirectedPeerWithoutCaps: whether a receive is directed is the
// owner's business: a peer endpoint opened without FI_DIRECTED_RECV and
// FI_SOURCE still tells the owner's SRX where each message comes from
// (get_msg's addr), so the owner's directed receives match it.
func peerOwnerDirectedPeerWithoutCaps(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	p3, pcq3, _, _, pep3 := pe.importInto(tg, 0)
	addr3, err := pep3.Name()
	if err != nil {
		t.Fatal(err)
	}
	s3 := tg.open(t, envOpts{})
	to := s3.insert(addr3)
	const uid3 = peerUID + 3
	insertUID(t, p3.av, s3.addr, uid3)
	bo, b := make([]byte, 16), make([]byte, 16)
	pe.post(false, bo, peerUID, 0, "someone else")
	pe.post(false, b, uid3, 0, "from s3")
	retry(t, "send", func() error { return s3.ep.Send([]byte("s3"), nil, to, nil) }, s3.txcq)
	var got fabric.CQEntry
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		pcq3.Read(nil)
		s3.txcq.Read(nil)
		ent := make([]fabric.CQEntry, 1)
		n, err := pe.ocq.Read(ent)
		if n == 1 {
			got = ent[0]
			break
		}
		if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			t.Fatalf("directed receive for the peer's sender: %v", err)
		}
	}
	if got.OpContext != "from s3" || string(b[:got.Len]) != "s3" {
		t.Fatalf("completion %+v; want the receive directed at %v", got, uid3)
	}
}

// peerOwnerSrxConcurrent: messages of both providers arrive while the
// application keeps posting receives on the owner's SRX from another
// goroutine (the peer's progress, the owner's matching and the peer's
// start calls run concurrently): every message is delivered exactly once,
// into one receive, and every receive completes.
func peerOwnerSrxConcurrent(t *testing.T, tg Target) {
	pe := openPeerOwner(t, tg)
	const n = 48 // per provider; the owner's datagrams stay well within socket buffers
	bufs := make([][]byte, 2*n)
	for i := range bufs {
		bufs[i] = make([]byte, 32)
	}
	// Half the receives first, the rest while messages arrive.
	for i := 0; i < n; i++ {
		pe.post(false, bufs[i], fabric.AddrUnspec, 0, i)
	}
	posted := make(chan error, 1)
	go func() {
		for i := n; i < 2*n; i++ {
			if err := pe.osrx.Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
				posted <- err
				return
			}
			time.Sleep(20 * time.Microsecond)
		}
		posted <- nil
	}()
	sent := make(chan error, 2)
	go func() {
		for i := 0; i < n; i++ {
			msg := []byte(fmt.Sprintf("peer %d", i))
			deadline := time.Now().Add(scaled(5 * time.Second))
			for {
				err := pe.s.ep.Send(msg, nil, pe.sTo, nil)
				if err == nil {
					break
				}
				if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
					sent <- err
					return
				}
				pe.s.txcq.Read(nil)
			}
		}
		sent <- nil
	}()
	go func() {
		for i := 0; i < n; i++ {
			msg := []byte(fmt.Sprintf("owner %d", i))
			deadline := time.Now().Add(scaled(5 * time.Second))
			for {
				err := pe.os.ep.Send(msg, nil, pe.osTo, nil)
				if err == nil {
					break
				}
				if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
					sent <- err
					return
				}
				pe.os.txcq.Read(nil)
			}
			time.Sleep(20 * time.Microsecond)
		}
		sent <- nil
	}()
	seen := map[string]int{}
	ctxs := map[int]bool{}
	for len(ctxs) < 2*n {
		got, ee, _ := pe.next(fmt.Sprintf("completion %d of %d", len(ctxs)+1, 2*n))
		if ee != nil {
			t.Fatalf("error completion %+v", ee)
		}
		i, ok := got.OpContext.(int)
		if !ok || ctxs[i] {
			t.Fatalf("completion for context %v (twice or unknown)", got.OpContext)
		}
		ctxs[i] = true
		seen[string(bufs[i][:got.Len])]++
	}
	for k := 0; k < 2; k++ {
		if err := <-sent; err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	if err := <-posted; err != nil {
		t.Fatalf("post: %v", err)
	}
	for i := 0; i < n; i++ {
		for _, m := range []string{fmt.Sprintf("peer %d", i), fmt.Sprintf("owner %d", i)} {
			if seen[m] != 1 {
				t.Fatalf("message %q delivered %d times", m, seen[m])
			}
		}
	}
	// The senders' completions, for a clean close.
	drainTx(t, pe.s.txcq, n, pe.pcq)
	drainTx(t, pe.os.txcq, n, pe.ocq)
}

// peerOwnerFullCQ: with resource management (FI_RM_ENABLED, the default)
// no completion is lost when the owner's CQ is full: a reliable peer keeps
// the messages it cannot complete (the owner's SRX refuses to hand out a
// receive whose completion has no room) and delivers them, in order, as
// the application reads the owner's CQ.
func peerOwnerFullCQ(t *testing.T, tg Target) {
	if tg.EPType != fabric.EPRDM {
		t.Skip("a datagram peer may drop what it cannot complete")
	}
	const cqSize, msgs = 4, 12
	pe := openPeerOwnerCQ(t, tg, cqSize)
	if pe.o.info.DomainAttr.ResourceMgmt == fabric.RMDisabled || pe.p.info.DomainAttr.ResourceMgmt == fabric.RMDisabled {
		t.Skip("resource management disabled")
	}
	bufs := make([][]byte, msgs)
	for i := range bufs {
		bufs[i] = make([]byte, 16)
		pe.post(false, bufs[i], fabric.AddrUnspec, 0, i)
	}
	for i := 0; i < msgs; i++ {
		pe.sendS(false, 0, fmt.Sprintf("m%d", i))
	}
	// Progress without reading the owner's CQ: it fills up, nothing more.
	deadline := time.Now().Add(scaled(30 * time.Millisecond))
	for time.Now().Before(deadline) {
		for _, c := range pe.drive() {
			c.Read(nil)
		}
	}
	for i := 0; i < msgs; i++ {
		got, ee, _ := pe.next(fmt.Sprintf("completion %d", i))
		if ee != nil || got.OpContext != i || string(bufs[i][:got.Len]) != fmt.Sprintf("m%d", i) {
			t.Fatalf("completion %d: %+v %+v (%q)", i, got, ee, bufs[i])
		}
	}
}
