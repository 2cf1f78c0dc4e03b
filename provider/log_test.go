package provider

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// recorder is a slog.Handler that keeps the records it is given.
type recorder struct {
	mu    sync.Mutex
	min   slog.Level
	recs  []slog.Record
	calls int // Enabled calls
}

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	return l >= r.min
}

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func (r *recorder) attrs(i int) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]string{"msg": r.recs[i].Message, "level": LevelName(r.recs[i].Level)}
	r.recs[i].Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	return m
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.recs)
}

// withEnv installs the logging configuration env would give and the
// handler h for the duration of the test.
func withEnv(t *testing.T, env map[string]string, h slog.Handler) {
	t.Helper()
	logMu.Lock()
	saved := logCfg
	logCfg = parseLogEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	logCfg.handler = h
	applyLogConfigLocked()
	logMu.Unlock()
	t.Cleanup(func() {
		logMu.Lock()
		logCfg = saved
		applyLogConfigLocked()
		logMu.Unlock()
	})
}

func TestLogLevels(t *testing.T) {
	l := NewLogger("tcp")
	for _, tc := range []struct {
		env  string
		want []string // levels that log, libfabric's order
	}{
		{"", []string{"WARN"}},
		{"warn", []string{"WARN"}},
		{"TRACE", []string{"WARN", "TRACE"}},
		{"info", []string{"WARN", "TRACE", "INFO"}},
		{"debug", []string{"WARN", "TRACE", "INFO", "DEBUG"}},
		{"bogus", []string{"WARN"}},
	} {
		rec := &recorder{min: slog.Level(-100)}
		env := map[string]string{}
		if tc.env != "" {
			env[EnvLogLevel] = tc.env
		}
		withEnv(t, env, rec)
		if tc.env == "" {
			// No FI_LOG_LEVEL: the handler's own level decides.
			rec.min = LevelWarn
			SetLogHandler(rec)
		}
		l.Warn(SubsysCore, "w")
		l.Trace(SubsysCore, "t")
		l.Info(SubsysCore, "i")
		l.Debug(SubsysCore, "d")
		var got []string
		for i := 0; i < rec.len(); i++ {
			got = append(got, rec.attrs(i)["level"])
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("FI_LOG_LEVEL=%q: logged %v, want %v", tc.env, got, tc.want)
		}
	}
}

func TestLogHandlerLevelDecidesWithoutEnv(t *testing.T) {
	rec := &recorder{min: LevelInfo}
	withEnv(t, nil, rec)
	l := NewLogger("udp")
	if !l.Enabled(LevelInfo, SubsysAV) || l.Enabled(LevelDebug, SubsysAV) {
		t.Fatal("an info handler without FI_LOG_LEVEL: want info on, debug off")
	}
	// FI_LOG_LEVEL caps a more verbose handler.
	withEnv(t, map[string]string{EnvLogLevel: "warn"}, &recorder{min: LevelDebug})
	if l.Enabled(LevelInfo, SubsysAV) || !l.Enabled(LevelWarn, SubsysAV) {
		t.Fatal("FI_LOG_LEVEL=warn: want info off, warn on")
	}
}

func TestLogAttrsAndSource(t *testing.T) {
	rec := &recorder{min: LevelDebug}
	withEnv(t, map[string]string{EnvLogLevel: "debug"}, rec)
	l := NewLogger("tcp")
	l.Info(SubsysEPCtrl, "connection accepted", slog.String("peer", "127.0.0.1:5"))
	if rec.len() != 1 {
		t.Fatalf("%d records", rec.len())
	}
	m := rec.attrs(0)
	if m["prov"] != "tcp" || m["subsys"] != "ep_ctrl" || m["peer"] != "127.0.0.1:5" || m["msg"] != "connection accepted" {
		t.Fatalf("record %v", m)
	}
	fs := rec.recs[0].Source()
	if fs == nil || !strings.HasSuffix(fs.File, "log_test.go") || !strings.HasSuffix(fs.Function, "TestLogAttrsAndSource") {
		t.Fatalf("source %+v, want this test", fs)
	}
}

