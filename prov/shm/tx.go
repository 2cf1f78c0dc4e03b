package shm

import (
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/provider"
)

// Transmit side. A message of up to the peer's inline limit is written
// into one command slot of the peer's queue, and completes before Send
// returns (the data is in the peer's memory). A larger one is segmented:
// each segment is copied into a bounce buffer taken from the PEER's pool
// and announced with a command naming the buffer; the receiver copies it
// out and returns the buffer. A message that cannot be sent at once
// (queue full, no free buffer, or earlier operations still pending) is
// queued, and Progress pushes the rest as buffers and slots come back
// (pipelining). Operations start in posting order (FI_ORDER_SAS).

// txOp is a pending transmit.
type txOp struct {
	p       *peer
	op      uint8
	cflags  uint8 // shmring command flags (FlagCQData)
	flags   provider.Flags
	ctx     any
	tag     uint64
	data    uint64
	iov     [][]byte
	iovArr  [IOVLimit][]byte
	total   uint64
	off     uint64
	msgID   uint64
	res     provider.CQReserver // room reserved for the completion
	comp    bool                // write a success completion
	failed  bool                // completed in error already
	dc      bool                // FI_DELIVERY_COMPLETE: completes on the receiver's ack
	fence   bool                // FI_FENCE: starts once every earlier operation completed
	cma     bool                // sent as a CMA request (cma.go)
	rtsSent bool                // the CMA request is in the peer's queue
	credit  bool                // holds a credit of the shared transmit context (ep.credits)
	next    *txOp
}

type txState struct {
	mu      sync.Mutex
	pending atomic.Int32 // queued operations (read without mu on the fast path)
	head    *txOp
	tail    *txOp
	free    []*txOp
	nextID  uint64
	// acks holds the operations pushed and waiting for the receiver's
	// ack (FI_DELIVERY_COMPLETE), by message id; nacks is len(acks),
	// readable without mu.
	acks  map[uint64]*txOp
	nacks atomic.Int32
	// ackPeers counts the operations in acks per peer (a few peers at
	// most, usually): progress reads their closing flags instead of
	// walking acks, which holds a whole window of CMA requests while
	// they are pulled.
	ackPeers []ackCount
}

type ackCount struct {
	p *peer
	n int
}

// addAck records o as waiting for its ack (t.mu held).
func (t *txState) addAck(o *txOp) {
	t.acks[o.msgID] = o
	t.nacks.Add(1)
	for i := range t.ackPeers {
		if t.ackPeers[i].p == o.p {
			t.ackPeers[i].n++
			return
		}
	}
	t.ackPeers = append(t.ackPeers, ackCount{p: o.p, n: 1})
}

// delAck removes o, waiting for its ack under id, from acks (t.mu held).
func (t *txState) delAck(id uint64, o *txOp) {
	delete(t.acks, id)
	t.nacks.Add(-1)
	for i := range t.ackPeers {
		if a := &t.ackPeers[i]; a.p == o.p {
			if a.n--; a.n == 0 {
				k := len(t.ackPeers) - 1
				t.ackPeers[i] = t.ackPeers[k]
				t.ackPeers[k] = ackCount{}
				t.ackPeers = t.ackPeers[:k]
			}
			return
		}
	}
}

// ackPeerClosing reports whether a peer that operations wait on for
// their acks is closing (t.mu held).
func (t *txState) ackPeerClosing() bool {
	for i := range t.ackPeers {
		if t.ackPeers[i].p.r.Closing() {
			return true
		}
	}
	return false
}

func (t *txState) init() {
	t.free = make([]*txOp, 0, 16)
	t.acks = make(map[uint64]*txOp)
}

// Send transmits m (fi_send, fi_sendv, fi_sendmsg, fi_senddata, fi_inject).
func (ep *endpoint) Send(m provider.Msg) error { return ep.post(&m, shmring.OpMsg) }

