package tcp

import (
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Transmit side of RDM endpoints. Every operation becomes one frame queued
// on its peer's connection (in posting order per peer) and written when the
// connection is up. Eager messages complete when their frame is written, as
// in rxm; rendezvous sends when the peer's read-done arrives. Control
// frames (read requests, read responses, read-done, ACKs) are queued like
// operations but complete nothing.

type txKind uint8

const (
	txEager  txKind = iota
	txRndv          // waits for the peer's read-done
	txCtrl          // control frame: completes nothing
	txWrite         // RMA write (rdm_rma.go)
	txRead          // RMA read (rdm_rma.go)
	txAtomic        // atomic request (rdm_atomic.go)
)

// rdmHdrMax is the largest frame header of an RDM frame: a tcp header with
// CQ data, tag or RMA iovs, then an rxm header and a rendezvous descriptor.
const rdmHdrMax = tcpwire.MaxHeaderSize + rxmwire.HeaderSize + rxmwire.RndvSize + rxmwire.GoCMASize

type rdmTx struct {
	kind     txKind
	hdr      [rdmHdrMax]byte
	vec      [2 + IOVLimit][]byte // what is written: the header, then payload slices
	nvec     int
	total    int // bytes to write
	off      int // bytes written
	sent     bool
	stream   bool // a streamed message (rdm_stream.go)
	ctx      any
	flags    provider.Flags // completion flags
	comp     bool           // write a successful completion
	reserved bool           // room in the TX CQ is reserved
	counted  bool           // counts against tx_attr.size
	key      uint64         // rendezvous: the key the peer reads with (and msg_id)
	data     []byte         // rendezvous: the message, contiguous
	conn     *rdmConn
	buf      []byte // eager frame storage, kept when the rdmTx is reused
	cntr     int    // index of the counter the operation bumps (provider.CntrSend ...)
	fence    bool   // FI_FENCE: written once everything before it has completed
	ack      bool   // completes when the peer's ACK arrives (delivery complete)
	rd       *rdmRead
	res      [][]byte // atomic: where the fetched values go
	resArr   [IOVLimit][]byte
	rdBuf    rdmRead // RMA read: its read (t.rd), kept with the descriptor
	rdIOV    [IOVLimit][]byte
}

// rdmTxPoolMax bounds the free list of transmit descriptors.
const rdmTxPoolMax = 256

// getTx returns a cleared transmit descriptor. ep.mu is held.
func (ep *rdmEP) getTx() *rdmTx {
	if n := len(ep.txFree); n > 0 {
		t := ep.txFree[n-1]
		ep.txFree[n-1] = nil
		ep.txFree = ep.txFree[:n-1]
		b := t.buf
		*t = rdmTx{buf: b[:0]}
		return t
	}
	return &rdmTx{}
}

// putTx recycles a descriptor nothing refers to any more. ep.mu is held.
func (ep *rdmEP) putTx(t *rdmTx) {
	if len(ep.txFree) < rdmTxPoolMax {
		t.ctx, t.data, t.conn, t.rd, t.res = nil, nil, nil, nil, nil
		clear(t.vec[:])
		clear(t.resArr[:])
		clear(t.rdIOV[:])
		t.rdBuf = rdmRead{}
		ep.txFree = append(ep.txFree, t)
	}
}

func (t *rdmTx) add(b []byte) {
	if len(b) == 0 {
		return
	}
	t.vec[t.nvec] = b
	t.nvec++
	t.total += len(b)
}

// rdmTxQueue is a connection's queue of frames to write.
type rdmTxQueue struct {
	q     []*rdmTx
	iov   [][]byte
	head0 int
	// lazy counts the frames at the tail that may wait for the next
	// write instead of one of their own: read-done messages, which go out
	// with the next frame (in a ping-pong, the reply's rendezvous request)
	// or at the start of the next progress call; under manual progress,
	// the control goroutine writes them within a millisecond if the
	// application makes no call (the sender's send completes on them).
	lazy int
}

func (q *rdmTxQueue) len() int { return len(q.q) - q.head0 }

func (q *rdmTxQueue) head() *rdmTx {
	if q.len() == 0 {
		return nil
	}
	return q.q[q.head0]
}

func (q *rdmTxQueue) push(t *rdmTx) { q.q = append(q.q, t) }

// pushFront moves t, the frame last pushed, to the head of the queue,
// before the frames queued when no byte of them has been written yet (a
// new connection's stream).
func (q *rdmTxQueue) pushFront(t *rdmTx) {
	n := len(q.q) - 1
	if n < q.head0 || q.q[n] != t {
		return
	}
	copy(q.q[q.head0+1:], q.q[q.head0:n])
	q.q[q.head0] = t
}

func (q *rdmTxQueue) pop() {
	q.q[q.head0] = nil
	q.head0++
	if q.head0 == len(q.q) {
		q.q, q.head0 = q.q[:0], 0
	}
}

// drain empties the queue and returns what was in it.
func (q *rdmTxQueue) drain() []*rdmTx {
	out := append([]*rdmTx(nil), q.q[q.head0:]...)
	clear(q.q)
	q.q, q.head0 = q.q[:0], 0
	return out
}

// dropCtrl removes the control frames (they belonged to the old stream)
// and returns them.
func (q *rdmTxQueue) dropCtrl() []*rdmTx {
	var dropped []*rdmTx
	k := 0
	for _, t := range q.q[q.head0:] {
		if t.kind != txCtrl {
			q.q[k] = t
			k++
		} else {
			dropped = append(dropped, t)
		}
	}
	clear(q.q[k:])
	q.q, q.head0 = q.q[:k], 0
	return dropped
}

// Send transmits an untagged message to m.Addr (send, sendv, sendmsg,
// senddata, inject).
func (ep *rdmEP) Send(m provider.Msg) error { return ep.post(&m, false) }

// TSend transmits a tagged message.
func (ep *rdmEP) TSend(m provider.Msg) error { return ep.post(&m, true) }

func (ep *rdmEP) post(m *provider.Msg, tagged bool) error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch ep.state {
	case rdmClosed:
		return provider.EBADF
	case rdmOpen:
		return provider.EOPBADSTATE
	}
	dest := ep.av.Lookup(m.Addr)
	if dest == nil {
		return provider.EINVAL
	}
	if n := m.Len(); n <= rxmwire.EagerLimit && m.Flags&(provider.FlagFence|provider.FlagDeliveryComplete) == 0 &&
		ep.credits == nil && ep.queued < ep.txSize {
		if c := ep.peer(dest); c != nil && c.state == connUp && c.tx.len() == 0 && len(c.out) == 0 && !c.eof {
			return ep.sendNow(c, m, n, tagged)
		}
	}
	if !ep.takeRoom() {
		return provider.EAGAIN
	}
	t := ep.getTx()
	t.ctx, t.comp, t.counted = m.Context, m.Flags&provider.FlagCompletion != 0, true
	t.fence = m.Flags&provider.FlagFence != 0
	t.flags = provider.FlagSend | provider.FlagMsg
	if tagged {
		t.flags = provider.FlagSend | provider.FlagTagged
	}
	if ep.txRes != nil && m.Flags&(provider.FlagInject|provider.FlagCompletion) != provider.FlagInject {
		if !ep.txRes.Reserve() {
			ep.giveCredit()
			ep.putTx(t)
			return provider.EAGAIN
		}
		t.reserved = true
	}
	c, err := ep.conn(dest)
	if err != nil {
		if t.reserved {
			ep.txRes.Unreserve()
		}
		ep.giveCredit()
		ep.putTx(t)
		return err
	}
	t.conn = c
	n := m.Len()
	hasData := m.Flags&provider.FlagRemoteCQData != 0
	switch {
	case n <= rxmwire.EagerLimit:
		// The frame owns a copy of the payload (inject or not).
		ep.buildEager(t, m, n, tagged, hasData, c)
	case ep.useCMA(c, n):
		ep.buildRndv(t, m, n, tagged, hasData, c, true)
	case c.ext && n <= ep.streamLimit && len(m.IOV) <= IOVLimit:
		ep.buildStream(t, m, n, tagged, hasData, c)
	case n <= ep.sarLimit:
		ep.buildSAR(t, m, n, tagged, hasData, c)
	default:
		ep.buildRndv(t, m, n, tagged, hasData, c, false)
	}
	ep.enqueue(c, t)
	return nil
}

