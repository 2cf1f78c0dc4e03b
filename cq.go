package fabric

import (
	"context"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/provider"
)

// CQAttr is fi_cq_attr: how a completion queue is opened. The zero value
// (or a nil *CQAttr) gives the defaults documented on each field.
type CQAttr struct {
	// Size is the minimum number of completions the CQ holds, successes and
	// errors together. 0 means the provider default, 1024 entries (the
	// value of libfabric's util CQ). Memory grows with use, not with Size.
	Size uint64
	// Flags: provider.FlagAffinity (SignalingVector is valid; accepted and
	// ignored) and FlagPeer (import an owner's CQ, see Peer). Other bits
	// give ErrInval.
	Flags Flags
	// Format selects the fields reads fill (fi_cq(3) formats); fields
	// outside the format are zero. CQFormatUnspec means CQFormatContext, as
	// in libfabric's util CQ.
	Format CQFormat
	// WaitObj is the wait object; default WaitNone (no blocking reads).
	// WaitUnspec, WaitMutexCond and WaitYield allow SRead/ReadWait;
	// WaitFD also provides a descriptor (WaitFD) usable with poll/epoll.
	// WaitSet and WaitPollFD give ErrNoSys.
	WaitObj WaitObj
	// SignalingVector is the interrupt affinity hint (with FlagAffinity);
	// ignored.
	SignalingVector int
	// WaitCond is CQCondNone (default: any completion satisfies a blocking
	// read) or CQCondThreshold (SRead waits for its threshold argument).
	WaitCond CQWaitCond
	// Peer, with FlagPeer, is the owner's CQ (fi_peer(3) "PEER CQ",
	// struct fi_peer_cq_context): completions of endpoints bound to the
	// opened CQ are written to Peer, and the opened CQ only drives their
	// progress. FlagPeer without Peer (or Peer without FlagPeer) gives
	// ErrInval.
	Peer provider.CQOwner
}

// cqAttrFlags are the CQAttr.Flags bits OpenCQ accepts.
const cqAttrFlags = provider.FlagAffinity | FlagPeer

// CQ is a completion queue (fi_cq). Endpoints bound to it write their
// completions into it; reads drive the progress of those endpoints (manual
// progress). All methods are safe for concurrent use.
//
// Data-path methods (Read, ReadFrom, ReadErr, SRead, Signal, TryWait)
// return bare Errno values (ErrAgain, ErrAvail, ErrOverrun ...) or
// ErrClosed, and do not allocate.
type CQ struct {
	lc   lifecycle
	dom  *Domain
	attr CQAttr
	q    *cq.CQ           // nil for an FI_PEER import
	peer provider.CQOwner // the owner's CQ of an FI_PEER import
	srcs *progress.Set    // progress sources of bound endpoints
	pset progress.Set     // the sources of an FI_PEER import
}

// OpenCQ opens a completion queue (fi_cq_open). attr may be nil for the
// defaults. The domain cannot be closed while the CQ is open. Errors
// (wrapped in *OpError): ErrInval for bad attributes, ErrNoSys for an
// unsupported wait object, ErrClosed for a closed domain.
//
// With attr.Flags&FlagPeer the CQ imports attr.Peer (fi_peer(3)): bound
// endpoints write to the owner; Read (with any slice) drives their
// progress and returns ErrAgain; ReadErr, SRead, ReadWait, Signal, WaitFD
// and TryWait return ErrNoSys.
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
		c.srcs = &c.pset
		return c, nil
	}
	q, err := cq.New(cfg)
	if err != nil {
		d.lc.release()
		return nil, opErr("fi_cq_open", prov, err)
	}
	c.q, c.srcs = q, q.Sources()
	return c, nil
}

// cqLegacyErrData reports whether the fabric was opened for an API older
// than 1.5, where err_data is always provider-owned (fi_cq(3), fi_eq(3)).
func cqLegacyErrData(f *Fabric) bool {
	v := f.attr.APIVersion
	return v != 0 && v < Version(1, 5)
}

