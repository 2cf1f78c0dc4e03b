package tcp

import (
	"sync/atomic"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Receive side of RDM endpoints: frames are read into a per-connection
// buffer and handled whole, except read responses (rendezvous data), whose
// payload is read straight into the matched receive. Everything read is
// checked (tcp header, rxm header, rendezvous descriptor, read request
// regions against our own rendezvous sends); a frame that fails a check
// ends that connection only, and what was in flight on it completes in
// error. A message the receive queue cannot take yet (no room in the CQ or
// the unexpected-message bound, FI_RM_ENABLED) stays in the stream and is
// retried.

const (
	rdmRbufSize = 64 << 10
	// rdmMaxFrame bounds the frames read whole: an eager message with its
	// headers, or a rendezvous request.
	rdmMaxFrame = tcpwire.MaxHeaderSize + rxmwire.HeaderSize + rxmwire.RndvSize + rxmwire.EagerLimit
	rdmRxBudget = 64
)

type rdmRx struct {
	buf        []byte
	start, end int
	reads      []*rdmRead // reads we issued, oldest first (responses come in order)
	spare      *rdmRead   // a finished read, reused by the next startRead
	direct     *rdmRead   // the read whose response payload is being read
	left       uint64
	scratch    []byte
	wr         rdmWrite // the RMA write being received (rdm_rma.go)
	wrd        rdmRead  // its payload read
	// held: the frame at the head of the buffer waits for room (in the
	// receive CQ or the unexpected-message bound); the socket is not
	// watched for reading meanwhile (backpressure).
	held bool
}

// rdmRead is a payload read straight into its destination: the data of a
// rendezvous message the peer announced, read into the receive that
// matched it; the response to one of our RMA reads (op); or, at the
// target, the payload of an RMA write into registered memory (wr).
type rdmRead struct {
	e      *provider.RxEntry
	op     *rdmTx
	wr     *rdmWrite
	iov    [][]byte // destination
	total  uint64
	msgID  uint64
	from   []byte
	placed int
	ti     int
	toff   int
	// discard: the message was discarded (FI_DISCARD); its data is read
	// and dropped, and no receive completes (e is nil).
	discard bool
	// stream: a streamed message (rdm_stream.go), read straight into the
	// receive e or, unexpected, into the buffer of pend (queued once
	// whole); tagged says which queue, ack whether the sender wants an
	// ACK.
	stream bool
	tagged bool
	ack    bool
	pend   *provider.RxEntry
	// prefix: the first bytes of buffered rendezvous message prefix, read
	// before it is reported (rdm_bufrecv.go). preN and preSkip: a claim of
	// such a message, whose prefix gave the receive preN bytes and could
	// not place preSkip more.
	prefix  *rdmUnexp
	preN    int
	preSkip uint64
}

// rdmUnexp is a queued unexpected message (the PeerContext of its entry).
type rdmUnexp struct {
	data   []byte // eager payload
	isRndv bool
	rndv   rxmwire.Rndv
	msgID  uint64
	conn   *rdmConn
	gen    uint32
	from   []byte
	sar    *rdmSAR // a SAR message (rdm_sar.go)
	cost   int64   // counted in ep.unexpBytes
	one    [1][]byte
	hasCMA bool // a CMA request (rdm_cma.go): cma says where the data is
	cma    rxmwire.GoCMA
	// Buffered receives (rdm_bufrecv.go), SAR and rendezvous messages:
	// bufE is the queued entry; pre the first bytes shown, set once
	// before ready; gone (ep.smu) that the entry was started or
	// discarded.
	bufE  *provider.RxEntry
	pre   []byte
	ready atomic.Bool
	gone  bool
}

// cmaPtr returns the CMA extension of a queued rendezvous request, or nil.
func (u *rdmUnexp) cmaPtr() *rxmwire.GoCMA {
	if !u.hasCMA {
		return nil
	}
	return &u.cma
}

// rdmUnexpCost is what an unexpected message costs beyond its payload.
const rdmUnexpCost = 256

// takeUnexp counts an unexpected message of cost bytes in, or reports
// false when the bound is reached (one message is always let in, so that
// a bound below a message's size cannot stall the endpoint).
func (ep *rdmEP) takeUnexp(cost int64) bool {
	n, b := ep.unexpN.Load(), ep.unexpBytes.Load()
	if n > 0 && (n >= ep.maxUnexp || b+cost > ep.maxUnexpBytes) {
		return false
	}
	ep.unexpN.Add(1)
	ep.unexpBytes.Add(cost)
	return true
}

// releaseUnexp counts an unexpected message out and wakes progress when a
// connection waits for room.
func (ep *rdmEP) releaseUnexp(u *rdmUnexp) {
	if u.cost == 0 {
		return
	}
	ep.unexpN.Add(-1)
	ep.unexpBytes.Add(-u.cost)
	u.cost = 0
	if ep.held.Load() > 0 {
		ep.kick()
	}
}

// hold marks the connection as waiting for room for its next frame.
func (c *rdmConn) hold() {
	if !c.rx.held {
		c.rx.held = true
		c.ep.held.Add(1)
		c.ep.unwatch(c.sock.FD())
	}
}

// dropHold forgets a wait for room when the stream ends (the socket is
// closed or replaced).
func (c *rdmConn) dropHold() {
	if c.rx.held {
		c.rx.held = false
		c.ep.held.Add(-1)
	}
}

// unhold ends a wait for room.
func (c *rdmConn) unhold() {
	if c.rx.held {
		c.rx.held = false
		c.ep.held.Add(-1)
		if c.sock != nil {
			c.ep.watch(c.sock.FD())
		}
	}
}

func (r *rdmRx) init() { r.buf = make([]byte, rdmRbufSize) }

// resetFrame forgets buffered bytes (the stream ended).
func (r *rdmRx) resetFrame() {
	r.start, r.end, r.direct, r.left = 0, 0, nil, 0
}

// resetStream prepares for a new socket.
func (r *rdmRx) resetStream() { r.resetFrame() }

// fill reads more bytes into the buffer, need of them to complete what is
// being parsed; false when there are none now or the connection ended.
// While rendezvous reads are outstanding it reads no more than need, so
// that a read response's payload is not read into the buffer (and copied
// out of it) but straight into its receive (readDirect).
func (c *rdmConn) fill(need int) bool {
	r := &c.rx
	if r.start == r.end {
		r.start, r.end = 0, 0
	} else if len(r.buf)-r.end < rdmMaxFrame && r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) {
		c.protoFail("receive buffer full") // cannot happen: frames are bounded by rdmMaxFrame
		return false
	}
	dst := r.buf[r.end:]
	if len(r.reads) > 0 && need < len(dst) {
		dst = dst[:need]
	}
	n, e := c.sock.Read(dst)
	if !c.readOK(n, e) {
		return false
	}
	r.end += n
	return true
}

