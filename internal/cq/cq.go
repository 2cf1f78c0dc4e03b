package cq

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/provider"
)

// DefaultSize is the number of entries of a CQ opened with size 0 (the
// value of libfabric's util CQ).
const DefaultSize = 1024

// MaxSize is the largest CQ size accepted. Memory grows with use, not with
// the size: the ring starts small and doubles up to the size.
const MaxSize = 1 << 30

// initialCap is the ring capacity a CQ starts with (at most its size).
const initialCap = 256

// Config describes a CQ (the fi_cq_attr fields that matter here).
type Config struct {
	// Size is the capacity in entries (successes and errors together);
	// 0 means DefaultSize.
	Size int
	// Format selects which CQEntry fields reads fill; UNSPEC means CONTEXT,
	// as in libfabric's util CQ.
	Format provider.CQFormat
	// WaitObj is the wait object (FI_WAIT_UNSPEC, the zero value, by default).
	WaitObj provider.WaitObj
	// WaitCond is FI_CQ_COND_NONE or FI_CQ_COND_THRESHOLD (the threshold is
	// given to SRead).
	WaitCond provider.CQWaitCond
	// SourceErr (FI_SOURCE_ERR) makes WriteUnknownSrc produce an
	// FI_EADDRNOTAVAIL error entry carrying the raw source address instead
	// of a completion with source FI_ADDR_NOTAVAIL.
	SourceErr bool
	// LegacyErrData (fabric opened with API < 1.5) makes ReadErr always
	// return a CQ-owned err_data buffer.
	LegacyErrData bool
	// ResourceMgmt (a domain with FI_RM_ENABLED) makes the CQ never
	// overrun: a write that was not reserved (see Reserve) and finds the
	// CQ full keeps its entry beyond Size, like libfabric's util CQ
	// overflow list; Reserve refuses until the reader has brought the
	// entries back under Size. Without it a full CQ overruns (fi_cq(3)).
	ResourceMgmt bool
}

// Check validates c and returns it with defaults applied.
func (c Config) Check() (Config, error) {
	if c.Size < 0 || c.Size > MaxSize {
		return c, provider.EINVAL
	}
	if c.Size == 0 {
		c.Size = DefaultSize
	}
	switch c.Format {
	case provider.CQFormatUnspec:
		c.Format = provider.CQFormatContext
	case provider.CQFormatContext, provider.CQFormatMsg, provider.CQFormatData, provider.CQFormatTagged:
	default:
		return c, provider.EINVAL
	}
	if err := progress.CheckWaitObj(c.WaitObj); err != nil {
		return c, err
	}
	switch c.WaitCond {
	case provider.CQCondNone, provider.CQCondThreshold:
	default:
		return c, provider.EINVAL
	}
	return c, nil
}

type slot struct {
	e   provider.CQEntry
	src provider.Addr
	err bool // the completion is the head of the error queue
}

// set fills s with a successful completion; flags outside
// provider.ReportedCompFlags are dropped.
func (s *slot) set(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, src provider.Addr) {
	// Field by field: a composite literal is built on the stack and
	// copied in with a write-barrier check on the whole entry, twice the
	// instructions of these stores (every completion goes through here).
	s.e.OpContext = ctx
	s.e.Flags = flags & provider.ReportedCompFlags
	s.e.Len = length
	s.e.Buf = buf
	s.e.Data = data
	s.e.Tag = tag
	s.src = src
	s.err = false
}

