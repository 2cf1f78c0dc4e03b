package shm_test

import (
	"testing"

	fabric "github.com/gofabric/fabric"
)

// TestSourceFollowsAVChanges: FI_SOURCE reports the sender's current
// fi_addr, also after the AV entry was removed and the sender inserted
// again elsewhere (the provider caches the lookup), and the steady state
// does not allocate.
func TestSourceFollowsAVChanges(t *testing.T) {
	o := nodeOpts{caps: fabric.CapSource}
	a, b, ab, ba := pair(t, o)
	c := newNode(t, o)
	buf := make([]byte, 8)
	src := make([]fabric.Addr, 1)
	ent := make([]fabric.CQEntry, 1)
	msg := []byte("s")
	roundFrom := func() fabric.Addr {
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		for a.ep.Inject(msg, ab) != nil {
			a.txcq.Read(ent)
		}
		for {
			if n, _ := b.rxcq.ReadFrom(ent, src); n == 1 {
				return src[0]
			}
		}
	}
	if got := roundFrom(); got != ba {
		t.Fatalf("source %v; want %v", got, ba)
	}
	if !raceEnabled {
		if n := testing.AllocsPerRun(200, func() { roundFrom() }); n != 0 {
			t.Fatalf("FI_SOURCE receive allocates %v times", n)
		}
	}
	if err := b.av.Remove([]fabric.Addr{ba}, 0); err != nil {
		t.Fatal(err)
	}
	if got := roundFrom(); got != fabric.AddrNotAvail {
		t.Fatalf("source after removal %v; want FI_ADDR_NOTAVAIL", got)
	}
	bc := b.insert(c.addr) // takes a's old index
	ba2 := b.insert(a.addr)
	if bc != ba || ba2 == ba {
		t.Fatalf("indices: c %v, a again %v (a was %v)", bc, ba2, ba)
	}
	if got := roundFrom(); got != ba2 {
		t.Fatalf("source after re-insert %v; want %v", got, ba2)
	}
}
