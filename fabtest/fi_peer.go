package fabtest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// peerCases lists the fi_peer(3) behaviours, in the order they run.
var peerCases = []testCase{
	{"fi_peer/import_cntr_increments_owner", peerImportCntrIncrementsOwner},
	{"fi_peer/import_cq_completions_land_in_owner", peerImportCqCompletionsLandInOwner},
	{"fi_peer/import_cq_without_reserver_gets_every_completion", peerImportCqWithoutReserverGetsEveryCompletion},
	{"fi_peer/import_srx_expected_unexpected_discard", peerImportSrxExpectedUnexpectedDiscard},
	{"fi_peer/av_owner_query_ep_addr", peerAvOwnerQueryEpAddr},
	{"fi_peer/av_set_members", peerAvSetMembers},
	{"fi_peer/domain_shares_mr_keys", peerDomainSharesMrKeys},
	{"fi_peer/owner_provider_cq_cntr", peerOwnerCqCntr},
	{"fi_peer/owner_provider_transmit_error", peerOwnerTransmitError},
	{"fi_peer/owner_provider_srx_expected_unexpected_discard", peerOwnerSrxFlow},
	{"fi_peer/owner_provider_srx_directed_unknown_source", peerOwnerSrxDirected},
	{"fi_peer/owner_provider_srx_unknown_source_two_peers", peerOwnerSrxUnknownSourceTwoPeers},
	{"fi_peer/owner_provider_srx_directed_peer_without_caps", peerOwnerDirectedPeerWithoutCaps},
	{"fi_peer/owner_provider_srx_both_providers_posting_order", peerOwnerSrxBothProviders},
	{"fi_peer/owner_provider_srx_sizes_cq_data_multi_recv", peerOwnerSrxSizesData},
	{"fi_peer/owner_provider_srx_concurrent_posts_and_arrivals", peerOwnerSrxConcurrent},
	{"fi_peer/owner_provider_full_cq_loses_nothing", peerOwnerFullCQ},
	{"fi_peer/owner_provider_peer_closed_queued_delivered", peerOwnerPeerClosed},
	{"fi_peer/owner_provider_av", peerOwnerAV},
	{"fi_peer/import_av_owner_fi_addrs_valid_at_peer", peerImportAvOwnerFiAddrsValidAtPeer},
	{"fi_peer/import_av_follows_owner_user_id", peerImportAvFollowsOwner},
	{"fi_peer/import_av_errors", peerImportAvErrors},
	{"fi_peer/import_av_set_members", peerImportAvSetMembers},
	{"fi_peer/import_eq_events_land_in_owner", peerImportEqEventsLandInOwner},
	{"fi_peer/rx_entry_carries_desc", peerRxEntryCarriesDesc},
}

func peerImportCntrIncrementsOwner(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, _, ab, _ := tg.pair(t, envOpts{})
	owner := &cntrOwner{}
	pc, err := a.dom.OpenCntr(&fabric.CntrAttr{Flags: fabric.FlagPeer, Peer: owner})
	skipIfNotSupported(t, "import counter", err)
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
}

