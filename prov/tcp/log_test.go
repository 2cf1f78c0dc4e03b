package tcp

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gofabric/fabric/provider"
)

// logRecorder keeps the tcp provider's ep_ctrl records.
type logRecorder struct {
	mu   sync.Mutex
	recs []map[string]string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]string{"msg": rec.Message, "level": provider.LevelName(rec.Level)}
	rec.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	r.mu.Lock()
	r.recs = append(r.recs, m)
	r.mu.Unlock()
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// wait returns the first record with msg, waiting up to waitLimit.
func (r *logRecorder) wait(t *testing.T, msg string) map[string]string {
	t.Helper()
	for end := time.Now().Add(waitLimit); time.Now().Before(end); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		for _, m := range r.recs {
			if m["msg"] == msg {
				r.mu.Unlock()
				return m
			}
		}
		r.mu.Unlock()
	}
	t.Fatalf("no %q record; have %v", msg, r.recs)
	return nil
}

func recordLogs(t *testing.T) *logRecorder {
	t.Helper()
	r := &logRecorder{}
	provider.SetLogHandler(r)
	t.Cleanup(func() { provider.SetLogHandler(nil) })
	if !log.Enabled(provider.LevelInfo, provider.SubsysEPCtrl) {
		t.Fatal("FI_LOG_LEVEL, FI_LOG_PROV or FI_LOG_SUBSYS in the environment turn tcp ep_ctrl info logs off")
	}
	return r
}

// Connection management is logged: connect, request, accept, connected,
// shutdown at info with the peer's address; a malformed request at warn.
func TestLogConnectionEvents(t *testing.T) {
	r := recordLogs(t)
	info := loInfo(t, opts{})
	l := listen(t, info)
	cli, _ := pairWith(t, l, info, opts{}, nil, nil)
	for _, msg := range []string{"connecting", "connection request", "accepted", "connected"} {
		m := r.wait(t, msg)
		if m["prov"] != "tcp" || m["subsys"] != "ep_ctrl" || m["level"] != "INFO" || m["peer"] == "" {
			t.Errorf("%q record %v", msg, m)
		}
	}
	if err := cli.ep.Shutdown(0); err != nil {
		t.Fatal(err)
	}
	r.wait(t, "shutdown")

	c, err := net.Dial("tcp", formatAddrPort(t, l.name))
	if err != nil {
		t.Fatal(err)
	}
	bad := make([]byte, 32)
	bad[0] = 99 // wrong version
	c.Write(bad)
	defer c.Close()
	m := r.wait(t, "dropping a malformed connection request")
	if m["level"] != "WARN" || m["reason"] == "" || m["peer"] == "" {
		t.Errorf("malformed request record %v", m)
	}
}

func formatAddrPort(t *testing.T, name []byte) string {
	t.Helper()
	sa, _, ok := decodeSockaddr(name)
	if !ok {
		t.Fatalf("bad name %x", name)
	}
	return sa.AP.String()
}
