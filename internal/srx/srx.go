package srx

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/provider"
)

// DefaultMinMultiRecv is the FI_OPT_MIN_MULTI_RECV value of a new queue.
// fi_endpoint(3) leaves the default to the provider; libfabric's tcp and
// util code use 16 KiB.
const DefaultMinMultiRecv = 16384

// DefaultSize is the receive queue depth used when Config.Size is 0.
const DefaultSize = 1024

// inlineIOV is the number of iovec entries an entry stores without
// allocating.
const inlineIOV = 4

// Config describes a receive queue.
type Config struct {
	// Size is the receive queue depth (rx_attr.size): the number of
	// receives that may be pending at once. Posting beyond it returns
	// EAGAIN. 0 (or less) means DefaultSize.
	Size int
	// Directed enables FI_DIRECTED_RECV: a posted receive's Addr restricts
	// the source (AddrUnspec accepts anyone). When false, Addr is ignored.
	Directed bool
	// Tagged enables tagged receives (FI_TAGGED). Post(m, true) on a queue
	// without it returns EOPNOTSUPP. Unexpected tagged messages are queued
	// regardless.
	Tagged bool
	// MinMultiRecv is the initial FI_OPT_MIN_MULTI_RECV. 0 means
	// DefaultMinMultiRecv.
	MinMultiRecv uint64
	// MaxUnexpected bounds the unexpected messages held (see the package
	// documentation). 0 means unbounded.
	MaxUnexpected int
	// ResourceMgmt (FI_RM_ENABLED) makes the queue reserve room in the CQ
	// given to SetCompletion, when it implements provider.CQReserver,
	// before a receive that writes a completion is matched (see the
	// package documentation).
	ResourceMgmt bool
}

type state uint8

const (
	stFree     state = iota
	stPosted         // in a posted list (application receive or multi-recv buffer)
	stHanded         // handed to a peer (matched, started or being discarded)
	stGot            // returned with ENOENT, not queued yet
	stUnexp          // queued unexpected message
	stReleased       // multi-recv buffer released, waiting for in-flight children
	stBuffered       // reported buffered receive (bufrecv.go), in bufState.list
)

// entry is the owner's receive entry; rx.OwnerContext points back to it.
type entry struct {
	rx   provider.RxEntry
	q    *Queue
	prev *entry
	next *entry
	st   state
	tag  bool // tagged list

	// posted tagged receives: the tag index (tagIndex); buffered
	// receives: the report's generation (BufRef)
	seq          uint64
	bkt          *bucket // nil: in the index's wild list
	bprev, bnext *entry

	// unexpected messages
	claimed  bool
	claimCtx any
	// buffered receives: the report waits for the peer's data
	// (provider.BufferedWaiter), with the context it will carry
	waitData bool
	bufCtx   any

	// multi-recv buffer
	multi       bool
	buf         []byte
	off         uint64
	min         uint64
	outstanding int
	needRelease bool // write a separate FI_MULTI_RECV entry when the last child is freed
	cancelled   bool // write FI_ECANCELED when the last child is freed

	// multi-recv child
	parent *entry

	// res is the CQ in which room for this entry's completion was
	// reserved (FI_RM_ENABLED); Complete writes into it, FreeEntry gives
	// it back if unused.
	res provider.CQReserver

	iov  [inlineIOV][]byte
	desc [inlineIOV]provider.MRDesc
}

// setDesc copies the descriptors d into u (rx.Desc), inline when they fit.
func setDesc(u *entry, d []provider.MRDesc) {
	switch n := len(d); {
	case n == 0:
		u.rx.Desc = nil
	case n <= inlineIOV:
		copy(u.desc[:], d)
		u.rx.Desc = u.desc[:n:n]
	default:
		u.rx.Desc = append([]provider.MRDesc(nil), d...)
	}
}

type list struct {
	head, tail *entry
	n          int
	idx        *tagIndex // posted tagged receives only
}

func (l *list) push(e *entry) {
	e.prev, e.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = e
	} else {
		l.head = e
	}
	l.tail = e
	l.n++
	if l.idx != nil {
		l.idx.add(e)
	}
}

func (l *list) remove(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = nil, nil
	l.n--
	if l.idx != nil {
		l.idx.del(e)
	}
}

// tagIndex finds the first posted tagged receive matching a message
// without walking the receives that cannot match: receives that take one
// tag from any source (ignore 0, no directed source) are kept by tag, in
// posting order; the others (wildcards) in one list in posting order. The
// match is the earlier of the first receive of the message's tag and the
// first matching wildcard, so that matching cost does not grow with the
// number of receives posted for other tags.
type tagIndex struct {
	seq     uint64
	buckets map[uint64]*bucket
	wild    bucket
	free    []*bucket
}

// bucket is a list of posted receives linked by bprev/bnext.
type bucket struct {
	head, tail *entry
	tag        uint64
}

func (b *bucket) push(e *entry) {
	e.bprev, e.bnext = b.tail, nil
	if b.tail != nil {
		b.tail.bnext = e
	} else {
		b.head = e
	}
	b.tail = e
}

func (b *bucket) remove(e *entry) {
	if e.bprev != nil {
		e.bprev.bnext = e.bnext
	} else {
		b.head = e.bnext
	}
	if e.bnext != nil {
		e.bnext.bprev = e.bprev
	} else {
		b.tail = e.bprev
	}
	e.bprev, e.bnext = nil, nil
}

