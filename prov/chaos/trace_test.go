package chaos_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
	"github.com/gofabric/fabric/provider"
)

// record is one captured log record.
type record struct {
	msg   string
	time  time.Time
	level slog.Level
	attrs map[string]string
}

// capture is a slog.Handler keeping the records of provider chaos, enabled
// down to libfabric's trace level.
type capture struct {
	mu   sync.Mutex
	recs []record
}

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= provider.LevelTrace }
func (c *capture) WithAttrs([]slog.Attr) slog.Handler           { return c }
func (c *capture) WithGroup(string) slog.Handler                { return c }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	rec := record{msg: r.Message, time: r.Time, level: r.Level, attrs: map[string]string{"level": r.Level.String()}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	if rec.attrs["prov"] != chaos.Name {
		return nil
	}
	c.mu.Lock()
	c.recs = append(c.recs, rec)
	c.mu.Unlock()
	return nil
}

func (c *capture) matching(msg string, attrs map[string]string) []record {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []record
next:
	for _, r := range c.recs {
		if r.msg != msg {
			continue
		}
		for k, v := range attrs {
			if r.attrs[k] != v {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

func captureLogs(t *testing.T) *capture {
	c := &capture{}
	fabric.SetLogHandler(c)
	t.Cleanup(func() { fabric.SetLogHandler(nil) })
	return c
}

// exchange sends n messages from a to b and reads both CQs until every
// completion has arrived.
func exchange(t *testing.T, a, b *node, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := b.ep.Recv(make([]byte, 16), nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if err := a.ep.Send([]byte("hello"), nil, a.peer, 100+i); err != nil {
			t.Fatal(err)
		}
	}
	if tx := drain(t, a.txcq, n, 5*time.Second); len(tx.ok) != n {
		t.Fatalf("%d send completions, want %d", len(tx.ok), n)
	}
	if rx := drain(t, b.rxcq, n, 5*time.Second); len(rx.ok) != n {
		t.Fatalf("%d receive completions, want %d", len(rx.ok), n)
	}
}

// TestTrace: with Config.Trace every send is logged at trace level as
// fi_send with its endpoint, destination, length, context, result and
// duration, and every completion of both endpoints' CQs as a completion
// record, in time order.
func TestTrace(t *testing.T) {
	c := captureLogs(t)
	_, a, b := pair(t, "udp", fabric.EPDgram, 0, &chaos.Config{Trace: true})
	const n = 5
	exchange(t, a, b, n)
	sends := c.matching("fi_send", map[string]string{"ep": "0", "len": "5", "err": "0", "subsys": "ep_data"})
	if len(sends) != n {
		t.Fatalf("%d fi_send records of ep 0, want %d: %+v", len(sends), n, c.recs)
	}
	for i, r := range sends {
		if r.level != provider.LevelTrace || r.attrs["context"] != itoa(100+i) || r.attrs["dur"] == "" || r.attrs["dest"] != itoa(int(a.peer)) {
			t.Fatalf("fi_send record %d: %+v", i, r)
		}
	}
	for _, ep := range []string{"0", "1"} {
		if got := c.matching("fi_enable", map[string]string{"ep": ep, "err": "0", "subsys": "ep_ctrl"}); len(got) != 1 || got[0].attrs["addr"] == "" {
			t.Fatalf("fi_enable records of ep %s: %+v", ep, got)
		}
	}
	tx := c.matching("completion", map[string]string{"ep": "0", "cq": "tx", "subsys": "cq"})
	rx := c.matching("completion", map[string]string{"ep": "1", "cq": "rx", "len": "5", "subsys": "cq"})
	if len(tx) != n || len(rx) != n {
		t.Fatalf("%d tx and %d rx completion records, want %d each", len(tx), len(rx), n)
	}
	for i := range sends {
		if tx[i].attrs["context"] != itoa(100+i) || rx[i].attrs["context"] != itoa(i) {
			t.Fatalf("completion records %d: %+v %+v", i, tx[i], rx[i])
		}
		// The send is logged when the call returns (a udp send has
		// completed by then): its completion is logged during the call,
		// after the previous send returned.
		if tx[i].time.After(sends[i].time) || i > 0 && tx[i].time.Before(sends[i-1].time) {
			t.Fatalf("completion %d logged at %v, not during its send (which returned at %v)", i, tx[i].time, sends[i].time)
		}
		if _, err := time.ParseDuration(sends[i].attrs["dur"]); err != nil {
			t.Fatalf("dur=%q: %v", sends[i].attrs["dur"], err)
		}
	}
}

// TestTraceOff: without Trace nothing is logged per call.
func TestTraceOff(t *testing.T) {
	c := captureLogs(t)
	_, a, b := pair(t, "udp", fabric.EPDgram, 0, nil)
	exchange(t, a, b, 3)
	if got := len(c.matching("fi_send", nil)) + len(c.matching("completion", nil)); got != 0 {
		t.Fatalf("%d trace records without Trace", got)
	}
}

// TestTraceFromEnv: FI_HOOK=chaos FI_CHAOS_TRACE=1 traces fabrics opened
// through fabric.Open.
func TestTraceFromEnv(t *testing.T) {
	t.Setenv("FI_HOOK", chaos.Name)
	t.Setenv(chaos.EnvTrace, "1")
	c := captureLogs(t)
	a, b := pairEnv(t, "udp", fabric.EPDgram, 0)
	exchange(t, a, b, 2)
	if got := len(c.matching("fi_send", map[string]string{"err": "0"})); got != 2 {
		t.Fatalf("%d fi_send records, want 2", got)
	}
}

func itoa(i int) string { return slog.IntValue(i).String() }

// TestTraceInjected: an injected error completion is traced as such, and
// the call that caused it returned success.
func TestTraceInjected(t *testing.T) {
	c := captureLogs(t)
	_, a, _ := pair(t, "tcp", fabric.EPRDM, 0, &chaos.Config{Trace: true, Error: 1})
	if err := a.ep.Send([]byte("x"), nil, a.peer, 7); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, a.txcq, 1, 5*time.Second); len(got.errs) != 1 {
		t.Fatalf("%+v", got)
	}
	if n := len(c.matching("fi_send", map[string]string{"err": "0", "context": "7"})); n != 1 {
		t.Fatalf("%d fi_send records", n)
	}
	if n := len(c.matching("error completion", map[string]string{"injected": "true", "err": "5", "context": "7", "op": "fi_send"})); n != 1 {
		t.Fatalf("%d injected error completion records: %+v", n, c.recs)
	}
}

type opCtx struct{ n int }

// TestTraceContextNotFormatted: a pointer context is logged as its type
// and address, not formatted (the application may be changing it).
func TestTraceContextNotFormatted(t *testing.T) {
	c := captureLogs(t)
	_, a, _ := pair(t, "tcp", fabric.EPRDM, 0, &chaos.Config{Trace: true, Error: 1})
	if err := a.ep.Send([]byte("x"), nil, a.peer, &opCtx{n: 42}); err != nil {
		t.Fatal(err)
	}
	drain(t, a.txcq, 1, 5*time.Second)
	recs := c.matching("fi_send", nil)
	if len(recs) != 1 || !strings.HasPrefix(recs[0].attrs["context"], "*chaos_test.opCtx(0x") || strings.ContainsAny(recs[0].attrs["context"], "{}:") {
		t.Fatalf("%+v", recs)
	}
}
