package lnx

import (
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestSendZeroAllocs: a send and its receive over the shm path, and an
// inject, allocate nothing in lnx's routing (the route table is cached
// per fi_addr) or in the plain calls of the linked endpoint.
func TestSendZeroAllocs(t *testing.T) {
	a := openNode(t, "")
	b := openNode(t, "")
	ab := a.insert(b.addr)
	b.insert(a.addr)
	msg := []byte("0123456789abcdef")
	rbuf := make([]byte, 64)
	ent := make([]fabric.CQEntry, 4)
	var ctx any = "r"
	round := func(inject bool) {
		if err := b.ep.Recv(rbuf, nil, fabric.AddrUnspec, ctx); err != nil {
			t.Fatal(err)
		}
		var err error
		if inject {
			err = a.ep.Inject(msg, ab)
		} else {
			err = a.ep.Send(msg, nil, ab, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		readOne(t, b.rxcq, ent)
		if !inject {
			readOne(t, a.txcq, ent)
		}
	}
	for _, inject := range []bool{false, true} {
		round(inject) // warm up: connections, route table
		if n := testing.AllocsPerRun(200, func() { round(inject) }); n != 0 {
			t.Errorf("inject=%v: %.1f allocs per round trip, want 0", inject, n)
		}
	}
}

// readOne spins (bounded: 10 s) until cq yields an entry.
func readOne(t *testing.T, cq *fabric.CQ, ent []fabric.CQEntry) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, _ := cq.Read(ent); n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no completion in 10 s")
		}
	}
}