// TSend transmits the tagged message m.
func (ep *endpoint) TSend(m provider.Msg) error { return ep.post(&m, shmring.OpTagged) }

func compFlags(op uint8) provider.Flags {
	if op == shmring.OpTagged {
		return provider.FlagSend | provider.FlagTagged
	}
	return provider.FlagSend | provider.FlagMsg
}

// post sends m or queues it. The root package has validated m against the
// endpoint's Info (sizes, flags, iov_limit); post checks the destination
// and room.
func (ep *endpoint) post(m *provider.Msg, op uint8) error {
	if e := ep.enter(); e != 0 {
		return e
	}
	err := ep.postIn(m, op)
	ep.exit()
	return err
}

func (ep *endpoint) postIn(m *provider.Msg, op uint8) error {
	p, e := ep.peerFor(m.Addr)
	if p == nil {
		return e
	}
	inject := m.Flags&provider.FlagInject != 0
	comp := m.Flags&provider.FlagCompletion != 0
	if e != 0 {
		// A peer we may not write to (auth key).
		return ep.failPost(m, op, e)
	}
	if p.r.Closing() {
		// The peer closed, or died (death.go).
		return ep.failPost(m, op, provider.ECONNRESET)
	}
	// With resource management the completion's room is claimed first.
	// A send that completes at once into this module's CQ (the common
	// case) only checks that the CQ has room, and writes its completion
	// unreserved: one CQ lock instead of two. A CQ with resource
	// management keeps the rare entry that a concurrent writer pushed
	// beyond its size rather than lose it (as srx.ReceiveDirect).
	// Operations that are queued reserve when they are.
	var res provider.CQReserver
	n := m.Len()
	if m.Flags&(provider.FlagDeliveryComplete|provider.FlagFence) != 0 {
		if ep.txRes != nil && comp {
			if !ep.txRes.Reserve() {
				return provider.EAGAIN
			}
			res = ep.txRes
		}
		return ep.postSlow(p, m, op, n, res, comp)
	}
	if ep.txRes != nil && comp {
		if ep.txCQd == nil {
			if !ep.txRes.Reserve() {
				return provider.EAGAIN
			}
			res = ep.txRes
		} else if ep.txCQd.Full() {
			return provider.EAGAIN
		}
	}
	if ep.credits != nil && !ep.creditLeft() {
		return unreserveAgain(res)
	}
	if ep.tx.pending.Load() != 0 {
		// Earlier operations are queued: this one goes behind them.
		ep.progressTx()
	}
	if ep.tx.pending.Load() == 0 {
		if n <= p.inline {
			if ep.sendInline(p, m, op, n, 0, 0) {
				ep.completeTx(res, comp, m.Context, op)
				return nil
			}
			if inject {
				return unreserveAgain(res)
			}
		} else if n <= int(p.r.BufSize) && (inject || !ep.cmaMaybe(p, n)) {
			// One segment: copied now, so injects complete here too
			// (unless the message may go by CMA: queueOp decides).
			switch ep.sendOneSeg(p, m, op, n, 0, 0) {
			case segSent:
				ep.completeTx(res, comp, m.Context, op)
				return nil
			case segNoRoom:
				if inject {
					return unreserveAgain(res)
				}
			}
		}
	}
	if inject {
		// The buffer is the caller's again on return: an inject waits
		// for nothing.
		return unreserveAgain(res)
	}
	if res == nil && ep.txRes != nil && comp {
		if !ep.txRes.Reserve() {
			return provider.EAGAIN
		}
		res = ep.txRes
	}
	return ep.queueOp(p, m, op, n, res, comp, false, false)
}

