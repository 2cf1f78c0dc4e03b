package tcp

import (
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Transmit side. Operations are kept in posting order in a ring (pend)
// until they complete, so completions are written in posting order
// (comp_order FI_ORDER_STRICT). Frames are written from the ring in the
// same order, except that ACKs and read responses (control frames) go
// ahead of application frames at frame boundaries, as in libfabric. An
// operation completes when its frame is written, or, with
// FI_DELIVERY_COMPLETE / FI_TRANSMIT_COMPLETE (sent as the delivery
// complete flag, which the peer ACKs), when its ACK arrives; a read
// completes when its response has been received.

type opKind uint8

const (
	kMsg opKind = iota
	kTagged
	kWrite
	kRead
	kRsp // read response (control frame)
	kAck // ACK (control frame)
)

const (
	waitNone = iota
	waitAck
	waitRsp
)

// wqCap is the number of frames gathered into one writev.
const wqCap = 16

// numCtrl is the number of control frames (ACKs, read responses)
// preallocated per endpoint. Beyond it more are allocated (and kept): the
// receive side never stops reading for lack of one, since two endpoints
// reading each other's memory could otherwise wait on each other forever.
const numCtrl = 64

type txOp struct {
	kind     opKind
	wait     uint8
	written  bool // the frame is on the wire (waiting for an ACK or response)
	done     bool
	fence    bool
	complete bool // write a successful completion
	reserved bool // room for the completion is reserved in the TX CQ (FI_RM_ENABLED)
	err      provider.Errno
	h        tcpwire.Header
	fb       [tcpwire.MaxHeaderSize + InjectSize]byte // the header, then the payload when it is small
	hlen     int                                      // header bytes in fb
	flen     int                                      // contiguous frame bytes in fb (header + inlined payload)
	iov      [IOVLimit][]byte                         // payload (msg, write, response) or destination (read)
	niov     int
	plen     int // payload bytes sent (read: bytes expected back)
	sent     int // frame bytes written
	ctx      any
	flags    provider.Flags // completion flags
	cntr     int            // counter index
	inj      [InjectSize]byte
	next     *txOp
}

// total is the frame length: header plus payload (a read request has no
// payload; plen is what its response brings).
func (op *txOp) total() int {
	if op.kind == kRead {
		return op.hlen
	}
	return op.hlen + op.plen
}

type txState struct {
	// credits: on a shared transmit context, its queue; every operation
	// from alloc to its end (giveCredit) holds one (provider.TxCredits).
	credits provider.TxCredits
	cap     int
	ops     []txOp
	free    *txOp
	pend    []*txOp // ring of posted operations, posting order
	head    uint64  // oldest not completed
	wr      uint64  // next to write
	tail    uint64  // next free slot
	wq      [wqCap]*txOp
	wqHead  int
	wqLen   int
	ctrl    [numCtrl]txOp
	cfree   *txOp
	rspq    []*txOp // read responses to write, in order (from rspHead)
	rspHead int
	acks    int  // ACKs owed to the peer
	blocked bool // the last write would have blocked
}

func (t *txState) init(n int) {
	t.cap = n
	t.ops = make([]txOp, n)
	t.pend = make([]*txOp, n)
	for i := range t.ops {
		t.ops[i].next = t.free
		t.free = &t.ops[i]
	}
	for i := range t.ctrl {
		t.ctrl[i].next = t.cfree
		t.cfree = &t.ctrl[i]
	}
}

func (t *txState) outstanding() int { return int(t.tail - t.head) }

func (t *txState) at(i uint64) *txOp { return t.pend[i%uint64(len(t.pend))] }

func (t *txState) alloc() *txOp {
	op := t.free
	if op == nil || t.credits != nil && !t.credits.Take() {
		return nil
	}
	t.free = op.next
	op.next = nil
	return op
}

func (t *txState) release(op *txOp) {
	*op = txOp{next: t.free}
	t.free = op
}

// giveCredit gives back the shared transmit context's credit of an
// operation that ends, before its completion is written (whoever reads
// it may post at once).
func (t *txState) giveCredit() {
	if t.credits != nil {
		t.credits.Give()
	}
}

func (t *txState) allocCtrl() *txOp {
	op := t.cfree
	if op == nil {
		return new(txOp)
	}
	t.cfree = op.next
	op.next = nil
	return op
}

func (t *txState) pushRsp(op *txOp) { t.rspq = append(t.rspq, op) }

func (t *txState) popRsp() *txOp {
	op := t.rspq[t.rspHead]
	t.rspq[t.rspHead] = nil
	t.rspHead++
	if t.rspHead == len(t.rspq) {
		t.rspq, t.rspHead = t.rspq[:0], 0
	}
	return op
}

func (t *txState) releaseCtrl(op *txOp) {
	*op = txOp{next: t.cfree}
	t.cfree = op
}

// Send transmits a message (send, sendv, sendmsg, senddata, inject).
func (ep *endpoint) Send(m provider.Msg) error { return ep.post(&m, kMsg) }

// TSend transmits a tagged message (libfabric's op 1 frame, matched by the
// peer's receive queue).
func (ep *endpoint) TSend(m provider.Msg) error { return ep.post(&m, kTagged) }

// Write writes to remote memory (write, writev, writemsg, writedata,
// inject_write).
func (ep *endpoint) Write(m provider.Msg) error { return ep.post(&m, kWrite) }

// Read reads remote memory (read, readv, readmsg).
func (ep *endpoint) Read(m provider.Msg) error { return ep.post(&m, kRead) }

// post queues an operation and writes what the socket takes now. The
// caller's buffers are used in place until the completion (copied for
// FI_INJECT).
//
// The root package has validated m against the endpoint's attributes
// (provider package documentation, "What the root package guarantees"),
// which newEndpoint holds to the provider's limits: at most IOVLimit local
// buffers, at most tcpwire.MaxRMAIOV remote regions (at least one for RMA)
// whose lengths add up to the local length, at most InjectSize bytes with
// FlagInject, and no FlagInject on a read. post checks only what depends
// on the connection: its state, the transmit queue and (FI_RM_ENABLED)
// room in the TX CQ.
func (ep *endpoint) post(m *provider.Msg, kind opKind) error {
	iov := m.IOV
	var one [1][]byte
	if iov == nil {
		one[0] = m.Buf
		iov = one[:]
	}
	var plen uint64
	for _, b := range iov {
		plen += uint64(len(b))
	}
	inject := m.Flags&provider.FlagInject != 0
	rma := m.RMA
	var rone [1]provider.RMAIOV
	if (kind == kWrite || kind == kRead) && rma == nil {
		rone[0] = m.RMAOne
		rma = rone[:]
	}
	complete := m.Flags&provider.FlagCompletion != 0
	// FI_RM_ENABLED: claim the completion's room in the TX CQ before
	// anything is started; a full CQ makes the post EAGAIN (fi_domain(3)
	// "Tx CQ"), never an overrun. This is done before ep.mu is taken (the
	// lock is held across socket writes and receive progress), so that
	// posts refused while the application has not read its CQ return at
	// once instead of queueing on the lock. txRes is set by Enable, which
	// the root package orders before any post.
	res := ep.txRes
	if !complete {
		res = nil
	}
	if res != nil && (res.Full() || !res.Reserve()) {
		return provider.EAGAIN
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	var err error
	switch ep.state {
	case epConnected, epConnecting:
	case epClosed:
		err = provider.EBADF // closed while the call was on its way in
	default:
		err = provider.ENOTCONN // enabled (root), not connected
	}
	t := &ep.tx
	var op *txOp
	if err == nil {
		if op = t.alloc(); op == nil {
			err = provider.EAGAIN
		}
	}
	if err != nil {
		if res != nil {
			res.Unreserve()
		}
		return err
	}
	op.complete = complete
	op.reserved = res != nil
	op.kind = kind
	op.ctx = m.Context
	op.fence = m.Flags&provider.FlagFence != 0
	h := &op.h
	dc := m.Flags&(provider.FlagDeliveryComplete|provider.FlagTransmitComplete|provider.FlagMatchComplete|
		provider.FlagCommitComplete) != 0
	switch kind {
	case kMsg, kTagged:
		h.Op = tcpwire.OpMsg
		op.flags, op.cntr = provider.FlagSend|provider.FlagMsg, provider.CntrSend
		if kind == kTagged {
			h.Op, h.Tag = tcpwire.OpTagged, m.Tag
			op.flags = provider.FlagSend | provider.FlagTagged
		}
		if dc {
			h.Flags |= tcpwire.FlagDeliveryComplete
			op.wait = waitAck
		}
	case kWrite:
		h.Op = tcpwire.OpWrite
		op.flags, op.cntr = provider.FlagRMA|provider.FlagWrite, provider.CntrWrite
		switch {
		case m.Flags&provider.FlagCommitComplete != 0:
			h.Flags |= tcpwire.FlagCommitComplete
			op.wait = waitAck
		case dc:
			h.Flags |= tcpwire.FlagDeliveryComplete
			op.wait = waitAck
		}
	case kRead:
		h.Op = tcpwire.OpReadReq
		op.flags, op.cntr = provider.FlagRMA|provider.FlagRead, provider.CntrRead
		op.wait = waitRsp
	}
	if kind == kWrite || kind == kRead {
		h.RMACount = uint8(len(rma))
		for i, r := range rma {
			h.RMA[i] = tcpwire.RMAIOV{Addr: r.Addr, Len: r.Len, Key: r.Key}
		}
	}
	if m.Flags&provider.FlagRemoteCQData != 0 && kind != kRead {
		h.Flags |= tcpwire.FlagCQData
		h.CQData = m.Data
	}
	if inject {
		n := 0
		for _, b := range iov {
			n += copy(op.inj[n:], b)
		}
		op.iov[0] = op.inj[:n]
		op.niov = 1
	} else {
		op.niov = copy(op.iov[:], iov)
	}
	op.plen = int(plen)
	if kind == kRead {
		h.SetPayload(0)
	} else {
		h.SetPayload(plen)
	}
	t.pend[t.tail%uint64(len(t.pend))] = op
	t.tail++
	if ep.state == epConnected && !t.blocked {
		ep.flushTx()
		ep.drain()
		if t.blocked && ep.auto {
			ep.kick(ep.txKick)
		}
	}
	return nil
}

// pick moves the next frame to write into the write queue: an owed ACK,
// then a read response, then the next application frame (a fenced one
// only once everything before it has completed). ep.mu is held.
func (ep *endpoint) pick() bool {
	t := &ep.tx
	if t.wqLen == wqCap {
		return false
	}
	var op *txOp
	switch {
	case t.acks > 0:
		op = t.allocCtrl()
		op.kind = kAck
		op.h = tcpwire.ACK()
		op.hlen = tcpwire.PutHeader(op.fb[:], &op.h, ep.swap)
		op.flen = op.hlen
		t.acks--
	case t.rspHead < len(t.rspq):
		op = t.popRsp()
	case t.wr < t.tail:
		op = t.at(t.wr)
		if op.fence && t.wr != t.head {
			return false
		}
		op.encode(ep.swap)
		t.wr++
	default:
		return false
	}
	t.wq[(t.wqHead+t.wqLen)%wqCap] = op
	t.wqLen++
	return true
}

// encode writes the frame header into fb and, for a payload of at most
// InjectSize bytes, copies the payload behind it, so that the frame goes
// out in one piece (as libfabric does for frames of 128 bytes of data or
// less).
func (op *txOp) encode(swap bool) {
	op.hlen = tcpwire.PutHeader(op.fb[:], &op.h, swap)
	op.flen = op.hlen
	if op.kind != kRead && op.plen <= InjectSize {
		for _, b := range op.iov[:op.niov] {
			op.flen += copy(op.fb[op.flen:], b)
		}
	}
}

// inlined reports whether the whole frame is in fb.
func (op *txOp) inlined() bool { return op.kind == kRead || op.flen == op.hlen+op.plen }

// frameVecs appends the unwritten parts of op's frame to vec.
func frameVecs(vec [][]byte, op *txOp) [][]byte {
	off := op.sent
	if off < op.flen {
		vec = append(vec, op.fb[off:op.flen])
		off = 0
	} else {
		off -= op.flen
	}
	if op.inlined() {
		return vec
	}
	for _, b := range op.iov[:op.niov] {
		if off >= len(b) {
			off -= len(b)
			continue
		}
		vec = append(vec, b[off:])
		off = 0
	}
	return vec
}

func frameVecCount(op *txOp) int {
	if op.inlined() {
		return 1
	}
	return 1 + op.niov
}

// flushTx writes queued frames until the socket would block. ep.mu is
// held and the endpoint is connected.
func (ep *endpoint) flushTx() {
	t := &ep.tx
	for {
		for ep.pick() {
		}
		if t.wqLen == 0 {
			t.blocked = false
			return
		}
		var vbuf [sys.MaxIOV][]byte
		vec := vbuf[:0]
		total := 0
		for i := 0; i < t.wqLen; i++ {
			op := t.wq[(t.wqHead+i)%wqCap]
			if i > 0 && len(vec)+frameVecCount(op) > sys.MaxIOV {
				break
			}
			vec = frameVecs(vec, op)
			total += op.total() - op.sent
		}
		var n int
		var e provider.Errno
		switch len(vec) {
		case 0:
		case 1:
			n, e = ep.conn.Write(vec[0])
		default:
			n, e = ep.conn.Writev(vec)
		}
		switch e {
		case 0:
		case provider.EAGAIN, provider.EINTR, provider.ENOBUFS:
			t.blocked = true
			return
		default:
			ep.disconnect(e, 0, false)
			return
		}
		wrote := n
		for n > 0 && t.wqLen > 0 {
			op := t.wq[t.wqHead]
			rem := op.total() - op.sent
			if n < rem {
				op.sent += n
				break
			}
			n -= rem
			op.sent = op.total()
			t.wq[t.wqHead] = nil
			t.wqHead = (t.wqHead + 1) % wqCap
			t.wqLen--
			ep.written(op)
		}
		if wrote < total {
			// A short write: the socket buffer is full.
			t.blocked = true
			return
		}
	}
}

// written handles a frame that is entirely on the wire.
func (ep *endpoint) written(op *txOp) {
	switch op.kind {
	case kAck, kRsp:
		ep.tx.releaseCtrl(op)
	default:
		if op.wait == waitNone {
			op.done = true
		} else {
			op.written = true
		}
	}
}

// drain completes finished operations in posting order. ep.mu is held.
func (ep *endpoint) drain() {
	t := &ep.tx
	for t.head < t.tail {
		op := t.at(t.head)
		if !op.done {
			return
		}
		t.pend[t.head%uint64(len(t.pend))] = nil
		t.head++
		t.giveCredit()
		ep.completeOp(op)
		t.release(op)
	}
}

// completeOp writes op's completion: into its reserved room when it has
// one (FI_RM_ENABLED); an error of an operation posted without
// FlagCompletion has none, and a CQ with resource management keeps it
// beyond its size (provider.CQReserver).
func (ep *endpoint) completeOp(op *txOp) {
	c := ep.res.Cntrs[op.cntr]
	// The counter first: a thread that read the completion sees the
	// counter include it.
	if op.err != 0 {
		if c != nil {
			c.IncErr()
		}
		if cq := ep.res.TxCQ; cq != nil {
			ee := provider.CQErrEntry{OpContext: op.ctx, Flags: op.flags, Err: op.err,
				ProvErrno: int(op.err), Src: provider.AddrNotAvail}
			if op.reserved {
				_ = ep.txRes.WriteErrReserved(&ee)
			} else {
				_ = cq.WriteErr(&ee)
			}
		}
		return
	}
	if c != nil {
		c.Inc()
	}
	switch {
	case op.reserved:
		_ = ep.txRes.WriteReserved(op.ctx, op.flags, 0, nil, 0, 0, provider.AddrNotAvail)
	case op.complete && ep.res.TxCQ != nil:
		_ = ep.res.TxCQ.Write(op.ctx, op.flags, 0, nil, 0, 0, provider.AddrNotAvail)
	}
}

// ackReceived completes the oldest operation waiting for an ACK; false if
// none is waiting (a protocol error).
func (ep *endpoint) ackReceived() bool {
	t := &ep.tx
	for i := t.head; i < t.wr; i++ {
		op := t.at(i)
		if op.wait == waitAck && op.written && !op.done {
			op.done = true
			return true
		}
	}
	return false
}

// oldestRead returns the oldest read waiting for its response, or nil.
func (ep *endpoint) oldestRead() *txOp {
	t := &ep.tx
	for i := t.head; i < t.wr; i++ {
		op := t.at(i)
		if op.wait == waitRsp && op.written && !op.done {
			return op
		}
	}
	return nil
}

// failTx completes every outstanding operation with err, in posting
// order, and drops queued control frames. ep.mu is held.
func (ep *endpoint) failTx(err provider.Errno) {
	t := &ep.tx
	for t.wqLen > 0 {
		op := t.wq[t.wqHead]
		t.wq[t.wqHead] = nil
		t.wqHead = (t.wqHead + 1) % wqCap
		t.wqLen--
		if op.kind == kAck || op.kind == kRsp {
			t.releaseCtrl(op)
		}
	}
	for t.rspHead < len(t.rspq) {
		t.releaseCtrl(t.popRsp())
	}
	t.acks = 0
	t.blocked = false
	for i := t.head; i < t.tail; i++ {
		op := t.at(i)
		if !op.done {
			op.done, op.err = true, err
		}
	}
	t.wr = t.tail
	ep.drain()
}
