package chaos

import (
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/provider"
)

// Errors of injected faults.
const (
	// ErrInjected is the Err of an injected error completion
	// (Config.Error).
	ErrInjected = provider.EIO
	// ErrCut is the Err of the error completion of a transmit to or from
	// a killed or partitioned peer on FI_EP_RDM and FI_EP_MSG.
	ErrCut = provider.EHOSTUNREACH
)

// faults is an endpoint's fault state, under endpoint.mu.
type faults struct {
	rng    *rand.Rand
	closed bool
	rm     bool // resource management: reserve room for injected completions
	// dupSkip counts send counter increments of duplicates still to be
	// swallowed (dupCntr).
	dupSkip atomic.Int32

	self []byte // the endpoint's address, known at Enable
	peer []byte // FI_EP_MSG: the connected peer's address, once known

	cfg *Config // the faults in force: the fabric's, or Hook.Configure's
	gen uint64  // Hook.Configure generation cfg was taken at

	held    []*op       // transmits held (Delay, Reorder, or queued behind those)
	holding atomic.Bool // len(held) > 0
	timer   *time.Timer
	timers  bool // held transmits may be posted from a timer (FI_THREAD_SAFE)
}

func (f *faults) init(st *state, id uint64, info *provider.Info) {
	f.rng = rand.New(rand.NewPCG(st.cfg.Seed, id))
	f.cfg = &st.cfg
	f.rm, f.timers = true, true
	if info != nil && info.DomainAttr != nil {
		f.rm = info.DomainAttr.ResourceMgmt != provider.RMDisabled
		f.timers = info.DomainAttr.Threading == provider.ThreadSafe || info.DomainAttr.Threading == 0
	}
}

// config returns the faults in force for the endpoint (callers hold mu):
// those Hook.Configure set for its address, else the fabric's.
func (e *endpoint) config() *Config {
	h := e.st.hook
	if g := h.confGen.Load(); g != e.f.gen {
		e.f.gen = g
		e.f.cfg = &e.st.cfg
		if c := h.configured(e.f.self); c != nil {
			e.f.cfg = c
		}
	}
	return e.f.cfg
}

// roll draws one fault of the given rate (callers hold mu); a zero rate
// draws nothing, so that adding a fault leaves the others' draws alone.
func (e *endpoint) roll(rate float64) bool {
	return rate > 0 && e.f.rng.Float64() < rate
}

// inject applies the faults to o, then posts what is left of it.
func (e *endpoint) inject(o *op) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f.closed {
		return provider.EBADF
	}
	h := e.st.hook
	if h.ctl.Load() && h.cut(e.f.self, e.dest(o)) {
		if e.epType == provider.EPDgram {
			return e.completeLocally(o, &h.stats.cut)
		}
		return e.completeErr(o, ErrCut, &h.stats.cut)
	}
	cfg := e.config()
	if e.roll(cfg.Error) {
		return e.completeErr(o, ErrInjected, &h.stats.errors)
	}
	dgramSend := e.epType == provider.EPDgram && (o.kind == opSend || o.kind == opTSend)
	if dgramSend && e.roll(cfg.Drop) {
		return e.completeLocally(o, &h.stats.dropped)
	}
	if dgramSend && e.roll(cfg.Dup) {
		o.dup = true
	}
	now := time.Now()
	hold := false
	var fault *atomic.Uint64 // the fault's count, nil for one queued behind
	switch {
	case e.roll(cfg.Delay):
		o.due = now.Add(cfg.DelayTime)
		hold, fault = true, &h.stats.delayed
	case !e.ordered && e.roll(cfg.Reorder):
		o.due = now.Add(cfg.ReorderTime)
		o.reorder = true
		hold, fault = true, &h.stats.reordered
	case e.blockedBehind():
		// A delayed transmit is held: this one queues behind it.
		o.due = now
		hold = true
	}
	if hold {
		if err := e.hold(o); err != nil {
			return err
		}
		if fault != nil {
			fault.Add(1)
		}
		return nil
	}
	if err := e.post(o); err != nil {
		return err
	}
	// What waited to be overtaken has been.
	e.releaseLocked(now, true)
	return nil
}

