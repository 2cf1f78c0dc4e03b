package udp

import (
	"bytes"
	"testing"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

func liveBufs(ep *endpoint) int {
	ep.poolMu.Lock()
	defer ep.poolMu.Unlock()
	return ep.live
}

// Under FI_BUFFERED_RECV the report shows the pooled datagram buffer; a
// claim copies it and frees the buffer, and the buffers of datagrams not
// claimed go back to the pool when the endpoint closes.
func TestBufferedRecvBuffersReleased(t *testing.T) {
	a, b := pair(t, epOpts{})
	b.rq.SetCompletion(b.rxCQ, b.rx) // as the root package does at Enable
	b.rq.SetBuffered(&srx.BufConfig{Limit: MaxMsgSize})
	const n = 5
	for i := range n {
		a.send(t, b, []byte{'m', byte('0' + i)}, nil)
	}
	b.waitRx(t, n)
	ents, _, _ := b.rxCQ.snapshot()
	for i, e := range ents {
		if !bytes.Equal(e.Buf, []byte{'m', byte('0' + i)}) {
			t.Fatalf("report %d shows %q", i, e.Buf)
		}
	}
	if got := liveBufs(b.ep); got != n {
		t.Fatalf("%d buffers held for %d reported datagrams", got, n)
	}
	if err := b.rq.ClaimBuffered(ents[0].OpContext.(srx.BufRef), &provider.Msg{}, false, true); err != nil {
		t.Fatalf("discard: %v", err)
	}
	if got := liveBufs(b.ep); got != n-1 {
		t.Fatalf("%d buffers held after a discard, want %d", got, n-1)
	}
	b.ep.Close()
	b.rq.Close()
	if got := liveBufs(b.ep); got != 0 {
		t.Fatalf("%d buffers held after close", got)
	}
}
