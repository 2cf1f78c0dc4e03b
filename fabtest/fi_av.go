package fabtest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// avCases lists the fi_av(3) behaviours, in the order they run.
var avCases = []testCase{
	{"fi_av/insert_lookup_remove_table", avInsertLookupRemoveTable},
	{"fi_av/bad_address_NOTAVAIL", avBadAddressNOTAVAIL},
	{"fi_av/straddr", avStraddr},
	{"fi_av/remove_reinsert_live_peer", avRemoveReinsertLivePeer},
	{"fi_av/open_counts_and_types", avOpenCountsAndTypes},
	{"fi_av/table_indices_sequential_map_distinct", avTableIndicesSequentialMapDistinct},
	{"fi_av/invalid_addresses_not_inserted", avInvalidAddressesNotInserted},
	{"fi_av/async_FI_EVENT_unsupported_cleanly", avAsyncFIEVENTUnsupportedCleanly},
	{"fi_av/insert_before_bind_after_bind_after_enable", avInsertBeforeBindAfterBindAfterEnable},
	{"fi_av/lookup_and_remove_bad_EINVAL", avLookupAndRemoveBadEINVAL},
	{"fi_av/remove_reinsert_both_directions", avRemoveReinsertBothDirections},
	{"fi_av/user_id_reported_as_source", avUserIdReportedAsSource},
	{"fi_av/named_shared_av_unclaimed_ENOSYS", avNamedSharedAvUnclaimedENOSYS},
}

func avInsertLookupRemoveTable(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, b, _, _ := tg.pair(t, envOpts{})
	av, err := a.dom.OpenAV(&fabric.AVAttr{Type: fabric.AVTable, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer av.Close()
	n, err := av.Insert([][]byte{a.addr, b.addr}, nil, 0)
	if n != 2 || err != nil {
		t.Fatalf("insert with nil fi_addr = %d, %v", n, err)
	}
	fa := make([]fabric.Addr, 1)
	if n, err := av.Insert([][]byte{b.addr}, fa, 0); n != 1 || err != nil || fa[0] != 2 {
		t.Fatalf("third insert (count hint 1) = %d, %v, addr %v; want index 2", n, err, fa[0])
	}
	buf := make([]byte, 64)
	l, err := av.Lookup(1, buf)
	if err != nil || !bytes.Equal(buf[:l], b.addr) {
		t.Fatalf("lookup = % x, %v; want % x", buf[:l], err, b.addr)
	}
	l, err = av.Lookup(1, buf[:2])
	if l != len(b.addr) {
		t.Fatalf("truncated lookup returned %d (%v); want the full length %d", l, err, len(b.addr))
	}
	if err := av.Remove([]fabric.Addr{1}, 0); err != nil {
		t.Fatalf("remove: %v", err)
	}
	_, err = av.Lookup(1, buf)
	isErr(t, "lookup removed", err, fabric.ErrInval)
	isErr(t, "remove twice", av.Remove([]fabric.Addr{1}, 0), fabric.ErrInval)
	isErr(t, "remove out of range", av.Remove([]fabric.Addr{99}, 0), fabric.ErrInval)
	_, err = av.Lookup(fabric.AddrNotAvail, buf)
	isErr(t, "lookup UINT64_MAX", err, fabric.ErrInval)
}

func avBadAddressNOTAVAIL(t *testing.T, tg Target) {
	connectionless(t, tg)
	a := tg.open(t, envOpts{})
	bad := make([]byte, len(a.addr))
	fa := []fabric.Addr{7, 7}
	n, err := a.av.Insert([][]byte{a.addr, bad}, fa, 0)
	if n != 1 || fa[0] == fabric.AddrNotAvail || fa[1] != fabric.AddrNotAvail {
		t.Fatalf("good+bad insert = %d, %v, %v", n, err, fa)
	}
	errs := make([]error, 2)
	n, _ = a.av.InsertWithErrors([][]byte{a.addr, bad}, fa, errs, 0)
	if n != 1 || errs[0] != nil || errs[1] == nil {
		t.Fatalf("FI_SYNC_ERR insert = %d, %v", n, errs)
	}
}

func avStraddr(t *testing.T, tg Target) {
	connectionless(t, tg)
	a := tg.open(t, envOpts{})
	s := a.av.StrAddr(a.addr)
	switch a.info.AddrFormat {
	case fabric.SockAddrIn:
		if !strings.HasPrefix(s, "fi_sockaddr_in://127.0.0.1:") {
			t.Fatalf("straddr = %q", s)
		}
	default:
		if s == "" {
			t.Fatal("empty straddr")
		}
	}
}

func avRemoveReinsertLivePeer(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, b, ab, _ := tg.pair(t, envOpts{})
	send := func(dst fabric.Addr, want string) {
		buf := make([]byte, 16)
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte(want), nil, dst, nil) }, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || string(buf[:got.Len]) != want {
			t.Fatalf("got %q %+v", buf[:got.Len], ee)
		}
		waitCQ(t, a.txcq)
	}
	send(ab, "one")
	if err := a.av.Remove([]fabric.Addr{ab}, 0); err != nil {
		t.Fatal(err)
	}
	isErr(t, "send to removed address", a.ep.Send([]byte("x"), nil, ab, nil), fabric.ErrInval)
	ab2 := a.insert(b.addr)
	send(ab2, "two")
}