// rdmCopyMax is the largest payload sendNow copies after its header (one
// send(2)); a larger one is written from the caller's buffers
// (sendmsg(2) of the header and the payload).
const rdmCopyMax = 1024

// sendNow writes an eager message to c, which is up with nothing queued,
// from the caller's call: its headers (and a payload of up to rdmCopyMax
// bytes) are encoded into the endpoint's scratch buffer, and the message
// completes at once when the socket takes the whole frame. What the socket
// does not take becomes a queued frame with a copy of the rest, as post
// makes (no FI_FENCE, no delivery complete, no shared transmit context
// here). ep.mu is held.
func (ep *rdmEP) sendNow(c *rdmConn, m *provider.Msg, n int, tagged bool) error {
	var res provider.CQReserver
	if ep.txRes != nil && m.Flags&(provider.FlagInject|provider.FlagCompletion) != provider.FlagInject {
		if !ep.txRes.Reserve() {
			return provider.EAGAIN
		}
		res = ep.txRes
	}
	c.used()
	hasData := m.Flags&provider.FlagRemoteCQData != 0
	if ep.nowBuf == nil {
		ep.nowBuf = make([]byte, rdmEagerHdrMax+rdmCopyMax)
	}
	hl, _ := ep.eagerHeader(ep.nowBuf[:rdmEagerHdrMax], m, n, tagged, hasData, c)
	total := hl + n
	var w int
	var e provider.Errno
	if n <= rdmCopyMax {
		frame := ep.nowBuf[:total]
		copyPayload(frame[hl:], m)
		w, e = c.sock.Write(frame)
	} else {
		iov := append(ep.nowIOV[:0], ep.nowBuf[:hl])
		if m.IOV == nil {
			iov = append(iov, m.Buf)
		} else {
			for _, b := range m.IOV {
				if len(b) > 0 {
					iov = append(iov, b)
				}
			}
		}
		w, e = c.sock.Writev(iov)
		clear(iov)
		ep.nowIOV = iov[:0]
	}
	flags := provider.FlagSend | provider.FlagMsg
	if tagged {
		flags = provider.FlagSend | provider.FlagTagged
	}
	comp := m.Flags&provider.FlagCompletion != 0
	if e == 0 && w == total {
		ep.nowSent++
		if cn := ep.cntrs[provider.CntrSend]; cn != nil {
			cn.Inc()
		}
		switch {
		case comp && res != nil:
			_ = res.WriteReserved(m.Context, flags, 0, nil, 0, 0, provider.AddrNotAvail)
		case comp:
			_ = ep.txCQ.Write(m.Context, flags, 0, nil, 0, 0, provider.AddrNotAvail)
		case res != nil:
			res.Unreserve()
		}
		return nil
	}
	if e != 0 {
		w = 0
	}
	t := ep.getTx()
	t.ctx, t.comp, t.counted, t.flags = m.Context, comp, true, flags
	t.reserved = res != nil
	t.conn = c
	if n <= rdmCopyMax {
		t.kind = txEager
		t.buf = append(t.buf[:0], ep.nowBuf[:total]...)
		t.add(t.buf)
	} else {
		ep.buildEager(t, m, n, tagged, hasData, c) // the same frame again, in t's own buffer
	}
	t.off = w
	ep.nowQueued++
	ep.queued++
	c.tx.push(t)
	ep.noteWork(c)
	if e != 0 && e != provider.EAGAIN && e != provider.EINTR {
		c.fail(e, true)
	}
	return nil
}

