package tcp

import (
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/provider"
)

// Buffered receives (FI_BUFFERED_RECV) on FI_EP_RDM endpoints.
//
// The receive queue reports an unexpected message as soon as the endpoint
// holds its first min(FI_OPT_BUFFERED_MIN, size) bytes, showing what it
// holds up to FI_OPT_BUFFERED_LIMIT (FI_MORE when that is not the whole
// message), by protocol:
//
//   - eager (up to 16 KiB) and streamed messages (rdm_stream.go, between
//     endpoints of ours) are held whole, as without the mode, and shown
//     from that buffer;
//   - a SAR message is queued at its first segment and reported once its
//     segments hold the minimum (all of them for a message shorter than
//     it), showing the segments received by then; the rest is buffered as
//     it comes, as without the mode;
//   - a rendezvous message (rxm's, and our CMA requests) is queued in
//     order when its request arrives, and its first min(FI_OPT_BUFFERED_MIN,
//     size) bytes are read from the sender with a tcp read request of
//     that range; it is reported when they arrive. A claim copies them
//     and reads the rest (one more read request; the sender's memory is
//     read over tcp, not CMA), then sends the read-done that completes the
//     sender's operation; a discard reads nothing more and sends the
//     read-done.
//
// Reports follow the order in which messages arrive, except that a
// rendezvous or SAR message whose first bytes are still on their way is
// reported after the messages behind it that are already held (they are
// matched in order all the same: a tagged receive takes the oldest
// matching message). A message whose connection failed before its first
// bytes arrived is reported with the bytes held (possibly none, FI_MORE);
// claiming it completes with FI_ECONNABORTED.

// Buffered-receive options: FI_OPT_BUFFERED_LIMIT defaults to the eager
// limit and may be raised to the largest streamed message by default;
// FI_OPT_BUFFERED_MIN is what a report shows at least, and what is read
// of a rendezvous message before it is reported.
const (
	rdmBufferedMinDefault   = 64
	rdmBufferedLimitDefault = rxmwire.EagerLimit
	rdmBufferedLimitMax     = rdmStreamLimit
)

var (
	_ provider.BufferedPeer     = (*rdmEP)(nil)
	_ provider.BufferedWaiter   = (*rdmEP)(nil)
	_ provider.BufferedEndpoint = (*rdmEP)(nil)
)

// BufferedDefaults implements provider.BufferedEndpoint.
func (ep *rdmEP) BufferedDefaults() (min, limit, max uint64) {
	return rdmBufferedMinDefault, rdmBufferedLimitDefault, rdmBufferedLimitMax
}

// enableBuffered reads the receive queue's buffered-receive limits at
// Enable. ep.mu is held.
func (ep *rdmEP) enableBuffered(q provider.SRXOwner) {
	bo, ok := q.(provider.BufferedOwner)
	if !ok {
		return
	}
	mn, _, on := bo.BufferedLimits()
	ep.bufOn, ep.bufMin = on, min(mn, rdmBufferedLimitMax)
	ep.bufNote, _ = q.(provider.BufferedNotifier)
}

// Buffered implements provider.BufferedPeer: the payload of an eager or
// streamed message, the first bytes of a SAR or rendezvous message.
func (ep *rdmEP) Buffered(e *provider.RxEntry) []byte {
	u, _ := e.PeerContext.(*rdmUnexp)
	switch {
	case u == nil:
		return nil
	case u.isRndv || u.sar != nil:
		if !u.ready.Load() {
			return nil
		}
		return u.pre
	}
	return u.data
}

// BufferedReady implements provider.BufferedWaiter.
func (ep *rdmEP) BufferedReady(e *provider.RxEntry) bool {
	u, _ := e.PeerContext.(*rdmUnexp)
	return u == nil || !(u.isRndv || u.sar != nil) || u.ready.Load()
}

// bufReady makes the first bytes pre of queued message u (entry
// u.bufE) shown, and tells the receive queue, unless the message was
// started or discarded meanwhile (u.gone: then its entry may be another
// message's already). ep.mu is held.
func (ep *rdmEP) bufReady(u *rdmUnexp, pre []byte) {
	ep.smu.Lock()
	defer ep.smu.Unlock()
	if u.gone || u.ready.Load() {
		return
	}
	u.pre = pre
	u.ready.Store(true)
	if ep.bufNote != nil {
		ep.bufNote.BufferedArrived(u.bufE)
	}
}

