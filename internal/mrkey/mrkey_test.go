package mrkey

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gofabric/fabric/provider"
)

const rw = provider.FlagRemoteRead | provider.FlagRemoteWrite

type cntr struct{ n, e atomic.Int64 }

func (c *cntr) Inc()    { c.n.Add(1) }
func (c *cntr) IncErr() { c.e.Add(1) }

func TestRequestedKeys(t *testing.T) {
	tb := New(Config{})
	buf := make([]byte, 64)
	r, err := tb.Register([][]byte{buf}, rw, 0, 0xC0DE, true)
	if err != nil || r.Key() != 0xC0DE {
		t.Fatalf("%v %v", r, err)
	}
	if _, err := tb.Register([][]byte{buf}, rw, 0, 0xC0DE, true); err != provider.ENOKEY {
		t.Fatalf("duplicate key: %v", err)
	}
	tb.Unregister(r)
	tb.Unregister(r) // idempotent
	if _, err := tb.Register([][]byte{buf}, rw, 0, 0xC0DE, true); err != nil {
		t.Fatalf("re-register after close: %v", err)
	}
	small := New(Config{KeySize: 2})
	if _, err := small.Register([][]byte{buf}, rw, 0, 0x10000, true); err != provider.EKEYREJECTED {
		t.Fatalf("key too large: %v", err)
	}
	if _, err := small.Register([][]byte{buf}, rw, 0, 0xFFFF, true); err != nil {
		t.Fatalf("largest key: %v", err)
	}
	if _, err := tb.Register([][]byte{buf}, provider.FlagInject, 0, 1, true); err != provider.EINVAL {
		t.Fatalf("bad access: %v", err)
	}
}

func TestProvKeysUnique(t *testing.T) {
	tb := New(Config{ProvKey: true})
	seen := map[uint64]bool{}
	buf := make([]byte, 8)
	for i := 0; i < 100; i++ {
		r, err := tb.Register([][]byte{buf}, rw, 0, 7, true) // requested key ignored
		if err != nil {
			t.Fatal(err)
		}
		if seen[r.Key()] {
			t.Fatalf("key %d reused", r.Key())
		}
		seen[r.Key()] = true
	}
	if tb.Len() != 100 {
		t.Fatalf("len %d", tb.Len())
	}
	// Wrap-around skips keys in use.
	w := New(Config{ProvKey: true, KeySize: 1})
	var regs []*Region
	for i := 0; i < 255; i++ {
		r, err := w.Register([][]byte{buf}, rw, 0, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, r)
	}
	w.Unregister(regs[10])
	r, err := w.Register([][]byte{buf}, rw, 0, 0, true)
	if err != nil || r.Key() != regs[10].Key() {
		t.Fatalf("wrapped key %v %v", r, err)
	}
}

func TestOffsetAddressing(t *testing.T) {
	tb := New(Config{})
	buf := []byte("0123456789")
	r, _ := tb.Register([][]byte{buf}, rw, 0, 1, true)
	if r.Base() != 0 || r.Len() != 10 {
		t.Fatalf("base %d len %d", r.Base(), r.Len())
	}
	b, err := tb.Access(1, 2, 3, provider.FlagRemoteRead)
	if err != nil || string(b) != "234" || cap(b) != 3 {
		t.Fatalf("%q %v", b, err)
	}
	b[0] = 'x'
	if buf[2] != 'x' {
		t.Fatal("Access did not return the registered memory")
	}
	if b, err := tb.Access(1, 10, 0, provider.FlagRemoteWrite); err != nil || len(b) != 0 {
		t.Fatalf("empty access at end: %v %v", b, err)
	}
	// offset moves the base.
	r2, _ := tb.Register([][]byte{buf}, rw, 1000, 2, true)
	if r2.Base() != 1000 {
		t.Fatal(r2.Base())
	}
	if b, err := tb.Access(2, 1009, 1, provider.FlagRemoteRead); err != nil || string(b) != "9" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := tb.Access(2, 999, 1, provider.FlagRemoteRead); err != provider.EINVAL {
		t.Fatalf("below base: %v", err)
	}
}

