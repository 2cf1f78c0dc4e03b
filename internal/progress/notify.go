package progress

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Tunables of the blocking machinery. They are variables so tests and
// benchmarks can adjust them; they are not meant to change at run time.
var (
	// SpinDuration is how long Block polls (progress + check) before it
	// parks. Waking a parked goroutine costs ~10 µs on small VMs, so a
	// short spin catches completions that are about to arrive.
	SpinDuration = 30 * time.Microsecond
	// WatchBound is the deadline a watcher passes to WaitReady, and so the
	// longest a watcher outlives the last parked reader.
	WatchBound = 50 * time.Millisecond
	// MaxBackoff bounds the pause of a watcher whose source keeps reporting
	// readiness without producing anything.
	MaxBackoff = 10 * time.Millisecond
	// MinBackoff is the first such pause; it doubles up to MaxBackoff.
	MinBackoff = 50 * time.Microsecond
)

// Errors returned by Block. They are libfabric error numbers so callers
// can return them unchanged where the man page agrees.
const (
	// ErrTimeout: the deadline passed.
	ErrTimeout = provider.ETIMEDOUT
	// ErrClosed: the Notifier was closed.
	ErrClosed = provider.EBADF
	// ErrDone: the done channel (usually a context's) was closed.
	ErrDone = provider.ECANCELED
)

// Notifier parks blocked readers until a writer notifies, a watched source
// becomes ready, a deadline passes, a done channel closes, or the Notifier
// is closed. The zero value is ready to use.
type Notifier struct {
	waiters atomic.Int32  // parked (or registering) readers
	gen     atomic.Uint64 // notifications delivered while someone was parked
	closed  atomic.Bool

	mu       sync.Mutex
	ch       chan struct{}                // closed by the next notification; guarded by mu
	watching map[provider.Progresser]bool // sources with a running watcher; guarded by mu

	// runMu serialises the watchers' progress calls with the readers:
	// a watcher runs the set's progress only while a reader sleeps in
	// park (inPark > 0), under runMu, and a reader leaving park takes
	// runMu, so it returns only after a watcher's run in progress ended.
	// Every progress call a watcher makes thus happens inside some
	// reader's blocking call, between its own checks: an application
	// that serialises its calls on a source (FI_THREAD_DOMAIN,
	// FI_THREAD_COMPLETION) serialises the watchers' with them, and
	// closing a source after the blocking call returned cannot overlap
	// a watcher's progress of it.
	runMu  sync.Mutex
	inPark int // readers sleeping in park; guarded by runMu
}

// Notify wakes every parked reader. With nobody parked it is one atomic
// load: writers call it after every write.
func (n *Notifier) Notify() {
	if n.waiters.Load() == 0 {
		return
	}
	n.wake()
}

func (n *Notifier) wake() {
	n.mu.Lock()
	n.gen.Add(1)
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
	n.mu.Unlock()
}

// Close wakes every parked reader; later Blocks return ErrClosed. Close is
// idempotent.
func (n *Notifier) Close() {
	n.closed.Store(true)
	n.wake()
}

// Closed reports whether Close was called.
func (n *Notifier) Closed() bool { return n.closed.Load() }

// Parked returns the number of readers parked (or about to park).
func (n *Notifier) Parked() int { return int(n.waiters.Load()) }

// prepare registers the caller as parked and returns the channel the next
// notification closes. The caller must re-check its condition after
// prepare and before waiting, and call unpark when done.
func (n *Notifier) prepare(set *Set) chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.waiters.Add(1)
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	if set != nil {
		n.startWatchersLocked(set)
	}
	return n.ch
}

func (n *Notifier) unpark() { n.waiters.Add(-1) }

// Options controls one Block call.
type Options struct {
	// Deadline is when Block gives up with ErrTimeout; zero means never.
	Deadline time.Time
	// Done, when closed, makes Block return ErrDone (pass ctx.Done()).
	Done <-chan struct{}
	// Set supplies the sources whose readiness wakes the reader (those
	// implementing provider.Waiter or provider.FDWaiter). May be nil.
	Set *Set
	// Yield makes Block poll with runtime.Gosched instead of parking
	// (FI_WAIT_YIELD).
	Yield bool
}

