package shm

import (
	"bytes"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// FuzzParseName: the name parser never panics, accepts exactly the names
// appendName makes (with or without the NUL, or bare file names, which
// only node/service resolution takes), and round-trips them.
func FuzzParseName(f *testing.F) {
	f.Add(appendName(nil, 0x0123456789abcdef))
	f.Add([]byte("fi_shm://gofabric-shm-00000000000000ff"))
	f.Add([]byte("gofabric-shm-ffffffffffffffff"))
	f.Add([]byte("fi_shm://gofabric-shm-0123456789ABCDEF\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, ok := parseName(b)
		valid := shmProvider{}.ValidAddr(provider.AddrStr, b)
		if !ok {
			if valid {
				t.Fatalf("%q valid but not parsed", b)
			}
			return
		}
		canon := appendName(nil, id)
		bare := canon[len(namePrefix):]
		if !bytes.Equal(b, canon) && !bytes.Equal(b, canon[:nameLen]) && !bytes.Equal(b, bare) &&
			!bytes.Equal(b, bare[:len(bare)-1]) {
			t.Fatalf("%q parsed as %#x, which prints as %q", b, id, canon)
		}
		if valid != (id != 0 && len(b) >= nameLen) {
			t.Fatalf("%q: valid %v", b, valid)
		}
		if s := (shmProvider{}).AddrString(provider.AddrStr, b); s != string(canon[:nameLen]) {
			t.Fatalf("AddrString(%q) = %q", b, s)
		}
	})
}
