package tcp

import (
	"net/netip"
	"os"
	"testing"

	"github.com/gofabric/fabric/internal/sys"
)

// systemCC is the kernel's default congestion control.
func systemCC(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
	if err != nil {
		t.Skipf("no default congestion control to compare with: %v", err)
	}
	return string(b[:len(b)-1])
}

func ccOf(t *testing.T, s *sys.Conn) string {
	t.Helper()
	cc, err := sys.TCPCongestion(s)
	if err != nil {
		t.Fatalf("TCP_CONGESTION: %v", err)
	}
	return cc
}

// TestLoopbackCCChoice: setLoopbackCC sets the algorithm on a socket to a
// loopback peer (IPv4, IPv6, IPv4-mapped) and leaves it alone otherwise,
// with no algorithm named, or with one the kernel refuses.
func TestLoopbackCCChoice(t *testing.T) {
	def := systemCC(t)
	if def == loopbackCC {
		t.Skipf("the system's default is already %s: nothing would change", loopbackCC)
	}
	sa := func(s string) []byte {
		return appendSockaddr(nil, sockaddr{AP: netip.AddrPortFrom(netip.MustParseAddr(s), 9)})
	}
	cases := []struct {
		peer []byte
		cc   string
		want string
	}{
		{sa("127.0.0.1"), loopbackCC, loopbackCC},
		{sa("127.3.2.1"), loopbackCC, loopbackCC},
		{sa("::1"), loopbackCC, loopbackCC},
		{sa("::ffff:127.0.0.1"), loopbackCC, loopbackCC},
		{sa("10.77.0.2"), loopbackCC, def},
		{sa("fd00::2"), loopbackCC, def},
		{sa("127.0.0.1"), "", def},
		{sa("127.0.0.1"), "no-such-algorithm", def},
		{[]byte{1, 2, 3}, loopbackCC, def},
	}
	for _, tc := range cases {
		s, err := sys.TCPSocket(sa("127.0.0.1"), false)
		if len(tc.peer) > 3 {
			if a, _, ok := decodeSockaddr(tc.peer); ok && a.AP.Addr().Is6() && !a.AP.Addr().Is4In6() {
				s.Close()
				s, err = sys.TCPSocket(tc.peer, false)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		setLoopbackCC(s, tc.peer, tc.cc)
		if got := ccOf(t, s); got != tc.want {
			t.Errorf("peer %s, cc %q: %s, want %s", formatSockaddr(tc.peer), tc.cc, got, tc.want)
		}
		s.Close()
	}
}

// TestLoopbackCCConnections: both sockets of a loopback RDM connection
// carry the loopback algorithm, and with FI_TCP_LOOPBACK_CC empty the
// system's default; the messages go through either way.
func TestLoopbackCCConnections(t *testing.T) {
	def := systemCC(t)
	for _, tc := range []struct {
		name string
		env  *string
		want string
	}{
		{"default", nil, loopbackCC},
		{"empty", new(string), def},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != nil {
				if def == loopbackCC {
					t.Skipf("the system's default is already %s: the two cases would not differ", loopbackCC)
				}
				t.Setenv(envLoopCC, *tc.env)
			}
			a, b := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
			ab := a.mustInsert(t, b.name)
			buf := make([]byte, 8)
			if err := b.recv(buf, false, 0, 0, 1); err != nil {
				t.Fatal(err)
			}
			if err := a.send(ab, []byte("loopback"), false, 0, 2); err != nil {
				t.Fatal(err)
			}
			waitComps(t, b.rx, 1, waitLimit, a)
			waitComps(t, a.tx, 1, waitLimit, b)
			for _, n := range []*fltNode{a, b} {
				n.ep.mu.Lock()
				var socks []*sys.Conn
				for _, c := range n.ep.conns {
					if c != nil && c.sock != nil {
						socks = append(socks, c.sock)
					}
				}
				n.ep.mu.Unlock()
				if len(socks) != 1 {
					t.Fatalf("%d connections, want 1", len(socks))
				}
				if got := ccOf(t, socks[0]); got != tc.want {
					t.Errorf("congestion control %s, want %s", got, tc.want)
				}
			}
		})
	}
}

// TestLoopbackCCMsg: both ends of a loopback FI_EP_MSG connection carry
// the loopback algorithm.
func TestLoopbackCCMsg(t *testing.T) {
	systemCC(t)
	cli, srv := pair(t, opts{})
	for _, n := range []*node{cli, srv} {
		n.ep.mu.Lock()
		s := n.ep.conn
		n.ep.mu.Unlock()
		if got := ccOf(t, s); got != loopbackCC {
			t.Errorf("congestion control %s, want %s", got, loopbackCC)
		}
	}
}
