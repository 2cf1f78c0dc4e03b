package sim

import (
	"bytes"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// FuzzParseName: the name parser never panics, accepts exactly the names
// appendName makes (with or without the NUL), and round-trips them;
// ValidAddr and AddrString agree with it.
func FuzzParseName(f *testing.F) {
	f.Add(appendName(nil, 0x0123456789abcdef))
	f.Add([]byte("fi_sim://00000000000000ff"))
	f.Add([]byte("fi_sim://0000000000000000\x00"))
	f.Add([]byte("fi_sim://0123456789ABCDEF\x00"))
	f.Add([]byte("fi_sim://12"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, ok := parseName(b)
		valid := simProvider{}.ValidAddr(provider.AddrStr, b)
		if !ok {
			if valid {
				t.Fatalf("%q valid but not parsed", b)
			}
			return
		}
		canon := appendName(nil, id)
		if !bytes.Equal(b, canon) && !bytes.Equal(b, canon[:nameLen]) {
			t.Fatalf("%q parsed as %#x, which prints as %q", b, id, canon)
		}
		if valid != (id != 0) {
			t.Fatalf("%q: valid %v", b, valid)
		}
		if s := (simProvider{}).AddrString(provider.AddrStr, b); s != string(canon[:nameLen]) {
			t.Fatalf("AddrString(%q) = %q", b, s)
		}
		if back, ok := ID(NameOf(id)); !ok || back != id {
			t.Fatalf("ID(NameOf(%#x)) = %#x, %v", id, back, ok)
		}
	})
}
