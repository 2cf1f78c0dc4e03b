package shm

import (
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

// sepTries bounds the attempts to find a random base id whose receive
// context regions are all free.
const sepTries = 8

var _ provider.ScalableDomain = (*domain)(nil)

// ScalableEndpoint opens a scalable endpoint (provider.ScalableDomain).
func (d *domain) ScalableEndpoint(info *provider.Info) (provider.ScalableEndpoint, error) {
	if info == nil || info.EPAttr == nil {
		return nil, provider.EINVAL
	}
	nRx, err := sepctx.RxCount(info, MaxEPCtx)
	if err != nil {
		return nil, err
	}
	var given uint64
	if len(info.SrcAddr) > 0 {
		var ok bool
		if given, ok = parseName(info.SrcAddr); !ok {
			return nil, provider.EINVAL
		}
	}
	ops := sepctx.Ops[*endpoint]{
		Derive: deriveName,
		OpenRx: func(_ int, ci *provider.Info) (*endpoint, error) { return newEndpoint(d, ci) },
		// Transmit context j has the region base+0x80+j.
		TxAddr: func(name []byte, j int) []byte {
			base, _ := parseName(name)
			return appendName(nil, base+sepTxBit+uint64(j))
		},
		TxProgress: true,
	}
	var s *sepctx.Sep[*endpoint]
	err = sepctx.Retry(sepTries, given != 0, func() error {
		base := given
		if base == 0 {
			base = randomID()
		}
		var err error
		s, err = sepctx.Open(info, appendName(nil, base), nRx, ops)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
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

// RxCtxAddr implements provider.RxCtxAddresser: receive context idx of
// the scalable endpoint named base has the region base id + idx.
func (shmProvider) RxCtxAddr(base []byte, idx int) []byte { return deriveName(base, idx) }
