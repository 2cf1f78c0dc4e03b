package shm

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// FI_WAIT_FD support (provider.FDWaiter). The first WaitFD call creates
// an eventfd and a goroutine (fdLoop) that makes it readable when work
// waits unprogressed: a command in the inbound queue that nobody took
// within fdArmDelay, pending transmits, or operations waiting on peers
// (every maxSleep, for the death checks). Progress (fdDrain) makes it
// unreadable again once nothing is left, then re-checks, so a command
// that arrives meanwhile re-arms it.
//
// While the application polls (Progress keeps being called) the goroutine
// checks every fdPollCheck with a timer and is not a futex sleeper, so
// senders pay no wake-up system call per message; once the polls stop
// (the application blocks on the descriptor) it sleeps on the region's
// futex and the next command wakes it. Endpoints never asked for a
// descriptor run no goroutine and hold no descriptor.
type fdReady struct {
	on    atomic.Bool   // the eventfd and goroutine exist
	armed atomic.Bool   // the eventfd is signalled
	stop  atomic.Bool   // fdClose asks the goroutine to end
	polls atomic.Uint64 // Progress calls (fdDrain) seen
	kick  chan struct{} // fdDrain disarmed the eventfd
	mu    sync.Mutex    // creation and close
	fd    int
	done  chan struct{}
}

var _ provider.FDWaiter = (*endpoint)(nil)

const (
	// fdArmDelay is how long a command must wait unprogressed before
	// the descriptor is made readable: an application that polls takes
	// it within microseconds and needs no descriptor.
	fdArmDelay = 50 * time.Microsecond
	// fdPollCheck is how often the goroutine looks while the
	// application polls.
	fdPollCheck = 500 * time.Microsecond
)

// WaitFD returns a descriptor that is readable while progress may be
// possible, or -1 if none can be made (closed endpoint, no eventfd).
func (ep *endpoint) WaitFD() int {
	f := &ep.fdr
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.on.Load() {
		return f.fd
	}
	if ep.state.Load() == stateClosed || f.stop.Load() {
		return -1
	}
	fd, err := sys.EventFDOpen()
	if err != nil {
		return -1
	}
	f.fd, f.done, f.kick = fd, make(chan struct{}), make(chan struct{}, 1)
	f.on.Store(true)
	go ep.fdLoop()
	return fd
}

// fdLoop arms the eventfd when work waits unprogressed (see fdReady).
func (ep *endpoint) fdLoop() {
	f := &ep.fdr
	defer close(f.done)
	lastArm := time.Now()
	polls := f.polls.Load()
	for !f.stop.Load() && ep.hold() {
		enabled := ep.state.Load() == stateEnabled
		pending, head := ep.own.Pending(), ep.own.Head()
		peers := ep.waitingOnPeers()
		ep.release()
		switch {
		case f.armed.Load():
			// The application will progress, and fdDrain kicks.
			select {
			case <-f.kick:
			case <-time.After(maxSleep):
			}
		case f.polls.Load() != polls:
			// The application is polling and takes the work itself: no
			// futex sleep (senders would pay a wake-up per message).
			polls = f.polls.Load()
			time.Sleep(fdPollCheck)
		case enabled && pending:
			// Arm only if nobody took the command meanwhile.
			time.Sleep(fdArmDelay)
			if ep.hold() {
				if ep.own.Pending() && ep.own.Head() == head && f.polls.Load() == polls {
					f.arm()
					lastArm = time.Now()
				}
				ep.release()
			}
		case enabled && peers && time.Since(lastArm) >= ep.idleSleep(time.Time{}):
			// Transmits to retry, or peers to check.
			f.arm()
			lastArm = time.Now()
		default:
			ep.sleepOwn(ep.idleSleep(time.Time{}))
		}
	}
}

func (f *fdReady) arm() {
	if f.armed.CompareAndSwap(false, true) {
		sys.EventFDSignal(f.fd)
	}
}

// fdDrain counts a progress call and makes the eventfd unreadable once
// nothing is left to do; a command that arrived meanwhile arms it again
// (Progress, when the fd waiter exists).
func (ep *endpoint) fdDrain() {
	f := &ep.fdr
	f.polls.Add(1)
	if !f.armed.Load() || ep.busy() {
		return
	}
	if f.armed.CompareAndSwap(true, false) {
		sys.EventFDDrain(f.fd)
		if ep.own.Pending() {
			f.arm()
			return
		}
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
}

// fdClose stops the goroutine and closes the eventfd (Close, after the
// state is closed).
func (ep *endpoint) fdClose() {
	f := &ep.fdr
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stop.Store(true)
	if !f.on.Load() {
		return
	}
	select {
	case f.kick <- struct{}{}:
	default:
	}
	<-f.done // it re-checks stop at least every maxSleep; Close woke sleepOwn
	sys.EventFDClose(f.fd)
	f.on.Store(false)
	f.fd = -1
}
