package srx

import "github.com/gofabric/fabric/provider"

// Buffered receives (FI_BUFFERED_RECV; fi_msg(3) "Buffered Receives",
// fi_tagged(3) "Buffered Tagged Receives").
//
// With SetBuffered the queue no longer keeps an unexpected untagged
// message waiting for a receive: when the peer queues it (QueueMsg), the
// queue writes a completion at once whose context is made by
// BufConfig.Context, whose Buf is the start of the data the peer holds
// (provider.BufferedPeer, at most BufConfig.Limit bytes) and whose Len is
// the message size; FI_MORE is set when Buf is shorter than the message.
// Untagged receives posted before the message arrives still take it, as
// without the mode. Tagged receives posted in this mode carry only the
// tag (their buffers are ignored): a tagged message matching one is
// reported the same way, with the receive's context, and unmatched tagged
// messages wait for their tag as unexpected messages do.
//
// A peer that is a provider.BufferedWaiter may queue a message before it
// holds its first bytes: the message is then listed as buffered, but its
// report is written only when the peer calls BufferedArrived.
//
// A reported message stays in the queue (counted as unexpected, so that
// Config.MaxUnexpected bounds them with the others) until
// ClaimBuffered claims it into the application's buffers, which starts it
// at the peer (the completion carries FI_CLAIM), or discards it, which
// discards it at the peer with no completion. Close discards those still
// held. A claim of a message already claimed or discarded, or of a
// reference the queue never made, returns EINVAL: every report has its
// own generation, so a stale reference never reaches a later message.

// BufRef identifies a reported buffered receive.
type BufRef struct {
	e   *entry
	gen uint64
}

// BufConfig turns buffered receives on.
type BufConfig struct {
	// Min and Limit are FI_OPT_BUFFERED_MIN and FI_OPT_BUFFERED_LIMIT:
	// a completion shows at most Limit bytes; a peer that does not hold a
	// message whole holds at least Min bytes of it.
	Min, Limit uint64
	// Context returns the operation context of the completion reporting
	// ref: ctx is nil for an untagged message and the tagged receive's
	// context for a tagged one. Nil reports the BufRef itself.
	Context func(ref BufRef, ctx any, tagged bool) any
}

type bufState struct {
	cfg  BufConfig
	gen  uint64
	list list // reported and not yet claimed or discarded (state stBuffered)
}

var (
	_ provider.BufferedOwner    = (*Queue)(nil)
	_ provider.BufferedNotifier = (*Queue)(nil)
)

// SetBuffered turns buffered receives on (cfg) or off (nil; not while
// reported messages are held). Set it before messages arrive (before the
// endpoint is enabled).
func (q *Queue) SetBuffered(cfg *BufConfig) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case cfg == nil && q.buf != nil && q.buf.list.n > 0:
		// Messages already reported stay claimable: the mode stays on.
	case cfg == nil:
		q.buf = nil
	case q.buf != nil:
		q.buf.cfg = *cfg
	default:
		q.buf = &bufState{cfg: *cfg}
	}
}

// BufferedLimits implements provider.BufferedOwner.
func (q *Queue) BufferedLimits() (min, limit uint64, on bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.buf == nil {
		return 0, 0, false
	}
	return q.buf.cfg.Min, q.buf.cfg.Limit, true
}

// Buffered returns the number of buffered receives reported and not yet
// claimed or discarded.
func (q *Queue) Buffered() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.buf == nil {
		return 0
	}
	return q.buf.list.n
}

// getBuffered is get in buffered mode for a message that will be queued
// (every tagged message, and untagged ones while no receive is posted):
// ENOENT and an entry for the peer to fill and queue. An untagged message
// will be reported as soon as it is queued, so with resource management
// room for its completion is reserved now (EAGAIN without). q.mu is held;
// getBuffered unlocks it.
func (q *Queue) getBuffered(tagged bool, addr provider.Addr, size, tag uint64) (*provider.RxEntry, error) {
	if q.maxUnexp > 0 && q.nunexp >= q.maxUnexp {
		q.mu.Unlock()
		return nil, provider.EAGAIN
	}
	var res provider.CQReserver
	if q.res != nil && !tagged {
		if !q.res.Reserve() {
			q.mu.Unlock()
			return nil, provider.EAGAIN
		}
		res = q.res
	}
	return q.getUnexp(tagged, addr, size, tag, res)
}

// queueBuffered is queue in buffered mode: an untagged message is
// reported; a tagged one is reported when a tagged receive waits for its
// tag (the receive is consumed), else queued unexpected. q.mu is held;
// queueBuffered unlocks it.
func (q *Queue) queueBuffered(u *entry, tagged bool) error {
	var ctx any
	if tagged {
		p := q.findPosted(true, u.rx.Addr, u.rx.Tag)
		if p == nil {
			u.st = stUnexp
			q.unexpTag.push(u)
			q.mu.Unlock()
			return nil
		}
		ctx = p.rx.Context
		q.postedTag.remove(p)
		q.nposted--
		q.free(p)
	} else if p := q.findPosted(false, u.rx.Addr, 0); p != nil {
		// A receive posted since the peer's GetMsg takes the message,
		// as without the mode.
		if u.res != nil {
			u.res.Unreserve()
			u.res = nil
		}
		q.bindPosted(u, p)
		u.st = stHanded
		q.unexpLeft()
		q.mu.Unlock()
		_ = start(u)
		return nil
	}
	q.report(u, ctx)
	return nil
}

