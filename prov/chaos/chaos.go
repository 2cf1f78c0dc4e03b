package chaos

import (
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// Name is the hook's name (FI_HOOK=chaos).
const Name = "chaos"

// Environment variables of the hook registered under Name, read each time
// it opens a fabric (each fabric.Open while FI_HOOK names chaos).
// Rates are probabilities from 0 to 1 (a value outside is an error: the
// fabric does not open, FI_EINVAL); an unset or empty variable means 0.
const (
	EnvSeed  = "FI_CHAOS_SEED"  // Config.Seed (decimal)
	EnvError = "FI_CHAOS_ERROR" // Config.Error
	EnvDrop  = "FI_CHAOS_DROP"  // Config.Drop
	EnvDup   = "FI_CHAOS_DUP"   // Config.Dup
	// EnvDelay is Config.Delay; EnvDelayTime Config.DelayTime, a Go
	// duration ("2ms") or whole milliseconds.
	EnvDelay     = "FI_CHAOS_DELAY"
	EnvDelayTime = "FI_CHAOS_DELAY_TIME"
	EnvReorder   = "FI_CHAOS_REORDER" // Config.Reorder
	// EnvReorderTime is Config.ReorderTime, as EnvDelayTime.
	EnvReorderTime = "FI_CHAOS_REORDER_TIME"
	EnvTrace       = "FI_CHAOS_TRACE" // Config.Trace (1, true, yes, on)
)

// Config is the configuration of a Hook. The zero Config (and a nil
// *Config) is transparent: every call goes to the core provider
// unchanged.
//
// Faults are drawn per endpoint from a random stream seeded with Seed and
// the endpoint's number (endpoints of a Hook are numbered from 0 in the
// order they are opened), one draw per fault with a non-zero rate for each
// transmit (send, tagged send, inject, RMA read and write, atomic) for
// which the fault applies, in the order Error, Drop, Dup, Delay, Reorder
// (a transmit dropped or failed draws no further): the same program with
// the same seed meets the same faults. They act on the
// transmitting side only; receives, and the completions of operations the
// core provider ran, are left alone.
type Config struct {
	// Seed seeds the endpoints' random streams (default 0).
	Seed uint64
	// Error is the rate of transmits that fail: the operation is not
	// started and completes with an error completion (fi_cq(3)
	// CQErrEntry, Err ErrInjected), its counter's error value bumped, on
	// every endpoint type. Zero: none.
	Error float64
	// Drop is the rate of datagrams lost (FI_EP_DGRAM sends only, the one
	// endpoint type that allows loss): the send completes successfully and
	// nothing is sent. Zero: none.
	Drop float64
	// Dup is the rate of datagrams sent twice (FI_EP_DGRAM sends only):
	// one completion, one send counter increment, two arrivals. Zero:
	// none.
	Dup float64
	// Delay is the rate of transmits held for DelayTime before they are
	// posted to the core provider. Later transmits of the endpoint queue
	// behind a held one, so that no order is broken. Zero: none.
	Delay float64
	// DelayTime is how long a delayed transmit is held (default
	// DefaultDelayTime).
	DelayTime time.Duration
	// Reorder is the rate of transmits held until the endpoint's next
	// transmit has been posted (or ReorderTime has passed), which
	// therefore overtakes it: only on endpoints whose tx_attr.msg_order
	// does not include FI_ORDER_SAS (draws are made only there). Zero:
	// none.
	Reorder float64
	// ReorderTime bounds how long a reordered transmit waits for one to
	// overtake it (default DefaultReorderTime).
	ReorderTime time.Duration
	// Trace logs every transmit, endpoint control call and completion of the
	// hook's endpoints through the library's logging (see the package
	// doc).
	Trace bool
}

// check validates c.
func (c *Config) check() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"Error", c.Error}, {"Drop", c.Drop}, {"Dup", c.Dup}, {"Delay", c.Delay}, {"Reorder", c.Reorder}} {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return &configErr{"chaos: Config." + r.name + " must be a rate from 0 to 1"}
		}
	}
	if c.DelayTime < 0 || c.ReorderTime < 0 {
		return &configErr{"chaos: Config.DelayTime and ReorderTime must not be negative"}
	}
	return nil
}

func (c *Config) faulty() bool {
	return c.Error > 0 || c.Drop > 0 || c.Dup > 0 || c.Delay > 0 || c.Reorder > 0
}