func avOpenCountsAndTypes(t *testing.T, tg Target) {
	e := avEnv(t, tg, envOpts{noEnable: true})
	for _, typ := range []fabric.AVType{fabric.AVUnspec, fabric.AVMap, fabric.AVTable} {
		for _, count := range []uint64{0, 1, 2, 1024, 65536} {
			attr := &fabric.AVAttr{Type: typ, Count: count}
			av, err := e.dom.OpenAV(attr)
			if err != nil {
				if typ != fabric.AVUnspec && e.info.DomainAttr.AVType != fabric.AVUnspec && e.info.DomainAttr.AVType != typ {
					continue // the domain only supports its own type
				}
				t.Fatalf("fi_av_open(%v, count %d): %v", typ, count, err)
			}
			got := av.Attr().Type
			if got != fabric.AVMap && got != fabric.AVTable || typ != fabric.AVUnspec && got != typ || attr.Type != got {
				t.Fatalf("fi_av_open(%v): type reported %v (attr %v)", typ, got, attr.Type)
			}
			if err := av.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func avTableIndicesSequentialMapDistinct(t *testing.T, tg Target) {
	e := avEnv(t, tg, envOpts{})
	table := e.openAV(&fabric.AVAttr{Type: fabric.AVTable, Count: 2})
	fa := make([]fabric.Addr, 2)
	for call := 0; call < 3; call++ {
		if n, err := table.Insert([][]byte{e.addr, e.addr}, fa, 0); n != 2 || err != nil {
			t.Fatalf("insert: %d %v", n, err)
		}
		if fa[0] != fabric.Addr(2*call) || fa[1] != fabric.Addr(2*call+1) {
			t.Fatalf("FI_AV_TABLE call %d gave %v; want %d, %d", call, fa, 2*call, 2*call+1)
		}
	}
	m, err := e.dom.OpenAV(&fabric.AVAttr{Type: fabric.AVMap})
	if err != nil {
		if tg.claimsHint(func(h *fabric.Info) { h.DomainAttr.AVType = fabric.AVMap }) {
			t.Fatalf("fi_av_open(FI_AV_MAP) with FI_AV_MAP claimed: %v", err)
		}
		t.Skipf("%s does not claim FI_AV_MAP: %v", tg.Provider, err)
	}
	defer m.Close()
	seen := map[fabric.Addr]bool{}
	for i := 0; i < 4; i++ {
		if n, err := m.Insert([][]byte{e.addr}, fa[:1], 0); n != 1 || err != nil {
			t.Fatal(err)
		}
		if fa[0] == fabric.AddrNotAvail || fa[0] == fabric.AddrUnspec || seen[fa[0]] {
			t.Fatalf("FI_AV_MAP insert %d gave %v (seen %v)", i, fa[0], seen)
		}
		seen[fa[0]] = true
	}
}

func avInvalidAddressesNotInserted(t *testing.T, tg Target) {
	e := avEnv(t, tg, envOpts{})
	// A truncated address: one byte short, or for an FI_ADDR_STR name
	// (a C string, which may be given with or without its NUL) one
	// character short.
	short := e.addr[:len(e.addr)-1]
	if e.info.AddrFormat == fabric.AddrStr && len(short) > 1 && e.addr[len(e.addr)-1] == 0 {
		short = e.addr[:len(e.addr)-2]
	}
	bad := [][]byte{nil, {}, short, make([]byte, len(e.addr))}
	if e.info.AddrFormat == fabric.SockAddrIn || e.info.AddrFormat == fabric.SockAddrIn6 {
		wrongFamily := append([]byte(nil), e.addr...)
		wrongFamily[0], wrongFamily[1] = 99, 0
		bad = append(bad, wrongFamily, append(append([]byte(nil), e.addr...), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
	}
	for i, b := range bad {
		addrs := [][]byte{e.addr, b, e.addr}
		fa := []fabric.Addr{9, 9, 9}
		errs := make([]error, 3)
		n, err := e.av.InsertWithErrors(addrs, fa, errs, 0)
		if err != nil || n != 2 {
			t.Fatalf("bad address %d (% x): inserted %d, %v; want 2", i, b, n, err)
		}
		if fa[1] != fabric.AddrNotAvail || fa[0] == fabric.AddrNotAvail || fa[2] == fabric.AddrNotAvail {
			t.Fatalf("bad address %d: fi_addrs %v", i, fa)
		}
		if errs[0] != nil || errs[1] == nil || errs[2] != nil {
			t.Fatalf("bad address %d: FI_SYNC_ERR results %v", i, errs)
		}
	}
}

func avAsyncFIEVENTUnsupportedCleanly(t *testing.T, tg Target) {
	e := avEnv(t, tg, envOpts{})
	_, err := e.dom.OpenAV(&fabric.AVAttr{Flags: provider.FlagEvent})
	if err == nil {
		t.Skip("provider supports FI_EVENT address vectors")
	}
	if !errors.Is(err, fabric.ErrNoSys) && !errors.Is(err, fabric.ErrBadFlags) {
		t.Fatalf("fi_av_open(FI_EVENT): %v; want ENOSYS", err)
	}
	_, err = e.av.Insert([][]byte{e.addr}, nil, provider.FlagEvent)
	isErr(t, "FI_EVENT insert without a bound EQ", err, fabric.ErrNoEQ)
}

func avInsertBeforeBindAfterBindAfterEnable(t *testing.T, tg Target) {
	e := avEnv(t, tg, envOpts{noEnable: true})
	peer := tg.open(t, envOpts{})
	av := e.openAV(&fabric.AVAttr{Type: e.info.DomainAttr.AVType, Count: 1})
	fa := make([]fabric.Addr, 2)
	if n, err := av.Insert([][]byte{peer.addr, peer.addr}, fa, 0); n != 2 || err != nil {
		t.Fatalf("insert before any endpoint: %d %v", n, err)
	}
	tx := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
	rx := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
	ep := e.bareEndpoint()
	for _, err := range []error{ep.BindCQ(tx, fabric.FlagTransmit), ep.BindCQ(rx, fabric.FlagRecv), ep.BindAV(av)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, err := av.Insert([][]byte{peer.addr, peer.addr}, fa, 0); n != 2 || err != nil {
		t.Fatalf("insert after bind: %d %v", n, err)
	}
	if err := ep.Enable(); err != nil {
		t.Fatal(err)
	}
	if n, err := av.Insert([][]byte{peer.addr}, fa[:1], 0); n != 1 || err != nil {
		t.Fatalf("insert after enable: %d %v", n, err)
	}
	if err := peer.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "send via the latest fi_addr", func() error { return ep.Send([]byte("stage"), nil, fa[0], nil) }, tx)
	got, ee := waitCQ(t, peer.rxcq, tx)
	if ee != nil || got.Len != 5 {
		t.Fatalf("peer received %+v %+v", got, ee)
	}
}

func avLookupAndRemoveBadEINVAL(t *testing.T, tg Target) {
	e := avEnv(t, tg, envOpts{})
	av := e.openAV(&fabric.AVAttr{Type: fabric.AVTable, Count: 8})
	fa := make([]fabric.Addr, 2)
	if n, err := av.Insert([][]byte{e.addr, e.addr}, fa, 0); n != 2 || err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	for _, bad := range []fabric.Addr{5, 8, 1 << 40, fabric.AddrNotAvail} {
		_, err := av.Lookup(bad, buf)
		isErr(t, "lookup of a never-inserted fi_addr", err, fabric.ErrInval)
	}
	if err := av.Remove([]fabric.Addr{fa[0]}, 0); err != nil {
		t.Fatal(err)
	}
	_, err := av.Lookup(fa[0], buf)
	isErr(t, "lookup of a removed fi_addr", err, fabric.ErrInval)
	isErr(t, "remove UINT64_MAX", av.Remove([]fabric.Addr{fabric.AddrNotAvail}, 0), fabric.ErrInval)
	isErr(t, "remove a vector holding a removed fi_addr", av.Remove([]fabric.Addr{fa[1], fa[0]}, 0), fabric.ErrInval)
	if l, err := av.Lookup(fa[1], buf); err != nil || !bytes.Equal(buf[:l], e.addr) {
		t.Fatalf("a failed vector remove removed the valid member: %v", err)
	}
	if err := av.Remove([]fabric.Addr{fa[1]}, 0); err != nil {
		t.Fatalf("remove of the valid member: %v", err)
	}
}

func avRemoveReinsertBothDirections(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, b, ab, ba := tg.pair(t, envOpts{})
	xfer := func(from, to *env, dst fabric.Addr, m string) {
		t.Helper()
		buf := make([]byte, 16)
		if err := to.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return from.ep.Send([]byte(m), nil, dst, nil) }, from.txcq)
		got, ee := waitCQ(t, to.rxcq, from.txcq)
		if ee != nil || string(buf[:got.Len]) != m {
			t.Fatalf("%s: %+v %+v", m, got, ee)
		}
		waitCQ(t, from.txcq)
	}
	xfer(a, b, ab, "a->b")
	xfer(b, a, ba, "b->a")
	if err := a.av.Remove([]fabric.Addr{ab}, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.av.Remove([]fabric.Addr{ba}, 0); err != nil {
		t.Fatal(err)
	}
	ab, ba = a.insert(b.addr), b.insert(a.addr)
	xfer(b, a, ba, "b->a again")
	xfer(a, b, ab, "a->b again")
}

// avUserIDUnsupported reports whether an insert with FI_AV_USER_ID that
// failed with err may skip the case: only when the provider does not claim
// the FI_AV_USER_ID capability (GetInfo with it in the hints matches
// nothing) and refused the flag as unsupported (FI_EBADFLAGS, FI_ENOSYS).
// A provider that claims it must honour the flag.
func avUserIDUnsupported(claimed bool, err error) bool {
	return !claimed && (errors.Is(err, fabric.ErrBadFlags) || errors.Is(err, fabric.ErrNoSys))
}

func avUserIdReportedAsSource(t *testing.T, tg Target) {
	connectionless(t, tg)
	b := tg.open(t, envOpts{caps: fabric.CapSource})
	a := tg.open(t, envOpts{})
	ab := a.insert(b.addr)
	const uid = fabric.Addr(0x1234)
	fa := []fabric.Addr{uid}
	if n, err := b.av.Insert([][]byte{a.addr}, fa, fabric.FlagAVUserID); err != nil || n != 1 {
		if avUserIDUnsupported(tg.claims(fabric.CapAVUserID), err) {
			t.Skipf("FI_AV_USER_ID not claimed: %v", err)
		}
		t.Fatalf("insert with FI_AV_USER_ID: %d %v", n, err)
	}
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("uid"), nil, ab, nil) }, a.txcq)
	if _, src := waitFrom(t, "user id", b.rxcq, a.txcq); src != uid {
		t.Fatalf("source %v; want the user id %v", src, uid)
	}
}

func avNamedSharedAvUnclaimedENOSYS(t *testing.T, tg Target) {
	e := avEnv(t, tg, envOpts{noEnable: true})
	if e.info.DomainAttr.Caps&fabric.CapSharedAV != 0 || e.info.Caps&fabric.CapSharedAV != 0 {
		t.Skip("provider claims FI_SHARED_AV")
	}
	_, err := e.dom.OpenAV(&fabric.AVAttr{Name: "fabtest-shared-av"})
	isErr(t, "named AV without FI_SHARED_AV", err, fabric.ErrNoSys)
}

// avEnv opens an enabled endpoint with an AV, skipping connection-oriented
// targets (they have no AV).
func avEnv(t *testing.T, tg Target, o envOpts) *env {
	t.Helper()
	connectionless(t, tg)
	return tg.open(t, o)
}

func (e *env) openAV(attr *fabric.AVAttr) *fabric.AV {
	e.t.Helper()
	av, err := e.dom.OpenAV(attr)
	if err != nil {
		e.t.Fatalf("OpenAV(%+v): %v", attr, err)
	}
	e.t.Cleanup(func() { closeOK(e.t, "av", av.Close()) })
	return av
}