// postSlow posts an operation with FI_DELIVERY_COMPLETE or FI_FENCE. An
// inject's data is copied before the call returns: it is sent at once
// (one slot or one bounce buffer) or refused with EAGAIN, and (delivery
// complete) waits for its ack like any other.
func (ep *endpoint) postSlow(p *peer, m *provider.Msg, op uint8, n int, res provider.CQReserver, comp bool) error {
	t := &ep.tx
	dc := m.Flags&provider.FlagDeliveryComplete != 0
	fence := m.Flags&provider.FlagFence != 0
	if m.Flags&provider.FlagInject == 0 {
		return ep.queueOp(p, m, op, n, res, comp, dc, fence)
	}
	ep.progressTx()
	if t.pending.Load() != 0 || (fence && t.nacks.Load() != 0) || n > int(p.r.BufSize) {
		return unreserveAgain(res)
	}
	// Waiting for its ack, a delivery-complete inject holds a credit
	// taken before anything is sent; another one only checks.
	credit := false
	if ep.credits != nil {
		if dc {
			if credit = ep.takeCredit(); !credit {
				return unreserveAgain(res)
			}
		} else if !ep.creditLeft() {
			return unreserveAgain(res)
		}
	}
	var cflags uint8
	var id uint64
	if dc {
		cflags, id = shmring.FlagDeliver, ep.nextMsgID()
	}
	sent := false
	if n <= p.inline {
		sent = ep.sendInline(p, m, op, n, id, cflags)
	} else {
		sent = ep.sendOneSeg(p, m, op, n, id, cflags) == segSent
	}
	if !sent {
		if credit {
			ep.credits.Give()
		}
		return unreserveAgain(res)
	}
	if !dc {
		ep.completeTx(res, comp, m.Context, op)
		return nil
	}
	t.mu.Lock()
	o := ep.allocOp()
	*o = txOp{p: p, op: op, flags: m.Flags, ctx: m.Context, tag: m.Tag, total: uint64(n), off: uint64(n),
		res: res, comp: comp, dc: true, msgID: id, credit: credit}
	t.addAck(o)
	t.mu.Unlock()
	return nil
}

func (ep *endpoint) allocOp() *txOp {
	t := &ep.tx
	if k := len(t.free); k > 0 {
		o := t.free[k-1]
		t.free = t.free[:k-1]
		return o
	}
	return &txOp{}
}

// creditLeft reports whether the shared transmit context (ep.credits,
// not nil) has a credit left, for an operation done within its post:
// it takes one and gives it back; the endpoint's queue is progressed
// once before it says no.
func (ep *endpoint) creditLeft() bool {
	if !ep.takeCredit() {
		return false
	}
	ep.credits.Give()
	return true
}

// takeCredit takes a credit of the shared transmit context (ep.credits,
// not nil), progressing the endpoint's queue once before it says no.
func (ep *endpoint) takeCredit() bool {
	if ep.credits.Take() {
		return true
	}
	ep.progressTx()
	return ep.credits.Take()
}

// dropCredit gives back o's credit, if it holds one (o is not freed).
func (ep *endpoint) dropCredit(o *txOp) {
	if o.credit {
		o.credit = false
		ep.credits.Give()
	}
}

func unreserveAgain(res provider.CQReserver) error {
	if res != nil {
		res.Unreserve()
	}
	return provider.EAGAIN
}

// failPost reports an operation that cannot reach its peer: an error
// completion, or the error itself for an inject.
func (ep *endpoint) failPost(m *provider.Msg, op uint8, e provider.Errno) error {
	if m.Flags&(provider.FlagInject|provider.FlagCompletion) == provider.FlagInject {
		return e.AsError()
	}
	if ep.txCntr != nil {
		ep.txCntr.IncErr()
	}
	if ep.txCQ != nil {
		ee := provider.CQErrEntry{OpContext: m.Context, Flags: compFlags(op), Err: e, ProvErrno: int(e),
			Src: provider.AddrNotAvail, Tag: m.Tag}
		_ = ep.txCQ.WriteErr(&ee)
	}
	return nil
}