// dest returns the address bytes of o's destination, or nil when unknown
// (callers hold mu).
func (e *endpoint) dest(o *op) []byte {
	if e.epType == provider.EPMsg {
		if e.f.peer == nil && e.conn != nil {
			e.f.peer, _ = e.conn.Peer()
		}
		return e.f.peer
	}
	if e.res.AV == nil {
		return nil
	}
	return e.res.AV.Lookup(o.addr())
}

// blockedBehind reports whether a transmit other than one waiting to be
// overtaken is held (callers hold mu).
func (e *endpoint) blockedBehind() bool {
	for _, o := range e.f.held {
		if !o.reorder {
			return true
		}
	}
	return false
}

// post hands o to the core endpoint, twice for a duplicate: the copy
// completes nothing and counts nothing (dupCntr), and is given up if the
// core endpoint refuses it.
func (e *endpoint) post(o *op) error {
	err := e.postOnce(o, o.flags())
	if err != nil || !o.dup {
		return err
	}
	e.f.dupSkip.Add(1)
	if e.postOnce(o, o.flags()&^provider.FlagCompletion) != nil {
		e.f.dupSkip.Add(-1)
		return nil
	}
	e.st.hook.stats.dups.Add(1)
	return nil
}

// completeLocally ends a datagram send that is not sent: it completes
// successfully, as a sent datagram does (callers hold mu). Under resource
// management a full CQ answers FI_EAGAIN, as the core provider's send
// would.
func (e *endpoint) completeLocally(o *op, n *atomic.Uint64) error {
	cq := e.res.TxCQ
	comp := o.flags()&provider.FlagCompletion != 0 && cq != nil
	if r, ok := cq.(provider.CQReserver); ok && comp && e.f.rm && r.Full() {
		return provider.EAGAIN
	}
	if c := e.res.Cntrs[o.cntr()]; c != nil {
		c.Inc()
	}
	if comp {
		_ = cq.Write(o.ctx(), o.compFlags(), 0, nil, 0, 0, provider.AddrNotAvail)
	}
	n.Add(1)
	e.st.traceEnd(e, o, 0)
	return nil
}

// dupCntr is the send counter the core endpoint bumps: the duplicate of a
// datagram does not count. (The core provider bumps it while the
// duplicate is posted, under the endpoint's mu, so the skip is the
// duplicate's.)
type dupCntr struct {
	c provider.CntrOwner
	e *endpoint
}

func (d dupCntr) Inc() {
	for {
		n := d.e.f.dupSkip.Load()
		if n <= 0 {
			d.c.Inc()
			return
		}
		if d.e.f.dupSkip.CompareAndSwap(n, n-1) {
			return
		}
	}
}

func (d dupCntr) IncErr() { d.c.IncErr() }

// completeErr ends o without starting it: an error completion with err
// and the counter's error value (callers hold mu). The error completion
// is written whatever the selective completion flags: an operation that
// failed is never silent. With resource management the room is reserved
// first: without room the post returns FI_EAGAIN, and nothing happened.
func (e *endpoint) completeErr(o *op, err provider.Errno, n *atomic.Uint64) error {
	ee := provider.CQErrEntry{OpContext: o.ctx(), Flags: o.compFlags(), Err: err}
	switch cq := e.res.TxCQ.(type) {
	case nil:
		e.countErr(o)
	case provider.CQReserver:
		if e.f.rm {
			if !cq.Reserve() {
				return provider.EAGAIN
			}
			e.countErr(o)
			_ = cq.WriteErrReserved(&ee)
			break
		}
		e.countErr(o)
		_ = cq.WriteErr(&ee)
	default:
		e.countErr(o)
		_ = cq.WriteErr(&ee)
	}
	n.Add(1)
	e.st.traceEnd(e, o, err)
	return nil
}

