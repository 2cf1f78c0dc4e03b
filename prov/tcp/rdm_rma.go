package tcp

import (
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// RMA of RDM endpoints (fi_rma(3)), carried as rxm 1.17 carries it: passed
// through to the tcp connection of the peer, so that the frames are the
// tcp wire's RMA frames (../shared/spec/libfabric-1.17-wire.md §4.2): a
// write is an op 4 frame with the remote regions and the data, a read an
// op 2 request answered by an op 3 response with the data. The target
// checks every region against the domain's registrations (FI_REMOTE_WRITE
// or FI_REMOTE_READ, key and range) before it touches memory; a refused
// access drops the connection, as the C tcp provider does (the wire has no
// error frame), so the operation, and what else was in flight to that
// peer, completes in error at the initiator, and the next operation
// reconnects.
//
// Between two peers of this implementation (they recognise each other by
// rxmwire.GoMarker in the connection data), the target answers a refused
// access with a TypeGoRMAError packet carrying the error (FI_EKEYREJECTED,
// FI_EACCES, FI_EINVAL ...) in place of the ACK or the read response, and
// drops the refused write's payload: the operation completes in error with
// the reason and the connection stays up.
//
// A write is always sent with the delivery-complete flag, which the
// target's tcp layer answers with an ACK once the data is placed: an RDM
// write then completes only after the target accepted it (a C target ACKs
// such frames too), so a refused write completes in error rather than
// successfully. FI_COMMIT_COMPLETE is sent as the commit flag, also ACKed.
// A read completes when its response has been placed.

var _ provider.RMA = (*rdmEP)(nil)

// rdmWrite is the RMA write being received on a connection (target side):
// its header and the registered memory it goes to.
type rdmWrite struct {
	h       tcpwire.Header
	iov     [tcpwire.MaxRMAIOV][]byte
	refused provider.Errno // refused (extension): the payload is dropped
	res     bool           // room for its remote CQ data is reserved in the receive CQ
}

// reserveWrite claims room for the remote CQ data completion of the write
// whose header is h (FI_RM_ENABLED); false when the receive CQ is full.
func (c *rdmConn) reserveWrite(h *tcpwire.Header) bool {
	w := &c.rx.wr
	if !h.HasCQData() || c.ep.rxRes == nil || w.res {
		return true
	}
	w.res = c.ep.rxRes.Reserve()
	return w.res
}

// unreserveWrite gives back the room a write that will not complete had.
func (c *rdmConn) unreserveWrite() {
	if w := &c.rx.wr; w.res {
		w.res = false
		c.ep.rxRes.Unreserve()
	}
}

// goPad returns the connection-data padding that tells a peer of this
// implementation we are one too (when the peer's request said so).
func goPad(ext bool) uint8 {
	if ext {
		return rxmwire.GoMarker
	}
	return 0
}

// Write writes to remote memory (write, writev, writemsg, writedata,
// inject_write).
func (ep *rdmEP) Write(m provider.Msg) error { return ep.postRMA(&m, true) }

// Read reads remote memory (read, readv, readmsg).
func (ep *rdmEP) Read(m provider.Msg) error { return ep.postRMA(&m, false) }

// beginOp is the common start of an RMA or atomic operation: the endpoint
// is enabled, dest resolves, the transmit queue has room, and (FI_RM_ENABLED)
// room for the completion is reserved. ep.mu is held.
func (ep *rdmEP) beginOp(dest provider.Addr, ctx any, flags provider.Flags) (*rdmConn, *rdmTx, error) {
	switch ep.state {
	case rdmClosed:
		return nil, nil, provider.EBADF
	case rdmOpen:
		return nil, nil, provider.EOPBADSTATE
	}
	addr := ep.av.Lookup(dest)
	if addr == nil {
		return nil, nil, provider.EINVAL
	}
	if !ep.takeRoom() {
		return nil, nil, provider.EAGAIN
	}
	t := ep.getTx()
	t.ctx, t.comp, t.counted = ctx, flags&provider.FlagCompletion != 0, true
	t.fence = flags&provider.FlagFence != 0
	if ep.txRes != nil && flags&(provider.FlagInject|provider.FlagCompletion) != provider.FlagInject {
		if !ep.txRes.Reserve() {
			ep.giveCredit()
			ep.putTx(t)
			return nil, nil, provider.EAGAIN
		}
		t.reserved = true
	}
	c, err := ep.conn(addr)
	if err != nil {
		if t.reserved {
			ep.txRes.Unreserve()
		}
		ep.giveCredit()
		ep.putTx(t)
		return nil, nil, err
	}
	t.conn = c
	return c, t, nil
}

func (ep *rdmEP) postRMA(m *provider.Msg, write bool) error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	c, t, err := ep.beginOp(m.Addr, m.Context, m.Flags)
	if err != nil {
		return err
	}
	var one [1][]byte
	iov := m.IOV
	if iov == nil {
		one[0] = m.Buf
		iov = one[:]
	}
	var h tcpwire.Header
	var rone [1]provider.RMAIOV
	rma := m.RMA
	if rma == nil {
		rone[0] = m.RMAOne
		rma = rone[:]
	}
	h.RMACount = uint8(len(rma))
	for i, r := range rma {
		h.RMA[i] = tcpwire.RMAIOV{Addr: r.Addr, Len: r.Len, Key: r.Key}
	}
	var total uint64
	for _, b := range iov {
		total += uint64(len(b))
	}
	if write {
		t.kind, t.cntr, t.ack = txWrite, provider.CntrWrite, true
		t.flags = provider.FlagRMA | provider.FlagWrite
		h.Op = tcpwire.OpWrite
		h.Flags = tcpwire.FlagDeliveryComplete
		if m.Flags&provider.FlagCommitComplete != 0 {
			h.Flags = tcpwire.FlagCommitComplete
		}
		if m.Flags&provider.FlagRemoteCQData != 0 {
			h.Flags |= tcpwire.FlagCQData
			h.CQData = m.Data
		}
		h.SetPayload(total)
		hl := tcpwire.PutHeader(t.hdr[:], &h, false)
		if m.Flags&provider.FlagInject != 0 {
			// The payload is copied: the buffer is the caller's again
			// when the call returns.
			buf := append(t.buf[:0], t.hdr[:hl]...)
			for _, b := range iov {
				buf = append(buf, b...)
			}
			t.buf = buf
			t.add(buf)
		} else {
			t.add(t.hdr[:hl])
			for _, b := range iov {
				t.add(b)
			}
		}
	} else {
		t.kind, t.cntr = txRead, provider.CntrRead
		t.flags = provider.FlagRMA | provider.FlagRead
		h.Op = tcpwire.OpReadReq
		h.SetPayload(0)
		hl := tcpwire.PutHeader(t.hdr[:], &h, false)
		t.add(t.hdr[:hl])
		n := copy(t.rdIOV[:], iov)
		t.rdBuf = rdmRead{op: t, iov: t.rdIOV[:n], total: total}
		t.rd = &t.rdBuf
	}
	ep.enqueue(c, t)
	return nil
}

