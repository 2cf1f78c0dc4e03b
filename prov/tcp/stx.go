package tcp

import (
	"github.com/gofabric/fabric/internal/stx"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// SharedTx opens a shared transmit context (fi_stx_context), for FI_EP_MSG
// or FI_EP_RDM endpoints as the domain was opened. Endpoints bound to it
// keep their own connections and post and complete through their own CQs
// and counters; the context bounds the transmit attributes they may use
// (fi_endpoint(3) "Shared Contexts"), and its size is one queue for all
// of them (provider.TxCredits): every operation holds one of its credits
// from its post until it completes.
func (d *domain) SharedTx(attr *provider.TxAttr) (provider.SharedTx, error) {
	if d.rdm {
		return stx.Open(attr, stx.Limits{
			Caps:        rdmTxCaps | rdmTxExtra,
			MsgOrder:    msgOrder,
			InjectSize:  RDMInjectSize,
			Size:        RDMQueueSize,
			IOVLimit:    IOVLimit,
			RMAIOVLimit: tcpwire.MaxRMAIOV,
		})
	}
	return stx.Open(attr, stx.Limits{
		Caps:        txCaps | extraTxCaps,
		MsgOrder:    msgOrder,
		InjectSize:  InjectSize,
		Size:        max(MaxTxSize, envSize(envTxSize)),
		IOVLimit:    IOVLimit,
		RMAIOVLimit: IOVLimit,
	})
}
