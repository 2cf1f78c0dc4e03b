package fabric

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// logRecorder is a slog.Handler keeping records as attribute maps.
type logRecorder struct {
	mu   sync.Mutex
	min  slog.Level
	recs []map[string]string
}

func (r *logRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.min }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]string{"msg": rec.Message, "level": rec.Level.String()}
	rec.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	r.mu.Lock()
	r.recs = append(r.recs, m)
	r.mu.Unlock()
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

func (r *logRecorder) find(match map[string]string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
next:
	for _, m := range r.recs {
		for k, v := range match {
			if m[k] != v {
				continue next
			}
		}
		return true
	}
	return false
}

// logCapture installs a recorder at min (FI_LOG_LEVEL unset in tests, so
// the handler's level decides) until the test ends.
func logCapture(t *testing.T, min slog.Level) *logRecorder {
	t.Helper()
	r := &logRecorder{min: min}
	SetLogHandler(r)
	t.Cleanup(func() { SetLogHandler(nil) })
	return r
}

// GetInfo that matches nothing says why, per provider, and logs each
// rejection at info (fi_getinfo with FI_LOG_LEVEL=info).
func TestGetInfoNoMatchSaysWhy(t *testing.T) {
	infoIsolate(t)
	rec := logCapture(t, slog.LevelInfo)
	h := AllocInfo()
	h.EPAttr.Type = EPDgram
	infos, err := GetInfo(infoV, "", "", 0, h)
	infoWantNoData(t, infos, err)
	msg := err.Error()
	for _, want := range []string{
		"fi_getinfo: no provider matches: ",
		infoFakeA + ": ep_attr.type: FI_EP_DGRAM not supported (provider: FI_EP_",
		infoFakeB + ": ep_attr.type: FI_EP_DGRAM not supported (provider: FI_EP_RDM)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if !rec.find(map[string]string{"prov": infoFakeB, "subsys": "core", "field": "ep_attr.type", "level": "INFO"}) {
		t.Errorf("no info record for the rejected ep_attr.type: %v", rec.recs)
	}

	// Capabilities: the missing ones are named.
	h = AllocInfo()
	h.Caps = CapMsg | CapCollective
	_, err = GetInfo(infoV, "", "", 0, h)
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "caps: FI_COLLECTIVE not supported") {
		t.Errorf("caps: %v", err)
	}

	// FI_PROVIDER excluding everything, and a provider name nobody has.
	t.Setenv("FI_PROVIDER", "^"+infoFakeA+","+infoFakeB)
	h = AllocInfo()
	h.FabricAttr.ProvName = infoFakeA
	_, err = GetInfo(infoV, "", "", 0, h)
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), infoFakeA+": excluded by FI_PROVIDER") {
		t.Errorf("excluded: %v", err)
	}
	h.FabricAttr.ProvName = "nosuchprov"
	_, err = GetInfo(infoV, "", "", 0, h)
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), `no provider named "nosuchprov"`) {
		t.Errorf("unknown name: %v", err)
	}
}

// Below the handler's level nothing is recorded and GetInfo still explains.
func TestGetInfoNoMatchQuietAtWarn(t *testing.T) {
	infoIsolate(t)
	rec := logCapture(t, slog.LevelWarn)
	h := AllocInfo()
	h.EPAttr.Type = EPDgram
	if _, err := GetInfo(infoV, "", "", 0, h); !errors.Is(err, ErrNoData) {
		t.Fatal(err)
	}
	if len(rec.recs) != 0 {
		t.Fatalf("records at warn: %v", rec.recs)
	}
}
