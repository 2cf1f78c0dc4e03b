package fabric

import (
	"bytes"
	"errors"
	"net"
	"testing"
)

func avTestOpen(t *testing.T, d *Domain, attr *AVAttr) *AV {
	t.Helper()
	a, err := d.OpenAV(attr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestAVOpen(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	a := avTestOpen(t, d, nil)
	if a.Attr().Type != AVTable || a.Domain() != d {
		t.Fatalf("default type %v", a.Attr().Type)
	}
	attr := &AVAttr{Count: 1}
	avTestOpen(t, d, attr)
	if attr.Type != AVTable {
		t.Fatalf("FI_AV_UNSPEC not written back: %v", attr.Type)
	}
	for _, c := range []uint64{1, 2, 1024, 65536} {
		avTestOpen(t, d, &AVAttr{Type: AVMap, Count: c})
	}
	dm := avTestOpenDomain(t, func(i *Info) { i.DomainAttr.AVType = AVMap })
	if a := avTestOpen(t, dm, &AVAttr{}); a.Attr().Type != AVMap {
		t.Fatalf("domain av_type not used: %v", a.Attr().Type)
	}
	bad := []struct {
		attr AVAttr
		want error
	}{
		{AVAttr{Name: "shared"}, ErrNoSys},
		{AVAttr{Flags: avTestFlagEvent}, ErrNoSys},
		{AVAttr{Flags: FlagInject}, ErrBadFlags},
		{AVAttr{RxCtxBits: 64}, ErrInval},
		{AVAttr{Type: 9}, ErrInval},
	}
	for _, b := range bad {
		_, err := d.OpenAV(&b.attr)
		var oe *OpError
		if !errors.Is(err, b.want) || !errors.As(err, &oe) || oe.Op != "fi_av_open" || oe.Provider != fakeProvName {
			t.Errorf("OpenAV(%+v) = %v, want %v", b.attr, err, b.want)
		}
	}
}

// avTestFlagEvent is FI_EVENT as an AV attribute flag.
const avTestFlagEvent = FlagCompletion

func TestAVInsertFabtests(t *testing.T) {
	for _, typ := range []AVType{AVTable, AVMap} {
		t.Run(typ.String(), func(t *testing.T) {
			d := avTestOpenDomain(t, nil)
			a := avTestOpen(t, d, &AVAttr{Type: typ, Count: 1})
			// av_good_sync / av_null_fi_addr.
			fa := []Addr{AddrNotAvail}
			if n, err := a.Insert([][]byte{avTestAddr(1)}, fa, 0); n != 1 || err != nil || fa[0] != 0 {
				t.Fatalf("good: %d %v %v", n, err, fa)
			}
			if n, err := a.Insert([][]byte{avTestAddr(2)}, nil, 0); n != 1 || err != nil {
				t.Fatalf("nil fi_addr: %d %v", n, err)
			}
			// av_bad_sync: all-zero address.
			fa[0] = 5
			if n, err := a.Insert([][]byte{make([]byte, 6)}, fa, 0); n != 0 || err != nil || fa[0] != AddrNotAvail {
				t.Fatalf("bad: %d %v %v", n, err, fa)
			}
			// av_goodbad_vector_sync.
			fa2 := make([]Addr, 2)
			if n, err := a.Insert([][]byte{avTestAddr(3), make([]byte, 6)}, fa2, 0); n != 1 || err != nil ||
				fa2[0] != 2 || fa2[1] != AddrNotAvail {
				t.Fatalf("good+bad: %d %v %v", n, err, fa2)
			}
			// av_goodbad_vector_sync_err.
			errs := make([]error, 2)
			if n, err := a.InsertWithErrors([][]byte{avTestAddr(4), {1}}, fa2, errs, 0); n != 1 || err != nil ||
				errs[0] != nil || errs[1] == nil {
				t.Fatalf("sync err: %d %v %v", n, err, errs)
			}
			// Count is only a hint.
			for i := 10; i < 110; i++ {
				if n, err := a.Insert([][]byte{avTestAddr(i)}, nil, FlagMore); n != 1 || err != nil {
					t.Fatalf("insert %d: %d %v", i, n, err)
				}
			}
			// Lookup returns identical bytes and the full size.
			buf := make([]byte, 32)
			if n, err := a.Lookup(2, buf); n != 6 || err != nil || !bytes.Equal(buf[:6], avTestAddr(3)) {
				t.Fatalf("lookup: %d %v %v", n, err, buf[:6])
			}
			short := make([]byte, 3)
			if n, err := a.Lookup(0, short); n != 6 || err != nil || !bytes.Equal(short, avTestAddr(1)[:3]) {
				t.Fatalf("short lookup: %d %v", n, err)
			}
			if s := a.StrAddr(avTestAddr(1)); s != "fi_avtest://127.0.0.1:9217" {
				t.Fatalf("straddr %q", s)
			}
		})
	}
}

func TestAVInsertErrors(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	a := avTestOpen(t, d, nil)
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"event", func() error { _, err := a.Insert([][]byte{avTestAddr(1)}, nil, avTestFlagEvent); return err }(), ErrNoEQ},
		{"flags", func() error { _, err := a.Insert([][]byte{avTestAddr(1)}, nil, FlagInject); return err }(), ErrBadFlags},
		{"short", func() error { _, err := a.Insert([][]byte{avTestAddr(1)}, []Addr{}, 0); return err }(), ErrInval},
		{"user id", func() error { _, err := a.Insert([][]byte{avTestAddr(1)}, nil, FlagAVUserID); return err }(), ErrInval},
		{"sync errs nil", func() error {
			_, err := a.InsertWithErrors([][]byte{avTestAddr(1)}, nil, nil, 0)
			return err
		}(), ErrInval},
	}
	for _, c := range cases {
		var oe *OpError
		if !errors.Is(c.err, c.want) || !errors.As(c.err, &oe) || oe.Op != "fi_av_insert" {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
}

func TestAVRemoveLookup(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	a := avTestOpen(t, d, nil)
	fa := make([]Addr, 3)
	a.Insert([][]byte{avTestAddr(1), avTestAddr(2), avTestAddr(3)}, fa, 0)
	buf := make([]byte, 8)
	for _, bad := range []Addr{3, 1000, AddrNotAvail} {
		if _, err := a.Lookup(bad, buf); !errors.Is(err, ErrInval) {
			t.Errorf("lookup %v: %v", bad, err)
		}
	}
	if err := a.Remove([]Addr{fa[1]}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Lookup(fa[1], buf); !errors.Is(err, ErrInval) {
		t.Fatalf("lookup removed: %v", err)
	}
	for _, bad := range [][]Addr{{1000}, {AddrNotAvail}, {fa[1]}, {fa[0], fa[1]}} {
		if err := a.Remove(bad, 0); !errors.Is(err, ErrInval) {
			t.Errorf("remove %v: %v", bad, err)
		}
	}
	if err := a.Remove([]Addr{fa[0]}, FlagMore); !errors.Is(err, ErrBadFlags) {
		t.Errorf("remove flags: %v", err)
	}
	// Remove then re-insert works and reuses the index.
	one := make([]Addr, 1)
	if n, _ := a.Insert([][]byte{avTestAddr(2)}, one, 0); n != 1 || one[0] != fa[1] {
		t.Fatalf("re-insert %v", one)
	}
	if got := a.view().Reverse(avTestAddr(2)); got != fa[1] {
		t.Fatalf("reverse %v", got)
	}
}

func TestAVInsertSvcSym(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	a := avTestOpen(t, d, nil)
	var fa Addr
	if n, err := a.InsertSvc("10.0.0.1", "9228", &fa, 0); n != 1 || err != nil || fa != 0 {
		t.Fatalf("%d %v %v", n, err, fa)
	}
	if n, err := a.InsertSvc("nohost", "1", &fa, 0); n != 0 || err != nil || fa != AddrNotAvail {
		t.Fatalf("unresolvable: %d %v %v", n, err, fa)
	}
	fas := make([]Addr, 4)
	if n, err := a.InsertSym("10.1.1.1", 2, "5000", 2, fas, 0); n != 4 || err != nil {
		t.Fatalf("sym %d %v", n, err)
	}
	buf := make([]byte, 6)
	a.Lookup(fas[3], buf)
	if s := a.StrAddr(buf); s != "fi_avtest://10.1.1.2:5001" {
		t.Fatalf("sym last %q", s)
	}
}

func TestAVUserIDAndView(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	a := avTestOpen(t, d, nil)
	fa := []Addr{77}
	if n, err := a.Insert([][]byte{avTestAddr(1)}, fa, FlagAVUserID); n != 1 || err != nil || fa[0] != 0 {
		t.Fatalf("%d %v %v", n, err, fa)
	}
	v := a.view()
	if got := v.Reverse(avTestAddr(1)); got != 77 {
		t.Fatalf("reverse with user id = %v", got)
	}
	if !bytes.Equal(v.Lookup(0), avTestAddr(1)) || v.Lookup(1) != nil {
		t.Fatal("view lookup")
	}
	if got := v.Reverse(avTestAddr(9)); got != AddrNotAvail {
		t.Fatalf("reverse unknown %v", got)
	}
	// FlagAVUserID as an AV attribute applies to every insert.
	u := avTestOpen(t, d, &AVAttr{Flags: FlagAVUserID})
	fa[0] = 99
	u.Insert([][]byte{avTestAddr(2)}, fa, 0)
	if got := u.view().Reverse(avTestAddr(2)); got != 99 {
		t.Fatalf("attr user id: %v", got)
	}
	calls := 0
	cancel := a.onInsert(func() { calls++ })
	a.Insert([][]byte{avTestAddr(5)}, nil, 0)
	cancel()
	if calls != 1 {
		t.Fatalf("onInsert called %d times", calls)
	}
}

func TestAVClose(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	a, err := d.OpenAV(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("domain close with an open AV: %v", err)
	}
	if err := a.bindEndpoint(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("close while bound: %v", err)
	}
	// Still usable.
	if n, err := a.Insert([][]byte{avTestAddr(1)}, nil, 0); n != 1 || err != nil {
		t.Fatalf("insert after EBUSY: %d %v", n, err)
	}
	a.unbindEndpoint()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); !errors.Is(err, ErrClosed) || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := a.Insert([][]byte{avTestAddr(1)}, nil, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("insert after close: %v", err)
	}
	if err := a.Remove([]Addr{0}, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("remove after close: %v", err)
	}
	if _, err := a.Lookup(0, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("lookup after close: %v", err)
	}
	if err := a.bindEndpoint(); !errors.Is(err, ErrClosed) {
		t.Fatalf("bind after close: %v", err)
	}
}

func TestRxAddr(t *testing.T) {
	if got := RxAddr(5, 3, 4); got != Addr(3)<<60|5 {
		t.Fatalf("%#x", uint64(got))
	}
	if got := RxAddr(5, 3, 0); got != 5 {
		t.Fatalf("no rx bits: %v", got)
	}
	for _, c := range []struct {
		a     Addr
		index int
	}{{5, 16}, {5, -1}, {AddrNotAvail, 0}, {Addr(1) << 61, 1}} {
		if got := RxAddr(c.a, c.index, 4); got != AddrNotAvail {
			t.Errorf("RxAddr(%#x, %d, 4) = %#x, want FI_ADDR_NOTAVAIL", uint64(c.a), c.index, uint64(got))
		}
	}
	if got := RxAddr(5, 15, 4); got != Addr(15)<<60|5 {
		t.Fatalf("largest index: %#x", uint64(got))
	}
	d := avTestOpenDomain(t, nil)
	a := avTestOpen(t, d, &AVAttr{RxCtxBits: 4})
	a.Insert([][]byte{avTestAddr(1)}, nil, 0)
	if !bytes.Equal(a.view().Lookup(RxAddr(0, 2, 4)), avTestAddr(1)) {
		t.Fatal("lookup of an rx address")
	}
}
