package av

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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

// snapshot is an AV's observable state: every index with its address and
// user id, and the Reverse answer of each address.
func snapshot(a *AV) string {
	var b bytes.Buffer
	a.Foreach(func(idx provider.Addr, addr []byte, user provider.Addr, hasUser bool) {
		fmt.Fprintf(&b, "%d=% x u%v:%v r%v l% x;", idx, addr, user, hasUser, a.Reverse(addr), a.Lookup(idx))
	})
	fmt.Fprintf(&b, "len %d", a.Len())
	return b.String()
}

// TestMirrorAtFollowsLikeMirror: an AV following an owner through
// OnChangeAt, AddrAt and MirrorAt (one address at a time) ends every step
// of a random run of inserts (repeated addresses, user ids) and removals
// in the state of one rebuilt by Mirror from the owner's Foreach, and
// inserts into either take the same index afterwards.
func TestMirrorAtFollowsLikeMirror(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	owner, _ := New(Config{Type: provider.AVTable, Handler: ipv4Handler{}})
	full, _ := New(Config{Type: provider.AVTable, Handler: ipv4Handler{}})
	inc, _ := New(Config{Type: provider.AVTable, Handler: ipv4Handler{}})
	calls := 0
	// follow makes to follow from through OnChangeAt, AddrAt and MirrorAt.
	follow := func(from, to *AV) func() {
		return from.OnChangeAt(func(changed []provider.Addr) {
			calls++
			var set []Entry
			var gone []provider.Addr
			for _, fa := range changed {
				if !from.AddrAt(fa, func(addr []byte, user provider.Addr, hasUser bool) {
					set = append(set, Entry{Index: fa, Addr: addr, User: user, HasUser: hasUser})
				}) {
					gone = append(gone, fa)
				}
			}
			if err := to.MirrorAt(set, gone); err != nil {
				t.Fatal(err)
			}
		})
	}
	defer follow(owner, inc)()
	// Followers of followers (lnx's linked AVs follow its AV, itself an
	// import): changes made by Mirror and MirrorAt are heard too.
	inc2, _ := New(Config{Type: provider.AVTable, Handler: ipv4Handler{}})
	full2, _ := New(Config{Type: provider.AVTable, Handler: ipv4Handler{}})
	defer follow(inc, inc2)()
	defer follow(full, full2)()
	for step := 0; step < 400; step++ {
		if owner.Len() > 0 && rng.IntN(3) == 0 {
			var live []provider.Addr
			owner.Foreach(func(idx provider.Addr, _ []byte, _ provider.Addr, _ bool) { live = append(live, idx) })
			rng.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
			if err := owner.Remove(live[:1+rng.IntN(min(3, len(live)))], 0); err != nil {
				t.Fatal(err)
			}
		} else {
			n := 1 + rng.IntN(3)
			addrs := make([][]byte, n)
			fa := make([]provider.Addr, n)
			for i := range addrs {
				addrs[i] = a6(byte(rng.IntN(40))) // repeats on purpose
				fa[i] = provider.Addr(1000 + rng.IntN(5))
			}
			flags := provider.Flags(0)
			if rng.IntN(4) == 0 {
				flags = provider.FlagAVUserID
			}
			if _, err := owner.Insert(addrs, fa, flags, nil); err != nil {
				t.Fatal(err)
			}
		}
		var ents []Entry
		owner.ForeachAddr(func(fa provider.Addr, addr []byte, user provider.Addr, hasUser bool) {
			ents = append(ents, Entry{Index: fa, Addr: append([]byte(nil), addr...), User: user, HasUser: hasUser})
		})
		if err := full.Mirror(ents); err != nil {
			t.Fatal(err)
		}
		f := snapshot(full)
		if i := snapshot(inc); f != i {
			t.Fatalf("step %d: incremental follower\n%s\nrebuilt\n%s", step, i, f)
		}
		if i2, f2 := snapshot(inc2), snapshot(full2); i2 != f || f2 != f {
			t.Fatalf("step %d: follower of the incremental follower\n%s\nof the rebuilt one\n%s\nwant\n%s", step, i2, f2, f)
		}
	}
	if calls == 0 {
		t.Fatal("OnChangeAt never called")
	}
	fa1, fa2 := make([]provider.Addr, 1), make([]provider.Addr, 1)
	full.Insert([][]byte{a6(200)}, fa1, 0, nil)
	inc.Insert([][]byte{a6(200)}, fa2, 0, nil)
	if fa1[0] != fa2[0] {
		t.Fatalf("next insert: index %v in the incremental follower, %v in the rebuilt one", fa2[0], fa1[0])
	}
}
