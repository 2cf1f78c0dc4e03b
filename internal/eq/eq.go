package eq

import (
	"sync"
	"time"

	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/provider"
)

// DefaultSize is the number of events of an EQ opened with size 0.
const DefaultSize = 1024

// MaxSize is the largest EQ size accepted. Memory grows with use.
const MaxSize = 1 << 30

// Sizes of libfabric's event structures, used for fi_eq_write's return
// value (the number of bytes written).
const (
	entrySize   = 24 // struct fi_eq_entry: fid, context, data
	cmEntrySize = 16 // struct fi_eq_cm_entry: fid, info (data follows)
)

// Config describes an EQ (the fi_eq_attr fields that matter here).
type Config struct {
	// Size is the capacity in events; 0 means DefaultSize.
	Size int
	// WaitObj is the wait object (FI_WAIT_UNSPEC, the zero value, by default).
	WaitObj provider.WaitObj
	// AppWrite (FI_WRITE) allows WriteUser (fi_eq_write).
	AppWrite bool
	// LegacyErrData (fabric opened with API < 1.5) makes ReadErr always
	// return an EQ-owned err_data buffer.
	LegacyErrData bool
}

// Check validates c and returns it with defaults applied.
func (c Config) Check() (Config, error) {
	if c.Size < 0 || c.Size > MaxSize {
		return c, provider.EINVAL
	}
	if c.Size == 0 {
		c.Size = DefaultSize
	}
	return c, progress.CheckWaitObj(c.WaitObj)
}

type event struct {
	e   provider.EQEntry
	ee  provider.EQErrEntry
	err bool
}

// EQ is an event queue. All methods are goroutine-safe.
type EQ struct {
	progress.Hub // Sources, AddSource, RemoveSource, Progress, WaitFD
	cfg          Config

	mu      sync.Mutex
	ring    []event // power-of-two capacity
	head, n int
	overrun bool
	closed  bool
	errData []byte // EQ-owned err_data returned by ReadErr
}

var _ provider.EQWriter = (*EQ)(nil)

// New opens an EQ.
func New(cfg Config) (*EQ, error) {
	cfg, err := cfg.Check()
	if err != nil {
		return nil, err
	}
	q := &EQ{cfg: cfg}
	if err := q.Hub.Init(cfg.WaitObj); err != nil {
		return nil, err
	}
	c := 16
	for c > 1 && c/2 >= cfg.Size {
		c /= 2
	}
	q.ring = make([]event, c)
	return q, nil
}

// Config returns the effective configuration.
func (q *EQ) Config() Config { return q.cfg }

func (q *EQ) push() (*event, error) {
	if q.closed {
		return nil, provider.EBADF
	}
	if q.overrun || q.n >= q.cfg.Size {
		q.overrun = true
		return nil, provider.EOVERRUN
	}
	if q.n == len(q.ring) {
		r := make([]event, 2*len(q.ring))
		for i := 0; i < q.n; i++ {
			r[i] = q.ring[(q.head+i)&(len(q.ring)-1)]
		}
		q.ring, q.head = r, 0
	}
	ev := &q.ring[(q.head+q.n)&(len(q.ring)-1)]
	q.n++
	return ev, nil
}

func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// Write queues an event (provider.EQWriter). e is copied, CMData included.
// It returns EOVERRUN when the EQ is full or overrun.
func (q *EQ) Write(e *provider.EQEntry) error {
	if e == nil {
		return provider.EINVAL
	}
	c := *e
	c.CMData = cloneBytes(e.CMData)
	return q.enqueue(event{e: c})
}

// enqueue queues v and wakes the waiters.
func (q *EQ) enqueue(v event) error {
	q.mu.Lock()
	ev, err := q.push()
	if err != nil {
		q.mu.Unlock()
		return err
	}
	*ev = v
	q.mu.Unlock()
	q.Wake()
	return nil
}

// WriteErr queues an error event (provider.EQWriter); e is copied, ErrData
// included. Err is made positive; 0 becomes EOTHER.
func (q *EQ) WriteErr(e *provider.EQErrEntry) error {
	if e == nil {
		return provider.EINVAL
	}
	c := *e
	c.ErrData = cloneBytes(e.ErrData)
	if c.Err < 0 {
		c.Err = -c.Err
	} else if c.Err == 0 {
		c.Err = provider.EOTHER
	}
	return q.enqueue(event{ee: c, err: true})
}

// WriteUser is fi_eq_write: the application inserts an event. It needs
// AppWrite (FI_WRITE at open), else EINVAL. On success it returns the
// number of bytes libfabric would report: sizeof(struct fi_eq_entry) for
// ordinary events, sizeof(struct fi_eq_cm_entry) plus the connection data
// for FI_CONNREQ, FI_CONNECTED and FI_SHUTDOWN.
func (q *EQ) WriteUser(e *provider.EQEntry) (int, error) {
	if !q.cfg.AppWrite {
		return 0, provider.EINVAL
	}
	if e == nil {
		return 0, provider.EINVAL
	}
	if err := q.Write(e); err != nil {
		return 0, err
	}
	switch e.Event {
	case provider.EventConnReq, provider.EventConnected, provider.EventShutdown:
		return cmEntrySize + len(e.CMData), nil
	}
	return entrySize, nil
}

