package fabric

import (
	"context"
	"time"

	"github.com/gofabric/fabric/internal/cntr"
	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/peer"
)

// CntrEventsComp is FI_CNTR_EVENTS_COMP, the only counter event type of
// libfabric 1.17: the counter counts successful completions.
const CntrEventsComp = 0

// CntrAttr is fi_cntr_attr: how a counter is opened. The zero value (or a
// nil *CntrAttr) is a useful counter: it counts completions and Wait
// blocks.
type CntrAttr struct {
	// Events is the kind of events counted: CntrEventsComp (0, the
	// default). Other values give ErrNoSys.
	Events int
	// WaitObj is the wait object. The default, WaitUnspec (the zero
	// value), lets Wait block; so do WaitMutexCond and WaitYield (which
	// polls). WaitFD also provides a descriptor (WaitFD). WaitNone, asked
	// for explicitly, makes a counter that is only read (Wait gives
	// ErrNoSys). WaitSet makes the counter a member of the wait set
	// WaitSet: each change of the counter wakes one Wait of the set.
	// WaitPollFD provides a list of
	// descriptors (WaitPollFD).
	WaitObj WaitObj
	// WaitSet is the wait set (of the domain's fabric) a counter opened
	// with WaitObj WaitSet joins; nil for other wait objects (ErrInval).
	// Default nil.
	WaitSet *Wait
	// Flags: 0 (the default), or FlagPeer to import an owner's counter
	// (see Peer). Other bits are reserved and give ErrInval.
	Flags Flags
	// Peer, with FlagPeer, is the owner's counter (fi_peer(3) "PEER
	// COUNTER", struct fi_peer_cntr_context), for example another
	// counter's Owner(): completions of endpoints bound to the opened
	// counter increment Peer, and the opened counter's Read only drives
	// their progress. FlagPeer without Peer (or Peer without FlagPeer)
	// gives ErrInval. Default nil.
	Peer peer.CntrOwner
}

// Cntr is a completion counter (fi_cntr): a success value and an error
// value. Reads drive the progress of the bound endpoints. All methods are
// safe for concurrent use; Read and ReadErr do not allocate. Methods of a
// nil *Cntr return ErrInval (or a zero value when they have no error
// result).
type Cntr struct {
	waitable
	dom  *Domain
	attr CntrAttr
	c    *cntr.Cntr     // nil for an FI_PEER import
	peer peer.CntrOwner // the owner's counter of an FI_PEER import
	mark pollMark       // the last Set or Add, for poll sets (poll.go)
}

// OpenCntr opens a counter (fi_cntr_open). attr may be nil for the
// defaults. The domain cannot be closed while the counter is open. Errors
// (wrapped in *OpError): ErrInval for bad flags, ErrNoSys for unsupported
// events or wait objects, ErrClosed for a closed domain.
//
// With attr.Flags&FlagPeer the counter imports attr.Peer (fi_peer(3)):
// bound endpoints increment the owner's counter; Read drives their
// progress and returns 0; the other operations return ErrNoSys.
func (d *Domain) OpenCntr(attr *CntrAttr) (*Cntr, error) {
	if d == nil {
		return nil, ErrInval
	}
	prov := d.prov.Name()
	var a CntrAttr
	if attr != nil {
		a = *attr
	}
	if a.Flags&^FlagPeer != 0 || (a.Flags&FlagPeer != 0) != (a.Peer != nil) {
		return nil, opErr("fi_cntr_open", prov, ErrInval)
	}
	if a.Events != CntrEventsComp {
		return nil, opErr("fi_cntr_open", prov, ErrNoSys)
	}
	if err := waitSetCheck(d.fabric, a.WaitObj, a.WaitSet); err != nil || (a.WaitSet != nil && a.Peer != nil) {
		return nil, opErr("fi_cntr_open", prov, ErrInval)
	}
	cfg, err := cntr.Config{WaitObj: a.WaitObj}.Check()
	if err != nil {
		return nil, opErr("fi_cntr_open", prov, err)
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr("fi_cntr_open", prov, err)
	}
	c := &Cntr{dom: d, attr: a}
	if a.Peer != nil {
		c.peer = a.Peer
		c.init(&d.lc, prov, nil)
		return c, nil
	}
	k, err := cntr.New(cfg)
	if err != nil {
		d.lc.release()
		return nil, opErr("fi_cntr_open", prov, err)
	}
	if err := c.join(a.WaitSet, k, nil); err != nil {
		k.Close()
		d.lc.release()
		return nil, opErr("fi_cntr_open", prov, err)
	}
	c.c = k
	c.init(&d.lc, prov, k)
	return c, nil
}

// Attr returns the counter's attributes.
func (c *Cntr) Attr() CntrAttr {
	if c == nil {
		return CntrAttr{}
	}
	return c.attr
}

// Read drives progress of the bound endpoints and returns the counter's
// value (fi_cntr_read). For an FI_PEER import it only drives progress and
// returns 0.
func (c *Cntr) Read() (uint64, error) {
	if c == nil {
		return 0, ErrInval
	}
	if c.c == nil {
		return 0, c.runPeer()
	}
	v, err := c.c.Read()
	return v, closedErr(err)
}

// ReadErr returns the error value: the number of operations that completed
// in error (fi_cntr_readerr).
func (c *Cntr) ReadErr() (uint64, error) {
	if c == nil {
		return 0, ErrInval
	}
	if c.c == nil {
		return 0, c.noQueue()
	}
	v, err := c.c.ReadErr()
	return v, closedErr(err)
}

