package fabric

import (
	"errors"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// testHook wraps fabrics in countingFabric, or fails when err is set.
type testHook struct {
	name string
	err  error
	n    int
}

func (h *testHook) Name() string { return h.name }

func (h *testHook) Fabric(attr *provider.FabricAttr, p provider.Provider, f provider.Fabric) (provider.Fabric, error) {
	h.n++
	if h.err != nil {
		return nil, h.err
	}
	return &countingFabric{Fabric: f, hook: h, prov: p.Name()}, nil
}

type countingFabric struct {
	provider.Fabric
	hook   *testHook
	prov   string
	closed int
}

func (f *countingFabric) Close() error { f.closed++; return f.Fabric.Close() }

var (
	hookA   = &testHook{name: "roottest-a"}
	hookB   = &testHook{name: "roottest-b"}
	hookErr = &testHook{name: "roottest-err", err: provider.EINVAL}
)

func init() {
	provider.RegisterHook(hookA)
	provider.RegisterHook(hookB)
	provider.RegisterHook(hookErr)
}

func fakeInfo() *Info {
	i := AllocInfo()
	i.FabricAttr.ProvName = fakeProvName
	return i
}

// TestHookFromEnv: FI_HOOK installs the named hooks, first innermost,
// ignores unknown names, and the fabric keeps the core provider's name.
func TestHookFromEnv(t *testing.T) {
	a0, b0 := hookA.n, hookB.n
	t.Setenv("FI_HOOK", "roottest-b, nosuchhook,roottest-a")
	f, err := Open(fakeInfo())
	if err != nil {
		t.Fatal(err)
	}
	if hookA.n != a0+1 || hookB.n != b0+1 {
		t.Fatalf("hooks called a %d b %d times, want 1 each", hookA.n-a0, hookB.n-b0)
	}
	outer, ok := f.f.(*countingFabric)
	if !ok || outer.hook != hookA {
		t.Fatalf("outer fabric %T, want roottest-a's", f.f)
	}
	inner, ok := outer.Fabric.(*countingFabric)
	if !ok || inner.hook != hookB || inner.prov != fakeProvName {
		t.Fatalf("inner fabric %T, want roottest-b's over %s", outer.Fabric, fakeProvName)
	}
	if f.Provider() != fakeProvName {
		t.Fatalf("Provider() = %q, want the core provider %q", f.Provider(), fakeProvName)
	}
	if err := f.Close(); err != nil || outer.closed != 1 || inner.closed != 1 {
		t.Fatalf("Close: %v, closed %d %d", err, outer.closed, inner.closed)
	}
}

// TestOpenHooked: explicit hooks replace FI_HOOK; none opens unhooked; a
// nil hook or nil info is FI_EINVAL; a failing hook fails the open.
func TestOpenHooked(t *testing.T) {
	t.Setenv("FI_HOOK", "roottest-a")
	a0, b0 := hookA.n, hookB.n
	f, err := OpenHooked(fakeInfo(), hookB)
	if err != nil {
		t.Fatal(err)
	}
	if hookA.n != a0 || hookB.n != b0+1 {
		t.Fatalf("hooks called a %d b %d times, want 0 and 1", hookA.n-a0, hookB.n-b0)
	}
	f.Close()
	f, err = OpenHooked(fakeInfo())
	if err != nil {
		t.Fatal(err)
	}
	if _, hooked := f.f.(*countingFabric); hooked || hookA.n != a0 {
		t.Fatalf("OpenHooked without hooks installed %T", f.f)
	}
	f.Close()
	if _, err := OpenHooked(fakeInfo(), nil); !errors.Is(err, ErrInval) {
		t.Fatalf("nil hook: %v", err)
	}
	if _, err := OpenHooked(nil, hookA); !errors.Is(err, ErrInval) {
		t.Fatalf("nil info: %v", err)
	}
	if _, err := OpenHooked(fakeInfo(), hookErr); !errors.Is(err, ErrInval) {
		t.Fatalf("failing hook: %v", err)
	}
}

func TestRegisterHookPanics(t *testing.T) {
	for name, h := range map[string]provider.Hook{"nil": nil, "duplicate": &testHook{name: "roottest-a"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterHook(%s) did not panic", name)
				}
			}()
			provider.RegisterHook(h)
		}()
	}
	if h, ok := provider.LookupHook("roottest-a"); !ok || h != hookA {
		t.Fatal("LookupHook(roottest-a)")
	}
}
