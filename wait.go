package fabric

import (
	"context"
	"time"

	"github.com/gofabric/fabric/internal/progress"
)

// WaitAttr is fi_wait_attr: how a wait set is opened.
type WaitAttr struct {
	// WaitObj is the wait set's wait object: WaitUnspec (the default, the
	// zero value), WaitFD (WaitFD returns a descriptor for poll/epoll),
	// WaitMutexCond or WaitYield (Wait polls, yielding). Others, WaitSet
	// and WaitPollFD included, give ErrInval (fi_poll(3)).
	WaitObj WaitObj
	// Flags must be 0 (ErrInval otherwise).
	Flags Flags
}

// Wait is a wait set (fid_wait, fi_wait(3) in fi_poll(3)): one wait object
// shared by the CQs, counters and EQs of a fabric that were opened with
// WaitObj WaitSet and the set as their WaitSet attribute. Wait blocks until
// one of them has work. A write to a member marks that member ready, so a
// waiter finds the members with work without looking at the others: a set
// of 64 CQs costs Wait what a set of one does. All methods are safe for
// concurrent use; methods of a nil *Wait return ErrInval.
type Wait struct {
	lc   lifecycle // members hold it: Close returns ErrBusy while any is open
	fab  *Fabric
	attr WaitAttr
	ws   *progress.WaitSet
}

// OpenWait opens a wait set (fi_wait_open). attr may be nil for the
// defaults. The fabric cannot be closed while the set is open. Errors
// (wrapped in *OpError): ErrInval for a wait object the set cannot use or
// non-zero flags, ErrClosed for a closed fabric.
func (f *Fabric) OpenWait(attr *WaitAttr) (*Wait, error) {
	if f == nil {
		return nil, ErrInval
	}
	prov := f.prov.Name()
	var a WaitAttr
	if attr != nil {
		a = *attr
	}
	if a.Flags != 0 {
		return nil, opErr("fi_wait_open", prov, ErrInval)
	}
	if err := progress.CheckSetWaitObj(a.WaitObj); err != nil {
		return nil, opErr("fi_wait_open", prov, err)
	}
	if err := f.lc.hold(); err != nil {
		return nil, opErr("fi_wait_open", prov, err)
	}
	ws, err := progress.NewWaitSet(a.WaitObj)
	if err != nil {
		f.lc.release()
		return nil, opErr("fi_wait_open", prov, err)
	}
	return &Wait{fab: f, attr: a, ws: ws}, nil
}

// Attr returns the wait set's attributes.
func (w *Wait) Attr() WaitAttr {
	if w == nil {
		return WaitAttr{}
	}
	return w.attr
}

// Wait blocks until a member of the set has work (fi_wait): a completion
// or an error completion queued in a CQ, an event in an EQ, a change of a
// counter (each change wakes one Wait), or fi_cq_signal on a member CQ.
// It drives the progress of the members' endpoints while it waits. A
// negative timeout waits forever; 0 checks once. It returns nil when a
// member has work (read the members, or use a poll set, to find which),
// ErrTimedOut when the timeout passes, ErrClosed after Close. The error is
// bare, as on the data path; Wait does not allocate.
func (w *Wait) Wait(timeout time.Duration) error {
	if w == nil {
		return ErrInval
	}
	return w.wait(waitDeadline(timeout), nil)
}

// WaitContext is Wait bounded by a context instead of a timeout. When ctx
// ends first the error is a *WaitError that matches both ErrTimedOut (what
// fi_wait returns on timeout; ErrCanceled for a cancelled context) and
// ctx.Err() under errors.Is.
func (w *Wait) WaitContext(ctx context.Context) error {
	if w == nil || ctx == nil {
		return ErrInval
	}
	if err := ctx.Err(); err != nil {
		return ctxErr("fi_wait", err, ErrTimedOut)
	}
	err := w.wait(time.Time{}, ctx.Done())
	if cerr := ctxDone("fi_wait", ctx, err, ErrTimedOut); cerr != nil {
		return cerr
	}
	return err
}

func (w *Wait) wait(deadline time.Time, done <-chan struct{}) error {
	err := w.ws.Wait(deadline, done)
	if err == progress.ErrDone {
		return err
	}
	return closedErr(err)
}

// WaitFD returns the set's descriptor (fi_control FI_GETWAIT) for a set
// opened with WaitFD: readable when a member may have work. Call TryWait
// (or Fabric.TryWait) before blocking on it. Errors (wrapped): ErrNoSys
// for the other wait objects, ErrClosed.
func (w *Wait) WaitFD() (int, error) {
	if w == nil {
		return -1, ErrInval
	}
	fd, err := w.ws.WaitFD()
	if err != nil {
		return -1, opErr("fi_control", w.fab.prov.Name(), closedErr(err))
	}
	return fd, nil
}

// TryWait prepares to block on the set's descriptor (fi_trywait with the
// set): it clears the descriptor's signal, drives progress, and returns
// ErrAgain if a member has work, nil if it is safe to block.
func (w *Wait) TryWait() error {
	if w == nil {
		return ErrInval
	}
	return closedErr(w.ws.TryWait())
}

// Close closes the wait set (fi_close). It returns ErrBusy while a CQ,
// counter or EQ opened with it is open, and ErrClosed on a second call
// (both wrapped). Closing wakes blocked Wait callers (ErrClosed).
func (w *Wait) Close() error {
	if w == nil {
		return ErrInval
	}
	if err := w.lc.beginClose(); err != nil {
		return opErr("fi_close", w.fab.prov.Name(), err)
	}
	err := w.ws.Close()
	w.fab.lc.release()
	return opErr("fi_close", w.fab.prov.Name(), err)
}

// waitSetCheck validates the WaitObj/WaitSet pair of a CQ, counter or EQ
// opened on fabric f: WaitObj WaitSet needs a set of the same fabric, and a
// set needs WaitObj WaitSet (ErrInval otherwise).
func waitSetCheck(f *Fabric, obj WaitObj, ws *Wait) error {
	if (obj == WaitSet) != (ws != nil) {
		return ErrInval
	}
	if ws != nil && ws.fab != f {
		return ErrInval
	}
	return nil
}

// setMember is the part of the internal queues that joins a wait set.
type setMember interface {
	JoinSet(ws *progress.WaitSet, pending func() bool) error
}

// join makes q a member of ws (when ws is not nil) and holds ws open until
// the member closes (waitable.close releases it).
func (w *waitable) join(ws *Wait, q setMember, pending func() bool) error {
	if ws == nil {
		return nil
	}
	if err := ws.lc.hold(); err != nil {
		return err
	}
	if err := q.JoinSet(ws.ws, pending); err != nil {
		ws.lc.release()
		return closedErr(err)
	}
	w.wset = ws
	return nil
}
