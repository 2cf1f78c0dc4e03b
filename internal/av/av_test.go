package av

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// ipv4Handler accepts 6-byte "ip:port" addresses that are not all zero.
type ipv4Handler struct{}

func (ipv4Handler) ValidAddr(f provider.AddrFormat, b []byte) bool {
	return len(b) == 6 && !bytes.Equal(b, make([]byte, 6))
}

func (ipv4Handler) AddrString(f provider.AddrFormat, b []byte) string {
	if len(b) != 6 {
		return "fi_test://invalid"
	}
	return "fi_test://" + strconv.Itoa(int(b[0])) + "." + strconv.Itoa(int(b[1])) + "." + strconv.Itoa(int(b[2])) +
		"." + strconv.Itoa(int(b[3])) + ":" + strconv.Itoa(int(b[4])<<8|int(b[5]))
}

func (ipv4Handler) ResolveService(f provider.AddrFormat, node, service string) ([]byte, error) {
	parts := strings.Split(node, ".")
	if len(parts) != 4 {
		return nil, provider.ENODATA
	}
	b := make([]byte, 6)
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v > 255 {
			return nil, provider.ENODATA
		}
		b[i] = byte(v)
	}
	port, err := strconv.Atoi(service)
	if err != nil {
		return nil, provider.ENODATA
	}
	b[4], b[5] = byte(port>>8), byte(port)
	return b, nil
}

func addr(i int) []byte { return []byte{10, 0, 0, byte(i), 0x23, byte(i)} }

