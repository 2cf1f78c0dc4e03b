package stx

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gofabric/fabric/provider"
)

func TestOpenLimits(t *testing.T) {
	lim := Limits{Caps: provider.CapMsg | provider.CapSend, MsgOrder: provider.OrderSAS,
		InjectSize: 64, Size: 128, IOVLimit: 4, RMAIOVLimit: 2}
	ok := provider.TxAttr{Caps: provider.CapMsg, MsgOrder: provider.OrderSAS, InjectSize: 64, Size: 16}
	for _, c := range []struct {
		name string
		edit func(a *provider.TxAttr)
	}{
		{"caps", func(a *provider.TxAttr) { a.Caps |= provider.CapTagged }},
		{"msg_order", func(a *provider.TxAttr) { a.MsgOrder |= provider.OrderRAW }},
		{"inject_size", func(a *provider.TxAttr) { a.InjectSize = 65 }},
		{"size", func(a *provider.TxAttr) { a.Size = 129 }},
		{"iov_limit", func(a *provider.TxAttr) { a.IOVLimit = 5 }},
		{"rma_iov_limit", func(a *provider.TxAttr) { a.RMAIOVLimit = 3 }},
	} {
		a := ok
		c.edit(&a)
		if _, err := Open(&a, lim); !errors.Is(err, provider.EINVAL) {
			t.Errorf("%s beyond the limit: %v, want EINVAL", c.name, err)
		}
	}
	if _, err := Open(nil, lim); !errors.Is(err, provider.EINVAL) {
		t.Errorf("nil attr: %v", err)
	}
	x, err := Open(&ok, lim)
	if err != nil {
		t.Fatal(err)
	}
	// Zero limits take the provider's; the rest is kept as asked.
	want := ok
	want.IOVLimit, want.RMAIOVLimit = 4, 2
	if got := x.Attr(); got != want {
		t.Errorf("Attr = %+v, want %+v", got, want)
	}
	zero, err := Open(&provider.TxAttr{}, lim)
	if err != nil || zero.Attr().Size != 128 {
		t.Errorf("zero attr: %+v %v, want size 128", zero.Attr(), err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); !errors.Is(err, provider.EINVAL) {
		t.Errorf("second Close: %v", err)
	}
}

// TestCreditsShared: goroutines taking and giving credits of one pool
// never hold more than its size together, and every credit comes back.
func TestCreditsShared(t *testing.T) {
	const size, workers, rounds = 3, 8, 2000
	c := NewCredits(size)
	if c.Size() != size {
		t.Fatalf("Size = %d", c.Size())
	}
	var held, most atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if !c.Take() {
					continue
				}
				h := held.Add(1)
				for m := most.Load(); h > m && !most.CompareAndSwap(m, h); m = most.Load() {
				}
				held.Add(-1)
				c.Give()
			}
		}()
	}
	wg.Wait()
	if most.Load() > size {
		t.Fatalf("%d credits held at once, size %d", most.Load(), size)
	}
	if c.Used() != 0 {
		t.Fatalf("%d credits not given back", c.Used())
	}
	for i := range size {
		if !c.Take() {
			t.Fatalf("Take %d of %d failed", i, size)
		}
	}
	if c.Take() {
		t.Fatal("Take beyond the size succeeded")
	}
	c.Give()
	if !c.Take() {
		t.Fatal("Take after a Give failed")
	}
	if NewCredits(0).Size() != 1 {
		t.Fatal("a pool of size 0 must have one credit")
	}
}