// CQ is a completion queue. All methods are goroutine-safe.
type CQ struct {
	progress.Hub // Sources, AddSource, RemoveSource, Progress, WaitFD
	cfg          Config

	signaled atomic.Bool // fi_cq_signal, consumed by the next blocking read

	// roomArmed is set while kicks armed with NotifyRoom wait for room;
	// readers check it after freeing entries (no lock when unset).
	roomArmed atomic.Bool
	rmu       sync.Mutex // guards roomKicks (a leaf lock)
	roomKicks []chan<- struct{}

	// state mirrors n, held, overrun and closed (see publishLocked), so
	// that an empty Read and Full take no lock.
	state atomic.Uint64

	// hand and handSlot pass one completion from WriteMsg straight to a
	// reader waiting in ReadFrom's progress call, past the ring and its
	// lock (see ReadFrom). handSlot is written only by the writer that
	// moved hand from handArmed to handFilling, and read only by the
	// reader that armed it, once it sees handFilled.
	hand     atomic.Uint32
	handSlot slot

	mu      sync.Mutex
	ring    []slot // power-of-two capacity
	head, n int
	errs    []provider.CQErrEntry // FIFO of error entries, power-of-two capacity
	eh, en  int
	held    int // slots reserved with Reserve, not yet written
	overrun bool
	dropped uint64
	closed  bool
	errData []byte // CQ-owned err_data returned by ReadErr
}

var (
	_ provider.CQOwner      = (*CQ)(nil)
	_ provider.CQReserver   = (*CQ)(nil)
	_ provider.RoomNotifier = (*CQ)(nil)
)

// New opens a CQ.
func New(cfg Config) (*CQ, error) {
	cfg, err := cfg.Check()
	if err != nil {
		return nil, err
	}
	q := &CQ{cfg: cfg}
	if err := q.Hub.Init(cfg.WaitObj); err != nil {
		return nil, err
	}
	c := initialCap
	for c > 1 && c/2 >= cfg.Size {
		c /= 2
	}
	q.ring = make([]slot, c)
	return q, nil
}

// Config returns the effective configuration (defaults applied).
func (q *CQ) Config() Config { return q.cfg }

// States of CQ.hand.
const (
	handIdle    uint32 = iota
	handArmed          // a reader in ReadFrom's progress call takes the next WriteMsg
	handFilling        // a writer claimed the hand-off and is filling handSlot
	handFilled         // handSlot holds the completion for the armed reader
)

// Layout of CQ.state: n in the low 31 bits, held in the next 31, then the
// overrun and closed bits.
const (
	stateCount   = 1<<31 - 1
	stateHeldSh  = 31
	stateOverrun = 1 << 62
	stateClosed  = 1 << 63
)

// publishLocked stores the lock-guarded counts into q.state; q.mu is held
// by every caller that changed n, held, overrun or closed, and every such
// critical section publishes before it unlocks (push and readLocked, which
// change only n, add the difference to the state instead). Readers of
// state see a value at least as old as the last critical section, which
// is all the empty-read and Full checks need: they race with writers
// anyway.
func (q *CQ) publishLocked() {
	s := uint64(min(q.n, stateCount)) | uint64(min(q.held, stateCount))<<stateHeldSh
	if q.overrun {
		s |= stateOverrun
	}
	if q.closed {
		s |= stateClosed
	}
	q.state.Store(s)
}

// ---- owner side (provider.CQOwner) ----

// push reserves the tail slot; q.mu is held. It reports EOVERRUN (and
// records the overrun) when the CQ is full or already overrun, unless the
// CQ has resource management (the entry is kept beyond Size). reserved
// says the caller holds a slot taken with Reserve, which it consumes.
func (q *CQ) push(reserved bool) (*slot, error) {
	if q.closed {
		return nil, provider.EBADF
	}
	held := false
	if reserved && q.held > 0 {
		q.held--
		held = true
	} else if !q.cfg.ResourceMgmt && (q.overrun || q.n+q.held >= q.cfg.Size) {
		q.overrun = true
		q.dropped++
		q.publishLocked()
		return nil, provider.EOVERRUN
	}
	if q.n == len(q.ring) {
		q.grow()
	}
	s := &q.ring[(q.head+q.n)&(len(q.ring)-1)]
	q.n++
	if !held && q.n <= stateCount {
		// Only n changed, by one, since the last critical section
		// published the state: every write of a completion.
		q.state.Add(1)
	} else {
		q.publishLocked()
	}
	return s, nil
}

