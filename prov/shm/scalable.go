package shm

import (
	"sync"

	"github.com/gofabric/fabric/internal/sepctx"
	"github.com/gofabric/fabric/provider"
)

// Scalable endpoints (fi_scalable_ep).
//
// Every context of a scalable endpoint is an endpoint of its own with its
// own region (command queue, bounce buffers, locks), so that contexts
// share nothing on the data path. The region ids are derived from the
// scalable endpoint's base id B (random, or the one its source name
// gives): receive context i has the region B+i (receive context 0 is B
// itself, the scalable endpoint's name, which is where an endpoint that
// is not scalable reaches it), transmit context j the region B+0x80+j. A
// transmit context sends to receive context i of a peer (fi_rx_addr) at
// the peer's base id + i; its commands carry its own id as their sender,
// and its acknowledgements come back to its own queue. A receiver that
// does not find a sender's id in its AV tries the ids 0x80+j below it
// (sepSource), one of which is the scalable endpoint of a transmit
// context: FI_SOURCE reports the scalable endpoint's address. The receive
// contexts' regions are created when the scalable endpoint is opened, so
// that messages sent to a receive context not yet opened or enabled wait
// in its queue; a receive context closed and opened again gets a new
// region.

// MaxEPCtx is the most transmit and receive contexts a scalable endpoint
// has (domain_attr.max_ep_tx_ctx and max_ep_rx_ctx).
const MaxEPCtx = 64

// sepTxBit marks the region ids of transmit contexts.
const sepTxBit = 0x80

// sep is a scalable endpoint.
type sep struct {
	d    *domain
	info *provider.Info
	base uint64
	name []byte

	mu     sync.Mutex
	closed bool
	rx     []*endpoint // receive contexts created and not yet handed out
}

var _ provider.ScalableDomain = (*domain)(nil)

// ScalableEndpoint opens a scalable endpoint (provider.ScalableDomain).
func (d *domain) ScalableEndpoint(info *provider.Info) (provider.ScalableEndpoint, error) {
	if info == nil || info.EPAttr == nil {
		return nil, provider.EINVAL
	}
	nRx := int(max(info.EPAttr.RxCtxCnt, 1))
	if info.EPAttr.TxCtxCnt > MaxEPCtx || nRx > MaxEPCtx {
		return nil, provider.EINVAL
	}
	var given uint64
	if len(info.SrcAddr) > 0 {
		var ok bool
		if given, ok = parseName(info.SrcAddr); !ok {
			return nil, provider.EINVAL
		}
	}
	s := &sep{d: d, info: info.Dup()}
	var err error
	for try := 0; try < 8; try++ {
		s.base = given
		if s.base == 0 {
			s.base = randomID()
		}
		if err = s.createRx(nRx); err == nil {
			s.name = appendName(nil, s.base)
			return s, nil
		}
		if given != 0 || err != provider.EADDRINUSE {
			break
		}
	}
	return nil, err
}

// createRx creates the n receive contexts' endpoints.
func (s *sep) createRx(n int) error {
	s.rx = make([]*endpoint, n)
	for i := range s.rx {
		ep, err := s.open(s.base+uint64(i), nil, nil)
		if err != nil {
			s.closeRx()
			return err
		}
		s.rx[i] = ep
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

// open opens an endpoint with region id and the context's attributes.
func (s *sep) open(id uint64, ta *provider.TxAttr, ra *provider.RxAttr) (*endpoint, error) {
	ci := s.info.Dup()
	ci.SrcAddr = appendName(nil, id)
	if ta != nil {
		t := *ta
		ci.TxAttr = &t
	}
	if ra != nil {
		r := *ra
		ci.RxAttr = &r
	}
	ci.EPAttr.TxCtxCnt, ci.EPAttr.RxCtxCnt = 1, 1
	return newEndpoint(s.d, ci)
}

// deriveName is the name of receive context idx of the scalable endpoint
// named base.
func deriveName(base []byte, idx int) []byte {
	id, ok := parseName(base)
	if !ok || idx >= sepTxBit {
		return nil
	}
	return appendName(nil, id+uint64(idx))
}

// sepSource is the fi_addr of the scalable endpoint whose transmit
// context has region id, when the AV has it (lookupSrc found no id).
func (ep *endpoint) sepSource(buf []byte, id uint64) provider.Addr {
	for j := uint64(0); j < MaxEPCtx; j++ {
		if a := ep.av.Reverse(appendName(buf[:0], id-sepTxBit-j)); a != provider.AddrNotAvail {
			return a
		}
	}
	return provider.AddrNotAvail
}

// TxContext opens transmit context index: an endpoint with region
// base+0x80+index.
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
	ep, err := s.open(s.base+sepTxBit+uint64(index), attr, nil)
	if err != nil {
		return nil, err
	}
	return sepctx.NewTx(ep, deriveName, s.name, true), nil
}

// RxContext hands out receive context index, created with the scalable
// endpoint (or anew after it was closed).
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
		// Reopened, or with attributes of its own: a new region (the
		// old one, if any, gives way).
		if ep != nil {
			ep.Close()
			s.rx[index] = nil
		}
		var err error
		if ep, err = s.open(s.base+uint64(index), nil, attr); err != nil {
			return nil, err
		}
	}
	s.rx[index] = nil
	return sepctx.NewRx(ep, s.name, nil), nil
}

// Name returns the scalable endpoint's name (receive context 0's).
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
// the scalable endpoint named base has the region base id + idx.
func (shmProvider) RxCtxAddr(base []byte, idx int) []byte { return deriveName(base, idx) }