// takeRoom reports whether one more operation may be posted: fewer than
// tx_attr.size are outstanding and, on a shared transmit context, one of
// its credits is taken (given back by finishTx, or by giveCredit if the
// post fails); progress runs once before it says no. ep.mu is held.
func (ep *rdmEP) takeRoom() bool {
	for try := 0; ; try++ {
		if ep.queued < ep.txSize && (ep.credits == nil || ep.credits.Take()) {
			return true
		}
		if try > 0 {
			return false
		}
		ep.progressLocked()
	}
}

// giveCredit gives back the shared transmit context's credit of an
// operation that ended or was not posted after all.
func (ep *rdmEP) giveCredit() {
	if ep.credits != nil {
		ep.credits.Give()
	}
}

// enqueue queues an operation on its connection and writes what the
// socket takes now. ep.mu is held.
func (ep *rdmEP) enqueue(c *rdmConn, t *rdmTx) {
	ep.queued++
	c.tx.push(t)
	if c.state == connUp && len(c.out) == 0 {
		c.flush()
	}
	ep.noteWork(c)
}

// buildEager encodes an eager message with a copy of its payload: a tagged
// message as a tcp frame with the tag word and no rxm header (as rxm over
// tcp sends it), an untagged one with the rxm header.
func (ep *rdmEP) buildEager(t *rdmTx, m *provider.Msg, n int, tagged, hasData bool, c *rdmConn) {
	t.kind = txEager
	if cap(t.buf) < rdmEagerHdrMax+n {
		t.buf = make([]byte, rdmEagerHdrMax+n, max(rdmEagerHdrMax+n, 256))
	}
	hl, ack := ep.eagerHeader(t.buf[:rdmEagerHdrMax], m, n, tagged, hasData, c)
	t.ack = ack
	buf := t.buf[:hl+n]
	copyPayload(buf[hl:], m)
	t.add(buf)
}