// readDone completes an RMA read whose response has been placed.
func (c *rdmConn) readDone(rd *rdmRead) { c.ep.finishTx(rd.op, 0, true) }

// ackReceived completes the oldest operation waiting for an ACK; an ACK
// nothing waits for is a protocol error.
func (c *rdmConn) ackReceived() {
	if len(c.acks) == 0 {
		c.protoFail("ACK for no operation")
		return
	}
	c.ep.finishTx(c.popAck(), 0, true)
}

// popAck removes the oldest operation waiting for an ACK; the queue keeps
// its storage (a steady stream of writes allocates nothing).
func (c *rdmConn) popAck() *rdmTx {
	t := c.acks[0]
	n := copy(c.acks, c.acks[1:])
	c.acks[n] = nil
	c.acks = c.acks[:n]
	return t
}

// busy reports whether an operation written on c still waits for the
// peer (FI_FENCE holds the next one back until none does).
func (c *rdmConn) busy() bool {
	if len(c.acks) > 0 || len(c.rx.reads) > 0 {
		return true
	}
	for _, t := range c.ep.rndv {
		if t.conn == c && t.sent {
			return true
		}
	}
	for _, t := range c.ep.amo {
		if t.conn == c && t.sent {
			return true
		}
	}
	return false
}

// startWrite checks an incoming RMA write (header h, payload plen bytes)
// against the registrations and returns the read that places its payload,
// or nil when it was refused (the connection is dropped).
func (c *rdmConn) startWrite(h *tcpwire.Header, plen uint64) *rdmRead {
	w := &c.rx.wr
	if !rmaWriteLen(h, plen) {
		c.unreserveWrite()
		c.protoFail("RMA write regions do not add up to its length")
		return nil
	}
	w.h = *h
	w.refused = c.regions(h, provider.FlagRemoteWrite, w.iov[:])
	rd := &c.rx.wrd
	*rd = rdmRead{wr: w, iov: w.iov[:h.NumRMA()], total: plen}
	switch {
	case w.refused == 0:
	case c.ext:
		rd.iov = nil // the payload is read and dropped
	default:
		c.unreserveWrite()
		c.protoFail("RMA write refused")
		return nil
	}
	return rd
}