// cqErr maps the internal closed error to ErrClosed.
func cqErr(err error) error {
	if err == provider.EBADF {
		return ErrClosed
	}
	return err
}

// Attr returns the CQ's attributes, with defaults filled in (Size,
// Format).
func (c *CQ) Attr() CQAttr { return c.attr }

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
	return n, cqErr(err)
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
	return n, cqErr(err)
}

func (c *CQ) peerRead() (int, error) {
	if c.peer == nil || c.lc.isClosed() {
		return 0, ErrClosed
	}
	c.srcs.Run()
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
		return c.peerNoSys()
	}
	return cqErr(c.q.ReadErr(e))
}

func (c *CQ) peerNoSys() error {
	if c.lc.isClosed() {
		return ErrClosed
	}
	return ErrNoSys
}

// cqDeadline converts an fi_*_sread timeout in milliseconds to a deadline;
// a negative timeout is infinite (zero deadline).
func cqDeadline(timeoutMs int) time.Time {
	if timeoutMs < 0 {
		return time.Time{}
	}
	return time.Now().Add(time.Duration(timeoutMs) * time.Millisecond)
}

// SRead is the blocking read (fi_cq_sread). It returns as soon as
// completions are available, reading up to len(entries) of them; with
// CQCondThreshold it waits until min(threshold, len(entries), Size) are
// queued (or an error completion or an overrun), and returns the entries
// queued when the timeout expires. timeoutMs < 0 waits forever. It returns
// ErrAgain on timeout with nothing queued and when Signal was called (also
// before the call: the signal is remembered until a blocking read consumes
// it), ErrAvail for an error at the head, ErrClosed when the CQ is closed
// (Close unblocks it), ErrNoSys for a CQ opened with WaitNone (blocking
// reads are invalid there, fi_cq(3)), ErrInval for an empty slice.
//
// It drives progress while it waits: it polls for a few tens of
// microseconds, then parks until a completion is written, a bound endpoint
// reports readiness, Signal, Close or the timeout.
func (c *CQ) SRead(entries []CQEntry, threshold int, timeoutMs int) (int, error) {
	return c.SReadFrom(entries, nil, threshold, timeoutMs)
}

// SReadFrom is SRead with source addresses (fi_cq_sreadfrom); see ReadFrom.
// src may be nil; otherwise it must be at least as long as entries.
func (c *CQ) SReadFrom(entries []CQEntry, src []Addr, threshold int, timeoutMs int) (int, error) {
	if c == nil || (src != nil && len(src) < len(entries)) {
		return 0, ErrInval
	}
	if c.q == nil {
		return 0, c.peerNoSys()
	}
	n, err := c.q.SRead(entries, src, threshold, cqDeadline(timeoutMs), nil)
	return n, cqErr(err)
}

// ReadWait is SRead bounded by a context instead of a timeout (the Go form
// of fi_cq_sread). When ctx ends with nothing read, the error matches both
// ErrAgain and ctx's error (context.DeadlineExceeded or, with ErrCanceled,
// context.Canceled) under errors.Is. Other results are as for SRead
// (threshold 1).
func (c *CQ) ReadWait(ctx context.Context, entries []CQEntry) (int, error) {
	if c == nil || ctx == nil {
		return 0, ErrInval
	}
	if c.q == nil {
		return 0, c.peerNoSys()
	}
	if err := ctx.Err(); err != nil {
		return 0, cqCtxErr(err, ErrAgain)
	}
	n, err := c.q.SRead(entries, nil, 1, time.Time{}, ctx.Done())
	if err == progress.ErrDone {
		return 0, cqCtxErr(ctx.Err(), ErrAgain)
	}
	return n, cqErr(err)
}

// cqWaitError is the error of a blocking call whose context ended. It
// matches (errors.Is) both the libfabric error of the call and the
// context's error.
type cqWaitError struct {
	errno Errno
	ctx   error
}

