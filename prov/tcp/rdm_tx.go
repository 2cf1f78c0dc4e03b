package tcp

import (
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
	txEager txKind = iota
	txRndv
	txCtrl
)

// rdmHdrMax is the largest frame header of an RDM frame: a tcp header with
// CQ data, tag or RMA iovs, then an rxm header and a rendezvous descriptor.
const rdmHdrMax = tcpwire.MaxHeaderSize + rxmwire.HeaderSize + rxmwire.RndvSize

type rdmTx struct {
	kind     txKind
	hdr      [rdmHdrMax]byte
	vec      [2 + IOVLimit][]byte // what is written: the header, then payload slices
	nvec     int
	total    int // bytes to write
	off      int // bytes written
	sent     bool
	ctx      any
	flags    provider.Flags // completion flags
	comp     bool           // write a successful completion
	reserved bool           // room in the TX CQ is reserved
	counted  bool           // counts against tx_attr.size
	key      uint64         // rendezvous: the key the peer reads with (and msg_id)
	data     []byte         // rendezvous: the message, contiguous
	conn     *rdmConn
	buf      []byte // eager frame storage, kept when the rdmTx is reused
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
		t.ctx, t.data, t.conn = nil, nil, nil
		clear(t.vec[:])
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
}

func (q *rdmTxQueue) len() int { return len(q.q) - q.head0 }

func (q *rdmTxQueue) head() *rdmTx {
	if q.len() == 0 {
		return nil
	}
	return q.q[q.head0]
}

func (q *rdmTxQueue) push(t *rdmTx) { q.q = append(q.q, t) }

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

// dropCtrl removes the control frames (they belonged to the old stream).
func (q *rdmTxQueue) dropCtrl() {
	k := 0
	for _, t := range q.q[q.head0:] {
		if t.kind != txCtrl {
			q.q[k] = t
			k++
		}
	}
	clear(q.q[k:])
	q.q, q.head0 = q.q[:k], 0
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
	if ep.queued >= ep.txSize {
		ep.progressLocked()
		if ep.queued >= ep.txSize {
			return provider.EAGAIN
		}
	}
	t := ep.getTx()
	t.ctx, t.comp, t.counted = m.Context, m.Flags&provider.FlagCompletion != 0, true
	t.flags = provider.FlagSend | provider.FlagMsg
	if tagged {
		t.flags = provider.FlagSend | provider.FlagTagged
	}
	if ep.txRes != nil && m.Flags&(provider.FlagInject|provider.FlagCompletion) != provider.FlagInject {
		if !ep.txRes.Reserve() {
			return provider.EAGAIN
		}
		t.reserved = true
	}
	c, err := ep.conn(dest)
	if err != nil {
		if t.reserved {
			ep.txRes.Unreserve()
		}
		return err
	}
	t.conn = c
	n := m.Len()
	hasData := m.Flags&provider.FlagRemoteCQData != 0
	if n <= rxmwire.EagerLimit {
		// The frame owns a copy of the payload (inject or not).
		ep.buildEager(t, m, n, tagged, hasData, c)
	} else {
		ep.buildRndv(t, m, n, tagged, hasData, c)
	}
	ep.queued++
	c.tx.push(t)
	if c.state == connUp && len(c.out) == 0 {
		c.flush()
	}
	return nil
}