// countErr bumps the error value of o's counter (the counter first, as
// the providers do: a thread that read the completion sees it counted).
func (e *endpoint) countErr(o *op) {
	if c := e.res.Cntrs[o.cntr()]; c != nil {
		c.IncErr()
	}
}

// hold queues o (callers hold mu). The application may reuse an inject
// buffer once the call returns, and the vectors of a Msg are the root's:
// they are copied. Under resource management a held transmit that will
// write a completion keeps room for it in the transmit CQ while it is
// held, as the core provider would from its post on: without room, the
// post answers FI_EAGAIN and nothing is held.
func (e *endpoint) hold(posted *op) error {
	if r, ok := e.res.TxCQ.(provider.CQReserver); ok && e.f.rm && posted.flags()&provider.FlagCompletion != 0 {
		if !r.Reserve() {
			return provider.EAGAIN
		}
		posted.reserved = true
	}
	// A copy is held: the transmits that are not held stay on their
	// poster's stack (the slow path allocates only for what it holds).
	o := new(op)
	*o = *posted
	inject := o.flags()&provider.FlagInject != 0
	if o.kind == opAtomic {
		o.a.Operand = copyBufs(o.a.Operand, inject)
		o.a.Compare = copyBufs(o.a.Compare, inject)
		o.a.Result = copyBufs(o.a.Result, false)
		o.a.RMA = append([]provider.RMAIOC(nil), o.a.RMA...)
	} else {
		if inject && o.kind != opRead {
			o.m.Buf = append([]byte(nil), o.m.Buf...)
		}
		if o.m.IOV != nil {
			iov := make([][]byte, len(o.m.IOV))
			for i, b := range o.m.IOV {
				if inject && o.kind != opRead {
					b = append([]byte(nil), b...)
				}
				iov[i] = b
			}
			o.m.IOV = iov
		}
		if o.m.Descs != nil {
			o.m.Descs = append([]provider.MRDesc(nil), o.m.Descs...)
		}
		if o.m.RMA != nil {
			o.m.RMA = append([]provider.RMAIOV(nil), o.m.RMA...)
		}
	}
	e.f.held = append(e.f.held, o)
	e.f.holding.Store(true)
	e.armTimer()
	return nil
}

// unreserve gives back the room a held transmit kept, before it is posted
// or completed by other means (callers hold mu).
func (e *endpoint) unreserve(o *op) {
	if o.reserved {
		o.reserved = false
		e.res.TxCQ.(provider.CQReserver).Unreserve()
	}
}

func copyBufs(b provider.AtomicBufs, data bool) provider.AtomicBufs {
	if data && b.Buf != nil {
		b.Buf = append([]byte(nil), b.Buf...)
	}
	if b.IOV != nil {
		iov := make([][]byte, len(b.IOV))
		for i, s := range b.IOV {
			if data {
				s = append([]byte(nil), s...)
			}
			iov[i] = s
		}
		b.IOV = iov
	}
	if b.Descs != nil {
		b.Descs = append([]provider.MRDesc(nil), b.Descs...)
	}
	return b
}

// armTimer makes sure a timer releases the head of the queue when it
// falls due, where the threading model lets a timer post (callers hold
// mu). Progress and blocking waits release held transmits too, so that
// nothing depends on the timer's goroutine being scheduled.
func (e *endpoint) armTimer() {
	if !e.f.timers || len(e.f.held) == 0 || e.f.closed {
		return
	}
	d := time.Until(e.f.held[0].due)
	if d < 0 {
		d = 0
	}
	if e.f.timer == nil {
		e.f.timer = time.AfterFunc(d, func() { e.release(false) })
		return
	}
	e.f.timer.Reset(d)
}

