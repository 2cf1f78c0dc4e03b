package sim_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/prov/sim"
)

// The cross-process mode between two real processes: the test binary
// re-executed as the peer (TestMain runs helperMain when SIM_TEST_HELPER
// is set).

const (
	envHelper    = "SIM_TEST_HELPER"     // the helper's role: serve or stall
	envHelperNet = "SIM_TEST_HELPER_NET" // the network's name
	helperKey    = 0x77                  // the key of the helper's 64-byte region
	bigSize      = 200 << 10             // a message of several datagrams
)

// helperKeep keeps the helper's objects reachable until it is killed.
var helperKeep []any

// helperMain is the peer process: it opens an RDM endpoint on the
// network named by SIM_TEST_HELPER_NET with a 64-byte region (key
// helperKey, remote read and write) and prints "name <hex>". Role
// serve: it progresses for ever, serving RMA and atomics, and answers
// each message: the first untagged one holds the parent's name, which it
// inserts in its AV, then every message is echoed, a tagged one with its
// tag plus 1. Role stall: it never progresses (its socket's reader still
// acknowledges messages; requests wait).
func helperMain(role string) int {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "helper: %s: %v\n", what, err)
		return 1
	}
	nw, err := sim.NewNetwork(os.Getenv(envHelperNet), sim.Config{CrossProcess: true})
	if err != nil {
		return fail("network", err)
	}
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg | fabric.CapTagged | fabric.CapRMA | fabric.CapAtomic
	h.EPAttr.Type = fabric.EPRDM
	h.FabricAttr.ProvName = "sim"
	h.FabricAttr.Name = nw.Name()
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err != nil {
		return fail("getinfo", err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		return fail("fabric", err)
	}
	dom, err := fab.OpenDomain(info)
	if err != nil {
		return fail("domain", err)
	}
	av, err := dom.OpenAV(nil)
	if err != nil {
		return fail("av", err)
	}
	cq, err := dom.OpenCQ(&fabric.CQAttr{Size: 64, Format: fabric.CQFormatTagged})
	if err != nil {
		return fail("cq", err)
	}
	ep, err := dom.OpenEndpoint(info)
	if err != nil {
		return fail("endpoint", err)
	}
	if err := ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
		return fail("bind cq", err)
	}
	if err := ep.BindAV(av); err != nil {
		return fail("bind av", err)
	}
	if err := ep.Enable(); err != nil {
		return fail("enable", err)
	}
	mem := make([]byte, 64)
	mr, err := dom.RegMR(mem, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, helperKey, 0)
	if err != nil {
		return fail("mr", err)
	}
	name, err := ep.Name()
	if err != nil {
		return fail("name", err)
	}
	helperKeep = append(helperKeep, nw, fab, dom, av, cq, ep, mr, mem)
	fmt.Printf("name %x\n", name)
	runtime.GC() // a collection must not close anything: all is kept above
	if role == "stall" {
		for {
			time.Sleep(time.Hour) // until the parent kills us
			runtime.KeepAlive(helperKeep)
		}
	}
	rbuf, tbuf := make([]byte, bigSize), make([]byte, bigSize)
	if err := ep.Recv(rbuf, nil, fabric.AddrUnspec, "r"); err != nil {
		return fail("recv", err)
	}
	if err := ep.TRecv(tbuf, nil, fabric.AddrUnspec, 0, ^uint64(0), "t"); err != nil {
		return fail("trecv", err)
	}
	peer := fabric.AddrNotAvail
	ent := make([]fabric.CQEntry, 8)
	for {
		n, err := cq.Read(ent)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			cq.ReadErr(&ee)
			return fail("completion", ee.Err)
		}
		for _, e := range ent[:n] {
			switch e.OpContext {
			case "r":
				msg := append([]byte(nil), rbuf[:e.Len]...)
				if peer == fabric.AddrNotAvail {
					a := make([]fabric.Addr, 1)
					if k, err := av.Insert([][]byte{msg}, a, 0); k != 1 {
						return fail("insert", err)
					}
					peer = a[0]
				}
				if err := ep.Send(msg, nil, peer, nil); err != nil {
					return fail("echo", err)
				}
				if err := ep.Recv(rbuf, nil, fabric.AddrUnspec, "r"); err != nil {
					return fail("recv", err)
				}
			case "t":
				msg := append([]byte(nil), tbuf[:e.Len]...)
				if err := ep.TSend(msg, nil, peer, e.Tag+1, nil); err != nil {
					return fail("tagged echo", err)
				}
				if err := ep.TRecv(tbuf, nil, fabric.AddrUnspec, 0, ^uint64(0), "t"); err != nil {
					return fail("trecv", err)
				}
			}
		}
		if n == 0 {
			runtime.Gosched()
		}
	}
}

var helperSeq atomic.Uint64

