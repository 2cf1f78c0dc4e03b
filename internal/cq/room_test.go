package cq

import (
	"testing"

	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// TestNotifyRoom: a kick armed with NotifyRoom fires once when room may
// have been freed (Read, ReadErr, Unreserve, Close), not on writes, and
// must be armed again after firing.
func TestNotifyRoom(t *testing.T) {
	q := mustNew(t, Config{Size: 2, ResourceMgmt: true})
	k := make(chan struct{}, 1)
	var ents [2]provider.CQEntry
	for i := 0; i < 2; i++ { // arming twice is one kick
		if !q.NotifyRoom(k) {
			t.Fatal("NotifyRoom refused a kick")
		}
	}
	if q.NotifyRoom(nil) {
		t.Fatal("NotifyRoom(nil) reports armed")
	}
	q.Write("a", provider.FlagRecv, 0, nil, 0, 0, provider.AddrNotAvail)
	q.Write("b", provider.FlagRecv, 0, nil, 0, 0, provider.AddrNotAvail)
	if testutil.Kicked(k) {
		t.Fatal("kick fired on a write")
	}
	if n, _ := q.Read(ents[:0]); n != 0 || testutil.Kicked(k) {
		t.Fatal("kick fired on a read of nothing")
	}
	if n, err := q.Read(ents[:1]); n != 1 || err != nil {
		t.Fatalf("read: %d %v", n, err)
	}
	if !testutil.Kicked(k) {
		t.Fatal("no kick after a read freed room")
	}
	q.Read(ents[:])
	if testutil.Kicked(k) {
		t.Fatal("a fired kick fired again without being armed")
	}
	// ReadErr.
	q.WriteErr(&provider.CQErrEntry{Err: provider.EIO})
	q.NotifyRoom(k)
	var ee provider.CQErrEntry
	if err := q.ReadErr(&ee); err != nil || !testutil.Kicked(k) {
		t.Fatalf("readerr: %v, kicked: false", err)
	}
	// Unreserve.
	if !q.Reserve() {
		t.Fatal("reserve")
	}
	q.NotifyRoom(k)
	q.Unreserve()
	if !testutil.Kicked(k) {
		t.Fatal("no kick after Unreserve")
	}
	// Several waiters, then Close.
	k2 := make(chan struct{}, 1)
	q.NotifyRoom(k)
	q.NotifyRoom(k2)
	q.Close()
	if !testutil.Kicked(k) || !testutil.Kicked(k2) {
		t.Fatal("Close did not fire every armed kick")
	}
}

// TestNotifyRoomAllocs: reads cost no allocation, armed or not, once the
// waiter list has grown.
func TestNotifyRoomAllocs(t *testing.T) {
	q := mustNew(t, Config{Size: 4, ResourceMgmt: true})
	k := make(chan struct{}, 1)
	var ents [1]provider.CQEntry
	round := func() {
		q.NotifyRoom(k)
		q.Write(nil, provider.FlagRecv, 0, nil, 0, 0, provider.AddrNotAvail)
		q.Read(ents[:])
		<-k
	}
	round()
	if n := testing.AllocsPerRun(1000, round); n != 0 {
		t.Fatalf("armed Write+Read allocates %v", n)
	}
}
