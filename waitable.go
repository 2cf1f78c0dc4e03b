package fabric

import (
	"context"
	"time"

	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/provider"
)

// waitQueue is the part of the internal queues (cq.CQ, cntr.Cntr, eq.EQ)
// that CQ, Cntr and EQ use alike. None of its methods is on the read path:
// the read methods call their concrete queue directly.
type waitQueue interface {
	AddSource(provider.Progresser) error
	RemoveSource(provider.Progresser)
	WaitFD() (int, error)
	PollFDs(dst []int) ([]int, uint64, error)
	TryWait() error
	Close() error
}

// waitable is what CQ, Cntr and EQ share: the lifecycle (ErrBusy while
// objects are bound, ErrClosed after Close), the parent that the object
// holds open, the wait object of its internal queue (WaitFD, TryWait), and
// the bind hooks that add bound objects to the progress sources driven by
// reads. For an FI_PEER import there is no queue (wq is nil): the progress
// sources of the bound endpoints are kept in pset and driven by Read.
type waitable struct {
	lc     lifecycle
	parent *lifecycle   // domain (CQ, Cntr) or fabric (EQ), released by close
	prov   string       // provider name, for *OpError
	wq     waitQueue    // nil for an FI_PEER import
	pset   progress.Set // progress sources of an FI_PEER import
	wset   *Wait        // the wait set of an FI_WAIT_SET object, released by close
}

// init sets the parent and provider name; q is nil for an FI_PEER import.
// The caller has already taken a hold on parent.
func (w *waitable) init(parent *lifecycle, prov string, q waitQueue) {
	w.parent, w.prov, w.wq = parent, prov, q
}

// noQueue is the error of an operation that an FI_PEER import does not
// offer: ErrNoSys, or ErrClosed after Close.
func (w *waitable) noQueue() error {
	if w.lc.isClosed() {
		return ErrClosed
	}
	return ErrNoSys
}

// runPeer drives the progress of an FI_PEER import's bound endpoints, or
// returns ErrClosed.
func (w *waitable) runPeer() error {
	if w.lc.isClosed() {
		return ErrClosed
	}
	w.pset.Run()
	return nil
}

// waitFD is fi_control(FI_GETWAIT), with the error wrapped in *OpError.
func (w *waitable) waitFD() (int, error) {
	if w.wq == nil {
		return -1, opErr("fi_control", w.prov, w.noQueue())
	}
	fd, err := w.wq.WaitFD()
	if err != nil {
		return -1, opErr("fi_control", w.prov, closedErr(err))
	}
	return fd, nil
}

// PollFD is one descriptor of an FI_WAIT_POLLFD wait object (an entry of
// struct fi_wait_pollfd, as struct pollfd): FD, and Events, the poll(2)
// events to wait for (always POLLIN, 0x1: the descriptor becomes readable
// when the object may have work).
type PollFD struct {
	FD     int
	Events int16
}

// pollIn is poll(2)'s POLLIN.
const pollIn = 0x1

// pollFDs is fi_control(FI_GETWAIT) of an FI_WAIT_POLLFD object, with the
// error wrapped in *OpError.
func (w *waitable) pollFDs() ([]PollFD, uint64, error) {
	if w.wq == nil {
		return nil, 0, opErr("fi_control", w.prov, w.noQueue())
	}
	fds, change, err := w.wq.PollFDs(nil)
	if err != nil {
		return nil, 0, opErr("fi_control", w.prov, closedErr(err))
	}
	out := make([]PollFD, len(fds))
	for i, fd := range fds {
		out[i] = PollFD{FD: fd, Events: pollIn}
	}
	return out, change, nil
}

// tryWait is fi_trywait (bare errors, as on the data path).
func (w *waitable) tryWait() error {
	if w.wq == nil {
		return w.noQueue()
	}
	return closedErr(w.wq.TryWait())
}

// close is fi_close: ErrBusy while objects are bound, ErrClosed on a second
// call (both wrapped); it closes the queue, which wakes blocked readers,
// and releases the parent.
func (w *waitable) close() error {
	if err := w.lc.beginClose(); err != nil {
		return opErr("fi_close", w.prov, err)
	}
	var err error
	if w.wq != nil {
		err = w.wq.Close()
	}
	if w.wset != nil {
		w.wset.lc.release()
	}
	w.parent.release()
	return opErr("fi_close", w.prov, err)
}