// readOK handles a read's result: false on EAGAIN, end of stream or error
// (the last two end the connection).
func (c *rdmConn) readOK(n int, e provider.Errno) bool {
	switch {
	case e == provider.EAGAIN || e == provider.EINTR:
		return false
	case e != 0:
		c.fail(e, true)
		return false
	case n == 0:
		c.peerClosed()
		return false
	}
	return true
}

// protoFail ends the connection after a malformed frame.
func (c *rdmConn) protoFail(what string) {
	logCM(provider.LevelWarn, "rdm: protocol error, dropping the connection: "+what, c.addr)
	c.fail(provider.EIO, true)
}

// progressRx handles incoming frames until the socket has no more data,
// the budget is spent or a message must wait. ep.mu is held.
func (c *rdmConn) progressRx() {
	r := &c.rx
	var h tcpwire.Header
	for frames := 0; frames < rdmRxBudget && (c.state == connUp || c.state == connDraining); {
		if r.direct != nil {
			if !c.readDirect() {
				return
			}
			frames++
			continue
		}
		avail := r.end - r.start
		if avail == 0 && frames > 0 {
			// A frame was handled and nothing more is buffered: let the
			// caller see its completion; the next call reads again (the
			// read would usually find nothing).
			return
		}
		if avail < tcpwire.BaseHeaderSize {
			if !c.fill(tcpwire.BaseHeaderSize - avail) {
				return
			}
			continue
		}
		hs, err := tcpwire.PeekHeaderSize(r.buf[r.start:r.end])
		if err != nil {
			c.protoFail(err.Error())
			return
		}
		if avail < hs {
			if !c.fill(hs - avail) {
				return
			}
			continue
		}
		if err := tcpwire.ParseHeader(r.buf[r.start:r.start+hs], &h, false); err != nil {
			c.protoFail(err.Error())
			return
		}
		plen := h.Size - uint64(hs)
		if h.Op == tcpwire.OpReadRsp {
			if len(r.reads) == 0 || r.reads[0].total != plen {
				c.protoFail("unexpected read response")
				return
			}
			rd := r.reads[0]
			k := copy(r.reads, r.reads[1:]) // keeps the capacity
			r.reads[k] = nil
			r.reads = r.reads[:k]
			if c.beginDirect(rd, hs, plen) {
				frames++
			}
			continue
		}
		if h.Op == tcpwire.OpWrite {
			// An RMA write: its payload goes straight into registered
			// memory, once every region has been checked. Under
			// FI_RM_ENABLED its remote CQ data needs room in the receive
			// CQ first; without it the write stays in the stream until
			// the application reads the CQ.
			if !c.reserveWrite(&h) {
				return
			}
			rd := c.startWrite(&h, plen)
			if rd == nil {
				return
			}
			if c.beginDirect(rd, hs, plen) {
				frames++
			}
			continue
		}
		if h.Size > rdmMaxFrame && c.ext && h.Op == tcpwire.OpMsg {
			// A streamed message (rdm_stream.go): its headers first.
			if need := hs + rxmwire.HeaderSize; avail < need {
				if !c.fill(need - avail) {
					return
				}
				continue
			}
			switch c.streamStart(&h, hs, plen) {
			case streamHold:
				c.hold()
				return
			case streamFailed:
				return
			case streamDone:
				frames++
			}
			continue
		}
		if h.Size > rdmMaxFrame {
			c.protoFail("frame too large")
			return
		}
		if uint64(avail) < h.Size {
			if !c.fill(int(h.Size) - avail) {
				return
			}
			continue
		}
		if !c.frame(&h, r.buf[r.start+hs:r.start+int(h.Size)]) {
			c.hold() // the receive queue has no room: retry later
			return
		}
		c.unhold()
		r.start += int(h.Size)
		if r.start == r.end {
			r.start, r.end = 0, 0
		}
		frames++
	}
}

