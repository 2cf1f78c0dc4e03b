package shm_test

import (
	"bytes"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/shm"
)

// TestMultiRecvMixedProtocols: inline, one-segment and multi-segment
// messages, some arriving before the buffer is posted, land back to back
// in one multi-receive buffer, which is released once less than the
// minimum is left.
func TestMultiRecvMixedProtocols(t *testing.T) {
	a, b, ab, _ := pair(t, nodeOpts{caps: fabric.CapMultiRecv})
	sizes := []int{10, shm.InjectSize, 2*shm.BufSize + 5, 300}
	total := 0
	for _, s := range sizes {
		total += s
	}
	const min = 1000
	if err := b.ep.SetOpt(fabric.OptEndpoint, fabric.OptMinMultiRecv, min); err != nil {
		t.Fatal(err)
	}
	// The first message arrives before the buffer is posted.
	first := pattern(sizes[0], 0)
	retry(t, "send", func() error { return a.ep.Send(first, nil, ab, nil) }, a.txcq, b.rxcq)
	expectNone(t, b.rxcq, 0, a.txcq)
	buf := make([]byte, total+min-1)
	if err := b.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{buf}, Addr: fabric.AddrUnspec, Context: "multi"},
		fabric.FlagMultiRecv); err != nil {
		t.Fatal(err)
	}
	for i, s := range sizes[1:] {
		m := pattern(s, i+1)
		retry(t, "send", func() error { return a.ep.Send(m, nil, ab, nil) }, a.txcq, b.rxcq)
	}
	off, released := 0, false
	for i, s := range sizes {
		got, ee := wait(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != "multi" || got.Len != uint64(s) || &got.Buf[0] != &buf[off] ||
			!bytes.Equal(got.Buf, pattern(s, i)) {
			t.Fatalf("message %d (%d bytes): %+v %+v", i, s, got, ee)
		}
		off += s
		released = released || got.Flags&fabric.FlagMultiRecv != 0
	}
	if !released {
		got, ee := wait(t, b.rxcq, a.txcq)
		if ee != nil || got.Flags&fabric.FlagMultiRecv == 0 {
			t.Fatalf("no release: %+v %+v", got, ee)
		}
	}
}
