package provider

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Log levels, as slog levels. libfabric's levels, from least to most
// verbose, are warn, trace, info and debug: its trace sits between warn and
// info, so LevelTrace is slog.LevelInfo+2.
const (
	LevelWarn  = slog.LevelWarn  // FI_LOG_WARN: errors and warnings
	LevelTrace = slog.Level(2)   // FI_LOG_TRACE: non-detailed tracing of program execution
	LevelInfo  = slog.LevelInfo  // FI_LOG_INFO: detailed output
	LevelDebug = slog.LevelDebug // FI_LOG_DEBUG: high-traffic output
)

// Subsys is a logging subsystem (enum fi_log_subsys). FI_LOG_SUBSYS selects
// them by the names String returns.
type Subsys uint8

// Logging subsystems.
const (
	SubsysCore   Subsys = iota // core: the framework and its management of providers
	SubsysFabric               // fabric: the fabric object
	SubsysDomain               // domain: the domain object
	SubsysEPCtrl               // ep_ctrl: endpoint control and connection management
	SubsysEPData               // ep_data: endpoint data transfers
	SubsysAV                   // av: address vectors
	SubsysCQ                   // cq: completion queues
	SubsysEQ                   // eq: event queues
	SubsysMR                   // mr: memory registration
	SubsysCntr                 // cntr: counters
	subsysMax
)

var subsysNames = [subsysMax]string{"core", "fabric", "domain", "ep_ctrl", "ep_data", "av", "cq", "eq", "mr", "cntr"}

// String returns the subsystem's name as FI_LOG_SUBSYS spells it ("ep_ctrl").
func (s Subsys) String() string {
	if s < subsysMax {
		return subsysNames[s]
	}
	return "unknown"
}

// Environment variables read by the logging, once, when the process starts.
const (
	EnvLogLevel  = "FI_LOG_LEVEL"
	EnvLogProv   = "FI_LOG_PROV"
	EnvLogSubsys = "FI_LOG_SUBSYS"
)

// LogParams lists the logging variables in the form `fi_info -e` prints
// them (libfabric's core variables of the same names).
func LogParams() []Param {
	return []Param{
		{Name: EnvLogLevel, Type: ParamString, Help: "Specify logging level: warn, trace, info, debug (default: warn)"},
		{Name: EnvLogProv, Type: ParamString, Help: "Specify specific provider to log (default: all)"},
		{Name: EnvLogSubsys, Type: ParamString, Help: "Specify specific subsystem to log (default: all)"},
	}
}

// A Logger logs for one provider (or "core", the library itself): it is
// libfabric's fi_log with FI_WARN, FI_TRACE, FI_INFO and FI_DBG, under the
// FI_LOG_LEVEL, FI_LOG_PROV and FI_LOG_SUBSYS variables of fabric(7).
// Create it once, with NewLogger, and keep it in a package variable:
//
//	var log = provider.NewLogger("tcp")
//
//	log.Info(provider.SubsysEPCtrl, "connection accepted", slog.String("peer", addr))
//
// Records go to a log/slog Handler (the application chooses it with
// fabric.SetLogHandler; the default writes text to stderr) with the
// attributes prov= and subsys= and the caller's source position. On a hot
// path, guard the call with Enabled so that no attribute is built while
// the level is off; Enabled is one atomic load and a comparison:
//
//	if log.Enabled(provider.LevelDebug, provider.SubsysEPData) {
//		log.Debug(provider.SubsysEPData, "truncated", slog.Int("len", n))
//	}
//
// Its methods are safe for concurrent use; the nil and zero Loggers log
// nothing.
type Logger struct {
	prov string
	// state packs what Enabled needs into one word: the lowest enabled
	// level in the low 32 bits (math.MaxInt32 when the provider is
	// filtered out) and the enabled subsystems as a bit set above.
	state atomic.Uint64
}