func TestLogProvAndSubsysFilters(t *testing.T) {
	tcp, udp, core := NewLogger("tcp"), NewLogger("udp"), NewLogger("core")
	for _, tc := range []struct {
		prov, subsys string
		tcp, udp     bool // ep_ctrl enabled
		core         bool // core enabled
		udpCQ        bool
	}{
		{"", "", true, true, true, true},
		{"tcp", "", true, false, false, false},
		{"^tcp", "", false, true, true, true},
		{"tcp,core", "", true, false, true, false},
		{"", "ep_ctrl", true, true, false, false},
		{"", "^ep_ctrl", false, false, true, true},
		{"udp", "cq,core", false, false, false, true},
	} {
		env := map[string]string{EnvLogLevel: "warn"}
		if tc.prov != "" {
			env[EnvLogProv] = tc.prov
		}
		if tc.subsys != "" {
			env[EnvLogSubsys] = tc.subsys
		}
		withEnv(t, env, &recorder{})
		got := [4]bool{tcp.Enabled(LevelWarn, SubsysEPCtrl), udp.Enabled(LevelWarn, SubsysEPCtrl),
			core.Enabled(LevelWarn, SubsysCore), udp.Enabled(LevelWarn, SubsysCQ)}
		if want := [4]bool{tc.tcp, tc.udp, tc.core, tc.udpCQ}; got != want {
			t.Errorf("FI_LOG_PROV=%q FI_LOG_SUBSYS=%q: tcp ep_ctrl, udp ep_ctrl, core, udp cq = %v, want %v",
				tc.prov, tc.subsys, got, want)
		}
	}
}

func TestLogNilAndZeroLogger(t *testing.T) {
	var l *Logger
	l.Warn(SubsysCore, "nothing")
	var z Logger
	z.Warn(SubsysCore, "nothing")
	if l.Enabled(LevelWarn, SubsysCore) || z.Enabled(LevelWarn, SubsysCore) {
		t.Fatal("nil or zero Logger enabled")
	}
}

func TestLogDefaultHandlerLevelNames(t *testing.T) {
	if a := replaceLevel(nil, slog.Any(slog.LevelKey, LevelTrace)); a.Value.String() != "TRACE" {
		t.Fatalf("trace renders as %q", a.Value.String())
	}
}

// A disabled log call, attributes included, allocates nothing.
func TestLogDisabledAllocs(t *testing.T) {
	withEnv(t, map[string]string{EnvLogLevel: "warn"}, &recorder{min: LevelDebug})
	l := NewLogger("tcp")
	n := 4096
	if a := testing.AllocsPerRun(1000, func() {
		l.Debug(SubsysEPData, "received", slog.Int("len", n), slog.Uint64("tag", 7))
		if l.Enabled(LevelInfo, SubsysEPData) {
			l.Info(SubsysEPData, "never")
		}
	}); a != 0 {
		t.Fatalf("disabled log call: %v allocs/op", a)
	}
}

// BenchmarkLogDisabled is the cost of a log call whose level is off: the
// guard alone, and a call with attributes that checks internally.
func BenchmarkLogDisabled(b *testing.B) {
	logMu.Lock()
	saved := logCfg
	logCfg = parseLogEnv(func(k string) (string, bool) { return "", false })
	applyLogConfigLocked()
	logMu.Unlock()
	defer func() {
		logMu.Lock()
		logCfg = saved
		applyLogConfigLocked()
		logMu.Unlock()
	}()
	l := NewLogger("tcp")
	b.Run("Enabled", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if l.Enabled(LevelDebug, SubsysEPData) {
				l.Debug(SubsysEPData, "received", slog.Int("len", i))
			}
		}
	})
	b.Run("DebugWithAttrs", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			l.Debug(SubsysEPData, "received", slog.Int("len", i), slog.String("peer", "x"))
		}
	})
}
