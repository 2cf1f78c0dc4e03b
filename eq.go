package fabric

import (
	"context"
	"time"

	"github.com/gofabric/fabric/internal/eq"
	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/provider"
)

// EQAttr is fi_eq_attr: how an event queue is opened. The zero value (or
// a nil *EQAttr) gives the defaults documented on each field.
type EQAttr struct {
	// Size is the number of events the EQ holds; 0 means 1024. An EQ that
	// overruns is fatal (fi_eq(3)): further writes fail with ErrOverrun and
	// reads return ErrOverrun once the queued events are drained.
	Size uint64
	// Flags: FlagWrite (the application may call Write, fi_eq_write) and
	// provider.FlagAffinity (ignored). Other bits give ErrInval.
	Flags Flags
	// WaitObj is the wait object; default WaitNone (no SRead/ReadWait).
	// WaitFD also provides a descriptor (WaitFD). WaitSet and WaitPollFD
	// give ErrNoSys.
	WaitObj WaitObj
	// SignalingVector is the interrupt affinity hint; ignored.
	SignalingVector int
}

const eqAttrFlags = FlagWrite | provider.FlagAffinity

// EQ is an event queue (fi_eq): connection management events
// (EventConnReq, EventConnected, EventShutdown), asynchronous completions
// of control operations and asynchronous errors. Reads drive the progress
// of the objects bound to it. All methods are safe for concurrent use.
type EQ struct {
	lc   lifecycle
	fab  *Fabric
	attr EQAttr
	q    *eq.EQ
}

// OpenEQ opens an event queue (fi_eq_open). attr may be nil for the
// defaults. The fabric cannot be closed while the EQ is open. Errors
// (wrapped in *OpError): ErrInval for bad attributes, ErrNoSys for an
// unsupported wait object, ErrClosed for a closed fabric.
func (f *Fabric) OpenEQ(attr *EQAttr) (*EQ, error) {
	if f == nil {
		return nil, ErrInval
	}
	prov := f.prov.Name()
	var a EQAttr
	if attr != nil {
		a = *attr
	}
	if a.Flags&^eqAttrFlags != 0 || a.Size > eq.MaxSize {
		return nil, opErr("fi_eq_open", prov, ErrInval)
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
	return &EQ{fab: f, attr: a, q: q}, nil
}

// Attr returns the EQ's attributes, with defaults filled in.
func (e *EQ) Attr() EQAttr { return e.attr }

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
	ev, err := e.q.Read(flags)
	return ev, cqErr(err)
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
	return cqErr(e.q.ReadErr(ee, 0))
}

// SRead is the blocking read (fi_eq_sread): it returns the head event as
// soon as there is one (FlagPeek leaves it queued), ErrAgain when the
// timeout expires (timeoutMs < 0: never), ErrAvail for an error event,
// ErrClosed when the EQ is closed (Close unblocks it), and ErrNoSys for an
// EQ opened with WaitNone.
func (e *EQ) SRead(timeoutMs int, flags Flags) (EQEntry, error) {
	if e == nil {
		return EQEntry{}, ErrInval
	}
	ev, err := e.q.SRead(flags, cqDeadline(timeoutMs), nil)
	return ev, cqErr(err)
}

// ReadWait is SRead bounded by a context. When ctx ends first the error
// matches both ErrAgain and ctx's error (context.DeadlineExceeded, or
// ErrCanceled and context.Canceled) under errors.Is.
func (e *EQ) ReadWait(ctx context.Context) (EQEntry, error) {
	if e == nil || ctx == nil {
		return EQEntry{}, ErrInval
	}
	if err := ctx.Err(); err != nil {
		return EQEntry{}, cqCtxErr(err, ErrAgain)
	}
	ev, err := e.q.SRead(0, time.Time{}, ctx.Done())
	if err == progress.ErrDone {
		return EQEntry{}, cqCtxErr(ctx.Err(), ErrAgain)
	}
	return ev, cqErr(err)
}

// Write inserts an event (fi_eq_write). The EQ must have been opened with
// FlagWrite (else ErrInval). The entry is copied (CMData included). It
// returns ErrOverrun when the EQ is full or overrun, ErrClosed after
// Close.
func (e *EQ) Write(entry *EQEntry) error {
	if e == nil || entry == nil {
		return ErrInval
	}
	_, err := e.q.WriteUser(entry)
	return cqErr(err)
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
	fd, err := e.q.WaitFD()
	if err != nil {
		return -1, opErr("fi_control", e.fab.prov.Name(), cqErr(err))
	}
	return fd, nil
}

// TryWait prepares to block on the wait descriptor (fi_trywait): it clears
// the signal and drives progress, then returns ErrAgain if events are
// queued, nil if it is safe to wait. ErrInval for WaitNone.
func (e *EQ) TryWait() error {
	if e == nil {
		return ErrInval
	}
	return cqErr(e.q.TryWait())
}

// Close closes the EQ (fi_close). It returns ErrBusy while objects are
// bound to it and ErrClosed on a second call (both wrapped). Closing wakes
// blocked SRead/ReadWait callers; queued events are lost.
func (e *EQ) Close() error {
	if e == nil {
		return ErrInval
	}
	prov := e.fab.prov.Name()
	if err := e.lc.beginClose(); err != nil {
		return opErr("fi_close", prov, err)
	}
	err := e.q.Close()
	e.fab.lc.release()
	return opErr("fi_close", prov, err)
}

// ---- hooks for objects bound to the EQ ----

// bindEndpoint registers a bound object (endpoint, passive endpoint,
// domain, AV): Close returns ErrBusy until unbindEndpoint. p, if not nil,
// is added to the progress sources driven by reads (and its descriptor to
// the FI_WAIT_FD set).
func (e *EQ) bindEndpoint(p provider.Progresser) error {
	if err := e.lc.hold(); err != nil {
		return err
	}
	if err := e.q.AddSource(p); err != nil {
		e.lc.release()
		return cqErr(err)
	}
	return nil
}

// unbindEndpoint undoes bindEndpoint.
func (e *EQ) unbindEndpoint(p provider.Progresser) {
	e.q.RemoveSource(p)
	e.lc.release()
}

// writer is what providers report events to.
func (e *EQ) writer() provider.EQWriter { return e.q }

// fabric returns the fabric the EQ was opened on.
func (e *EQ) fabric() *Fabric { return e.fab }
