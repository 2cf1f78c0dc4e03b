package tcp

import (
	"github.com/gofabric/fabric/internal/sepctx"
	"github.com/gofabric/fabric/provider"
)

// Scalable endpoints (fi_scalable_ep) of FI_EP_RDM.
//
// Every context of a scalable endpoint is an RDM endpoint of its own
// (listener, connections, queues, locks), so that contexts share nothing
// on the data path. Receive context i listens on the port base+i of the
// scalable endpoint's IP address; receive context 0 on the base port,
// which is the scalable endpoint's address (fi_getname) and where a peer
// that is not scalable, C tcp;ofi_rxm included, reaches it. A transmit
// context connects to receive context i of a peer (fi_rx_addr) at the
// peer's base port + i, as an RDM endpoint of its own: its connect
// requests name its own (ephemeral) listening port, so that two transmit
// contexts of one scalable endpoint are two peers to a receive context.
// A receiver of this implementation is told, on each connection, the
// scalable endpoint's port (rxmwire.TypeGoSource, the first frame), and
// reports the scalable endpoint's address as the source of the transmit
// context's messages (fi_cq_readfrom, FI_SOURCE; a directed receive from
// the scalable endpoint takes them). Towards a C peer nothing changes on
// the wire: it does not know the transmit context's address, so its
// completions of such messages carry FI_ADDR_NOTAVAIL as their source
// (tcp;ofi_rxm 1.17 has no scalable endpoints to compare with). The
// receive contexts' listeners are
// bound when the scalable endpoint is opened (consecutive free ports; an
// ephemeral base is retried sepBindTries times), so that connections to
// a receive context not yet opened or enabled wait in its backlog. A
// message for a receive context index at or beyond the peer's
// rx_ctx_cnt (within rx_ctx_bits) completes in error when nothing
// listens at that port (FI_ECONNREFUSED).

// MaxEPCtx is the most transmit and receive contexts of an RDM scalable
// endpoint (domain_attr.max_ep_tx_ctx and max_ep_rx_ctx).
const MaxEPCtx = 64

// sepBindTries bounds the attempts to find consecutive free ports.
const sepBindTries = 32

var _ provider.ScalableDomain = (*domain)(nil)

// ScalableEndpoint opens an RDM scalable endpoint (provider.ScalableDomain);
// ENOSYS for FI_EP_MSG.
func (*domain) ScalableEndpoint(info *provider.Info) (provider.ScalableEndpoint, error) {
	if info == nil || info.EPAttr == nil {
		return nil, provider.EINVAL
	}
	if info.EPAttr.Type != provider.EPRDM {
		return nil, provider.ENOSYS
	}
	nRx, err := sepctx.RxCount(info, MaxEPCtx)
	if err != nil {
		return nil, err
	}
	src, fixed, err := sepctx.IPSource(info, defaultSource)
	if err != nil {
		return nil, err
	}
	var s *sepctx.Sep[*rdmEP]
	ops := sepctx.Ops[*rdmEP]{
		Derive: sepctx.DerivePort,
		OpenRx: func(_ int, ci *provider.Info) (*rdmEP, error) { return newRDM(ci) },
		// A transmit context announces the scalable endpoint's port as
		// the source of its messages to peers of ours.
		OpenTx: func(_ int, ci *provider.Info) (provider.Endpoint, error) {
			ep, err := newRDM(ci)
			if err != nil {
				return nil, err
			}
			name, _ := s.Name()
			if a, _, ok := decodeSockaddr(name); ok {
				ep.srcPort = a.AP.Port()
			}
			return ep, nil
		},
		// A transmit context listens at an ephemeral port of the
		// scalable endpoint's IP address.
		TxAddr:     func(name []byte, _ int) []byte { return withPort(name, 0) },
		TxProgress: true,
	}
	err = sepctx.Retry(sepBindTries, fixed, func() error {
		var err error
		s, err = sepctx.Open(info, src, nRx, ops)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// RxCtxAddr implements provider.RxCtxAddresser: receive context idx of
// the RDM scalable endpoint at base listens on the port base+idx.
func (tcpProvider) RxCtxAddr(base []byte, idx int) []byte { return sepctx.DerivePort(base, idx) }
