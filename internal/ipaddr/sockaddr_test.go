package ipaddr

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/gofabric/fabric/provider"
)

func TestSockaddrLayout(t *testing.T) {
	b := Append(nil, Sockaddr{AP: netip.MustParseAddrPort("192.0.2.1:9228")})
	want := []byte{2, 0, 0x24, 0x0c, 192, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(b, want) {
		t.Fatalf("IPv4: % x, want % x", b, want)
	}
	b = Append(nil, Sockaddr{AP: netip.MustParseAddrPort("[fe80::1]:1"), Scope: 3, Flow: 0x01020304})
	want = []byte{10, 0, 0, 1, 1, 2, 3, 4, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 0}
	if !bytes.Equal(b, want) {
		t.Fatalf("IPv6: % x, want % x", b, want)
	}
	a, f, ok := Decode(b)
	if !ok || f != provider.SockAddrIn6 || a.Scope != 3 || a.Flow != 0x01020304 ||
		a.AP != netip.MustParseAddrPort("[fe80::1]:1") {
		t.Fatalf("decode: %+v %v %v", a, f, ok)
	}
	// IPv4-mapped IPv6 stays IPv6.
	m := Append(nil, Sockaddr{AP: netip.MustParseAddrPort("[::ffff:1.2.3.4]:5")})
	if len(m) != 28 || Format(m) != "fi_sockaddr_in6://[::ffff:1.2.3.4]:5" {
		t.Fatalf("mapped: % x %q", m, Format(m))
	}
}

func TestParseSockaddrString(t *testing.T) {
	for _, c := range []struct {
		in  string
		out string // "" = invalid
	}{
		{"fi_sockaddr_in://127.0.0.1:9228", "fi_sockaddr_in://127.0.0.1:9228"},
		{"fi_sockaddr_in://127.0.0.1", "fi_sockaddr_in://127.0.0.1:0"},
		{"fi_sockaddr_in6://[::1]:7", "fi_sockaddr_in6://[::1]:7"},
		{"fi_sockaddr_in6://[::1]", "fi_sockaddr_in6://[::1]:0"},
		{"fi_sockaddr_in6://::1", ""},
		{"fi_sockaddr_in6://[127.0.0.1]:1", ""},
		{"fi_sockaddr_in://[::1]:1", ""},
		{"fi_sockaddr_in://::1", ""},
		{"fi_sockaddr_in://1.2.3.4:65536", ""},
		{"fi_sockaddr_in://1.2.3.4:-1", ""},
		{"fi_sockaddr_in://1.2.3.4:", ""},
		{"fi_sockaddr_in6://[::1]x", ""},
		{"fi_sockaddr_in6://[fe80::1%eth0]:1", ""},
		{"fi_addr_str://x", ""},
		{"", ""},
	} {
		b, ok := Parse(c.in)
		if ok != (c.out != "") || (ok && Format(b) != c.out) {
			t.Errorf("parse(%q) = %q, %v; want %q", c.in, Format(b), ok, c.out)
		}
	}
}

// FuzzSockaddr drives the Sockaddr decoder and the string parser with
// arbitrary input: no panics, and whatever decodes re-encodes to a form
// that decodes to the same address, and prints to a string that parses back.
func FuzzSockaddr(f *testing.F) {
	f.Add(Append(nil, Sockaddr{AP: netip.MustParseAddrPort("127.0.0.1:9228")}), "fi_sockaddr_in://127.0.0.1:9228")
	f.Add(Append(nil, Sockaddr{AP: netip.MustParseAddrPort("[::1]:7"), Scope: 1, Flow: 9}),
		"fi_sockaddr_in6://[::1]:7")
	f.Add([]byte{2, 0}, "fi_sockaddr_in://")
	f.Add([]byte{10, 0, 1}, "fi_sockaddr_in6://[")
	f.Add([]byte{}, "")
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		a, fmt, ok := Decode(b)
		if ok {
			if (fmt == provider.SockAddrIn) != (len(b) == 16) || (fmt == provider.SockAddrIn6) != (len(b) == 28) {
				t.Fatalf("format %v for %d bytes", fmt, len(b))
			}
			re := Append(nil, a)
			a2, fmt2, ok2 := Decode(re)
			if !ok2 || a2 != a || fmt2 != fmt {
				t.Fatalf("re-encode: %+v -> %+v", a, a2)
			}
			if fmt == provider.SockAddrIn && !bytes.Equal(re[:8], b[:8]) {
				t.Fatalf("IPv4 prefix changed: % x -> % x", b, re)
			}
			if fmt == provider.SockAddrIn6 && !bytes.Equal(re, b) {
				t.Fatalf("IPv6 bytes changed: % x -> % x", b, re)
			}
			str := Format(b)
			p, ok3 := Parse(str)
			if !ok3 {
				t.Fatalf("%q does not parse", str)
			}
			a3, _, _ := Decode(p)
			if a3.AP != a.AP {
				t.Fatalf("string round trip %v -> %q -> %v", a.AP, str, a3.AP)
			}
		} else if Format(b) != "" {
			t.Fatal("invalid bytes format to a string")
		}
		if p, ok := Parse(s); ok {
			if _, _, ok := Decode(p); !ok {
				t.Fatalf("parse(%q) gave undecodable % x", s, p)
			}
			p2, ok := Parse(Format(p))
			if !ok || !bytes.Equal(p, p2) {
				t.Fatalf("parse/format/parse of %q: % x vs % x", s, p, p2)
			}
		}
		_ = SameIP(b, b)
		_ = WithPort(b, 1)
	})
}

// DefaultSource routes towards the destination when there is one, and
// otherwise takes the first listed address of the interface in the
// requested format (nil when none has it); the port is always 0.
func TestDefaultSource(t *testing.T) {
	want := Append(nil, Sockaddr{AP: netip.MustParseAddrPort("127.0.0.1:0")})
	dest := Append(nil, Sockaddr{AP: netip.MustParseAddrPort("127.0.0.1:9228")})
	if got := DefaultSource(&provider.Info{DestAddr: dest}, "nosuchiface0"); !bytes.Equal(got, want) {
		t.Errorf("towards 127.0.0.1:9228: %s, want %s", Format(got), Format(want))
	}
	if got := DefaultSource(&provider.Info{AddrFormat: provider.SockAddrIn}, "lo"); !bytes.Equal(got, want) {
		t.Errorf("on lo: %s, want %s", Format(got), Format(want))
	}
	if got := DefaultSource(&provider.Info{AddrFormat: provider.AddrStr}, ""); got != nil {
		t.Errorf("in FI_ADDR_STR: %s, want nil (no interface address has that format)", Format(got))
	}
}