func (x *tagIndex) add(e *entry) {
	x.seq++
	e.seq = x.seq
	if e.rx.Ignore != 0 || e.rx.Addr != provider.AddrUnspec {
		e.bkt = nil
		x.wild.push(e)
		return
	}
	b := x.buckets[e.rx.Tag]
	if b == nil {
		if n := len(x.free); n > 0 {
			b = x.free[n-1]
			x.free = x.free[:n-1]
		} else {
			b = &bucket{}
		}
		b.tag = e.rx.Tag
		x.buckets[b.tag] = b
	}
	e.bkt = b
	b.push(e)
}

func (x *tagIndex) del(e *entry) {
	b := e.bkt
	if b == nil {
		x.wild.remove(e)
		return
	}
	b.remove(e)
	e.bkt = nil
	if b.head == nil {
		delete(x.buckets, b.tag)
		x.free = append(x.free, b)
	}
}

// find returns the first posted receive (in posting order) matching a
// message from addr with tag.
func (x *tagIndex) find(addr provider.Addr, tag uint64) *entry {
	var best *entry
	if b := x.buckets[tag]; b != nil {
		best = b.head
	}
	for w := x.wild.head; w != nil; w = w.bnext {
		if best != nil && w.seq > best.seq {
			break
		}
		if addrMatch(w.rx.Addr, addr) && tagMatch(w.rx.Tag, w.rx.Ignore, tag) {
			return w
		}
	}
	return best
}

// Queue is a receive queue: the owner side of a shared receive context. It
// implements provider.SRXOwner. All methods are safe for concurrent use.
type Queue struct {
	mu       sync.Mutex
	closed   bool
	size     int
	directed bool
	tagged   bool
	maxUnexp int
	rm       bool

	minMulti atomic.Uint64

	postedMsg, postedTag list
	unexpMsg, unexpTag   list
	nposted              int // pending receives (multi-recv buffers count once)
	nunexp               int // unexpected messages got or queued

	// spare is the last freed entry, taken first by alloc: a receive
	// posted after one completed (a ping-pong's repost) reuses it without
	// the pool slice's pop and append. pool holds the other free entries.
	spare *entry
	pool  []*entry

	cq   provider.CQOwner
	cntr provider.CntrOwner
	res  provider.CQReserver // cq, when rm and cq can reserve
	resq *cq.CQ              // res, when it is this module's CQ (PostBuf's room check without an interface call)

	roomKicks []chan<- struct{} // armed with NotifyRoom, fired when nunexp drops

	buf *bufState // FI_BUFFERED_RECV (bufrecv.go); nil when off
}

var (
	_ provider.SRXOwner     = (*Queue)(nil)
	_ provider.RoomNotifier = (*Queue)(nil)
)

// New returns an empty receive queue.
func New(cfg Config) *Queue {
	size := cfg.Size
	if size <= 0 {
		size = DefaultSize
	}
	q := &Queue{size: size, directed: cfg.Directed, tagged: cfg.Tagged, maxUnexp: cfg.MaxUnexpected,
		rm: cfg.ResourceMgmt}
	q.postedTag.idx = &tagIndex{buckets: map[uint64]*bucket{}}
	if cfg.MinMultiRecv == 0 {
		q.minMulti.Store(DefaultMinMultiRecv)
	} else {
		q.minMulti.Store(cfg.MinMultiRecv)
	}
	pre := q.size
	if pre > 256 {
		pre = 256
	}
	q.pool = make([]*entry, 0, pre)
	block := make([]entry, pre)
	for i := range block {
		e := &block[i]
		e.q = q
		e.rx.OwnerContext = e
		q.pool = append(q.pool, e)
	}
	return q
}

// SetCompletion sets where the queue itself writes completions (FI_PEEK
// results, FI_DISCARD, cancellations, multi-receive buffer releases,
// FI_ENOMSG) and which counter it bumps. Either may be nil. With
// Config.ResourceMgmt, cq is also where receive completions are reserved
// when it implements provider.CQReserver.
func (q *Queue) SetCompletion(c provider.CQOwner, cntr provider.CntrOwner) {
	q.mu.Lock()
	q.cq, q.cntr = c, cntr
	q.res, q.resq = nil, nil
	if q.rm {
		q.res, _ = c.(provider.CQReserver)
		q.resq, _ = c.(*cq.CQ)
	}
	q.mu.Unlock()
}

// SetMinMultiRecv sets FI_OPT_MIN_MULTI_RECV for buffers posted afterwards.
func (q *Queue) SetMinMultiRecv(v uint64) { q.minMulti.Store(v) }

// MinMultiRecv returns FI_OPT_MIN_MULTI_RECV.
func (q *Queue) MinMultiRecv() uint64 { return q.minMulti.Load() }

// Counts returns the number of pending receives and of unexpected messages.
func (q *Queue) Counts() (posted, unexpected int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.nposted, q.nunexp
}

// SizeLeft returns the number of receives that may be posted before Post
// returns EAGAIN (fi_rx_size_left).
func (q *Queue) SizeLeft() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0
	}
	return q.size - q.nposted
}

// NotifyRoom implements provider.RoomNotifier for a peer whose GetMsg or
// GetTag answered EAGAIN: kick gets a non-blocking send once an
// unexpected message leaves the queue (with Config.MaxUnexpected) or the
// queue closes, and, with resource management, once the CQ frees room.
// It reports false when the queue reserves in a CQ that is not a
// provider.RoomNotifier.
func (q *Queue) NotifyRoom(kick chan<- struct{}) bool {
	if kick == nil {
		return false
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		kickOne(kick)
		return true
	}
	res := q.res
	if q.maxUnexp > 0 {
		found := false
		for _, k := range q.roomKicks {
			if k == kick {
				found = true
				break
			}
		}
		if !found {
			q.roomKicks = append(q.roomKicks, kick)
		}
	}
	q.mu.Unlock()
	if res == nil {
		return true
	}
	n, ok := res.(provider.RoomNotifier)
	return ok && n.NotifyRoom(kick)
}