func (q *EQ) statusLocked() error {
	switch {
	case q.closed:
		return provider.EBADF
	case q.n == 0 && q.overrun:
		return provider.EOVERRUN
	case q.n == 0:
		return provider.EAGAIN
	case q.ring[q.head].err:
		return provider.EAVAIL
	}
	return nil
}

func (q *EQ) popLocked() {
	q.ring[q.head] = event{}
	q.head = (q.head + 1) & (len(q.ring) - 1)
	q.n--
}

func (q *EQ) readLocked(flags provider.Flags) (provider.EQEntry, error) {
	if err := q.statusLocked(); err != nil {
		return provider.EQEntry{}, err
	}
	e := q.ring[q.head].e
	if flags&provider.FlagPeek == 0 {
		q.popLocked()
	}
	return e, nil
}

func checkFlags(flags provider.Flags) error {
	if flags&^provider.FlagPeek != 0 {
		return provider.EBADFLAGS
	}
	return nil
}

// Read returns the event at the head (fi_eq_read). With FlagPeek the event
// stays queued. It drives progress when the EQ is empty. Errors: EAGAIN,
// EAVAIL, EOVERRUN, EBADF (closed), EBADFLAGS (flags other than FlagPeek).
func (q *EQ) Read(flags provider.Flags) (provider.EQEntry, error) {
	if err := checkFlags(flags); err != nil {
		return provider.EQEntry{}, err
	}
	q.mu.Lock()
	if q.n == 0 && !q.closed {
		q.mu.Unlock()
		q.Progress()
		q.mu.Lock()
	}
	e, err := q.readLocked(flags)
	q.mu.Unlock()
	return e, err
}

// ReadErr moves the error event at the head into e (fi_eq_readerr); with
// FlagPeek it stays queued. It returns EAGAIN when no error event is at the
// head. err_data follows fi_eq(3) for API >= 1.5: if len(e.ErrData) > 0 on
// input the data is copied into it and e.ErrData is resliced to the bytes
// copied; otherwise (and always with LegacyErrData) e.ErrData is set to an
// EQ-owned buffer valid until the next ReadErr.
func (q *EQ) ReadErr(e *provider.EQErrEntry, flags provider.Flags) error {
	if e == nil {
		return provider.EINVAL
	}
	if err := checkFlags(flags); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return provider.EBADF
	}
	if q.n == 0 || !q.ring[q.head].err {
		return provider.EAGAIN
	}
	d := &q.ring[q.head].ee
	user := e.ErrData
	*e = *d
	if q.cfg.LegacyErrData || len(user) == 0 || q.isErrDataBuf(user) {
		if len(d.ErrData) == 0 {
			e.ErrData = nil
		} else {
			q.errData = append(q.errData[:0], d.ErrData...)
			e.ErrData = q.errData
		}
	} else {
		e.ErrData = user[:copy(user, d.ErrData)]
	}
	if flags&provider.FlagPeek == 0 {
		q.popLocked()
	}
	return nil
}

func (q *EQ) isErrDataBuf(b []byte) bool {
	return cap(q.errData) > 0 && cap(b) > 0 && &b[:1][0] == &q.errData[:1][0]
}

// SRead is the blocking read (fi_eq_sread): it returns the head event as
// soon as there is one (EAVAIL for an error event), EAGAIN when the
// deadline passes (zero: never), progress.ErrDone when done closes, EBADF
// when the EQ is closed, and ENOSYS at once for FI_WAIT_NONE.
func (q *EQ) SRead(flags provider.Flags, deadline time.Time, done <-chan struct{}) (provider.EQEntry, error) {
	if err := checkFlags(flags); err != nil {
		return provider.EQEntry{}, err
	}
	if q.cfg.WaitObj == provider.WaitNone {
		return provider.EQEntry{}, provider.ENOSYS
	}
	var e provider.EQEntry
	var err error
	ready := func() bool {
		q.Progress()
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.n == 0 && !q.overrun && !q.closed {
			return false
		}
		e, err = q.readLocked(flags)
		return true
	}
	switch berr := q.Hub.Block(deadline, done, ready); berr {
	case nil:
		return e, err
	case progress.ErrClosed:
		return provider.EQEntry{}, provider.EBADF
	case progress.ErrTimeout:
		return provider.EQEntry{}, provider.EAGAIN
	default:
		return provider.EQEntry{}, berr
	}
}

// TryWait (fi_trywait) resets the FD signal, drives progress, and returns
// EAGAIN if events are queued, 0 if the caller may wait on the descriptor.
// EINVAL for FI_WAIT_NONE.
func (q *EQ) TryWait() error {
	if err := q.Hub.TryWait(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return provider.EBADF
	}
	if q.n > 0 || q.overrun {
		return provider.EAGAIN
	}
	return nil
}

// StrError converts a provider error number (fi_eq_strerror).
func (q *EQ) StrError(provErrno int, errData []byte) string { return provider.StrError(provErrno) }

// Len returns the number of queued events, errors included.
func (q *EQ) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// Close discards queued events, fails blocked and later calls with EBADF
// and closes the wait object. A second Close returns EBADF.
func (q *EQ) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return provider.EBADF
	}
	q.closed = true
	clear(q.ring)
	q.n = 0
	q.mu.Unlock()
	return q.Hub.Close()
}
