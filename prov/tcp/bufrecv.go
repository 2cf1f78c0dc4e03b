package tcp

import "github.com/gofabric/fabric/provider"

// Buffered receives (FI_BUFFERED_RECV) on FI_EP_MSG endpoints.
//
// An unexpected message of up to ubufMax bytes is read whole into a
// pooled buffer (ubuf) as without the mode, and the receive queue reports
// that buffer. A larger one (or one beyond the pool's ubufLimit, or one
// whose sender waits for delivery complete) used to stay in the stream
// until a receive matched it; under the mode its first
// min(size, FI_OPT_BUFFERED_LIMIT) bytes are read into the endpoint's
// prefix buffer first, the queue reports them with FI_MORE, and the
// stream waits for the claim (the prefix is copied, the rest read from
// the socket straight into the claiming receive) or the discard (the rest
// is read and dropped). One message per connection waits at a time, so
// the prefix buffer is one per endpoint: memory stays bounded by the pool
// plus FI_OPT_BUFFERED_LIMIT. Until it is claimed or discarded, the
// messages behind it on the connection wait (fi_msg(3): "communication
// stalls").

// Buffered-receive options: FI_OPT_BUFFERED_LIMIT defaults to one
// prefetch buffer and may be raised to the largest pooled message;
// FI_OPT_BUFFERED_MIN is what a report shows at least.
const (
	bufferedMinDefault   = 64
	bufferedLimitDefault = rbufSize
	bufferedLimitMax     = ubufMax
)

// rkPrefix: the payload being read is the prefix of a buffered receive.
const rkPrefix = rkDiscard + 1

// bufRx is an endpoint's buffered-receive state, set at Enable. pre and
// preN belong to the receive side (ep.mu); the receive queue reads them
// through Buffered while the message waits in the stream.
type bufRx struct {
	on         bool
	min, limit uint64
	pre        []byte // the prefix of the message waiting in the stream
	preN       int
	rest       uint64 // payload bytes after the prefix
}

var (
	_ provider.BufferedPeer      = (*endpoint)(nil)
	_ provider.BufferedEndpoint  = (*endpoint)(nil)
	_ provider.BufferedRecvOffer = tcpProvider{}
)

// BufferedRecv implements provider.BufferedRecvOffer: FI_EP_MSG and
// FI_EP_RDM Infos (rdm_bufrecv.go).
func (tcpProvider) BufferedRecv(info *provider.Info) bool {
	return info != nil && info.EPAttr != nil &&
		(info.EPAttr.Type == provider.EPMsg || info.EPAttr.Type == provider.EPRDM)
}

// BufferedDefaults implements provider.BufferedEndpoint.
func (ep *endpoint) BufferedDefaults() (min, limit, max uint64) {
	return bufferedMinDefault, bufferedLimitDefault, bufferedLimitMax
}

// enableBuffered reads the receive queue's buffered-receive limits at
// Enable.
func (ep *endpoint) enableBuffered(q provider.SRXOwner) {
	bo, ok := q.(provider.BufferedOwner)
	if !ok {
		return
	}
	mn, lim, on := bo.BufferedLimits()
	ep.buf = bufRx{on: on, min: mn, limit: min(lim, bufferedLimitMax)}
}

// Buffered implements provider.BufferedPeer: the pooled buffer of a
// message read whole, or the prefix of the one waiting in the stream.
func (ep *endpoint) Buffered(e *provider.RxEntry) []byte {
	switch pc := e.PeerContext.(type) {
	case *ubuf:
		return pc.b[:pc.n]
	case *endpoint:
		if pc == ep {
			return ep.buf.pre[:ep.buf.preN]
		}
	}
	return nil
}

// readPrefix starts reading the first min(size, limit) bytes of
// unexpected message e into the prefix buffer (prefixRead follows).
func (ep *endpoint) readPrefix(e *provider.RxEntry) {
	r := &ep.rx
	n := min(r.plen, ep.buf.limit)
	if uint64(len(ep.buf.pre)) < n {
		ep.buf.pre = make([]byte, ep.buf.limit)
	}
	r.entry, r.kind = e, rkPrefix
	r.tgtArr[0] = ep.buf.pre[:n]
	r.tgt = r.tgtArr[:1]
	r.ti, r.toff, r.placed = 0, 0, 0
	ep.buf.rest = r.plen - n
	r.left = n
	r.st = rxPayload
}

// prefixRead queues the message whose prefix was read; the rest waits in
// the stream.
func (ep *endpoint) prefixRead() {
	r := &ep.rx
	e := r.entry
	ep.buf.preN = int(r.placed)
	r.left = ep.buf.rest
	r.entry, r.tgt = nil, nil
	ep.waitInStream(e)
}

// takePrefix returns the prefix read of the message that was started or
// discarded, and forgets it.
func (ep *endpoint) takePrefix() []byte {
	p := ep.buf.pre[:ep.buf.preN]
	ep.buf.preN = 0
	return p
}
