package sepctx

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gofabric/fabric/internal/av"
	"github.com/gofabric/fabric/provider"
)

// deriveTest appends "/idx" to the base address.
func deriveTest(base []byte, idx int) []byte {
	if idx > 5 {
		return nil
	}
	return fmt.Appendf(append([]byte(nil), base...), "/%d", idx)
}

func newAV(t *testing.T, bits int, addrs ...string) (*av.AV, []provider.Addr) {
	t.Helper()
	a, err := av.New(av.Config{RxCtxBits: bits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	var bs [][]byte
	for _, s := range addrs {
		bs = append(bs, []byte(s))
	}
	fa := make([]provider.Addr, len(addrs))
	if n, err := a.Insert(bs, fa, 0, nil); err != nil || n != len(addrs) {
		t.Fatalf("insert: %d %v", n, err)
	}
	return a, fa
}

func rxAddr(a provider.Addr, idx, bits int) provider.Addr {
	return provider.Addr(uint64(idx)<<(64-uint(bits))) | a
}

func TestTxAVResolvesReceiveContexts(t *testing.T) {
	inner, fa := newAV(t, 3, "p0", "p1")
	x := NewTxAV(inner, deriveTest)
	for _, c := range []struct {
		addr provider.Addr
		want string
	}{
		{fa[0], "p0"}, {fa[1], "p1"},
		{rxAddr(fa[1], 0, 3), "p1"}, {rxAddr(fa[1], 2, 3), "p1/2"}, {rxAddr(fa[0], 5, 3), "p0/5"},
	} {
		v := x.Virt(c.addr)
		if got := x.Lookup(v); string(got) != c.want {
			t.Errorf("Lookup(Virt(%#x)) = %q, want %q", uint64(c.addr), got, c.want)
		}
		// Cached the second time, the same bytes.
		if got := x.Lookup(v); string(got) != c.want {
			t.Errorf("second Lookup = %q", got)
		}
	}
	// No receive context for the index, or no address: nil.
	if got := x.Lookup(x.Virt(rxAddr(fa[0], 6, 3))); got != nil {
		t.Errorf("index without an address: %q", got)
	}
	if got := x.Lookup(x.Virt(rxAddr(7, 1, 3))); got != nil {
		t.Errorf("unknown fi_addr: %q", got)
	}
	if got := x.Lookup(x.Virt(provider.AddrNotAvail)); got != nil {
		t.Errorf("FI_ADDR_NOTAVAIL: %q", got)
	}
	// Distinct receive contexts of distinct peers are distinct virtual
	// addresses, and dense.
	seen := map[provider.Addr]bool{}
	for _, a := range fa {
		for i := 0; i < 8; i++ {
			v := x.Virt(rxAddr(a, i, 3))
			if seen[v] || v >= 16 {
				t.Fatalf("virtual address %d of (%d, %d)", v, a, i)
			}
			seen[v] = true
		}
	}
	// Reverse answers the virtual address of receive context 0.
	if r := x.Reverse([]byte("p1")); r != x.Virt(fa[1]) {
		t.Errorf("Reverse = %d, want %d", r, x.Virt(fa[1]))
	}
}

func TestTxAVEntryReplaced(t *testing.T) {
	inner, fa := newAV(t, 2, "old")
	x := NewTxAV(inner, deriveTest)
	v := x.Virt(rxAddr(fa[0], 1, 2))
	if got := x.Lookup(v); string(got) != "old/1" {
		t.Fatalf("%q", got)
	}
	if err := inner.Remove(fa[:1], 0); err != nil {
		t.Fatal(err)
	}
	if got := x.Lookup(v); got != nil {
		t.Fatalf("removed entry still resolves: %q", got)
	}
	if n, err := inner.Insert([][]byte{[]byte("new")}, fa, 0, nil); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if got := x.Lookup(x.Virt(rxAddr(fa[0], 1, 2))); !bytes.Equal(got, []byte("new/1")) {
		t.Fatalf("reused index resolves to %q, want the new address's context", got)
	}
}

func TestTxAVWithoutBits(t *testing.T) {
	inner, fa := newAV(t, 0, "p0")
	x := NewTxAV(inner, deriveTest)
	if v := x.Virt(fa[0]); v != fa[0] || string(x.Lookup(v)) != "p0" {
		t.Fatalf("without rx_ctx_bits the address passes through: %d %q", v, x.Lookup(v))
	}
}

func TestTxAVLookupAllocs(t *testing.T) {
	inner, fa := newAV(t, 3, "p0")
	x := NewTxAV(inner, deriveTest)
	v := x.Virt(rxAddr(fa[0], 3, 3))
	x.Lookup(v)
	if n := testing.AllocsPerRun(100, func() { x.Lookup(x.Virt(rxAddr(fa[0], 3, 3))) }); n != 0 {
		t.Fatalf("Lookup of a cached receive context: %v allocs", n)
	}
}

func TestNamedAV(t *testing.T) {
	plain, _ := newAV(t, 0, "p0")
	if v := NewNamedAV(plain, deriveTest); v != provider.AVView(plain) {
		t.Fatal("without rx_ctx_bits the AV itself is the view")
	}
	inner, fa := newAV(t, 3, "p0", "p1")
	v := NewNamedAV(inner, deriveTest)
	for _, c := range []struct {
		addr provider.Addr
		want string
	}{{fa[1], "p1"}, {rxAddr(fa[1], 0, 3), "p1"}, {rxAddr(fa[1], 4, 3), "p1/4"}, {rxAddr(fa[0], 2, 3), "p0/2"}} {
		for k := 0; k < 2; k++ { // the second time from the cache
			if got := v.Lookup(c.addr); string(got) != c.want {
				t.Errorf("Lookup(%#x) = %q, want %q", uint64(c.addr), got, c.want)
			}
		}
	}
	if got := v.Lookup(rxAddr(fa[0], 7, 3)); got != nil {
		t.Errorf("index without an address: %q", got)
	}
	if got := v.Lookup(provider.AddrNotAvail); got != nil {
		t.Errorf("FI_ADDR_NOTAVAIL: %q", got)
	}
	if r := v.Reverse([]byte("p1")); r != fa[1] {
		t.Errorf("Reverse = %d, want %d", r, fa[1])
	}
	if n := testing.AllocsPerRun(100, func() { v.Lookup(rxAddr(fa[0], 2, 3)) }); n != 0 {
		t.Errorf("cached Lookup allocates %v", n)
	}
}