// Reserve claims room for one completion that the caller writes later with
// WriteReserved or WriteErrReserved (or gives back with Unreserve). It
// reports false when the CQ has no room: entries and reservations fill
// its size, or it is overrun or closed. Providers with resource management
// enabled (FI_RM_ENABLED) use it to answer FI_EAGAIN instead of overrunning
// the CQ (fi_domain(3); see provider.CQReserver). Unreserved writes never
// take reserved room.
func (q *CQ) Reserve() bool {
	q.mu.Lock()
	ok := !q.closed && !q.overrun && q.n+q.held < q.cfg.Size
	if ok {
		q.held++
		q.publishLocked()
	}
	q.mu.Unlock()
	return ok
}

// Unreserve gives back a slot taken with Reserve and not written.
func (q *CQ) Unreserve() {
	q.mu.Lock()
	if q.held > 0 {
		q.held--
		q.publishLocked()
	}
	q.mu.Unlock()
	q.roomFreed()
}

// NotifyRoom implements provider.RoomNotifier: kick gets a non-blocking
// send the next time room may have been freed (entries read, a
// reservation given back, the CQ closed). One-shot; see
// provider.RoomNotifier for the arm-retry-wait order. It reports true
// (false only for a nil kick).
func (q *CQ) NotifyRoom(kick chan<- struct{}) bool {
	if kick == nil {
		return false
	}
	q.rmu.Lock()
	defer q.rmu.Unlock()
	for _, k := range q.roomKicks {
		if k == kick {
			return true
		}
	}
	q.roomKicks = append(q.roomKicks, kick)
	q.roomArmed.Store(true)
	return true
}

// roomFreed fires the kicks armed with NotifyRoom; q.mu is not held. It
// costs one atomic load when nothing is armed (inlined: every read that
// returns entries calls it).
func (q *CQ) roomFreed() {
	if q.roomArmed.Load() {
		q.kickRoom()
	}
}

func (q *CQ) kickRoom() {
	q.rmu.Lock()
	q.roomArmed.Store(false)
	for i, k := range q.roomKicks {
		select {
		case k <- struct{}{}:
		default:
		}
		q.roomKicks[i] = nil
	}
	q.roomKicks = q.roomKicks[:0]
	q.rmu.Unlock()
}

// Full reports whether Reserve would fail now: queued entries and
// reservations fill the CQ's size, or it is overrun or closed (without
// resource management, an unreserved write would then overrun it). It
// takes no lock: providers ask it before every receive poll.
func (q *CQ) Full() bool {
	s := q.state.Load()
	return s&(stateOverrun|stateClosed) != 0 || int(s&stateCount)+int(s>>stateHeldSh&stateCount) >= q.cfg.Size
}

func (q *CQ) grow() {
	r := make([]slot, 2*len(q.ring))
	for i := 0; i < q.n; i++ {
		r[i] = q.ring[(q.head+i)&(len(q.ring)-1)]
	}
	q.ring, q.head = r, 0
}

// Write adds a successful completion (fi_ops_cq_owner write). Flags outside
// provider.ReportedCompFlags are dropped. It returns EOVERRUN when the CQ is
// full (the completion is lost and the CQ is overrun).
func (q *CQ) Write(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, src provider.Addr) error {
	// Write and WriteReserved each spell out lock/push/set/unlock/wake
	// rather than share a helper: this is every receive's and send's
	// completion, and a call with eleven arguments (more than the registers
	// that carry them) costs a fifth of the write. set is inlined.
	q.mu.Lock()
	s, err := q.push(false)
	if err != nil {
		q.mu.Unlock()
		return err
	}
	s.set(ctx, flags, length, buf, data, tag, src)
	q.mu.Unlock()
	q.Wake()
	return nil
}

// WriteReserved is Write into a slot taken with Reserve.
func (q *CQ) WriteReserved(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, src provider.Addr) error {
	q.mu.Lock()
	s, err := q.push(true)
	if err != nil {
		q.mu.Unlock()
		return err
	}
	s.set(ctx, flags, length, buf, data, tag, src)
	q.mu.Unlock()
	q.Wake()
	return nil
}