// beginDirect starts reading a payload of plen bytes, after a frame header
// of hs bytes, into rd: what is buffered now is placed at once; true when
// that was all of it (rd is finished).
func (c *rdmConn) beginDirect(rd *rdmRead, hs int, plen uint64) bool {
	r := &c.rx
	r.start += hs
	r.direct, r.left = rd, plen
	take := min(uint64(r.end-r.start), plen)
	c.place(rd, r.buf[r.start:r.start+int(take)])
	r.start += int(take)
	r.left -= take
	if r.left == 0 {
		r.direct = nil
		c.finishRead(rd)
		return true
	}
	return false
}

// place copies b into the read's receive buffers; what does not fit is
// dropped (the receive completes with FI_ETRUNC).
func (c *rdmConn) place(rd *rdmRead, b []byte) {
	for len(b) > 0 {
		dst := rd.cur()
		if dst == nil {
			return
		}
		n := copy(dst, b)
		rd.toff += n
		rd.placed += n
		b = b[n:]
	}
}

// cur returns the unfilled part of the current receive buffer, or nil.
func (rd *rdmRead) cur() []byte {
	if rd.discard {
		return nil
	}
	for rd.ti < len(rd.iov) {
		if b := rd.iov[rd.ti]; rd.toff < len(b) {
			return b[rd.toff:]
		}
		rd.ti++
		rd.toff = 0
	}
	return nil
}

