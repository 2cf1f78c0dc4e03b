package srx

import (
	"math/rand/v2"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// linearFind is the reference match: the first posted tagged receive, in
// posting order, that takes a message from addr with tag.
func linearFind(q *Queue, addr provider.Addr, tag uint64) *entry {
	for p := q.postedTag.head; p != nil; p = p.next {
		if addrMatch(p.rx.Addr, addr) && tagMatch(p.rx.Tag, p.rx.Ignore, tag) {
			return p
		}
	}
	return nil
}

// TestTagIndexMatchesPostingOrder: with receives of a few tags, wildcard
// ones (ignore bits) and directed ones posted and matched at random, the
// indexed search picks the receive a walk in posting order picks.
func TestTagIndexMatchesPostingOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, directed := range []bool{false, true} {
		q := New(Config{Tagged: true, Directed: directed, Size: 1 << 12})
		posted := 0
		for i := 0; i < 20000; i++ {
			if posted < 200 && r.IntN(2) == 0 {
				m := provider.Msg{Buf: make([]byte, 8), Tag: uint64(r.IntN(8)), Addr: provider.AddrUnspec,
					Context: i, Flags: provider.FlagCompletion}
				switch r.IntN(6) {
				case 0:
					m.Ignore = 0x3
				case 1:
					m.Ignore = ^uint64(0)
				case 2:
					m.Addr = provider.Addr(r.IntN(3))
				}
				if err := q.Post(&m, true); err != nil {
					t.Fatalf("post %d: %v", i, err)
				}
				posted++
				continue
			}
			addr, tag := provider.Addr(r.IntN(3)), uint64(r.IntN(8))
			want := linearFind(q, addr, tag)
			e, err := q.GetTag(addr, 8, tag)
			switch {
			case want == nil && err != provider.ENOENT:
				t.Fatalf("op %d: no receive matches tag %d from %d, got %v", i, tag, addr, err)
			case want == nil:
				q.FreeEntry(e)
			case err != nil:
				t.Fatalf("op %d: receive %v matches tag %d from %d, got %v", i, want.rx.Context, tag, addr, err)
			default:
				if e.Context != want.rx.Context {
					t.Fatalf("op %d: tag %d from %d matched receive %v, want %v (posting order)", i, tag, addr, e.Context, want.rx.Context)
				}
				q.FreeEntry(e)
				posted--
			}
		}
		q.Close()
	}
}

// BenchmarkMatchTagged: matching a tagged message against n posted
// receives of other tags, the matching one posted last.
func BenchmarkMatchTagged(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(itoa(n), func(b *testing.B) {
			q := New(Config{Tagged: true, Size: n + 16})
			buf := make([]byte, 8)
			for i := 0; i < n; i++ {
				if err := q.Post(&provider.Msg{Buf: buf, Tag: uint64(1000 + i), Addr: provider.AddrUnspec}, true); err != nil {
					b.Fatal(err)
				}
			}
			m := provider.Msg{Buf: buf, Tag: 1, Addr: provider.AddrUnspec}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := q.Post(&m, true); err != nil {
					b.Fatal(err)
				}
				e, err := q.GetTag(provider.AddrUnspec, 8, 1)
				if err != nil {
					b.Fatal(err)
				}
				q.FreeEntry(e)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		if n /= 10; n == 0 {
			return "posted=" + s
		}
	}
}
