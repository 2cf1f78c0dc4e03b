package tcp

import (
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Streamed messages: an extension between two peers of this implementation
// (they recognise each other by rxmwire.GoMarker in the connection data).
//
// rxm sends a message above the eager limit by rendezvous: a request,
// the receiver's RMA read request, the read response with the data, and a
// read-done: four messages and two round trips, where a MSG endpoint sends
// one. Between two of our endpoints, a message above the eager limit up to
// the stream limit (FI_TCP_RDM_STREAM_LIMIT, default rdmStreamLimit) goes
// instead whole in one tcp frame, an rxm header of type
// rxmwire.TypeGoEager followed by the message (see rxmwire), written
// straight from the application's buffers. The receiver matches it when
// its header arrives and reads the message straight into the matching
// receive (what does not fit is dropped: FI_ETRUNC); with no receive
// posted, the message is buffered whole as an unexpected one, counted
// against the unexpected-message bound (RDMMaxUnexpectedBytes) by its
// length, and beyond that bound the connection is not read until receives
// take queued messages: the sender backs up, nothing is dropped. The send
// completes once its frame is written (as eager and SAR messages do), or
// with FI_DELIVERY_COMPLETE on the peer's ACK, sent once the message is
// placed or buffered.
//
// Towards a C peer nothing changes on the wire. The first messages to a
// peer, sent while the first connection to it is being set up, use rxm's
// protocols (whether the peer is one of ours is not known yet).

const (
	envStreamLimit = "FI_TCP_RDM_STREAM_LIMIT"
	// rdmStreamLimit is the default stream limit: rendezvous above it
	// (an unexpected streamed message is buffered whole; a quarter of
	// RDMMaxUnexpectedBytes).
	rdmStreamLimit = 16 << 20
)

// rdmStreamLimitValue reads FI_TCP_RDM_STREAM_LIMIT: the largest message
// streamed to a peer of this implementation (0: none, rxm's protocols
// only), capped at rdmSARMax (what a receiver buffers).
func rdmStreamLimitValue() int {
	return int(min(envUint(envStreamLimit, rdmStreamLimit), rdmSARMax))
}

// buildStream encodes a streamed message: the tcp and rxm headers, then
// the application's buffers themselves (written before the send completes).
func (ep *rdmEP) buildStream(t *rdmTx, m *provider.Msg, n int, tagged, hasData bool, c *rdmConn) {
	t.kind, t.stream = txEager, true
	h := tcpwire.Header{Op: tcpwire.OpMsg}
	if m.Flags&provider.FlagDeliveryComplete != 0 {
		h.Flags = tcpwire.FlagDeliveryComplete
		t.ack = true
	}
	h.SetPayload(uint64(rxmwire.HeaderSize + n))
	hl := tcpwire.PutHeader(t.hdr[:], &h, false)
	rh := rxmwire.Header{Type: rxmwire.TypeGoEager, ConnID: uint64(c.remoteIndex), Op: rxmwire.OpMsg, Size: uint64(n)}
	if tagged {
		rh.Op, rh.Tag = rxmwire.OpTagged, m.Tag
	}
	if hasData {
		rh.Flags, rh.Data = rxmwire.FlagRemoteCQData, m.Data
	}
	rh.Put(t.hdr[hl:])
	hl += rxmwire.HeaderSize
	t.add(t.hdr[:hl])
	if m.IOV == nil {
		t.add(m.Buf)
	} else {
		for _, b := range m.IOV {
			t.add(b)
		}
	}
	ep.streamed++
}

// dropStreams fails the streamed messages queued on c when its new
// connection is to a peer that is not of this implementation (a peer that
// restarted as another one at the same address): it would not understand
// them. ep.mu is held.
func (c *rdmConn) dropStreams() {
	k := c.tx.head0
	var failed []*rdmTx
	for _, t := range c.tx.q[c.tx.head0:] {
		if t.stream && t.off == 0 {
			failed = append(failed, t)
			continue
		}
		c.tx.q[k] = t
		k++
	}
	if failed == nil {
		return
	}
	clear(c.tx.q[k:])
	c.tx.q = c.tx.q[:k]
	for _, t := range failed {
		c.ep.finishTx(t, provider.ECONNABORTED, true)
	}
}

// setExt records whether the peer of a connection that just came up is of
// this implementation. ep.mu is held.
func (c *rdmConn) setExt(ext bool) {
	c.ext = ext
	c.local = sameHost(c.addr, c.ep.name)
	c.src = nil // until the peer's new stream says otherwise
	c.resetCMA()
	if !ext {
		c.dropStreams()
		return
	}
	if p := c.ep.srcPort; p != 0 {
		// Before anything else on the new stream: the source of what
		// follows (rxmwire.TypeGoSource).
		h := tcpwire.Header{Op: tcpwire.OpMsg}
		h.SetPayload(rxmwire.HeaderSize)
		gs := rxmwire.GoSource(p)
		c.tx.pushFront(c.ctrlFrame(&h, &gs))
	}
}

// Results of streamStart.
const (
	streamReading = iota // the message is being read (rx.direct)
	streamDone           // the message was complete in the buffer
	streamHold           // no room (receive CQ or unexpected bound): retry later
	streamFailed         // the frame was malformed: the connection ended
)

// streamStart begins a streamed message whose tcp header (hs bytes, frame
// payload plen) and rxm header are at the head of the receive buffer.
func (c *rdmConn) streamStart(h *tcpwire.Header, hs int, plen uint64) int {
	ep := c.ep
	r := &c.rx
	var rh rxmwire.Header
	if err := rh.Parse(r.buf[r.start+hs : r.end]); err != nil {
		c.protoFail(err.Error())
		return streamFailed
	}
	size := plen - rxmwire.HeaderSize
	if rh.Type != rxmwire.TypeGoEager {
		c.protoFail("frame too large")
		return streamFailed
	}
	if (rh.Op != rxmwire.OpMsg && rh.Op != rxmwire.OpTagged) || rh.Size != size || h.Flags&tcpwire.FlagTagged != 0 {
		c.protoFail("malformed streamed message")
		return streamFailed
	}
	tagged := rh.Op == rxmwire.OpTagged
	src := ep.source(c)
	var e *provider.RxEntry
	var err error
	if tagged {
		e, err = ep.rq.GetTag(src, size, rh.Tag)
	} else {
		e, err = ep.rq.GetMsg(src, size)
	}
	hasData := rh.Flags&rxmwire.FlagRemoteCQData != 0
	ack := h.Flags&tcpwire.FlagDeliveryComplete != 0
	rd := r.spare
	if rd == nil {
		rd = new(rdmRead)
	}
	r.spare = nil
	switch {
	case err == nil:
		setRxData(e, rh.Data, hasData)
		*rd = rdmRead{e: e, iov: e.IOV, total: size, from: c.from(), stream: true, ack: ack}
	case err == provider.ENOENT && e != nil:
		if size > rdmSARMax {
			ep.rq.FreeEntry(e)
			r.spare = rd
			c.protoFail("unexpected streamed message too large to buffer")
			return streamFailed
		}
		cost := int64(size) + rdmUnexpCost
		if !ep.takeUnexp(cost) {
			ep.rq.FreeEntry(e)
			r.spare = rd
			return streamHold
		}
		setRxData(e, rh.Data, hasData)
		u := &rdmUnexp{data: make([]byte, size), from: c.from(), cost: cost}
		u.one[0] = u.data
		e.Peer = ep
		e.PeerContext = u
		*rd = rdmRead{pend: e, iov: u.one[:], total: size, from: c.from(), stream: true, tagged: tagged, ack: ack}
	case err == provider.EAGAIN:
		r.spare = rd
		return streamHold
	default:
		// The receive queue is gone: the message is read and dropped.
		*rd = rdmRead{discard: true, total: size, stream: true}
	}
	c.unhold()
	c.used()
	if c.beginDirect(rd, hs+rxmwire.HeaderSize, size) {
		return streamDone
	}
	return streamReading
}

// streamDone finishes a streamed message read whole: the matched receive
// completes, or the buffered message is queued as unexpected (and starts
// at once should a receive have been posted meanwhile); a delivery-complete
// frame is ACKed. ep.mu is held.
func (c *rdmConn) streamDone(rd *rdmRead) {
	ep := c.ep
	switch {
	case rd.pend != nil:
		e := rd.pend
		var err error
		if rd.tagged {
			err = ep.rq.QueueTag(e)
		} else {
			err = ep.rq.QueueMsg(e)
		}
		if err != nil {
			if u, ok := e.PeerContext.(*rdmUnexp); ok {
				ep.releaseUnexp(u)
			}
			e.PeerContext = nil
			ep.rq.FreeEntry(e)
		}
	case rd.e != nil:
		ep.completeRx(rd.e, rd.placed, rd.total-uint64(rd.placed), rd.from)
		ep.rq.FreeEntry(rd.e)
	}
	if rd.ack {
		a := tcpwire.ACK()
		c.ctrlFrame(&a, nil)
	}
	*rd = rdmRead{}
	c.rx.spare = rd
}

// failStream drops a streamed message cut short (the connection ended):
// a buffered unexpected one was never queued, so its entry is freed.
func (c *rdmConn) failStream(rd *rdmRead) {
	e := rd.pend
	rd.pend = nil
	if u, ok := e.PeerContext.(*rdmUnexp); ok {
		c.ep.releaseUnexp(u)
	}
	e.PeerContext = nil
	c.ep.rq.FreeEntry(e)
}

// rdmSockBuf is SO_RCVBUF and SO_SNDBUF of RDM connections unless
// FI_OPT_RECV_BUF_SIZE / FI_OPT_SEND_BUF_SIZE say otherwise. With the
// kernel's autotuning a message of a few hundred KiB often waits for the
// receiver's window to open (a loopback receiver announces it in steps of
// two 64 KiB segments): streamed messages took two or three times longer
// every other run. Fixed buffers of this size (the kernel doubles it; it
// is a bound, not an allocation) keep a whole message in flight.
const rdmSockBuf = 4 << 20

// sockDefaults sets the defaults of a new connection socket to peer: its
// buffer sizes (before applySockBufs, which applies what the application
// asked for) and, to a loopback peer, the loopback congestion control.
func (ep *rdmEP) sockDefaults(s *sys.Conn, peer []byte) {
	setLoopbackCC(s, peer, ep.loopCC)
	if ep.sockBuf[0] == 0 {
		_ = sys.SetSockBuf(s, false, rdmSockBuf)
	}
	if ep.sockBuf[1] == 0 {
		_ = sys.SetSockBuf(s, true, rdmSockBuf)
	}
}
