package provider

import "testing"

func TestMRRegionContains(t *testing.T) {
	a := make([]byte, 64)
	b := make([]byte, 32)
	r := NewMRRegion(7, FlagSend, 0, [][]byte{a[:32], nil, b}, "owner")
	if r.Key() != 7 || r.Access() != FlagSend || r.Registration() != "owner" || len(r.Segments()) != 2 {
		t.Fatalf("region %+v", r)
	}
	for _, c := range []struct {
		name string
		buf  []byte
		want bool
	}{
		{"first segment", a[:32], true},
		{"inside first", a[4:12], true},
		{"end of first", a[31:32], true},
		{"past first segment", a[30:34], false},
		{"after first segment", a[32:40], false},
		{"second segment", b, true},
		{"tail of second", b[31:], true},
		{"unrelated", make([]byte, 4), false},
		{"empty", nil, true},
	} {
		if got := r.Contains(c.buf); got != c.want {
			t.Errorf("%s: Contains = %v, want %v", c.name, got, c.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { r.Contains(b[3:9]) }); n != 0 {
		t.Errorf("Contains: %v allocs, want 0", n)
	}
}

func TestAtomicKindAllows(t *testing.T) {
	for op := AtomicMin; int(op) < AtomicOpLast; op++ {
		base := op <= AtomicBXor || op == AtomicWrite
		fetch := op <= AtomicWrite
		compare := op >= AtomicCSwap
		if AtomicBase.Allows(op) != base || AtomicFetch.Allows(op) != fetch || AtomicCompare.Allows(op) != compare {
			t.Errorf("%v: allows base %v fetch %v compare %v", op, AtomicBase.Allows(op), AtomicFetch.Allows(op),
				AtomicCompare.Allows(op))
		}
	}
	if AtomicKind(3).Allows(AtomicSum) {
		t.Error("an unknown family allows nothing")
	}
}