// regions resolves the regions of an RMA frame into dst, each checked for
// access, or returns why one is refused.
func (c *rdmConn) regions(h *tcpwire.Header, access provider.Flags, dst [][]byte) provider.Errno {
	e := rmaResolve(c.ep.mr, h, access, dst)
	if e != 0 {
		logCM(provider.LevelInfo, "rdm: refused RMA access: "+e.Error(), c.addr)
	}
	return e
}

// rmaError answers a refused access of a peer of this implementation.
func (c *rdmConn) rmaError(op uint8, err provider.Errno) {
	h := tcpwire.Header{Op: tcpwire.OpMsg}
	h.SetPayload(rxmwire.HeaderSize)
	c.ctrlFrame(&h, &rxmwire.Header{Type: rxmwire.TypeGoRMAError, Op: op, Data: uint64(err)})
}

// rmaErrorReceived fails the operation a TypeGoRMAError answers: the
// oldest write waiting for its ACK, or the oldest read waiting for its
// response.
func (c *rdmConn) rmaErrorReceived(rh *rxmwire.Header) {
	err := provider.EIO
	if rh.Data > 0 && rh.Data < 4096 {
		err = provider.Errno(rh.Data)
	}
	switch {
	case !c.ext:
		c.protoFail("unsupported rxm message type")
	case rh.Op == tcpwire.OpWrite && len(c.acks) > 0 && c.acks[0].kind == txWrite:
		c.ep.finishTx(c.popAck(), err, true)
	case rh.Op == tcpwire.OpReadReq && len(c.rx.reads) > 0 && c.rx.reads[0].op != nil:
		rd := c.rx.reads[0]
		c.rx.reads[0] = nil
		c.rx.reads = c.rx.reads[1:]
		c.ep.finishTx(rd.op, err, true)
	default:
		c.protoFail("RMA error for no operation")
	}
}

// writeDone finishes an RMA write at the target: FI_RMA_EVENT counters,
// the remote CQ data completion, and the ACK the initiator waits for.
func (c *rdmConn) writeDone(rd *rdmRead) {
	ep := c.ep
	w := rd.wr
	h := &w.h
	if w.refused != 0 {
		c.unreserveWrite()
		c.rmaError(tcpwire.OpWrite, w.refused)
		w.refused = 0
		return
	}
	rmaServed(ep.mr, ep.cntrs[provider.CntrRemoteWrite], h, provider.FlagRemoteWrite)
	const fl = provider.FlagRMA | provider.FlagRemoteWrite | provider.FlagRemoteCQData
	switch {
	case w.res:
		w.res = false
		_ = ep.rxRes.WriteReserved(nil, fl, rd.total, nil, h.CQData, 0, ep.source(c))
	case h.HasCQData():
		_ = ep.rxCQ.Write(nil, fl, rd.total, nil, h.CQData, 0, ep.source(c))
	}
	if h.Flags&(tcpwire.FlagDeliveryComplete|tcpwire.FlagCommitComplete) != 0 {
		a := tcpwire.ACK()
		c.ctrlFrame(&a, nil)
	}
	clear(w.iov[:])
	rd.iov = nil
}

