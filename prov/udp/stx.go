package udp

import (
	"github.com/gofabric/fabric/internal/stx"
	"github.com/gofabric/fabric/provider"
)

// SharedTx opens a shared transmit context (fi_stx_context). Endpoints
// bound to it keep their own sockets and addresses and post and complete
// through their own CQs, as on any udp endpoint; the context bounds the
// transmit attributes they may use (fi_endpoint(3) "Shared Contexts").
func (*domain) SharedTx(attr *provider.TxAttr) (provider.SharedTx, error) {
	return stx.Open(attr, stx.Limits{
		Caps:       txCaps,
		InjectSize: InjectSize,
		Size:       QueueSize,
		IOVLimit:   IOVLimit,
	})
}