func kickOne(k chan<- struct{}) {
	select {
	case k <- struct{}{}:
	default:
	}
}

// fireRoom fires the kicks armed with NotifyRoom; q.mu is held.
func (q *Queue) fireRoom() {
	for i, k := range q.roomKicks {
		kickOne(k)
		q.roomKicks[i] = nil
	}
	q.roomKicks = q.roomKicks[:0]
}

// unexpLeft counts an unexpected message out of the queue and wakes the
// peers waiting for room in it; q.mu is held.
func (q *Queue) unexpLeft() {
	q.nunexp--
	if len(q.roomKicks) > 0 {
		q.fireRoom()
	}
}

func (q *Queue) alloc() *entry {
	if e := q.spare; e != nil {
		q.spare = nil
		return e
	}
	if n := len(q.pool); n > 0 {
		e := q.pool[n-1]
		q.pool[n-1] = nil
		q.pool = q.pool[:n-1]
		return e
	}
	e := &entry{q: q}
	e.rx.OwnerContext = e
	return e
}

func (q *Queue) free(e *entry) {
	*e = entry{q: q}
	e.rx.OwnerContext = e
	q.release(e)
}

// release keeps the free entry e for alloc; q.mu is held.
func (q *Queue) release(e *entry) {
	if q.spare == nil {
		q.spare = e
		return
	}
	q.pool = append(q.pool, e)
}

// freePosted is free for a plain posted receive (no multi-receive buffer
// or child, no reservation, no claim: the only kind ReceiveDirect
// completes). It resets only what such an entry uses, a third of the
// entry's memory, on every message of the direct path.
func (q *Queue) freePosted(e *entry) {
	if len(e.rx.IOV) > 0 && &e.rx.IOV[0] == &e.iov[0] {
		e.iov = [inlineIOV][]byte{}
	}
	if len(e.rx.Desc) > 0 && &e.rx.Desc[0] == &e.desc[0] {
		e.desc = [inlineIOV]provider.MRDesc{}
	}
	// Field by field rather than e.rx = provider.RxEntry{OwnerContext:
	// e}: the composite literal is built on the stack and copied in
	// with a write-barrier check on the whole entry, half as many
	// instructions again on every message of the direct path.
	// OwnerContext stays e.
	r := &e.rx
	r.Addr, r.MsgSize, r.Tag, r.Ignore, r.CQData, r.Flags = 0, 0, 0, 0, 0, 0
	r.Context, r.PeerContext, r.Peer = nil, nil, nil
	r.SetBuf(nil) // clears the inline buffer SetBuf fills
	r.IOV, r.Desc = nil, nil
	r.Complete = false
	e.st, e.tag = stFree, false
	q.release(e)
}

func baseFlags(tagged bool) provider.Flags {
	if tagged {
		return provider.FlagTagged | provider.FlagRecv
	}
	return provider.FlagMsg | provider.FlagRecv
}

func tagMatch(recvTag, ignore, sendTag uint64) bool { return (recvTag^sendTag)&^ignore == 0 }

// addrMatch reports whether a receive filtering on want accepts a message
// from got. want is AddrUnspec when the queue is not directed.
func addrMatch(want, got provider.Addr) bool {
	return want == provider.AddrUnspec || want == got
}

func (q *Queue) posted(tagged bool) *list {
	if tagged {
		return &q.postedTag
	}
	return &q.postedMsg
}

func (q *Queue) unexp(tagged bool) *list {
	if tagged {
		return &q.unexpTag
	}
	return &q.unexpMsg
}

// findPosted returns the first posted receive matching a message.
func (q *Queue) findPosted(tagged bool, addr provider.Addr, tag uint64) *entry {
	if tagged {
		return q.postedTag.idx.find(addr, tag)
	}
	for p := q.posted(tagged).head; p != nil; p = p.next {
		if addrMatch(p.rx.Addr, addr) && (!tagged || tagMatch(p.rx.Tag, p.rx.Ignore, tag)) {
			return p
		}
	}
	return nil
}

// findUnexp returns the first unclaimed unexpected message matching a
// receive.
func (q *Queue) findUnexp(tagged bool, addr provider.Addr, tag, ignore uint64) *entry {
	for u := q.unexp(tagged).head; u != nil; u = u.next {
		if !u.claimed && addrMatch(addr, u.rx.Addr) && (!tagged || tagMatch(tag, ignore, u.rx.Tag)) {
			return u
		}
	}
	return nil
}

// GetMsg implements provider.SRXOwner.
func (q *Queue) GetMsg(addr provider.Addr, size uint64) (*provider.RxEntry, error) {
	return q.get(false, addr, size, 0)
}

// GetTag implements provider.SRXOwner.
func (q *Queue) GetTag(addr provider.Addr, size uint64, tag uint64) (*provider.RxEntry, error) {
	return q.get(true, addr, size, tag)
}