// rdmEagerHdrMax is the largest header of an eager frame: a tcp header
// with tag and CQ data, or a plain one and an rxm header.
const rdmEagerHdrMax = tcpwire.MaxHeaderSize + rxmwire.HeaderSize

// eagerHeader encodes the headers of an eager message of n bytes into dst
// (rdmEagerHdrMax bytes) and returns their length, and whether the frame
// asks the peer for an ACK (FI_DELIVERY_COMPLETE).
func (ep *rdmEP) eagerHeader(dst []byte, m *provider.Msg, n int, tagged, hasData bool, c *rdmConn) (hl int, ack bool) {
	var h tcpwire.Header
	h.Op = tcpwire.OpMsg
	if m.Flags&provider.FlagDeliveryComplete != 0 {
		// FI_DELIVERY_COMPLETE: the peer's tcp layer ACKs the frame once
		// the message is placed or buffered. (rxm forwards no completion
		// level, so a C peer's messages never ask for it; FI_TRANSMIT_COMPLETE
		// completes once the frame is written, as in rxm.)
		h.Flags = tcpwire.FlagDeliveryComplete
		ack = true
	}
	if tagged && ep.dynRbuf {
		h.Flags |= tcpwire.FlagTagged
		h.Tag = m.Tag
		if hasData {
			h.Flags |= tcpwire.FlagCQData
			h.CQData = m.Data
		}
		h.SetPayload(uint64(n))
		return tcpwire.PutHeader(dst, &h, false), ack
	}
	rh := rxmwire.Header{Type: rxmwire.TypeEager, ConnID: uint64(c.remoteIndex), Op: rxmwire.OpMsg, Size: uint64(n)}
	if tagged {
		rh.Op, rh.Tag = rxmwire.OpTagged, m.Tag
	}
	if hasData {
		rh.Flags = rxmwire.FlagRemoteCQData
		rh.Data = m.Data
	}
	h.SetPayload(uint64(rxmwire.HeaderSize + n))
	hl = tcpwire.PutHeader(dst, &h, false)
	rh.Put(dst[hl:])
	return hl + rxmwire.HeaderSize, ack
}