// readDirect reads a read response's payload straight into the receive;
// true when the read finished.
func (c *rdmConn) readDirect() bool {
	r := &c.rx
	rd := r.direct
	for r.left > 0 {
		dst := rd.cur()
		excess := dst == nil
		if excess {
			if r.scratch == nil {
				r.scratch = make([]byte, 64<<10)
			}
			dst = r.scratch
		}
		if uint64(len(dst)) > r.left {
			dst = dst[:r.left]
		}
		n, e := c.sock.Read(dst)
		if !c.readOK(n, e) {
			return false
		}
		if !excess {
			rd.toff += n
			rd.placed += n
		}
		r.left -= uint64(n)
	}
	r.direct = nil
	c.finishRead(rd)
	return true
}

// finishRead completes a rendezvous receive and tells the sender.
func (c *rdmConn) finishRead(rd *rdmRead) {
	ep := c.ep
	switch {
	case rd.stream:
		c.streamDone(rd)
		return
	case rd.op != nil:
		c.readDone(rd)
		return
	case rd.wr != nil:
		c.writeDone(rd)
		return
	case rd.prefix != nil:
		c.prefixDone(rd)
		return
	}
	if !rd.discard {
		olen := rd.preSkip + rd.total - uint64(rd.placed)
		ep.completeRx(rd.e, rd.preN+rd.placed, olen, rd.from)
		ep.rq.FreeEntry(rd.e)
	}
	c.sendReadDone(rd.msgID)
	*rd = rdmRead{}
	c.rx.spare = rd
}

