package av

import (
	"bytes"
	"testing"

	"github.com/gofabric/fabric/provider"
)

func a6(last byte) []byte { return []byte{10, 0, 0, 1, 0, last} }

// Mirror sets each address at its own index: holes are unused (and taken
// by the next insert), user ids are kept, invalid addresses, repeated
// indices and indices beyond the receive context bits are left out;
// Foreach lists the result in order, and OnChange listeners hear inserts
// and removals but not a failed removal.
func TestMirrorForeachOnChange(t *testing.T) {
	a, err := New(Config{Type: provider.AVTable, Handler: ipv4Handler{}, RxCtxBits: 4})
	if err != nil {
		t.Fatal(err)
	}
	changes := 0
	cancel := a.OnChange(func() { changes++ })
	err = a.Mirror([]Entry{
		{Index: 3, Addr: a6(3), User: 77, HasUser: true},
		{Index: 1, Addr: a6(1)},
		{Index: 1, Addr: a6(9)},           // repeated index
		{Index: 5, Addr: make([]byte, 6)}, // invalid address
		{Index: 1 << 62, Addr: a6(4)},     // beyond the rx ctx bits
	})
	if err != nil {
		t.Fatal(err)
	}
	if changes != 1 {
		t.Fatalf("OnChange after Mirror: %d calls", changes)
	}
	var got []provider.Addr
	a.Foreach(func(idx provider.Addr, addr []byte, user provider.Addr, hasUser bool) {
		got = append(got, idx)
		if idx == 3 && (!hasUser || user != 77 || !bytes.Equal(addr, a6(3))) {
			t.Errorf("slot 3 = % x, user %v %v", addr, user, hasUser)
		}
	})
	if len(got) != 2 || got[0] != 1 || got[1] != 3 || a.Len() != 2 {
		t.Fatalf("Foreach = %v, Len %d; want [1 3], 2", got, a.Len())
	}
	if !bytes.Equal(a.Lookup(1), a6(1)) || a.Lookup(0) != nil || a.Lookup(5) != nil {
		t.Fatalf("lookups: % x % x % x", a.Lookup(1), a.Lookup(0), a.Lookup(5))
	}
	if r := a.Reverse(a6(3)); r != 77 {
		t.Fatalf("Reverse gives %v; want the user id 77", r)
	}
	fa := make([]provider.Addr, 1)
	if n, err := a.Insert([][]byte{a6(7)}, fa, 0, nil); n != 1 || err != nil || fa[0] != 0 {
		t.Fatalf("insert after Mirror = %d, %v, %v; want the hole 0", n, err, fa[0])
	}
	if err := a.Remove([]provider.Addr{9}, 0); err == nil {
		t.Fatal("removal of an unused index succeeded")
	}
	if err := a.Remove([]provider.Addr{1}, 0); err != nil {
		t.Fatal(err)
	}
	if changes != 3 {
		t.Fatalf("OnChange after Mirror, insert, failed and good removal: %d calls; want 3", changes)
	}
	cancel()
	if err := a.Mirror(nil); err != nil || a.Len() != 0 || a.Lookup(3) != nil {
		t.Fatalf("empty Mirror: %v, Len %d", err, a.Len())
	}
	if changes != 3 {
		t.Fatal("a cancelled listener was called")
	}
	a.Close()
	if err := a.Mirror(nil); err != provider.EBADF {
		t.Fatalf("Mirror after Close = %v; want EBADF", err)
	}
}
