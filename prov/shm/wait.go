package shm

import (
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Blocking waits (shm.md "Wake-ups and progress"). Each region holds two
// shared words: seq, which producers bump to wake the owner, and sleepers,
// the number of the owner's threads asleep on seq. A producer, after
// publishing a command, loads sleepers (one atomic load when nobody
// sleeps) and, if it is not zero, bumps seq and wakes the futex on it. A
// sleeper increments sleepers, reads seq, re-checks the queue, and sleeps
// on the futex while seq keeps the value it read; so a command published
// after the re-check changes seq first and the sleep returns at once. The
// futex is a shared one (internal/sys): the words are in a MAP_SHARED
// file mapping and the producers are other processes.
//
// Nobody wakes an endpoint whose transmits wait for a peer's resources (a
// full command queue, no free bounce buffer): the peer frees them without
// knowing who waits. A sleeper with pending transmits therefore sleeps at
// most txPoll; the peer-death checks (death.go) run from those progress
// calls.
const (
	// txPoll bounds a sleep while transmits are pending.
	txPoll = 100 * time.Microsecond
	// maxSleep bounds a sleep while operations wait on peers (the period
	// of the death checks, death.go).
	maxSleep = deathCheck
	// idleMax bounds a sleep with nothing pending (Close wakes sleepers;
	// the bound is a safety net).
	idleMax = time.Second
)

// waitState counts the futex sleeps of an endpoint (tests check that idle
// sleepers sleep rather than poll).
type waitState struct {
	sleeps atomic.Uint64
}

// futexWake wakes the sleepers of region r, if it has any.
func futexWake(r *shmring.Region) {
	if r.Wake() {
		sys.FutexWakeAtomic(r.Seq(), sys.FutexWakeAll)
	}
}

// wakeOwn wakes every sleeper on the endpoint's own region, whether or
// not a command is waiting (Close, stopping the fd goroutine).
func (ep *endpoint) wakeOwn() {
	ep.own.Seq().Add(1)
	sys.FutexWakeAtomic(ep.own.Seq(), sys.FutexWakeAll)
}

// sleepOwn sleeps on the endpoint's wake word for at most d, unless a
// command is already waiting or the endpoint is closed. It returns when a
// producer pushes a command, Close wakes it, d passes or a signal
// interrupts it: the caller re-checks its condition.
func (ep *endpoint) sleepOwn(d time.Duration) {
	if d <= 0 || !ep.hold() {
		return
	}
	defer ep.release()
	ep.waits.sleeps.Add(1)
	r := ep.own
	r.Sleepers().Add(1)
	s := r.Seq().Load()
	if !r.Pending() && ep.state.Load() != stateClosed {
		sys.FutexWaitAtomic(r.Seq(), s, d)
	}
	r.Sleepers().Add(^uint32(0))
}

// hold registers a user of the endpoint's region mapping outside a data
// call (a sleeper, the fd goroutine), so that Close, which waits for
// inflight to drop to zero after waking the sleepers, does not unmap it
// underneath; false once the endpoint is closed.
func (ep *endpoint) hold() bool {
	ep.inflight.Add(1)
	if ep.state.Load() == stateClosed {
		ep.inflight.Add(-1)
		return false
	}
	return true
}

func (ep *endpoint) release() { ep.inflight.Add(-1) }

// idleSleep returns how long a sleeper may sleep before it must look
// again: txPoll while transmits (or RMA requests and answers) wait for a
// peer's room, maxSleep while other
// operations wait on peers, else idleMax; never past deadline (zero:
// none).
func (ep *endpoint) idleSleep(deadline time.Time) time.Duration {
	d := idleMax
	switch {
	case ep.tx.pending.Load() != 0 || ep.rmaBusy():
		d = txPoll
	case ep.waitingOnPeers():
		d = maxSleep
	}
	if !deadline.IsZero() {
		d = min(d, time.Until(deadline))
	}
	return d
}

// WaitReady waits until progress may be possible: a command is waiting in
// the inbound queue, or operations wait on peers (after a sleep of txPoll
// or maxSleep: a peer may have freed room, or died). It returns ETIMEDOUT
// when the deadline passes first and EBADF once the endpoint is closed.
// It sleeps on the region's futex, not in a polling loop.
func (ep *endpoint) WaitReady(deadline time.Time) error {
	for {
		if !ep.hold() {
			return provider.EBADF
		}
		ready := ep.state.Load() == stateEnabled && ep.own.Pending()
		ep.release()
		if ready {
			return nil
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return provider.ETIMEDOUT
		}
		// With operations waiting on peers, progress must run again
		// after the sleep (pending transmits, death checks).
		peers := ep.waitingOnPeers()
		ep.sleepOwn(ep.idleSleep(deadline))
		if peers && ep.state.Load() == stateEnabled {
			return nil
		}
	}
}
