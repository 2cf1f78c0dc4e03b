package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unsafe"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

func TestConstants(t *testing.T) {
	if len(constChecks) < 200 {
		t.Fatalf("only %d constants checked", len(constChecks))
	}
	for _, c := range constChecks {
		if c.goVal != c.cVal {
			t.Errorf("provider.%s = %#x, C %s = %#x", c.goName, c.goVal, c.cName, c.cVal)
		}
	}
	// WaitObj differs from C on purpose for these two; the conversion must
	// map them (see provider.WaitObj).
	if cWaitNone != 0 || cWaitUnspec != 1 || int(provider.WaitNone) != 1 || int(provider.WaitUnspec) != 0 {
		t.Errorf("wait objects: C NONE %d UNSPEC %d; Go NONE %d UNSPEC %d",
			cWaitNone, cWaitUnspec, provider.WaitNone, provider.WaitUnspec)
	}
}

func TestOpsTablesHaveNoNULL(t *testing.T) {
	if n := opsNulls(); n != 0 {
		t.Fatalf("%d NULL entries (or unset sizes) in the ops tables", n)
	}
}

func TestHandleTable(t *testing.T) {
	var tb handleTable
	a, ok := tb.add("a")
	if !ok {
		t.Fatal("add failed")
	}
	b, _ := tb.add("b")
	if tb.get(a) != "a" || tb.get(b) != "b" || tb.count() != 2 {
		t.Fatalf("get = %v %v count %d", tb.get(a), tb.get(b), tb.count())
	}
	for _, h := range []uint64{0, 1, a + 1<<32, a ^ 0xffff, 1<<63 | uint64(handleMaxChunks*handleChunkSize)} {
		if v := tb.get(h); v != nil {
			t.Errorf("get(forged %#x) = %v", h, v)
		}
	}
	if !tb.remove(a) || tb.remove(a) || tb.get(a) != nil || tb.count() != 1 {
		t.Fatalf("remove: stale handle still live")
	}
	c, _ := tb.add("c") // reuses a's slot with a new generation
	if uint32(c) != uint32(a) || c == a {
		t.Errorf("slot reuse: a %#x c %#x", a, c)
	}
	if tb.get(a) != nil || tb.get(c) != "c" {
		t.Errorf("stale handle reads the new object")
	}
	if n := testing.AllocsPerRun(100, func() { _ = tb.get(c) }); n != 0 {
		t.Errorf("get allocates %v", n)
	}
	// Many objects span chunks.
	var hs []uint64
	for i := 0; i < 3*handleChunkSize; i++ {
		h, _ := tb.add(i)
		hs = append(hs, h)
	}
	for i, h := range hs {
		if tb.get(h) != i {
			t.Fatalf("get(%#x) = %v, want %d", h, tb.get(h), i)
		}
		tb.remove(h)
	}
	if tb.count() != 2 { // b and c
		t.Errorf("count %d, want 2", tb.count())
	}
}

func TestLookupType(t *testing.T) {
	h, _ := handles.add(&goDomain{})
	defer handles.remove(h)
	if _, ok := lookup[*goFabric](h); ok {
		t.Error("a domain handle looked up as a fabric")
	}
	if _, ok := lookup[*goDomain](h); !ok {
		t.Error("domain handle not found")
	}
}

func TestCtx(t *testing.T) {
	for _, u := range []uintptr{0, 1, 7, 255, 256, 4095, 4096, 0x7fff12345678, ^uintptr(0)} {
		v := ctxToGo(u)
		if got := ctxToC(v); got != u {
			t.Errorf("ctx %#x: round trip %#x (%T)", u, got, v)
		}
		if _, isPtr := v.(unsafe.Pointer); isPtr != (u >= minPointer) {
			t.Errorf("ctx %#x carried as %T", u, v)
		}
	}
	if ctxToGo(0) != nil || ctxToC(nil) != 0 || ctxToC("go value") != 0 {
		t.Error("nil <-> NULL")
	}
	for _, u := range []uintptr{3, 255, 4096, 0x7fff12345678} {
		if n := testing.AllocsPerRun(100, func() { _ = ctxToC(ctxToGo(u)) }); n != 0 {
			t.Errorf("ctx %#x: %v allocs", u, n)
		}
	}
}

func TestErrno(t *testing.T) {
	_, err := fabric.GetInfo(fabric.Version(9, 0), "", "", 0, nil)
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{provider.EAGAIN, -11},
		{provider.ENODATA, -61},
		{provider.EOPBADSTATE, -258},
		{fmt.Errorf("wrapped: %w", provider.EBUSY), -16},
		{err, -38}, // an *OpError matching ErrNoSys
		{errors.New("plain"), -256},
	} {
		if got := int(errno(c.err)); got != c.want {
			t.Errorf("errno(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if errnoSize(provider.EAGAIN) != -11 {
		t.Error("errnoSize")
	}
}

func TestRecoverRC(t *testing.T) {
	var logged bytes.Buffer
	provider.SetLogHandler(slog.NewTextHandler(&logged, nil))
	t.Cleanup(func() { provider.SetLogHandler(nil) })
	f := func() (rc int32) {
		defer recoverRC("test", &rc)
		var s []int
		return int32(s[len(s)]) // panics: index out of range
	}
	if rc := f(); rc != -256 {
		t.Errorf("rc after panic = %d, want -FI_EOTHER", rc)
	}
	if out := logged.String(); !strings.Contains(out, "panic in C entry point") || !strings.Contains(out, "op=test") ||
		!strings.Contains(out, "index out of range") {
		t.Errorf("panic not logged with its op and value: %q", out)
	}
	g := func() (rc int64) {
		defer recoverRC("test", &rc)
		return 5
	}
	if rc := g(); rc != 5 {
		t.Errorf("rc without panic = %d", rc)
	}
}

func TestNames(t *testing.T) {
	got := map[string]bool{}
	for _, n := range cNames() {
		got[n] = true
	}
	if !got["gotcp"] || !got["goudp"] {
		t.Fatalf("C names %v lack gotcp/goudp", cNames())
	}
	for c, g := range map[string]string{"gotcp": "tcp", "GOUDP": "udp", "gotcp;ofi_rxm": "tcp;ofi_rxm", "tcp": "tcp", "": ""} {
		if got := goProvName(c); got != g {
			t.Errorf("goProvName(%q) = %q, want %q", c, got, g)
		}
	}
	if cProvName("udp") != "goudp" || cProvName("verbs") != "verbs" {
		t.Error("cProvName")
	}
	if slotOf("gotcp") < 0 || slotOf("tcp") != -1 {
		t.Error("slotOf")
	}
}

// TestInfoRoundTrip converts every Info our providers return to C and
// back: nothing is lost but the provider name, which infoToC maps.
func TestInfoRoundTrip(t *testing.T) {
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		in.DomainAttr.AuthKey = []byte{1, 2, 3}
		in.EPAttr.AuthKey = []byte{4}
		in.DestAddr = in.SrcAddr
		ci := infoToC(in)
		if ci == nil {
			t.Fatal("infoToC: nil")
		}
		back, err := infoFromC(ci)
		freeInfoForTest(ci)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := fabric.InfoToString(in), fabric.InfoToString(back); a != b {
			t.Errorf("round trip differs:\n%s\n%s", a, b)
		}
	}
	if _, err := infoFromC(nil); !errors.Is(err, provider.EINVAL) {
		t.Errorf("infoFromC(nil) = %v", err)
	}
}
