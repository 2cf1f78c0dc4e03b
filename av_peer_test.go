package fabric

import (
	"bytes"
	"sync"
	"testing"

	"github.com/gofabric/fabric/peer"
)

// An imported AV (FI_PEER) follows its owner under concurrent inserts
// and removals: once they are done, every owner fi_addr resolves in the
// import to the converted address, and nothing else resolves. Lookups
// race with the changes meanwhile (run under -race).
func TestPeerAVFollowsConcurrentChanges(t *testing.T) {
	owner := avTestOpen(t, avTestOpenDomain(t, nil), nil)
	pd := avTestOpenDomain(t, nil)
	// The peer's address of owner address i is address 100+i.
	conv := func(b []byte) []byte { return avTestAddr(int(b[3]) + 100) }
	imp, err := pd.OpenAV(&AVAttr{Flags: FlagPeer, Peer: &peer.AVContext{AV: owner, Addr: conv}})
	if err != nil {
		t.Fatal(err)
	}
	defer imp.Close()
	const workers, per = 4, 30
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() { // a reader of the import, as a peer's sends are
		buf := make([]byte, 16)
		for {
			select {
			case <-stop:
				return
			default:
				imp.Lookup(Addr(3), buf)
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				fa := make([]Addr, 1)
				if _, err := owner.Insert([][]byte{avTestAddr(w*per%90 + i%90 + 1)}, fa, 0); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					if err := owner.Remove(fa, 0); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	q, _ := owner.Query()
	if iq, _ := imp.Query(); iq.Count != q.Count || q.Count != workers*(per-per/3) {
		t.Fatalf("import count %d, owner %d; want %d", iq.Count, q.Count, workers*(per-per/3))
	}
	buf, ibuf := make([]byte, 16), make([]byte, 16)
	for fa := Addr(0); fa < Addr(workers*per); fa++ {
		n, err := owner.Lookup(fa, buf)
		m, ierr := imp.Lookup(fa, ibuf)
		if (err == nil) != (ierr == nil) {
			t.Fatalf("fi_addr %v: owner %v, import %v", fa, err, ierr)
		}
		if err == nil && !bytes.Equal(ibuf[:m], conv(buf[:n])) {
			t.Fatalf("fi_addr %v: import has % x for owner % x", fa, ibuf[:m], buf[:n])
		}
	}
	if err := owner.Close(); err == nil {
		t.Fatal("the owner closed while imported")
	}
}

// The AV a provider is given (provider.Resources.AV) is an fi_peer(3) AV
// owner itself: a composite provider, which sees only that view of its
// AV, has another provider's AV import it.
func TestPeerAVImportsProviderView(t *testing.T) {
	owner := avTestOpen(t, avTestOpenDomain(t, nil), &AVAttr{Flags: FlagAVUserID})
	view, ok := owner.view().(peer.AVAddrOwner)
	if !ok {
		t.Fatalf("the provider's view %T is not a peer.AVAddrOwner", owner.view())
	}
	fa := []Addr{0x99}
	if _, err := owner.Insert([][]byte{avTestAddr(1), avTestAddr(2)}, append(fa, 0x98), 0); err != nil {
		t.Fatal(err)
	}
	q, err := view.Query()
	if err != nil || q.Count != 2 || q.Flags&FlagAVUserID == 0 || q.Type != owner.Attr().Type {
		t.Fatalf("view query = %+v, %v", q, err)
	}
	imp, err := avTestOpenDomain(t, nil).OpenAV(&AVAttr{Flags: FlagPeer, Peer: &peer.AVContext{AV: view}})
	if err != nil {
		t.Fatal(err)
	}
	defer imp.Close()
	if r := imp.view().Reverse(avTestAddr(2)); r != 0x98 {
		t.Fatalf("import's source of the second address = %v; want the owner's user id 0x98", r)
	}
	if err := owner.Remove([]Addr{0}, 0); err != nil {
		t.Fatal(err)
	}
	if q, _ := imp.Query(); q.Count != 1 {
		t.Fatalf("import count after the owner's removal = %d", q.Count)
	}
}

// An imported AV follows its owner one changed address at a time
// (peer.AVAddrChanges): n inserts of one address each convert n
// addresses (AVContext.Addr), not the whole owner at every insert (n²/2),
// and removals convert none; the import then holds exactly the owner's
// remaining addresses, converted.
func TestPeerAVFollowsOneAddressPerChange(t *testing.T) {
	owner := avTestOpen(t, avTestOpenDomain(t, nil), nil)
	pd := avTestOpenDomain(t, nil)
	var convs int
	conv := func(b []byte) []byte {
		convs++
		return avTestAddr(int(b[3]) + 50)
	}
	imp, err := pd.OpenAV(&AVAttr{Flags: FlagPeer, Peer: &peer.AVContext{AV: owner, Addr: conv}})
	if err != nil {
		t.Fatal(err)
	}
	defer imp.Close()
	const n = 200
	fas := make([]Addr, n)
	for i := 0; i < n; i++ {
		if c, err := owner.Insert([][]byte{avTestAddr(i % 200)}, fas[i:i+1], 0); c != 1 || err != nil {
			t.Fatalf("insert %d: %d %v", i, c, err)
		}
	}
	if convs != n {
		t.Fatalf("%d inserts converted %d addresses, want %d", n, convs, n)
	}
	if err := owner.Remove(fas[:n/2], 0); err != nil {
		t.Fatal(err)
	}
	if convs != n {
		t.Fatalf("removals converted %d addresses", convs-n)
	}
	buf := make([]byte, 16)
	for i, fa := range fas {
		l, err := imp.Lookup(fa, buf)
		switch {
		case i < n/2 && err == nil:
			t.Fatalf("removed fi_addr %v still in the import: % x", fa, buf[:l])
		case i >= n/2 && (err != nil || !bytes.Equal(buf[:l], avTestAddr(i%200+50))):
			t.Fatalf("fi_addr %v in the import: % x %v, want % x", fa, buf[:l], err, avTestAddr(i%200+50))
		}
	}
}