// frame handles one whole frame (header h, payload p); false when it must
// be retried later (the receive queue has no room).
func (c *rdmConn) frame(h *tcpwire.Header, p []byte) bool {
	ep := c.ep
	c.used()
	switch {
	case h.IsACK():
		c.ackReceived()
		return true
	case h.Op == tcpwire.OpReadReq:
		c.serveRead(h)
		return true
	case h.Op == tcpwire.OpTagged || (h.Op == tcpwire.OpMsg && h.Flags&tcpwire.FlagTagged != 0):
		if !ep.deliver(c, true, h.Tag, p, h.CQData, h.HasCQData()) {
			return false
		}
		c.ackIfAsked(h)
		return true
	case h.Op != tcpwire.OpMsg:
		c.protoFail("unexpected tcp op")
		return true
	}
	var rh rxmwire.Header
	if err := rh.Parse(p); err != nil {
		c.protoFail(err.Error())
		return true
	}
	body := p[rxmwire.HeaderSize:]
	switch rh.Type {
	case rxmwire.TypeEager, rxmwire.TypeGoEager:
		// A streamed message short enough to be read whole (it is only
		// just above the eager limit) is an eager one; only a peer of
		// ours sends them.
		if rh.Type == rxmwire.TypeGoEager && !c.ext {
			c.protoFail("unsupported rxm message type")
			return true
		}
		if rh.Op != rxmwire.OpMsg && rh.Op != rxmwire.OpTagged {
			c.protoFail("bad rxm op")
			return true
		}
		if rh.Size != uint64(len(body)) {
			c.protoFail("eager size mismatch")
			return true
		}
		if !ep.deliver(c, rh.Op == rxmwire.OpTagged, rh.Tag, body, rh.Data, rh.Flags&rxmwire.FlagRemoteCQData != 0) {
			return false
		}
		c.ackIfAsked(h)
	case rxmwire.TypeRndvReq:
		if rh.Op != rxmwire.OpMsg && rh.Op != rxmwire.OpTagged {
			c.protoFail("bad rxm op")
			return true
		}
		rv, err := rxmwire.ParseRndv(body, rh.Size)
		if err != nil {
			c.protoFail(err.Error())
			return true
		}
		return ep.rendezvous(c, &rh, &rv, nil)
	case rxmwire.TypeGoCMAReq:
		if !c.ext {
			c.protoFail("unsupported rxm message type")
			return true
		}
		if rh.Op != rxmwire.OpMsg && rh.Op != rxmwire.OpTagged {
			c.protoFail("bad rxm op")
			return true
		}
		rv, err := rxmwire.ParseRndv(body, rh.Size)
		if err != nil {
			c.protoFail(err.Error())
			return true
		}
		g, err := rxmwire.ParseGoCMA(body[rxmwire.RndvSize:], rh.Size)
		if err != nil {
			c.protoFail(err.Error())
			return true
		}
		return ep.rendezvous(c, &rh, &rv, &g)
	case rxmwire.TypeGoCMAChallenge:
		if !c.ext {
			c.protoFail("unsupported rxm message type")
			return true
		}
		c.cmaChallenge(body)
	case rxmwire.TypeGoSource:
		if !c.ext {
			c.protoFail("unsupported rxm message type")
			return true
		}
		port, err := rxmwire.ParseGoSource(&rh, body)
		if err != nil {
			c.protoFail(err.Error())
			return true
		}
		c.src = withPort(c.addr, port)
	case rxmwire.TypeSAR:
		return c.sarSegment(h, &rh, body)
	case rxmwire.TypeAtomic:
		c.atomicRequest(&rh, body)
	case rxmwire.TypeAtomicResp:
		c.atomicResponse(&rh, body)
	case rxmwire.TypeGoRMAError:
		c.rmaErrorReceived(&rh)
	case rxmwire.TypeRndvReadDone:
		t := ep.rndv[rh.MsgID]
		if t == nil || t.conn != c || !t.sent {
			c.protoFail("read-done for no rendezvous send")
			return true
		}
		delete(ep.rndv, rh.MsgID)
		ep.finishTx(t, 0, true)
	default:
		c.protoFail("unsupported rxm message type")
	}
	return true
}

// ackIfAsked answers a delivery-complete frame with an ACK.
func (c *rdmConn) ackIfAsked(h *tcpwire.Header) {
	if h.Flags&tcpwire.FlagDeliveryComplete != 0 {
		a := tcpwire.ACK()
		c.ctrlFrame(&a, nil)
	}
}

// source returns the fi_addr of a connection's peer, or AddrNotAvail.
func (ep *rdmEP) source(c *rdmConn) provider.Addr {
	if !ep.needSrc {
		return provider.AddrNotAvail
	}
	return ep.av.Reverse(c.from())
}

func setRxData(e *provider.RxEntry, data uint64, has bool) {
	if has {
		e.CQData = data
		e.Flags |= provider.FlagRemoteCQData
	}
}

// deliver matches an eager message: into a posted receive, or queued as
// unexpected with a copy of its payload. false: no room, retry later.
func (ep *rdmEP) deliver(c *rdmConn, tagged bool, tag uint64, p []byte, data uint64, hasData bool) bool {
	if ep.direct != nil && (ep.rxRes == nil || !ep.rxRes.Full()) {
		ep.dmsg, ep.dconn, ep.ddata, ep.dhas = p, c, data, hasData
		var st srx.DirectStatus
		if tagged {
			st = ep.direct.ReceiveDirectTag(ep, ep.source(c), tag)
		} else {
			st = ep.direct.ReceiveDirect(ep)
		}
		ep.dmsg, ep.dconn = nil, nil
		if st == srx.DirectDone {
			return true
		}
	}
	src := ep.source(c)
	var e *provider.RxEntry
	var err error
	if tagged {
		e, err = ep.rq.GetTag(src, uint64(len(p)), tag)
	} else {
		e, err = ep.rq.GetMsg(src, uint64(len(p)))
	}
	switch {
	case err == nil:
		setRxData(e, data, hasData)
		n, olen := srx.Deliver(e, p)
		ep.completeRx(e, n, olen, c.from())
		ep.rq.FreeEntry(e)
	case err == provider.ENOENT && e != nil:
		cost := int64(len(p) + rdmUnexpCost)
		if !ep.takeUnexp(cost) {
			ep.rq.FreeEntry(e)
			return false
		}
		setRxData(e, data, hasData)
		e.Peer = ep
		u := &rdmUnexp{data: append([]byte(nil), p...), from: c.from(), cost: cost}
		e.PeerContext = u
		if tagged {
			err = ep.rq.QueueTag(e)
		} else {
			err = ep.rq.QueueMsg(e)
		}
		if err != nil {
			ep.releaseUnexp(u)
			ep.rq.FreeEntry(e)
		}
	case err == provider.EAGAIN:
		return false
	}
	return true
}