// completeTx writes the success completion of a transmit. Counters are
// bumped before completions are written, here and everywhere in the
// provider: a thread that read the completion sees the counter include it.
func (ep *endpoint) completeTx(res provider.CQReserver, comp bool, ctx any, op uint8) {
	if ep.txCntr != nil {
		ep.txCntr.Inc()
	}
	switch {
	case res != nil:
		_ = res.WriteReserved(ctx, compFlags(op), 0, nil, 0, 0, provider.AddrNotAvail)
	case comp && ep.txCQd != nil:
		_ = ep.txCQd.WriteMsg(ctx, compFlags(op), 0, 0, provider.AddrNotAvail)
	case comp && ep.txCQ != nil:
		_ = ep.txCQ.Write(ctx, compFlags(op), 0, nil, 0, 0, provider.AddrNotAvail)
	}
}

// wake wakes the peer's owner if it sleeps.
func wake(p *peer) { futexWake(p.r) }

// sendInline writes m into one command slot of p's queue; false when the
// queue is full.
// msgID and cflags (shmring.FlagDeliver) are set for delivery complete.
func (ep *endpoint) sendInline(p *peer, m *provider.Msg, op uint8, n int, msgID uint64, cflags uint8) bool {
	pos, cmd, ok := p.r.Reserve()
	if !ok {
		return false
	}
	c := shmring.Cmd{Op: op, Flags: shmring.FlagInline | cflags, Len: uint32(n), Src: ep.id, Tag: m.Tag,
		Size: uint64(n), MsgID: msgID}
	if m.Flags&provider.FlagRemoteCQData != 0 {
		c.Flags |= shmring.FlagCQData
		c.Data = m.Data
	}
	dst := cmd[shmring.CmdPayload:]
	if m.IOV == nil {
		copy(dst, m.Buf)
	} else {
		for _, b := range m.IOV {
			dst = dst[copy(dst, b):]
		}
	}
	shmring.PutHeader(cmd, &c)
	p.r.Publish(pos)
	wake(p)
	return true
}

type segResult uint8

const (
	segSent segResult = iota
	segNoRoom
)

// sendOneSeg sends m (at most one buffer) as a single segment.
func (ep *endpoint) sendOneSeg(p *peer, m *provider.Msg, op uint8, n int, msgID uint64, cflags uint8) segResult {
	idx, ok := p.r.GetBuf()
	if !ok {
		return segNoRoom
	}
	pos, cmd, ok := p.r.Reserve()
	if !ok {
		p.r.PutBuf(idx)
		return segNoRoom
	}
	buf := p.r.Buf(idx)
	if m.IOV == nil {
		copy(buf, m.Buf)
	} else {
		d := buf
		for _, b := range m.IOV {
			d = d[copy(d, b):]
		}
	}
	if msgID == 0 {
		msgID = ep.nextMsgID()
	}
	c := shmring.Cmd{Op: op, Flags: shmring.FlagFirst | shmring.FlagLast | cflags, Len: uint32(n), Src: ep.id,
		Tag: m.Tag, Size: uint64(n), Buf: idx, MsgID: msgID}
	if m.Flags&provider.FlagRemoteCQData != 0 {
		c.Flags |= shmring.FlagCQData
		c.Data = m.Data
	}
	shmring.PutHeader(cmd, &c)
	p.r.Publish(pos)
	wake(p)
	return segSent
}

func (ep *endpoint) nextMsgID() uint64 {
	return atomic.AddUint64(&ep.tx.nextID, 1)
}

