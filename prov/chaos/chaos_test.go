package chaos_test

import (
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestGoAPIPassThrough opens udp through chaos.Open with the zero Config
// and exchanges messages both ways: every send arrives once, in order,
// with its context, and the hook saw both endpoints.
func TestGoAPIPassThrough(t *testing.T) {
	h, a, b := pair(t, "udp", fabric.EPDgram, 0, nil)
	if got := h.Stats().Endpoints; got != 2 {
		t.Fatalf("Stats().Endpoints = %d, want 2", got)
	}
	const n = 20
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, 16)
		if err := b.ep.Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if err := a.ep.Send([]byte(fmt.Sprintf("m%02d", i)), nil, a.peer, i); err != nil {
			t.Fatal(err)
		}
	}
	tx := drain(t, a.txcq, n, 5*time.Second)
	rx := drain(t, b.rxcq, n, 5*time.Second)
	if len(tx.ok) != n || len(tx.errs) != 0 || len(rx.ok) != n || len(rx.errs) != 0 {
		t.Fatalf("tx %d+%d rx %d+%d completions, want %d each", len(tx.ok), len(tx.errs), len(rx.ok), len(rx.errs), n)
	}
	for i, e := range rx.ok {
		if e.OpContext != i || string(bufs[i][:e.Len]) != fmt.Sprintf("m%02d", i) {
			t.Fatalf("receive %d: context %v, %q", i, e.OpContext, bufs[i][:e.Len])
		}
	}
}