func (q *Queue) get(tagged bool, addr provider.Addr, size, tag uint64) (*provider.RxEntry, error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil, provider.EBADF
	}
	if q.buf != nil && (tagged || q.postedMsg.head == nil) {
		return q.getBuffered(tagged, addr, size, tag) // unlocks
	}
	if p := q.findPosted(tagged, addr, tag); p != nil {
		// FI_RM_ENABLED: the completion's room is claimed before the
		// message is taken; without it the peer keeps the message (EAGAIN).
		var res provider.CQReserver
		if q.res != nil && (p.rx.Complete || p.multi) {
			if !q.res.Reserve() {
				q.mu.Unlock()
				return nil, provider.EAGAIN
			}
			res = q.res
		}
		var e *entry
		if p.multi {
			e = q.alloc()
			e.tag = tagged
			q.carve(p, e, size)
		} else {
			q.posted(tagged).remove(p)
			q.nposted--
			e = p
		}
		e.st = stHanded
		e.res = res
		e.rx.Addr = addr
		e.rx.MsgSize = size
		e.rx.Tag = tag
		q.mu.Unlock()
		return &e.rx, nil
	}
	if q.maxUnexp > 0 && q.nunexp >= q.maxUnexp {
		q.mu.Unlock()
		return nil, provider.EAGAIN
	}
	return q.getUnexp(tagged, addr, size, tag, nil)
}

// getUnexp hands the peer a new entry for a message no receive matched
// (ENOENT): it fills it and queues it as unexpected. res holds room
// reserved for the message's completion, if any. q.mu is held; getUnexp
// unlocks it.
func (q *Queue) getUnexp(tagged bool, addr provider.Addr, size, tag uint64, res provider.CQReserver) (*provider.RxEntry, error) {
	e := q.alloc()
	e.st = stGot
	e.tag = tagged
	e.res = res
	e.rx.Addr = addr
	e.rx.MsgSize = size
	e.rx.Tag = tag
	e.rx.Flags = baseFlags(tagged)
	q.nunexp++
	q.mu.Unlock()
	return &e.rx, provider.ENOENT
}

// carve assigns the next part of multi-recv buffer p to entry c for a
// message of size bytes, and releases p when its free space falls below its
// minimum. c keeps its peer fields (unexpected messages).
func (q *Queue) carve(p, c *entry, size uint64) {
	avail := uint64(len(p.buf)) - p.off
	n := size
	if n > avail {
		n = avail
	}
	c.rx.SetBuf(p.buf[p.off : p.off+n : p.off+n])
	setDesc(c, p.rx.Desc)
	c.rx.Context = p.rx.Context
	c.rx.Complete = p.rx.Complete
	c.rx.Flags = baseFlags(p.tag) | c.rx.Flags&provider.FlagRemoteCQData
	c.rx.Ignore = p.rx.Ignore
	c.parent = p
	p.off += n
	p.outstanding++
	left := uint64(len(p.buf)) - p.off
	if left == 0 || left < p.min {
		q.posted(p.tag).remove(p)
		q.nposted--
		p.st = stReleased
		if p.outstanding == 1 {
			c.rx.Flags |= provider.FlagMultiRecv
			c.rx.Complete = true
		} else {
			p.needRelease = true
		}
	}
}

// setRecv fills unexpected entry u with a receive's buffers and context.
func setRecv(u *entry, m *provider.Msg, flags provider.Flags) {
	if m.IOV != nil {
		n := len(m.IOV)
		if n <= inlineIOV {
			copy(u.iov[:], m.IOV)
			u.rx.IOV = u.iov[:n:n]
		} else {
			u.rx.IOV = append([][]byte(nil), m.IOV...)
		}
		setDesc(u, m.Descs)
	} else {
		u.rx.SetBuf(m.Buf)
		if m.Desc != nil {
			setDesc(u, []provider.MRDesc{m.Desc})
		} else {
			u.rx.Desc = nil
		}
	}
	u.rx.Context = m.Context
	u.rx.Ignore = m.Ignore
	u.rx.Complete = m.Flags&provider.FlagCompletion != 0
	u.rx.Flags = flags | u.rx.Flags&provider.FlagRemoteCQData
}

// bindPosted fills unexpected entry u from posted receive p (consuming p or
// carving from it). Called with the lock held.
func (q *Queue) bindPosted(u, p *entry) {
	if p.multi {
		q.carve(p, u, u.rx.MsgSize)
		return
	}
	q.posted(p.tag).remove(p)
	q.nposted--
	n := copy(u.iov[:], p.rx.IOV)
	if n == len(p.rx.IOV) {
		u.rx.IOV = u.iov[:n:n]
	} else {
		u.rx.IOV = append([][]byte(nil), p.rx.IOV...)
	}
	setDesc(u, p.rx.Desc)
	u.rx.Context = p.rx.Context
	u.rx.Complete = p.rx.Complete
	u.rx.Ignore = p.rx.Ignore
	u.rx.Flags = p.rx.Flags | u.rx.Flags&provider.FlagRemoteCQData
	q.free(p)
}

// QueueMsg implements provider.SRXOwner.
func (q *Queue) QueueMsg(e *provider.RxEntry) error { return q.queue(e, false) }

// QueueTag implements provider.SRXOwner.
func (q *Queue) QueueTag(e *provider.RxEntry) error { return q.queue(e, true) }

func (q *Queue) queue(re *provider.RxEntry, tagged bool) error {
	if re == nil {
		return provider.EINVAL
	}
	u, ok := re.OwnerContext.(*entry)
	if !ok || u.q != q || &u.rx != re {
		return provider.EINVAL
	}
	q.mu.Lock()
	if u.st != stGot || u.tag != tagged || re.Peer == nil {
		q.mu.Unlock()
		return provider.EINVAL
	}
	if q.closed {
		u.st = stHanded
		q.unexpLeft()
		q.mu.Unlock()
		_ = discard(u)
		return nil
	}
	if q.buf != nil {
		return q.queueBuffered(u, tagged) // unlocks
	}
	if p := q.findPosted(tagged, re.Addr, re.Tag); p != nil {
		q.bindPosted(u, p)
		u.st = stHanded
		q.unexpLeft()
		q.mu.Unlock()
		_ = start(u)
		return nil
	}
	u.st = stUnexp
	q.unexp(tagged).push(u)
	q.mu.Unlock()
	return nil
}

