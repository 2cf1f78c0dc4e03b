package tcp

import (
	"encoding/binary"
	"sync"

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
// Nothing changes on the wire. The one cost: a receiver does not know a
// transmit context's address, so completions of its messages carry
// FI_ADDR_NOTAVAIL as their source (fi_cq_readfrom, FI_SOURCE), and
// directed receives cannot select it. The receive contexts' listeners are
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

// sep is an RDM scalable endpoint.
type sep struct {
	info *provider.Info
	name []byte

	mu     sync.Mutex
	closed bool
	rx     []*rdmEP // receive contexts created and not yet handed out
}

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
	nRx := int(max(info.EPAttr.RxCtxCnt, 1))
	if info.EPAttr.TxCtxCnt > MaxEPCtx || nRx > MaxEPCtx {
		return nil, provider.EINVAL
	}
	src := info.SrcAddr
	if src == nil {
		src = defaultSource(info)
	}
	sa, f, ok := decodeSockaddr(src)
	if !ok || !formatOK(info.AddrFormat, f) {
		return nil, provider.EINVAL
	}
	fixed := sa.AP.Port() != 0
	s := &sep{info: info.Dup()}
	var err error
	for try := 0; try < sepBindTries; try++ {
		if err = s.createRx(src, nRx); err == nil {
			return s, nil
		}
		if fixed || err != provider.EADDRINUSE {
			break
		}
	}
	return nil, err
}

// createRx opens the n receive contexts' endpoints at consecutive ports
// from src's (or an ephemeral one).
func (s *sep) createRx(src []byte, n int) error {
	s.rx = make([]*rdmEP, n)
	base, err := s.open(src, nil, nil)
	if err != nil {
		return err
	}
	s.rx[0], s.name = base, append([]byte(nil), base.name...)
	for i := 1; i < n; i++ {
		a := deriveAddr(s.name, i)
		if a == nil {
			s.closeRx()
			return provider.EADDRINUSE
		}
		if s.rx[i], err = s.open(a, nil, nil); err != nil {
			s.closeRx()
			return err
		}
	}
	return nil
}

func (s *sep) closeRx() {
	for i, ep := range s.rx {
		if ep != nil {
			ep.Close()
			s.rx[i] = nil
		}
	}
}

// open opens an RDM endpoint listening at src, with the context's
// attributes.
func (s *sep) open(src []byte, ta *provider.TxAttr, ra *provider.RxAttr) (*rdmEP, error) {
	ci := s.info.Dup()
	ci.SrcAddr = src
	if ta != nil {
		t := *ta
		ci.TxAttr = &t
	}
	if ra != nil {
		r := *ra
		ci.RxAttr = &r
	}
	ci.EPAttr.TxCtxCnt, ci.EPAttr.RxCtxCnt = 1, 1
	return newRDM(ci)
}

// deriveAddr is the address of receive context idx of the scalable
// endpoint at base: the port base+idx (nil beyond 65535).
func deriveAddr(base []byte, idx int) []byte {
	if len(base) < 4 {
		return nil
	}
	p := int(binary.BigEndian.Uint16(base[2:])) + idx
	if p > 0xffff {
		return nil
	}
	return withPort(base, uint16(p))
}

// TxContext opens transmit context index: an RDM endpoint with an
// ephemeral listening port of the scalable endpoint's IP address.
func (s *sep) TxContext(index int, attr *provider.TxAttr) (provider.Endpoint, error) {
	if index < 0 || uint64(index) >= max(s.info.EPAttr.TxCtxCnt, 1) {
		return nil, provider.EINVAL
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, provider.EBADF
	}
	ep, err := s.open(withPort(s.name, 0), attr, nil)
	if err != nil {
		return nil, err
	}
	return sepctx.NewTx(ep, deriveAddr, s.name, true), nil
}

// RxContext hands out receive context index, created with the scalable
// endpoint (or anew, at its port, after it was closed or for attributes
// of its own).
func (s *sep) RxContext(index int, attr *provider.RxAttr) (provider.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, provider.EBADF
	}
	if index < 0 || index >= len(s.rx) {
		return nil, provider.EINVAL
	}
	ep := s.rx[index]
	if ep == nil || attr != nil && s.info.RxAttr != nil && *attr != *s.info.RxAttr {
		if ep != nil {
			ep.Close()
			s.rx[index] = nil
		}
		var err error
		if ep, err = s.open(deriveAddr(s.name, index), nil, attr); err != nil {
			return nil, err
		}
	}
	s.rx[index] = nil
	return sepctx.NewRx(ep, s.name, nil), nil
}

// Name returns the scalable endpoint's address (receive context 0's).
func (s *sep) Name() ([]byte, error) { return append([]byte(nil), s.name...), nil }

// Enable has nothing to start: the contexts are enabled one by one.
func (s *sep) Enable(provider.AVView) error { return nil }

// Close closes the receive contexts never handed out.
func (s *sep) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return provider.EBADF
	}
	s.closed = true
	s.closeRx()
	return nil
}

// RxCtxAddr implements provider.RxCtxAddresser: receive context idx of
// the RDM scalable endpoint at base listens on the port base+idx.
func (tcpProvider) RxCtxAddr(base []byte, idx int) []byte { return deriveAddr(base, idx) }