// ReceiveInto implements srx.Receiver: it copies the eager message deliver
// handed to the queue (ep.dmsg) into the receive that matched it.
func (ep *rdmEP) ReceiveInto(iov [][]byte) (int, bool) {
	srx.Scatter(iov, ep.dmsg)
	return len(ep.dmsg), true
}

// ReceivedDirect implements srx.Receiver: it completes the receive
// ReceiveInto filled (the queue frees it).
func (ep *rdmEP) ReceivedDirect(e *provider.RxEntry, n int, olen uint64) {
	ep.directRecv++
	setRxData(e, ep.ddata, ep.dhas)
	src := provider.AddrNotAvail
	if ep.report {
		src = ep.av.Reverse(ep.dconn.from())
	}
	if olen == 0 && ep.directCQ != nil && !ep.srcErr {
		srx.CompleteDirect(ep.directCQ, ep.rxCntr, e, n, src)
		return
	}
	srx.CompleteFrom(ep.rxCQ, ep.rxCntr, e, n, olen, src, ep.dconn.from(), ep.srcErr)
}

// rendezvous matches a rendezvous request: a matched receive reads the
// data at once; otherwise the request is queued as unexpected and read
// when a receive matches it.
func (ep *rdmEP) rendezvous(c *rdmConn, rh *rxmwire.Header, rv *rxmwire.Rndv, g *rxmwire.GoCMA) bool {
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
	switch {
	case err == nil:
		setRxData(e, rh.Data, hasData)
		c.startRndv(e, rv, rh.MsgID, c.from(), g)
	case err == provider.ENOENT && e != nil:
		cost := int64(rdmUnexpCost)
		if ep.bufOn {
			cost += int64(min(ep.bufMin, rh.Size)) // its first bytes, read before it is reported
		}
		if !ep.takeUnexp(cost) {
			ep.rq.FreeEntry(e)
			return false
		}
		setRxData(e, rh.Data, hasData)
		e.Peer = ep
		u := &rdmUnexp{isRndv: true, rndv: *rv, msgID: rh.MsgID, conn: c, gen: c.gen, from: c.from(),
			cost: cost, bufE: e}
		if g != nil {
			u.hasCMA, u.cma = true, *g
		}
		e.PeerContext = u
		c.unexpRndv++ // before QueueTag, which may start it at once
		if tagged {
			err = ep.rq.QueueTag(e)
		} else {
			err = ep.rq.QueueMsg(e)
		}
		if err != nil {
			c.unexpRndv--
			ep.releaseUnexp(u)
			ep.rq.FreeEntry(e)
		} else if ep.bufOn && !ep.isGone(u) {
			c.bufPrefix(u, rh.Size)
		}
	case err == provider.EAGAIN:
		return false
	}
	return true
}