// serveRead answers a read request: a rendezvous read of the data of one
// of our rendezvous sends to this peer, or an RMA read of registered
// memory. Anything else drops the connection.
func (c *rdmConn) serveRead(h *tcpwire.Header) {
	ep := c.ep
	var parts [tcpwire.MaxRMAIOV][]byte
	var total uint64
	mrUsed := false
	for i := 0; i < int(h.RMACount); i++ {
		v := h.RMA[i]
		if t := ep.rndv[v.Key]; t != nil && t.kind == txRndv && t.conn == c {
			if v.Addr > uint64(len(t.data)) || v.Len > uint64(len(t.data))-v.Addr {
				c.protoFail("read request outside our rendezvous buffers")
				return
			}
			parts[i] = t.data[v.Addr : v.Addr+v.Len]
		} else {
			one := *h
			one.RMACount = 1
			one.RMA[0] = v
			if e := c.regions(&one, provider.FlagRemoteRead, parts[i:i+1]); e != 0 {
				if c.ext {
					c.rmaError(tcpwire.OpReadReq, e)
				} else {
					c.protoFail("RMA read refused")
				}
				return
			}
			mrUsed = true
		}
		total += v.Len
	}
	rsp := tcpwire.Header{Op: tcpwire.OpReadRsp}
	rsp.SetPayload(total)
	c.ctrlFrame(&rsp, nil, parts[:h.RMACount]...)
	if mrUsed {
		if ep.mr != nil {
			for i := 0; i < int(h.RMACount); i++ {
				if t := ep.rndv[h.RMA[i].Key]; t == nil || t.kind != txRndv || t.conn != c {
					ep.mr.Event(h.RMA[i].Key, provider.FlagRemoteRead)
				}
			}
		}
		if cn := ep.cntrs[provider.CntrRemoteRead]; cn != nil {
			cn.Inc()
		}
	}
}

// failRead ends a read that will never get its data: an RMA read
// completes in error, a rendezvous receive too (when report; its entry is
// freed either way).
func (c *rdmConn) failRead(rd *rdmRead, err provider.Errno, report bool) {
	ep := c.ep
	switch {
	case rd.pend != nil:
		c.failStream(rd)
	case rd.op != nil:
		ep.finishTx(rd.op, err, report)
	case rd.wr != nil:
		c.unreserveWrite()
	case rd.prefix != nil:
		c.prefixDone(rd) // shown with what arrived; a claim then fails
	case rd.discard || rd.e == nil:
	case report:
		ep.completeRxErr(rd.e, err)
	default:
		ep.rq.FreeEntry(rd.e)
	}
}

// failWaiting fails c's operations that wait for the peer: rendezvous
// sends and atomics (only those already sent when sentOnly), operations
// waiting for an ACK, reads waiting for their data and SAR messages being
// received.
func (c *rdmConn) failWaiting(err provider.Errno, report, sentOnly bool) {
	ep := c.ep
	for k, t := range ep.rndv {
		if t.conn == c && (t.sent || !sentOnly) {
			delete(ep.rndv, k)
			ep.finishTx(t, err, report)
		}
	}
	for k, t := range ep.amo {
		if t.conn == c && (t.sent || !sentOnly) {
			delete(ep.amo, k)
			ep.finishTx(t, err, report)
		}
	}
	acks := c.acks
	c.acks = nil
	for _, t := range acks {
		ep.finishTx(t, err, report)
	}
	reads := c.rx.reads
	if c.rx.direct != nil {
		reads = append(reads, c.rx.direct)
	}
	c.rx.reads, c.rx.direct = nil, nil
	for _, rd := range reads {
		c.failRead(rd, err, report)
	}
	c.failSAR(err, report)
}
