package fabtest

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/peer"
)

// The cases below import the owner's AV, AV set and EQ (Target.Owner, the
// target itself when nil) into objects of the target, the peer
// (fi_peer(3) "PEER AV", "PEER AV SET", "PEER EQ"), with the test playing
// the composite that knows, for each remote, its address on each
// provider: its address book maps the owner's addresses to the peer's
// (peer.AVContext.Addr).

// addrBook is the composite's table from an owner's address to the
// peer's address of the same remote.
type addrBook struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (b *addrBook) add(owner, peerAddr []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string][]byte{}
	}
	b.m[string(owner)] = peerAddr
}

// conv is peer.AVContext.Addr: nil for a remote the peer cannot reach.
func (b *addrBook) conv(owner []byte) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[string(owner)]
}

// peerAVEnv is an owner AV imported into a peer's AV.
type peerAVEnv struct {
	o    *env             // owner: its domain and AV
	p    *env             // peer: its domain (p.av and p.ep are not used)
	imp  *fabric.AV       // the peer's AV importing o.av
	pep  *fabric.Endpoint // a peer endpoint bound to imp
	pcq  *fabric.CQ       // pep's CQ
	s    *env             // a remote of the peer's provider
	os   *env             // the same remote on the owner's provider
	book *addrBook
}

func openPeerAV(t *testing.T, tg Target) *peerAVEnv {
	t.Helper()
	connectionless(t, tg)
	ot := tg.owner()
	connectionless(t, ot)
	if !tg.claims(fabric.CapSource) {
		t.Skip("needs FI_SOURCE")
	}
	pe := &peerAVEnv{book: &addrBook{}}
	pe.o = ot.open(t, envOpts{})
	pe.p = tg.open(t, envOpts{caps: fabric.CapSource})
	pe.s = tg.open(t, envOpts{})
	pe.os = ot.open(t, envOpts{})
	pe.book.add(pe.os.addr, pe.s.addr)
	var err error
	pe.imp, err = pe.p.dom.OpenAV(&fabric.AVAttr{Flags: fabric.FlagPeer,
		Peer: &peer.AVContext{AV: pe.o.av, Addr: pe.book.conv}})
	if err != nil {
		t.Fatalf("fi_av_open(FI_PEER): %v", err)
	}
	t.Cleanup(func() { closeOK(t, "imported av", pe.imp.Close()) })
	pe.pcq = pe.p.openCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
	pe.pep = pe.p.bareEndpoint()
	for _, err := range []error{pe.pep.BindCQ(pe.pcq, fabric.FlagTransmit|fabric.FlagRecv), pe.pep.BindAV(pe.imp),
		pe.pep.Enable()} {
		if err != nil {
			t.Fatalf("peer endpoint on the imported AV: %v", err)
		}
	}
	return pe
}

// roundTrip sends from the peer endpoint to the owner's fi_addr dest,
// which must reach the remote s, and back from s, and returns the source
// the peer's completion reports for s's message.
func (pe *peerAVEnv) roundTrip(t *testing.T, dest fabric.Addr, msg string) fabric.Addr {
	t.Helper()
	pname, err := pe.pep.Name()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	retry(t, "post on s", func() error { return pe.s.ep.Recv(buf, nil, fabric.AddrUnspec, nil) }, pe.s.rxcq)
	retry(t, "send from the peer to an owner's fi_addr", func() error {
		return pe.pep.Send([]byte(msg), nil, dest, nil)
	}, pe.pcq)
	if got, ee := waitCQ(t, pe.s.rxcq, pe.pcq); ee != nil || string(buf[:got.Len]) != msg {
		t.Fatalf("s received %q (%+v); want %q", buf[:got.Len], ee, msg)
	}
	if _, ee := waitCQ(t, pe.pcq, pe.s.rxcq); ee != nil {
		t.Fatalf("peer send: %+v", ee)
	}
	back := pe.s.insert(pname)
	rbuf := make([]byte, 64)
	retry(t, "post on the peer", func() error { return pe.pep.Recv(rbuf, nil, fabric.AddrUnspec, nil) }, pe.pcq)
	retry(t, "send back", func() error { return pe.s.ep.Send([]byte("re:"+msg), nil, back, nil) }, pe.s.txcq)
	got, src := waitFrom(t, "the peer's receive", pe.pcq, pe.s.txcq)
	if string(rbuf[:got.Len]) != "re:"+msg {
		t.Fatalf("the peer received %q; want %q", rbuf[:got.Len], "re:"+msg)
	}
	if _, ee := waitCQ(t, pe.s.txcq, pe.pcq); ee != nil {
		t.Fatalf("send back: %+v", ee)
	}
	if err := pe.s.av.Remove([]fabric.Addr{back}, 0); err != nil {
		t.Fatal(err)
	}
	return src
}

