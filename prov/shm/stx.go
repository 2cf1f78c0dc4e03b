package shm

import (
	"github.com/gofabric/fabric/internal/stx"
	"github.com/gofabric/fabric/provider"
)

// SharedTx opens a shared transmit context (fi_stx_context). Endpoints
// bound to it keep their own names and command queues and post and
// complete through their own CQs and counters; the context bounds the
// transmit attributes they may use (fi_endpoint(3) "Shared Contexts"),
// and its size is one queue for all of them (provider.TxCredits): a
// queued or waiting message, and an RMA or atomic operation, holds one of
// its credits until it completes.
func (*domain) SharedTx(attr *provider.TxAttr) (provider.SharedTx, error) {
	return stx.Open(attr, stx.Limits{
		Caps:        txCaps,
		MsgOrder:    provider.OrderSAS,
		InjectSize:  InjectSize,
		Size:        QueueSize,
		IOVLimit:    IOVLimit,
		RMAIOVLimit: RMAIOVLimit,
	})
}