// rndvReadHeader returns the read request of the regions of rv.
func rndvReadHeader(rv *rxmwire.Rndv) tcpwire.Header {
	h := tcpwire.Header{Op: tcpwire.OpReadReq, RMACount: rv.Count}
	for i := 0; i < int(rv.Count); i++ {
		v := rv.IOV[i]
		h.RMA[i] = tcpwire.RMAIOV{Addr: v.Addr, Len: v.Len, Key: v.Key}
	}
	h.SetPayload(0)
	return h
}

// startRead sends the read request of a rendezvous receive. ep.mu is held.
func (c *rdmConn) startRead(e *provider.RxEntry, rv *rxmwire.Rndv, msgID uint64, from []byte) {
	h := rndvReadHeader(rv)
	var total uint64
	for i := 0; i < int(rv.Count); i++ {
		total += rv.IOV[i].Len
	}
	rd := c.rx.spare
	if rd == nil {
		rd = new(rdmRead)
	}
	c.rx.spare = nil
	*rd = rdmRead{e: e, total: total, msgID: msgID, from: from, discard: e == nil}
	if e != nil {
		rd.iov = e.IOV
	}
	// The read joins c.rx.reads when its request is written (responses
	// come in the order of the requests on the wire).
	c.ctrlFrame(&h, nil).rd = rd
}

// completeRx writes a receive completion (FI_SOURCE / FI_SOURCE_ERR as
// bound).
func (ep *rdmEP) completeRx(e *provider.RxEntry, n int, olen uint64, from []byte) {
	src := provider.AddrNotAvail
	if ep.report {
		src = e.Addr
		if src == provider.AddrUnspec {
			src = ep.av.Reverse(from)
		}
	}
	srx.CompleteFrom(ep.rxCQ, ep.rxCntr, e, n, olen, src, from, ep.srcErr)
}

// completeRxErr fails a receive and frees its entry.
func (ep *rdmEP) completeRxErr(e *provider.RxEntry, err provider.Errno) {
	srx.CompleteErr(ep.rxCQ, ep.rxCntr, e, err, provider.AddrNotAvail)
	ep.rq.FreeEntry(e)
}

// StartMsg delivers a queued unexpected message into the receive that now
// matches it (fi_ops_srx_peer.start_msg): eager data at once; a rendezvous
// request is read by the next progress call.
func (ep *rdmEP) StartMsg(e *provider.RxEntry) error {
	u, ok := e.PeerContext.(*rdmUnexp)
	if !ok || u == nil {
		return provider.EINVAL
	}
	ep.releaseUnexp(u)
	if u.isRndv || u.sar != nil {
		ep.smu.Lock()
		u.gone = true
		ep.starts = append(ep.starts, e)
		ep.nstarts.Add(1)
		ep.smu.Unlock()
		ep.kick()
		return nil
	}
	e.PeerContext = nil
	n, olen := srx.Deliver(e, u.data)
	ep.completeRx(e, n, olen, u.from)
	ep.rq.FreeEntry(e)
	return nil
}

// StartTag is StartMsg for tagged messages.
func (ep *rdmEP) StartTag(e *provider.RxEntry) error { return ep.StartMsg(e) }

// DiscardMsg drops a queued unexpected message. The data of a rendezvous
// request is still read (and dropped) by the next progress call, so that
// the sender's operation completes.
func (ep *rdmEP) DiscardMsg(e *provider.RxEntry) error {
	u, ok := e.PeerContext.(*rdmUnexp)
	if !ok || u == nil {
		return provider.EINVAL
	}
	ep.releaseUnexp(u)
	if u.isRndv || u.sar != nil {
		ep.markGone(u) // before the entry is freed
	}
	e.PeerContext = nil
	ep.rq.FreeEntry(e)
	if u.isRndv || u.sar != nil {
		ep.smu.Lock()
		ep.discards = append(ep.discards, u)
		ep.nstarts.Add(1)
		ep.smu.Unlock()
		ep.kick()
	}
	return nil
}

// DiscardTag is DiscardMsg for tagged messages.
func (ep *rdmEP) DiscardTag(e *provider.RxEntry) error { return ep.DiscardMsg(e) }