// peerImportAvOwnerFiAddrsValidAtPeer: an fi_addr the owner's AV returns
// names the same remote in the peer's transfers, the peer's completions
// report the owner's fi_addr as the source, ep_addr answers through the
// import, and a remote the peer cannot reach has no address there.
func peerImportAvOwnerFiAddrsValidAtPeer(t *testing.T, tg Target) {
	pe := openPeerAV(t, tg)
	unreachable := pe.o.insert(pe.o.addr) // the book has no peer address for it
	r := pe.o.insert(pe.os.addr)
	if r == unreachable {
		t.Fatalf("two inserts gave one fi_addr %v", r)
	}
	buf := make([]byte, 64)
	n, err := pe.imp.Lookup(r, buf)
	if err != nil || !bytes.Equal(buf[:n], pe.s.addr) {
		t.Fatalf("lookup of the owner's fi_addr %v in the import = % x, %v; want the peer's address % x",
			r, buf[:n], err, pe.s.addr)
	}
	_, err = pe.imp.Lookup(unreachable, buf)
	isErr(t, "lookup of a remote the peer cannot reach", err, fabric.ErrInval)
	if src := pe.roundTrip(t, r, "one fi_addr"); src != r {
		t.Fatalf("the peer's completion source = %v; want the owner's fi_addr %v", src, r)
	}
	// ep_addr: the owner's for the owner's endpoint, the import's (the
	// owner's fi_addr) for the peer's endpoint of the same remote.
	if got := pe.o.av.EPAddr(pe.os.ep); got != r {
		t.Fatalf("owner ep_addr = %v; want %v", got, r)
	}
	if got := pe.imp.EPAddr(pe.s.ep); got != r {
		t.Fatalf("ep_addr through the import = %v; want the owner's fi_addr %v", got, r)
	}
	if got := pe.imp.EPAddr(pe.pep); got != fabric.AddrNotAvail {
		t.Fatalf("ep_addr of an endpoint the owner never inserted = %v; want FI_ADDR_NOTAVAIL", got)
	}
	// query: the owner's attributes, as the peer reads them.
	var owner peer.AVOwner = pe.o.av
	if q, err := owner.Query(); err != nil || q.Count != 2 || q.Type != pe.imp.Attr().Type {
		t.Fatalf("owner query = %+v, %v; want 2 addresses of type %v", q, err, pe.imp.Attr().Type)
	}
}

