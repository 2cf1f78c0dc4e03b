package fabtest

import (
	"encoding/binary"
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

// connectionless skips connection-oriented targets.
func connectionless(t *testing.T, tg Target) {
	t.Helper()
	if tg.EPType == fabric.EPMsg {
		t.Skip("needs connectionless addressing")
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
