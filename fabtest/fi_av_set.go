package fabtest

import (
	"errors"
	"slices"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// avSetCases lists the fi_av_set(3) behaviours, in the order they run.
var avSetCases = []testCase{
	{"fi_av_set/open_empty_range_stride_universe", avSetOpenRangeStrideUniverse},
	{"fi_av_set/open_attr_errors", avSetOpenAttrErrors},
	{"fi_av_set/union_intersect_diff_keep_order", avSetUnionIntersectDiff},
	{"fi_av_set/insert_remove", avSetInsertRemove},
	{"fi_av_set/addr_stable_distinct_local", avSetAddr},
	{"fi_av_set/members_ETOOSMALL", avSetMembersTooSmall},
	{"fi_av_set/close_av_EBUSY_then_closed", avSetClose},
}

// avSetEnv opens an env whose AV (a table) holds n fi_addrs, 0..n-1, all
// the env's own address (an AV takes an address more than once).
func avSetEnv(t *testing.T, tg Target, n int) *env {
	t.Helper()
	connectionless(t, tg)
	e := tg.open(t, envOpts{})
	if e.av.Attr().Type != fabric.AVTable {
		t.Fatalf("the env's AV is %v; the AV set cases need a table", e.av.Attr().Type)
	}
	for i := 0; i < n; i++ {
		if got := e.insert(e.addr); got != fabric.Addr(i) {
			t.Fatalf("insert %d gave fi_addr %v", i, got)
		}
	}
	return e
}

// openSet opens an AV set, closed at cleanup.
func openSet(t *testing.T, av *fabric.AV, attr *fabric.AVSetAttr) *fabric.AVSet {
	t.Helper()
	s, err := av.OpenSet(attr)
	if err != nil {
		t.Fatalf("fi_av_set(%+v): %v", attr, err)
	}
	t.Cleanup(func() { closeOK(t, "av set", s.Close()) })
	return s
}

// wantMembers checks the members of s, in order.
func wantMembers(t *testing.T, what string, s *fabric.AVSet, want ...fabric.Addr) {
	t.Helper()
	got := make([]fabric.Addr, 16)
	n, err := s.Members(got)
	if err != nil || !slices.Equal(got[:n], want) || s.Len() != len(want) {
		t.Fatalf("%s: members %v (%v), len %d; want %v", what, got[:n], err, s.Len(), want)
	}
}

// avSetOpenRangeStrideUniverse: fi_av_set's initial members: none (nil,
// the zero attr, FI_ADDR_NOTAVAIL bounds), a start..end range with a
// stride (addresses not in the AV left out), every address
// (FI_UNIVERSE).
func avSetOpenRangeStrideUniverse(t *testing.T, tg Target) {
	e := avSetEnv(t, tg, 6)
	wantMembers(t, "nil attr", openSet(t, e.av, nil))
	wantMembers(t, "zero attr", openSet(t, e.av, &fabric.AVSetAttr{}))
	wantMembers(t, "FI_ADDR_NOTAVAIL bounds", openSet(t, e.av,
		&fabric.AVSetAttr{StartAddr: fabric.AddrNotAvail, EndAddr: fabric.AddrNotAvail, Count: 4}))
	wantMembers(t, "1..5 stride 2", openSet(t, e.av, &fabric.AVSetAttr{StartAddr: 1, EndAddr: 5, Stride: 2, Count: 3}), 1, 3, 5)
	wantMembers(t, "0..5 stride 1", openSet(t, e.av, &fabric.AVSetAttr{StartAddr: 0, EndAddr: 5, Stride: 1}), 0, 1, 2, 3, 4, 5)
	wantMembers(t, "universe", openSet(t, e.av, &fabric.AVSetAttr{Flags: fabric.FlagUniverse}), 0, 1, 2, 3, 4, 5)
	if err := e.av.Remove([]fabric.Addr{3}, 0); err != nil {
		t.Fatal(err)
	}
	wantMembers(t, "range over a removed address", openSet(t, e.av, &fabric.AVSetAttr{StartAddr: 2, EndAddr: 9, Stride: 1}), 2, 4, 5)
	wantMembers(t, "universe after a removal", openSet(t, e.av, &fabric.AVSetAttr{Flags: fabric.FlagUniverse}), 0, 1, 2, 4, 5)
}

// avSetOpenAttrErrors: the attribute errors of fi_av_set(3).
func avSetOpenAttrErrors(t *testing.T, tg Target) {
	e := avSetEnv(t, tg, 4)
	for _, c := range []struct {
		name string
		attr fabric.AVSetAttr
		want error
	}{
		{"more addresses in the range than count", fabric.AVSetAttr{StartAddr: 0, EndAddr: 3, Stride: 1, Count: 3}, fabric.ErrInval},
		{"a range with stride 0", fabric.AVSetAttr{StartAddr: 1, EndAddr: 3}, fabric.ErrInval},
		{"end before start", fabric.AVSetAttr{StartAddr: 3, EndAddr: 1, Stride: 1}, fabric.ErrInval},
		{"FI_ADDR_NOTAVAIL end with a stride", fabric.AVSetAttr{StartAddr: 0, EndAddr: fabric.AddrNotAvail, Stride: 1}, fabric.ErrInval},
		{"a range with a communication key", fabric.AVSetAttr{StartAddr: 0, EndAddr: 1, Stride: 1, CommKey: []byte{1}}, fabric.ErrInval},
		{"a range with FI_UNIVERSE", fabric.AVSetAttr{StartAddr: 0, EndAddr: 1, Stride: 1, Flags: fabric.FlagUniverse}, fabric.ErrInval},
		{"a communication key", fabric.AVSetAttr{StartAddr: fabric.AddrNotAvail, EndAddr: fabric.AddrNotAvail, CommKey: []byte{1, 2}}, fabric.ErrNoSys},
		{"an unsupported collective (FI_BARRIER_SET)", fabric.AVSetAttr{Flags: fabric.FlagBarrierSet}, fabric.ErrOpNotSupp},
		{"an unsupported collective (FI_ALLREDUCE_SET)", fabric.AVSetAttr{Flags: fabric.FlagAllreduceSet | fabric.FlagUniverse}, fabric.ErrOpNotSupp},
		{"an unknown flag", fabric.AVSetAttr{Flags: fabric.FlagSend}, fabric.ErrBadFlags},
	} {
		s, err := e.av.OpenSet(&c.attr)
		if !errors.Is(err, c.want) || s != nil {
			t.Errorf("%s: fi_av_set = %v, %v; want %v", c.name, s, err, c.want)
		}
	}
	m, err := e.dom.OpenAV(&fabric.AVAttr{Type: fabric.AVMap})
	if err != nil {
		t.Fatalf("open an FI_AV_MAP AV: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "map av", m.Close()) })
	if m.Attr().Type == fabric.AVMap {
		_, err = m.OpenSet(&fabric.AVSetAttr{StartAddr: 0, EndAddr: 0, Stride: 1})
		isErr(t, "a range on an FI_AV_MAP AV", err, fabric.ErrInval)
	}
	wantMembers(t, "an empty set of an FI_AV_MAP AV", openSet(t, m, nil))
}

// avSetUnionIntersectDiff: union appends the source's new members at the
// end; intersect and diff keep the order of what remains; sets of
// another AV are refused.
func avSetUnionIntersectDiff(t *testing.T, tg Target) {
	e := avSetEnv(t, tg, 6)
	a := openSet(t, e.av, &fabric.AVSetAttr{StartAddr: 0, EndAddr: 4, Stride: 2}) // 0 2 4
	b := openSet(t, e.av, nil)
	for _, x := range []fabric.Addr{5, 2, 1} {
		if err := b.Insert(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Union(b); err != nil {
		t.Fatal(err)
	}
	wantMembers(t, "{0 2 4} union {5 2 1}", a, 0, 2, 4, 5, 1)
	if err := a.Union(a); err != nil {
		t.Fatal(err)
	}
	wantMembers(t, "union with itself", a, 0, 2, 4, 5, 1)
	c := openSet(t, e.av, &fabric.AVSetAttr{Flags: fabric.FlagUniverse})
	if err := c.Intersect(b); err != nil {
		t.Fatal(err)
	}
	wantMembers(t, "universe intersect {5 2 1}", c, 1, 2, 5)
	if err := a.Diff(c); err != nil {
		t.Fatal(err)
	}
	wantMembers(t, "{0 2 4 5 1} diff {1 2 5}", a, 0, 4)
	wantMembers(t, "the source is unchanged", c, 1, 2, 5)
	if err := a.Intersect(openSet(t, e.av, nil)); err != nil {
		t.Fatal(err)
	}
	wantMembers(t, "intersect with an empty set", a)

	o := tg.open(t, envOpts{})
	o.insert(o.addr)
	other := openSet(t, o.av, &fabric.AVSetAttr{Flags: fabric.FlagUniverse})
	isErr(t, "union with another AV's set", b.Union(other), fabric.ErrInval)
	isErr(t, "intersect with another AV's set", b.Intersect(other), fabric.ErrInval)
	isErr(t, "diff with another AV's set", b.Diff(other), fabric.ErrInval)
	isErr(t, "union with nil", b.Union(nil), fabric.ErrInval)
	wantMembers(t, "unchanged after the errors", b, 5, 2, 1)
}

// avSetInsertRemove: insert appends; remove keeps the order of the rest;
// an address not in the AV, a member inserted twice and a non-member
// removed are EINVAL.
func avSetInsertRemove(t *testing.T, tg Target) {
	e := avSetEnv(t, tg, 4)
	s := openSet(t, e.av, nil)
	for _, x := range []fabric.Addr{3, 0, 2} {
		if err := s.Insert(x); err != nil {
			t.Fatalf("insert %v: %v", x, err)
		}
	}
	wantMembers(t, "inserted 3 0 2", s, 3, 0, 2)
	isErr(t, "insert a member again", s.Insert(0), fabric.ErrInval)
	isErr(t, "insert an address not in the AV", s.Insert(9), fabric.ErrInval)
	isErr(t, "insert FI_ADDR_NOTAVAIL", s.Insert(fabric.AddrNotAvail), fabric.ErrInval)
	if err := s.Remove(0); err != nil {
		t.Fatal(err)
	}
	wantMembers(t, "removed 0", s, 3, 2)
	isErr(t, "remove a non-member", s.Remove(0), fabric.ErrInval)
	if err := e.av.Remove([]fabric.Addr{1}, 0); err != nil {
		t.Fatal(err)
	}
	isErr(t, "insert an address removed from the AV", s.Insert(1), fabric.ErrInval)
	wantMembers(t, "unchanged after the errors", s, 3, 2)
}

// avSetAddr: fi_av_set_addr is local and stable, distinct per set, and
// not an address of the AV.
func avSetAddr(t *testing.T, tg Target) {
	e := avSetEnv(t, tg, 2)
	a := openSet(t, e.av, &fabric.AVSetAttr{Flags: fabric.FlagUniverse})
	b := openSet(t, e.av, &fabric.AVSetAttr{Flags: fabric.FlagUniverse})
	x, err := a.Addr()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Remove(1); err != nil {
		t.Fatal(err)
	}
	if x2, err := a.Addr(); err != nil || x2 != x {
		t.Fatalf("second fi_av_set_addr = %v, %v; want %v", x2, err, x)
	}
	y, err := b.Addr()
	if err != nil || y == x {
		t.Fatalf("the other set's address = %v, %v; the first's is %v", y, err, x)
	}
	if x == fabric.AddrNotAvail || x == fabric.AddrUnspec {
		t.Fatalf("fi_av_set_addr = %v", x)
	}
	_, err = e.av.Lookup(x, make([]byte, 64))
	isErr(t, "the collective address is not an AV address", err, fabric.ErrInval)
}

// avSetMembersTooSmall: members with a short array returns the count and
// FI_ETOOSMALL (fi_ops_av_set_owner.members), copying nothing.
func avSetMembersTooSmall(t *testing.T, tg Target) {
	e := avSetEnv(t, tg, 3)
	s := openSet(t, e.av, &fabric.AVSetAttr{Flags: fabric.FlagUniverse})
	short := []fabric.Addr{77, 77}
	n, err := s.Members(short)
	if n != 3 || !errors.Is(err, fabric.ErrTooSmall) || short[0] != 77 {
		t.Fatalf("members into 2 = %d, %v, %v; want 3, ETOOSMALL, untouched", n, err, short)
	}
}

// avSetClose: an AV with an open set cannot close (EBUSY); a closed set
// refuses everything with ErrClosed.
func avSetClose(t *testing.T, tg Target) {
	connectionless(t, tg)
	e := tg.open(t, envOpts{})
	av, err := e.dom.OpenAV(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := av.Insert([][]byte{e.addr}, nil, 0); err != nil {
		t.Fatal(err)
	}
	s, err := av.OpenSet(&fabric.AVSetAttr{Flags: fabric.FlagUniverse})
	if err != nil {
		t.Fatal(err)
	}
	isErr(t, "close the AV with an open set", av.Close(), fabric.ErrBusy)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	isErr(t, "second close", s.Close(), fabric.ErrClosed)
	isErr(t, "insert after close", s.Insert(0), fabric.ErrClosed)
	_, err = s.Members(make([]fabric.Addr, 4))
	isErr(t, "members after close", err, fabric.ErrClosed)
	_, err = s.Addr()
	isErr(t, "addr after close", err, fabric.ErrClosed)
	if err := av.Close(); err != nil {
		t.Fatalf("close the AV after its set: %v", err)
	}
	_, err = av.OpenSet(nil)
	isErr(t, "open a set of a closed AV", err, fabric.ErrClosed)
}
