package main

import (
	"strings"
	"testing"
)

// TestLNX: fi_info knows lnx: -p lnx lists its RDM configuration over
// shm+tcp, -e lists its variables, and an unsupported FI_LNX_PROV_LINKS
// matches nothing.
func TestLNX(t *testing.T) {
	t.Setenv("FI_TCP_IFACE", "lo")
	stdout, stderr, code := runIn(t, "-p", "lnx")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "provider: lnx\n    fabric: lnx\n    domain: shm+tcp\n") ||
		!strings.Contains(stdout, "type: FI_EP_RDM\n") {
		t.Fatalf("-p lnx: code %d stderr %q\n%s", code, stderr, stdout)
	}
	stdout, _, code = runIn(t, "-p", "lnx", "-v")
	if code != 0 || !strings.Contains(stdout, "FI_TAGGED") || !strings.Contains(stdout, "FI_ADDR_STR") {
		t.Fatalf("-p lnx -v: code %d\n%s", code, stdout)
	}
	if stdout, _, _ := runIn(t, "-e", "-p", "lnx"); !strings.Contains(stdout, "# FI_LNX_PROV_LINKS: String\n") {
		t.Fatalf("-e lacks FI_LNX_PROV_LINKS:\n%s", stdout)
	}
	t.Setenv("FI_LNX_PROV_LINKS", "shm+udp")
	if _, stderr, code := runIn(t, "-p", "lnx"); code != 61 {
		t.Fatalf("FI_LNX_PROV_LINKS=shm+udp: code %d stderr %q; want 61", code, stderr)
	}
}