// postBufferedTag posts a tagged receive in buffered mode: the first
// unexpected message matching it is reported now; otherwise the tag is
// posted (its buffers are not kept). q.mu is held; postBufferedTag unlocks
// it.
func (q *Queue) postBufferedTag(m *provider.Msg, addr provider.Addr) error {
	if u := q.findUnexp(true, addr, m.Tag, m.Ignore); u != nil {
		q.unexpTag.remove(u)
		q.report(u, m.Context)
		return nil
	}
	if q.nposted >= q.size {
		q.mu.Unlock()
		return provider.EAGAIN
	}
	p := q.alloc()
	p.st = stPosted
	p.tag = true
	p.rx.Context = m.Context
	p.rx.Addr = addr
	p.rx.Tag = m.Tag
	p.rx.Ignore = m.Ignore
	p.rx.Complete = m.Flags&provider.FlagCompletion != 0
	p.rx.Flags = baseFlags(true)
	q.postedTag.push(p)
	q.nposted++
	q.mu.Unlock()
	return nil
}

// report moves queued message u (in no list) to the buffered list and
// writes its completion (writeReport), or, when the peer does not hold
// the message's first bytes yet (provider.BufferedWaiter), leaves that to
// BufferedArrived. q.mu is held; report unlocks it.
func (q *Queue) report(u *entry, ctx any) {
	b := q.buf
	b.gen++
	u.st = stBuffered
	u.seq = b.gen
	b.list.push(u)
	if w, ok := u.rx.Peer.(provider.BufferedWaiter); ok && !w.BufferedReady(&u.rx) {
		u.waitData, u.bufCtx = true, ctx
		q.mu.Unlock()
		return
	}
	q.writeReport(u, ctx)
}

// BufferedArrived implements provider.BufferedNotifier: the report of e,
// which waited for its peer's data, is written now.
func (q *Queue) BufferedArrived(e *provider.RxEntry) {
	if e == nil {
		return
	}
	u, _ := e.OwnerContext.(*entry)
	if u == nil {
		return
	}
	q.mu.Lock()
	if u.q != q || u.st != stBuffered || !u.waitData || q.buf == nil {
		q.mu.Unlock()
		return
	}
	ctx := u.bufCtx
	u.waitData, u.bufCtx = false, nil
	q.writeReport(u, ctx)
}

// writeReport writes the completion of buffered message u (listed):
// the data the peer holds, at most the limit, FI_MORE when that is not
// the whole message. q.mu is held; writeReport unlocks it.
func (q *Queue) writeReport(u *entry, ctx any) {
	b := q.buf
	ref := BufRef{e: u, gen: u.seq}
	var data []byte
	if bp, ok := u.rx.Peer.(provider.BufferedPeer); ok {
		data = bp.Buffered(&u.rx)
	}
	if uint64(len(data)) > b.cfg.Limit {
		data = data[:b.cfg.Limit]
	}
	if uint64(len(data)) > u.rx.MsgSize {
		data = data[:u.rx.MsgSize]
	}
	flags := baseFlags(u.tag)
	var cqData uint64
	if u.rx.Flags&provider.FlagRemoteCQData != 0 {
		flags |= provider.FlagRemoteCQData
		cqData = u.rx.CQData
	}
	if uint64(len(data)) < u.rx.MsgSize {
		flags |= provider.FlagMore
	}
	size, tag, tagged := u.rx.MsgSize, u.rx.Tag, u.tag
	src := u.rx.Addr
	if src == provider.AddrUnspec {
		src = provider.AddrNotAvail
	}
	res := u.res
	u.res = nil
	cq, mk := q.cq, b.cfg.Context
	q.mu.Unlock()
	var opCtx any
	if mk != nil {
		opCtx = mk(ref, ctx, tagged)
	} else {
		opCtx = ref
	}
	switch {
	case res != nil && cq != nil && sameCQ(res, cq):
		_ = res.WriteReserved(opCtx, flags, size, data, cqData, tag, src)
	default:
		if res != nil {
			res.Unreserve()
		}
		if cq != nil {
			_ = cq.Write(opCtx, flags, size, data, cqData, tag, src)
		}
	}
}

// ClaimBuffered claims (discard false) or discards the buffered receive
// ref, reported by this queue with a tagged or an untagged message. A
// claim places the whole message in m's buffers through the peer, whose
// completion has m.Context and FI_CLAIM (with resource management, room
// for it is reserved now: EAGAIN without). A discard frees it at the peer
// and writes no completion. It returns EINVAL when ref is not a buffered
// receive this queue holds (claimed or discarded already, another
// queue's, or of the other kind), EBADF once closed and EOPNOTSUPP when
// buffered receives are off.
func (q *Queue) ClaimBuffered(ref BufRef, m *provider.Msg, tagged, discard bool) error {
	if m == nil {
		return provider.EINVAL
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return provider.EBADF
	}
	if q.buf == nil {
		q.mu.Unlock()
		return provider.EOPNOTSUPP
	}
	u := ref.e
	if u == nil || u.q != q || u.st != stBuffered || u.seq != ref.gen || u.tag != tagged || u.waitData {
		q.mu.Unlock()
		return provider.EINVAL
	}
	if !discard && q.res != nil && m.Flags&provider.FlagCompletion != 0 {
		if !q.res.Reserve() {
			q.mu.Unlock()
			return provider.EAGAIN
		}
		u.res = q.res
	}
	q.buf.list.remove(u)
	q.unexpLeft()
	u.seq = 0
	u.st = stHanded
	if discard {
		q.mu.Unlock()
		return discardBuffered(u)
	}
	setRecv(u, m, baseFlags(tagged)|provider.FlagClaim)
	q.mu.Unlock()
	_ = start(u)
	return nil
}

// discardBuffered discards u at its peer; a peer that refuses leaves the
// entry to the queue, which frees it.
func discardBuffered(u *entry) error {
	if err := discard(u); err != nil {
		u.q.FreeEntry(&u.rx)
	}
	return nil
}