// WriteMsg is Write for a completion with no buffer and no remote CQ data
// (a received message into a posted receive, or a sent one): six arguments
// instead of eleven, all in registers, for the providers that hold the CQ
// itself rather than a provider.CQOwner (the direct receive path).
func (q *CQ) WriteMsg(ctx any, flags provider.Flags, length, tag uint64, src provider.Addr) error {
	// A reader is waiting in ReadFrom's progress call (most often the
	// very call that runs this write) and the CQ is empty: the completion
	// goes straight to that reader, with no lock and no ring slot. Empty
	// means no entry, no reservation, not overrun, not closed, so the
	// completion is the one the reader would have read first anyway.
	if q.state.Load() == 0 && q.hand.Load() == handArmed && q.hand.CompareAndSwap(handArmed, handFilling) {
		q.handSlot.set(ctx, flags, length, nil, 0, tag, src)
		q.hand.Store(handFilled)
		return nil
	}
	q.mu.Lock()
	s, err := q.push(false)
	if err != nil {
		q.mu.Unlock()
		return err
	}
	s.set(ctx, flags, length, nil, 0, tag, src)
	q.mu.Unlock()
	q.Wake()
	return nil
}

// WriteErr adds an error completion (fi_ops_cq_owner writeerr); e is
// copied, including ErrData. Err is made positive; 0 becomes EOTHER.
func (q *CQ) WriteErr(e *provider.CQErrEntry) error { return q.writeErr(false, e) }

// WriteErrReserved is WriteErr into a slot taken with Reserve.
func (q *CQ) WriteErrReserved(e *provider.CQErrEntry) error { return q.writeErr(true, e) }

func (q *CQ) writeErr(reserved bool, e *provider.CQErrEntry) error {
	if e == nil {
		if reserved {
			q.Unreserve()
		}
		return provider.EINVAL
	}
	q.mu.Lock()
	s, err := q.push(reserved)
	if err != nil {
		q.mu.Unlock()
		return err
	}
	s.e = provider.CQEntry{}
	s.src = e.Src
	s.err = true
	if q.en == len(q.errs) {
		q.growErrs()
	}
	d := &q.errs[(q.eh+q.en)&(len(q.errs)-1)]
	q.en++
	keep := d.ErrData[:0]
	*d = *e
	d.Flags &= provider.ReportedCompFlags
	if d.Err < 0 {
		d.Err = -d.Err
	} else if d.Err == 0 {
		d.Err = provider.EOTHER
	}
	d.ErrData = append(keep, e.ErrData...)
	q.mu.Unlock()
	q.Wake()
	return nil
}

func (q *CQ) growErrs() {
	c := 2 * len(q.errs)
	if c == 0 {
		c = 4
	}
	r := make([]provider.CQErrEntry, c)
	for i := 0; i < q.en; i++ {
		r[i] = q.errs[(q.eh+i)&(len(q.errs)-1)]
	}
	q.errs, q.eh = r, 0
}

// WriteUnknownSrc adds a completion of a message whose source address raw
// is not in the address vector. With FI_SOURCE_ERR it is an error entry
// FI_EADDRNOTAVAIL with raw in ErrData (fi_cq(3)); otherwise a successful
// completion with source FI_ADDR_NOTAVAIL. Providers find this method with a
// type assertion on the CQOwner they were given (see UnknownSrcWriter).
func (q *CQ) WriteUnknownSrc(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, raw []byte) error {
	if !q.cfg.SourceErr {
		return q.Write(ctx, flags, length, buf, data, tag, provider.AddrNotAvail)
	}
	e := provider.CQErrEntry{OpContext: ctx, Flags: flags, Len: length, Buf: buf, Data: data, Tag: tag,
		Err: provider.EADDRNOTAVAIL, ErrData: raw, Src: provider.AddrNotAvail}
	return q.WriteErr(&e)
}

// UnknownSrcWriter is the optional CQ owner operation a provider uses to
// report a message from a source that is not in the AV (implemented by
// *CQ). Owners that lack it get Write with src FI_ADDR_NOTAVAIL.
type UnknownSrcWriter interface {
	WriteUnknownSrc(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, raw []byte) error
}

