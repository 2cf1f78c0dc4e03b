package srx

import (
	"testing"

	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// TestNotifyRoomUnexpected: a peer refused because the queue holds
// MaxUnexpected messages is kicked when one leaves the queue.
func TestNotifyRoomUnexpected(t *testing.T) {
	q := New(Config{MaxUnexpected: 1})
	peer := &rmPeer{q: q}
	e, err := q.GetMsg(provider.AddrUnspec, 1)
	if err != provider.ENOENT {
		t.Fatalf("get: %v", err)
	}
	e.Peer, e.PeerContext = peer, []byte("x")
	if err := q.QueueMsg(e); err != nil {
		t.Fatal(err)
	}
	if _, err := q.GetMsg(provider.AddrUnspec, 1); err != provider.EAGAIN {
		t.Fatalf("get beyond the limit: %v, want EAGAIN", err)
	}
	k := make(chan struct{}, 1)
	if !q.NotifyRoom(k) {
		t.Fatal("NotifyRoom refused")
	}
	if testutil.Kicked(k) {
		t.Fatal("kicked before room was freed")
	}
	m := provider.Msg{Buf: make([]byte, 4), Addr: provider.AddrUnspec}
	if err := q.Post(&m, false); err != nil {
		t.Fatal(err)
	}
	if !testutil.Kicked(k) {
		t.Fatal("no kick when the unexpected message left the queue")
	}
	q.NotifyRoom(k)
	q.Close()
	if !testutil.Kicked(k) {
		t.Fatal("no kick at Close")
	}
}

// TestNotifyRoomCQ: with resource management, a peer refused because the
// CQ has no room is kicked when the CQ is read.
func TestNotifyRoomCQ(t *testing.T) {
	q, c := rmQueue(t, 1)
	for i := 0; i < 2; i++ {
		m := provider.Msg{Buf: make([]byte, 4), Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
		if err := q.Post(&m, false); err != nil {
			t.Fatal(err)
		}
	}
	e, err := q.GetMsg(provider.AddrUnspec, 1)
	if err != nil {
		t.Fatal(err)
	}
	Complete(c, nil, e, 1, 0, provider.AddrNotAvail)
	q.FreeEntry(e)
	if _, err := q.GetMsg(provider.AddrUnspec, 1); err != provider.EAGAIN {
		t.Fatalf("get with the CQ full: %v, want EAGAIN", err)
	}
	k := make(chan struct{}, 1)
	if !q.NotifyRoom(k) {
		t.Fatal("NotifyRoom refused with a CQ that notifies")
	}
	var ents [1]provider.CQEntry
	if n, _ := c.Read(ents[:]); n != 1 {
		t.Fatal("read")
	}
	if !testutil.Kicked(k) {
		t.Fatal("no kick when the CQ was read")
	}
	// A CQ that cannot notify: the queue says so.
	q2 := New(Config{ResourceMgmt: true})
	q2.SetCompletion(plainReserver{c}, nil)
	if q2.NotifyRoom(k) {
		t.Fatal("NotifyRoom promised a kick its CQ cannot give")
	}
}

// plainReserver hides the CQ's RoomNotifier: only the methods of
// provider.CQReserver are promoted from the embedded interface.
type plainReserver struct{ provider.CQReserver }