func (e *cqWaitError) Error() string { return e.ctx.Error() + ": " + e.errno.Error() }

// Unwrap returns both identities.
func (e *cqWaitError) Unwrap() []error { return []error{e.errno, e.ctx} }

// Timeout reports whether the context's deadline passed.
func (e *cqWaitError) Timeout() bool { return e.ctx == context.DeadlineExceeded }

// cqCtxErr builds the error for a context that ended: errno for a passed
// deadline, ErrCanceled for a cancelled context.
func cqCtxErr(ctxErr error, errno Errno) error {
	if ctxErr == nil {
		return errno
	}
	if ctxErr != context.DeadlineExceeded {
		errno = ErrCanceled
	}
	return &cqWaitError{errno: errno, ctx: ctxErr}
}

// Signal wakes the goroutines blocked in SRead/ReadWait (fi_cq_signal);
// they return ErrAgain. A signal with nobody blocked is remembered and
// consumed by the next blocking read. ErrNoSys for a CQ opened with
// WaitNone ("only available if the CQ was configured with a wait object").
func (c *CQ) Signal() error {
	if c == nil {
		return ErrInval
	}
	if c.q == nil {
		return c.peerNoSys()
	}
	return cqErr(c.q.Signal())
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
	if c.q == nil {
		return -1, opErr("fi_control", c.dom.prov.Name(), c.peerNoSys())
	}
	fd, err := c.q.WaitFD()
	if err != nil {
		return -1, opErr("fi_control", c.dom.prov.Name(), cqErr(err))
	}
	return fd, nil
}

// TryWait prepares to block on the wait object (fi_trywait): it clears the
// descriptor's signal and drives progress, then returns ErrAgain if
// completions are ready to read (do not block), or nil if it is safe to
// wait on WaitFD. ErrInval for WaitNone.
func (c *CQ) TryWait() error {
	if c == nil {
		return ErrInval
	}
	if c.q == nil {
		return c.peerNoSys()
	}
	return cqErr(c.q.TryWait())
}

// Close closes the CQ (fi_close). It returns ErrBusy while endpoints (or
// other objects) are bound to it, and ErrClosed on a second call (both
// wrapped). Closing wakes blocked SRead/ReadWait callers, which return
// ErrClosed; queued completions are lost.
func (c *CQ) Close() error {
	if c == nil {
		return ErrInval
	}
	prov := c.dom.prov.Name()
	if err := c.lc.beginClose(); err != nil {
		return opErr("fi_close", prov, err)
	}
	var err error
	if c.q != nil {
		err = c.q.Close()
	}
	c.dom.lc.release()
	return opErr("fi_close", prov, err)
}

// ---- hooks for endpoints and other objects bound to the CQ ----

// bindEndpoint registers a bound object: Close returns ErrBusy until
// unbindEndpoint. p, if not nil, is added to the progress sources driven
// by reads, and (FI_WAIT_FD) its descriptor to the wait set when it
// implements provider.FDWaiter. Errors (bare): ErrClosed, ErrInval (p not
// comparable).
func (c *CQ) bindEndpoint(p provider.Progresser) error {
	if err := c.lc.hold(); err != nil {
		return err
	}
	var err error
	if c.q != nil {
		err = c.q.AddSource(p)
	} else {
		err = c.srcs.Add(p)
	}
	if err != nil {
		c.lc.release()
		return cqErr(err)
	}
	return nil
}

// unbindEndpoint undoes bindEndpoint.
func (c *CQ) unbindEndpoint(p provider.Progresser) {
	if c.q != nil {
		c.q.RemoveSource(p)
	} else {
		c.srcs.Remove(p)
	}
	c.lc.release()
}

// owner is what providers write completions to: the CQ itself, or the
// owner's CQ of an FI_PEER import.
func (c *CQ) owner() provider.CQOwner {
	if c.peer != nil {
		return c.peer
	}
	return c.q
}

// domain returns the domain the CQ was opened on.
func (c *CQ) domain() *Domain { return c.dom }
