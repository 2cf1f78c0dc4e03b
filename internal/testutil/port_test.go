package testutil

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePort: the port is below the ephemeral range and can be listened
// on; a port somebody listens on is not bindable.
func TestFreePort(t *testing.T) {
	p := FreePort(t)
	if lo := ephemeralLow(); lo > 11000 && p >= lo {
		t.Fatalf("port %d is in the ephemeral range (from %d)", p, lo)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatalf("port %d: %v", p, err)
	}
	defer l.Close()
	if bindable(p) {
		t.Fatalf("port %d is listened on, yet bindable", p)
	}
}