// buildEager encodes an eager message with a copy of its payload: a tagged
// message as a tcp frame with the tag word and no rxm header (as rxm over
// tcp sends it), an untagged one with the rxm header.
func (ep *rdmEP) buildEager(t *rdmTx, m *provider.Msg, n int, tagged, hasData bool, c *rdmConn) {
	t.kind = txEager
	var h tcpwire.Header
	h.Op = tcpwire.OpMsg
	var rh rxmwire.Header
	if tagged {
		h.Flags = tcpwire.FlagTagged
		h.Tag = m.Tag
		if hasData {
			h.Flags |= tcpwire.FlagCQData
			h.CQData = m.Data
		}
		h.SetPayload(uint64(n))
	} else {
		rh = rxmwire.Header{Type: rxmwire.TypeEager, ConnID: uint64(c.remoteIndex), Op: rxmwire.OpMsg, Size: uint64(n)}
		if hasData {
			rh.Flags = rxmwire.FlagRemoteCQData
			rh.Data = m.Data
		}
		h.SetPayload(uint64(rxmwire.HeaderSize + n))
	}
	hl := tcpwire.PutHeader(t.hdr[:], &h, false)
	if !tagged {
		rh.Put(t.hdr[hl:])
		hl += rxmwire.HeaderSize
	}
	if cap(t.buf) < hl+n {
		t.buf = make([]byte, hl+n, max(hl+n, 256))
	}
	buf := t.buf[:hl+n]
	copy(buf, t.hdr[:hl])
	off := hl
	if m.IOV == nil {
		copy(buf[off:], m.Buf)
	} else {
		for _, b := range m.IOV {
			off += copy(buf[off:], b)
		}
	}
	t.add(buf)
}

// buildRndv encodes a rendezvous request; the data stays in the
// application's buffer (copied when it is scattered) until the peer has
// read it.
func (ep *rdmEP) buildRndv(t *rdmTx, m *provider.Msg, n int, tagged, hasData bool, c *rdmConn) {
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
	h.SetPayload(rxmwire.HeaderSize + rxmwire.RndvSize)
	hl := tcpwire.PutHeader(t.hdr[:], &h, false)
	rh := rxmwire.Header{Type: rxmwire.TypeRndvReq, ConnID: uint64(c.remoteIndex), MsgID: t.key,
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
	t.add(t.hdr[:hl])
}

// ctrlFrame queues a control frame: the tcp header h (Size set by the
// caller), an optional rxm header, and payload slices. ep.mu is held.
func (c *rdmConn) ctrlFrame(h *tcpwire.Header, rh *rxmwire.Header, payload ...[]byte) {
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
}

// flush writes queued frames until the socket is full. ep.mu is held.
func (c *rdmConn) flush() {
	for c.state == connUp && c.tx.len() > 0 {
		iov := c.tx.iov[:0]
		// Gather up to 16 frames.
		skip := c.tx.head().off
		for i := c.tx.head0; i < len(c.tx.q) && len(iov) < 16; i++ {
			t := c.tx.q[i]
			for _, b := range t.vec[:t.nvec] {
				if skip >= len(b) {
					skip -= len(b)
					continue
				}
				iov = append(iov, b[skip:])
				skip = 0
			}
		}
		c.tx.iov = iov[:0]
		n, e := c.sock.Writev(iov)
		clear(iov)
		if e == provider.EAGAIN || e == provider.EINTR {
			return
		}
		if e != 0 {
			c.fail(e, true)
			return
		}
		for n > 0 {
			t := c.tx.head()
			adv := min(n, t.total-t.off)
			t.off += adv
			n -= adv
			if t.off == t.total {
				c.tx.pop()
				c.ep.written(t)
				if t.kind == txCtrl {
					c.ep.putTx(t)
				}
			}
		}
		if n == 0 && c.tx.len() > 0 && c.tx.head().off > 0 {
			return // partial write: the socket is full
		}
	}
}

// written handles a frame that is on the wire.
func (ep *rdmEP) written(t *rdmTx) {
	t.sent = true
	switch t.kind {
	case txEager:
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
	}
	var res provider.CQReserver
	if t.reserved {
		res = ep.txRes
		t.reserved = false
	}
	defer ep.putTx(t)
	// Counters before the CQ: whoever read the completion sees the
	// counter include it.
	if err == 0 {
		if ep.txCntr != nil {
			ep.txCntr.Inc()
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
	if ep.txCntr != nil {
		ep.txCntr.IncErr()
	}
	ee := provider.CQErrEntry{OpContext: t.ctx, Flags: t.flags, Err: err, ProvErrno: int(err), Src: provider.AddrNotAvail}
	if res != nil {
		_ = res.WriteErrReserved(&ee)
	} else {
		_ = ep.txCQ.WriteErr(&ee)
	}
}
