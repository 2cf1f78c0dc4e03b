package fabtest

import (
	"encoding/binary"
	"errors"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// msgOnly skips connectionless targets: connection management is for
// FI_EP_MSG.
func msgOnly(t *testing.T, tg Target) {
	if tg.EPType != fabric.EPMsg {
		t.Skip("connection management is for FI_EP_MSG")
	}
}

// drainTx reads a's transmit completions until n have been seen.
func drainTx(t *testing.T, cq *fabric.CQ, n int, others ...*fabric.CQ) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, ee := waitCQ(t, cq, others...); ee != nil {
			t.Fatalf("send completion %d: %+v", i, ee)
		}
	}
}

// connectionless skips connection-oriented (FI_EP_MSG) targets: the case
// needs connectionless addressing (an AV, extra endpoints reached by
// address).
func connectionless(t *testing.T, tg Target) {
	t.Helper()
	if tg.EPType == fabric.EPMsg {
		t.Skipf("%v: needs connectionless addressing", tg.EPType)
	}
}

// bareEndpoint opens a second endpoint on e's domain, closed at cleanup.
func (e *env) bareEndpoint() *fabric.Endpoint {
	e.t.Helper()
	ep, err := e.dom.OpenEndpoint(e.info)
	if err != nil {
		e.t.Fatalf("OpenEndpoint: %v", err)
	}
	e.t.Cleanup(func() { closeOK(e.t, "endpoint", ep.Close()) })
	return ep
}

// sockPort returns the port of a sockaddr_in/sockaddr_in6 address of
// format f, and whether the address is one.
func sockPort(f fabric.AddrFormat, b []byte) (int, bool) {
	switch {
	case f == fabric.SockAddrIn && len(b) >= 16 && b[0] == 2 && b[1] == 0,
		f == fabric.SockAddrIn6 && len(b) >= 28 && b[0] == 10 && b[1] == 0:
		return int(binary.BigEndian.Uint16(b[2:4])), true
	}
	return 0, false
}

// sizes returns message sizes up to the provider's limit.
func sizes(max uint64) []int {
	var out []int
	for _, s := range []int{0, 1, 2, 3, 64, 255, 1024, 1472, 4096, 65536, 1 << 20} {
		if uint64(s) <= max {
			out = append(out, s)
		}
	}
	return out
}

// sharedRxInfo asks info for a shared receive context (FI_SHARED_CONTEXT).
func sharedRxInfo(info *fabric.Info) { info.EPAttr.RxCtxCnt = fabric.SharedContext }

// supported reports whether a call that returned err is implemented by the
// target: true on success, false when err is ErrNoSys or ErrOpNotSupp (the
// target does not offer it). Any other error fails the test: a setup
// failure is never a reason to leave a check out.
func supported(t testing.TB, what string, err error) bool {
	t.Helper()
	switch {
	case err == nil:
		return true
	case errors.Is(err, fabric.ErrNoSys), errors.Is(err, fabric.ErrOpNotSupp):
		return false
	}
	t.Fatalf("%s: %v", what, err)
	return false
}

// skipIfNotSupported skips the test when err says the target does not
// offer the call (ErrNoSys, ErrOpNotSupp) and fails it on any other error.
func skipIfNotSupported(t testing.TB, what string, err error) {
	t.Helper()
	if !supported(t, what, err) {
		t.Skipf("%s: not supported by the target: %v", what, err)
	}
}

// claimsHint reports whether the target's provider returns an info for
// hints changed by modify (an attribute value it may not offer).
func (tg Target) claimsHint(modify func(*fabric.Info)) bool {
	h := tg.hints(0)
	modify(h)
	_, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
	return err == nil
}
