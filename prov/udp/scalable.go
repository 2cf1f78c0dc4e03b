package udp

import (
	"encoding/binary"
	"sync"

	"github.com/gofabric/fabric/internal/sepctx"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Scalable endpoints (fi_scalable_ep).
//
// A scalable endpoint with R receive contexts owns R UDP sockets bound to
// consecutive ports of one IP address: receive context i receives on port
// base+i, and the endpoint's address (fi_getname) is the base port's,
// which is where a peer that is not scalable, the C udp provider
// included, reaches receive context 0. Datagrams stay plain UDP payloads:
// a transmit context sends a datagram for receive context i of a peer
// (fi_rx_addr) to the peer's base port + i. Every transmit context sends
// from a duplicate of the base socket, so that its datagrams carry the
// scalable endpoint's address as their source (FI_SOURCE at the receiver
// finds it in the AV), and each context has its own descriptor, queues
// and locks: nothing is shared between contexts on the data path but the
// kernel's socket. The ports are reserved when the scalable endpoint is
// opened; with an ephemeral source port the base is picked so that the
// R-1 following ports are free too (ErrAddrInUse after sepBindTries
// tries, or at once for a port given in the source address). A datagram
// for a receive context index at or beyond the peer's rx_ctx_cnt (but
// within rx_ctx_bits) goes to whatever is bound at that port, if anything:
// FI_EP_DGRAM does not say whether it arrives.

// MaxEPCtx is the most transmit and receive contexts a scalable endpoint
// has (domain_attr.max_ep_tx_ctx and max_ep_rx_ctx).
const MaxEPCtx = 64

// sepBindTries bounds the attempts to find R free consecutive ports.
const sepBindTries = 32

// sep is a scalable endpoint.
type sep struct {
	info  *provider.Info
	name  []byte
	mu    sync.Mutex
	socks []*sys.Conn // receive context i's socket; [0] is the base
}

var _ provider.ScalableDomain = (*domain)(nil)

// ScalableEndpoint opens a scalable endpoint (provider.ScalableDomain).
func (*domain) ScalableEndpoint(info *provider.Info) (provider.ScalableEndpoint, error) {
	if info == nil || info.EPAttr == nil {
		return nil, provider.EINVAL
	}
	if t := info.EPAttr.Type; t != provider.EPUnspec && t != provider.EPDgram {
		return nil, provider.EINVAL
	}
	if err := checkLimits(info); err != nil {
		return nil, err
	}
	rx := int(max(info.EPAttr.RxCtxCnt, 1))
	if info.EPAttr.TxCtxCnt > MaxEPCtx || rx > MaxEPCtx {
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
	var err error
	for try := 0; try < sepBindTries; try++ {
		var socks []*sys.Conn
		if socks, err = bindConsecutive(src, rx); err == nil {
			name, nerr := socks[0].Name()
			if nerr != nil {
				closeAll(socks)
				return nil, nerr
			}
			return &sep{info: info.Dup(), name: name, socks: socks}, nil
		}
		if fixed || err != provider.EADDRINUSE {
			break
		}
	}
	return nil, err
}

// bindConsecutive binds n sockets at src's port (or an ephemeral one) and
// the n-1 ports that follow it.
func bindConsecutive(src []byte, n int) ([]*sys.Conn, error) {
	base, err := sys.OpenUDP(src)
	if err != nil {
		return nil, err
	}
	socks := []*sys.Conn{base}
	name, err := base.Name()
	if err != nil {
		closeAll(socks)
		return nil, err
	}
	for i := 1; i < n; i++ {
		a := deriveAddr(name, i)
		if a == nil {
			closeAll(socks)
			return nil, provider.EADDRINUSE
		}
		s, err := sys.OpenUDP(a)
		if err != nil {
			closeAll(socks)
			return nil, err
		}
		socks = append(socks, s)
	}
	return socks, nil
}

func closeAll(socks []*sys.Conn) {
	for _, s := range socks {
		s.Close()
	}
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

// sock returns a duplicate of receive context i's socket.
func (s *sep) sock(i int) (*sys.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.socks == nil {
		return nil, provider.EBADF
	}
	return s.socks[i].Dup()
}

// ctxInfo is the info of a context: the scalable endpoint's, with the
// context's attributes.
func (s *sep) ctxInfo(ta *provider.TxAttr, ra *provider.RxAttr) *provider.Info {
	ci := s.info.Dup()
	if ta != nil {
		t := *ta
		ci.TxAttr = &t
	}
	if ra != nil {
		r := *ra
		ci.RxAttr = &r
	}
	ci.EPAttr.TxCtxCnt, ci.EPAttr.RxCtxCnt = 1, 1
	return ci
}

// TxContext opens transmit context index: an endpoint on a duplicate of
// the base socket that never receives on it.
func (s *sep) TxContext(index int, attr *provider.TxAttr) (provider.Endpoint, error) {
	if index < 0 || uint64(index) >= max(s.info.EPAttr.TxCtxCnt, 1) {
		return nil, provider.EINVAL
	}
	ci := s.ctxInfo(attr, nil)
	if err := checkLimits(ci); err != nil {
		return nil, err
	}
	sock, err := s.sock(0)
	if err != nil {
		return nil, err
	}
	ep := newEndpointOn(ci, sock)
	ep.auto = false // receive context 0 receives on this socket
	return sepctx.NewTx(ep, deriveAddr, s.name, false), nil
}

// RxContext opens receive context index: an endpoint on a duplicate of
// the socket of port base+index.
func (s *sep) RxContext(index int, attr *provider.RxAttr) (provider.Endpoint, error) {
	if index < 0 || index >= len(s.socks) {
		return nil, provider.EINVAL
	}
	ci := s.ctxInfo(nil, attr)
	if err := checkLimits(ci); err != nil {
		return nil, err
	}
	sock, err := s.sock(index)
	if err != nil {
		return nil, err
	}
	return sepctx.NewRx(newEndpointOn(ci, sock), s.name, nil), nil
}

// Name returns the base socket's address.
func (s *sep) Name() ([]byte, error) { return append([]byte(nil), s.name...), nil }

// Enable has nothing to start: the contexts are enabled one by one.
func (s *sep) Enable(provider.AVView) error { return nil }

// Close closes the sockets (the root package closed every context).
func (s *sep) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.socks == nil {
		return provider.EBADF
	}
	closeAll(s.socks)
	s.socks = nil
	return nil
}

// RxCtxAddr implements provider.RxCtxAddresser: receive context idx of
// the scalable endpoint at base is at the port base+idx.
func (udpProvider) RxCtxAddr(base []byte, idx int) []byte { return deriveAddr(base, idx) }