// Block calls ready until it returns true, and returns nil then. ready is
// responsible for driving progress and for checking the condition (and
// may perform the read itself). Block first polls for SpinDuration, then
// registers, calls ready once more, and parks; it repeats after every
// wake-up. It returns ErrTimeout, ErrDone or ErrClosed when the deadline
// passes, Done closes or the Notifier is closed before ready succeeds.
func (n *Notifier) Block(o Options, ready func() bool) error {
	if ready() {
		return nil
	}
	spinEnd := time.Now().Add(SpinDuration)
	for {
		if n.closed.Load() {
			return ErrClosed
		}
		if o.Done != nil {
			select {
			case <-o.Done:
				return ErrDone
			default:
			}
		}
		now := time.Now()
		if !o.Deadline.IsZero() && !now.Before(o.Deadline) {
			return ErrTimeout
		}
		if o.Yield || now.Before(spinEnd) {
			if o.Yield {
				runtime.Gosched()
			}
			if ready() {
				return nil
			}
			continue
		}
		ch := n.prepare(o.Set)
		if n.closed.Load() {
			n.unpark()
			return ErrClosed
		}
		if ready() {
			n.unpark()
			return nil
		}
		n.runMu.Lock()
		n.inPark++
		n.runMu.Unlock()
		err := n.park(ch, o)
		n.runMu.Lock() // waits for a watcher's progress run
		n.inPark--
		n.runMu.Unlock()
		n.unpark()
		if err != nil {
			return err
		}
		if ready() {
			return nil
		}
	}
}

func (n *Notifier) park(ch chan struct{}, o Options) error {
	var tc <-chan time.Time
	if !o.Deadline.IsZero() {
		d := time.Until(o.Deadline)
		if d <= 0 {
			return ErrTimeout
		}
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-ch:
		return nil
	case <-tc:
		return ErrTimeout
	case <-o.Done:
		return ErrDone
	}
}

// ---- watchers ----

func readinessOf(p provider.Progresser) bool {
	switch p.(type) {
	case provider.Waiter, provider.FDWaiter:
		return true
	}
	return false
}

// startWatchersLocked starts a watcher for every waitable source of set
// that has none. n.mu is held.
func (n *Notifier) startWatchersLocked(set *Set) {
	for _, p := range set.Sources() {
		if !readinessOf(p) || n.watching[p] {
			continue
		}
		if n.watching == nil {
			n.watching = make(map[provider.Progresser]bool)
		}
		n.watching[p] = true
		go n.watch(set, p)
	}
}

// stillWanted reports whether the watcher of p should keep running, and
// unregisters it (under n.mu, so a reader that parks afterwards starts a
// new one) when it should not.
func (n *Notifier) stillWanted(set *Set, p provider.Progresser) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.waiters.Load() > 0 && !n.closed.Load() && set.Contains(p) {
		return true
	}
	delete(n.watching, p)
	return false
}

// isTimeout reports whether err is a readiness wait that reached its
// deadline.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func waitReady(p provider.Progresser, deadline time.Time) error {
	switch w := p.(type) {
	case provider.Waiter:
		return w.WaitReady(deadline)
	case provider.FDWaiter:
		ms := int(time.Until(deadline) / time.Millisecond)
		if ms < 0 {
			ms = 0
		}
		ok, err := sys.PollReadable(w.WaitFD(), ms)
		if err != nil {
			return err
		}
		if !ok {
			return ErrTimeout
		}
		return nil
	}
	return provider.ENOSYS
}

// watch waits for p's readiness while anyone is parked; on readiness it
// runs the set's progress and wakes the readers. A source that reports
// readiness without producing anything, or whose readiness wait fails at
// once (closed, not yet enabled), is asked again after an exponential
// backoff instead of in a tight loop.
func (n *Notifier) watch(set *Set, p provider.Progresser) {
	backoff := time.Duration(0)
	pause := func(limit time.Duration) {
		if backoff == 0 {
			backoff = MinBackoff
		} else if backoff *= 2; backoff > limit {
			backoff = limit
		}
		time.Sleep(backoff)
	}
	for n.stillWanted(set, p) {
		deadline := time.Now().Add(WatchBound)
		if err := waitReady(p, deadline); err != nil {
			if !isTimeout(err) && time.Now().Before(deadline) {
				// Failed before the deadline: the source is closed or not
				// ready to be waited on. Readers still wake on writes and
				// their own deadlines; try again later.
				pause(WatchBound)
			}
			continue
		}
		g := n.gen.Load()
		if !n.runParked(set) {
			// Nobody parked: the readers are checking (or gone, and
			// stillWanted decides).
			runtime.Gosched()
			continue
		}
		productive := n.gen.Load() != g
		// Wake the readers so they re-check, even if nothing was
		// notified: progress may have changed state they poll.
		n.Notify()
		if productive {
			backoff = 0
			continue
		}
		// Ready but unproductive: pause before asking again.
		pause(MaxBackoff)
	}
}

// runParked runs the set's progress if a reader sleeps in park, and
// reports whether it did (see runMu).
func (n *Notifier) runParked(set *Set) bool {
	n.runMu.Lock()
	defer n.runMu.Unlock()
	if n.inPark == 0 {
		return false
	}
	set.Run()
	return true
}
