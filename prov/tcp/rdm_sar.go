package tcp

import (
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Segmentation and reassembly (SAR), as rxm 1.17 does it. rxm picks the
// protocol of a message by its length: eager up to the eager limit
// (16384), SAR up to the SAR limit, rendezvous above. Over tcp, rxm's
// dynamic receive buffers are on by default (FI_OFI_RXM_ENABLE_DYN_RBUF),
// and then the SAR limit equals the eager limit: a C peer never sends SAR
// segments. With FI_OFI_RXM_ENABLE_DYN_RBUF=0, the SAR limit is
// FI_OFI_RXM_SAR_LIMIT when that exceeds the eager limit, else 8 times
// the eager limit (131072), and tagged eager messages carry the rxm header
// too (the tcp layer no longer matches tags). An endpoint reads both
// variables as rxm does, so that it sends what a C peer configured alike
// expects; it receives every protocol whatever they say.
//
// A SAR message is a run of rxm packets of type TypeSAR, one per segment
// of at most the eager limit: ctrl.seg_size is the segment's length,
// ctrl.seg_no its index, ctrl.msg_id the sender's id of the message,
// the low two bits of ctrl.ctrl_data the segment type (first, middle,
// last), and op.size the message's total length. The first segment is
// matched against the receive queue like an eager message; the others go
// to the receive it matched (or are buffered with it while it is
// unexpected), by msg_id, in order.

const (
	envRxmDynRbuf  = "FI_OFI_RXM_ENABLE_DYN_RBUF"
	envRxmSARLimit = "FI_OFI_RXM_SAR_LIMIT"
	// rdmSARMax bounds the length of an unexpected SAR message (what it
	// may buffer: a longer one drops the connection) and our SAR limit.
	// One that matches a receive goes straight into it, whatever its
	// length.
	rdmSARMax = 1 << 30
)

// rdmProtoLimits reads rxm's protocol variables: whether dynamic receive
// buffers are on, and the SAR limit.
func rdmProtoLimits() (dynRbuf bool, sarLimit int) {
	if envBool(envRxmDynRbuf, true) {
		return true, rxmwire.EagerLimit
	}
	v := envUint(envRxmSARLimit, 8*rxmwire.EagerLimit)
	return false, int(min(max(v, rxmwire.EagerLimit), rdmSARMax))
}

// rdmSAR is a SAR message being received on a connection.
type rdmSAR struct {
	rd       rdmRead   // placement into the matched receive (rd.e set once matched)
	u        *rdmUnexp // while unexpected: the buffered message
	total    uint64
	got      uint64 // bytes received
	done     bool   // the last segment arrived
	discard  bool   // discarded while unexpected: the rest is dropped
	msgID    uint64
	c        *rdmConn
	gen      uint32
	tagged   bool
	finished bool // completed (or failed)
}

// buildSAR encodes a message of n bytes as SAR segments, with a copy of
// its payload: rxm's segments carry the eager limit each, the last one the
// rest.
func (ep *rdmEP) buildSAR(t *rdmTx, m *provider.Msg, n int, tagged, hasData bool, c *rdmConn) {
	t.kind = txEager
	const seg = rxmwire.EagerLimit
	segs := (n + seg - 1) / seg
	frame := tcpwire.BaseHeaderSize + rxmwire.HeaderSize
	need := n + segs*frame
	// PutHeader wants room for the largest header even where a short
	// last segment leaves less.
	if cap(t.buf) < need+tcpwire.MaxHeaderSize {
		t.buf = make([]byte, need+tcpwire.MaxHeaderSize)
	}
	buf := t.buf[:need+tcpwire.MaxHeaderSize]
	ep.nextKey++
	id := ep.nextKey
	var one [1][]byte
	iov := m.IOV
	if iov == nil {
		one[0] = m.Buf
		iov = one[:]
	}
	off, ii, io := 0, 0, 0
	for i := 0; i < segs; i++ {
		l := min(seg, n-i*seg)
		typ := uint64(rxmwire.SegMiddle)
		switch {
		case i == 0:
			typ = rxmwire.SegFirst
		case i == segs-1:
			typ = rxmwire.SegLast
		}
		h := tcpwire.Header{Op: tcpwire.OpMsg}
		if i == segs-1 && m.Flags&provider.FlagDeliveryComplete != 0 {
			h.Flags = tcpwire.FlagDeliveryComplete
			t.ack = true
		}
		h.SetPayload(uint64(rxmwire.HeaderSize + l))
		hl := tcpwire.PutHeader(buf[off:], &h, false)
		rh := rxmwire.Header{Type: rxmwire.TypeSAR, SegSize: uint16(l), SegNo: uint32(i),
			ConnID: uint64(c.remoteIndex), MsgID: id, CtrlData: typ, Op: rxmwire.OpMsg, Size: uint64(n)}
		if tagged {
			rh.Op, rh.Tag = rxmwire.OpTagged, m.Tag
		}
		if hasData {
			rh.Flags, rh.Data = rxmwire.FlagRemoteCQData, m.Data
		}
		rh.Put(buf[off+hl:])
		off += hl + rxmwire.HeaderSize
		// Copy l bytes of payload from the iov.
		for want := l; want > 0; {
			k := copy(buf[off:off+want], iov[ii][io:])
			off += k
			want -= k
			io += k
			if io == len(iov[ii]) {
				ii, io = ii+1, 0
			}
		}
	}
	t.add(buf[:off])
}

// sarSegment handles one SAR segment (frame header h, rxm header rh,
// segment data body); false when the first segment finds no room in the
// receive queue and must be retried.
func (c *rdmConn) sarSegment(h *tcpwire.Header, rh *rxmwire.Header, body []byte) bool {
	if rh.Op != rxmwire.OpMsg && rh.Op != rxmwire.OpTagged {
		c.protoFail("bad rxm op")
		return true
	}
	if int(rh.SegSize) != len(body) {
		c.protoFail("SAR segment size mismatch")
		return true
	}
	typ := rh.CtrlData & 3
	s := c.sar[rh.MsgID]
	if typ == rxmwire.SegFirst {
		if s != nil {
			c.protoFail("SAR message started twice")
			return true
		}
		if rh.Size < uint64(len(body)) || rh.Size > 1<<62 {
			c.protoFail("bad SAR message length")
			return true
		}
		if !c.sarFirst(rh, body) {
			return false
		}
		if c.state != connUp {
			return true
		}
	} else {
		if s == nil || typ == 0 || s.got+uint64(len(body)) > s.total {
			c.protoFail("SAR segment for no message")
			return true
		}
		c.sarData(s, body)
	}
	if s = c.sar[rh.MsgID]; s != nil {
		if typ == rxmwire.SegLast && s.got != s.total {
			c.protoFail("SAR message length mismatch")
			return true
		}
		if s.got == s.total {
			delete(c.sar, rh.MsgID)
			s.done = true
			if s.rd.e != nil {
				c.sarFinish(s)
			}
			if s.discard {
				s.finished = true
			}
		}
	}
	c.ackIfAsked(h)
	return true
}

// sarFirst matches the first segment of a SAR message: into a posted
// receive, or queued as unexpected with its data buffered.
func (c *rdmConn) sarFirst(rh *rxmwire.Header, body []byte) bool {
	ep := c.ep
	src := ep.source(c)
	tagged := rh.Op == rxmwire.OpTagged
	var e *provider.RxEntry
	var err error
	if tagged {
		e, err = ep.rq.GetTag(src, rh.Size, rh.Tag)
	} else {
		e, err = ep.rq.GetMsg(src, rh.Size)
	}
	hasData := rh.Flags&rxmwire.FlagRemoteCQData != 0
	s := &rdmSAR{total: rh.Size, msgID: rh.MsgID, c: c, gen: c.gen, tagged: tagged}
	switch {
	case err == nil:
		setRxData(e, rh.Data, hasData)
		s.rd = rdmRead{e: e, iov: e.IOV, total: rh.Size, from: c.from()}
	case err == provider.ENOENT && e != nil && rh.Size > rdmSARMax:
		ep.rq.FreeEntry(e)
		c.protoFail("unexpected SAR message too large to buffer")
		return true
	case err == provider.ENOENT && e != nil:
		// Counted whole against the unexpected-message bound (its
		// segments are buffered as they come).
		cost := int64(rh.Size) + rdmUnexpCost
		if !ep.takeUnexp(cost) {
			ep.rq.FreeEntry(e)
			return false
		}
		setRxData(e, rh.Data, hasData)
		u := &rdmUnexp{conn: c, gen: c.gen, from: c.from(), sar: s, cost: cost, bufE: e}
		s.u = u
		e.Peer = ep
		e.PeerContext = u
		if tagged {
			err = ep.rq.QueueTag(e)
		} else {
			err = ep.rq.QueueMsg(e)
		}
		if err != nil {
			ep.releaseUnexp(u)
			ep.rq.FreeEntry(e)
			s.discard = true
			s.u = nil
		}
	case err == provider.EAGAIN:
		return false
	default:
		s.discard = true
	}
	if c.sar == nil {
		c.sar = map[uint64]*rdmSAR{}
	}
	c.sar[rh.MsgID] = s
	c.sarData(s, body)
	return true
}

// sarData takes a segment's data: into the receive, into the unexpected
// buffer, or dropped.
func (c *rdmConn) sarData(s *rdmSAR, b []byte) {
	s.got += uint64(len(b))
	switch {
	case s.rd.e != nil:
		c.place(&s.rd, b)
	case s.u != nil:
		s.u.data = append(s.u.data, b...)
		if c.ep.bufOn && s.got >= min(c.ep.bufMin, s.total) {
			// Buffered receives: shown once the minimum is held. What
			// is appended later does not touch these bytes.
			c.ep.bufReady(s.u, s.u.data[:len(s.u.data):len(s.u.data)])
		}
	}
}

// sarFinish completes the receive of a fully received SAR message.
func (c *rdmConn) sarFinish(s *rdmSAR) {
	ep := c.ep
	s.finished = true
	e := s.rd.e
	s.rd.e = nil
	ep.completeRx(e, s.rd.placed, s.total-uint64(s.rd.placed), s.rd.from)
	ep.rq.FreeEntry(e)
}

// sarStart delivers an unexpected SAR message into the receive that now
// matches it (from takeStarts, ep.mu held): the buffered data at once, the
// rest as it arrives.
func (ep *rdmEP) sarStart(e *provider.RxEntry, u *rdmUnexp) {
	s := u.sar
	e.PeerContext = nil
	s.u = nil
	if !s.done && (s.finished || u.conn.state != connUp || u.conn.gen != u.gen) {
		s.finished = true
		ep.completeRxErr(e, provider.ECONNABORTED)
		return
	}
	if n := len(e.IOV); n == 1 && e.Flags&provider.FlagMultiRecv != 0 && s.done {
		// A multi-receive buffer takes the message like an eager one.
		s.finished = true
		m, olen := srx.Deliver(e, u.data)
		ep.completeRx(e, m, olen, u.from)
		ep.rq.FreeEntry(e)
		return
	}
	s.rd = rdmRead{e: e, iov: e.IOV, total: s.total, from: u.from}
	u.conn.place(&s.rd, u.data)
	u.data = nil
	if s.done {
		u.conn.sarFinish(s)
	}
}

// sarDiscard drops an unexpected SAR message (FI_DISCARD): what is still
// to come is read and dropped.
func (ep *rdmEP) sarDiscard(u *rdmUnexp) {
	s := u.sar
	s.u, s.discard = nil, true
	u.data = nil
}

// failSAR fails the SAR messages being received on c: a matched receive
// completes with err (when report); an unexpected one completes in error
// when a receive matches it.
func (c *rdmConn) failSAR(err provider.Errno, report bool) {
	for id, s := range c.sar {
		delete(c.sar, id)
		s.finished = true
		if u := s.u; u != nil && c.ep.bufOn {
			c.ep.bufReady(u, u.data[:len(u.data):len(u.data)]) // shown with what arrived; a claim then fails
		}
		if e := s.rd.e; e != nil {
			s.rd.e = nil
			if report {
				c.ep.completeRxErr(e, err)
			} else {
				c.ep.rq.FreeEntry(e)
			}
		}
	}
}
