package fabric

import (
	"context"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// CQAttr is fi_cq_attr: how a completion queue is opened. The zero value
// (or a nil *CQAttr) is a useful CQ: 1024 entries, FI_CQ_FORMAT_CONTEXT,
// and a wait object, so SRead blocks.
type CQAttr struct {
	// Size is the minimum number of completions the CQ holds, successes and
	// errors together. 0 means the provider default, 1024 entries (the
	// value of libfabric's util CQ). Memory grows with use, not with Size.
	// Under FI_RM_ENABLED (DomainAttr.ResourceMgmt; the default of the tcp
	// and udp providers) Size also caps the operations in flight that
	// complete into the CQ: once queued entries and operations awaiting
	// completion fill it, posts return ErrAgain and incoming messages wait
	// until the CQ is read, so a small CQ throttles (see "Resource
	// management" in the package documentation).
	Size uint64
	// Flags: FlagAffinity (SignalingVector is valid; accepted and ignored)
	// and FlagPeer (import an owner's CQ, see Peer). Other bits give
	// ErrInval. Default 0.
	Flags Flags
	// Format selects the fields reads fill (fi_cq(3) formats); fields
	// outside the format are zero. The default, CQFormatUnspec, means
	// CQFormatContext, as in libfabric's util CQ.
	Format CQFormat
	// WaitObj is the wait object. The default, WaitUnspec (the zero
	// value), lets SRead block; so do WaitMutexCond and WaitYield (which
	// polls). WaitFD also provides a descriptor (WaitFD) usable with
	// poll/epoll. WaitNone, asked for explicitly, makes a CQ that is only
	// polled (SRead and Signal give ErrNoSys); it costs nothing less on
	// the read path. WaitSet makes the CQ a member of the wait set
	// WaitSet (which wakes when the CQ has completions; SRead works too).
	// WaitPollFD provides a list of
	// descriptors (WaitPollFD).
	WaitObj WaitObj
	// WaitSet is the wait set (Fabric.OpenWait, of the domain's fabric)
	// that a CQ opened with WaitObj WaitSet joins; it must be nil for the
	// other wait objects (ErrInval). The set cannot be closed while the CQ
	// is open. Default nil.
	WaitSet *Wait
	// SignalingVector is the interrupt affinity hint (with FlagAffinity);
	// ignored.
	SignalingVector int
	// WaitCond is CQCondNone (default: any completion satisfies a blocking
	// read) or CQCondThreshold (SRead waits for its threshold argument).
	WaitCond CQWaitCond
	// Peer, with FlagPeer, is the owner's CQ (fi_peer(3) "PEER CQ",
	// struct fi_peer_cq_context), for example another CQ's Owner():
	// completions of endpoints bound to the opened CQ are written to Peer,
	// and the opened CQ only drives their progress. FlagPeer without Peer
	// (or Peer without FlagPeer) gives ErrInval. Default nil.
	Peer peer.CQOwner
}

// cqAttrFlags are the CQAttr.Flags bits OpenCQ accepts.
const cqAttrFlags = FlagAffinity | FlagPeer

// CQ is a completion queue (fi_cq). Endpoints bound to it write their
// completions into it; reads drive the progress of those endpoints (manual
// progress). All methods are safe for concurrent use. Methods of a nil
// *CQ return ErrInval (or a zero value when they have no error result).
//
// Data-path methods (Read, ReadFrom, ReadErr, SRead, Signal, TryWait)
// return bare Errno values (ErrAgain, ErrAvail, ErrOverrun ...) or
// ErrClosed, and do not allocate.
type CQ struct {
	waitable
	dom  *Domain
	attr CQAttr
	q    *cq.CQ       // nil for an FI_PEER import
	peer peer.CQOwner // the owner's CQ of an FI_PEER import
}

// OpenCQ opens a completion queue (fi_cq_open). attr may be nil for the
// defaults. The domain cannot be closed while the CQ is open. Errors
// (wrapped in *OpError): ErrInval for bad attributes, ErrNoSys for an
// unsupported wait object, ErrClosed for a closed domain.
//
// With attr.Flags&FlagPeer the CQ imports attr.Peer (fi_peer(3)): bound
// endpoints write to the owner; Read (with any slice) drives their
// progress and returns ErrAgain; ReadErr, SRead, SReadContext, Signal,
// WaitFD and TryWait return ErrNoSys.
func (d *Domain) OpenCQ(attr *CQAttr) (*CQ, error) {
	if d == nil {
		return nil, ErrInval
	}
	prov := d.prov.Name()
	var a CQAttr
	if attr != nil {
		a = *attr
	}
	if a.Flags&^cqAttrFlags != 0 || (a.Flags&FlagPeer != 0) != (a.Peer != nil) || a.Size > cq.MaxSize {
		return nil, opErr("fi_cq_open", prov, ErrInval)
	}
	if err := waitSetCheck(d.fabric, a.WaitObj, a.WaitSet); err != nil || (a.WaitSet != nil && a.Peer != nil) {
		return nil, opErr("fi_cq_open", prov, ErrInval)
	}
	cfg, err := cq.Config{
		Size:          int(a.Size),
		Format:        a.Format,
		WaitObj:       a.WaitObj,
		WaitCond:      a.WaitCond,
		SourceErr:     d.info.Caps&CapSourceErr != 0,
		LegacyErrData: cqLegacyErrData(d.fabric),
		ResourceMgmt:  d.rmEnabled(),
	}.Check()
	if err != nil {
		return nil, opErr("fi_cq_open", prov, err)
	}
	a.Size, a.Format = uint64(cfg.Size), cfg.Format
	if err := d.lc.hold(); err != nil {
		return nil, opErr("fi_cq_open", prov, err)
	}
	c := &CQ{dom: d, attr: a}
	if a.Peer != nil {
		c.peer = a.Peer
		c.init(&d.lc, prov, nil)
		return c, nil
	}
	q, err := cq.New(cfg)
	if err != nil {
		d.lc.release()
		return nil, opErr("fi_cq_open", prov, err)
	}
	if err := c.join(a.WaitSet, q, func() bool { return q.Len() > 0 }); err != nil {
		q.Close()
		d.lc.release()
		return nil, opErr("fi_cq_open", prov, err)
	}
	c.q = q
	c.init(&d.lc, prov, q)
	return c, nil
}

// cqLegacyErrData reports whether the fabric was opened for an API older
// than 1.5, where err_data is always provider-owned (fi_cq(3), fi_eq(3)).
func cqLegacyErrData(f *Fabric) bool {
	v := f.attr.APIVersion
	return v != 0 && v < Version(1, 5)
}

// Attr returns the CQ's attributes, with defaults filled in (Size,
// Format).
func (c *CQ) Attr() CQAttr {
	if c == nil {
		return CQAttr{}
	}
	return c.attr
}

// Read reads up to len(entries) completions (fi_cq_read) and returns how
// many it read. It returns ErrAgain when there are none (after driving
// progress of the bound endpoints), ErrAvail when an error completion is at
// the head (read it with ReadErr; errors keep their order among successes),
// ErrOverrun once the entries queued before an overrun are drained, and
// ErrClosed after Close.
//
// An empty or nil slice (fi_cq_read(cq, NULL, 0)) only drives progress and
// reports the state: 0 and nil when completions are queued, otherwise the
// error a read would return (ErrAgain, ErrAvail, ErrOverrun).
func (c *CQ) Read(entries []CQEntry) (int, error) {
	if c == nil {
		return 0, ErrInval
	}
	if c.q == nil {
		return c.peerRead()
	}
	n, err := c.q.Read(entries)
	return n, closedErr(err)
}

// ReadFrom is Read that also returns the source address of each completion
// (fi_cq_readfrom): src[i] belongs to entries[i], FI_ADDR_NOTAVAIL
// (AddrNotAvail) when the endpoint has no FI_SOURCE or the source is not in
// its AV. src must be at least as long as entries (else ErrInval). With
// FI_SOURCE_ERR (domain capability CapSourceErr), a message from an unknown
// source is an error completion instead: ErrAvail, then ReadErr gives
// Err == ErrAddrNotAvail and the raw source address in ErrData, ready for
// AV.Insert.
func (c *CQ) ReadFrom(entries []CQEntry, src []Addr) (int, error) {
	if c == nil || len(src) < len(entries) {
		return 0, ErrInval
	}
	if c.q == nil {
		return c.peerRead()
	}
	n, err := c.q.ReadFrom(entries, src)
	return n, closedErr(err)
}

// peerRead is Read on an FI_PEER import: it drives progress and returns
// ErrAgain (completions are in the owner's CQ).
func (c *CQ) peerRead() (int, error) {
	if err := c.runPeer(); err != nil {
		return 0, err
	}
	return 0, ErrAgain
}

// ReadErr reads the error completion at the head (fi_cq_readerr) into e.
// It returns ErrAgain when no error completion is at the head. e.Err is a
// positive Errno; ProvErrno and ErrData are provider specific (see
// StrError). err_data follows fi_cq(3) for API >= 1.5: when len(e.ErrData)
// > 0 on input the data is copied into it and e.ErrData is resliced to the
// bytes copied; otherwise e.ErrData is set to a buffer owned by the CQ,
// valid until the next ReadErr.
func (c *CQ) ReadErr(e *CQErrEntry) error {
	if c == nil || e == nil {
		return ErrInval
	}
	if c.q == nil {
		return c.noQueue()
	}
	return closedErr(c.q.ReadErr(e))
}

// SRead is the blocking read (fi_cq_sread). It returns as soon as
// completions are available, reading up to len(entries) of them; with
// CQCondThreshold it waits until min(threshold, len(entries), Size) are
// queued (or an error completion or an overrun), and returns the entries
// queued when the timeout expires. A negative timeout waits forever (C's
// -1); 0 checks once without waiting.
//
// It returns ErrAgain on timeout with nothing queued and when Signal was
// called (also before the call: the signal is remembered until a blocking
// read consumes it), ErrAvail for an error at the head, ErrClosed when the
// CQ is closed (Close unblocks it), ErrInval for an empty slice, and an
// *OpError{Op: "fi_cq_sread"} matching ErrNoSys for a CQ that cannot block
// (opened with WaitNone, or an FI_PEER import).
//
// It drives progress while it waits: it polls for a few tens of
// microseconds, then parks until a completion is written, a bound endpoint
// reports readiness, Signal, Close or the timeout.
func (c *CQ) SRead(entries []CQEntry, threshold int, timeout time.Duration) (int, error) {
	if c == nil {
		return 0, ErrInval
	}
	return c.sread("fi_cq_sread", entries, nil, threshold, waitDeadline(timeout), nil)
}

// SReadFrom is SRead with source addresses (fi_cq_sreadfrom); see ReadFrom.
// src may be nil; otherwise it must be at least as long as entries.
func (c *CQ) SReadFrom(entries []CQEntry, src []Addr, threshold int, timeout time.Duration) (int, error) {
	if c == nil {
		return 0, ErrInval
	}
	return c.sread("fi_cq_sreadfrom", entries, src, threshold, waitDeadline(timeout), nil)
}

// SReadContext is SRead bounded by a context instead of a timeout. When
// ctx ends with nothing read, the error is a *WaitError that matches both
// ErrAgain (what fi_cq_sread returns on timeout; ErrCanceled for a
// cancelled context) and ctx.Err() (context.DeadlineExceeded or
// context.Canceled) under errors.Is. Other results are as for SRead.
func (c *CQ) SReadContext(ctx context.Context, entries []CQEntry, threshold int) (int, error) {
	return c.sreadContext(ctx, "fi_cq_sread", entries, nil, threshold)
}

// SReadFromContext is SReadFrom bounded by a context; see SReadContext.
func (c *CQ) SReadFromContext(ctx context.Context, entries []CQEntry, src []Addr, threshold int) (int, error) {
	return c.sreadContext(ctx, "fi_cq_sreadfrom", entries, src, threshold)
}

func (c *CQ) sreadContext(ctx context.Context, op string, entries []CQEntry, src []Addr,
	threshold int) (int, error) {
	if c == nil || ctx == nil {
		return 0, ErrInval
	}
	if err := ctx.Err(); err != nil {
		return 0, ctxErr(op, err, ErrAgain)
	}
	n, err := c.sread(op, entries, src, threshold, time.Time{}, ctx.Done())
	if cerr := ctxDone(op, ctx, err, ErrAgain); cerr != nil {
		return 0, cerr
	}
	return n, err
}

func (c *CQ) sread(op string, entries []CQEntry, src []Addr, threshold int, deadline time.Time,
	done <-chan struct{}) (int, error) {
	if src != nil && len(src) < len(entries) {
		return 0, ErrInval
	}
	if c.q == nil {
		return 0, blockErr(op, c.prov, c.noQueue())
	}
	n, err := c.q.SRead(entries, src, threshold, deadline, done)
	if err == progress.ErrDone {
		return n, err
	}
	return n, blockErr(op, c.prov, err)
}

// Signal wakes the goroutines blocked in SRead/SReadContext (fi_cq_signal);
// they return ErrAgain. For a member of a wait set it also ends one Wait
// of the set. A signal with nobody blocked is remembered and
// consumed by the next blocking read. For a CQ that cannot block (WaitNone,
// FI_PEER import) it returns an *OpError{Op: "fi_cq_signal"} matching
// ErrNoSys ("only available if the CQ was configured with a wait object").
func (c *CQ) Signal() error {
	if c == nil {
		return ErrInval
	}
	if c.q == nil {
		return blockErr("fi_cq_signal", c.prov, c.noQueue())
	}
	if err := c.q.Signal(); err != nil {
		return blockErr("fi_cq_signal", c.prov, err)
	}
	c.q.SignalSet()
	return nil
}

// StrError converts a provider error number and error data of an error
// completion into a printable string (fi_cq_strerror).
func (c *CQ) StrError(provErrno int, errData []byte) string {
	return provider.StrError(provErrno)
}

// WaitFD returns the CQ's wait descriptor (fi_control FI_GETWAIT) for a CQ
// opened with WaitFD: a descriptor usable with poll, select and epoll
// (an epoll set holding the CQ's signal and the descriptors of the bound
// endpoints), readable when completions may be ready. Call TryWait before
// blocking on it. Errors (wrapped): ErrNoData for WaitNone (as libfabric),
// ErrNoSys for the other wait objects, ErrClosed.
func (c *CQ) WaitFD() (int, error) {
	if c == nil {
		return -1, ErrInval
	}
	return c.waitFD()
}

// TryWait prepares to block on the wait object (fi_trywait): it clears the
// descriptor's signal and drives progress, then returns ErrAgain if
// completions are ready to read (do not block), or nil if it is safe to
// wait on WaitFD. ErrInval for WaitNone.
func (c *CQ) TryWait() error {
	if c == nil {
		return ErrInval
	}
	return c.tryWait()
}

// Close closes the CQ (fi_close). It returns ErrBusy while endpoints (or
// other objects) are bound to it, and ErrClosed on a second call (both
// wrapped). Closing wakes blocked SRead/SReadContext callers, which return
// ErrClosed; queued completions are lost.
func (c *CQ) Close() error {
	if c == nil {
		return ErrInval
	}
	return c.close()
}

// owner is what providers write completions to: the CQ itself, or the
// owner's CQ of an FI_PEER import.
func (c *CQ) owner() peer.CQOwner {
	if c.peer != nil {
		return c.peer
	}
	return c.q
}

// domain returns the domain the CQ was opened on.
func (c *CQ) domain() *Domain { return c.dom }

// WaitPollFD, for a CQ opened with WaitObj WaitPollFD,
// returns its wait object (fi_control FI_GETWAIT, struct fi_wait_pollfd):
// the descriptors to poll(2) for reading, which hold the object's signal
// and the descriptors of the bound endpoints, and the change index, which
// grows whenever that list changes (poll the new list then). Call TryWait
// before blocking. Errors (wrapped): ErrNoData for WaitNone, ErrNoSys for
// the other wait objects, ErrClosed.
func (c *CQ) WaitPollFD() (fds []PollFD, changeIndex uint64, err error) {
	if c == nil {
		return nil, 0, ErrInval
	}
	return c.pollFDs()
}
