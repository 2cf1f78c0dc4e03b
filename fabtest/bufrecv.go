package fabtest

import (
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// Helpers of the buffered-receive cases (FI_BUFFERED_RECV): fi_msg(3)
// "Buffered Receives", fi_tagged(3) "Buffered Tagged Receives",
// fi_endpoint(3) FI_OPT_BUFFERED_MIN/LIMIT, fi_cq(3) FI_CLAIM and FI_MORE.

// bufRecvOffered skips the test unless the target returns
// FI_BUFFERED_RECV in the Info's mode when the hints (with caps) have it.
func bufRecvOffered(t *testing.T, tg Target, caps fabric.Caps) {
	t.Helper()
	h := tg.hints(caps)
	h.Mode |= fabric.ModeBufferedRecv
	infos, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
	if err != nil {
		if caps != 0 && errors.Is(err, fabric.ErrNoData) {
			t.Skipf("%s does not claim %v", tg.Provider, caps)
		}
		t.Fatalf("GetInfo(%s, FI_BUFFERED_RECV): %v", tg.Provider, err)
	}
	if infos[0].Mode&fabric.ModeBufferedRecv == 0 {
		t.Skipf("%s %v does not offer FI_BUFFERED_RECV", tg.Provider, tg.EPType)
	}
}

// bufPair opens a pair whose endpoints work under FI_BUFFERED_RECV; set,
// if non-nil, runs on each endpoint before it is enabled.
func bufPair(t *testing.T, tg Target, caps fabric.Caps, set func(e *env)) (a, b *env, ab fabric.Addr) {
	t.Helper()
	bufRecvOffered(t, tg, caps)
	o := envOpts{caps: caps, mode: fabric.ModeBufferedRecv, bind: set}
	a, b, ab, _ = tg.pair(t, o)
	// Before the endpoints close: every send of bufSend completes once,
	// in error only if b was closed with its message unclaimed.
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		for ; a.bufSends > 0; a.bufSends-- {
			if _, ee := waitCQ(t, a.txcq, b.rxcq); ee != nil && !b.epClosed {
				t.Errorf("send completion: %+v", *ee)
			}
		}
		expectEmpty(t, a.txcq, scaled(5*time.Millisecond))
	})
	return a, b, ab
}

// bufSend sends msg from a to b (tagged with tag when tagged). Its
// completion is read at the end of the test (bufPair): a message sent by
// rendezvous completes only when its report is claimed or discarded.
func bufSend(t *testing.T, a, b *env, ab fabric.Addr, msg []byte, tagged bool, tag uint64) {
	t.Helper()
	retry(t, "send", func() error {
		if tagged {
			return a.ep.TSend(msg, nil, ab, tag, "send")
		}
		return a.ep.Send(msg, nil, ab, "send")
	}, a.txcq, b.rxcq)
	a.bufSends++
}

// waitBuffered reads b's receive CQ until the report of a buffered
// receive arrives and returns it with its RecvContext.
func waitBuffered(t *testing.T, b, a *env) (fabric.CQEntry, *fabric.RecvContext) {
	t.Helper()
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil {
		t.Fatalf("buffered receive: error completion %+v", ee)
	}
	rc, ok := got.OpContext.(*fabric.RecvContext)
	if !ok || rc == nil {
		t.Fatalf("buffered receive: op context %T %v, want *fabric.RecvContext", got.OpContext, got.OpContext)
	}
	return got, rc
}

// claim claims the buffered receive rc into buf (FI_CLAIM).
func claim(ep *fabric.Endpoint, rc *fabric.RecvContext, buf []byte, tagged bool) error {
	m := &fabric.Msg{IOV: [][]byte{buf}, Context: rc}
	if tagged {
		return ep.TRecvMsg(m, fabric.FlagClaim)
	}
	return ep.RecvMsg(m, fabric.FlagClaim)
}

// discard discards the buffered receive rc (FI_DISCARD).
func discard(ep *fabric.Endpoint, rc *fabric.RecvContext, tagged bool) error {
	m := &fabric.Msg{Context: rc}
	if tagged {
		return ep.TRecvMsg(m, fabric.FlagDiscard)
	}
	return ep.RecvMsg(m, fabric.FlagDiscard)
}
