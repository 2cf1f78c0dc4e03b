package udp

import (
	"github.com/gofabric/fabric/internal/stx"
	"github.com/gofabric/fabric/provider"
)

// SharedTx opens a shared transmit context (fi_stx_context). Endpoints
// bound to it keep their own sockets and addresses and post and complete
// through their own CQs, as on any udp endpoint; the context bounds the
// transmit attributes they may use (fi_endpoint(3) "Shared Contexts").
// Its size is a queue the endpoints share (provider.TxCredits), which a
// udp send never holds: the datagram has left when the post returns.
func (*domain) SharedTx(attr *provider.TxAttr) (provider.SharedTx, error) {
	return stx.Open(attr, stx.Limits{
		Caps:       txCaps,
		InjectSize: InjectSize,
		Size:       QueueSize,
		IOVLimit:   IOVLimit,
	})
}
