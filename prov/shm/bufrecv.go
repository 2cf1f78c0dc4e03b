package shm

import "github.com/gofabric/fabric/provider"

// Buffered receives (FI_BUFFERED_RECV): an unexpected message, inline,
// segmented or pulled with cross-memory attach, is kept whole in an
// unexpected-message buffer (ubuf) until a receive takes it; under the
// mode the receive queue reports that buffer to the application, which
// claims the message (StartMsg copies it) or discards it (DiscardMsg).
// MaxUnexpectedBytes and MaxUnexpected bound the memory
// (rx_attr.total_buffered_recv); beyond them the endpoint stops draining
// its command queue and senders wait (back-pressure), so nothing is lost.

// Buffered-receive defaults: FI_OPT_BUFFERED_LIMIT shows a message of up
// to one bounce buffer whole; it may be raised to the largest message,
// which the endpoint holds whole anyway.
const (
	bufferedMinDefault   = 64
	bufferedLimitDefault = BufSize
)

var (
	_ provider.BufferedPeer      = (*endpoint)(nil)
	_ provider.BufferedEndpoint  = (*endpoint)(nil)
	_ provider.BufferedRecvOffer = shmProvider{}
)

// BufferedRecv implements provider.BufferedRecvOffer: every shm Info.
func (shmProvider) BufferedRecv(*provider.Info) bool { return true }

// BufferedDefaults implements provider.BufferedEndpoint.
func (ep *endpoint) BufferedDefaults() (min, limit, max uint64) {
	return bufferedMinDefault, bufferedLimitDefault, MaxUnexpectedBytes
}

// Buffered implements provider.BufferedPeer: the message held for e.
func (ep *endpoint) Buffered(e *provider.RxEntry) []byte {
	ub, ok := e.PeerContext.(*ubuf)
	if !ok || ub == nil {
		return nil
	}
	return ub.b[:ub.n]
}