// queueOp queues m for progress to send.
func (ep *endpoint) queueOp(p *peer, m *provider.Msg, op uint8, n int, res provider.CQReserver, comp, dc, fence bool) error {
	t := &ep.tx
	t.mu.Lock()
	if t.pending.Load()+t.nacks.Load() >= QueueSize {
		t.mu.Unlock()
		return unreserveAgain(res)
	}
	credit := ep.credits != nil
	if credit && !ep.credits.Take() {
		t.mu.Unlock()
		return unreserveAgain(res)
	}
	o := ep.allocOp()
	*o = txOp{p: p, op: op, flags: m.Flags, ctx: m.Context, tag: m.Tag, total: uint64(n), res: res, comp: comp,
		dc: dc, fence: fence, credit: credit}
	if m.Flags&provider.FlagRemoteCQData != 0 {
		o.cflags = shmring.FlagCQData
		o.data = m.Data
	}
	if dc {
		o.cflags |= shmring.FlagDeliver
	}
	if m.IOV == nil {
		o.iovArr[0] = m.Buf
		o.iov = o.iovArr[:1]
	} else {
		o.iov = o.iovArr[:copy(o.iovArr[:], m.IOV)]
	}
	o.msgID = ep.nextMsgID()
	ep.markCMA(o)
	if t.tail == nil {
		t.head = o
	} else {
		t.tail.next = o
	}
	t.tail = o
	t.pending.Add(1)
	ep.progressTxLocked()
	t.mu.Unlock()
	return nil
}

// progressTx pushes what it can of the queued operations.
func (ep *endpoint) progressTx() {
	t := &ep.tx
	if !t.mu.TryLock() {
		return
	}
	ep.progressTxLocked()
	t.mu.Unlock()
}

func (ep *endpoint) progressTxLocked() {
	t := &ep.tx
	if ep.state.Load() != stateEnabled {
		return // Close cancels what is queued
	}
	if t.nacks.Load() != 0 {
		// A receiver that closes never acks: its closing flag ends the
		// operations waiting for it. An ack it pushed before it closed
		// is in our queue, ahead of anything pushed after the flag was
		// seen: wait until the queue is empty (that ack taken) before
		// failing what is left.
		if t.ackPeerClosing() && !ep.own.Pending() { // the flag first, then the queue
			for id, o := range t.acks {
				if o.p.r.Closing() {
					t.delAck(id, o)
					ep.failOp(o, provider.ECONNRESET)
					ep.freeOp(o)
				}
			}
		}
	}
	for o := t.head; o != nil; o = t.head {
		if !ep.pushOp(o) {
			return
		}
		t.head = o.next
		if t.head == nil {
			t.tail = nil
		}
		t.pending.Add(-1)
		o.next = nil
		if !o.failed && o.dc {
			t.addAck(o)
			continue
		}
		if !o.failed {
			ep.dropCredit(o) // before the completion: its reader may post at once
			ep.completeTx(o.res, o.comp, o.ctx, o.op)
		}
		ep.freeOp(o)
	}
}

func (ep *endpoint) freeOp(o *txOp) {
	if o.credit {
		ep.credits.Give()
	}
	*o = txOp{}
	ep.tx.free = append(ep.tx.free, o)
}

// pushOp pushes the segments of o it can; true when all are out.
func (ep *endpoint) pushOp(o *txOp) bool {
	p := o.p
	if o.fence && o.off == 0 && ep.tx.nacks.Load() != 0 {
		return false // FI_FENCE: earlier operations have not completed
	}
	if o.cma {
		return ep.pushCMA(o)
	}
	if p.r.Closing() {
		ep.failOp(o, provider.ECONNRESET)
		return true
	}
	for first := o.off == 0; o.off < o.total || first; first = false {
		if o.total <= uint64(p.inline) {
			m := provider.Msg{IOV: o.iov, Tag: o.tag, Data: o.data}
			if o.cflags&shmring.FlagCQData != 0 {
				m.Flags = provider.FlagRemoteCQData
			}
			if !ep.sendInline(p, &m, o.op, int(o.total), o.msgID, o.cflags&shmring.FlagDeliver) {
				return false
			}
			o.off = o.total
			return true
		}
		idx, ok := p.r.GetBuf()
		if !ok {
			return false
		}
		pos, cmd, ok := p.r.Reserve()
		if !ok {
			p.r.PutBuf(idx)
			return false
		}
		buf := p.r.Buf(idx)
		n := gatherAt(buf, o.iov, o.off)
		c := shmring.Cmd{Op: o.op, Flags: o.cflags, Len: uint32(n), Src: ep.id, Tag: o.tag, Data: o.data,
			MsgID: o.msgID, Size: o.total, Buf: idx}
		if first {
			c.Flags |= shmring.FlagFirst
		}
		o.off += uint64(n)
		if o.off == o.total {
			c.Flags |= shmring.FlagLast
		}
		shmring.PutHeader(cmd, &c)
		p.r.Publish(pos)
		wake(p)
	}
	return true
}