// nextDue returns when the head of the queue falls due.
func (e *endpoint) nextDue() (time.Time, bool) {
	if !e.f.holding.Load() {
		return time.Time{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.f.held) == 0 {
		return time.Time{}, false
	}
	return e.f.held[0].due, true
}

// release posts the held transmits that fell due; overtaken also
// releases those waiting to be overtaken.
func (e *endpoint) release(overtaken bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.releaseLocked(time.Now(), overtaken)
}

func (e *endpoint) releaseLocked(now time.Time, overtaken bool) {
	for len(e.f.held) > 0 {
		o := e.f.held[0]
		if o.due.After(now) && !(o.reorder && overtaken) {
			break
		}
		var err error
		e.unreserve(o)
		if h := e.st.hook; h.ctl.Load() && h.cut(e.f.self, e.dest(o)) {
			// Killed or partitioned while it was held.
			if e.epType == provider.EPDgram {
				err = e.completeLocally(o, &h.stats.cut)
			} else {
				err = e.completeErr(o, ErrCut, &h.stats.cut)
			}
		} else {
			err = e.post(o)
		}
		if err == provider.EAGAIN {
			// Retried at the next progress; the room is kept again
			// meanwhile, if there is any.
			if r, ok := e.res.TxCQ.(provider.CQReserver); ok && e.f.rm && o.flags()&provider.FlagCompletion != 0 && r.Reserve() {
				o.reserved = true
			}
			break
		}
		if err != nil {
			// The application's post succeeded: the failure is
			// reported as the operation's completion.
			e.failHeld(o, errnoOf(err))
		}
		e.f.held[0] = nil
		e.f.held = e.f.held[1:]
	}
	if len(e.f.held) == 0 {
		e.f.held = nil
		e.f.holding.Store(false)
		return
	}
	e.armTimer()
}

func errnoOf(err error) provider.Errno {
	if e, ok := err.(provider.Errno); ok {
		return e
	}
	return provider.EIO
}

// failHeld writes the error completion of a held transmit the application
// was told had started (no reservation: a CQ opened with resource
// management keeps entries beyond its size).
func (e *endpoint) failHeld(o *op, err provider.Errno) {
	e.countErr(o)
	ee := provider.CQErrEntry{OpContext: o.ctx(), Flags: o.compFlags(), Err: err}
	if o.reserved {
		o.reserved = false
		_ = e.res.TxCQ.(provider.CQReserver).WriteErrReserved(&ee)
	} else if e.res.TxCQ != nil {
		_ = e.res.TxCQ.WriteErr(&ee)
	}
	e.st.traceEnd(e, o, err)
}

// closeHeld posts what is held, before the core endpoint closes, and
// cancels (FI_ECANCELED) what it will not take.
func (e *endpoint) closeHeld() {
	if !e.f.holding.Load() {
		e.mu.Lock()
		e.f.closed = true
		e.mu.Unlock()
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.f.closed = true
	if e.f.timer != nil {
		e.f.timer.Stop()
	}
	for _, o := range e.f.held {
		o.due, o.reorder = time.Time{}, false
	}
	e.releaseLocked(time.Now(), true)
	for _, o := range e.f.held {
		e.failHeld(o, provider.ECANCELED)
	}
	e.f.held = nil
	e.f.holding.Store(false)
}

// cancelHeld cancels a held transmit with context ctx (fi_cancel).
func (e *endpoint) cancelHeld(ctx any) bool {
	if !e.f.holding.Load() {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, o := range e.f.held {
		if sameCtx(o.ctx(), ctx) {
			e.failHeld(o, provider.ECANCELED)
			e.f.held = append(e.f.held[:i], e.f.held[i+1:]...)
			if len(e.f.held) == 0 {
				e.f.held = nil
				e.f.holding.Store(false)
			}
			return true
		}
	}
	return false
}

// sameCtx compares two contexts without panicking on incomparable types.
func sameCtx(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}

// ---- controls ----

// partition is one Partition: members cut from the others until until.
type partition struct {
	members map[string]bool
	until   time.Time
}

// Kill makes the endpoint at address addr (as Name or fi_getname returns
// it) dead for every endpoint of the hook, from now on: transmits to it
// complete in error (ErrCut) on FI_EP_RDM and FI_EP_MSG and are dropped
// on FI_EP_DGRAM, and so are its own transmits if it is an endpoint of
// the hook. Operations the core provider had already started are left to
// finish.
func (h *Hook) Kill(addr []byte) {
	if h == nil {
		return
	}
	h.mu.Lock()
	if h.killed == nil {
		h.killed = map[string]bool{}
	}
	h.killed[string(addr)] = true
	h.mu.Unlock()
	h.ctl.Store(true)
	log.Info(provider.SubsysEPData, "peer killed", slog.String("addr", hexAddr(addr)))
}

// Partition cuts the endpoints at addrs from every other endpoint for d:
// until d has passed, a transmit between a member and a non-member
// completes in error (ErrCut) on FI_EP_RDM and FI_EP_MSG and is dropped on
// FI_EP_DGRAM; members reach each other, and so do non-members. Only
// transmits of the hook's endpoints are cut (both sides of a partition are
// cut when both are endpoints of the hook).
func (h *Hook) Partition(d time.Duration, addrs ...[]byte) {
	if h == nil {
		return
	}
	p := partition{members: map[string]bool{}, until: time.Now().Add(d)}
	for _, a := range addrs {
		p.members[string(a)] = true
	}
	h.mu.Lock()
	h.parts = append(h.parts, p)
	h.mu.Unlock()
	h.ctl.Store(true)
	log.Info(provider.SubsysEPData, "partition", slog.Int("members", len(addrs)), slog.Duration("for", d))
}

// Configure sets the faults of the hook's endpoint at address addr (as
// Name returns it; every endpoint of the hook with that address) to those
// of cfg, in place of its fabric's Config, from its next transmit on: the
// rates, DelayTime and ReorderTime (zero durations take the defaults);
// Seed and Trace stay the fabric's (the endpoint's random stream goes on).
// A nil cfg gives the endpoint its fabric's faults back. An invalid cfg
// (a rate outside 0 to 1, a negative duration) returns an error matching
// FI_EINVAL and changes nothing.
func (h *Hook) Configure(addr []byte, cfg *Config) error {
	if h == nil {
		return provider.EINVAL
	}
	var c *Config
	if cfg != nil {
		if err := cfg.check(); err != nil {
			return err
		}
		cc := *cfg
		if cc.DelayTime == 0 {
			cc.DelayTime = DefaultDelayTime
		}
		if cc.ReorderTime == 0 {
			cc.ReorderTime = DefaultReorderTime
		}
		c = &cc
	}
	h.mu.Lock()
	if c == nil {
		delete(h.conf, string(addr))
	} else {
		if h.conf == nil {
			h.conf = map[string]*Config{}
		}
		h.conf[string(addr)] = c
	}
	h.mu.Unlock()
	h.confGen.Add(1)
	h.ctl.Store(true)
	return nil
}

// configured returns the faults Configure set for addr, or nil.
func (h *Hook) configured(addr []byte) *Config {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conf[string(addr)]
}

// Heal ends every partition and revives every killed peer.
//
// Kill, Partition and Heal do nothing on a nil hook, and Configure
// returns FI_EINVAL.
func (h *Hook) Heal() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.killed, h.parts = nil, nil
	h.mu.Unlock()
}

// cut reports whether a transmit from self to dest is cut by a kill or a
// partition.
func (h *Hook) cut(self, dest []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.killed[string(dest)] || h.killed[string(self)] {
		return true
	}
	now := time.Now()
	live := h.parts[:0]
	cut := false
	for _, p := range h.parts {
		if now.After(p.until) {
			continue
		}
		live = append(live, p)
		if p.members[string(self)] != p.members[string(dest)] {
			cut = true
		}
	}
	for i := len(live); i < len(h.parts); i++ {
		h.parts[i] = partition{}
	}
	h.parts = live
	return cut
}
