package udp

import (
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

// sepSocks are the sockets of a scalable endpoint's receive contexts;
// every context is an endpoint on a duplicate of one of them.
type sepSocks struct {
	mu    sync.Mutex
	socks []*sys.Conn // receive context i's socket; [0] is the base; nil once closed
}

// sep is a scalable endpoint: its contexts (sepctx.Sep) on its sockets.
type sep struct {
	*sepctx.Sep[*endpoint]
	*sepSocks
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
	rx, err := sepctx.RxCount(info, MaxEPCtx)
	if err != nil {
		return nil, err
	}
	src, fixed, err := sepctx.IPSource(info, defaultSource)
	if err != nil {
		return nil, err
	}
	ss := &sepSocks{}
	var name []byte
	err = sepctx.Retry(sepBindTries, fixed, func() error {
		var err error
		ss.socks, name, err = sepctx.OpenConsecutive(src, rx, sepctx.DerivePort, func(_ int, a []byte) (*sys.Conn, error) {
			return sys.OpenUDP(a)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	ops := sepctx.Ops[*endpoint]{Derive: sepctx.DerivePort, OpenRx: ss.openRx, OpenTx: ss.openTx, Close: ss.close}
	return &sep{Sep: sepctx.New(info, name, ops), sepSocks: ss}, nil
}

// sock returns a duplicate of receive context i's socket.
func (ss *sepSocks) sock(i int) (*sys.Conn, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.socks == nil {
		return nil, provider.EBADF
	}
	return ss.socks[i].Dup()
}

// openTx opens a transmit context: an endpoint on a duplicate of the
// base socket that never receives on it (receive context 0 receives on
// this socket).
func (ss *sepSocks) openTx(_ int, ci *provider.Info) (provider.Endpoint, error) {
	if err := checkLimits(ci); err != nil {
		return nil, err
	}
	sock, err := ss.sock(0)
	if err != nil {
		return nil, err
	}
	ep := newEndpointOn(ci, sock)
	ep.auto = false
	return ep, nil
}

// openRx opens receive context index: an endpoint on a duplicate of the
// socket of port base+index.
func (ss *sepSocks) openRx(index int, ci *provider.Info) (*endpoint, error) {
	if err := checkLimits(ci); err != nil {
		return nil, err
	}
	sock, err := ss.sock(index)
	if err != nil {
		return nil, err
	}
	return newEndpointOn(ci, sock), nil
}

// close closes the sockets (the root package closed every context).
func (ss *sepSocks) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, s := range ss.socks {
		s.Close()
	}
	ss.socks = nil
}

// RxCtxAddr implements provider.RxCtxAddresser: receive context idx of
// the scalable endpoint at base is at the port base+idx.
func (udpProvider) RxCtxAddr(base []byte, idx int) []byte { return sepctx.DerivePort(base, idx) }