// gatherAt copies the bytes of iov from offset off into dst; it returns
// the count copied.
func gatherAt(dst []byte, iov [][]byte, off uint64) int {
	n := 0
	for _, b := range iov {
		if off >= uint64(len(b)) {
			off -= uint64(len(b))
			continue
		}
		c := copy(dst[n:], b[off:])
		n += c
		off = 0
		if n == len(dst) {
			break
		}
	}
	return n
}

// failOp completes o with error e (the operation is dequeued by the
// caller).
func (ep *endpoint) failOp(o *txOp, e provider.Errno) {
	ep.dropCredit(o) // before the completion: its reader may post at once
	ee := provider.CQErrEntry{OpContext: o.ctx, Flags: compFlags(o.op), Err: e, ProvErrno: int(e),
		Src: provider.AddrNotAvail, Tag: o.tag}
	if ep.txCntr != nil {
		ep.txCntr.IncErr()
	}
	switch {
	case o.res != nil:
		_ = o.res.WriteErrReserved(&ee)
	case ep.txCQ != nil:
		_ = ep.txCQ.WriteErr(&ee)
	}
	o.res, o.comp = nil, false
	o.failed = true
}

// Cancel cancels a queued transmit with context ctx: it completes with
// FI_ECANCELED. ENOENT if none is queued (sends that started complete).
func (ep *endpoint) Cancel(ctx any) error {
	t := &ep.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	var prev *txOp
	for o := t.head; o != nil; prev, o = o, o.next {
		if o.off != 0 || !sameCtx(o.ctx, ctx) {
			continue
		}
		if prev == nil {
			t.head = o.next
		} else {
			prev.next = o.next
		}
		if t.tail == o {
			t.tail = prev
		}
		t.pending.Add(-1)
		ep.failOp(o, provider.ECANCELED)
		ep.freeOp(o)
		return nil
	}
	return provider.ENOENT
}

// cancelTx completes every queued transmit with FI_ECANCELED (Close).
func (ep *endpoint) cancelTx() {
	t := &ep.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	for o := t.head; o != nil; o = o.next {
		ep.failOp(o, provider.ECANCELED) // gives its credit back
	}
	t.head, t.tail = nil, nil
	t.pending.Store(0)
	for id, o := range t.acks {
		ep.failOp(o, provider.ECANCELED)
		delete(t.acks, id)
	}
	t.nacks.Store(0)
	clear(t.ackPeers)
	t.ackPeers = t.ackPeers[:0]
}

// gotAck completes the delivery-complete operation an ack names. An ack
// that names no such operation of that peer is dropped.
func (ep *endpoint) gotAck(c *shmring.Cmd) {
	if ep.cmaAck(c) {
		return
	}
	t := &ep.tx
	t.mu.Lock()
	o := t.acks[c.MsgID]
	if o == nil || o.p.id != c.Src {
		t.mu.Unlock()
		ep.dropCmd(shmring.ErrBadOp)
		return
	}
	t.delAck(c.MsgID, o)
	if c.Data != 0 {
		ep.failOp(o, provider.Errno(min(c.Data, 1<<16)))
	} else {
		ep.dropCredit(o) // before the completion: its reader may post at once
		ep.completeTx(o.res, o.comp, o.ctx, o.op)
	}
	ep.freeOp(o)
	if t.pending.Load() != 0 {
		ep.progressTxLocked() // a fenced operation may start now
	}
	t.mu.Unlock()
}

// sameCtx compares two operation contexts without panicking on
// incomparable dynamic types.
func sameCtx(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}
