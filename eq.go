package fabric

import (
	"context"
	"time"

	"github.com/gofabric/fabric/internal/eq"
	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// EQAttr is fi_eq_attr: how an event queue is opened. The zero value (or
// a nil *EQAttr) is a useful EQ: 1024 events and a wait object, so SRead
// blocks.
type EQAttr struct {
	// Size is the number of events the EQ holds; 0 means 1024. An EQ that
	// overruns is fatal (fi_eq(3)): further writes fail with ErrOverrun and
	// reads return ErrOverrun once the queued events are drained.
	Size uint64
	// Flags: FlagWrite (the application may call Write, fi_eq_write),
	// FlagAffinity (ignored) and FlagPeer (import the owner's EQ given in
	// Peer). Other bits give ErrInval. Default 0.
	Flags Flags
	// WaitObj is the wait object. The default, WaitUnspec (the zero
	// value), lets SRead block; so do WaitMutexCond and WaitYield (which
	// polls). WaitFD also provides a descriptor (WaitFD). WaitNone, asked
	// for explicitly, makes an EQ that is only polled (SRead gives
	// ErrNoSys). WaitSet makes the EQ a member of the wait set WaitSet
	// (which wakes when events are queued). WaitPollFD provides a list of
	// descriptors (WaitPollFD).
	WaitObj WaitObj
	// WaitSet is the wait set (of the same fabric) an EQ opened with
	// WaitObj WaitSet joins; nil for other wait objects (ErrInval).
	// Default nil.
	WaitSet *Wait
	// SignalingVector is the interrupt affinity hint; ignored.
	SignalingVector int
	// Peer, with FlagPeer, is the owner's EQ (fi_peer(3) "PEER EQ",
	// struct fi_peer_eq_context): the events of objects bound to the
	// opened EQ are written to Peer.EQ, and the opened EQ only drives
	// their progress (see OpenEQ). FlagPeer without Peer or Peer.EQ, or
	// Peer without FlagPeer, gives ErrInval. Default nil.
	Peer *peer.EQContext
}

const eqAttrFlags = FlagWrite | FlagAffinity | FlagPeer

// EQ is an event queue (fi_eq): connection management events
// (EventConnReq, EventConnected, EventShutdown), asynchronous completions
// of control operations and asynchronous errors. Reads drive the progress
// of the objects bound to it. All methods are safe for concurrent use.
// Methods of a nil *EQ return ErrInval (or a zero value when they have no
// error result).
type EQ struct {
	waitable
	fab   *Fabric
	attr  EQAttr
	q     *eq.EQ
	peer  peer.EQOwner // the owner's EQ of an FI_PEER import
	owner *EQ          // peer, when it is this package's EQ (held open)
}

// OpenEQ opens an event queue (fi_eq_open). attr may be nil for the
// defaults. The fabric cannot be closed while the EQ is open. Errors
// (wrapped in *OpError): ErrInval for bad attributes, ErrNoSys for an
// unsupported wait object, ErrClosed for a closed fabric.
//
// With attr.Flags&FlagPeer the EQ imports attr.Peer.EQ (fi_peer(3) "PEER
// EQ"), which may be an EQ of another fabric or provider (EQ.Owner): the
// events of the endpoints, passive endpoints and domains bound to the
// opened EQ are written to the owner; Read drives their progress and
// returns ErrAgain; ReadErr, SRead, SReadContext, Write, WaitFD,
// WaitPollFD and TryWait return ErrNoSys. An owner that is an *EQ cannot
// be closed before the import (ErrBusy).
func (f *Fabric) OpenEQ(attr *EQAttr) (*EQ, error) {
	if f == nil {
		return nil, ErrInval
	}
	prov := f.prov.Name()
	var a EQAttr
	if attr != nil {
		a = *attr
	}
	if a.Flags&^eqAttrFlags != 0 || a.Size > eq.MaxSize ||
		(a.Flags&FlagPeer != 0) != (a.Peer != nil) || a.Peer != nil && a.Peer.EQ == nil {
		return nil, opErr("fi_eq_open", prov, ErrInval)
	}
	if a.Peer != nil {
		return f.openPeerEQ(a)
	}
	if err := waitSetCheck(f, a.WaitObj, a.WaitSet); err != nil {
		return nil, opErr("fi_eq_open", prov, err)
	}
	cfg, err := eq.Config{Size: int(a.Size), WaitObj: a.WaitObj, AppWrite: a.Flags&FlagWrite != 0,
		LegacyErrData: cqLegacyErrData(f)}.Check()
	if err != nil {
		return nil, opErr("fi_eq_open", prov, err)
	}
	a.Size = uint64(cfg.Size)
	if err := f.lc.hold(); err != nil {
		return nil, opErr("fi_eq_open", prov, err)
	}
	q, err := eq.New(cfg)
	if err != nil {
		f.lc.release()
		return nil, opErr("fi_eq_open", prov, err)
	}
	e := &EQ{fab: f, attr: a, q: q}
	if err := e.join(a.WaitSet, q, func() bool { return q.Len() > 0 }); err != nil {
		q.Close()
		f.lc.release()
		return nil, opErr("fi_eq_open", prov, err)
	}
	e.init(&f.lc, prov, q)
	return e, nil
}

// Attr returns the EQ's attributes, with defaults filled in.
func (e *EQ) Attr() EQAttr {
	if e == nil {
		return EQAttr{}
	}
	return e.attr
}

// Read returns the event at the head of the EQ (fi_eq_read); with FlagPeek
// the event stays queued. It returns ErrAgain when the EQ is empty (after
// driving progress of the bound objects), ErrAvail when an error event is
// at the head (read it with ReadErr), ErrOverrun once the events queued
// before an overrun are drained, ErrBadFlags for flags other than
// FlagPeek, and ErrClosed after Close. EQEntry.CMData belongs to the
// caller.
func (e *EQ) Read(flags Flags) (EQEntry, error) {
	if e == nil {
		return EQEntry{}, ErrInval
	}
	if e.q == nil {
		if err := e.runPeer(); err != nil {
			return EQEntry{}, err
		}
		return EQEntry{}, ErrAgain
	}
	ev, err := e.q.Read(flags)
	return ev, closedErr(err)
}

// ReadErr reads the error event at the head into ee (fi_eq_readerr). It
// returns ErrAgain when no error event is at the head. err_data follows
// fi_eq(3) for API >= 1.5: when len(ee.ErrData) > 0 on input the data is
// copied into it and ee.ErrData is resliced to the bytes copied; otherwise
// ee.ErrData is set to a buffer owned by the EQ, valid until the next
// ReadErr.
func (e *EQ) ReadErr(ee *EQErrEntry) error {
	if e == nil || ee == nil {
		return ErrInval
	}
	if e.q == nil {
		return e.noQueue()
	}
	return closedErr(e.q.ReadErr(ee, 0))
}

// SRead is the blocking read (fi_eq_sread): it returns the head event as
// soon as there is one (FlagPeek leaves it queued). A negative timeout
// waits forever (C's -1); 0 checks once without waiting. It returns
// ErrAgain when the timeout expires, ErrAvail for an error event,
// ErrClosed when the EQ is closed (Close unblocks it), and an
// *OpError{Op: "fi_eq_sread"} matching ErrNoSys for an EQ opened with
// WaitNone.
func (e *EQ) SRead(timeout time.Duration, flags Flags) (EQEntry, error) {
	if e == nil {
		return EQEntry{}, ErrInval
	}
	return e.sread(flags, waitDeadline(timeout), nil)
}

// SReadContext is SRead bounded by a context. When ctx ends first the
// error is a *WaitError that matches both ErrAgain (what fi_eq_sread
// returns on timeout; ErrCanceled for a cancelled context) and ctx.Err()
// (context.DeadlineExceeded or context.Canceled) under errors.Is.
func (e *EQ) SReadContext(ctx context.Context, flags Flags) (EQEntry, error) {
	if e == nil || ctx == nil {
		return EQEntry{}, ErrInval
	}
	if err := ctx.Err(); err != nil {
		return EQEntry{}, ctxErr("fi_eq_sread", err, ErrAgain)
	}
	ev, err := e.sread(flags, time.Time{}, ctx.Done())
	if cerr := ctxDone("fi_eq_sread", ctx, err, ErrAgain); cerr != nil {
		return EQEntry{}, cerr
	}
	return ev, err
}

func (e *EQ) sread(flags Flags, deadline time.Time, done <-chan struct{}) (EQEntry, error) {
	if e.q == nil {
		return EQEntry{}, opErr("fi_eq_sread", e.prov, e.noQueue())
	}
	ev, err := e.q.SRead(flags, deadline, done)
	if err == progress.ErrDone {
		return ev, err
	}
	return ev, blockErr("fi_eq_sread", e.prov, err)
}

// Write inserts an event (fi_eq_write). The entry is copied (CMData
// included). Write is a control-path call: its errors are *OpError naming
// "fi_eq_write", matching ErrInval when the EQ was opened without
// FlagWrite or entry is nil, ErrOverrun when the EQ is full or overrun,
// and ErrClosed after Close.
func (e *EQ) Write(entry *EQEntry) error {
	if e == nil {
		return ErrInval
	}
	if entry == nil {
		return opErr("fi_eq_write", e.prov, ErrInval)
	}
	if e.q == nil {
		return opErr("fi_eq_write", e.prov, e.noQueue())
	}
	_, err := e.q.WriteUser(entry)
	return opErr("fi_eq_write", e.prov, closedErr(err))
}

// StrError converts a provider error number and error data of an error
// event into a printable string (fi_eq_strerror).
func (e *EQ) StrError(provErrno int, errData []byte) string {
	return provider.StrError(provErrno)
}

// WaitFD returns the EQ's wait descriptor (fi_control FI_GETWAIT) for an
// EQ opened with WaitFD, readable when events may be ready. Errors
// (wrapped): ErrNoData for WaitNone, ErrNoSys for other wait objects,
// ErrClosed.
func (e *EQ) WaitFD() (int, error) {
	if e == nil {
		return -1, ErrInval
	}
	return e.waitFD()
}

// TryWait prepares to block on the wait descriptor (fi_trywait): it clears
// the signal and drives progress, then returns ErrAgain if events are
// queued, nil if it is safe to wait. ErrInval for WaitNone.
func (e *EQ) TryWait() error {
	if e == nil {
		return ErrInval
	}
	return e.tryWait()
}

// Close closes the EQ (fi_close). It returns ErrBusy while objects are
// bound to it and ErrClosed on a second call (both wrapped). Closing wakes
// blocked SRead/SReadContext callers; queued events are lost.
func (e *EQ) Close() error {
	if e == nil {
		return ErrInval
	}
	if err := e.close(); err != nil {
		return err
	}
	if e.owner != nil {
		e.owner.lc.release()
	}
	return nil
}

// writer is what providers report events to: the owner of an FI_PEER
// import, else the EQ's queue.
func (e *EQ) writer() provider.EQWriter {
	if e.peer != nil {
		return e.peer
	}
	return e.q
}

// fabric returns the fabric the EQ was opened on.
func (e *EQ) fabric() *Fabric { return e.fab }

// WaitPollFD, for an EQ opened with WaitObj WaitPollFD,
// returns its wait object (fi_control FI_GETWAIT, struct fi_wait_pollfd):
// the descriptors to poll(2) for reading, which hold the object's signal
// and the descriptors of the bound endpoints, and the change index, which
// grows whenever that list changes (poll the new list then). Call TryWait
// before blocking. Errors (wrapped): ErrNoData for WaitNone, ErrNoSys for
// the other wait objects, ErrClosed.
func (e *EQ) WaitPollFD() (fds []PollFD, changeIndex uint64, err error) {
	if e == nil {
		return nil, 0, ErrInval
	}
	return e.pollFDs()
}