// startHelper starts a helper process with role on a new cross-process
// network of its own and returns the parent's side of that network, the
// helper and its endpoint's name; the helper is killed at cleanup.
func startHelper(t *testing.T, role string) (*sim.Network, *exec.Cmd, []byte) {
	t.Helper()
	name := fmt.Sprintf("xp-%d-%d", os.Getpid(), helperSeq.Add(1))
	nw, err := sim.NewNetwork(name, sim.Config{CrossProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nw.Close() })
	cmd, s := testutil.StartChild(t, "^$", 20*time.Second, envHelper+"="+role, envHelperNet+"="+name)
	h, ok := strings.CutPrefix(s, "name ")
	peer, err := hex.DecodeString(h)
	if !ok || err != nil {
		t.Fatalf("helper said %q", s)
	}
	return nw, cmd, peer
}

// waitFor reads c's CQ until the completion of ctx, for at most bound
// of wall-clock time; errEntry is set when it completed in error.
func waitFor(t *testing.T, c *cluster, ctx any, bound time.Duration) (fabric.CQEntry, *fabric.CQErrEntry) {
	t.Helper()
	ent := make([]fabric.CQEntry, 1)
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); {
		n, err := c.cqs[0].Read(ent)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			if err := c.cqs[0].ReadErr(&ee); err != nil {
				t.Fatal(err)
			}
			if ee.OpContext != ctx {
				t.Fatalf("waiting for %v: error completion of %v: %v", ctx, ee.OpContext, ee.Err)
			}
			return fabric.CQEntry{}, &ee
		}
		if n == 1 {
			if ent[0].OpContext != ctx {
				t.Fatalf("waiting for %v: completion of %v", ctx, ent[0].OpContext)
			}
			return ent[0], nil
		}
		runtime.Gosched()
	}
	t.Fatalf("no completion of %v in %v", ctx, bound)
	return fabric.CQEntry{}, nil
}

func mustOK(t *testing.T, c *cluster, ctx any) fabric.CQEntry {
	t.Helper()
	e, ee := waitFor(t, c, ctx, 20*time.Second)
	if ee != nil {
		t.Fatalf("%v completed in error: %v", ctx, ee.Err)
	}
	return e
}

func mustFail(t *testing.T, c *cluster, ctx any, bound time.Duration) {
	t.Helper()
	_, ee := waitFor(t, c, ctx, bound)
	if ee == nil {
		t.Fatalf("%v completed without error", ctx)
	}
	if !errors.Is(ee.Err, syscall.EHOSTUNREACH) {
		t.Fatalf("%v: error %v, want FI_EHOSTUNREACH", ctx, ee.Err)
	}
}