func peerImportCqCompletionsLandInOwner(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, _, ab, _ := tg.pair(t, envOpts{})
	owner := &recorder{}
	if _, err := a.dom.OpenCQ(&fabric.CQAttr{Flags: fabric.FlagPeer}); !errors.Is(err, fabric.ErrInval) {
		t.Fatalf("FI_PEER without owner: %v", err)
	}
	pcq, err := a.dom.OpenCQ(&fabric.CQAttr{Flags: fabric.FlagPeer, Peer: owner, Format: fabric.CQFormatTagged})
	if err != nil {
		t.Fatalf("open peer CQ: %v", err)
	}
	defer pcq.Close()
	ep, err := a.dom.OpenEndpoint(a.info)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	for _, f := range []fabric.Flags{fabric.FlagTransmit, fabric.FlagRecv} {
		if err := ep.BindCQ(pcq, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := ep.BindAV(a.av); err != nil {
		t.Fatal(err)
	}
	if err := ep.Enable(); err != nil {
		t.Fatal(err)
	}
	var ee fabric.CQErrEntry
	isErr(t, "readerr on a peer CQ", pcq.ReadErr(&ee), fabric.ErrNoSys)
	_, err = pcq.SRead(make([]fabric.CQEntry, 1), 0, 10*time.Millisecond)
	isErr(t, "sread on a peer CQ", err, fabric.ErrNoSys)
	ctx := new(int)
	retry(t, "send", func() error { return ep.Send([]byte("peer"), nil, ab, ctx) }, pcq)
	deadline := time.Now().Add(scaled(2 * time.Second))
	for len(owner.written()) == 0 && time.Now().Before(deadline) {
		pcq.Read(nil)
	}
	if got := owner.written(); len(got) != 1 || got[0].OpContext != ctx || got[0].Flags != fabric.FlagSend|fabric.FlagMsg {
		t.Fatalf("owner received %+v", got)
	}
}

// peerImportCqWithoutReserverGetsEveryCompletion: an imported owner CQ
// that cannot reserve room (no provider.CQReserver) gets every completion
// written to it, without reservations, and posts are never refused for
// lack of room in it: under FI_RM_ENABLED keeping every entry is then the
// owner's business (see peer.CQReserver).
func peerImportCqWithoutReserverGetsEveryCompletion(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, _, ab, _ := tg.pair(t, envOpts{})
	owner := &recorder{}
	pcq, err := a.dom.OpenCQ(&fabric.CQAttr{Flags: fabric.FlagPeer, Peer: owner, Size: 2, Format: fabric.CQFormatContext})
	if err != nil {
		t.Fatalf("open peer CQ: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "peer cq", pcq.Close()) }) // after the endpoint's
	ep := a.bareEndpoint()
	for _, err := range []error{ep.BindCQ(pcq, fabric.FlagTransmit|fabric.FlagRecv), ep.BindAV(a.av), ep.Enable()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	const sends = 5
	for i := 0; i < sends; i++ {
		if err := ep.Send([]byte("peer"), nil, ab, i); err != nil {
			t.Fatalf("send %d into an owner CQ of size 2 that is never read: %v", i, err)
		}
	}
	deadline := time.Now().Add(scaled(2 * time.Second))
	for len(owner.written()) < sends && time.Now().Before(deadline) {
		pcq.Read(nil)
	}
	if got := owner.written(); len(got) != sends {
		t.Fatalf("owner received %d of %d completions: %+v", len(got), sends, got)
	}
}

func peerImportSrxExpectedUnexpectedDiscard(t *testing.T, tg Target) {
	connectionless(t, tg)
	r := tg.open(t, envOpts{noEnable: true})
	if _, err := r.dom.OpenSRX(&fabric.RxAttr{OpFlags: fabric.FlagPeer}, nil); !errors.Is(err, fabric.ErrInval) {
		t.Fatalf("FI_PEER SRX without an owner: %v", err)
	}
	owner := &ownerSRX{}
	psrx, err := r.dom.OpenSRX(&fabric.RxAttr{OpFlags: fabric.FlagPeer}, &fabric.PeerSRX{Owner: owner})
	if err != nil {
		t.Fatalf("import SRX: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "srx", psrx.Close()) })
	isErr(t, "posting on an imported SRX", psrx.Recv(make([]byte, 4), nil, fabric.AddrUnspec, nil), fabric.ErrNoSys)
	info := r.info.Dup()
	sharedRxInfo(info)
	cq := r.openCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
	ep, err := r.dom.OpenEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "endpoint", ep.Close()) })
	for _, b := range []error{ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv), ep.BindAV(r.av), ep.BindSRX(psrx), ep.Enable()} {
		if b != nil {
			t.Fatal(b)
		}
	}
	isErr(t, "recv on the peer's endpoint", ep.Recv(make([]byte, 4), nil, fabric.AddrUnspec, nil), fabric.ErrNoSys)
	addr, _ := ep.Name()
	s := tg.open(t, envOpts{})
	dst := s.insert(addr)
	send := func(m string) {
		retry(t, "send", func() error { return s.ep.Send([]byte(m), nil, dst, nil) }, s.txcq)
		waitCQ(t, s.txcq)
	}
	// Expected path: the owner has a buffer when the message arrives.
	buf := make([]byte, 16)
	owner.post(buf, "expected")
	send("hello")
	got, ee := waitCQ(t, cq, s.txcq)
	if ee != nil || got.OpContext != "expected" || string(buf[:got.Len]) != "hello" {
		t.Fatalf("expected path: %+v %+v %q", got, ee, buf[:got.Len])
	}
	// Unexpected path: no buffer; the peer queues the message with the owner.
	send("later")
	var q *provider.RxEntry
	deadline := time.Now().Add(scaled(2 * time.Second))
	for q == nil && time.Now().Before(deadline) {
		cq.Read(nil)
		q = owner.takeQueued()
	}
	if q == nil || q.MsgSize != 5 || q.Peer == nil {
		t.Fatalf("unexpected message not queued with the owner: %+v", q)
	}
	late := make([]byte, 16)
	q.SetBuf(late)
	q.Context = "late"
	q.Flags = fabric.FlagMsg | fabric.FlagRecv
	q.Complete = true
	if err := q.Peer.StartMsg(q); err != nil {
		t.Fatalf("start_msg: %v", err)
	}
	got, ee = waitCQ(t, cq)
	if ee != nil || got.OpContext != "late" || string(late[:got.Len]) != "later" {
		t.Fatalf("unexpected path: %+v %+v %q", got, ee, late[:got.Len])
	}
	// Discard: no completion.
	send("drop")
	q = nil
	deadline = time.Now().Add(scaled(2 * time.Second))
	for q == nil && time.Now().Before(deadline) {
		cq.Read(nil)
		q = owner.takeQueued()
	}
	if q == nil {
		t.Fatal("second unexpected message not queued")
	}
	if err := q.Peer.DiscardMsg(q); err != nil {
		t.Fatalf("discard_msg: %v", err)
	}
	expectEmpty(t, cq, scaled(10*time.Millisecond))
	owner.mu.Lock()
	freed := owner.freed
	owner.mu.Unlock()
	if freed < 3 {
		t.Fatalf("free_entry called %d times; want one per message (3)", freed)
	}
}

func peerAvOwnerQueryEpAddr(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, b, ab, _ := tg.pair(t, envOpts{})
	var owner peer.AVOwner = a.av
	attr, err := owner.Query()
	if err != nil || attr.Count != 1 {
		t.Fatalf("query = %+v, %v; want count 1", attr, err)
	}
	if got := owner.EPAddr(b.ep); got != ab {
		t.Fatalf("ep_addr(b) = %v; want %v", got, ab)
	}
	if got := owner.EPAddr(a.ep); got != fabric.AddrNotAvail {
		t.Fatalf("ep_addr of an address not inserted = %v; want FI_ADDR_NOTAVAIL", got)
	}
}

func peerAvSetMembers(t *testing.T, tg Target) {
	m := peer.Members{1, 2, 3}
	n, err := m.Members(make([]fabric.Addr, 2))
	if n != 3 || !errors.Is(err, fabric.ErrTooSmall) {
		t.Fatalf("members with a short array = %d, %v; want 3, ETOOSMALL", n, err)
	}
	out := make([]fabric.Addr, 4)
	if n, err := m.Members(out); n != 3 || err != nil || out[2] != 3 {
		t.Fatalf("members = %d, %v, %v", n, err, out)
	}
}

func peerDomainSharesMrKeys(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	if _, err := e.fab.OpenPeerDomain(e.info, nil); !errors.Is(err, fabric.ErrInval) {
		t.Fatalf("peer domain without context: %v", err)
	}
	pd, err := e.fab.OpenPeerDomain(e.info, &peer.DomainContext{Domain: e.dom})
	if err != nil {
		t.Fatalf("fi_domain2(FI_PEER): %v", err)
	}
	buf := make([]byte, 64)
	mr, err := e.dom.RegMR(buf, fabric.FlagRemoteWrite, 0, 0x77, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.info.DomainAttr.MRMode&fabric.MRProvKey == 0 {
		_, err = pd.RegMR(buf, fabric.FlagRemoteWrite, 0, 0x77, 0)
		isErr(t, "same key through the peer domain", err, fabric.ErrNoKey)
	}
	isErr(t, "owner domain close while imported", e.dom.Close(), fabric.ErrBusy)
	mr.Close()
	if err := pd.Close(); err != nil {
		t.Fatal(err)
	}
}

// cntrOwner is a test counter owner (fi_peer(3) PEER COUNTER).
type cntrOwner struct{ ok, errs atomic.Int64 }

func (c *cntrOwner) Inc() { c.ok.Add(1) }

func (c *cntrOwner) IncErr() { c.errs.Add(1) }

// recorder is a test CQ owner (fi_peer(3) owner side). A peer provider may
// write into it from any of its goroutines (progress, connection control),
// so it is goroutine-safe as an owner of a FI_THREAD_SAFE domain must be.
type recorder struct {
	mu   sync.Mutex
	ok   []fabric.CQEntry
	errs []fabric.CQErrEntry
}

func (r *recorder) Write(ctx any, flags fabric.Flags, length uint64, buf []byte, data, tag uint64, src fabric.Addr) error {
	r.mu.Lock()
	r.ok = append(r.ok, fabric.CQEntry{OpContext: ctx, Flags: flags, Len: length, Buf: buf, Data: data, Tag: tag})
	r.mu.Unlock()
	return nil
}

func (r *recorder) WriteErr(e *fabric.CQErrEntry) error {
	r.mu.Lock()
	r.errs = append(r.errs, *e)
	r.mu.Unlock()
	return nil
}

// written returns a copy of the completions written so far.
func (r *recorder) written() []fabric.CQEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]fabric.CQEntry(nil), r.ok...)
}

var _ provider.CQOwner = (*recorder)(nil)

// ownerSRX is a test SRX owner (the owner side of fi_peer(3) PEER SRX): it
// hands out application buffers to the peer provider and queues unexpected
// messages the peer reports.
type ownerSRX struct {
	mu        sync.Mutex
	bufs      [][]byte
	ctxs      []any
	queued    []*provider.RxEntry
	freed     int
	getCalls  int
	unspecCBs int
}

func (o *ownerSRX) post(buf []byte, ctx any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bufs = append(o.bufs, buf)
	o.ctxs = append(o.ctxs, ctx)
}

func (o *ownerSRX) GetMsg(addr fabric.Addr, size uint64) (*provider.RxEntry, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.getCalls++
	e := &provider.RxEntry{Addr: addr, MsgSize: size, Flags: fabric.FlagMsg | fabric.FlagRecv, Complete: true}
	if len(o.bufs) == 0 {
		return e, provider.ENOENT
	}
	e.SetBuf(o.bufs[0])
	e.Context = o.ctxs[0]
	o.bufs, o.ctxs = o.bufs[1:], o.ctxs[1:]
	return e, nil
}

func (o *ownerSRX) GetTag(addr fabric.Addr, size, tag uint64) (*provider.RxEntry, error) {
	return nil, provider.ENOSYS
}

func (o *ownerSRX) QueueMsg(e *provider.RxEntry) error {
	if e.Peer == nil {
		return provider.EINVAL
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queued = append(o.queued, e)
	return nil
}

func (o *ownerSRX) QueueTag(e *provider.RxEntry) error { return provider.ENOSYS }

func (o *ownerSRX) ForeachUnspecAddr(getAddr func(e *provider.RxEntry) fabric.Addr) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.unspecCBs++
}

func (o *ownerSRX) FreeEntry(e *provider.RxEntry) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.freed++
}

func (o *ownerSRX) takeQueued() *provider.RxEntry {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.queued) == 0 {
		return nil
	}
	e := o.queued[0]
	o.queued = o.queued[1:]
	return e
}
