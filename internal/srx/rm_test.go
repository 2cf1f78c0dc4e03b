package srx

import (
	"testing"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/provider"
)

// rmQueue returns a queue with resource management whose completions go
// to a real CQ of the given size.
func rmQueue(t *testing.T, size int) (*Queue, *cq.CQ) {
	t.Helper()
	c, err := cq.New(cq.Config{Size: size, Format: provider.CQFormatTagged, ResourceMgmt: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	q := New(Config{ResourceMgmt: true, Tagged: true})
	q.SetCompletion(c, nil)
	return q, c
}

// With Config.ResourceMgmt a matched receive holds room in the CQ from
// GetMsg until its completion: GetMsg answers EAGAIN (the receive stays
// posted) while the CQ has no room, and the completion of a reserved entry
// cannot overrun.
func TestRMGetReserves(t *testing.T) {
	q, c := rmQueue(t, 1)
	for i := 0; i < 2; i++ {
		m := provider.Msg{Buf: make([]byte, 4), Addr: provider.AddrUnspec, Context: i, Flags: provider.FlagCompletion}
		if err := q.Post(&m, false); err != nil {
			t.Fatal(err)
		}
	}
	e, err := q.GetMsg(provider.AddrUnspec, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Full() {
		t.Fatal("a matched receive holds no room in the CQ")
	}
	if e2, err := q.GetMsg(provider.AddrUnspec, 4); err != provider.EAGAIN || e2 != nil {
		t.Fatalf("GetMsg with the CQ full = %v, %v; want EAGAIN", e2, err)
	}
	if p, _ := q.Counts(); p != 1 {
		t.Fatalf("%d receives posted, want 1 (the refused match stays posted)", p)
	}
	n, olen := Deliver(e, []byte("abcd"))
	Complete(c, nil, e, n, olen, provider.AddrNotAvail)
	q.FreeEntry(e)
	ents := make([]provider.CQEntry, 4)
	if k, err := c.Read(ents); k != 1 || err != nil || ents[0].OpContext != 0 {
		t.Fatalf("read = %d, %v, %+v", k, err, ents[0])
	}
	// A matched entry freed without a completion gives its room back.
	e, err = q.GetMsg(provider.AddrUnspec, 4)
	if err != nil {
		t.Fatal(err)
	}
	q.FreeEntry(e)
	if c.Full() {
		t.Fatal("room of an entry freed without completion not given back")
	}
}

// A receive that matches a queued unexpected message completes at once:
// with the CQ full it is refused (EAGAIN) and the message stays queued; a
// receive that matches nothing is refused too while the CQ is full
// (fi_domain(3) "Rx CQ": EAGAIN).
func TestRMPostNeedsRoom(t *testing.T) {
	q, c := rmQueue(t, 1)
	p := &rmPeer{q: q, cq: c}
	e, err := q.GetMsg(provider.AddrUnspec, 5)
	if err != provider.ENOENT {
		t.Fatalf("GetMsg with nothing posted: %v", err)
	}
	e.Peer, e.PeerContext = p, []byte("unexp")
	if err := q.QueueMsg(e); err != nil {
		t.Fatal(err)
	}
	if err := c.Write("filler", 0, 0, nil, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	m := provider.Msg{Buf: make([]byte, 8), Addr: provider.AddrUnspec, Context: "r", Flags: provider.FlagCompletion}
	if err := q.Post(&m, false); err != provider.EAGAIN {
		t.Fatalf("post matching a queued message with the CQ full = %v, want EAGAIN", err)
	}
	if _, u := q.Counts(); u != 1 {
		t.Fatalf("%d unexpected messages queued, want 1", u)
	}
	if err := q.Post(&provider.Msg{Buf: make([]byte, 8), Addr: provider.AddrUnspec, Tag: 1,
		Flags: provider.FlagCompletion}, true); err != provider.EAGAIN {
		t.Fatalf("post with the CQ full = %v, want EAGAIN", err)
	}
	ents := make([]provider.CQEntry, 4)
	if k, _ := c.Read(ents); k != 1 {
		t.Fatalf("read %d", k)
	}
	if err := q.Post(&m, false); err != nil {
		t.Fatalf("post after the CQ was read: %v", err)
	}
	if k, err := c.Read(ents); k != 1 || err != nil || ents[0].OpContext != "r" || ents[0].Len != 5 {
		t.Fatalf("completion of the queued message = %d, %v, %+v", k, err, ents[0])
	}
}

// rmPeer delivers queued messages (PeerContext holds the payload) into cq.
type rmPeer struct {
	q  *Queue
	cq provider.CQOwner
}

func (p *rmPeer) StartMsg(e *provider.RxEntry) error {
	n, olen := Deliver(e, e.PeerContext.([]byte))
	Complete(p.cq, nil, e, n, olen, provider.AddrNotAvail)
	p.q.FreeEntry(e)
	return nil
}
func (p *rmPeer) StartTag(e *provider.RxEntry) error   { return p.StartMsg(e) }
func (p *rmPeer) DiscardMsg(e *provider.RxEntry) error { p.q.FreeEntry(e); return nil }
func (p *rmPeer) DiscardTag(e *provider.RxEntry) error { p.q.FreeEntry(e); return nil }