// peerImportAvFollowsOwner: the import follows the owner's removals and
// inserts (the same fi_addr taken again by another remote) and reports
// the owner's FI_AV_USER_ID ids as sources.
func peerImportAvFollowsOwner(t *testing.T, tg Target) {
	pe := openPeerAV(t, tg)
	r := pe.o.insert(pe.os.addr)
	if err := pe.o.av.Remove([]fabric.Addr{r}, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	_, err := pe.imp.Lookup(r, buf)
	isErr(t, "lookup in the import after the owner's removal", err, fabric.ErrInval)
	const uid = fabric.Addr(0x7700)
	if got := insertUID(t, pe.o.av, pe.os.addr, uid); got != r {
		t.Fatalf("reinsert gave %v; want the freed fi_addr %v", got, r)
	}
	if src := pe.roundTrip(t, r, "user id"); src != uid {
		t.Fatalf("the peer's completion source = %v; want the owner's user id %v", src, uid)
	}
	// A second remote of the peer's provider, inserted by the owner after
	// the import was opened, is reachable at its new owner fi_addr.
	s2 := tg.owner().open(t, envOpts{})
	pe.book.add(s2.addr, pe.s.addr)
	r2 := pe.o.insert(s2.addr)
	if n, err := pe.imp.Lookup(r2, buf); err != nil || !bytes.Equal(buf[:n], pe.s.addr) {
		t.Fatalf("lookup of a later insert = % x, %v", buf[:n], err)
	}
	if q, err := pe.imp.Query(); err != nil || q.Count != 2 {
		t.Fatalf("the import's query = %+v, %v; want 2 addresses", q, err)
	}
}

// peerImportAvErrors: fi_av_open's FI_PEER errors; the import takes no
// inserts or removals of its own; the owner cannot close first.
func peerImportAvErrors(t *testing.T, tg Target) {
	connectionless(t, tg)
	ot := tg.owner()
	connectionless(t, ot)
	o := ot.open(t, envOpts{})
	p := tg.open(t, envOpts{})
	ctx := &peer.AVContext{AV: o.av}
	for _, c := range []struct {
		name string
		attr fabric.AVAttr
	}{
		{"FI_PEER without a context", fabric.AVAttr{Flags: fabric.FlagPeer}},
		{"a context without FI_PEER", fabric.AVAttr{Peer: ctx}},
		{"a context without an AV", fabric.AVAttr{Flags: fabric.FlagPeer, Peer: &peer.AVContext{}}},
		{"another type than the owner's", fabric.AVAttr{Flags: fabric.FlagPeer, Peer: ctx, Type: fabric.AVMap}},
	} {
		if c.name == "another type than the owner's" && o.av.Attr().Type == fabric.AVMap {
			continue
		}
		if a, err := p.dom.OpenAV(&c.attr); !errors.Is(err, fabric.ErrInval) {
			t.Errorf("%s: fi_av_open = %v, %v; want EINVAL", c.name, a, err)
		}
	}
	imp, err := p.dom.OpenAV(&fabric.AVAttr{Flags: fabric.FlagPeer, Peer: ctx})
	if err != nil {
		t.Fatal(err)
	}
	_, err = imp.Insert([][]byte{p.addr}, nil, 0)
	isErr(t, "insert into an import", err, fabric.ErrNoSys)
	isErr(t, "remove from an import", imp.Remove([]fabric.Addr{0}, 0), fabric.ErrNoSys)
	_, err = imp.InsertSvc("127.0.0.1", "1", nil, 0)
	isErr(t, "insertsvc into an import", err, fabric.ErrNoSys)
	av, err := ot.open(t, envOpts{}).dom.OpenAV(nil)
	if err != nil {
		t.Fatal(err)
	}
	imp2, err := p.dom.OpenAV(&fabric.AVAttr{Flags: fabric.FlagPeer, Peer: &peer.AVContext{AV: av}})
	if err != nil {
		t.Fatal(err)
	}
	isErr(t, "close the owner's AV while imported", av.Close(), fabric.ErrBusy)
	if err := imp2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := av.Close(); err != nil {
		t.Fatalf("close the owner's AV after the import: %v", err)
	}
	if err := imp.Close(); err != nil {
		t.Fatal(err)
	}
}

// peerImportAvSetMembers: a peer's AV set imports the owner's set
// (fi_peer_av_set_context): it has the owner's members, fi_addrs of the
// owner's AV that the peer's imported AV resolves; it cannot be changed
// itself, serves as the source of set operations, and holds the owner's
// set open.
func peerImportAvSetMembers(t *testing.T, tg Target) {
	pe := openPeerAV(t, tg)
	unreachable := pe.o.insert(pe.o.addr)
	r := pe.o.insert(pe.os.addr)
	os, err := pe.o.av.OpenSet(&fabric.AVSetAttr{Flags: fabric.FlagUniverse})
	if err != nil {
		t.Fatal(err)
	}
	_, err = pe.imp.OpenSet(&fabric.AVSetAttr{Peer: &peer.AVSetContext{}})
	isErr(t, "a peer set without an owner set", err, fabric.ErrInval)
	_, err = pe.imp.OpenSet(&fabric.AVSetAttr{Peer: &peer.AVSetContext{Set: os}, Flags: fabric.FlagUniverse})
	isErr(t, "a peer set with FI_UNIVERSE", err, fabric.ErrInval)
	ps := openSet(t, pe.imp, &fabric.AVSetAttr{Peer: &peer.AVSetContext{Set: os}})
	wantMembers(t, "imported set", ps, unreachable, r)
	if err := os.Remove(unreachable); err != nil {
		t.Fatal(err)
	}
	wantMembers(t, "imported set after the owner's change", ps, r)
	isErr(t, "insert into an imported set", ps.Insert(r), fabric.ErrNoSys)
	isErr(t, "remove from an imported set", ps.Remove(r), fabric.ErrNoSys)
	isErr(t, "union into an imported set", ps.Union(ps), fabric.ErrNoSys)
	// The peer's own set of the imported AV takes the imported members.
	mine := openSet(t, pe.imp, nil)
	if err := mine.Union(ps); err != nil {
		t.Fatal(err)
	}
	wantMembers(t, "the peer's set after union with the import", mine, r)
	// Every member is reachable from the peer.
	members := make([]fabric.Addr, 4)
	n, err := ps.Members(members)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members[:n] {
		if src := pe.roundTrip(t, m, "member"); src != m {
			t.Fatalf("member %v: the reply's source is %v", m, src)
		}
	}
	isErr(t, "close the owner's set while imported", os.Close(), fabric.ErrBusy)
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Close(); err != nil {
		t.Fatalf("close the owner's set after the import: %v", err)
	}
}

// peerImportEqEventsLandInOwner: a peer's EQ imports the owner's EQ
// (fi_peer_eq_context): reads of the import only drive progress, the
// other EQ calls are ENOSYS, the owner cannot close first, and (for a
// connection-oriented peer) the peer's CM events land in the owner's EQ.
func peerImportEqEventsLandInOwner(t *testing.T, tg Target) {
	ot := tg.owner()
	oinfo := ot.info(t, 0)
	ofab, err := fabric.Open(oinfo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "owner fabric", ofab.Close()) })
	oeq, err := ofab.OpenEQ(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "owner eq", oeq.Close()) })

	info := tg.info(t, 0)
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "peer fabric", fab.Close()) })
	for _, a := range []fabric.EQAttr{
		{Flags: fabric.FlagPeer},
		{Peer: &peer.EQContext{EQ: oeq.Owner()}},
		{Flags: fabric.FlagPeer, Peer: &peer.EQContext{}},
	} {
		if q, err := fab.OpenEQ(&a); !errors.Is(err, fabric.ErrInval) {
			t.Errorf("fi_eq_open(%+v) = %v, %v; want EINVAL", a, q, err)
		}
	}
	peq, err := fab.OpenEQ(&fabric.EQAttr{Flags: fabric.FlagPeer, Peer: &peer.EQContext{EQ: oeq.Owner()}})
	if err != nil {
		t.Fatalf("fi_eq_open(FI_PEER): %v", err)
	}
	t.Cleanup(func() { closeOK(t, "peer eq", peq.Close()) })
	_, err = peq.Read(0)
	isErr(t, "read of the import", err, fabric.ErrAgain)
	var ee fabric.EQErrEntry
	isErr(t, "readerr of the import", peq.ReadErr(&ee), fabric.ErrNoSys)
	_, err = peq.SRead(time.Millisecond, 0)
	isErr(t, "sread of the import", err, fabric.ErrNoSys)
	isErr(t, "write to the import", peq.Write(&fabric.EQEntry{Event: fabric.EventNotify}), fabric.ErrNoSys)
	_, err = peq.WaitFD()
	isErr(t, "wait fd of the import", err, fabric.ErrNoSys)
	isErr(t, "close the owner's EQ while imported", oeq.Close(), fabric.ErrBusy)

	// The owner's operations write into the owner's EQ.
	if err := oeq.Owner().Write(&fabric.EQEntry{Event: fabric.EventNotify, Data: 7}); err != nil {
		t.Fatal(err)
	}
	if ev, ee := waitEvent(t, oeq); ee != nil || ev.Event != fabric.EventNotify || ev.Data != 7 {
		t.Fatalf("owner EQ: %+v %+v", ev, ee)
	}
	if tg.EPType != fabric.EPMsg {
		return
	}

	// A passive endpoint and an accepted endpoint bound to the import:
	// their FI_CONNREQ and FI_CONNECTED land in the owner's EQ.
	pep, err := fab.OpenPassiveEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "pep", pep.Close()) })
	if err := pep.Bind(peq, 0); err != nil {
		t.Fatalf("bind the import to a passive endpoint: %v", err)
	}
	if err := pep.Listen(); err != nil {
		t.Fatal(err)
	}
	name, err := pep.Name()
	if err != nil {
		t.Fatal(err)
	}
	c := tg.open(t, envOpts{deferConn: true})
	if err := c.ep.Connect(name, nil); err != nil {
		t.Fatalf("fi_connect: %v", err)
	}
	ev := ownerEvent(t, oeq, peq)
	if ev.Event != fabric.EventConnReq || ev.Info == nil || ev.FID != pep {
		t.Fatalf("owner EQ: %+v; want the peer's FI_CONNREQ from its passive endpoint", ev)
	}
	dom, err := fab.OpenDomain(ev.Info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "domain", dom.Close()) })
	cq, err := dom.OpenCQ(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "cq", cq.Close()) })
	ep, err := dom.OpenEndpoint(ev.Info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "accepted endpoint", ep.Close()) })
	for _, err := range []error{ep.BindEQ(peq), ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv), ep.Accept(nil)} {
		if err != nil {
			t.Fatalf("accept on the import: %v", err)
		}
	}
	if ev := ownerEvent(t, oeq, peq); ev.Event != fabric.EventConnected || ev.FID != ep {
		t.Fatalf("owner EQ: %+v; want the peer's FI_CONNECTED", ev)
	}
	if ev, ee := waitEvent(t, c.eq); ee != nil || ev.Event != fabric.EventConnected {
		t.Fatalf("client: %+v %+v", ev, ee)
	}
}