// copyPayload copies m's data (Buf or IOV) to dst.
func copyPayload(dst []byte, m *provider.Msg) {
	if m.IOV == nil {
		copy(dst, m.Buf)
		return
	}
	off := 0
	for _, b := range m.IOV {
		off += copy(dst[off:], b)
	}
}

// buildRndv encodes a rendezvous request; the data stays in the
// application's buffer (copied when it is scattered) until the peer has
// read it. With cma, the request also says where the data is in our
// memory (rdm_cma.go).
func (ep *rdmEP) buildRndv(t *rdmTx, m *provider.Msg, n int, tagged, hasData bool, c *rdmConn, cma bool) {
	t.kind = txRndv
	if m.IOV == nil {
		t.data = m.Buf
	} else if len(m.IOV) == 1 {
		t.data = m.IOV[0]
	} else {
		t.data = make([]byte, 0, n)
		for _, b := range m.IOV {
			t.data = append(t.data, b...)
		}
	}
	ep.nextKey++
	t.key = rxmwire.KeyBase | ep.nextKey
	ep.rndv[t.key] = t
	var h tcpwire.Header
	h.Op = tcpwire.OpMsg
	typ := uint8(rxmwire.TypeRndvReq)
	if cma {
		typ = rxmwire.TypeGoCMAReq
		h.SetPayload(rxmwire.HeaderSize + rxmwire.RndvSize + rxmwire.GoCMASize)
	} else {
		h.SetPayload(rxmwire.HeaderSize + rxmwire.RndvSize)
	}
	hl := tcpwire.PutHeader(t.hdr[:], &h, false)
	rh := rxmwire.Header{Type: typ, ConnID: uint64(c.remoteIndex), MsgID: t.key,
		Op: rxmwire.OpMsg, Size: uint64(n)}
	if tagged {
		rh.Op = rxmwire.OpTagged
		rh.Tag = m.Tag
	}
	if hasData {
		rh.Flags = rxmwire.FlagRemoteCQData
		rh.Data = m.Data
	}
	rh.Put(t.hdr[hl:])
	hl += rxmwire.HeaderSize
	r := rxmwire.Rndv{Count: 1}
	r.IOV[0] = rxmwire.RndvIOV{Addr: 0, Len: uint64(n), Key: t.key}
	r.Put(t.hdr[hl:])
	hl += rxmwire.RndvSize
	if cma {
		a := sys.IOVOf(t.data)
		g := rxmwire.GoCMA{ProofAddr: c.cmaProofAddr(), Base: a.Base, Len: a.Len}
		g.Put(t.hdr[hl:])
		hl += rxmwire.GoCMASize
	}
	t.add(t.hdr[:hl])
}

// ctrlFrame queues a control frame: the tcp header h (Size set by the
// caller), an optional rxm header, and payload slices. ep.mu is held.
func (c *rdmConn) ctrlFrame(h *tcpwire.Header, rh *rxmwire.Header, payload ...[]byte) *rdmTx {
	t := c.ep.getTx()
	t.kind, t.conn = txCtrl, c
	hl := tcpwire.PutHeader(t.hdr[:], h, false)
	if rh != nil {
		rh.ConnID = uint64(c.remoteIndex)
		rh.Put(t.hdr[hl:])
		hl += rxmwire.HeaderSize
	}
	t.add(t.hdr[:hl])
	for _, p := range payload {
		t.add(p)
	}
	c.tx.push(t)
	c.ep.noteWork(c)
	return t
}

