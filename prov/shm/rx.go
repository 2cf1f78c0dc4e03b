package shm

import (
	"log/slog"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

// Receive side: Progress drains the endpoint's own command queue in
// order. A message is matched against the receive queue (the SRX owner)
// when its first command arrives: inline data is copied straight from
// the slot into the posted buffers, segments from the bounce buffers
// (each buffer goes back to the pool at once). With no posted receive the
// message is unexpected: its data is copied into provider memory (up to
// MaxUnexpectedBytes / MaxUnexpected per endpoint) and queued with
// QueueMsg/QueueTag; beyond that bound the command stays at the head of
// the queue and draining stops until a receive is posted (back-pressure:
// senders find the queue full and keep their operations pending), so
// nothing is dropped.
//
// Fast path: when the receive queue is this module's and the command at
// the head is a whole message (inline, or in one bounce buffer) without
// an ack or CMA request, Queue.ReceiveDirect (untagged: the first posted
// receive) or Queue.ReceiveDirectTag (tagged: the receive GetTag would
// match) copies it into that receive and completes it under one lock.

const (
	ubufMinShift   = 6
	numUbufClasses = 11 // 64 B .. 64 KiB pooled; larger buffers are one-off
	ubufMaxPooled  = 1 << (ubufMinShift + numUbufClasses - 1)
)

// ubuf holds the data of an unexpected message.
type ubuf struct {
	b     []byte
	n     int
	class int    // -1: not pooled
	src   uint64 // sender's endpoint id
	ack   bool   // the sender waits for an ack (delivery complete)
	msgID uint64 // the message's id, for the ack
}

// rxSeg is a segmented message being received from one sender.
type rxSeg struct {
	msgID  uint64
	total  uint64
	off    uint64
	placed uint64
	tagged bool
	src    provider.Addr
	e      *provider.RxEntry
	ub     *ubuf // unexpected: the data is collected here, queued at the end
	ack    bool  // the sender waits for an ack
}

type rxState struct {
	stalled atomic.Bool // the head command waits for room (setStalled)
	c       shmring.Cmd
	segs    map[uint64]*rxSeg // by sender id
	segFree []*rxSeg
	nameBuf [64]byte

	// Direct path: the command ReceiveInto consumed; decoded: c holds
	// the head command already (receiveDirectTag).
	decoded bool
	// directRecv counts the messages the direct paths received (tests).
	directRecv uint64
	dsrc       uint64
	ddata      uint64
	dcq        bool
	warned     bool
	// lateBuf is the bounce buffer (index+1) of the last message the
	// direct path took, given back at the start of the next progress
	// call rather than before its completion: the free-list head is a
	// line the sender wrote last (a cross-core miss), and the
	// application can read the completion and answer meanwhile.
	lateBuf uint32

	srcCache [srcCacheSize]srcEntry
}

// srcCacheSize is the number of senders whose fi_addr srcOf remembers.
const srcCacheSize = 64

type srcEntry struct {
	id, gen uint64 // gen: the AV's Gen()+1 when looked up (0: empty)
	addr    provider.Addr
}

// ackOut is an ack that did not fit in the sender's queue yet.
type ackOut struct {
	src, msgID, status uint64
}

func (r *rxState) init() { r.segs = make(map[uint64]*rxSeg) }

// progressRx handles up to ProgressBudget commands. ep.rxMu is held.
func (ep *endpoint) progressRx() {
	r := ep.own
	c := &ep.rx.c
	if ep.rx.lateBuf != 0 {
		r.PutBuf(ep.rx.lateBuf - 1)
		ep.rx.lateBuf = 0
	}
	if ep.nAcksOut.Load() != 0 {
		ep.flushAcks()
	}
	ep.flushAnswers()
	for i := 0; i < ProgressBudget; i++ {
		if ep.rxFull != nil && ep.rxFull.Full() {
			// FI_RM_ENABLED: no room for a receive completion; the
			// commands wait in the queue until the application reads
			// the CQ.
			ep.setStalled(true)
			return
		}
		cmd := r.Peek()
		if cmd == nil {
			ep.setStalled(false)
			return
		}
		if ep.direct != nil && directFlags(cmd[1]) {
			switch cmd[0] {
			case shmring.OpMsg:
				if ep.direct.ReceiveDirect(ep) == srx.DirectDone {
					continue
				}
			case shmring.OpTagged:
				if ep.receiveDirectTag(cmd) {
					continue
				}
			}
		}
		if err := r.Decode(cmd, c); err != nil {
			ep.dropCmd(err)
			r.Release()
			continue
		}
		switch c.Op {
		case shmring.OpMsg, shmring.OpTagged:
			if !ep.rxMsg(c) {
				ep.setStalled(true)
				return // back-pressure: the command stays queued
			}
		case shmring.OpAck:
			ep.gotAck(c)
		case opWrite, opRead, opAtomic, opWriteAck, opReadResp, opAtomicResp:
			if !ep.rxRMA(c) {
				ep.setStalled(true)
				return // back-pressure (rma.go)
			}
		default:
			ep.dropCmd(shmring.ErrBadOp)
		}
		r.Release()
	}
	ep.setStalled(false)
}

// setStalled records whether the command at the head of the inbound queue
// waits for room (a receive completion, unexpected-message memory): the
// auto-progress goroutine then sleeps (waitRoom) instead of spinning on
// the pending command.
func (ep *endpoint) setStalled(v bool) {
	if ep.rx.stalled.Load() != v {
		ep.rx.stalled.Store(v)
	}
}

// waitRoom sleeps until room may have been freed for a stalled command:
// the receive CQ or the receive queue (the owner's, for an imported SRX)
// kicks when entries are read or unexpected messages leave it
// (provider.RoomNotifier); without a notifier it sleeps d. It returns at
// once when a retry finds the stall gone, and when the endpoint closes.
func (ep *endpoint) waitRoom(kick chan struct{}, d time.Duration) {
	armed := false
	if n, ok := ep.rxFull.(provider.RoomNotifier); ok && n.NotifyRoom(kick) {
		armed = true
	}
	if n, ok := ep.rq.(provider.RoomNotifier); ok && n.NotifyRoom(kick) {
		armed = true
	}
	ep.Progress() // room freed before arming is not missed
	if !ep.rx.stalled.Load() {
		return
	}
	if !armed {
		d = min(d, time.Millisecond)
	}
	t := time.NewTimer(d)
	select {
	case <-kick:
	case <-ep.closeCh:
	case <-t.C:
	}
	t.Stop()
}

// dropCmd logs a command that was dropped as invalid (once per endpoint
// at warning level).
func (ep *endpoint) dropCmd(err error) {
	if !ep.rx.warned {
		ep.rx.warned = true
		log.Warn(provider.SubsysEPData, "dropping an invalid command from shared memory",
			slog.String("endpoint", fileName(ep.id)), slog.Any("err", err))
	}
}

// directFlags reports whether a message command with flags f can take the
// direct path: inline, or one segment holding the whole message, no ack
// requested and no cross-memory attach.
func directFlags(f uint8) bool {
	const single = shmring.FlagFirst | shmring.FlagLast
	return f&(shmring.FlagDeliver|shmring.FlagCMA) == 0 && (f&shmring.FlagInline != 0 || f&single == single)
}

// receiveDirectTag is the direct path of the tagged message whose command
// cmd is at the head of the queue: the receive that GetTag would match
// (srx.Queue.ReceiveDirectTag, directed receives by the sender's fi_addr
// as the general path looks it up) takes it under one lock. It reports
// whether the message was received; if not, the command is still at the
// head for the general path. ep.rxMu is held.
func (ep *endpoint) receiveDirectTag(cmd []byte) bool {
	c := &ep.rx.c
	if ep.own.Decode(cmd, c) != nil {
		return false // the general path drops it
	}
	ep.rx.decoded = true
	st := ep.direct.ReceiveDirectTag(ep, ep.srcOf(c.Src), c.Tag)
	ep.rx.decoded = false
	return st == srx.DirectDone
}

// ReceiveInto implements srx.Receiver: the message at the head of the
// queue (inline, or in one bounce buffer; untagged, or tagged when
// receiveDirectTag decoded it), copied into iov. Called under the receive
// queue's lock, with ep.rxMu held.
func (ep *endpoint) ReceiveInto(iov [][]byte) (int, bool) {
	c := &ep.rx.c
	if ep.rx.decoded {
		// receiveDirectTag's command, decoded from the head (which only
		// this consumer moves).
		ep.rx.decoded = false
	} else {
		cmd := ep.own.Peek()
		if cmd == nil {
			return 0, false
		}
		if ep.own.Decode(cmd, c) != nil || c.Op != shmring.OpMsg {
			return 0, false
		}
	}
	if !directFlags(c.Flags) {
		return 0, false
	}
	p := c.Payload
	buf := uint32(0)
	seg := c.Flags&shmring.FlagInline == 0
	if seg {
		if uint64(c.Len) != c.Size {
			return 0, false // not the whole message: the general path reports it
		}
		buf = c.Buf
		if c.Len > 0 {
			p = ep.own.Buf(buf)[:c.Len]
		}
	}
	srx.Scatter(iov, p)
	ep.rx.dsrc, ep.rx.ddata, ep.rx.dcq = c.Src, c.Data, c.Flags&shmring.FlagCQData != 0
	if seg {
		if ep.rx.lateBuf != 0 {
			ep.own.PutBuf(ep.rx.lateBuf - 1)
		}
		ep.rx.lateBuf = buf + 1
	}
	ep.own.Release()
	return int(c.Len), true
}

// ReceivedDirect implements srx.Receiver: the completion of the receive
// ReceiveInto filled.
func (ep *endpoint) ReceivedDirect(e *provider.RxEntry, n int, olen uint64) {
	ep.rx.directRecv++
	src := provider.AddrNotAvail
	if ep.reportSrc {
		src = ep.srcOf(ep.rx.dsrc)
	}
	if ep.rx.dcq {
		e.CQData = ep.rx.ddata
		e.Flags |= provider.FlagRemoteCQData
	}
	if olen == 0 && ep.directCQ != nil && !ep.srcErr {
		srx.CompleteDirect(ep.directCQ, ep.rxCntr, e, n, src)
		return
	}
	ep.completeRx(e, n, olen, src, ep.rx.dsrc)
}

// srcOf returns the fi_addr of sender id in the AV (AddrNotAvail if it is
// not there, or the endpoint does not need sources). ep.rxMu is held.
func (ep *endpoint) srcOf(id uint64) provider.Addr {
	if !ep.needSrc {
		return provider.AddrNotAvail
	}
	if ep.dav == nil {
		return ep.lookupSrc(ep.rx.nameBuf[:0], id)
	}
	// A cache of recent senders, valid while the AV is unchanged: a
	// stream from a few peers skips the name formatting, the AV's lock
	// and its map.
	gen := ep.dav.Gen() + 1
	c := &ep.rx.srcCache[id%srcCacheSize]
	if c.id == id && c.gen == gen {
		return c.addr
	}
	a := ep.lookupSrc(ep.rx.nameBuf[:0], id)
	*c = srcEntry{id: id, gen: gen, addr: a}
	return a
}

// lookupSrc looks id's name up in the AV (with and without its NUL),
// building it in buf.
func (ep *endpoint) lookupSrc(buf []byte, id uint64) provider.Addr {
	name := appendName(buf, id)
	if a := ep.av.Reverse(name); a != provider.AddrNotAvail {
		return a
	}
	if a := ep.av.Reverse(name[:len(name)-1]); a != provider.AddrNotAvail {
		return a
	}
	return ep.sepSource(buf, id) // a transmit context of a scalable endpoint
}

func (ep *endpoint) get(tagged bool, src provider.Addr, size, tag uint64) (*provider.RxEntry, error) {
	if tagged {
		return ep.rq.GetTag(src, size, tag)
	}
	return ep.rq.GetMsg(src, size)
}

func (ep *endpoint) queue(e *provider.RxEntry, tagged bool) error {
	if tagged {
		return ep.rq.QueueTag(e)
	}
	return ep.rq.QueueMsg(e)
}

func setCQData(e *provider.RxEntry, c *shmring.Cmd) {
	if c.Flags&shmring.FlagCQData != 0 {
		e.CQData = c.Data
		e.Flags |= provider.FlagRemoteCQData
	}
}

// completeRx writes the completion of a receive that got n bytes, olen
// more not fitting, from src, sent by the endpoint of id: with
// FI_SOURCE_ERR, a source not in the AV completes in error with id's name
// (srx.CompleteFrom).
func (ep *endpoint) completeRx(e *provider.RxEntry, n int, olen uint64, src provider.Addr, id uint64) {
	if !ep.reportSrc {
		src = provider.AddrNotAvail
	}
	if ep.srcErr && src == provider.AddrNotAvail {
		// Not under rxMu (StartMsg): a buffer of its own.
		srx.CompleteFrom(ep.rxCQ, ep.rxCntr, e, n, olen, src, appendName(make([]byte, 0, 64), id), true)
		return
	}
	srx.Complete(ep.rxCQ, ep.rxCntr, e, n, olen, src)
}

// rxMsg handles a message command; false means it must stay queued
// (back-pressure) and draining stops.
func (ep *endpoint) rxMsg(c *shmring.Cmd) bool {
	tagged := c.Op == shmring.OpTagged
	if c.Flags&shmring.FlagCMA != 0 {
		return ep.rxCMA(c, tagged)
	}
	if c.Flags&shmring.FlagInline == 0 {
		return ep.rxSegment(c, tagged)
	}
	src := ep.srcOf(c.Src)
	e, err := ep.get(tagged, src, c.Size, c.Tag)
	switch {
	case err == nil:
		setCQData(e, c)
		n, olen := srx.Deliver(e, c.Payload)
		ep.completeRx(e, n, olen, src, c.Src)
		ep.rq.FreeEntry(e)
		if c.Flags&shmring.FlagDeliver != 0 {
			ep.sendAck(c.Src, c.MsgID, 0)
		}
		return true
	case err == provider.ENOENT && e != nil:
		ub := ep.getUbuf(uint64(len(c.Payload)))
		if ub == nil {
			ep.rq.FreeEntry(e)
			return false
		}
		ub.n = copy(ub.b, c.Payload)
		ub.src = c.Src
		ub.ack, ub.msgID = c.Flags&shmring.FlagDeliver != 0, c.MsgID
		ep.queueUnexpected(e, ub, c, tagged)
		return true
	case err == provider.EAGAIN:
		return false
	}
	return true // the receive queue is closed: the message is dropped
}

// queueUnexpected queues e, whose data is in ub.
func (ep *endpoint) queueUnexpected(e *provider.RxEntry, ub *ubuf, c *shmring.Cmd, tagged bool) {
	setCQData(e, c)
	e.Peer = ep
	e.PeerContext = ub
	if ep.queue(e, tagged) != nil {
		ep.ackUbuf(ub, provider.ECANCELED)
		ep.putUbuf(ub)
		ep.rq.FreeEntry(e)
	}
}

// rxSegment handles one segment of a message.
func (ep *endpoint) rxSegment(c *shmring.Cmd, tagged bool) bool {
	const single = shmring.FlagFirst | shmring.FlagLast
	if c.Flags&single == single && uint64(c.Len) == c.Size && len(ep.rx.segs) == 0 {
		return ep.rxOneSegment(c, tagged)
	}
	st := ep.rx.segs[c.Src]
	if c.Flags&shmring.FlagFirst != 0 {
		if st != nil {
			// The sender started a new message before finishing the
			// last one: the last one can never complete.
			ep.dropCmd(shmring.ErrBadLength)
			ep.abortSeg(c.Src, st, provider.EIO)
		}
		src := ep.srcOf(c.Src)
		e, err := ep.get(tagged, src, c.Size, c.Tag)
		var ub *ubuf
		switch {
		case err == nil:
		case err == provider.ENOENT && e != nil:
			if ub = ep.getUbuf(c.Size); ub == nil {
				ep.rq.FreeEntry(e)
				return false
			}
			ub.src = c.Src
			ub.ack, ub.msgID = c.Flags&shmring.FlagDeliver != 0, c.MsgID
		case err == provider.EAGAIN:
			return false
		default:
			ep.own.PutBuf(c.Buf)
			return true
		}
		setCQData(e, c)
		st = ep.newSeg()
		*st = rxSeg{msgID: c.MsgID, total: c.Size, tagged: tagged, src: src, e: e, ub: ub,
			ack: c.Flags&shmring.FlagDeliver != 0}
		ep.rx.segs[c.Src] = st
	} else if st == nil || st.msgID != c.MsgID || st.tagged != tagged {
		ep.dropCmd(shmring.ErrBadLength)
		ep.own.PutBuf(c.Buf)
		return true
	}
	if uint64(c.Len) > st.total-st.off {
		ep.dropCmd(shmring.ErrBadLength)
		ep.own.PutBuf(c.Buf)
		ep.abortSeg(c.Src, st, provider.EIO)
		return true
	}
	if c.Len > 0 {
		data := ep.own.Buf(c.Buf)[:c.Len]
		if st.ub != nil {
			copy(st.ub.b[st.off:], data)
		} else {
			st.placed += uint64(scatterAt(st.e.IOV, st.off, data))
		}
		st.off += uint64(c.Len)
		ep.own.PutBuf(c.Buf)
	}
	if c.Flags&shmring.FlagLast == 0 && st.off < st.total {
		return true
	}
	if st.off != st.total {
		ep.abortSeg(c.Src, st, provider.EIO)
		return true
	}
	delete(ep.rx.segs, c.Src)
	if st.ub != nil {
		st.ub.n = int(st.total)
		e := st.e
		e.Peer = ep
		e.PeerContext = st.ub
		if ep.queue(e, tagged) != nil {
			ep.ackUbuf(st.ub, provider.ECANCELED)
			ep.putUbuf(st.ub)
			ep.rq.FreeEntry(e)
		}
	} else {
		ep.completeRx(st.e, int(st.placed), st.total-st.placed, st.src, c.Src)
		ep.rq.FreeEntry(st.e)
		if st.ack {
			ep.sendAck(c.Src, st.msgID, 0)
		}
	}
	ep.freeSeg(st)
	return true
}

// rxOneSegment handles a message that is one whole segment (no state
// kept between commands).
func (ep *endpoint) rxOneSegment(c *shmring.Cmd, tagged bool) bool {
	var data []byte
	if c.Len > 0 {
		data = ep.own.Buf(c.Buf)[:c.Len]
	}
	src := ep.srcOf(c.Src)
	e, err := ep.get(tagged, src, c.Size, c.Tag)
	switch {
	case err == nil:
		setCQData(e, c)
		n, olen := srx.Deliver(e, data)
		ep.own.PutBuf(c.Buf)
		ep.completeRx(e, n, olen, src, c.Src)
		ep.rq.FreeEntry(e)
		if c.Flags&shmring.FlagDeliver != 0 {
			ep.sendAck(c.Src, c.MsgID, 0)
		}
		return true
	case err == provider.ENOENT && e != nil:
		ub := ep.getUbuf(c.Size)
		if ub == nil {
			ep.rq.FreeEntry(e)
			return false
		}
		ub.n = copy(ub.b, data)
		ep.own.PutBuf(c.Buf)
		ub.src = c.Src
		ub.ack, ub.msgID = c.Flags&shmring.FlagDeliver != 0, c.MsgID
		ep.queueUnexpected(e, ub, c, tagged)
		return true
	case err == provider.EAGAIN:
		return false
	}
	ep.own.PutBuf(c.Buf)
	return true
}

// scatterAt copies data into iov at offset off; it returns the bytes
// placed (what falls beyond iov is dropped).
func scatterAt(iov [][]byte, off uint64, data []byte) int {
	n := 0
	for _, b := range iov {
		if off >= uint64(len(b)) {
			off -= uint64(len(b))
			continue
		}
		c := copy(b[off:], data[n:])
		n += c
		off = 0
		if n == len(data) {
			break
		}
	}
	return n
}

func (ep *endpoint) newSeg() *rxSeg {
	if k := len(ep.rx.segFree); k > 0 {
		st := ep.rx.segFree[k-1]
		ep.rx.segFree = ep.rx.segFree[:k-1]
		return st
	}
	return &rxSeg{}
}

func (ep *endpoint) freeSeg(st *rxSeg) {
	*st = rxSeg{}
	ep.rx.segFree = append(ep.rx.segFree, st)
}

// abortSeg ends segmented message st of sender id with error e.
func (ep *endpoint) abortSeg(id uint64, st *rxSeg, e provider.Errno) {
	delete(ep.rx.segs, id)
	if st.ub != nil {
		ep.putUbuf(st.ub)
	} else {
		srx.CompleteErr(ep.rxCQ, ep.rxCntr, st.e, e, provider.AddrNotAvail)
	}
	if st.ack {
		ep.sendAck(id, st.msgID, uint64(e))
	}
	ep.rq.FreeEntry(st.e)
	ep.freeSeg(st)
}

// close ends the receive side (Close): messages in the middle of their
// segments complete with FI_ECANCELED. ep.rxMu is held.
func (r *rxState) close(ep *endpoint) {
	if ep.rq == nil {
		return
	}
	for id, st := range r.segs {
		ep.abortSeg(id, st, provider.ECANCELED)
	}
}

// AddrInserted resolves the sources of queued unexpected messages that
// were unknown when they arrived (fi_ops_srx_owner.foreach_unspec_addr).
// The owner's queue may hold entries of other endpoints (a shared or
// imported SRX): only those this endpoint queued are looked up in its AV.
func (ep *endpoint) AddrInserted() {
	if ep.state.Load() != stateEnabled || !ep.needSrc {
		return
	}
	var buf [64]byte
	ep.rq.ForeachUnspecAddr(func(e *provider.RxEntry) provider.Addr {
		ub, ok := e.PeerContext.(*ubuf)
		if !ok || ub == nil || e.Peer != provider.SRXPeer(ep) {
			return provider.AddrNotAvail
		}
		return ep.lookupSrc(buf[:0], ub.src)
	})
}

// StartMsg delivers a queued unexpected message into the receive that
// now matches it (fi_ops_srx_peer.start_msg).
func (ep *endpoint) StartMsg(e *provider.RxEntry) error {
	ub, ok := e.PeerContext.(*ubuf)
	if !ok || ub == nil {
		return provider.EINVAL
	}
	e.PeerContext = nil
	n, olen := srx.Deliver(e, ub.b[:ub.n])
	ep.completeRx(e, n, olen, e.Addr, ub.src)
	ep.ackUbuf(ub, 0)
	ep.putUbuf(ub)
	ep.rq.FreeEntry(e)
	return nil
}

// StartTag is StartMsg for tagged messages.
func (ep *endpoint) StartTag(e *provider.RxEntry) error { return ep.StartMsg(e) }

// DiscardMsg drops a queued unexpected message without a completion.
func (ep *endpoint) DiscardMsg(e *provider.RxEntry) error {
	ub, ok := e.PeerContext.(*ubuf)
	if !ok || ub == nil {
		return provider.EINVAL
	}
	e.PeerContext = nil
	ep.ackUbuf(ub, 0)
	ep.putUbuf(ub)
	ep.rq.FreeEntry(e)
	return nil
}

// DiscardTag is DiscardMsg for tagged messages.
func (ep *endpoint) DiscardTag(e *provider.RxEntry) error { return ep.DiscardMsg(e) }

func ubufClass(n uint64) int {
	if n <= 1<<ubufMinShift {
		return 0
	}
	return bits.Len64(n-1) - ubufMinShift
}

// getUbuf returns a buffer for an unexpected message of n bytes, or nil
// when the endpoint holds as much unexpected data as it may.
func (ep *endpoint) getUbuf(n uint64) *ubuf {
	ep.umu.Lock()
	defer ep.umu.Unlock()
	if ep.unexpN >= MaxUnexpected || uint64(ep.unexpSize)+n > MaxUnexpectedBytes {
		return nil
	}
	if n > ubufMaxPooled {
		ep.unexpN++
		ep.unexpSize += int(n)
		return &ubuf{b: make([]byte, n), class: -1}
	}
	c := ubufClass(n)
	size := 1 << (c + ubufMinShift)
	ep.unexpN++
	ep.unexpSize += size
	if k := len(ep.ubufFree[c]); k > 0 {
		u := ep.ubufFree[c][k-1]
		ep.ubufFree[c] = ep.ubufFree[c][:k-1]
		return u
	}
	return &ubuf{b: make([]byte, size), class: c}
}

func (ep *endpoint) putUbuf(u *ubuf) {
	ep.umu.Lock()
	ep.unexpN--
	ep.unexpSize -= len(u.b)
	u.n, u.src, u.ack, u.msgID = 0, 0, false, 0
	if u.class >= 0 {
		ep.ubufFree[u.class] = append(ep.ubufFree[u.class], u)
	}
	ep.umu.Unlock()
}

// ackUbuf acks the unexpected message in ub if its sender waits for it.
func (ep *endpoint) ackUbuf(ub *ubuf, status provider.Errno) {
	if ub.ack {
		ub.ack = false
		ep.sendAck(ub.src, ub.msgID, uint64(status))
	}
}

// sendAck pushes an ack for message msgID into the queue of sender src
// (delivery complete); status 0 is success, else an errno. An ack that
// does not fit now is kept and pushed by a later Progress. Safe from any
// goroutine.
func (ep *endpoint) sendAck(src, msgID, status uint64) {
	if ep.enter() != 0 {
		return // closed: the sender learns it from the closing flag
	}
	defer ep.exit()
	p := ep.peerByID(src)
	if p == nil {
		return // the sender is gone (or not ours to write)
	}
	if ep.nAcksOut.Load() == 0 && pushAck(ep.id, p, msgID, status) {
		return
	}
	ep.umu.Lock()
	ep.acksOut = append(ep.acksOut, ackOut{src: src, msgID: msgID, status: status})
	ep.nAcksOut.Store(int32(len(ep.acksOut)))
	ep.umu.Unlock()
}

func pushAck(self uint64, p *peer, msgID, status uint64) bool {
	pos, cmd, ok := p.r.Reserve()
	if !ok {
		return false
	}
	c := shmring.Cmd{Op: shmring.OpAck, Src: self, MsgID: msgID, Data: status}
	shmring.PutHeader(cmd, &c)
	p.r.Publish(pos)
	wake(p)
	return true
}

// flushAcks pushes the acks kept by sendAck, in order.
func (ep *endpoint) flushAcks() {
	ep.umu.Lock()
	defer ep.umu.Unlock()
	k := 0
	for ; k < len(ep.acksOut); k++ {
		a := ep.acksOut[k]
		p := ep.peerByID(a.src)
		if p != nil && !pushAck(ep.id, p, a.msgID, a.status) {
			break
		}
	}
	ep.acksOut = append(ep.acksOut[:0], ep.acksOut[k:]...)
	ep.nAcksOut.Store(int32(len(ep.acksOut)))
}
