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
	progress.Hub // Sources, AddSource, RemoveSource, Progress, WaitFD, TryWait
	cfg          Config
	val          atomic.Uint64
	errv         atomic.Uint64
	closed       atomic.Bool
}

var _ provider.CntrOwner = (*Cntr)(nil)

// New opens a counter.
func New(cfg Config) (*Cntr, error) {
	cfg, err := cfg.Check()
	if err != nil {
		return nil, err
	}
	c := &Cntr{cfg: cfg}
	if err := c.Hub.Init(cfg.WaitObj); err != nil {
		return nil, err
	}
	return c, nil
}

// Config returns the configuration.
func (c *Cntr) Config() Config { return c.cfg }

// Inc adds one to the value (fi_ops_cntr_owner inc).
func (c *Cntr) Inc() {
	c.val.Add(1)
	c.Wake()
}

// IncErr adds one to the error value (fi_ops_cntr_owner incerr).
func (c *Cntr) IncErr() {
	c.errv.Add(1)
	c.Wake()
}

// Read drives progress and returns the value (fi_cntr_read).
func (c *Cntr) Read() (uint64, error) {
	if c.closed.Load() {
		return 0, provider.EBADF
	}
	c.Progress()
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
	c.Wake()
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
		c.Progress()
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
	switch err := c.Hub.Block(deadline, done, ready); err {
	case nil:
		return res
	case progress.ErrClosed:
		return provider.EBADF
	default:
		return err // ETIMEDOUT or ErrDone
	}
}

// Close fails blocked and later calls with EBADF and closes the wait
// object. A second Close returns EBADF.
func (c *Cntr) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return provider.EBADF
	}
	return c.Hub.Close()
}
