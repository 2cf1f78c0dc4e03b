package testutil

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// FreePort returns a TCP port of the loopback addresses that nobody binds
// now, below the kernel's ephemeral range (net.ipv4.ip_local_port_range).
// A port there is taken only by an explicit bind: a port the kernel hands
// out for port 0 (another test's listener, any connection's local end)
// could be taken again between this call and the bind of the process the
// test starts, which then fails with "Address already in use", or finds
// someone else listening there.
func FreePort(t testing.TB) int {
	t.Helper()
	lo := ephemeralLow()
	const base = 10000
	if lo > base+1000 {
		for range 100 {
			p := base + rand.IntN(lo-base)
			if bindable(p) {
				return p
			}
		}
	}
	// No room below the ephemeral range: a port the kernel picks.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ephemeralLow returns the first port of the ephemeral range (32768, the
// kernel's default, if it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				return v
			}
		}
	}
	return 32768
}

// bindable reports whether TCP and UDP port p can be bound on 127.0.0.1,
// and on ::1 where this host has IPv6.
func bindable(p int) bool {
	for _, a := range []string{"127.0.0.1", "::1"} {
		addr := net.JoinHostPort(a, strconv.Itoa(p))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if a == "::1" && !errors.Is(err, syscall.EADDRINUSE) {
				continue // no IPv6 here
			}
			return false
		}
		l.Close()
		c, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}