func start(u *entry) error {
	if u.tag {
		return u.rx.Peer.StartTag(&u.rx)
	}
	return u.rx.Peer.StartMsg(&u.rx)
}

func discard(u *entry) error {
	if u.tag {
		return u.rx.Peer.DiscardTag(&u.rx)
	}
	return u.rx.Peer.DiscardMsg(&u.rx)
}

// ForeachUnspecAddr implements provider.SRXOwner; see the package
// documentation.
func (q *Queue) ForeachUnspecAddr(getAddr func(e *provider.RxEntry) provider.Addr) {
	if getAddr == nil {
		return
	}
	var starts []*entry
	q.mu.Lock()
	for _, l := range []*list{&q.unexpMsg, &q.unexpTag} {
		for u := l.head; u != nil; {
			next := u.next
			if u.rx.Addr == provider.AddrUnspec {
				a := getAddr(&u.rx)
				u.rx.Addr = a
				if a != provider.AddrUnspec && !u.claimed {
					if p := q.findPosted(u.tag, a, u.rx.Tag); p != nil {
						l.remove(u)
						q.unexpLeft()
						q.bindPosted(u, p)
						u.st = stHanded
						starts = append(starts, u)
					}
				}
			}
			u = next
		}
	}
	q.mu.Unlock()
	for _, u := range starts {
		_ = start(u)
	}
}

// FreeEntry implements provider.SRXOwner: the peer is done with e.
func (q *Queue) FreeEntry(re *provider.RxEntry) {
	if re == nil {
		return
	}
	e, ok := re.OwnerContext.(*entry)
	if !ok || e.q != q || &e.rx != re {
		return
	}
	q.mu.Lock()
	switch e.st {
	case stFree, stPosted, stReleased:
		// Not the peer's to free.
		q.mu.Unlock()
		return
	case stGot:
		q.unexpLeft()
	case stUnexp:
		q.unexp(e.tag).remove(e)
		q.unexpLeft()
	case stBuffered:
		q.buf.list.remove(e)
		q.unexpLeft()
	}
	p := e.parent
	unused := e.res
	q.free(e)
	var rel *entry
	var relCtx any
	var relFlags provider.Flags
	var relTag uint64
	var cancelled bool
	if p != nil {
		p.outstanding--
		if p.st == stReleased && p.outstanding == 0 {
			if p.needRelease || p.cancelled {
				rel = p
				relCtx = p.rx.Context
				relTag = p.rx.Tag
				cancelled = p.cancelled
				relFlags = baseFlags(p.tag) | provider.FlagMultiRecv
			}
			q.free(p)
		}
	}
	cq := q.cq
	q.mu.Unlock()
	if unused != nil {
		unused.Unreserve()
	}
	if rel != nil && cq != nil {
		if cancelled {
			writeCanceled(cq, relCtx, relFlags, relTag)
		} else {
			_ = cq.Write(relCtx, provider.FlagMultiRecv, 0, nil, 0, 0, provider.AddrNotAvail)
		}
	}
}

