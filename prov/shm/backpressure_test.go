package shm_test

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/shm"
)

// TestBackPressureNothingDropped: a receiver that posts nothing buffers
// up to shm.MaxUnexpected messages, then stops draining its queue: the
// sender's injects get ErrAgain and its sends stay queued. Once receives
// are posted every message arrives, in order.
func TestBackPressureNothingDropped(t *testing.T) {
	a, b, ab, _ := pair(t, nodeOpts{})
	total := shm.MaxUnexpected + shm.RingSlots + 100
	msg := make([]byte, 8)
	sent := 0
	refused := false
	deadline := time.Now().Add(10 * time.Second)
	for sent < total && time.Now().Before(deadline) {
		binary.LittleEndian.PutUint64(msg, uint64(sent))
		err := a.ep.Inject(msg, ab)
		switch {
		case err == nil:
			sent++
		case errors.Is(err, fabric.ErrAgain):
			refused = true
			b.rxcq.Read(nil) // the receiver progresses but may not drain
			if sent >= shm.MaxUnexpected+shm.RingSlots {
				goto queued
			}
		default:
			t.Fatal(err)
		}
		if sent%64 == 0 {
			b.rxcq.Read(nil)
		}
	}
queued:
	if !refused {
		t.Fatalf("%d injects were all accepted; want back-pressure", sent)
	}
	// Sends (not injects) are queued rather than refused.
	var extra [][]byte
	for i := 0; i < 50; i++ {
		m := make([]byte, 8)
		binary.LittleEndian.PutUint64(m, uint64(sent+i))
		extra = append(extra, m)
		retry(t, "send", func() error { return a.ep.Send(m, nil, ab, nil) }, a.txcq)
	}
	total = sent + len(extra)
	buf := make([]byte, 8)
	for i := 0; i < total; i++ {
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		got, ee := wait(t, b.rxcq, a.txcq)
		if ee != nil || binary.LittleEndian.Uint64(buf) != uint64(i) || got.Len != 8 {
			t.Fatalf("message %d of %d: %+v %+v %d", i, total, got, ee, binary.LittleEndian.Uint64(buf))
		}
	}
	for i := range extra {
		if _, ee := wait(t, a.txcq, b.rxcq); ee != nil {
			t.Fatalf("send completion %d: %+v", i, ee)
		}
	}
}