// logConfig is the parsed environment plus the installed handler.
type logConfig struct {
	handler slog.Handler // nil: the default handler
	// envLevel is FI_LOG_LEVEL when set and valid.
	envLevel    slog.Level
	envLevelSet bool
	badLevel    string // an unrecognised FI_LOG_LEVEL value
	prov        nameFilter
	subsys      uint64 // bit set of enabled subsystems
}

var (
	logMu      sync.Mutex
	logCfg     logConfig // guarded by logMu
	loggers    []*Logger // guarded by logMu
	logHandler atomic.Pointer[handlerBox]
	coreLog    = NewLogger("core")
)

type handlerBox struct{ h slog.Handler }

func init() {
	logMu.Lock()
	logCfg = parseLogEnv(os.LookupEnv)
	bad := logCfg.badLevel
	applyLogConfigLocked()
	logMu.Unlock()
	if bad != "" {
		coreLog.Warn(SubsysCore, "unrecognised "+EnvLogLevel+", using warn", slog.String("value", bad))
	}
}

// parseLogEnv reads FI_LOG_LEVEL, FI_LOG_PROV and FI_LOG_SUBSYS.
func parseLogEnv(lookup func(string) (string, bool)) logConfig {
	var c logConfig
	if v, ok := lookup(EnvLogLevel); ok && v != "" {
		if l, ok := ParseLogLevel(v); ok {
			c.envLevel, c.envLevelSet = l, true
		} else {
			// As libfabric, an unrecognised value leaves the default.
			c.envLevel, c.envLevelSet, c.badLevel = LevelWarn, true, v
		}
	}
	v, ok := lookup(EnvLogProv)
	c.prov = parseNameFilter(v, ok && v != "")
	v, ok = lookup(EnvLogSubsys)
	sf := parseNameFilter(v, ok && v != "")
	for s := Subsys(0); s < subsysMax; s++ {
		if !sf.excludes(s.String()) {
			c.subsys |= 1 << s
		}
	}
	return c
}

// ParseLogLevel parses an FI_LOG_LEVEL value: warn, trace, info or debug,
// in any case.
func ParseLogLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "warn":
		return LevelWarn, true
	case "trace":
		return LevelTrace, true
	case "info":
		return LevelInfo, true
	case "debug":
		return LevelDebug, true
	}
	return 0, false
}

// nameFilter is a comma-separated list of names, or with a leading '^' of
// names to exclude (the syntax of FI_PROVIDER, FI_LOG_PROV, FI_LOG_SUBSYS).
type nameFilter struct {
	set     bool
	negated bool
	names   []string
}

func parseNameFilter(v string, set bool) nameFilter {
	if !set {
		return nameFilter{}
	}
	f := nameFilter{set: true}
	if strings.HasPrefix(v, "^") {
		f.negated, v = true, v[1:]
	}
	f.names = strings.Split(v, ",")
	return f
}

func (f nameFilter) excludes(name string) bool {
	if !f.set {
		return false
	}
	for _, n := range f.names {
		if strings.EqualFold(strings.TrimSpace(n), name) {
			return f.negated
		}
	}
	return !f.negated
}

// NewLogger returns the Logger of the provider named prov ("core" for the
// library itself). Calling it twice with one name returns two Loggers that
// behave alike.
func NewLogger(prov string) *Logger {
	l := &Logger{prov: prov}
	logMu.Lock()
	loggers = append(loggers, l)
	l.state.Store(stateFor(&logCfg, prov, thresholdLocked()))
	logMu.Unlock()
	return l
}

// SetLogHandler installs the handler that receives every log record; nil
// restores the default. See fabric.SetLogHandler, which applications call.
func SetLogHandler(h slog.Handler) {
	logMu.Lock()
	defer logMu.Unlock()
	logCfg.handler = h
	applyLogConfigLocked()
}

// defaultHandler writes text to stderr, at warn unless FI_LOG_LEVEL says
// otherwise, with libfabric's level names.
var defaultHandler slog.Handler = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{
	Level:       slog.Level(math.MinInt32), // the threshold is applied before
	ReplaceAttr: replaceLevel,
})