func writeCanceled(cq provider.CQOwner, ctx any, flags provider.Flags, tag uint64) {
	_ = cq.WriteErr(&provider.CQErrEntry{OpContext: ctx, Flags: flags, Tag: tag, Err: provider.ECANCELED,
		Src: provider.AddrNotAvail})
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

// Post posts a receive. m is not retained. m.Flags selects the operation:
// FlagCompletion (write a successful completion), FlagPeek, FlagClaim,
// FlagDiscard, FlagMultiRecv; see the package documentation. m.Addr is the
// source filter (used with Config.Directed), m.Tag and m.Ignore the tag
// filter (tagged). Post returns EAGAIN when Size receives are pending,
// EINVAL for invalid flag combinations or buffers, EOPNOTSUPP for a tagged
// receive on an untagged queue, and EBADF once closed.
func (q *Queue) Post(m *provider.Msg, tagged bool) error {
	if m == nil {
		return provider.EINVAL
	}
	if m.Flags&(provider.FlagPeek|provider.FlagClaim|provider.FlagDiscard|provider.FlagMultiRecv) == 0 &&
		m.IOV == nil && m.Desc == nil && m.Tag == 0 && m.Ignore == 0 && !tagged {
		return q.PostBuf(m.Buf, m.Addr, m.Context, m.Flags)
	}
	return q.post(m, tagged)
}

// post is Post's general path.
func (q *Queue) post(m *provider.Msg, tagged bool) error {
	flags := m.Flags
	peek := flags&provider.FlagPeek != 0
	claim := flags&provider.FlagClaim != 0
	disc := flags&provider.FlagDiscard != 0
	multi := flags&provider.FlagMultiRecv != 0
	if tagged && !q.tagged {
		return provider.EOPNOTSUPP
	}
	if disc && !peek && !claim {
		return provider.EINVAL
	}
	if multi && (peek || claim) {
		return provider.EINVAL
	}
	addr := m.Addr
	if !q.directed {
		addr = provider.AddrUnspec
	}
	switch {
	case peek:
		return q.peek(m, tagged, addr, claim, disc)
	case claim:
		return q.claim(m, tagged, disc)
	case multi:
		return q.postMulti(m, tagged, addr)
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return provider.EBADF
	}
	if tagged && q.buf != nil {
		return q.postBufferedTag(m, addr) // unlocks
	}
	if u := q.findUnexp(tagged, addr, m.Tag, m.Ignore); u != nil {
		// FI_RM_ENABLED: the message completes now; without room for its
		// completion the receive is refused and the message stays queued.
		if q.res != nil && flags&provider.FlagCompletion != 0 {
			if !q.res.Reserve() {
				q.mu.Unlock()
				return provider.EAGAIN
			}
			u.res = q.res
		}
		q.unexp(tagged).remove(u)
		q.unexpLeft()
		setRecv(u, m, baseFlags(tagged))
		u.st = stHanded
		q.mu.Unlock()
		_ = start(u)
		return nil
	}
	if q.res != nil && q.res.Full() {
		// FI_RM_ENABLED, fi_domain(3) "Rx CQ": EAGAIN while the CQ is full.
		q.mu.Unlock()
		return provider.EAGAIN
	}
	if q.nposted >= q.size {
		q.mu.Unlock()
		return provider.EAGAIN
	}
	p := q.alloc()
	p.st = stPosted
	p.tag = tagged
	setRecv(p, m, baseFlags(tagged))
	p.rx.Addr = addr
	p.rx.Tag = m.Tag
	q.posted(tagged).push(p)
	q.nposted++
	q.mu.Unlock()
	return nil
}

// PostBuf is Post(&Msg{Buf: buf, Addr: addr, Context: ctx, Flags: flags},
// false) for a receive its caller knows to be plain (no FI_PEEK, FI_CLAIM,
// FI_DISCARD or FI_MULTI_RECV in flags): fi_recv's path, the most common
// receive, without a Msg to build and decode. While no unexpected message
// waits the receive is queued (or refused with EAGAIN) at once; otherwise,
// or once closed, Post's general path decides.
func (q *Queue) PostBuf(buf []byte, addr provider.Addr, ctx any, flags provider.Flags) error {
	q.mu.Lock()
	if q.closed || q.unexpMsg.head != nil {
		q.mu.Unlock()
		return q.post(&provider.Msg{Buf: buf, Addr: addr, Context: ctx, Flags: flags}, false)
	}
	// FI_RM_ENABLED, fi_domain(3) "Rx CQ": EAGAIN while the CQ is full
	// (on this module's CQ without an interface call).
	if c := q.resq; c != nil {
		if c.Full() {
			q.mu.Unlock()
			return provider.EAGAIN
		}
	} else if q.res != nil && q.res.Full() {
		q.mu.Unlock()
		return provider.EAGAIN
	}
	if q.nposted >= q.size {
		q.mu.Unlock()
		return provider.EAGAIN
	}
	p := q.alloc() // a pool entry is zero but for its links to q
	p.st = stPosted
	p.rx.SetBuf(buf)
	p.rx.Context = ctx
	p.rx.Complete = flags&provider.FlagCompletion != 0
	p.rx.Flags = provider.FlagMsg | provider.FlagRecv
	p.rx.Addr = provider.AddrUnspec
	if q.directed {
		p.rx.Addr = addr
	}
	q.postedMsg.push(p)
	q.nposted++
	q.mu.Unlock()
	return nil
}

func (q *Queue) postMulti(m *provider.Msg, tagged bool, addr provider.Addr) error {
	buf, desc := m.Buf, m.Desc
	if m.IOV != nil {
		if len(m.IOV) != 1 {
			return provider.EINVAL
		}
		buf, desc = m.IOV[0], nil
		if len(m.Descs) > 0 {
			desc = m.Descs[0]
		}
	}
	if len(buf) == 0 {
		return provider.EINVAL
	}
	var inline [8]*entry
	starts := inline[:0]
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return provider.EBADF
	}
	if q.nposted >= q.size {
		q.mu.Unlock()
		return provider.EAGAIN
	}
	p := q.alloc()
	p.st = stPosted
	p.tag = tagged
	p.multi = true
	p.buf = buf
	if desc != nil {
		setDesc(p, []provider.MRDesc{desc})
	}
	p.min = q.minMulti.Load()
	p.rx.Addr = addr
	p.rx.Tag = m.Tag
	p.rx.Ignore = m.Ignore
	p.rx.Context = m.Context
	p.rx.Complete = m.Flags&provider.FlagCompletion != 0
	p.rx.Flags = baseFlags(tagged)
	// Post first so that carve's release bookkeeping sees a posted buffer.
	q.posted(tagged).push(p)
	q.nposted++
	for p.st == stPosted {
		u := q.findUnexp(tagged, addr, m.Tag, m.Ignore)
		if u == nil {
			break
		}
		q.unexp(tagged).remove(u)
		q.unexpLeft()
		q.carve(p, u, u.rx.MsgSize)
		u.st = stHanded
		starts = append(starts, u)
	}
	q.mu.Unlock()
	for _, u := range starts {
		_ = start(u)
	}
	return nil
}

func (q *Queue) peek(m *provider.Msg, tagged bool, addr provider.Addr, claim, disc bool) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return provider.EBADF
	}
	cq, cntr := q.cq, q.cntr
	u := q.findUnexp(tagged, addr, m.Tag, m.Ignore)
	if u == nil {
		q.mu.Unlock()
		if cq != nil {
			_ = cq.WriteErr(&provider.CQErrEntry{OpContext: m.Context, Flags: baseFlags(tagged), Tag: m.Tag,
				Err: provider.ENOMSG, Src: provider.AddrNotAvail})
		}
		return nil
	}
	flags := baseFlags(tagged)
	var data uint64
	if u.rx.Flags&provider.FlagRemoteCQData != 0 {
		flags |= provider.FlagRemoteCQData
		data = u.rx.CQData
	}
	size, tag, src := u.rx.MsgSize, u.rx.Tag, u.rx.Addr
	switch {
	case disc:
		q.unexp(tagged).remove(u)
		q.unexpLeft()
		u.st = stHanded
		q.mu.Unlock()
		_ = discard(u)
		if cq != nil {
			_ = cq.Write(m.Context, flags, size, nil, data, tag, src)
		}
		if cntr != nil {
			cntr.Inc()
		}
		return nil
	case claim:
		u.claimed = true
		u.claimCtx = m.Context
		flags |= provider.FlagClaim
	}
	q.mu.Unlock()
	if cq != nil {
		_ = cq.Write(m.Context, flags, size, nil, data, tag, src)
	}
	return nil
}

