package sepctx

import (
	"bytes"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// fakeEP is a provider endpoint that remembers its info and whether it
// was closed.
type fakeEP struct {
	ci     *provider.Info
	closed bool
}

func (e *fakeEP) Progress()                        {}
func (e *fakeEP) Enable(*provider.Resources) error { return nil }
func (e *fakeEP) Close() error                     { e.closed = true; return nil }
func (e *fakeEP) Name() ([]byte, error)            { return append([]byte(nil), e.ci.SrcAddr...), nil }
func (e *fakeEP) Send(provider.Msg) error          { return nil }
func (e *fakeEP) Cancel(any) error                 { return provider.ENOENT }

// fakeOps records every endpoint opened; OpenRx fails with fail when it
// is set.
type fakeOps struct {
	opened []*fakeEP
	fail   error
}

func (f *fakeOps) ops() Ops[*fakeEP] {
	return Ops[*fakeEP]{
		Derive: deriveTest,
		OpenRx: func(_ int, ci *provider.Info) (*fakeEP, error) {
			if f.fail != nil {
				return nil, f.fail
			}
			ep := &fakeEP{ci: ci}
			f.opened = append(f.opened, ep)
			return ep, nil
		},
		TxAddr: func(name []byte, j int) []byte { return append(append([]byte(nil), name...), 't', byte('0'+j)) },
	}
}

func sepTestInfo(nTx, nRx uint64) *provider.Info {
	return &provider.Info{
		EPAttr: &provider.EPAttr{TxCtxCnt: nTx, RxCtxCnt: nRx},
		RxAttr: &provider.RxAttr{Size: 16},
	}
}

func TestSepOpenHandsOutReceiveContexts(t *testing.T) {
	var f fakeOps
	s, err := Open(sepTestInfo(2, 3), []byte("b"), 3, f.ops())
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := s.Name(); string(name) != "b" {
		t.Fatalf("name %q, want b", name)
	}
	if len(f.opened) != 3 || string(f.opened[1].ci.SrcAddr) != "b/1" || string(f.opened[2].ci.SrcAddr) != "b/2" {
		t.Fatalf("opened %d receive contexts", len(f.opened))
	}
	for _, ep := range f.opened {
		if ep.ci.EPAttr.TxCtxCnt != 1 || ep.ci.EPAttr.RxCtxCnt != 1 {
			t.Fatalf("context info %+v: want one context of each kind", ep.ci.EPAttr)
		}
	}
	// Receive context 1, as opened in advance.
	rx, err := s.RxContext(1, nil)
	if err != nil || Inner(rx) != f.opened[1] || len(f.opened) != 3 {
		t.Fatalf("RxContext(1): %v, %d opened", err, len(f.opened))
	}
	// Again: opened anew at its address.
	rx, err = s.RxContext(1, nil)
	if err != nil || len(f.opened) != 4 || Inner(rx) != f.opened[3] || string(f.opened[3].ci.SrcAddr) != "b/1" {
		t.Fatalf("RxContext(1) again: %v, %d opened", err, len(f.opened))
	}
	// Attributes of its own: the one opened in advance gives way.
	own := &provider.RxAttr{Size: 8}
	if rx, err = s.RxContext(2, own); err != nil || Inner(rx) != f.opened[4] || !f.opened[2].closed {
		t.Fatalf("RxContext(2, own): %v; old closed %v", err, f.opened[2].closed)
	}
	if got := f.opened[4].ci.RxAttr; got == own || *got != *own {
		t.Fatalf("context RxAttr %+v, want a copy of %+v", got, own)
	}
	for _, idx := range []int{-1, 3} {
		if _, err := s.RxContext(idx, nil); err != provider.EINVAL {
			t.Fatalf("RxContext(%d): %v, want EINVAL", idx, err)
		}
	}
	// Transmit contexts at TxAddr.
	tx, err := s.TxContext(1, nil)
	if err != nil || string(Inner(tx).(*fakeEP).ci.SrcAddr) != "bt1" {
		t.Fatalf("TxContext(1): %v", err)
	}
	for _, idx := range []int{-1, 2} {
		if _, err := s.TxContext(idx, nil); err != provider.EINVAL {
			t.Fatalf("TxContext(%d): %v, want EINVAL", idx, err)
		}
	}
	// Close closes receive context 0, never handed out, and only once.
	if err := s.Close(); err != nil || !f.opened[0].closed {
		t.Fatalf("close: %v, context 0 closed %v", err, f.opened[0].closed)
	}
	if err := s.Close(); err != provider.EBADF {
		t.Fatalf("second close: %v, want EBADF", err)
	}
	if _, err := s.RxContext(0, nil); err != provider.EBADF {
		t.Fatalf("RxContext after close: %v, want EBADF", err)
	}
	if _, err := s.TxContext(0, nil); err != provider.EBADF {
		t.Fatalf("TxContext after close: %v, want EBADF", err)
	}
}

func TestSepNewOpensOnDemand(t *testing.T) {
	var f fakeOps
	closed := 0
	ops := f.ops()
	ops.Close = func() { closed++ }
	ops.TxAddr = nil
	info := sepTestInfo(1, 2)
	info.SrcAddr = []byte("src")
	s := New(info, []byte("b"), ops)
	if len(f.opened) != 0 {
		t.Fatalf("New opened %d contexts", len(f.opened))
	}
	// At Derive(name, 0) (for the providers: the name itself).
	if _, err := s.RxContext(0, nil); err != nil || len(f.opened) != 1 || string(f.opened[0].ci.SrcAddr) != "b/0" {
		t.Fatalf("RxContext(0): %v", err)
	}
	// Without TxAddr, a transmit context keeps the source address.
	if _, err := s.TxContext(0, nil); err != nil || string(f.opened[1].ci.SrcAddr) != "src" {
		t.Fatalf("TxContext(0): %v", err)
	}
	f.fail = provider.ENOMEM
	if _, err := s.RxContext(1, nil); err != provider.ENOMEM {
		t.Fatalf("failed open: %v, want ENOMEM", err)
	}
	if err := s.Close(); err != nil || closed != 1 || f.opened[0].closed {
		t.Fatalf("close: %v, Ops.Close called %d times; handed-out context closed %v", err, closed, f.opened[0].closed)
	}
}

func TestOpenConsecutiveClosesOnError(t *testing.T) {
	var f fakeOps
	// deriveTest has no address beyond 5: EADDRINUSE, nothing left open.
	if _, err := Open(sepTestInfo(1, 7), []byte("b"), 7, f.ops()); err != provider.EADDRINUSE {
		t.Fatalf("7 contexts: %v, want EADDRINUSE", err)
	}
	if len(f.opened) != 6 {
		t.Fatalf("opened %d, want 6", len(f.opened))
	}
	for i, ep := range f.opened {
		if !ep.closed {
			t.Fatalf("context %d left open", i)
		}
	}
}

func TestRetry(t *testing.T) {
	for _, c := range []struct {
		fixed bool
		errs  []error
		calls int
		want  error
	}{
		{false, []error{provider.EADDRINUSE, nil}, 2, nil},
		{false, []error{provider.EADDRINUSE, provider.EADDRINUSE, provider.EADDRINUSE}, 3, provider.EADDRINUSE},
		{true, []error{provider.EADDRINUSE, nil}, 1, provider.EADDRINUSE},
		{false, []error{provider.EINVAL, nil}, 1, provider.EINVAL},
	} {
		calls := 0
		err := Retry(3, c.fixed, func() error {
			calls++
			return c.errs[calls-1]
		})
		if err != c.want || calls != c.calls {
			t.Errorf("fixed %v, errors %v: %v after %d calls, want %v after %d", c.fixed, c.errs, err, calls, c.want, c.calls)
		}
	}
}

func TestRxCount(t *testing.T) {
	for _, c := range []struct {
		tx, rx uint64
		n      int
		err    error
	}{
		{0, 0, 1, nil},
		{4, 4, 4, nil},
		{5, 1, 0, provider.EINVAL},
		{1, 5, 0, provider.EINVAL},
	} {
		if n, err := RxCount(sepTestInfo(c.tx, c.rx), 4); n != c.n || err != c.err {
			t.Errorf("RxCount(tx %d, rx %d): %d %v, want %d %v", c.tx, c.rx, n, err, c.n, c.err)
		}
	}
}

func TestDerivePort(t *testing.T) {
	base := []byte{2, 0, 0xff, 0xfe, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}
	got := DerivePort(base, 1)
	want := append([]byte(nil), base...)
	want[3] = 0xff
	if !bytes.Equal(got, want) {
		t.Fatalf("DerivePort(port 65534, 1) = %v, want %v", got, want)
	}
	if base[3] != 0xfe {
		t.Fatal("DerivePort modified base")
	}
	if DerivePort(base, 2) != nil || DerivePort(base[:3], 1) != nil {
		t.Fatal("an address beyond port 65535 or from a short base")
	}
}
