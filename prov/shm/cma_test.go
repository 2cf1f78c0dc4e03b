package shm_test

import (
	"bytes"
	"testing"

	fabric "github.com/gofabric/fabric"
)

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
	if e, ee := wait(t, a.rxcq, a.txcq); ee != nil || e.OpContext != "back" || !bytes.Equal(back, msg) {
		t.Fatalf("echo: %+v %+v", e, ee)
	}
	if l := childLine(t, lines); l != "echoed" {
		t.Fatalf("child: %q", l)
	}
}