// bindEndpoint registers a bound object (endpoint, passive endpoint,
// domain, AV ...): Close returns ErrBusy until unbindEndpoint. p, if not
// nil, is added to the progress sources driven by reads and waits, and
// (FI_WAIT_FD) its descriptor to the wait set when it implements
// provider.FDWaiter. Errors (bare): ErrClosed, ErrInval (p not comparable).
func (w *waitable) bindEndpoint(p provider.Progresser) error {
	if err := w.lc.hold(); err != nil {
		return err
	}
	if err := w.addSource(p); err != nil {
		w.lc.release()
		return closedErr(err)
	}
	return nil
}

// unbindEndpoint undoes bindEndpoint.
func (w *waitable) unbindEndpoint(p provider.Progresser) {
	w.removeSource(p)
	w.lc.release()
}

// addSource adds p (if not nil) to the progress sources driven by reads
// and waits, without holding the object open.
func (w *waitable) addSource(p provider.Progresser) error {
	if w.wq != nil {
		return w.wq.AddSource(p)
	}
	if p != nil {
		return w.pset.Add(p)
	}
	return nil
}

// removeSource undoes addSource.
func (w *waitable) removeSource(p provider.Progresser) {
	if w.wq != nil {
		w.wq.RemoveSource(p)
	} else if p != nil {
		w.pset.Remove(p)
	}
}

// closedErr maps the internal queues' closed error to ErrClosed.
func closedErr(err error) error {
	// A type assertion, not err == provider.EBADF: comparing two
	// interfaces calls into the runtime, on every empty CQ read.
	if e, ok := err.(provider.Errno); ok && e == provider.EBADF {
		return ErrClosed
	}
	return err
}

// waitDeadline converts the timeout of a blocking call to a deadline:
// negative waits forever (the zero time), 0 polls once (a deadline already
// past), positive waits that long.
func waitDeadline(timeout time.Duration) time.Time {
	if timeout < 0 {
		return time.Time{}
	}
	return time.Now().Add(timeout)
}

// blockErr names the call in the error of a blocking call on an object
// that cannot block (ErrNoSys: opened with WaitNone, or an FI_PEER
// import); other errors stay bare, as on the data path.
func blockErr(op, prov string, err error) error {
	if err == ErrNoSys {
		return &OpError{Op: op, Provider: prov, Err: err}
	}
	return closedErr(err)
}

// WaitError is the error of a blocking ...Context call (CQ.SReadContext,
// EQ.SReadContext, Cntr.WaitContext) whose context ended first. It has two
// identities under errors.Is: the libfabric error that the C call returns
// (ErrAgain for fi_cq_sread and fi_eq_sread, ErrTimedOut for fi_cntr_wait,
// ErrCanceled for a cancelled context) and the context's error
// (context.DeadlineExceeded or context.Canceled).
type WaitError struct {
	Op    string // libfabric call, e.g. "fi_cq_sread"
	Errno Errno  // what the C call returns
	Ctx   error  // ctx.Err()
}

// Error returns "op: context error: libfabric error".
func (e *WaitError) Error() string { return e.Op + ": " + e.Ctx.Error() + ": " + e.Errno.Error() }

// Unwrap returns both identities.
func (e *WaitError) Unwrap() []error { return []error{e.Errno, e.Ctx} }

// Timeout reports whether the context's deadline passed (as net.Error).
func (e *WaitError) Timeout() bool { return e.Ctx == context.DeadlineExceeded }

// ctxErr builds the error of a blocking call whose context ended: errno
// for a passed deadline, ErrCanceled for a cancelled context.
func ctxErr(op string, err error, errno Errno) error {
	if err == nil {
		return errno
	}
	if err != context.DeadlineExceeded {
		errno = ErrCanceled
	}
	return &WaitError{Op: op, Errno: errno, Ctx: err}
}

// ctxDone reports the error of a blocking call that the internal queue
// ended with progress.ErrDone (the context ended), or nil.
func ctxDone(op string, ctx context.Context, err error, errno Errno) error {
	if err == progress.ErrDone {
		return ctxErr(op, ctx.Err(), errno)
	}
	return nil
}
