package sim

import (
	"cmp"
	"container/heap"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/wire/simwire"
	"github.com/gofabric/fabric/provider"
)

// Endpoint states.
const (
	stateCreated int32 = iota
	stateEnabled
	stateClosed
)

// endpoint is a sim endpoint (FI_EP_RDM or FI_EP_DGRAM) on a network.
//
// Locks: mu serialises Enable and Close; the network's lock guards
// closing, links, backlog and the network's queues. Sends and progress
// take the network's lock and, under it, the receive queue's and the
// CQs' locks (never the other way round: the receive queue calls
// StartMsg and DiscardMsg without its lock, and those do not take the
// network's).
type endpoint struct {
	n        *Network
	id       uint64
	name     []byte // with NUL
	reliable bool   // FI_EP_RDM
	caps     provider.Caps
	rm       bool
	state    atomic.Int32
	// outstanding counts sends whose completion is pending (tx_attr.size).
	outstanding atomic.Int32
	// credits, on a shared transmit context, is its queue
	// (provider.TxCredits): every operation holds one from startOp to
	// txComplete.
	credits provider.TxCredits
	// unexpBytes is what the endpoint's unexpected messages are charged
	// (unexpCharge), bounded by Config.MaxUnexpectedBytes.
	unexpBytes atomic.Int64

	// Set by Enable, read-only afterwards.
	txCQ, rxCQ     provider.CQOwner
	txRes          provider.CQReserver
	txCntr, rxCntr provider.CntrOwner
	rCntr, wCntr   provider.CntrOwner // FI_READ, FI_WRITE counters
	rrCntr, rwCntr provider.CntrOwner // FI_REMOTE_READ, FI_REMOTE_WRITE counters
	mr             provider.MRKeys
	av             provider.AVView
	rq             provider.SRXOwner
	needSrc        bool // look up the source fi_addr of every message
	reportSrc      bool // FI_SOURCE: completions carry it

	// Guarded by n.mu.
	closing bool
	links   map[uint64]*link
	backlog []*event // arrivals waiting for room, in order

	// remote: a stand-in for an endpoint of another process (xproc.go);
	// x: this endpoint's sockets in the cross-process mode, else nil.
	remote bool
	x      *xport

	mu      sync.Mutex
	closeCh chan struct{}
	fdUser  bool // holds a use of the network's wait descriptor (n.fdMu)
}

var (
	_ provider.Endpoint   = (*endpoint)(nil)
	_ provider.Tagged     = (*endpoint)(nil)
	_ provider.SRXPeer    = (*endpoint)(nil)
	_ provider.Waiter     = (*endpoint)(nil)
	_ provider.AVListener = (*endpoint)(nil)
)

// checkLimits refuses an Info whose limits exceed the provider's.
func checkLimits(info *provider.Info) error {
	maxMsg := uint64(MaxMsgSizeRDM)
	if info.EPAttr != nil && info.EPAttr.Type == provider.EPDgram {
		maxMsg = MaxMsgSizeDgram
	}
	if a := info.EPAttr; a != nil && a.MaxMsgSize > maxMsg {
		return provider.EINVAL
	}
	if a := info.TxAttr; a != nil && (a.IOVLimit > IOVLimit || a.InjectSize > InjectSize || a.Size > QueueSize ||
		a.RMAIOVLimit > RMAIOVLimit) {
		return provider.EINVAL
	}
	if a := info.RxAttr; a != nil && a.IOVLimit > IOVLimit {
		return provider.EINVAL
	}
	if a := info.DomainAttr; a != nil && a.CQDataSize > CQDataSize {
		return provider.EINVAL
	}
	if info.AddrFormat != provider.FormatUnspec && info.AddrFormat != provider.AddrStr {
		return provider.EINVAL
	}
	return nil
}

