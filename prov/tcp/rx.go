package tcp

import (
	"math/bits"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Receive side: a state machine over the byte stream, driven by Progress
// (or the auto-progress goroutine) with non-blocking reads. Small reads go
// through a prefetch buffer that may hold several frames; large payloads
// are read straight into their destination (the posted receive, the
// registered memory of an RMA write, the buffers of a read).
//
// Messages are matched against the receive queue (the SRX owner) when
// their header has been read. With no posted receive the message is
// unexpected: up to ubufMax bytes (and ubufLimit per endpoint) it is read
// into a pooled buffer and queued with QueueMsg/QueueTag, so the stream
// goes on; larger messages, messages asking for delivery complete and
// messages beyond the limit are queued without their payload and the
// stream waits, as libfabric's does, until a receive matches them
// (StartMsg) or they are discarded (DiscardMsg).

// Receive states.
const (
	rxHdr       = iota // reading a frame header
	rxPayload          // reading (or dropping) a payload
	rxMatch            // a message header was read; matching it (retried while the queue is full)
	rxWaitStart        // an unexpected message was queued; the stream waits for StartMsg/DiscardMsg
	rxWaitCQ           // an RMA write with remote CQ data waits for room in the receive CQ (FI_RM_ENABLED)
	rxDead             // no more data will be read
)

type rxKind uint8

const (
	rkMsg     rxKind = iota // into a receive entry
	rkUnexp                 // into an unexpected-message buffer
	rkWrite                 // into registered memory (RMA write)
	rkRsp                   // into a read's buffers (read response)
	rkDiscard               // dropped
)

const (
	rbufSize  = 16 << 10 // prefetch buffer (larger payloads are mostly read in place)
	directMin = 2048     // payload reads at least this large go straight to the destination
	rxBudget  = 64       // frames per progress call

	ubufMinShift   = 6
	numUbufClasses = 11                                       // 64 B .. 64 KiB
	ubufMax        = 1 << (ubufMinShift + numUbufClasses - 1) // largest buffered unexpected message
	ubufLimit      = 8 << 20                                  // bytes of unexpected messages buffered per endpoint
)

// ubuf holds the payload of an unexpected message.
type ubuf struct {
	b     []byte
	n     int
	class int
}

type rxState struct {
	st        int
	rbuf      []byte
	rpos      int
	rend      int
	hbuf      [tcpwire.MaxHeaderSize]byte
	hn        int
	hneed     int
	h         tcpwire.Header
	plen      uint64 // payload length of the current frame
	left      uint64 // payload bytes still to read
	tgt       [][]byte
	tgtArr    [tcpwire.MaxRMAIOV][]byte
	ti        int
	toff      int
	placed    uint64
	kind      rxKind
	entry     *provider.RxEntry
	rop       *txOp
	ub        *ubuf
	ack       bool           // ACK the frame once its payload is placed
	cqRes     bool           // room for the frame's completion is reserved in the receive CQ
	rdN       int            // validated regions of a read request (in tgtArr)
	failFlags provider.Flags // flags of the error completion of a hostile frame
}

func (r *rxState) init() {
	r.rbuf = make([]byte, rbufSize)
	r.hneed = tcpwire.BaseHeaderSize
}

func (r *rxState) reset() {
	r.entry, r.rop, r.ub, r.tgt = nil, nil, nil, nil
	r.tgtArr = [tcpwire.MaxRMAIOV][]byte{}
	r.ti, r.toff, r.placed, r.ack, r.rdN = 0, 0, 0, false, 0
}

// cur returns the unfilled part of the current destination slice, or nil
// when the destination is full.
func (r *rxState) cur() []byte {
	for r.ti < len(r.tgt) {
		if b := r.tgt[r.ti]; r.toff < len(b) {
			return b[r.toff:]
		}
		r.ti++
		r.toff = 0
	}
	return nil
}

// place copies b into the destination; what does not fit is dropped.
func (r *rxState) place(b []byte) {
	for len(b) > 0 {
		dst := r.cur()
		if dst == nil {
			return
		}
		c := copy(dst, b)
		r.toff += c
		r.placed += uint64(c)
		b = b[c:]
	}
}

// progressRx processes frames until the socket has no more data, the
// budget is spent or the stream must wait. ep.mu is held.
func (ep *endpoint) progressRx() {
	r := &ep.rx
	for frames := 0; frames < rxBudget && ep.state == epConnected; {
		switch r.st {
		case rxHdr:
			if frames > 0 && r.hn == 0 && r.rpos == r.rend {
				// A frame was completed and nothing more is buffered:
				// return now and let the caller see the completion; the
				// next call reads the socket again. This saves a read
				// (that would usually find nothing) on the latency path.
				return
			}
			if !ep.readHeader() {
				return
			}
			ep.dispatch()
			if r.st == rxHdr {
				frames++
			}
		case rxPayload:
			if !ep.readPayload() {
				return
			}
			ep.finishPayload()
			frames++
		case rxMatch:
			if !ep.match() {
				return
			}
		case rxWaitStart:
			if !ep.takeStarted() {
				return
			}
		case rxWaitCQ:
			if !ep.rxRes.Reserve() {
				return
			}
			r.cqRes = true
			r.st = rxPayload
		default:
			return
		}
	}
}

// readOK handles the result of a read: false on EAGAIN, end of stream or
// an error (the last two end the connection).
func (ep *endpoint) readOK(n int, e provider.Errno) bool {
	switch {
	case e == provider.EAGAIN || e == provider.EINTR:
		return false
	case e != 0:
		ep.disconnect(e, 0, false)
		return false
	case n == 0:
		ep.disconnect(provider.ECONNRESET, 0, false)
		return false
	}
	return true
}

// fill reads into the empty prefetch buffer.
func (ep *endpoint) fill() bool {
	r := &ep.rx
	n, e := ep.conn.Read(r.rbuf)
	if !ep.readOK(n, e) {
		return false
	}
	r.rpos, r.rend = 0, n
	return true
}

// protoFail ends the connection after a malformed frame.
func (ep *endpoint) protoFail(err provider.Errno, flags provider.Flags) {
	ep.rx.failFlags = flags
	ep.disconnect(provider.ECONNABORTED, err, false)
}

func (ep *endpoint) readHeader() bool {
	r := &ep.rx
	for r.hn < r.hneed {
		if r.rpos == r.rend && !ep.fill() {
			return false
		}
		c := copy(r.hbuf[r.hn:r.hneed], r.rbuf[r.rpos:r.rend])
		r.hn += c
		r.rpos += c
		if r.hn == tcpwire.BaseHeaderSize && r.hneed == tcpwire.BaseHeaderSize {
			hs, err := tcpwire.PeekHeaderSize(r.hbuf[:tcpwire.BaseHeaderSize])
			if err != nil {
				ep.protoFail(provider.EIO, provider.FlagRecv|provider.FlagMsg)
				return false
			}
			r.hneed = hs
		}
	}
	err := tcpwire.ParseHeader(r.hbuf[:r.hneed], &r.h, ep.swap)
	r.hn, r.hneed = 0, tcpwire.BaseHeaderSize
	if err != nil {
		ep.protoFail(provider.EIO, provider.FlagRecv|provider.FlagMsg)
		return false
	}
	return true
}

// dispatch acts on a complete frame header.
func (ep *endpoint) dispatch() {
	r := &ep.rx
	h := &r.h
	r.reset()
	r.plen = h.PayloadLen()
	r.left = r.plen
	switch h.Op {
	case tcpwire.OpMsg, tcpwire.OpTagged:
		if h.IsACK() {
			if !ep.ackReceived() {
				ep.protoFail(provider.EIO, provider.FlagRecv|provider.FlagMsg)
			}
			return
		}
		r.ack = h.Flags&tcpwire.FlagDeliveryComplete != 0
		r.st = rxMatch
		ep.match()
	case tcpwire.OpWrite:
		ep.rxWrite()
	case tcpwire.OpReadReq:
		ep.rxReadReq()
	case tcpwire.OpReadRsp:
		ep.rxReadRsp()
	default:
		ep.protoFail(provider.EIO, provider.FlagRecv|provider.FlagMsg)
	}
}

// match looks up a receive for the message whose header was read. It
// returns false when the stream must wait (the queue holds as many
// unexpected messages as it may).
func (ep *endpoint) match() bool {
	r := &ep.rx
	h := &r.h
	q := ep.res.SRX
	if q == nil {
		ep.discardPayload()
		return true
	}
	var e *provider.RxEntry
	var err error
	if h.HasTag() {
		e, err = q.GetTag(provider.AddrNotAvail, r.plen, h.Tag)
	} else {
		e, err = q.GetMsg(provider.AddrNotAvail, r.plen)
	}
	switch {
	case err == nil && e != nil:
		ep.setEntry(e)
		return true
	case err == provider.ENOENT && e != nil:
	case err == provider.EAGAIN:
		return false
	default:
		// The queue is closed: drop the message.
		ep.discardPayload()
		return true
	}
	if h.HasCQData() {
		e.CQData = h.CQData
		e.Flags |= provider.FlagRemoteCQData
	}
	e.Peer = ep
	if !r.ack {
		if ub := ep.getUbuf(r.plen); ub != nil {
			r.entry, r.ub, r.kind = e, ub, rkUnexp
			r.tgtArr[0] = ub.b[:r.plen]
			r.tgt = r.tgtArr[:1]
			r.st = rxPayload
			return true
		}
	}
	if ep.buf.on {
		// FI_BUFFERED_RECV: read the start of the message first
		// (bufrecv.go), then wait in the stream.
		ep.readPrefix(e)
		return true
	}
	ep.waitInStream(e)
	return true
}

// waitInStream queues unexpected message e, whose payload (what is left
// of it) stays in the stream until a receive matches it.
func (ep *endpoint) waitInStream(e *provider.RxEntry) {
	r := &ep.rx
	h := &r.h
	q := ep.res.SRX
	var err error
	e.PeerContext = ep
	ep.umu.Lock()
	ep.bpEntry = e
	ep.umu.Unlock()
	r.st = rxWaitStart
	if h.HasTag() {
		err = q.QueueTag(e)
	} else {
		err = q.QueueMsg(e)
	}
	if err != nil {
		ep.umu.Lock()
		mine := ep.bpEntry == e
		if mine {
			ep.bpEntry = nil
		}
		ep.umu.Unlock()
		if mine {
			q.FreeEntry(e)
			ep.discardPayload()
		}
	}
}

func (ep *endpoint) setEntry(e *provider.RxEntry) {
	r := &ep.rx
	if r.h.HasCQData() {
		e.CQData = r.h.CQData
		e.Flags |= provider.FlagRemoteCQData
	}
	r.entry, r.kind = e, rkMsg
	r.tgt = e.IOV
	r.ti, r.toff, r.placed = 0, 0, 0
	r.st = rxPayload
}

func (ep *endpoint) discardPayload() {
	r := &ep.rx
	r.kind, r.tgt, r.entry = rkDiscard, nil, nil
	r.st = rxPayload
}

// takeStarted resumes the stream once the unexpected message it waits on
// was started or discarded by the receive queue.
func (ep *endpoint) takeStarted() bool {
	ep.umu.Lock()
	e, disc := ep.started, ep.startDiscard
	ep.started = nil
	ep.umu.Unlock()
	if e == nil {
		return false
	}
	e.PeerContext = nil
	pre := ep.takePrefix() // FI_BUFFERED_RECV: the start already read
	if disc {
		ep.res.SRX.FreeEntry(e)
		ep.discardPayload()
		return true
	}
	ep.setEntry(e)
	ep.rx.place(pre)
	return true
}

func (ep *endpoint) readPayload() bool {
	r := &ep.rx
	for r.left > 0 {
		if r.rpos < r.rend {
			c := r.rend - r.rpos
			if uint64(c) > r.left {
				c = int(r.left)
			}
			r.place(r.rbuf[r.rpos : r.rpos+c])
			r.rpos += c
			r.left -= uint64(c)
			continue
		}
		if dst := r.cur(); len(dst) >= directMin && r.left >= directMin {
			if uint64(len(dst)) > r.left {
				dst = dst[:r.left]
			}
			n, e := ep.conn.Read(dst)
			if !ep.readOK(n, e) {
				return false
			}
			r.toff += n
			r.placed += uint64(n)
			r.left -= uint64(n)
			continue
		}
		if !ep.fill() {
			return false
		}
	}
	return true
}

// finishPayload completes the frame whose payload was read.
func (ep *endpoint) finishPayload() {
	r := &ep.rx
	h := &r.h
	if r.kind == rkPrefix {
		ep.prefixRead()
		return
	}
	switch r.kind {
	case rkMsg:
		srx.Complete(ep.res.RxCQ, ep.res.Cntrs[provider.CntrRecv], r.entry, int(r.placed), r.plen-r.placed,
			provider.AddrNotAvail)
		ep.res.SRX.FreeEntry(r.entry)
	case rkUnexp:
		e, ub := r.entry, r.ub
		ub.n = int(r.placed)
		e.PeerContext = ub
		var err error
		if h.HasTag() {
			err = ep.res.SRX.QueueTag(e)
		} else {
			err = ep.res.SRX.QueueMsg(e)
		}
		if err != nil {
			ep.putUbuf(ub)
			ep.res.SRX.FreeEntry(e)
		}
	case rkWrite:
		rmaServed(ep.res.MR, ep.res.Cntrs[provider.CntrRemoteWrite], h, provider.FlagRemoteWrite)
		const fl = provider.FlagRMA | provider.FlagRemoteWrite | provider.FlagRemoteCQData
		switch {
		case r.cqRes:
			r.cqRes = false
			_ = ep.rxRes.WriteReserved(nil, fl, r.plen, nil, h.CQData, 0, provider.AddrNotAvail)
		case h.HasCQData() && ep.res.RxCQ != nil:
			_ = ep.res.RxCQ.Write(nil, fl, r.plen, nil, h.CQData, 0, provider.AddrNotAvail)
		}
	case rkRsp:
		r.rop.done = true
	}
	if r.ack {
		ep.tx.acks++
	}
	r.reset()
	r.st = rxHdr
}

// rmaRegions validates the RMA regions of the current header against the
// domain's registrations into r.tgtArr.
func (ep *endpoint) rmaRegions(access provider.Flags) bool {
	r := &ep.rx
	if e := rmaResolve(ep.res.MR, &r.h, access, r.tgtArr[:]); e != 0 {
		ep.protoFail(e, provider.FlagRMA|access)
		return false
	}
	return true
}

func (ep *endpoint) rxWrite() {
	r := &ep.rx
	h := &r.h
	if !rmaWriteLen(h, r.plen) {
		ep.protoFail(provider.EIO, provider.FlagRMA|provider.FlagRemoteWrite)
		return
	}
	if !ep.rmaRegions(provider.FlagRemoteWrite) {
		return
	}
	r.tgt = r.tgtArr[:h.NumRMA()]
	r.kind = rkWrite
	r.ack = h.Flags&(tcpwire.FlagDeliveryComplete|tcpwire.FlagCommitComplete) != 0
	r.st = rxPayload
	if h.HasCQData() && ep.rxRes != nil {
		// FI_RM_ENABLED: the remote CQ data needs room in the receive CQ;
		// without it the write stays in the stream (fi_domain(3) "Target
		// EP: retried") until the application reads the CQ.
		if ep.rxRes.Reserve() {
			r.cqRes = true
		} else {
			r.st = rxWaitCQ
		}
	}
}

func (ep *endpoint) rxReadReq() {
	r := &ep.rx
	if r.plen != 0 {
		ep.protoFail(provider.EIO, provider.FlagRMA|provider.FlagRemoteRead)
		return
	}
	if !ep.rmaRegions(provider.FlagRemoteRead) {
		return
	}
	r.rdN = r.h.NumRMA()
	ep.queueRsp()
}

// queueRsp queues the read response for the validated read request.
func (ep *endpoint) queueRsp() {
	r := &ep.rx
	t := &ep.tx
	op := t.allocCtrl()
	op.kind = kRsp
	op.h = tcpwire.Header{Op: tcpwire.OpReadRsp, RMACount: r.h.RMACount}
	n := 0
	for i := 0; i < r.rdN; i++ {
		op.iov[i] = r.tgtArr[i]
		n += len(r.tgtArr[i])
	}
	op.niov, op.plen = r.rdN, n
	op.h.SetPayload(uint64(n))
	op.encode(ep.swap)
	t.pushRsp(op)
	rmaServed(ep.res.MR, ep.res.Cntrs[provider.CntrRemoteRead], &r.h, provider.FlagRemoteRead)
	r.reset()
	r.st = rxHdr
}

func (ep *endpoint) rxReadRsp() {
	r := &ep.rx
	op := ep.oldestRead()
	if op == nil || r.plen != uint64(op.plen) {
		ep.protoFail(provider.EIO, provider.FlagRMA|provider.FlagRead)
		return
	}
	r.rop, r.kind = op, rkRsp
	r.tgt = op.iov[:op.niov]
	r.st = rxPayload
}

// failRx stops the receive side: a receive in progress completes with err
// (it reports whether one did), and messages queued as unexpected without
// their payload will complete with err when started. ep.mu is held.
func (ep *endpoint) failRx(err provider.Errno) bool {
	r := &ep.rx
	reported := false
	if r.cqRes {
		// The write never completes: its room goes back.
		r.cqRes = false
		ep.rxRes.Unreserve()
	}
	if r.st == rxPayload {
		switch r.kind {
		case rkMsg:
			srx.CompleteErr(ep.res.RxCQ, ep.res.Cntrs[provider.CntrRecv], r.entry, err, provider.AddrNotAvail)
			ep.res.SRX.FreeEntry(r.entry)
			reported = true
		case rkUnexp, rkPrefix:
			ep.putUbuf(r.ub)
			ep.res.SRX.FreeEntry(r.entry)
		}
	}
	r.reset()
	r.st = rxDead
	ep.umu.Lock()
	ep.rxDeadErr = err
	e, disc := ep.started, ep.startDiscard
	ep.started = nil
	ep.umu.Unlock()
	if e != nil {
		e.PeerContext = nil
		if !disc {
			srx.CompleteErr(ep.res.RxCQ, ep.res.Cntrs[provider.CntrRecv], e, err, provider.AddrNotAvail)
		}
		ep.res.SRX.FreeEntry(e)
	}
	return reported
}

func ubufClass(n uint64) int {
	if n <= 1<<ubufMinShift {
		return 0
	}
	return bits.Len64(n-1) - ubufMinShift
}

// getUbuf returns a buffer for an unexpected message of n bytes, or nil
// when n is too large or the endpoint buffers as much as it may.
func (ep *endpoint) getUbuf(n uint64) *ubuf {
	if n > ubufMax {
		return nil
	}
	c := ubufClass(n)
	size := 1 << (c + ubufMinShift)
	ep.umu.Lock()
	defer ep.umu.Unlock()
	if ep.ubufBytes+size > ubufLimit {
		return nil
	}
	ep.ubufBytes += size
	if k := len(ep.ubufFree[c]); k > 0 {
		u := ep.ubufFree[c][k-1]
		ep.ubufFree[c] = ep.ubufFree[c][:k-1]
		return u
	}
	return &ubuf{b: make([]byte, size), class: c}
}

func (ep *endpoint) putUbuf(u *ubuf) {
	if u == nil {
		return
	}
	u.n = 0
	ep.umu.Lock()
	ep.ubufBytes -= len(u.b)
	ep.ubufFree[u.class] = append(ep.ubufFree[u.class], u)
	ep.umu.Unlock()
}