func (q *Queue) claim(m *provider.Msg, tagged bool, disc bool) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return provider.EBADF
	}
	var u *entry
	for e := q.unexp(tagged).head; e != nil; e = e.next {
		if e.claimed && sameCtx(e.claimCtx, m.Context) {
			u = e
			break
		}
	}
	if u == nil {
		q.mu.Unlock()
		return provider.EINVAL
	}
	q.unexp(tagged).remove(u)
	q.unexpLeft()
	u.st = stHanded
	if disc {
		cq, cntr := q.cq, q.cntr
		flags := baseFlags(tagged) | provider.FlagClaim
		var data uint64
		if u.rx.Flags&provider.FlagRemoteCQData != 0 {
			flags |= provider.FlagRemoteCQData
			data = u.rx.CQData
		}
		size, tag, src := u.rx.MsgSize, u.rx.Tag, u.rx.Addr
		q.mu.Unlock()
		_ = discard(u)
		if cq != nil {
			_ = cq.Write(m.Context, flags, size, nil, data, tag, src)
		}
		if cntr != nil {
			cntr.Inc()
		}
		return nil
	}
	setRecv(u, m, baseFlags(tagged)|provider.FlagClaim)
	q.mu.Unlock()
	_ = start(u)
	return nil
}

// Cancel cancels the first pending receive posted with context ctx: it
// writes one FI_ECANCELED error completion and returns nil, or returns
// ENOENT if no pending receive has that context.
func (q *Queue) Cancel(ctx any) error {
	q.mu.Lock()
	var p *entry
	for _, l := range []*list{&q.postedMsg, &q.postedTag} {
		for e := l.head; e != nil; e = e.next {
			if sameCtx(e.rx.Context, ctx) {
				p = e
				break
			}
		}
		if p != nil {
			break
		}
	}
	if p == nil {
		q.mu.Unlock()
		return provider.ENOENT
	}
	q.posted(p.tag).remove(p)
	q.nposted--
	cq := q.cq
	flags := baseFlags(p.tag)
	if p.multi {
		flags |= provider.FlagMultiRecv
		if p.outstanding > 0 {
			p.st = stReleased
			p.cancelled = true
			q.mu.Unlock()
			return nil
		}
	}
	tag := p.rx.Tag
	q.free(p)
	q.mu.Unlock()
	if cq != nil {
		writeCanceled(cq, ctx, flags, tag)
	}
	return nil
}

// Close cancels every pending receive (FI_ECANCELED completions) and
// discards every unexpected message through its peer. Later posts return
// EBADF; GetMsg/GetTag return EBADF and a nil entry; entries already handed
// to peers may still be freed.
//
// Project rule (DEVELOPERS.md "nothing a caller posted is silently lost"):
// this is deliberately stricter than fi_endpoint(3), which allows close to
// drop outstanding operations silently. Do not change it to a silent drop.
func (q *Queue) Close() error {
	type canceled struct {
		ctx   any
		flags provider.Flags
		tag   uint64
	}
	var cancels []canceled
	var discards []*entry
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return provider.EBADF
	}
	q.closed = true
	q.fireRoom()
	for _, l := range []*list{&q.postedMsg, &q.postedTag} {
		for l.head != nil {
			p := l.head
			l.remove(p)
			q.nposted--
			flags := baseFlags(p.tag)
			if p.multi {
				flags |= provider.FlagMultiRecv
				if p.outstanding > 0 {
					p.st = stReleased
					p.cancelled = true
					continue
				}
			}
			cancels = append(cancels, canceled{p.rx.Context, flags, p.rx.Tag})
			q.free(p)
		}
	}
	lists := []*list{&q.unexpMsg, &q.unexpTag}
	if q.buf != nil {
		lists = append(lists, &q.buf.list)
	}
	for _, l := range lists {
		for l.head != nil {
			u := l.head
			l.remove(u)
			q.unexpLeft()
			u.st = stHanded
			discards = append(discards, u)
		}
	}
	cq := q.cq
	q.mu.Unlock()
	if cq != nil {
		for _, c := range cancels {
			writeCanceled(cq, c.ctx, c.flags, c.tag)
		}
	}
	for _, u := range discards {
		_ = discard(u)
	}
	return nil
}

// Deliver copies payload into e's buffers. n is the number of bytes placed;
// olen is the number that did not fit (FI_ETRUNC when non-zero).
func Deliver(e *provider.RxEntry, payload []byte) (n int, olen uint64) {
	n = Scatter(e.IOV, payload)
	return n, uint64(len(payload) - n)
}

// Scatter copies p into the buffers of iov in order and returns the number
// of bytes placed (less than len(p) when they are too short).
func Scatter(iov [][]byte, p []byte) int {
	if len(iov) == 1 {
		return copy(iov[0], p) // fi_recv's one buffer
	}
	n := 0
	for _, b := range iov {
		if n == len(p) {
			break
		}
		n += copy(b, p[n:])
	}
	return n
}