var _ UnknownSrcWriter = (*CQ)(nil)

// ---- reader side ----

func project(dst *provider.CQEntry, src *provider.CQEntry, f provider.CQFormat) {
	switch f {
	case provider.CQFormatContext:
		*dst = provider.CQEntry{OpContext: src.OpContext}
	case provider.CQFormatMsg:
		*dst = provider.CQEntry{OpContext: src.OpContext, Flags: src.Flags, Len: src.Len}
	case provider.CQFormatData:
		*dst = provider.CQEntry{OpContext: src.OpContext, Flags: src.Flags, Len: src.Len, Buf: src.Buf, Data: src.Data}
	default:
		*dst = *src
	}
}

// status reports the state an empty read returns; q.mu is held.
func (q *CQ) statusLocked() error {
	switch {
	case q.closed:
		return provider.EBADF
	case q.n == 0 && q.overrun:
		return provider.EOVERRUN
	case q.n == 0:
		return provider.EAGAIN
	case q.ring[q.head].err:
		return provider.EAVAIL
	}
	return nil
}

// readLocked moves up to len(entries) successful completions out; q.mu is
// held. src, if not nil, receives the source addresses (it must be at least
// as long as entries).
func (q *CQ) readLocked(entries []provider.CQEntry, src []provider.Addr) (int, error) {
	if err := q.statusLocked(); err != nil {
		return 0, err
	}
	mask := len(q.ring) - 1
	k := 0
	for k < len(entries) && q.n > 0 {
		s := &q.ring[q.head]
		if s.err {
			break
		}
		project(&entries[k], &s.e, q.cfg.Format)
		if k < len(src) {
			src[k] = s.src
		}
		*s = slot{}
		q.head = (q.head + 1) & mask
		q.n--
		k++
	}
	switch {
	case k == 0:
	case q.n+k <= stateCount:
		// Only n changed, by k, since the last critical section
		// published the state.
		q.state.Add(^uint64(k - 1))
	default:
		q.publishLocked()
	}
	return k, nil
}

// Read reads up to len(entries) completions (fi_cq_read); see the package
// documentation for the rules. It drives progress of the bound sources when
// the CQ is empty. Errors are bare Errno constants: EAGAIN, EAVAIL,
// EOVERRUN, EBADF (closed).
func (q *CQ) Read(entries []provider.CQEntry) (int, error) { return q.ReadFrom(entries, nil) }

// ReadFrom is Read that also returns source addresses (fi_cq_readfrom):
// src[i] is the source of entries[i] (FI_ADDR_NOTAVAIL when unknown). src
// may be nil; otherwise it must be at least as long as entries (EINVAL).
func (q *CQ) ReadFrom(entries []provider.CQEntry, src []provider.Addr) (int, error) {
	if src != nil && len(src) < len(entries) {
		return 0, provider.EINVAL
	}
	if len(entries) == 0 {
		q.Progress()
		q.mu.Lock()
		err := q.statusLocked()
		q.mu.Unlock()
		return 0, err
	}
	// Empty and neither overrun nor closed: drive progress, and if that
	// produced nothing either, answer EAGAIN without taking the lock (the
	// busy-polling reader's common case).
	//
	// While it drives progress the reader arms the hand-off (one reader
	// at a time): a completion that WriteMsg writes into the still empty
	// CQ meanwhile (a receive straight into a posted buffer, completed
	// by the progress call itself) comes back in handSlot, without the
	// ring's lock, slot and publication on either side. (A progress
	// source that panics leaves the hand-off armed, as the udp direct
	// path leaves its receive queue locked: no defer on this path, whose
	// cost would be a tenth of an empty read.)
	ran := false
	if q.state.Load()&(stateCount|stateClosed) == 0 {
		armed := q.hand.CompareAndSwap(handIdle, handArmed)
		q.Progress()
		ran = true
		if armed && (q.hand.Load() != handArmed || !q.hand.CompareAndSwap(handArmed, handIdle)) {
			// A writer claimed the hand-off (seen at once, or when the
			// disarm fails). Completions the ring took meanwhile came
			// after it.
			q.takeHand(entries, src)
			if len(entries) == 1 || q.state.Load()&stateCount == 0 {
				return 1, nil
			}
			return 1 + q.readMore(entries[1:], src), nil
		}
		if q.state.Load()&(stateCount|stateOverrun|stateClosed) == 0 {
			return 0, provider.EAGAIN
		}
	}
	q.mu.Lock()
	if !ran && q.n == 0 && !q.closed {
		// Another reader took the entries seen above.
		q.mu.Unlock()
		q.Progress()
		q.mu.Lock()
	}
	k, err := q.readLocked(entries, src)
	q.mu.Unlock()
	if k > 0 {
		q.roomFreed()
	}
	return k, err
}

