package main

import (
	"strings"
	"testing"
)

// The stall diagnostics write every section (whatever the host lets them
// read) and the IPv4 addresses of /proc/net/tcp decoded.
func TestStallDiagnostics(t *testing.T) {
	var b strings.Builder
	stallDiagnostics(&b, "tcp")
	out := b.String()
	for _, want := range []string{"-- stall diagnostics (tcp)", "tcp rdm: no open endpoint", "-- our TCP sockets",
		"-- user processes under a real-time policy", "-- host counters:", "-- goroutines", "-- end of stall diagnostics"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if got := hexAddr("0100007F:1F90"); got != "127.0.0.1:8080" {
		t.Errorf("hexAddr = %q", got)
	}
}