// ownerEvent reads the owner's EQ, driving the import's progress as an
// owner does (fi_eq_read of the peer's EQ), bounded.
func ownerEvent(t *testing.T, oeq, peq *fabric.EQ) fabric.EQEntry {
	t.Helper()
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		ev, err := oeq.Read(0)
		if err == nil {
			return ev
		}
		if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			t.Fatalf("owner EQ: %v", err)
		}
		peq.Read(0)
		time.Sleep(100 * time.Microsecond)
	}
}

// peerRxEntryCarriesDesc: the receive entry an SRX owner hands a peer
// (fi_peer_rx_entry) carries the memory descriptor of the posted receive.
func peerRxEntryCarriesDesc(t *testing.T, tg Target) {
	connectionless(t, tg)
	o := tg.owner().open(t, envOpts{noEnable: true, modify: sharedRxInfo})
	srx, err := o.dom.OpenSRX(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "srx", srx.Close()) })
	buf := make([]byte, 64)
	mr, err := o.dom.RegMR(buf, fabric.FlagRecv, 0, 0x51, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "mr", mr.Close()) })
	ctx := new(int)
	if err := srx.Recv(buf, mr.Desc(), fabric.AddrUnspec, ctx); err != nil {
		t.Fatal(err)
	}
	owner := srx.Owner()
	e, err := owner.GetMsg(fabric.AddrUnspec, 8)
	if err != nil || e == nil {
		t.Fatalf("get_msg: %v, %v", e, err)
	}
	if e.Context != ctx || len(e.Desc) != 1 || e.Desc[0] != mr.Desc() || len(e.IOV) != 1 || len(e.IOV[0]) != len(buf) {
		t.Fatalf("rx entry = %+v; want the posted receive with its descriptor", e)
	}
	owner.FreeEntry(e)
}