func replaceLevel(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok {
			a.Value = slog.StringValue(LevelName(l))
		}
	}
	return a
}

// LevelName returns libfabric's name of a level in upper case (WARN,
// TRACE, INFO, DEBUG), or slog's name for other levels.
func LevelName(l slog.Level) string {
	switch l {
	case LevelWarn:
		return "WARN"
	case LevelTrace:
		return "TRACE"
	case LevelInfo:
		return "INFO"
	case LevelDebug:
		return "DEBUG"
	}
	return l.String()
}

// thresholdLocked is the lowest level logged: FI_LOG_LEVEL when set;
// otherwise warn with the default handler, or the lowest of libfabric's
// levels an application's handler is enabled for (its Enabled is asked
// again for every record).
func thresholdLocked() slog.Level {
	if logCfg.envLevelSet {
		return logCfg.envLevel
	}
	h := logCfg.handler
	if h == nil {
		return LevelWarn
	}
	for _, l := range []slog.Level{LevelDebug, LevelInfo, LevelTrace, LevelWarn} {
		if h.Enabled(context.Background(), l) {
			return l
		}
	}
	return slog.LevelError
}

func stateFor(c *logConfig, prov string, min slog.Level) uint64 {
	lv := int64(min)
	if c.prov.excludes(prov) {
		lv = math.MaxInt32
	}
	return uint64(uint32(int32(lv))) | c.subsys<<32
}

func applyLogConfigLocked() {
	h := logCfg.handler
	if h == nil {
		h = defaultHandler
	}
	logHandler.Store(&handlerBox{h})
	min := thresholdLocked()
	for _, l := range loggers {
		l.state.Store(stateFor(&logCfg, l.prov, min))
	}
}

// Enabled reports whether a record at level for subsystem s would be
// logged. It costs one atomic load; call it before building attributes on
// a hot path.
func (l *Logger) Enabled(level slog.Level, s Subsys) bool {
	if l == nil {
		return false
	}
	st := l.state.Load()
	return int32(level) >= int32(uint32(st)) && st>>32&(1<<s) != 0
}

// Log logs msg at level for subsystem s with attrs, if enabled. The record
// carries prov= and subsys= before attrs, and the caller's position.
func (l *Logger) Log(level slog.Level, s Subsys, msg string, attrs ...slog.Attr) {
	if !l.Enabled(level, s) {
		return
	}
	l.output(level, s, msg, attrs)
}

// Warn logs at LevelWarn (FI_WARN).
func (l *Logger) Warn(s Subsys, msg string, attrs ...slog.Attr) {
	if !l.Enabled(LevelWarn, s) {
		return
	}
	l.output(LevelWarn, s, msg, attrs)
}

// Trace logs at LevelTrace (FI_TRACE).
func (l *Logger) Trace(s Subsys, msg string, attrs ...slog.Attr) {
	if !l.Enabled(LevelTrace, s) {
		return
	}
	l.output(LevelTrace, s, msg, attrs)
}

// Info logs at LevelInfo (FI_INFO).
func (l *Logger) Info(s Subsys, msg string, attrs ...slog.Attr) {
	if !l.Enabled(LevelInfo, s) {
		return
	}
	l.output(LevelInfo, s, msg, attrs)
}

// Debug logs at LevelDebug (FI_DBG).
func (l *Logger) Debug(s Subsys, msg string, attrs ...slog.Attr) {
	if !l.Enabled(LevelDebug, s) {
		return
	}
	l.output(LevelDebug, s, msg, attrs)
}

// output builds and hands over the record; it is reached only when the
// level is enabled.
//
//go:noinline
func (l *Logger) output(level slog.Level, s Subsys, msg string, attrs []slog.Attr) {
	h := logHandler.Load().h
	ctx := context.Background()
	if !h.Enabled(ctx, level) {
		return
	}
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:]) // output, the Logger method, its caller
	r := slog.NewRecord(time.Now(), level, msg, pcs[0])
	r.AddAttrs(slog.String("prov", l.prov), slog.String("subsys", s.String()))
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}