// Defaults of Config's durations.
const (
	DefaultDelayTime   = time.Millisecond
	DefaultReorderTime = 10 * time.Millisecond
)

// configErr is a configuration error; it matches FI_EINVAL.
type configErr struct{ msg string }

func (e *configErr) Error() string { return e.msg }
func (e *configErr) Unwrap() error { return provider.EINVAL }

// envConfig reads the configuration from the environment.
func envConfig() (Config, error) {
	var c Config
	var errs []string
	rate := func(name string, p *float64) {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			return
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			errs = append(errs, name+"="+v+": want a rate from 0 to 1")
			return
		}
		*p = f
	}
	if v := strings.TrimSpace(os.Getenv(EnvSeed)); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			errs = append(errs, EnvSeed+"="+v+": want an unsigned decimal")
		}
		c.Seed = s
	}
	rate(EnvError, &c.Error)
	rate(EnvDrop, &c.Drop)
	rate(EnvDup, &c.Dup)
	rate(EnvDelay, &c.Delay)
	rate(EnvReorder, &c.Reorder)
	duration := func(name string, p *time.Duration) {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			ms, err2 := strconv.ParseUint(v, 10, 32)
			if err2 != nil {
				errs = append(errs, name+"="+v+": want a duration (2ms) or whole milliseconds")
			}
			d = time.Duration(ms) * time.Millisecond
		}
		if d < 0 {
			errs = append(errs, name+"="+v+": negative")
			d = 0
		}
		*p = d
	}
	duration(EnvDelayTime, &c.DelayTime)
	duration(EnvReorderTime, &c.ReorderTime)
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvTrace))) {
	case "1", "true", "yes", "on", "y":
		c.Trace = true
	}
	if len(errs) > 0 {
		return c, &configErr{"chaos: " + strings.Join(errs, "; ")}
	}
	return c, nil
}

// Hook is the chaos hook (a provider.Hook): pass it to fabric.OpenHooked,
// or let FI_HOOK=chaos install the one registered under Name (Env). Its
// controls (Kill, Partition, Heal) and counters (Stats) apply to every
// endpoint opened under it. It is safe for concurrent use.
type Hook struct {
	cfg    *Config // nil: read from the environment at each Fabric
	cfgErr error   // cfg is invalid (New)
	nextEP atomic.Uint64

	// ctl is set once Kill, Partition or Configure has been called:
	// every endpoint then takes the slow path, checking destinations and
	// its configuration on each transmit.
	ctl     atomic.Bool
	mu      sync.Mutex
	killed  map[string]bool
	parts   []partition
	conf    map[string]*Config // Configure, by endpoint address
	confGen atomic.Uint64

	stats struct {
		errors, dropped, dups, delayed, reordered, cut atomic.Uint64
	}
}

var _ provider.Hook = (*Hook)(nil)

// New returns a hook with configuration cfg (copied; nil is the zero
// Config, transparent). With an invalid cfg (a rate outside 0 to 1, a
// negative duration) every fabric open through the hook fails with an
// error matching FI_EINVAL (Open reports it before opening anything).
func New(cfg *Config) *Hook {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	return &Hook{cfg: &c, cfgErr: c.check()}
}

// envHook is the hook FI_HOOK=chaos installs.
var envHook = &Hook{}

func init() { provider.RegisterHook(envHook) }

// Env returns the hook registered under Name, which FI_HOOK=chaos
// installs, configured from the environment (EnvSeed ...): its controls
// and counters are those of every fabric opened through FI_HOOK.
func Env() *Hook { return envHook }

// Open opens the fabric of info (from fabric.GetInfo) with a new hook of
// configuration cfg installed over it: fabric.OpenHooked(info, New(cfg)).
//
// An invalid cfg returns an error matching fabric.ErrInval.
func Open(info *fabric.Info, cfg *Config) (*fabric.Fabric, *Hook, error) {
	if cfg != nil {
		if err := cfg.check(); err != nil {
			return nil, nil, err
		}
	}
	h := New(cfg)
	f, err := fabric.OpenHooked(info, h)
	if err != nil {
		return nil, nil, err
	}
	return f, h, nil
}

var _ provider.ParamLister = (*Hook)(nil)