func TestErrors(t *testing.T) {
	tb := New(Config{})
	buf := make([]byte, 16)
	tb.Register([][]byte{buf}, provider.FlagRemoteRead, 0, 5, true)
	cases := []struct {
		key, addr, len uint64
		acc            provider.Flags
		want           error
	}{
		{6, 0, 1, provider.FlagRemoteRead, provider.EKEYREJECTED},
		{5, 0, 1, provider.FlagRemoteWrite, provider.EACCES},
		{5, 0, 17, provider.FlagRemoteRead, provider.EINVAL},
		{5, 16, 1, provider.FlagRemoteRead, provider.EINVAL},
		{5, 17, 0, provider.FlagRemoteRead, provider.EINVAL},
		{5, ^uint64(0), 2, provider.FlagRemoteRead, provider.EINVAL},
		{5, 8, ^uint64(0), provider.FlagRemoteRead, provider.EINVAL},
		{5, 0, 16, provider.FlagRemoteRead, nil},
	}
	for _, c := range cases {
		_, err := tb.Access(c.key, c.addr, c.len, c.acc)
		if err != c.want && !(err == nil && c.want == nil) {
			t.Errorf("Access(%d,%d,%d,%v) = %v, want %v", c.key, c.addr, c.len, c.acc, err, c.want)
		}
	}
}