// Complete writes the completion of receive entry e after n bytes were
// placed and olen bytes did not fit: an FI_ETRUNC error completion (with
// Olen) when olen > 0, else a success completion when e.Complete is set.
// Flags are e.Flags masked with provider.ReportedCompFlags; Data is e.CQData
// when e.Flags has FlagRemoteCQData; Buf is set for the messages of a
// multi-receive buffer. The counter (if any) is incremented, or its error
// value on truncation. src is the source address reported (AddrNotAvail if
// unknown). The peer calls FreeEntry afterwards.
//
// The counter is bumped before the completion is written, in every helper
// here: a thread that has read the completion then sees the counter
// include it.
func Complete(cq provider.CQOwner, cntr provider.CntrOwner, e *provider.RxEntry, n int, olen uint64, src provider.Addr) {
	flags := e.Flags & provider.ReportedCompFlags
	var data uint64
	if e.Flags&provider.FlagRemoteCQData != 0 {
		data = e.CQData
	}
	var buf []byte
	var res provider.CQReserver
	if oe, ok := e.OwnerContext.(*entry); ok {
		if oe.parent != nil && len(e.IOV) == 1 {
			b := e.IOV[0]
			if n < len(b) {
				b = b[:n]
			}
			buf = b
		}
		if oe.res != nil {
			res = takeRes(e, cq)
		}
	}
	if olen > 0 {
		if cntr != nil {
			cntr.IncErr()
		}
		if cq != nil {
			ee := provider.CQErrEntry{OpContext: e.Context, Flags: flags, Len: uint64(n), Buf: buf,
				Data: data, Tag: e.Tag, Olen: olen, Err: provider.ETRUNC, Src: src}
			if res != nil {
				_ = res.WriteErrReserved(&ee)
			} else {
				_ = cq.WriteErr(&ee)
			}
		}
		return
	}
	if cntr != nil {
		cntr.Inc()
	}
	switch {
	case e.Complete && res != nil:
		_ = res.WriteReserved(e.Context, flags, uint64(n), buf, data, e.Tag, src)
	case e.Complete && cq != nil:
		_ = cq.Write(e.Context, flags, uint64(n), buf, data, e.Tag, src)
	case res != nil:
		res.Unreserve()
	}
}

// takeRes returns the CQ reserver in which room for e's completion was
// reserved, when it is cq (the entry then no longer holds it); a
// reservation in another CQ is given back, and nil returned.
func takeRes(e *provider.RxEntry, cq provider.CQOwner) provider.CQReserver {
	oe, ok := e.OwnerContext.(*entry)
	if !ok || oe.res == nil {
		return nil
	}
	r := oe.res
	oe.res = nil
	if cq != nil && sameCQ(r, cq) {
		return r
	}
	r.Unreserve()
	return nil
}

// sameCQ compares two CQ owners without panicking on incomparable
// dynamic types.
func sameCQ(r provider.CQReserver, cq provider.CQOwner) bool {
	if t := reflect.TypeOf(r); t != nil && t.Kind() == reflect.Pointer {
		// The common case (every CQ here is a pointer): == compares the
		// dynamic types first and then two pointers, and cannot panic.
		// This runs on every received message.
		return provider.CQOwner(r) == cq
	}
	return sameCQSlow(r, cq)
}

// sameCQSlow is sameCQ for dynamic types that may not be comparable.
func sameCQSlow(r provider.CQReserver, cq provider.CQOwner) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return provider.CQOwner(r) == cq
}

// CompleteErr writes an error completion with err for receive entry e
// (for example when the peer cannot deliver the message) and increments
// the counter's error value.
func CompleteErr(cq provider.CQOwner, cntr provider.CntrOwner, e *provider.RxEntry, err provider.Errno, src provider.Addr) {
	res := takeRes(e, cq)
	if cntr != nil {
		cntr.IncErr()
	}
	if cq != nil {
		ee := provider.CQErrEntry{OpContext: e.Context, Flags: e.Flags & provider.ReportedCompFlags,
			Tag: e.Tag, Err: err, Src: src}
		if res != nil {
			_ = res.WriteErrReserved(&ee)
		} else {
			_ = cq.WriteErr(&ee)
		}
	}
}

// CompleteFrom is Complete for providers that know the raw source address
// of the message: with sourceErr (FI_SOURCE_ERR) and a source that is not in
// the AV (src is AddrNotAvail), a successful receive is reported through
// the CQ's provider.UnknownSrcWriter, which turns it into an
// FI_EADDRNOTAVAIL error entry carrying raw.
func CompleteFrom(cq provider.CQOwner, cntr provider.CntrOwner, e *provider.RxEntry, n int, olen uint64,
	src provider.Addr, raw []byte, sourceErr bool) {
	if !sourceErr || src != provider.AddrNotAvail || len(raw) == 0 || olen > 0 || !e.Complete {
		Complete(cq, cntr, e, n, olen, src)
		return
	}
	w, ok := cq.(provider.UnknownSrcWriter)
	if !ok {
		Complete(cq, cntr, e, n, olen, src)
		return
	}
	if res := takeRes(e, cq); res != nil {
		// The entry goes in unreserved: a CQ with resource management
		// keeps it even when full.
		res.Unreserve()
	}
	flags := e.Flags & provider.ReportedCompFlags
	var data uint64
	if e.Flags&provider.FlagRemoteCQData != 0 {
		data = e.CQData
	}
	var buf []byte
	if oe, ok := e.OwnerContext.(*entry); ok && oe.parent != nil && len(e.IOV) == 1 {
		buf = e.IOV[0][:min(n, len(e.IOV[0]))]
	}
	if cntr != nil {
		cntr.Inc()
	}
	_ = w.WriteUnknownSrc(e.Context, flags, uint64(n), buf, data, e.Tag, raw)
}