// takeHand moves the completion a writer handed over to the calling
// reader (which armed the hand-off and failed to disarm it) into
// entries[0] and src[0], once the writer has filled it. len(entries) > 0.
func (q *CQ) takeHand(entries []provider.CQEntry, src []provider.Addr) {
	for q.hand.Load() != handFilled {
		// handFilling: the writer is between its claim and its store.
		runtime.Gosched()
	}
	project(&entries[0], &q.handSlot.e, q.cfg.Format)
	if len(src) > 0 {
		src[0] = q.handSlot.src
	}
	// WriteMsg's set fills every field of the slot; only the context is
	// dropped here, so that the CQ keeps no reference to it (WriteMsg
	// stores no buffer).
	q.handSlot.e.OpContext = nil
	q.hand.Store(handIdle)
}

// readMore reads what the ring holds into entries after a hand-off took
// the first one: src (nil, or as long as entries plus one) gets the
// sources from its second element on. An error entry at the ring's head
// stays for the next read.
func (q *CQ) readMore(entries []provider.CQEntry, src []provider.Addr) int {
	if src != nil {
		src = src[1:]
	}
	q.mu.Lock()
	k, _ := q.readLocked(entries, src)
	q.mu.Unlock()
	if k > 0 {
		q.roomFreed()
	}
	return k
}

// ReadErr moves the error entry at the head into e (fi_cq_readerr). It
// returns EAGAIN when no error entry is at the head. err_data follows
// fi_cq(3) for API >= 1.5: if len(e.ErrData) > 0 on input the data is
// copied into it and e.ErrData is resliced to the bytes copied; otherwise
// (and always with LegacyErrData) e.ErrData is set to a CQ-owned buffer that
// stays valid until the next ReadErr.
func (q *CQ) ReadErr(e *provider.CQErrEntry) error {
	if e == nil {
		return provider.EINVAL
	}
	q.mu.Lock()
	err := q.readErrLocked(e)
	q.mu.Unlock()
	if err == nil {
		q.roomFreed()
	}
	return err
}

func (q *CQ) readErrLocked(e *provider.CQErrEntry) error {
	if q.closed {
		return provider.EBADF
	}
	if q.n == 0 || !q.ring[q.head].err {
		return provider.EAGAIN
	}
	d := &q.errs[q.eh]
	user := e.ErrData
	if q.cfg.LegacyErrData || len(user) == 0 || q.isErrDataBuf(user) {
		*e = *d
		if len(d.ErrData) == 0 {
			e.ErrData = nil
		} else {
			q.errData = append(q.errData[:0], d.ErrData...)
			e.ErrData = q.errData
		}
	} else {
		*e = *d
		e.ErrData = user[:copy(user, d.ErrData)]
	}
	*d = provider.CQErrEntry{ErrData: d.ErrData[:0]}
	q.eh = (q.eh + 1) & (len(q.errs) - 1)
	q.en--
	q.ring[q.head] = slot{}
	q.head = (q.head + 1) & (len(q.ring) - 1)
	q.n--
	q.publishLocked()
	return nil
}

// isErrDataBuf reports whether b is the CQ-owned buffer handed out by an
// earlier ReadErr (an application that reuses its entry asks again for a
// CQ-owned buffer rather than a copy into ours).
func (q *CQ) isErrDataBuf(b []byte) bool {
	return cap(q.errData) > 0 && cap(b) > 0 && &b[:1][0] == &q.errData[:1][0]
}