func newEndpoint(n *Network, info *provider.Info) (*endpoint, error) {
	if info == nil {
		return nil, provider.EINVAL
	}
	reliable := true
	if info.EPAttr != nil {
		switch info.EPAttr.Type {
		case provider.EPUnspec, provider.EPRDM:
		case provider.EPDgram:
			reliable = false
		default:
			return nil, provider.EINVAL
		}
	}
	if err := checkLimits(info); err != nil {
		return nil, err
	}
	var id uint64
	if len(info.SrcAddr) > 0 {
		var ok bool
		if id, ok = parseName(info.SrcAddr); !ok {
			return nil, provider.EINVAL
		}
	}
	ep := &endpoint{n: n, reliable: reliable, caps: info.Caps, closeCh: make(chan struct{})}
	if ep.caps == 0 {
		ep.caps = infoCaps
	}
	ep.rm = info.DomainAttr == nil || info.DomainAttr.ResourceMgmt != provider.RMDisabled
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cfg.CrossProcess {
		id, c, err := n.xbind(id)
		if err != nil {
			return nil, err
		}
		ep.id, ep.name = id, appendName(nil, id)
		n.eps[id] = ep
		ep.startXport(c)
		return ep, nil
	}
	if id == 0 {
		for {
			n.nextID++
			if n.eps[n.nextID] == nil {
				break
			}
		}
		id = n.nextID
	} else if n.eps[id] != nil {
		return nil, provider.EADDRINUSE
	}
	ep.id, ep.name = id, appendName(nil, id)
	n.eps[id] = ep
	return ep, nil
}

// Name returns the endpoint's name (fi_getname).
func (ep *endpoint) Name() ([]byte, error) {
	if ep.state.Load() == stateClosed {
		return nil, provider.EBADF
	}
	return append([]byte(nil), ep.name...), nil
}