func newAV(t *testing.T, typ provider.AVType) *AV {
	t.Helper()
	a, err := New(Config{Type: typ, Count: 1, Handler: ipv4Handler{}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNew(t *testing.T) {
	a, err := New(Config{})
	if err != nil || a.Type() != provider.AVTable {
		t.Fatalf("unspec: %v %v", a, err)
	}
	if _, err := New(Config{Type: 7}); err != provider.EINVAL {
		t.Fatalf("bad type: %v", err)
	}
	if _, err := New(Config{RxCtxBits: 64}); err != provider.EINVAL {
		t.Fatalf("bad rx bits: %v", err)
	}
}

func TestTableSequential(t *testing.T) {
	for _, typ := range []provider.AVType{provider.AVTable, provider.AVMap} {
		a := newAV(t, typ)
		// nil fi_addr is legal; count is only a hint.
		n, err := a.Insert([][]byte{addr(1)}, nil, 0, nil)
		if n != 1 || err != nil {
			t.Fatalf("%v: %d %v", typ, n, err)
		}
		fa := make([]provider.Addr, 3)
		n, err = a.Insert([][]byte{addr(2), addr(3), addr(4)}, fa, provider.FlagMore, nil)
		if n != 3 || err != nil || fa[0] != 1 || fa[1] != 2 || fa[2] != 3 {
			t.Fatalf("%v: %d %v %v", typ, n, err, fa)
		}
		if a.Len() != 4 {
			t.Fatalf("len %d", a.Len())
		}
		for i := 0; i < 4; i++ {
			if got := a.Lookup(provider.Addr(i)); !bytes.Equal(got, addr(i+1)) {
				t.Fatalf("lookup %d = %v", i, got)
			}
		}
	}
}

func TestInsertInvalid(t *testing.T) {
	a := newAV(t, provider.AVTable)
	fa := []provider.Addr{7, 7, 7}
	errs := make([]error, 3)
	n, err := a.Insert([][]byte{addr(1), make([]byte, 6), nil}, fa, provider.FlagSyncErr, errs)
	if n != 1 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	if fa[0] != 0 || fa[1] != provider.AddrNotAvail || fa[2] != provider.AddrNotAvail {
		t.Fatalf("fi_addrs %v", fa)
	}
	if errs[0] != nil || errs[1] == nil || errs[2] == nil {
		t.Fatalf("sync errs %v", errs)
	}
	// Without FI_SYNC_ERR errs is left alone.
	errs2 := []error{errors.New("untouched")}
	if n, _ := a.Insert([][]byte{nil}, nil, 0, errs2); n != 0 || errs2[0].Error() != "untouched" {
		t.Fatalf("errs written without FI_SYNC_ERR: %v", errs2)
	}
	// Argument errors.
	if _, err := a.Insert([][]byte{addr(1), addr(2)}, make([]provider.Addr, 1), 0, nil); err != provider.EINVAL {
		t.Fatalf("short fi_addr: %v", err)
	}
	if _, err := a.Insert([][]byte{addr(1)}, nil, provider.FlagSyncErr, []error{}); err != provider.EINVAL {
		t.Fatalf("short errs: %v", err)
	}
	if _, err := a.Insert([][]byte{addr(1)}, nil, provider.FlagEvent, nil); err != provider.ENOEQ {
		t.Fatalf("FI_EVENT: %v", err)
	}
	if _, err := a.Insert([][]byte{addr(1)}, nil, provider.FlagInject, nil); err != provider.EBADFLAGS {
		t.Fatalf("bad flags: %v", err)
	}
	if _, err := a.Insert([][]byte{addr(1)}, nil, provider.FlagAVUserID, nil); err != provider.EINVAL {
		t.Fatalf("user id without fi_addr: %v", err)
	}
}

func TestNoHandler(t *testing.T) {
	a, _ := New(Config{Format: provider.FormatUnspec})
	if n, _ := a.Insert([][]byte{{1, 2, 0xab}, {}}, nil, 0, nil); n != 1 {
		t.Fatalf("n=%d", n)
	}
	if s := a.StrAddr([]byte{1, 2, 0xab}); s != "0x0102ab" {
		t.Fatalf("StrAddr %q", s)
	}
	if _, err := a.InsertSvc("1.2.3.4", "5", nil, 0, nil); err != provider.ENOSYS {
		t.Fatalf("InsertSvc without handler: %v", err)
	}
	s, _ := New(Config{Format: provider.AddrStr})
	if got := s.StrAddr([]byte("fi_shm://1234\x00")); got != "fi_shm://1234" {
		t.Fatalf("FI_ADDR_STR %q", got)
	}
}

func TestRemoveAndReinsert(t *testing.T) {
	a := newAV(t, provider.AVTable)
	fa := make([]provider.Addr, 4)
	a.Insert([][]byte{addr(1), addr(2), addr(3), addr(4)}, fa, 0, nil)
	for _, bad := range [][]provider.Addr{{9}, {provider.AddrNotAvail}, {1, 1}, {1, 9}} {
		if err := a.Remove(bad, 0); err != provider.EINVAL {
			t.Fatalf("remove %v: %v", bad, err)
		}
	}
	if a.Len() != 4 {
		t.Fatal("a failed remove removed something")
	}
	if err := a.Remove([]provider.Addr{1}, 0); err != nil {
		t.Fatal(err)
	}
	if err := a.Remove([]provider.Addr{1}, 0); err != provider.EINVAL {
		t.Fatalf("double remove: %v", err)
	}
	if err := a.Remove([]provider.Addr{0, 1}, 0); err != provider.EINVAL {
		t.Fatalf("vector containing a removed address: %v", err)
	}
	if err := a.Remove([]provider.Addr{0}, 1); err != provider.EBADFLAGS {
		t.Fatalf("flags: %v", err)
	}
	if a.Lookup(1) != nil {
		t.Fatal("lookup of removed address")
	}
	if _, err := a.LookupCopy(1, make([]byte, 6)); err != provider.EINVAL {
		t.Fatalf("LookupCopy removed: %v", err)
	}
	if got := a.Reverse(addr(2)); got != provider.AddrNotAvail {
		t.Fatalf("reverse of removed = %v", got)
	}
	// Re-insert takes the lowest unused index.
	one := make([]provider.Addr, 1)
	a.Insert([][]byte{addr(2)}, one, 0, nil)
	if one[0] != 1 {
		t.Fatalf("re-insert took index %v, want the lowest unused 1", one[0])
	}
	a.Insert([][]byte{addr(9)}, one, 0, nil)
	if one[0] != 4 {
		t.Fatalf("next index %v", one[0])
	}
	if got := a.Reverse(addr(2)); got != 1 {
		t.Fatalf("reverse after re-insert = %v", got)
	}
	// Removing the last index and inserting again reuses it.
	if err := a.Remove([]provider.Addr{4}, 0); err != nil {
		t.Fatal(err)
	}
	a.Insert([][]byte{addr(10)}, one, 0, nil)
	if one[0] != 4 {
		t.Fatalf("after trailing remove: %v", one[0])
	}
}

func TestLookup(t *testing.T) {
	a := newAV(t, provider.AVTable)
	a.Insert([][]byte{addr(5)}, nil, 0, nil)
	buf := make([]byte, 16)
	n, err := a.LookupCopy(0, buf)
	if n != 6 || err != nil || !bytes.Equal(buf[:6], addr(5)) {
		t.Fatalf("%d %v %v", n, err, buf)
	}
	short := make([]byte, 2)
	n, err = a.LookupCopy(0, short)
	if n != 6 || err != nil || !bytes.Equal(short, addr(5)[:2]) {
		t.Fatalf("truncated: %d %v %v", n, err, short)
	}
	for _, bad := range []provider.Addr{1, 1000, provider.AddrNotAvail} {
		if _, err := a.LookupCopy(bad, buf); err != provider.EINVAL {
			t.Fatalf("lookup %v: %v", bad, err)
		}
	}
}

func TestUserIDAndReverse(t *testing.T) {
	a := newAV(t, provider.AVTable)
	fa := []provider.Addr{1000, 2000}
	n, err := a.Insert([][]byte{addr(1), addr(2)}, fa, provider.FlagAVUserID, nil)
	if n != 2 || err != nil || fa[0] != 0 || fa[1] != 1 {
		t.Fatalf("%d %v %v", n, err, fa)
	}
	if got := a.Reverse(addr(2)); got != 2000 {
		t.Fatalf("reverse with user id = %v", got)
	}
	if got := a.ReverseIndex(addr(2)); got != 1 {
		t.Fatalf("reverse index = %v", got)
	}
	if u, ok := a.UserID(0); !ok || u != 1000 {
		t.Fatalf("user id %v %v", u, ok)
	}
	a.Insert([][]byte{addr(3)}, nil, 0, nil)
	if got := a.Reverse(addr(3)); got != 2 {
		t.Fatalf("reverse without user id = %v", got)
	}
	if got := a.Reverse([]byte("nope")); got != provider.AddrNotAvail {
		t.Fatalf("reverse unknown = %v", got)
	}
	key := addr(3)
	if allocs := testing.AllocsPerRun(1000, func() {
		if a.Reverse(key) != 2 || a.Lookup(2) == nil {
			t.Fatal("lookup")
		}
	}); allocs != 0 {
		t.Fatalf("%v allocs per Reverse+Lookup", allocs)
	}
	// Duplicate insertion: reverse reports the latest live one.
	a.Insert([][]byte{addr(3)}, nil, 0, nil)
	if got := a.Reverse(addr(3)); got != 3 {
		t.Fatalf("reverse of duplicate = %v", got)
	}
	a.Remove([]provider.Addr{3}, 0)
	if got := a.Reverse(addr(3)); got != 2 {
		t.Fatalf("reverse after removing the duplicate = %v", got)
	}
}

func TestRxCtxBits(t *testing.T) {
	a, _ := New(Config{RxCtxBits: 4, Handler: ipv4Handler{}})
	a.Insert([][]byte{addr(1), addr(2)}, nil, 0, nil)
	rx := provider.Addr(3)<<60 | 1
	if a.RxIndex(rx) != 3 || a.Base(rx) != 1 || !bytes.Equal(a.Lookup(rx), addr(2)) {
		t.Fatalf("rx addr: %d %v %v", a.RxIndex(rx), a.Base(rx), a.Lookup(rx))
	}
	if err := a.Remove([]provider.Addr{rx}, 0); err != provider.EINVAL {
		t.Fatalf("remove of an rx address: %v", err)
	}
}

func TestStrAddr(t *testing.T) {
	a := newAV(t, provider.AVTable)
	if s := a.StrAddr(addr(1)); s != "fi_test://10.0.0.1:8961" {
		t.Fatalf("%q", s)
	}
}

func TestInsertSvcAndSym(t *testing.T) {
	a := newAV(t, provider.AVTable)
	var fa provider.Addr
	n, err := a.InsertSvc("10.0.0.1", "9228", &fa, 0, nil)
	if n != 1 || err != nil || fa != 0 || a.StrAddr(a.Lookup(0)) != "fi_test://10.0.0.1:9228" {
		t.Fatalf("%d %v %v", n, err, fa)
	}
	errs := make([]error, 1)
	fa = 5
	n, err = a.InsertSvc("bogus", "1", &fa, provider.FlagSyncErr, errs)
	if n != 0 || err != nil || fa != provider.AddrNotAvail || errs[0] != provider.ENODATA {
		t.Fatalf("bad node: %d %v %v %v", n, err, fa, errs)
	}
	fas := make([]provider.Addr, 4)
	n, err = a.InsertSym("10.1.1.1", 2, "5000", 2, fas, 0, nil)
	if n != 4 || err != nil {
		t.Fatalf("sym: %d %v", n, err)
	}
	want := []string{"10.1.1.1:5000", "10.1.1.1:5001", "10.1.1.2:5000", "10.1.1.2:5001"}
	for i, w := range want {
		if s := a.StrAddr(a.Lookup(fas[i])); s != "fi_test://"+w {
			t.Fatalf("sym %d = %q, want %q", i, s, w)
		}
	}
	if _, err := a.InsertSym("host", 2, "1", 1, nil, 0, nil); err != provider.EINVAL {
		t.Fatalf("host without numeric suffix: %v", err)
	}
	if got, _ := symNodes("host09", 2); got[0] != "host09" || got[1] != "host10" {
		t.Fatalf("hostnames %v", got)
	}
	if _, err := a.InsertSym("10.1.1.1", 0, "1", 1, nil, 0, nil); err != provider.EINVAL {
		t.Fatalf("nodecnt 0: %v", err)
	}
}

func TestOnInsertAndClose(t *testing.T) {
	a := newAV(t, provider.AVTable)
	calls := 0
	cancel := a.OnInsert(func() { calls++ })
	a.Insert([][]byte{addr(1)}, nil, 0, nil)
	a.Insert([][]byte{nil}, nil, 0, nil) // nothing inserted: no call
	cancel()
	a.Insert([][]byte{addr(2)}, nil, 0, nil)
	if calls != 1 {
		t.Fatalf("listener called %d times", calls)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if a.Lookup(0) != nil || a.Reverse(addr(1)) != provider.AddrNotAvail {
		t.Fatal("lookup after close")
	}
	if _, err := a.Insert([][]byte{addr(3)}, nil, 0, nil); err != provider.EBADF {
		t.Fatalf("insert after close: %v", err)
	}
	if err := a.Close(); err != provider.EBADF {
		t.Fatalf("second close: %v", err)
	}
}

func TestConcurrent(t *testing.T) {
	a := newAV(t, provider.AVTable)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				b := []byte{byte(g), byte(i), 1, 1, 1, 1}
				fa := make([]provider.Addr, 1)
				if n, err := a.Insert([][]byte{b}, fa, 0, nil); n != 1 || err != nil {
					t.Error(n, err)
					return
				}
				if !bytes.Equal(a.Lookup(fa[0]), b) || a.Reverse(b) != fa[0] {
					t.Error("lookup mismatch")
					return
				}
				if i%2 == 0 {
					if err := a.Remove(fa, 0); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	if a.Len() != 200 {
		t.Fatalf("len %d", a.Len())
	}
}

// anyLenHandler accepts addresses of any non-zero length (16-byte ones take
// ReverseCached's inlined path).
type anyLenHandler struct{ ipv4Handler }

func (anyLenHandler) ValidAddr(f provider.AddrFormat, b []byte) bool { return len(b) > 0 }

// TestReverseCached: the cached answer is Reverse's after every change that
// can alter it (insert of an unknown address, duplicate insert, removal,
// Close), for the inlined 16-byte path and the general one.
func TestReverseCached(t *testing.T) {
	for _, size := range []int{6, 16} {
		a, err := New(Config{Type: provider.AVTable, Handler: anyLenHandler{}})
		if err != nil {
			t.Fatal(err)
		}
		key := func(i int) []byte { b := make([]byte, size); b[0], b[size-1] = 10, byte(i); return b }
		var c ReverseCache
		check := func(step string, k []byte, want provider.Addr) {
			t.Helper()
			for i := 0; i < 2; i++ { // fill, then hit
				if got := a.ReverseCached(&c, k); got != want || got != a.Reverse(k) {
					t.Fatalf("size %d, %s: ReverseCached = %v, want %v (Reverse %v)", size, step, got, want, a.Reverse(k))
				}
			}
		}
		check("empty AV", key(1), provider.AddrNotAvail)
		a.Insert([][]byte{key(1)}, nil, 0, nil)
		check("inserted", key(1), 0)
		check("other address", key(2), provider.AddrNotAvail)
		a.Insert([][]byte{key(2), key(1)}, nil, 0, nil)
		check("duplicate", key(1), 2)
		a.Remove([]provider.Addr{2}, 0)
		check("duplicate removed", key(1), 0)
		a.Remove([]provider.Addr{0}, 0)
		check("removed", key(1), provider.AddrNotAvail)
		fa := []provider.Addr{77}
		a.Insert([][]byte{key(1)}, fa, provider.FlagAVUserID, nil)
		check("user id", key(1), 77)
		a.Close()
		check("closed", key(1), provider.AddrNotAvail)
	}
	a := newAV(t, provider.AVTable)
	a.Insert([][]byte{addr(1)}, nil, 0, nil)
	var c ReverseCache
	if allocs := testing.AllocsPerRun(100, func() { a.ReverseCached(&c, addr(1)) }); allocs != 0 {
		t.Fatalf("%v allocs per ReverseCached", allocs)
	}
}

// TestLookupTracksSlots: Lookup (lock-free) answers what the slots hold
// through table growth, removals, reuse of freed slots and Close.
func TestLookupTracksSlots(t *testing.T) {
	a := newAV(t, provider.AVTable)
	const n = 300
	for i := 0; i < n; i++ {
		fa := make([]provider.Addr, 1)
		if k, err := a.Insert([][]byte{addr(i)}, fa, 0, nil); k != 1 || err != nil || fa[0] != provider.Addr(i) {
			t.Fatalf("insert %d: %d %v %v", i, k, err, fa)
		}
	}
	check := func(step string, i int, want []byte) {
		t.Helper()
		if got := a.Lookup(provider.Addr(i)); !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("%s: Lookup(%d) = %v, want %v", step, i, got, want)
		}
	}
	for i := 0; i < n; i++ {
		check("inserted", i, addr(i))
	}
	check("past the end", n, nil)
	for i := 1; i < n; i += 2 {
		if err := a.Remove([]provider.Addr{provider.Addr(i)}, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if i%2 == 1 {
			check("removed", i, nil)
		} else {
			check("kept", i, addr(i))
		}
	}
	fa := make([]provider.Addr, 1)
	if k, err := a.Insert([][]byte{addr(1000 % 256)}, fa, 0, nil); k != 1 || err != nil || fa[0] != 1 {
		t.Fatalf("reinsert: %d %v %v", k, err, fa)
	}
	check("reused slot", 1, addr(1000%256))
	a.Close()
	check("closed", 0, nil)
}