func TestVirtAddr(t *testing.T) {
	tb := New(Config{VirtAddr: true, ProvKey: true})
	buf := make([]byte, 32)
	r, _ := tb.Register([][]byte{buf}, rw, 0, 0, true)
	if r.Base() == 0 {
		t.Fatal("virtual address base is 0")
	}
	b, err := tb.Access(r.Key(), r.Base()+4, 4, provider.FlagRemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	copy(b, "abcd")
	if string(buf[4:8]) != "abcd" {
		t.Fatalf("%q", buf)
	}
	if _, err := tb.Access(r.Key(), 4, 4, provider.FlagRemoteWrite); err != provider.EINVAL {
		t.Fatalf("offset address in VIRT_ADDR mode: %v", err)
	}
}

func TestVectorRegistration(t *testing.T) {
	tb := New(Config{})
	big := make([]byte, 100)
	for i := range big {
		big[i] = byte(i)
	}
	// Adjacent pieces of one buffer merge into one segment.
	r, _ := tb.Register([][]byte{big[:30], big[30:60], big[60:]}, rw, 0, 1, true)
	if len(r.Segs()) != 1 || r.Len() != 100 {
		t.Fatalf("segs %d len %d", len(r.Segs()), r.Len())
	}
	if b, err := tb.Access(1, 25, 10, provider.FlagRemoteRead); err != nil || b[0] != 25 || len(b) != 10 {
		t.Fatalf("%v %v", b, err)
	}
	// Separate buffers stay separate; Segments spans them.
	a, c := []byte("aaaa"), []byte("cccc")
	r2, _ := tb.Register([][]byte{a, c}, rw, 0, 2, true)
	if len(r2.Segs()) != 2 || r2.Len() != 8 {
		t.Fatalf("segs %d", len(r2.Segs()))
	}
	if b, err := tb.Access(2, 4, 4, provider.FlagRemoteRead); err != nil || string(b) != "cccc" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := tb.Access(2, 2, 4, provider.FlagRemoteRead); err != provider.EINVAL {
		t.Fatalf("spanning Access: %v", err)
	}
	parts, err := tb.Segments(2, 2, 4, provider.FlagRemoteRead, nil)
	if err != nil || len(parts) != 2 || !bytes.Equal(bytes.Join(parts, nil), []byte("aacc")) {
		t.Fatalf("%q %v", parts, err)
	}
	if _, err := tb.Segments(2, 2, 40, provider.FlagRemoteRead, nil); err != provider.EINVAL {
		t.Fatalf("Segments out of range: %v", err)
	}
	// Zero-length registrations.
	r3, err := tb.Register([][]byte{{}}, rw, 0, 3, true)
	if err != nil || r3.Len() != 0 {
		t.Fatal(err)
	}
	if b, err := tb.Access(3, 0, 0, provider.FlagRemoteRead); err != nil || len(b) != 0 {
		t.Fatalf("%v %v", b, err)
	}
	if _, err := tb.Register(nil, rw, 0, 4, true); err != nil {
		t.Fatal(err)
	}
}

func TestEnableAndEvents(t *testing.T) {
	tb := New(Config{})
	buf := make([]byte, 8)
	r, _ := tb.Register([][]byte{buf}, rw, 0, 9, false)
	if _, err := tb.Access(9, 0, 1, provider.FlagRemoteWrite); err != provider.EKEYREJECTED {
		t.Fatalf("access before enable: %v", err)
	}
	wc, rc := &cntr{}, &cntr{}
	if err := r.Bind(wc, provider.FlagRemoteWrite); err != nil {
		t.Fatal(err)
	}
	if err := r.Bind(rc, provider.FlagRemoteRead); err != nil {
		t.Fatal(err)
	}
	if err := r.Bind(wc, provider.FlagSend); err != provider.EBADFLAGS {
		t.Fatalf("bad bind flags: %v", err)
	}
	if err := r.Bind(nil, provider.FlagRemoteWrite); err != provider.EINVAL {
		t.Fatalf("nil counter: %v", err)
	}
	if err := r.Enable(); err != nil {
		t.Fatal(err)
	}
	if err := r.Bind(wc, provider.FlagRemoteWrite); err != provider.EOPBADSTATE {
		t.Fatalf("bind after enable: %v", err)
	}
	if _, err := tb.Access(9, 0, 1, provider.FlagRemoteWrite); err != nil {
		t.Fatal(err)
	}
	tb.Event(9, provider.FlagRemoteWrite)
	tb.Event(9, provider.FlagRemoteWrite)
	tb.Event(9, provider.FlagRemoteRead)
	tb.Event(10, provider.FlagRemoteRead) // unknown key: nothing
	if wc.n.Load() != 2 || rc.n.Load() != 1 {
		t.Fatalf("write %d read %d", wc.n.Load(), rc.n.Load())
	}
	// A region created enabled accepts bindings at any time.
	r2, _ := tb.Register([][]byte{buf}, rw, 0, 11, true)
	if err := r2.Bind(wc, provider.FlagRemoteWrite); err != nil {
		t.Fatal(err)
	}
	tb.Unregister(r)
	if _, err := tb.Access(9, 0, 1, provider.FlagRemoteWrite); err != provider.EKEYREJECTED {
		t.Fatalf("access after close: %v", err)
	}
	if err := r.Enable(); err != provider.EBADF {
		t.Fatalf("enable after close: %v", err)
	}
}

func TestAccessAllocs(t *testing.T) {
	tb := New(Config{})
	buf := make([]byte, 64)
	r, _ := tb.Register([][]byte{buf}, rw, 0, 1, true)
	r.Bind(&cntr{}, provider.FlagRemoteWrite)
	if a := testing.AllocsPerRun(1000, func() {
		if _, err := tb.Access(1, 8, 8, provider.FlagRemoteWrite); err != nil {
			t.Fatal(err)
		}
		tb.Event(1, provider.FlagRemoteWrite)
	}); a != 0 {
		t.Fatalf("%v allocs per Access+Event", a)
	}
}

func TestConcurrent(t *testing.T) {
	tb := New(Config{ProvKey: true})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 16)
			for i := 0; i < 200; i++ {
				r, err := tb.Register([][]byte{buf}, rw, 0, 0, true)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := tb.Access(r.Key(), 0, 16, provider.FlagRemoteRead); err != nil {
					t.Error(err)
					return
				}
				tb.Unregister(r)
			}
		}()
	}
	wg.Wait()
	if tb.Len() != 0 {
		t.Fatalf("len %d", tb.Len())
	}
}
