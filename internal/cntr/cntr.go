package cntr

import (
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/progress"
	"github.com/gofabric/fabric/provider"
)

// Config describes a counter (the fi_cntr_attr fields that matter here).
type Config struct {
	// WaitObj is the wait object (FI_WAIT_UNSPEC, the zero value, by default).
	WaitObj provider.WaitObj
}

// Check validates c.
func (c Config) Check() (Config, error) {
	return c, progress.CheckWaitObj(c.WaitObj)
}

// Cntr is a completion counter. All methods are goroutine-safe.
type Cntr struct {
	hub    progress.Hub
	cfg    Config
	val    atomic.Uint64
	errv   atomic.Uint64
	closed atomic.Bool
}

var _ provider.CntrOwner = (*Cntr)(nil)

// New opens a counter.
func New(cfg Config) (*Cntr, error) {
	cfg, err := cfg.Check()
	if err != nil {
		return nil, err
	}
	c := &Cntr{cfg: cfg}
	if err := c.hub.Init(cfg.WaitObj); err != nil {
		return nil, err
	}
	return c, nil
}

// Config returns the configuration.
func (c *Cntr) Config() Config { return c.cfg }

// Sources is the set of progress sources driven by reads of this counter.
func (c *Cntr) Sources() *progress.Set { return &c.hub.Set }

// AddSource binds a progress source (for FI_WAIT_FD its descriptor joins
// the wait set when it implements provider.FDWaiter).
func (c *Cntr) AddSource(p provider.Progresser) error {
	if c.closed.Load() {
		return provider.EBADF
	}
	return c.hub.AddSource(p)
}

// RemoveSource unbinds a progress source.
func (c *Cntr) RemoveSource(p provider.Progresser) { c.hub.RemoveSource(p) }

// Progress drives progress of the bound sources once.
func (c *Cntr) Progress() { c.hub.Set.Run() }

// Inc adds one to the value (fi_ops_cntr_owner inc).
func (c *Cntr) Inc() {
	c.val.Add(1)
	c.hub.Signal()
}

// IncErr adds one to the error value (fi_ops_cntr_owner incerr).
func (c *Cntr) IncErr() {
	c.errv.Add(1)
	c.hub.Signal()
}

// Read drives progress and returns the value (fi_cntr_read).
func (c *Cntr) Read() (uint64, error) {
	if c.closed.Load() {
		return 0, provider.EBADF
	}
	c.hub.Set.Run()
	return c.val.Load(), nil
}

// ReadErr returns the error value (fi_cntr_readerr).
func (c *Cntr) ReadErr() (uint64, error) {
	if c.closed.Load() {
		return 0, provider.EBADF
	}
	return c.errv.Load(), nil
}

func (c *Cntr) update(v *atomic.Uint64, set bool, x uint64) error {
	if c.closed.Load() {
		return provider.EBADF
	}
	if set {
		v.Store(x)
	} else {
		v.Add(x)
	}
	c.hub.Signal()
	return nil
}

// Add adds x to the value (fi_cntr_add).
func (c *Cntr) Add(x uint64) error { return c.update(&c.val, false, x) }

// Set sets the value (fi_cntr_set).
func (c *Cntr) Set(x uint64) error { return c.update(&c.val, true, x) }

// AddErr adds x to the error value (fi_cntr_adderr).
func (c *Cntr) AddErr(x uint64) error { return c.update(&c.errv, false, x) }

// SetErr sets the error value (fi_cntr_seterr).
func (c *Cntr) SetErr(x uint64) error { return c.update(&c.errv, true, x) }

// Wait blocks until the value reaches threshold (fi_cntr_wait) and returns
// nil. It returns EAVAIL if the error value changes meanwhile (fi_cntr(3):
// any change of the error value unblocks the wait), ETIMEDOUT when the
// deadline passes (zero: never), progress.ErrDone when done closes, EBADF
// when the counter is closed, and ENOSYS at once for FI_WAIT_NONE.
func (c *Cntr) Wait(threshold uint64, deadline time.Time, done <-chan struct{}) error {
	if c.closed.Load() {
		return provider.EBADF
	}
	if c.cfg.WaitObj == provider.WaitNone {
		return provider.ENOSYS
	}
	err0 := c.errv.Load()
	var res error
	ready := func() bool {
		c.hub.Set.Run()
		switch {
		case c.closed.Load():
			res = provider.EBADF
		case c.val.Load() >= threshold:
			res = nil
		case c.errv.Load() != err0:
			res = provider.EAVAIL
		default:
			return false
		}
		return true
	}
	switch err := c.hub.Block(deadline, done, ready); err {
	case nil:
		return res
	case progress.ErrClosed:
		return provider.EBADF
	default:
		return err // ETIMEDOUT or ErrDone
	}
}

// WaitFD returns the FI_WAIT_FD descriptor (fi_control FI_GETWAIT):
// ENODATA for FI_WAIT_NONE, ENOSYS for the other wait objects. The
// descriptor becomes readable when the counter changes.
func (c *Cntr) WaitFD() (int, error) { return c.hub.WaitFD() }

// TryWait (fi_trywait) resets the FD signal and drives progress; the
// descriptor then becomes readable at the next change of the counter. It
// returns EINVAL for FI_WAIT_NONE.
func (c *Cntr) TryWait() error { return c.hub.TryWait() }

// Close fails blocked and later calls with EBADF and closes the wait
// object. A second Close returns EBADF.
func (c *Cntr) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return provider.EBADF
	}
	return c.hub.Close()
}
