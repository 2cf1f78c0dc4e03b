package shm_test

import (
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestManyPeers: more than 512 endpoints (libfabric 1.17's shm stops at
// 256) each send to one receiver, which reports every sender's fi_addr
// (FI_SOURCE); then the receiver answers every one of them.
func TestManyPeers(t *testing.T) {
	const peers = 520
	if testing.Short() {
		t.Skip("-short")
	}
	o := nodeOpts{caps: fabric.CapSource}
	r := newNode(t, o)
	s := newNode(t, o) // its domain, CQs and AV are shared by the senders
	dst := s.insert(r.addr)
	eps := make([]*fabric.Endpoint, peers)
	fromR := make([]fabric.Addr, peers)
	want := map[fabric.Addr]int{}
	for i := range eps {
		ep, err := s.dom.OpenEndpoint(s.info)
		if err != nil {
			t.Fatalf("endpoint %d: %v", i, err)
		}
		t.Cleanup(func() { closeOK(t, "endpoint", ep.Close()) })
		for _, err := range []error{ep.BindCQ(s.txcq, fabric.FlagTransmit), ep.BindCQ(s.rxcq, fabric.FlagRecv),
			ep.BindAV(s.av), ep.Enable()} {
			if err != nil {
				t.Fatal(err)
			}
		}
		name, err := ep.Name()
		if err != nil {
			t.Fatal(err)
		}
		eps[i] = ep
		fromR[i] = r.insert(name)
		want[fromR[i]] = i
	}
	buf := make([]byte, 16)
	src := make([]fabric.Addr, 1)
	ent := make([]fabric.CQEntry, 1)
	for i, ep := range eps {
		msg := []byte(fmt.Sprint(i))
		retry(t, "inject", func() error { return ep.Inject(msg, dst) }, s.txcq)
		if err := r.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			if n, _ := r.rxcq.ReadFrom(ent, src); n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("message %d did not arrive", i)
			}
		}
		if got := string(buf[:ent[0].Len]); got != fmt.Sprint(i) || want[src[0]] != i {
			t.Fatalf("message %q from %v; want %d from %v", got, src[0], i, fromR[i])
		}
	}
	// The receiver answers each: it maps 520 peer regions.
	for i := range eps {
		msg := []byte(fmt.Sprint(i))
		retry(t, "answer", func() error { return r.ep.Inject(msg, fromR[i]) }, r.txcq)
		if err := eps[i].Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		if got, ee := wait(t, s.rxcq); ee != nil || string(buf[:got.Len]) != fmt.Sprint(i) {
			t.Fatalf("answer %d: %+v %+v", i, got, ee)
		}
	}
}

// TestAVInsertManyNames: inserting 10,000 names (of endpoints that need
// not exist: nothing is mapped before the first send) is fast.
func TestAVInsertManyNames(t *testing.T) {
	n := newNode(t, nodeOpts{})
	names := make([][]byte, 10000)
	for i := range names {
		names[i] = []byte(fmt.Sprintf("fi_shm://gofabric-shm-%016x\x00", uint64(i+1)<<20|0xabc))
	}
	fa := make([]fabric.Addr, len(names))
	start := time.Now()
	got, err := n.av.Insert(names, fa, 0)
	if err != nil || got != len(names) {
		t.Fatalf("insert: %d %v", got, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("10,000 inserts took %v", d)
	} else {
		t.Logf("10,000 inserts: %v", d)
	}
	// A send to one of them fails cleanly: no such endpoint.
	if err := n.ep.Send([]byte("x"), nil, fa[5000], nil); err == nil {
		if _, ee := wait(t, n.txcq); ee == nil {
			t.Fatal("send to a name without an endpoint succeeded")
		}
	}
}
