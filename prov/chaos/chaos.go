package chaos

import (
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// Name is the hook's name (FI_HOOK=chaos).
const Name = "chaos"

// Environment variables of the hook registered under Name, read each time
// it opens a fabric (each fabric.Open while FI_HOOK names chaos).
const (
	EnvTrace = "FI_CHAOS_TRACE" // Config.Trace (1, true, yes, on)
)

// Config is the configuration of a Hook. The zero Config (and a nil
// *Config) is transparent: every call goes to the core provider
// unchanged.
type Config struct {
	// Trace logs every transmit, connection call and completion of the
	// hook's endpoints through the library's logging (see trace.go).
	Trace bool
}

// envConfig reads the configuration from the environment.
func envConfig() (Config, error) {
	var c Config
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvTrace))) {
	case "1", "true", "yes", "on", "y":
		c.Trace = true
	}
	return c, nil
}

// Hook is the chaos hook (a provider.Hook): pass it to fabric.OpenHooked,
// or let FI_HOOK=chaos install the one registered under Name (Env). It is
// safe for concurrent use.
type Hook struct {
	cfg    *Config // nil: read from the environment at each Fabric
	nextEP atomic.Uint64
}

var _ provider.Hook = (*Hook)(nil)

// New returns a hook with configuration cfg (copied; nil is the zero
// Config, transparent).
func New(cfg *Config) *Hook {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	return &Hook{cfg: &c}
}

// envHook is the hook FI_HOOK=chaos installs.
var envHook = &Hook{}

func init() { provider.RegisterHook(envHook) }

// Env returns the hook registered under Name, which FI_HOOK=chaos
// installs, configured from the environment (EnvTrace ...): its counters
// are those of every fabric opened through FI_HOOK.
func Env() *Hook { return envHook }

// Open opens the fabric of info (from fabric.GetInfo) with a new hook of
// configuration cfg installed over it: fabric.OpenHooked(info, New(cfg)).
func Open(info *fabric.Info, cfg *Config) (*fabric.Fabric, *Hook, error) {
	h := New(cfg)
	f, err := fabric.OpenHooked(info, h)
	if err != nil {
		return nil, nil, err
	}
	return f, h, nil
}

// Name implements provider.Hook.
func (h *Hook) Name() string { return Name }

// Fabric implements provider.Hook: the hooked fabric over f.
func (h *Hook) Fabric(attr *provider.FabricAttr, p provider.Provider, f provider.Fabric) (provider.Fabric, error) {
	var c Config
	if h.cfg != nil {
		c = *h.cfg
	} else {
		var err error
		if c, err = envConfig(); err != nil {
			log.Warn(provider.SubsysFabric, "bad configuration", slog.String("error", err.Error()))
			return nil, err
		}
	}
	st := &state{hook: h, cfg: c, prov: p.Name(), trace: c.Trace}
	st.slow = st.trace
	log.Info(provider.SubsysFabric, "hook installed", slog.String("over", p.Name()), slog.Bool("trace", st.trace))
	return &hookedFabric{st: st, p: f}, nil
}

// Stats counts what a Hook did, over all its endpoints.
type Stats struct {
	Endpoints uint64 // endpoints opened under the hook (transmit and receive contexts included)
}

// Stats returns the hook's counters.
func (h *Hook) Stats() Stats {
	return Stats{Endpoints: h.nextEP.Load()}
}

// state is what the objects of one hooked fabric share.
type state struct {
	hook  *Hook
	cfg   Config
	prov  string // the core provider
	trace bool
	slow  bool // transmits take submit
}

var log = provider.NewLogger(Name)