// Add adds v to the value (fi_cntr_add); it wakes waiters.
func (c *Cntr) Add(v uint64) error {
	if c == nil {
		return ErrInval
	}
	if c.c == nil {
		return c.noQueue()
	}
	return c.mark.after(c, c.c.Add(v))
}

// Set sets the value (fi_cntr_set). As fi_cntr(3) notes, the result is
// undefined if completions update the counter concurrently.
func (c *Cntr) Set(v uint64) error {
	if c == nil {
		return ErrInval
	}
	if c.c == nil {
		return c.noQueue()
	}
	return c.mark.after(c, c.c.Set(v))
}

// AddErr adds v to the error value (fi_cntr_adderr); it unblocks waiters.
func (c *Cntr) AddErr(v uint64) error {
	if c == nil {
		return ErrInval
	}
	if c.c == nil {
		return c.noQueue()
	}
	return closedErr(c.c.AddErr(v))
}

// SetErr sets the error value (fi_cntr_seterr); it unblocks waiters.
func (c *Cntr) SetErr(v uint64) error {
	if c == nil {
		return ErrInval
	}
	if c.c == nil {
		return c.noQueue()
	}
	return closedErr(c.c.SetErr(v))
}

// Wait blocks until the value is at least threshold (fi_cntr_wait),
// driving progress meanwhile. A negative timeout waits forever (C's -1); 0
// checks once without waiting. It returns nil on success, ErrTimedOut on
// timeout, ErrAvail when the error value changes while waiting (fi_cntr(3):
// any change of the error value unblocks the wait), ErrClosed when the
// counter is closed (Close unblocks it), and an *OpError{Op:
// "fi_cntr_wait"} matching ErrNoSys for a counter that cannot block
// (opened with WaitNone, or an FI_PEER import).
func (c *Cntr) Wait(threshold uint64, timeout time.Duration) error {
	if c == nil {
		return ErrInval
	}
	return c.wait(threshold, waitDeadline(timeout), nil)
}

// WaitContext is Wait bounded by a context. When ctx ends first the error
// is a *WaitError that matches both ErrTimedOut (what fi_cntr_wait returns
// on timeout; ErrCanceled for a cancelled context) and ctx.Err()
// (context.DeadlineExceeded or context.Canceled) under errors.Is.
func (c *Cntr) WaitContext(ctx context.Context, threshold uint64) error {
	if c == nil || ctx == nil {
		return ErrInval
	}
	if err := ctx.Err(); err != nil {
		return ctxErr("fi_cntr_wait", err, ErrTimedOut)
	}
	err := c.wait(threshold, time.Time{}, ctx.Done())
	if cerr := ctxDone("fi_cntr_wait", ctx, err, ErrTimedOut); cerr != nil {
		return cerr
	}
	return err
}

func (c *Cntr) wait(threshold uint64, deadline time.Time, done <-chan struct{}) error {
	if c.c == nil {
		return blockErr("fi_cntr_wait", c.prov, c.noQueue())
	}
	err := c.c.Wait(threshold, deadline, done)
	if err == progress.ErrDone {
		return err
	}
	return blockErr("fi_cntr_wait", c.prov, err)
}

// WaitFD returns the counter's wait descriptor (fi_control FI_GETWAIT) for
// a counter opened with WaitFD; it becomes readable when the counter
// changes (or a bound endpoint's descriptor is readable). Errors
// (wrapped): ErrNoData for WaitNone, ErrNoSys for other wait objects,
// ErrClosed.
func (c *Cntr) WaitFD() (int, error) {
	if c == nil {
		return -1, ErrInval
	}
	return c.waitFD()
}

// TryWait (fi_trywait) clears the descriptor's signal and drives progress;
// the descriptor then becomes readable at the next change. ErrInval for
// WaitNone.
func (c *Cntr) TryWait() error {
	if c == nil {
		return ErrInval
	}
	return c.tryWait()
}

// Close closes the counter (fi_close). It returns ErrBusy while endpoints
// or memory regions are bound to it and ErrClosed on a second call (both
// wrapped). Closing wakes blocked Wait callers, which return ErrClosed.
func (c *Cntr) Close() error {
	if c == nil {
		return ErrInval
	}
	return c.close()
}

// bindMR registers a memory region bound to the counter (fi_mr_bind).
func (c *Cntr) bindMR() error { return c.lc.hold() }

// unbindMR undoes bindMR.
func (c *Cntr) unbindMR() { c.lc.release() }

// owner is what providers increment: the counter itself, or the owner's
// counter of an FI_PEER import.
func (c *Cntr) owner() peer.CntrOwner {
	if c.peer != nil {
		return c.peer
	}
	return c.c
}

// domain returns the domain the counter was opened on.
func (c *Cntr) domain() *Domain { return c.dom }

// WaitPollFD, for a counter opened with WaitObj WaitPollFD,
// returns its wait object (fi_control FI_GETWAIT, struct fi_wait_pollfd):
// the descriptors to poll(2) for reading, which hold the object's signal
// and the descriptors of the bound endpoints, and the change index, which
// grows whenever that list changes (poll the new list then). Call TryWait
// before blocking. Errors (wrapped): ErrNoData for WaitNone, ErrNoSys for
// the other wait objects, ErrClosed.
func (c *Cntr) WaitPollFD() (fds []PollFD, changeIndex uint64, err error) {
	if c == nil {
		return nil, 0, ErrInval
	}
	return c.pollFDs()
}