// markGone records that queued message u was started or discarded: its
// entry is no longer the peer's to report.
func (ep *rdmEP) markGone(u *rdmUnexp) {
	ep.smu.Lock()
	u.gone = true
	ep.smu.Unlock()
}

// isGone reports whether queued message u was started or discarded.
func (ep *rdmEP) isGone(u *rdmUnexp) bool {
	ep.smu.Lock()
	defer ep.smu.Unlock()
	return u.gone
}

// bufPrefix starts reading the first bytes of unexpected rendezvous
// message u, queued already, from the sender: a read request for
// min(FI_OPT_BUFFERED_MIN, size) bytes (with a minimum of 0, none: the
// message is shown at once). ep.mu is held.
func (c *rdmConn) bufPrefix(u *rdmUnexp, size uint64) {
	p := min(c.ep.bufMin, size)
	if p == 0 {
		c.ep.bufReady(u, nil)
		return
	}
	rv, _ := rndvRange(&u.rndv, 0, p)
	h := rndvReadHeader(&rv)
	rd := &rdmRead{prefix: u, total: p, iov: [][]byte{make([]byte, p)}, msgID: u.msgID, from: u.from}
	c.ctrlFrame(&h, nil).rd = rd
}

// prefixDone shows the first bytes read of a rendezvous message (all of
// them, or, when its connection failed, what was read). ep.mu is held.
func (c *rdmConn) prefixDone(rd *rdmRead) {
	c.ep.bufReady(rd.prefix, rd.iov[0][:rd.placed])
}

// rndvRange returns the part [off, off+n) of the message a rendezvous
// descriptor describes (n clamped to what it has), and n.
func rndvRange(rv *rxmwire.Rndv, off, n uint64) (rxmwire.Rndv, uint64) {
	var out rxmwire.Rndv
	var got uint64
	for i := 0; i < int(rv.Count) && got < n; i++ {
		v := rv.IOV[i]
		if off >= v.Len {
			off -= v.Len
			continue
		}
		l := min(v.Len-off, n-got)
		out.IOV[out.Count] = rxmwire.RndvIOV{Addr: v.Addr + off, Len: l, Key: v.Key}
		out.Count++
		got += l
		off = 0
	}
	return out, got
}

// skipIOV returns iov without its first n bytes (a copy of the slice).
func skipIOV(iov [][]byte, n int) [][]byte {
	var out [][]byte
	for _, b := range iov {
		if n >= len(b) {
			n -= len(b)
			continue
		}
		out = append(out, b[n:])
		n = 0
	}
	return out
}

// copyIOV copies b into iov and returns the bytes copied.
func copyIOV(iov [][]byte, b []byte) int {
	n := 0
	for _, d := range iov {
		if len(b) == 0 {
			break
		}
		k := copy(d, b)
		n += k
		b = b[k:]
	}
	return n
}

// startBufRndv delivers a claimed rendezvous message whose first bytes
// were read (u.pre) into e: the prefix is copied, the rest read with one
// read request (or none, when the prefix was all), then the read-done
// goes to the sender. ep.mu is held.
func (c *rdmConn) startBufRndv(e *provider.RxEntry, u *rdmUnexp, size uint64) {
	preN := copyIOV(e.IOV, u.pre)
	p := uint64(len(u.pre))
	rd := c.rx.spare
	if rd == nil {
		rd = new(rdmRead)
	}
	c.rx.spare = nil
	*rd = rdmRead{e: e, iov: skipIOV(e.IOV, preN), total: size - p, msgID: u.msgID, from: u.from,
		preN: preN, preSkip: p - uint64(preN)}
	if rd.total == 0 {
		c.finishRead(rd)
		return
	}
	rv, _ := rndvRange(&u.rndv, p, size-p)
	h := rndvReadHeader(&rv)
	c.ctrlFrame(&h, nil).rd = rd
}
