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
	p      *peer
	op     uint8
	cflags uint8 // shmring command flags (FlagCQData)
	flags  provider.Flags
	ctx    any
	tag    uint64
	data   uint64
	iov    [][]byte
	iovArr [IOVLimit][]byte
	total  uint64
	off    uint64
	msgID  uint64
	res    provider.CQReserver // room reserved for the completion
	comp   bool                // write a success completion
	failed bool                // completed in error already
	next   *txOp
}

type txState struct {
	mu      sync.Mutex
	pending atomic.Int32 // queued operations (read without mu on the fast path)
	head    *txOp
	tail    *txOp
	free    []*txOp
	nextID  uint64
}

func (t *txState) init() { t.free = make([]*txOp, 0, 16) }

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
	// With resource management the completion's room is claimed first.
	var res provider.CQReserver
	if ep.txRes != nil && comp {
		if !ep.txRes.Reserve() {
			return provider.EAGAIN
		}
		res = ep.txRes
	}
	n := m.Len()
	if ep.tx.pending.Load() != 0 {
		// Earlier operations are queued: this one goes behind them.
		ep.progressTx()
	}
	if ep.tx.pending.Load() == 0 {
		if n <= p.inline {
			if ep.sendInline(p, m, op, n) {
				ep.completeTx(res, comp, m.Context, op)
				return nil
			}
			if inject {
				return unreserveAgain(res)
			}
		} else if n <= int(p.r.BufSize) {
			// One segment: copied now, so injects complete here too.
			switch ep.sendOneSeg(p, m, op, n) {
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
	return ep.queueOp(p, m, op, n, res, comp)
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
	if ep.txCQ != nil {
		ee := provider.CQErrEntry{OpContext: m.Context, Flags: compFlags(op), Err: e, ProvErrno: int(e),
			Src: provider.AddrNotAvail, Tag: m.Tag}
		_ = ep.txCQ.WriteErr(&ee)
	}
	if ep.txCntr != nil {
		ep.txCntr.IncErr()
	}
	return nil
}

// completeTx writes the success completion of a transmit.
func (ep *endpoint) completeTx(res provider.CQReserver, comp bool, ctx any, op uint8) {
	switch {
	case res != nil:
		_ = res.WriteReserved(ctx, compFlags(op), 0, nil, 0, 0, provider.AddrNotAvail)
	case comp && ep.txCQ != nil:
		_ = ep.txCQ.Write(ctx, compFlags(op), 0, nil, 0, 0, provider.AddrNotAvail)
	}
	if ep.txCntr != nil {
		ep.txCntr.Inc()
	}
}

// wake wakes the peer's owner if it sleeps.
func wake(p *peer) {
	if p.r.Wake() {
		futexWake(p.r)
	}
}

// sendInline writes m into one command slot of p's queue; false when the
// queue is full.
func (ep *endpoint) sendInline(p *peer, m *provider.Msg, op uint8, n int) bool {
	pos, cmd, ok := p.r.Reserve()
	if !ok {
		return false
	}
	c := shmring.Cmd{Op: op, Flags: shmring.FlagInline, Len: uint32(n), Src: ep.id, Tag: m.Tag, Size: uint64(n)}
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
func (ep *endpoint) sendOneSeg(p *peer, m *provider.Msg, op uint8, n int) segResult {
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
	c := shmring.Cmd{Op: op, Flags: shmring.FlagFirst | shmring.FlagLast, Len: uint32(n), Src: ep.id,
		Tag: m.Tag, Size: uint64(n), Buf: idx, MsgID: ep.nextMsgID()}
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
func (ep *endpoint) queueOp(p *peer, m *provider.Msg, op uint8, n int, res provider.CQReserver, comp bool) error {
	t := &ep.tx
	t.mu.Lock()
	if t.pending.Load() >= QueueSize {
		t.mu.Unlock()
		return unreserveAgain(res)
	}
	var o *txOp
	if k := len(t.free); k > 0 {
		o = t.free[k-1]
		t.free = t.free[:k-1]
	} else {
		o = &txOp{}
	}
	*o = txOp{p: p, op: op, flags: m.Flags, ctx: m.Context, tag: m.Tag, total: uint64(n), res: res, comp: comp}
	if m.Flags&provider.FlagRemoteCQData != 0 {
		o.cflags = shmring.FlagCQData
		o.data = m.Data
	}
	if m.IOV == nil {
		o.iovArr[0] = m.Buf
		o.iov = o.iovArr[:1]
	} else {
		o.iov = o.iovArr[:copy(o.iovArr[:], m.IOV)]
	}
	o.msgID = ep.nextMsgID()
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
	for o := t.head; o != nil; o = t.head {
		if !ep.pushOp(o) {
			return
		}
		t.head = o.next
		if t.head == nil {
			t.tail = nil
		}
		t.pending.Add(-1)
		if !o.failed {
			ep.completeTx(o.res, o.comp, o.ctx, o.op)
		}
		ep.freeOp(o)
	}
}

func (ep *endpoint) freeOp(o *txOp) {
	*o = txOp{}
	ep.tx.free = append(ep.tx.free, o)
}

// pushOp pushes the segments of o it can; true when all are out.
func (ep *endpoint) pushOp(o *txOp) bool {
	p := o.p
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
			if !ep.sendInline(p, &m, o.op, int(o.total)) {
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
	ee := provider.CQErrEntry{OpContext: o.ctx, Flags: compFlags(o.op), Err: e, ProvErrno: int(e),
		Src: provider.AddrNotAvail, Tag: o.tag}
	switch {
	case o.res != nil:
		_ = o.res.WriteErrReserved(&ee)
	case ep.txCQ != nil:
		_ = ep.txCQ.WriteErr(&ee)
	}
	o.res, o.comp = nil, false
	if ep.txCntr != nil {
		ep.txCntr.IncErr()
	}
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
		ep.failOp(o, provider.ECANCELED)
	}
	t.head, t.tail = nil, nil
	t.pending.Store(0)
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
