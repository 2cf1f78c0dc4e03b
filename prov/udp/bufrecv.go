package udp

import "github.com/gofabric/fabric/provider"

// Buffered receives (FI_BUFFERED_RECV): an unexpected datagram is kept
// whole in a pooled buffer (ubuf) until a receive takes it; under the
// mode the receive queue reports that buffer to the application, which
// claims the datagram (StartMsg copies it) or discards it (DiscardMsg).
// The pool bounds the memory: MaxUnexpected buffers of MaxMsgSize
// (rx_attr.total_buffered_recv); beyond it datagrams are dropped, as
// FI_EP_DGRAM allows.

// Buffered-receive defaults: FI_OPT_BUFFERED_LIMIT is the largest
// datagram (every message is reported whole), FI_OPT_BUFFERED_MIN what a
// completion shows at least when the application lowers the limit.
const (
	bufferedMinDefault = 64
	bufferedLimitMax   = MaxMsgSize
)

// totalBufferedRecv is rx_attr.total_buffered_recv: the bytes the pool of
// unexpected datagrams holds at most.
const totalBufferedRecv = MaxUnexpected * MaxMsgSize

var (
	_ provider.BufferedPeer      = (*endpoint)(nil)
	_ provider.BufferedEndpoint  = (*endpoint)(nil)
	_ provider.BufferedRecvOffer = udpProvider{}
)

// BufferedRecv implements provider.BufferedRecvOffer: every udp Info.
func (udpProvider) BufferedRecv(*provider.Info) bool { return true }

// BufferedDefaults implements provider.BufferedEndpoint.
func (ep *endpoint) BufferedDefaults() (min, limit, max uint64) {
	return bufferedMinDefault, bufferedLimitMax, bufferedLimitMax
}

// Buffered implements provider.BufferedPeer: the datagram stored for e.
func (ep *endpoint) Buffered(e *provider.RxEntry) []byte {
	u, ok := e.PeerContext.(*ubuf)
	if !ok || u == nil {
		return nil
	}
	return u.b[:u.n]
}