// Params lists the environment variables the hook reads (fi_info -e).
func (h *Hook) Params() []provider.Param {
	return []provider.Param{
		{Name: EnvSeed, Type: provider.ParamSize, Help: "Seed of the endpoints' random fault streams (default: 0)"},
		{Name: EnvError, Type: provider.ParamString, Help: "Rate (0 to 1) of transmits failed with an FI_EIO error completion (default: 0)"},
		{Name: EnvDrop, Type: provider.ParamString, Help: "Rate (0 to 1) of FI_EP_DGRAM sends dropped (default: 0)"},
		{Name: EnvDup, Type: provider.ParamString, Help: "Rate (0 to 1) of FI_EP_DGRAM sends sent twice (default: 0)"},
		{Name: EnvDelay, Type: provider.ParamString, Help: "Rate (0 to 1) of transmits delayed (default: 0)"},
		{Name: EnvDelayTime, Type: provider.ParamString, Help: "How long a transmit is delayed: a duration (2ms) or milliseconds (default: 1ms)"},
		{Name: EnvReorder, Type: provider.ParamString, Help: "Rate (0 to 1) of transmits overtaken by the next one, without FI_ORDER_SAS (default: 0)"},
		{Name: EnvReorderTime, Type: provider.ParamString, Help: "How long a reordered transmit waits to be overtaken at most: a duration or milliseconds (default: 10ms)"},
		{Name: EnvTrace, Type: provider.ParamBool, Help: "Log every transmit, endpoint control call and completion at trace level (default: no)"},
	}
}

// Name implements provider.Hook.
func (h *Hook) Name() string { return Name }

// Fabric implements provider.Hook: the hooked fabric over f.
func (h *Hook) Fabric(attr *provider.FabricAttr, p provider.Provider, f provider.Fabric) (provider.Fabric, error) {
	var c Config
	if h == nil {
		return nil, provider.EINVAL
	}
	if h.cfgErr != nil {
		return nil, h.cfgErr
	}
	if h.cfg != nil {
		c = *h.cfg
	} else {
		var err error
		if c, err = envConfig(); err != nil {
			log.Warn(provider.SubsysFabric, "bad configuration", slog.String("error", err.Error()))
			return nil, err
		}
	}
	if c.DelayTime == 0 {
		c.DelayTime = DefaultDelayTime
	}
	if c.ReorderTime == 0 {
		c.ReorderTime = DefaultReorderTime
	}
	st := &state{hook: h, cfg: c, prov: p.Name(), trace: c.Trace, faulty: c.faulty()}
	st.slow = st.trace || st.faulty
	log.Info(provider.SubsysFabric, "hook installed", slog.String("over", p.Name()),
		slog.Uint64("seed", c.Seed), slog.Bool("faults", st.faulty), slog.Bool("trace", st.trace))
	return &hookedFabric{st: st, p: f}, nil
}

// Stats counts what a Hook did, over all its endpoints.
type Stats struct {
	Endpoints  uint64 // endpoints opened under the hook (transmit and receive contexts included)
	Errors     uint64 // transmits failed with an error completion (Config.Error)
	Dropped    uint64 // datagrams dropped (Config.Drop)
	Duplicated uint64 // datagrams sent twice (Config.Dup)
	Delayed    uint64 // transmits held for Config.DelayTime
	Reordered  uint64 // transmits held for another to overtake (Config.Reorder)
	// Cut counts transmits to or from a killed or partitioned peer:
	// failed on FI_EP_RDM and FI_EP_MSG (ErrCut), dropped on FI_EP_DGRAM.
	Cut uint64
}

// Stats returns the hook's counters (zero for a nil hook).
func (h *Hook) Stats() Stats {
	if h == nil {
		return Stats{}
	}
	return Stats{Endpoints: h.nextEP.Load(), Errors: h.stats.errors.Load(),
		Dropped: h.stats.dropped.Load(), Duplicated: h.stats.dups.Load(),
		Delayed: h.stats.delayed.Load(), Reordered: h.stats.reordered.Load(), Cut: h.stats.cut.Load()}
}

// state is what the objects of one hooked fabric share.
type state struct {
	hook   *Hook
	cfg    Config
	prov   string // the core provider
	trace  bool
	faulty bool // a fault rate is not 0
	slow   bool // transmits take submit
}

var log = provider.NewLogger(Name)
