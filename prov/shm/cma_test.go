package shm_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// The CMA path is tested at the sizes of the other tests (1 MiB, the
// boundary sizes): the threshold is lowered for this test binary and the
// processes it starts (the default, CMAMin, is 32 KiB).
func init() {
	if os.Getenv("FI_SHM_CMA_MIN") == "" {
		os.Setenv("FI_SHM_CMA_MIN", "65536")
	}
}

// TestCMARefusedAcrossProcesses: a peer process that cannot use CMA
// (FI_SHM_DISABLE_CMA=1: as under a seccomp filter or yama) refuses our
// CMA request; the 1 MiB message goes segmented instead, and its echo
// (segmented from the start) comes back intact. The cross-process tests
// of tagged_test.go and process_test.go cover CMA accepted.
func TestCMARefusedAcrossProcesses(t *testing.T) {
	a := newNode(t, nodeOpts{})
	_, lines := startDeathChild(t, "echo", a.addr, "FI_SHM_DISABLE_CMA=1")
	name := make([]byte, 64)
	if err := a.ep.Recv(name, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	got, ee := wait(t, a.rxcq, a.txcq)
	if ee != nil {
		t.Fatalf("child name: %+v", ee)
	}
	peer := a.insert(append([]byte(nil), name[:got.Len]...))
	back := make([]byte, 1<<20)
	if err := a.ep.TRecv(back, nil, fabric.AddrUnspec, 6, 0, "back"); err != nil {
		t.Fatal(err)
	}
	msg := pattern(1<<20, 9)
	retry(t, "send", func() error { return a.ep.TSend(msg, nil, peer, 5, "out") }, a.txcq, a.rxcq)
	if e, ee := wait(t, a.txcq, a.rxcq); ee != nil || e.OpContext != "out" {
		t.Fatalf("send: %+v %+v", e, ee)
	}
	// Block for the echo: the child's commands wake us through the futex
	// of our region.
	ent := make([]fabric.CQEntry, 1)
	if n, err := a.rxcq.SRead(ent, 1, 10*time.Second); n != 1 || err != nil || ent[0].OpContext != "back" ||
		!bytes.Equal(back, msg) {
		t.Fatalf("echo: %d %v %+v", n, err, ent[0])
	}
	if l := childLine(t, lines); l != "echoed" {
		t.Fatalf("child: %q", l)
	}
}

// BenchmarkLargePingPong: large messages in one process, by CMA (the
// default) or segmented (run with FI_SHM_DISABLE_CMA=1 to compare).
func BenchmarkLargePingPong(b *testing.B) {
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			rt := roundTrip(b, size, true, false)
			b.SetBytes(int64(2 * size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rt()
			}
		})
	}
}
