package progress

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/provider"
)

// WaitSet is an fi_wait(3) wait set: one wait object shared by the CQs,
// counters and EQs opened with FI_WAIT_SET and its handle. Members join
// with Hub.JoinSet; every write to a member (Hub.Wake) marks the member
// ready and wakes the set, so Wait finds the members with work in a list
// of the ready ones, without looking at the others: a set of 64 CQs costs
// a waiter what a set of one does.
//
// Progress: the bound sources of every member form one Set, driven by
// Wait and TryWait (manual progress, in the caller's goroutine) and, while
// a waiter sleeps, by the Notifier's watchers under the same rules as a
// blocking CQ read.
type WaitSet struct {
	wait     provider.WaitObj
	notifier Notifier
	sources  Set
	fd       *FDWait // FI_WAIT_FD only

	mu      sync.Mutex
	ready   []*member // members marked ready; guarded by mu
	members int       // guarded by mu
}

// member is a Hub's link to its wait set.
type member struct {
	ws *WaitSet
	// flagged is set while the member is in ws.ready.
	flagged atomic.Bool
	// edge is set by Hub.SignalSet (fi_cq_signal): work once.
	edge atomic.Bool
	// pending reports whether the member has work (a level: entries
	// queued). nil for edge members (counters): a flagged edge member
	// counts as work once.
	pending func() bool
}

// CheckSetWaitObj validates the wait object of a wait set: fi_wait_open
// accepts FI_WAIT_UNSPEC, FI_WAIT_FD, FI_WAIT_MUTEX_COND and FI_WAIT_YIELD
// (fi_poll(3)); anything else is EINVAL.
func CheckSetWaitObj(w provider.WaitObj) error {
	switch w {
	case provider.WaitUnspec, provider.WaitFD, provider.WaitMutexCond, provider.WaitYield:
		return nil
	}
	return provider.EINVAL
}

// NewWaitSet opens a wait set with wait object w.
func NewWaitSet(w provider.WaitObj) (*WaitSet, error) {
	if err := CheckSetWaitObj(w); err != nil {
		return nil, err
	}
	ws := &WaitSet{wait: w}
	if w == provider.WaitFD {
		fd, err := NewFDWait()
		if err != nil {
			return nil, err
		}
		ws.fd = fd
	}
	return ws, nil
}

// WaitObj returns the wait object kind.
func (ws *WaitSet) WaitObj() provider.WaitObj { return ws.wait }

// Members returns the number of objects that joined and have not left.
func (ws *WaitSet) Members() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.members
}

// signal marks m ready and wakes the set; with m already marked it is one
// atomic load.
func (m *member) signal() {
	if m.flagged.Load() || !m.flagged.CompareAndSwap(false, true) {
		return
	}
	ws := m.ws
	ws.mu.Lock()
	ws.ready = append(ws.ready, m)
	ws.mu.Unlock()
	ws.notifier.Notify()
	if ws.fd != nil {
		ws.fd.Signal()
	}
}

// check reports whether a member marked ready has work. Members found
// without work are unmarked; the flag is cleared before the member is
// looked at, so a write that races with the check marks it again. It
// looks only at the marked members.
func (ws *WaitSet) check() bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for len(ws.ready) > 0 {
		m := ws.ready[0]
		m.flagged.Store(false)
		edge := m.edge.Swap(false) || m.pending == nil
		if m.pending != nil && m.pending() {
			m.flagged.Store(true)
			return true
		}
		ws.popLocked()
		if edge {
			// The mark itself is the work (a counter's change, a
			// signal), consumed now.
			return true
		}
	}
	return false
}

// popLocked drops the head of the ready list, keeping its array (no
// allocation once the list has grown to the number of busy members).
func (ws *WaitSet) popLocked() {
	n := copy(ws.ready, ws.ready[1:])
	ws.ready[n] = nil
	ws.ready = ws.ready[:n]
}

// Wait (fi_wait) returns nil once a member has work, driving the members'
// progress while it waits; ETIMEDOUT when the deadline passes (zero: never),
// ErrDone when done closes, EBADF once the set is closed.
func (ws *WaitSet) Wait(deadline time.Time, done <-chan struct{}) error {
	ready := func() bool {
		ws.sources.Run()
		return ws.check()
	}
	return ws.notifier.Block(Options{Deadline: deadline, Done: done, Set: &ws.sources,
		Yield: ws.wait == provider.WaitYield}, ready)
}

// TryWait (fi_trywait on the set) clears the FD signal, drives progress and
// returns EAGAIN if a member has work, nil if it is safe to block on the
// descriptor.
func (ws *WaitSet) TryWait() error {
	if ws.notifier.Closed() {
		return provider.EBADF
	}
	if ws.fd != nil {
		ws.fd.Reset()
	}
	ws.sources.Run()
	if ws.check() {
		if ws.fd != nil {
			ws.fd.Signal()
		}
		return provider.EAGAIN
	}
	return nil
}

// WaitFD returns the FI_WAIT_FD descriptor (fi_control FI_GETWAIT); ENOSYS
// for the other wait objects.
func (ws *WaitSet) WaitFD() (int, error) {
	if ws.notifier.Closed() {
		return -1, provider.EBADF
	}
	if ws.fd == nil {
		return -1, provider.ENOSYS
	}
	if fd := ws.fd.FD(); fd >= 0 {
		return fd, nil
	}
	return -1, provider.EBADF
}

// Close wakes and fails waiters and closes the descriptors. The caller
// checks that no member remains.
func (ws *WaitSet) Close() error {
	ws.notifier.Close()
	if ws.fd != nil {
		return ws.fd.Close()
	}
	return nil
}

func (ws *WaitSet) addSource(p provider.Progresser) error {
	if err := ws.sources.Add(p); err != nil {
		return err
	}
	if ws.fd != nil {
		if err := ws.fd.AddSource(p); err != nil {
			ws.sources.Remove(p)
			return err
		}
	}
	return nil
}

func (ws *WaitSet) removeSource(p provider.Progresser) {
	if ws.fd != nil {
		ws.fd.RemoveSource(p)
	}
	ws.sources.Remove(p)
}

// JoinSet makes the hub (opened with FI_WAIT_SET) a member of ws. pending
// reports whether the object has work (nil: every write is work once, as
// for counters). It must be called once, before the object is used.
func (h *Hub) JoinSet(ws *WaitSet, pending func() bool) error {
	if h.wait != provider.WaitSet || h.member != nil || ws == nil {
		return provider.EINVAL
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.notifier.Closed() {
		return provider.EBADF
	}
	ws.members++
	h.member = &member{ws: ws, pending: pending}
	return nil
}

// SignalSet wakes the hub's wait set once, whether or not the object has
// work (fi_cq_signal on a member of a wait set). No-op outside a set.
func (h *Hub) SignalSet() {
	if m := h.member; m != nil {
		m.edge.Store(true)
		m.signal()
	}
}

// leaveSet undoes JoinSet (at Close).
func (h *Hub) leaveSet() {
	m := h.member
	if m == nil {
		return
	}
	ws := m.ws
	for _, p := range h.set.Sources() {
		ws.removeSource(p)
	}
	ws.mu.Lock()
	ws.members--
	for i, x := range ws.ready {
		if x == m {
			ws.ready = append(ws.ready[:i], ws.ready[i+1:]...)
			break
		}
	}
	ws.mu.Unlock()
}