// SRead is the blocking read (fi_cq_sread / fi_cq_sreadfrom). It returns as
// soon as completions are available (with FI_CQ_COND_THRESHOLD: at least
// min(threshold, len(entries), size) of them, or an error entry, or an
// overrun), when fi_cq_signal was called (EAGAIN, also for a signal issued
// before the call), when the deadline passes (the entries that are queued,
// or EAGAIN), when done closes (progress.ErrDone), or when the CQ is closed
// (EBADF). A zero deadline waits forever. With FI_WAIT_NONE it returns
// ENOSYS at once.
func (q *CQ) SRead(entries []provider.CQEntry, src []provider.Addr, threshold int, deadline time.Time,
	done <-chan struct{}) (int, error) {
	if len(entries) == 0 || (src != nil && len(src) < len(entries)) {
		return 0, provider.EINVAL
	}
	if q.cfg.WaitObj == provider.WaitNone {
		return 0, provider.ENOSYS
	}
	want := 1
	if q.cfg.WaitCond == provider.CQCondThreshold && threshold > 1 {
		want = min(threshold, len(entries), q.cfg.Size)
	}
	var k int
	var err error
	ready := func() bool {
		q.Progress()
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.closed || q.n >= want || q.overrun || (q.n > 0 && q.ring[q.head].err) {
			k, err = q.readLocked(entries, src)
			return true
		}
		if q.signaled.Swap(false) {
			if q.n > 0 {
				k, err = q.readLocked(entries, src)
			} else {
				k, err = 0, provider.EAGAIN
			}
			return true
		}
		return false
	}
	berr := q.Hub.Block(deadline, done, ready)
	if berr == nil {
		if k > 0 {
			q.roomFreed()
		}
		return k, err
	}
	if berr == progress.ErrClosed {
		return 0, provider.EBADF
	}
	// Deadline or done: return what is queued, if anything.
	q.mu.Lock()
	if q.n > 0 && !q.closed {
		k, err = q.readLocked(entries, src)
		q.mu.Unlock()
		if k > 0 {
			q.roomFreed()
		}
		return k, err
	}
	q.mu.Unlock()
	if berr == progress.ErrTimeout {
		return 0, provider.EAGAIN
	}
	return 0, berr
}

// Signal wakes blocked readers (fi_cq_signal); the signal is remembered
// until a blocking read consumes it. It returns ENOSYS for FI_WAIT_NONE.
func (q *CQ) Signal() error {
	if q.cfg.WaitObj == provider.WaitNone {
		return provider.ENOSYS
	}
	if q.Closed() {
		return provider.EBADF
	}
	q.signaled.Store(true)
	q.Wake()
	return nil
}

// TryWait (fi_trywait) resets the FD signal, drives progress, and returns
// EAGAIN if entries (or an overrun) are ready to read, 0 if the caller may
// wait on the descriptor. EINVAL for FI_WAIT_NONE.
func (q *CQ) TryWait() error {
	if err := q.Hub.TryWait(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return provider.EBADF
	}
	if q.n > 0 || q.overrun {
		return provider.EAGAIN
	}
	return nil
}

// StrError converts a provider error number (fi_cq_strerror).
func (q *CQ) StrError(provErrno int, errData []byte) string { return provider.StrError(provErrno) }

// Len returns the number of queued entries, errors included.
func (q *CQ) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// Overrun reports whether the CQ overran and how many completions were
// dropped.
func (q *CQ) Overrun() (bool, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.overrun, q.dropped
}

// Close discards the queued entries, fails blocked and later reads with
// EBADF and closes the wait object. A second Close returns EBADF.
func (q *CQ) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return provider.EBADF
	}
	q.closed = true
	clear(q.ring)
	clear(q.errs)
	q.n, q.en, q.held = 0, 0, 0
	q.publishLocked()
	q.mu.Unlock()
	q.roomFreed()
	return q.Hub.Close()
}