// Enable starts the endpoint. It needs an AV (FI_ENOAV) and a receive
// queue.
func (ep *endpoint) Enable(r *provider.Resources) error {
	if r == nil {
		return provider.EINVAL
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch ep.state.Load() {
	case stateClosed:
		return provider.EBADF
	case stateEnabled:
		return nil
	}
	if r.AV == nil {
		return provider.ENOAV
	}
	if r.SRX == nil {
		return provider.EINVAL
	}
	ep.txCQ, ep.rxCQ = r.TxCQ, r.RxCQ
	ep.credits = r.TxCredits
	if ep.rm && r.TxCQ != nil {
		ep.txRes, _ = r.TxCQ.(provider.CQReserver)
	}
	ep.txCntr, ep.rxCntr = r.Cntrs[provider.CntrSend], r.Cntrs[provider.CntrRecv]
	ep.rCntr, ep.wCntr = r.Cntrs[provider.CntrRead], r.Cntrs[provider.CntrWrite]
	ep.rrCntr, ep.rwCntr = r.Cntrs[provider.CntrRemoteRead], r.Cntrs[provider.CntrRemoteWrite]
	ep.mr = r.MR
	ep.av, ep.rq = r.AV, r.SRX
	ep.reportSrc = r.Source
	// A receive queue the endpoint does not own decides for itself
	// whether receives are directed: it is told every message's source.
	ep.needSrc = r.Source || ep.caps&provider.CapDirectedRecv != 0 || !r.OwnSRX
	ep.state.Store(stateEnabled)
	return nil
}

// enter checks that a data call may proceed.
func (ep *endpoint) enter() error {
	switch ep.state.Load() {
	case stateEnabled:
		return nil
	case stateClosed:
		return provider.EBADF
	}
	return provider.EOPBADSTATE
}

// Send transmits m (fi_send, fi_sendv, fi_sendmsg, fi_senddata,
// fi_inject).
func (ep *endpoint) Send(m provider.Msg) error { return ep.post(&m, false) }

// TSend transmits the tagged message m (fi_tsend ...).
func (ep *endpoint) TSend(m provider.Msg) error { return ep.post(&m, true) }

// post copies m's payload and schedules its arrival on the network. The
// root package has validated m against the endpoint's Info; post checks
// the destination and the room for the completion. The send completes
// (FI_RDM) when the message reaches the target's receive queue, matched
// or queued as unexpected, or (FI_DGRAM) when it has left the link.
func (ep *endpoint) post(m *provider.Msg, tagged bool) error {
	if err := ep.enter(); err != nil {
		return err
	}
	dst, err := ep.dest(m.Addr)
	if err != nil {
		return err
	}
	inject := m.Flags&provider.FlagInject != 0
	comp := m.Flags&provider.FlagCompletion != 0
	res, err := ep.admit(comp)
	if err != nil {
		return err
	}
	size := m.Len()
	buf := ep.n.getBuf(size)
	gather(buf, m)
	flags := provider.FlagSend | provider.FlagMsg
	if tagged {
		flags = provider.FlagSend | provider.FlagTagged
	}

	n := ep.n
	n.mu.Lock()
	op, err := ep.startOp(buf, res, opStart{ctx: m.Context, flags: flags, comp: comp, inject: inject, cntr: ep.txCntr})
	if err != nil {
		n.mu.Unlock()
		return err
	}
	op.dc = ep.reliable && m.Flags&provider.FlagDeliveryComplete != 0
	if ep.x != nil && n.eps[dst] == nil {
		// An endpoint of another process (xproc.go).
		wm := simwire.Message{Kind: simwire.KindMsg, Tag: m.Tag, Payload: buf}
		if tagged {
			wm.Flags |= simwire.FlagTagged
		}
		if ep.reliable {
			wm.Flags |= simwire.FlagReliable
		}
		if op.dc {
			wm.Flags |= simwire.FlagDelivery
		}
		if m.Flags&provider.FlagRemoteCQData != 0 {
			wm.Flags, wm.Data = wm.Flags|simwire.FlagCQData, m.Data
		}
		ep.xsend(dst, op, &wm)
		n.putBuf(buf)
		n.mu.Unlock()
		return nil
	}
	left, arrive, lost := n.transmit(ep, dst, size, ep.reliable)
	var ev *event
	if !lost {
		ev = n.newEvent()
		ev.kind, ev.tagged, ev.src, ev.dst = evArrive, tagged, ep, dst
		ev.tag, ev.size, ev.buf = m.Tag, size, buf
		if m.Flags&provider.FlagRemoteCQData != 0 {
			ev.data, ev.hasCQD = m.Data, true
		}
	} else {
		n.stats.Dropped++
		n.putBuf(buf)
	}
	if ep.reliable && ev != nil {
		ev.tx = op
	} else {
		done := n.newEvent()
		done.kind, done.src, done.tx = evTxDone, ep, op
		n.schedule(done, left)
	}
	if ev != nil {
		n.schedule(ev, arrive)
	}
	n.mu.Unlock()
	return nil
}

// admit is the first step of a post: FI_EAGAIN when tx_attr.size
// operations are outstanding or, under FI_RM_ENABLED, the transmit CQ has
// no room for the completion comp asks for; else the reservation to write
// it into (nil without one), which the post gives back if it fails later.
func (ep *endpoint) admit(comp bool) (provider.CQReserver, error) {
	if ep.outstanding.Load() >= QueueSize {
		return nil, provider.EAGAIN
	}
	if ep.txRes == nil || !comp {
		return nil, nil
	}
	if !ep.txRes.Reserve() {
		return nil, provider.EAGAIN
	}
	return ep.txRes, nil
}

// opStart is what every post sets in its operation.
type opStart struct {
	ctx    any
	flags  provider.Flags // completion flags
	comp   bool           // write a success completion
	inject bool
	cntr   provider.CntrOwner
}

// startOp is the last step of a post, under n.mu: it refuses the post
// when the endpoint is closing (EBADF) or its shared transmit context has
// no credit left (EAGAIN), giving back what the post took (its buffer, its
// room in the CQ res); otherwise it returns a new operation set from s,
// counted as outstanding and sent, which holds the credit until
// txComplete.
func (ep *endpoint) startOp(buf []byte, res provider.CQReserver, s opStart) (*txOp, error) {
	var err error
	switch {
	case ep.closing:
		err = provider.EBADF
	case ep.credits != nil && !ep.credits.Take():
		err = provider.EAGAIN
	}
	if err != nil {
		ep.n.putBuf(buf)
		if res != nil {
			res.Unreserve()
		}
		return nil, err
	}
	op := ep.n.newOp()
	op.credit = ep.credits != nil
	op.ep, op.res = ep, res
	op.ctx, op.flags, op.comp, op.inject, op.cntr = s.ctx, s.flags, s.comp, s.inject, s.cntr
	ep.outstanding.Add(1)
	ep.n.stats.Sent++
	return op, nil
}

// txComplete ends a send: its completion (an error completion when err
// is not 0), its counter, its room in the transmit queue; op goes back
// to the pool. n.mu is held.
func (ep *endpoint) txComplete(op *txOp, err provider.Errno) {
	if op == nil {
		return
	}
	defer ep.n.freeOp(op)
	ep.outstanding.Add(-1)
	if op.credit {
		ep.credits.Give() // before the completion: its reader may post again at once
	}
	if err != 0 {
		if op.cntr != nil {
			op.cntr.IncErr()
		}
		if op.inject && op.res == nil {
			return // an inject has no completion to carry the error
		}
		ee := provider.CQErrEntry{OpContext: op.ctx, Flags: op.flags, Err: err, ProvErrno: int(err),
			Src: provider.AddrNotAvail}
		switch {
		case op.res != nil:
			_ = op.res.WriteErrReserved(&ee)
		case ep.txCQ != nil:
			_ = ep.txCQ.WriteErr(&ee)
		}
		return
	}
	if op.cntr != nil {
		op.cntr.Inc()
	}
	switch {
	case op.res != nil:
		_ = op.res.WriteReserved(op.ctx, op.flags, 0, nil, 0, 0, provider.AddrNotAvail)
	case op.comp && ep.txCQ != nil:
		_ = ep.txCQ.Write(op.ctx, op.flags, 0, nil, 0, 0, provider.AddrNotAvail)
	}
}

// ubuf holds an unexpected message until a receive matches it.
type ubuf struct {
	buf []byte
	src []byte // the sender's name
}

// srcOf returns the fi_addr of the endpoint named name in the bound AV.
func (ep *endpoint) srcOf(name []byte) provider.Addr {
	if a := ep.av.Reverse(name); a != provider.AddrNotAvail {
		return a
	}
	return ep.av.Reverse(name[:len(name)-1])
}

// holdOrDrop handles a message the endpoint cannot take now: an RDM
// message waits (false: delivered later), a datagram is dropped (true).
// n.mu is held.
func (ep *endpoint) holdOrDrop(e *event) bool {
	if ep.reliable {
		return false
	}
	n := ep.n
	n.stats.Dropped++
	n.putBuf(e.buf)
	n.freeEvent(e)
	return true
}

// deliver hands the arrival e to the receive queue: into a matching
// receive, or queued as unexpected. It reports false when the queue has
// no room now (an RDM message then waits in the backlog); a DGRAM
// message is dropped instead. n.mu is held.
func (ep *endpoint) deliver(e *event) bool {
	n := ep.n
	if ep.state.Load() != stateEnabled {
		// Not enabled yet (only another process can know its name this
		// early).
		return ep.holdOrDrop(e)
	}
	src := provider.AddrNotAvail
	if ep.needSrc {
		src = ep.srcOf(e.src.name)
	}
	var re *provider.RxEntry
	var err error
	if e.tagged {
		re, err = ep.rq.GetTag(src, uint64(e.size), e.tag)
	} else {
		re, err = ep.rq.GetMsg(src, uint64(e.size))
	}
	switch {
	case err == nil:
		ep.delivered(e)
		setCQData(re, e)
		got, olen := srx.Deliver(re, e.buf)
		ep.completeRx(re, got, olen, src)
		ep.rq.FreeEntry(re)
		n.putBuf(e.buf)
	case err == provider.ENOENT && re != nil:
		charge := unexpCharge(e.size)
		if ep.unexpBytes.Load()+charge > n.maxUnexp {
			// The endpoint holds as much unexpected data as it may: an
			// RDM message waits (back-pressure), a datagram is dropped.
			ep.rq.FreeEntry(re)
			return ep.holdOrDrop(e)
		}
		ep.unexpBytes.Add(charge)
		setCQData(re, e)
		re.Peer = ep
		re.PeerContext = n.newUbuf(e.buf, e.src.name)
		var qerr error
		if e.tagged {
			qerr = ep.rq.QueueTag(re)
		} else {
			qerr = ep.rq.QueueMsg(re)
		}
		if qerr != nil {
			ep.unexpBytes.Add(-charge)
			re.PeerContext = nil
			ep.rq.FreeEntry(re)
			n.undeliverable(e)
			return true
		}
		ep.delivered(e)
	case err == provider.EAGAIN:
		if ep.reliable {
			return false
		}
		n.stats.Dropped++
		n.putBuf(e.buf)
		n.freeEvent(e)
		return true
	default:
		// The receive queue is closed.
		n.undeliverable(e)
		return true
	}
	n.stats.Delivered++
	n.freeEvent(e)
	return true
}

// delivered ends what waited for the delivery of e (matched, or queued
// as unexpected): its delivery-complete send; n.mu is held.
func (ep *endpoint) delivered(e *event) {
	if e.tx != nil {
		e.src.txComplete(e.tx, 0)
		e.tx = nil
	}
	if e.ackReq != 0 {
		ep.xsend(e.src.id, nil, &simwire.Message{Kind: simwire.KindAck, Req: e.ackReq})
		e.ackReq = 0
	}
}

// unexpCharge is what an unexpected message of size bytes counts against
// Config.MaxUnexpectedBytes: its payload, at least 64 bytes (so that
// empty messages are bounded too).
func unexpCharge(size int) int64 { return int64(max(size, 64)) }

func setCQData(re *provider.RxEntry, e *event) {
	if e.hasCQD {
		re.CQData = e.data
		re.Flags |= provider.FlagRemoteCQData
	}
}

// completeRx writes the completion of a receive that got n bytes, olen
// more not fitting, from src.
func (ep *endpoint) completeRx(re *provider.RxEntry, got int, olen uint64, src provider.Addr) {
	if !ep.reportSrc {
		src = provider.AddrNotAvail
	}
	srx.Complete(ep.rxCQ, ep.rxCntr, re, got, olen, src)
}

// StartMsg delivers a queued unexpected message into the receive that
// now matches it (fi_ops_srx_peer.start_msg).
func (ep *endpoint) StartMsg(re *provider.RxEntry) error {
	u, ok := re.PeerContext.(*ubuf)
	if !ok || u == nil {
		return provider.EINVAL
	}
	re.PeerContext = nil
	got, olen := srx.Deliver(re, u.buf)
	ep.completeRx(re, got, olen, re.Addr)
	ep.rq.FreeEntry(re)
	ep.unexpBytes.Add(-unexpCharge(len(u.buf)))
	ep.n.freeUbuf(u)
	return nil
}

// StartTag is StartMsg for tagged messages.
func (ep *endpoint) StartTag(re *provider.RxEntry) error { return ep.StartMsg(re) }

// DiscardMsg drops a queued unexpected message without a completion.
func (ep *endpoint) DiscardMsg(re *provider.RxEntry) error {
	u, ok := re.PeerContext.(*ubuf)
	if !ok || u == nil {
		return provider.EINVAL
	}
	re.PeerContext = nil
	ep.rq.FreeEntry(re)
	ep.unexpBytes.Add(-unexpCharge(len(u.buf)))
	ep.n.freeUbuf(u)
	return nil
}

// DiscardTag is DiscardMsg for tagged messages.
func (ep *endpoint) DiscardTag(re *provider.RxEntry) error { return ep.DiscardMsg(re) }

// AddrInserted resolves the sources of queued unexpected messages that
// were unknown when they arrived (fi_ops_srx_owner.foreach_unspec_addr).
func (ep *endpoint) AddrInserted() {
	if ep.state.Load() != stateEnabled || !ep.needSrc {
		return
	}
	ep.rq.ForeachUnspecAddr(func(re *provider.RxEntry) provider.Addr {
		u, ok := re.PeerContext.(*ubuf)
		if !ok || u == nil || re.Peer != provider.SRXPeer(ep) {
			return provider.AddrNotAvail // another endpoint's: its AV decides
		}
		return ep.srcOf(u.src)
	})
}

// Cancel: sends cannot be cancelled once posted (they are on the
// network); receives are cancelled by the receive queue.
func (ep *endpoint) Cancel(ctx any) error { return provider.ENOENT }

// Progress runs one step of the network (Network.step): every endpoint
// of the network progresses, whichever one is polled.
func (ep *endpoint) Progress() {
	if ep.state.Load() != stateEnabled {
		return
	}
	ep.n.step()
}

// WaitReady blocks until the network has messages in flight (progress
// then has something to do), the deadline passes (ETIMEDOUT) or the
// endpoint is closed (EBADF).
func (ep *endpoint) WaitReady(deadline time.Time) error { return ep.n.waitReady(ep, deadline) }

// Close stops the endpoint. Its sends still on the network are taken
// off it and complete with FI_ECANCELED; messages arriving for it later
// are dropped (DGRAM) or complete at their sender with FI_EHOSTUNREACH
// (RDM).
func (ep *endpoint) Close() error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state.Load() == stateClosed {
		return provider.EBADF
	}
	ep.state.Store(stateClosed)
	n := ep.n
	n.mu.Lock()
	ep.closing = true
	close(ep.closeCh)
	if n.eps[ep.id] == ep {
		delete(n.eps, ep.id)
	}
	// Take this endpoint's sends off the network, in their order.
	var mine []*event
	k := 0
	for _, e := range n.q {
		if e.src == ep {
			mine = append(mine, e)
			continue
		}
		n.q[k] = e
		k++
	}
	if len(mine) > 0 {
		clear(n.q[k:])
		n.q = n.q[:k]
		for i, e := range n.q {
			e.idx = i
		}
		heap.Init(&n.q)
		slices.SortFunc(mine, func(a, b *event) int { return cmp.Compare(a.seq, b.seq) })
		for _, e := range mine {
			ep.txComplete(e.tx, provider.ECANCELED)
			n.putBuf(e.buf)
			n.freeEvent(e)
		}
	}
	// Its delivery-complete sends waiting for room at their targets
	// are cancelled (their messages stay there).
	for _, t := range n.blocked {
		for _, e := range t.backlog {
			if e.src == ep && e.tx != nil {
				ep.txComplete(e.tx, provider.ECANCELED)
				e.tx = nil
			}
		}
	}
	// Arrivals this endpoint had taken but could not match yet (their
	// sends have completed) are dropped with it, as messages buffered
	// by a receiver that closes are.
	for _, e := range ep.backlog {
		n.undeliverable(e)
	}
	ep.backlog = nil
	if ep.x != nil {
		ep.xcloseLocked()
	}
	n.fdRelease(ep)
	n.mu.Unlock()
	if ep.x != nil {
		ep.x.shutdown()
	}
	return nil
}
