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