// TestCrossProcess: messages (one of several datagrams, one with
// FI_DELIVERY_COMPLETE), tagged messages, RMA writes and reads and a fetching atomic between two
// processes; once the peer is killed, operations to it complete with
// FI_EHOSTUNREACH.
func TestCrossProcess(t *testing.T) {
	nw, cmd, peerName := startHelper(t, "serve")
	c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: 1, caps: fabric.CapRMA | fabric.CapAtomic})
	peer := make([]fabric.Addr, 1)
	if k, err := c.av.Insert([][]byte{peerName}, peer, 0); k != 1 {
		t.Fatal(err)
	}
	me, _ := c.eps[0].Name()
	ep := c.eps[0]
	rbuf, tbuf := make([]byte, bigSize), make([]byte, bigSize)

	// Messages: our name (the helper learns who we are), then a large one.
	if err := ep.Recv(rbuf, nil, fabric.AddrUnspec, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := ep.Send(me, nil, peer[0], "s1"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, "s1")
	if e := mustOK(t, c, "r1"); !bytes.Equal(rbuf[:e.Len], me) {
		t.Fatalf("echo: % x", rbuf[:e.Len])
	}
	big := make([]byte, bigSize)
	for i := range big {
		big[i] = byte(i * 31)
	}
	if err := ep.Recv(rbuf, nil, fabric.AddrUnspec, "r2"); err != nil {
		t.Fatal(err)
	}
	if err := ep.Send(big, nil, peer[0], "s2"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, "s2")
	if e := mustOK(t, c, "r2"); !bytes.Equal(rbuf[:e.Len], big) {
		t.Fatalf("large echo: %d bytes, equal %v", e.Len, bytes.Equal(rbuf[:e.Len], big))
	}

	// Delivery complete: the helper's progress acknowledges it.
	if err := ep.Recv(rbuf, nil, fabric.AddrUnspec, "r3"); err != nil {
		t.Fatal(err)
	}
	if err := ep.SendMsg(&fabric.Msg{IOV: [][]byte{[]byte("dc")}, Addr: peer[0], Context: "dc"},
		fabric.FlagDeliveryComplete|fabric.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, "dc")
	if e := mustOK(t, c, "r3"); string(rbuf[:e.Len]) != "dc" {
		t.Fatalf("echo %q", rbuf[:e.Len])
	}

	// Tagged.
	if err := ep.TRecv(tbuf, nil, fabric.AddrUnspec, 42, 0, "tr"); err != nil {
		t.Fatal(err)
	}
	if err := ep.TSend([]byte("tagged"), nil, peer[0], 41, "ts"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, "ts")
	if e := mustOK(t, c, "tr"); e.Tag != 42 || string(tbuf[:e.Len]) != "tagged" {
		t.Fatalf("tagged echo: tag %d %q", e.Tag, tbuf[:e.Len])
	}

	// RMA and an atomic on the helper's region.
	if err := ep.RMAWrite([]byte("abcdefgh"), nil, peer[0], 0, helperKey, "w"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, "w")
	got := make([]byte, 8)
	if err := ep.RMARead(got, nil, peer[0], 0, helperKey, "rd"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, "rd")
	if string(got) != "abcdefgh" {
		t.Fatalf("read back %q", got)
	}
	old := make([]byte, 8)
	one := binary.LittleEndian.AppendUint64(nil, 5)
	for i := range 2 {
		if err := ep.FetchAtomic(one, nil, old, nil, peer[0], 8, helperKey, fabric.DatatypeUint64, fabric.AtomicSum, "a"); err != nil {
			t.Fatal(err)
		}
		mustOK(t, c, "a")
		if v := binary.LittleEndian.Uint64(old); v != uint64(5*i) {
			t.Fatalf("fetch atomic %d fetched %d", i, v)
		}
	}
	// A refused key completes in error at the initiator.
	if err := ep.RMARead(got, nil, peer[0], 0, helperKey+1, "badkey"); err != nil {
		t.Fatal(err)
	}
	if _, ee := waitFor(t, c, "badkey", 20*time.Second); ee == nil {
		t.Fatal("a read with a wrong key succeeded")
	}

	// The peer is killed: what follows fails, within a bound.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := ep.Send([]byte("gone"), nil, peer[0], "dead-send"); err != nil {
		t.Fatal(err)
	}
	mustFail(t, c, "dead-send", 5*time.Second)
	if err := ep.RMARead(got, nil, peer[0], 0, helperKey, "dead-read"); err != nil {
		t.Fatal(err)
	}
	mustFail(t, c, "dead-read", 5*time.Second)
}

// TestCrossProcessPeerKilled: an RMA read and a delivery-complete send
// wait for a peer that does not progress; when the peer is killed, they
// complete with FI_EHOSTUNREACH within a bound (the liveness probe), and
// nothing hangs.
func TestCrossProcessPeerKilled(t *testing.T) {
	nw, cmd, peerName := startHelper(t, "stall")
	c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: 1, caps: fabric.CapRMA | fabric.CapAtomic})
	peer := make([]fabric.Addr, 1)
	if k, err := c.av.Insert([][]byte{peerName}, peer, 0); k != 1 {
		t.Fatal(err)
	}
	ep := c.eps[0]
	// A send completes: the peer's socket reader takes it into its
	// network, progress or not.
	if err := ep.Send([]byte("hello"), nil, peer[0], "s"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, "s")
	got := make([]byte, 8)
	if err := ep.RMARead(got, nil, peer[0], 0, helperKey, "rd"); err != nil {
		t.Fatal(err)
	}
	// A delivery-complete send waits for the peer's progress.
	if err := ep.SendMsg(&fabric.Msg{IOV: [][]byte{[]byte("dc")}, Addr: peer[0], Context: "dc"},
		fabric.FlagDeliveryComplete|fabric.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	ent := make([]fabric.CQEntry, 1)
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
		if n, err := c.cqs[0].Read(ent); n != 0 || (err != nil && !errors.Is(err, fabric.ErrAgain)) {
			t.Fatalf("the read completed (%d, %v) though the peer does not progress", n, err)
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	failed := map[any]bool{}
	for deadline := time.Now().Add(5 * time.Second); len(failed) < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("after the kill, only %v completed in error", failed)
		}
		if n, err := c.cqs[0].Read(ent); n != 0 {
			t.Fatalf("%v completed without error", ent[0].OpContext)
		} else if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			if err := c.cqs[0].ReadErr(&ee); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(ee.Err, syscall.EHOSTUNREACH) || failed[ee.OpContext] {
				t.Fatalf("%v: error %v, want FI_EHOSTUNREACH once", ee.OpContext, ee.Err)
			}
			failed[ee.OpContext] = true
		}
		runtime.Gosched()
	}
	t.Logf("the read and the delivery-complete send failed %v after the kill", time.Since(start).Round(time.Millisecond))
}