// flush writes queued frames until the socket is full. ep.mu is held.
func (c *rdmConn) flush() {
	c.tx.lazy = 0
	for c.state == connUp && c.tx.len() > 0 {
		if c.eof && c.tx.head().off == 0 {
			return // the peer closed: only a half-written frame is finished (eofWrite)
		}
		iov := c.tx.iov[:0]
		// Gather as many slices as one sendmsg takes (sys.MaxIOV; more is
		// EINVAL), possibly ending inside a frame (what is written is
		// accounted in bytes), up to a fenced operation that must wait for
		// everything before it.
		skip, want := c.tx.head().off, 0
		c.fenced = false
	gather:
		for i := c.tx.head0; i < len(c.tx.q) && (!c.eof || i == c.tx.head0); i++ {
			t := c.tx.q[i]
			if t.fence && t.off == 0 && (i > c.tx.head0 || c.busy()) {
				c.fenced = i == c.tx.head0
				break
			}
			for _, b := range t.vec[:t.nvec] {
				if skip >= len(b) {
					skip -= len(b)
					continue
				}
				if len(iov) == sys.MaxIOV {
					break gather
				}
				iov = append(iov, b[skip:])
				want += len(b) - skip
				skip = 0
			}
		}
		c.tx.iov = iov[:0]
		if len(iov) == 0 {
			return
		}
		var n int
		var e provider.Errno
		if len(iov) == 1 {
			n, e = c.sock.Write(iov[0]) // send(2): a little cheaper than sendmsg(2)
		} else {
			n, e = c.sock.Writev(iov)
		}
		clear(iov)
		if e == provider.EAGAIN || e == provider.EINTR {
			return
		}
		if e != 0 {
			c.fail(e, true)
			return
		}
		full := n < want
		for n > 0 {
			t := c.tx.head()
			adv := min(n, t.total-t.off)
			t.off += adv
			n -= adv
			if t.off == t.total {
				c.tx.pop()
				c.ep.written(c, t)
				if t.kind == txCtrl {
					c.ep.putTx(t)
				}
			}
		}
		if full {
			return // partial write: the socket is full
		}
	}
}

// written handles a frame that is on the wire: a read request's response
// is now the next one expected (responses come in request order); an
// operation that waits for the peer's ACK joins the ACK queue; an eager
// message is complete.
func (ep *rdmEP) written(c *rdmConn, t *rdmTx) {
	t.sent = true
	if t.rd != nil {
		c.rx.reads = append(c.rx.reads, t.rd)
		t.rd = nil
	}
	switch {
	case t.ack:
		c.acks = append(c.acks, t)
	case t.kind == txEager:
		ep.finishTx(t, 0, true)
	}
}

// finishTx completes an operation: a successful completion when err is 0
// and one was asked for, else an error completion (when report).
func (ep *rdmEP) finishTx(t *rdmTx, err provider.Errno, report bool) {
	if t.kind == txCtrl {
		return
	}
	if t.counted {
		t.counted = false
		ep.queued--
		ep.giveCredit()
	}
	var res provider.CQReserver
	if t.reserved {
		res = ep.txRes
		t.reserved = false
	}
	defer ep.putTx(t)
	// Counters before the CQ: whoever read the completion sees the
	// counter include it.
	cn := ep.cntrs[t.cntr]
	if err == 0 {
		if cn != nil {
			cn.Inc()
		}
		switch {
		case t.comp && res != nil:
			_ = res.WriteReserved(t.ctx, t.flags, 0, nil, 0, 0, provider.AddrNotAvail)
		case t.comp:
			_ = ep.txCQ.Write(t.ctx, t.flags, 0, nil, 0, 0, provider.AddrNotAvail)
		case res != nil:
			res.Unreserve()
		}
		return
	}
	if !report {
		if res != nil {
			res.Unreserve()
		}
		return
	}
	if cn != nil {
		cn.IncErr()
	}
	ee := provider.CQErrEntry{OpContext: t.ctx, Flags: t.flags, Err: err, ProvErrno: int(err), Src: provider.AddrNotAvail}
	if res != nil {
		_ = res.WriteErrReserved(&ee)
	} else {
		_ = ep.txCQ.WriteErr(&ee)
	}
}
