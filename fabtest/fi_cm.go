package fabtest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// cmCases lists the fi_cm(3) behaviours, in the order they run.
var cmCases = []testCase{
	{"fi_cm/connect_accept_with_data", cmConnectAcceptWithData},
	{"fi_cm/reject_with_data_ECONNREFUSED_then_reconnect", cmRejectWithDataECONNREFUSEDThenReconnect},
	{"fi_cm/connect_to_closed_listener_ECONNREFUSED", cmConnectToClosedListenerECONNREFUSED},
	{"fi_cm/cm_data_size_and_oversize_EINVAL", cmCmDataSizeAndOversizeEINVAL},
	{"fi_cm/backlog_before_and_after_listen", cmBacklogBeforeAndAfterListen},
	{"fi_cm/shutdown_reported_once_per_side", cmShutdownReportedOncePerSide},
	{"fi_cm/shutdown_cancels_outstanding_sends", cmShutdownCancelsOutstandingSends},
	{"fi_cm/peer_gone_pending_ops_complete_in_error", cmPeerGonePendingOpsCompleteInError},
}

func cmConnectAcceptWithData(t *testing.T, tg Target) {
	msgOnly(t, tg)
	l := tg.listen(t, envOpts{})
	a := tg.open(t, envOpts{deferConn: true})
	if err := a.ep.Connect(l.name, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	ev, ee := waitEvent(t, l.eq)
	if ee != nil || ev.Event != fabric.EventConnReq || string(ev.CMData) != "hello" || ev.Info == nil {
		t.Fatalf("FI_CONNREQ = %+v %+v; want cm data \"hello\"", ev, ee)
	}
	if ev.FID != l.pep {
		t.Fatalf("FI_CONNREQ fid = %v; want the passive endpoint", ev.FID)
	}
	b := tg.open(t, envOpts{connReq: ev.Info})
	if err := b.ep.Accept([]byte("world")); err != nil {
		t.Fatal(err)
	}
	ev, ee = waitEvent(t, a.eq)
	if ee != nil || ev.Event != fabric.EventConnected || ev.FID != a.ep || string(ev.CMData) != "world" {
		t.Fatalf("client FI_CONNECTED = %+v %+v; want accept data \"world\"", ev, ee)
	}
	ev, ee = waitEvent(t, b.eq)
	if ee != nil || ev.Event != fabric.EventConnected || ev.FID != b.ep || len(ev.CMData) != 0 {
		t.Fatalf("server FI_CONNECTED = %+v %+v; want no data", ev, ee)
	}
	peer, err := a.ep.Peer()
	if err != nil || !bytes.Equal(peer, l.name) {
		t.Fatalf("fi_getpeer = % x, %v; want % x", peer, err, l.name)
	}
}

func cmRejectWithDataECONNREFUSEDThenReconnect(t *testing.T, tg Target) {
	msgOnly(t, tg)
	l := tg.listen(t, envOpts{})
	a := tg.open(t, envOpts{deferConn: true})
	if err := a.ep.Connect(l.name, nil); err != nil {
		t.Fatal(err)
	}
	ev, ee := waitEvent(t, l.eq)
	if ee != nil || ev.Event != fabric.EventConnReq {
		t.Fatalf("want FI_CONNREQ: %+v %+v", ev, ee)
	}
	if err := l.pep.Reject(ev.Info.Handle, []byte("go away")); err != nil {
		t.Fatalf("fi_reject: %v", err)
	}
	_, ee = waitEvent(t, a.eq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrConnRefused) || string(ee.ErrData) != "go away" {
		t.Fatalf("rejected connect: %+v; want FI_ECONNREFUSED with the reject data", ee)
	}
	tg.connect(t, envOpts{}) // a new endpoint connects after the reject
}

// cmConnectToClosedListenerECONNREFUSED: fi_connect to an address nobody
// listens on any more is accepted, then reported on the EQ as an error
// entry for the endpoint with FI_ECONNREFUSED.
func cmConnectToClosedListenerECONNREFUSED(t *testing.T, tg Target) {
	msgOnly(t, tg)
	l := tg.listen(t, envOpts{})
	name := append([]byte(nil), l.name...)
	if err := l.pep.Close(); err != nil {
		t.Fatal(err)
	}
	a := tg.open(t, envOpts{deferConn: true})
	if err := a.ep.Connect(name, nil); err != nil {
		t.Fatalf("fi_connect: %v", err)
	}
	ev, ee := waitEvent(t, a.eq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrConnRefused) || ee.FID != a.ep {
		t.Fatalf("connect to a closed listener: %+v %+v; want an FI_ECONNREFUSED error entry", ev, ee)
	}
}

func cmCmDataSizeAndOversizeEINVAL(t *testing.T, tg Target) {
	msgOnly(t, tg)
	l := tg.listen(t, envOpts{})
	a := tg.open(t, envOpts{deferConn: true})
	pmax, err := l.pep.GetOpt(fabric.OptEndpoint, fabric.OptCMDataSize)
	if err != nil || pmax == 0 {
		t.Fatalf("passive endpoint FI_OPT_CM_DATA_SIZE = %d, %v", pmax, err)
	}
	if err := l.pep.SetOpt(fabric.OptEndpoint, fabric.OptCMDataSize, 1); err == nil {
		t.Fatal("passive endpoint FI_OPT_CM_DATA_SIZE is read-only but SetOpt succeeded")
	}
	max, err := a.ep.GetOpt(fabric.OptEndpoint, fabric.OptCMDataSize)
	if err != nil || max == 0 {
		t.Fatalf("FI_OPT_CM_DATA_SIZE = %d, %v", max, err)
	}
	if err := a.ep.SetOpt(fabric.OptEndpoint, fabric.OptCMDataSize, 1); err == nil {
		t.Fatal("FI_OPT_CM_DATA_SIZE is read-only but SetOpt succeeded")
	}
	isErr(t, "connect with max+1 bytes", a.ep.Connect(l.name, make([]byte, max+1)), fabric.ErrInval)
}

func cmShutdownReportedOncePerSide(t *testing.T, tg Target) {
	msgOnly(t, tg)
	a, b := tg.connect(t, envOpts{})
	if err := a.ep.Shutdown(0); err != nil {
		t.Fatalf("fi_shutdown: %v", err)
	}
	for _, e := range []*env{a, b} {
		ev, ee := waitEvent(t, e.eq)
		if ee != nil || ev.Event != fabric.EventShutdown || ev.FID != e.ep {
			t.Fatalf("want FI_SHUTDOWN for %p, got %+v %+v", e.ep, ev, ee)
		}
	}
	for _, e := range []*env{a, b} {
		if ev, err := e.eq.SRead(scaled(50*time.Millisecond), 0); err == nil {
			t.Fatalf("second event after FI_SHUTDOWN: %+v", ev)
		}
	}
	if err := a.ep.Send([]byte("late"), nil, 0, nil); err == nil {
		deadline := time.Now().Add(scaled(time.Second))
		for time.Now().Before(deadline) {
			var ent [1]fabric.CQEntry
			n, rerr := a.txcq.Read(ent[:])
			if n == 1 {
				t.Fatal("send after shutdown completed successfully")
			}
			if errors.Is(rerr, fabric.ErrAvail) {
				break
			}
		}
	}
}

// fi_shutdown with sends outstanding (FI_DELIVERY_COMPLETE to a peer that
// has posted no receive): fi_cm(3) lets a provider cancel or discard them,
// but "all canceled completions will be written before fi_shutdown
// returns"; by the project's rule nothing posted is lost, so each
// completes once with FI_ECANCELED, already in the CQ when fi_shutdown
// returns, and is counted once in the send counter's error value.
func cmShutdownCancelsOutstandingSends(t *testing.T, tg Target) {
	msgOnly(t, tg)
	bind, cntrs := bindSendCntr(t)
	a, _ := tg.connect(t, envOpts{bind: bind})
	cntr := cntrs[a]
	if cntr == nil {
		t.Fatal("no send counter bound")
	}
	const n = 3
	want := map[any]bool{}
	for k := 0; k < n; k++ {
		ctx := fmt.Sprintf("s%d", k)
		if err := sendHeld(tg, a.ep, []byte(ctx), fabric.AddrUnspec, ctx); err != nil {
			t.Fatalf("send %d: %v", k, err)
		}
		want[ctx] = true
	}
	if err := a.ep.Shutdown(0); err != nil {
		t.Fatalf("fi_shutdown: %v", err)
	}
	// No waiting: the completions are written before fi_shutdown returns.
	for k := 0; k < n; k++ {
		var ent [1]fabric.CQEntry
		got, err := a.txcq.Read(ent[:])
		if !errors.Is(err, fabric.ErrAvail) {
			t.Fatalf("completion %d after fi_shutdown returned: n=%d %v %+v; want an FI_ECANCELED error entry",
				k, got, err, ent[0])
		}
		var ee fabric.CQErrEntry
		if err := a.txcq.ReadErr(&ee); err != nil {
			t.Fatal(err)
		}
		if !want[ee.OpContext] || !errors.Is(ee.Err, fabric.ErrCanceled) || ee.Flags&fabric.FlagSend == 0 {
			t.Fatalf("completion %d after fi_shutdown: %+v; want FI_ECANCELED of a send not yet completed", k, ee)
		}
		delete(want, ee.OpContext)
	}
	expectEmpty(t, a.txcq, scaled(20*time.Millisecond))
	checkSendCntr(t, "after fi_shutdown", cntr, n, n)
}

func cmPeerGonePendingOpsCompleteInError(t *testing.T, tg Target) {
	msgOnly(t, tg)
	a, b := tg.connect(t, envOpts{})
	ctx := new(int)
	if err := a.ep.Recv(make([]byte, 64), nil, fabric.AddrUnspec, ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.ep.Close(); err != nil {
		t.Fatal(err)
	}
	ev, ee := waitEvent(t, a.eq)
	if ee != nil || ev.Event != fabric.EventShutdown {
		t.Fatalf("want FI_SHUTDOWN after the peer closed, got %+v %+v", ev, ee)
	}
	if err := a.ep.Close(); err != nil {
		t.Fatal(err)
	}
	_, ce := waitCQ(t, a.rxcq)
	if ce == nil || ce.OpContext != ctx {
		t.Fatalf("pending receive after peer loss and close: %+v; want an error completion", ce)
	}
}

func cmBacklogBeforeAndAfterListen(t *testing.T, tg Target) {
	msgOnly(t, tg)
	info := tg.info(t, 0)
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "fabric", fab.Close()) })
	eq, err := fab.OpenEQ(&fabric.EQAttr{WaitObj: fabric.WaitUnspec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "eq", eq.Close()) })
	pep, err := fab.OpenPassiveEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "pep", pep.Close()) })
	isErr(t, "FI_BACKLOG 0", pep.SetBacklog(0), fabric.ErrInval)
	isErr(t, "FI_BACKLOG -1", pep.SetBacklog(-1), fabric.ErrInval)
	if err := pep.SetBacklog(3); err != nil {
		t.Fatalf("FI_BACKLOG before listen: %v", err)
	}
	if n, err := pep.Backlog(); err != nil || n != 3 {
		t.Fatalf("backlog = %d, %v; want 3", n, err)
	}
	if err := pep.Bind(eq, 0); err != nil {
		t.Fatal(err)
	}
	if err := pep.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := pep.SetBacklog(64); err != nil {
		t.Fatalf("FI_BACKLOG while listening: %v", err)
	}
	if n, err := pep.Backlog(); err != nil || n != 64 {
		t.Fatalf("backlog = %d, %v; want 64", n, err)
	}
	name, err := pep.Name()
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{info: info, fab: fab, eq: eq, pep: pep, name: name}
	a := tg.open(t, envOpts{deferConn: true})
	if err := a.ep.Connect(l.name, nil); err != nil {
		t.Fatal(err)
	}
	b := tg.accept(t, l, envOpts{}, nil)
	for _, e := range []*env{a, b} {
		if ev, ee := waitEvent(t, e.eq); ee != nil || ev.Event != fabric.EventConnected {
			t.Fatalf("FI_CONNECTED = %+v %+v", ev, ee)
		}
	}
	closeOK(t, "pep", pep.Close())
	isErr(t, "FI_BACKLOG after close", pep.SetBacklog(8), fabric.ErrClosed)
}
