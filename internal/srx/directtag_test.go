package srx

import (
	"strings"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// TestReceiveDirectTagMatches: the direct tagged path takes the receive
// GetTag would match (a tag's own receives and wildcards in posting
// order, directed receives by source), reports the message's tag and
// length, truncates what does not fit, and leaves the queue as GetTag
// and FreeEntry would.
func TestReceiveDirectTagMatches(t *testing.T) {
	q := New(Config{Tagged: true, Directed: true})
	p := newPeer(q)
	src := &fakeSource{cq: p.cq}
	bufs := map[string][]byte{}
	postT := func(name string, size int, tag, ignore uint64, addr provider.Addr) {
		t.Helper()
		bufs[name] = make([]byte, size)
		m := provider.Msg{Buf: bufs[name], Addr: addr, Context: name, Tag: tag, Ignore: ignore,
			Flags: provider.FlagCompletion}
		if err := q.Post(&m, true); err != nil {
			t.Fatalf("post %s: %v", name, err)
		}
	}
	postT("tag7", 8, 7, 0, provider.AddrUnspec)
	postT("wild", 8, 0, ^uint64(0), provider.AddrUnspec) // any tag, posted after tag7
	postT("from5", 8, 9, 0, 5)                           // tag 9 from source 5 only
	postT("tag9", 4, 9, 0, provider.AddrUnspec)

	step := func(addr provider.Addr, tag uint64, msg string, want string, wantSt DirectStatus) {
		t.Helper()
		src.msgs = [][]byte{[]byte(msg)}
		src.last = provider.RxEntry{}
		st := q.ReceiveDirectTag(src, addr, tag)
		if st != wantSt {
			t.Fatalf("tag %d from %d: status %v, want %v", tag, addr, st, wantSt)
		}
		if st != DirectDone {
			if len(src.msgs) != 1 {
				t.Fatal("the receiver was asked for the message")
			}
			return
		}
		if src.last.Context != want || src.last.Tag != tag || src.last.MsgSize != uint64(len(msg)) {
			t.Fatalf("tag %d from %d: entry %+v, want receive %s", tag, addr, src.last, want)
		}
	}
	// tag 7: its own receive, posted before the wildcard.
	step(1, 7, "seven", "tag7", DirectDone)
	if c := mustOne(t, p.cq.take()); c.OpContext != "tag7" || c.Tag != 7 || c.Len != 5 || string(bufs["tag7"][:5]) != "seven" {
		t.Fatalf("completion %+v", c)
	}
	// tag 7 again: now the wildcard is the first match.
	step(1, 7, "again", "wild", DirectDone)
	p.cq.take()
	// tag 9 from 5: the directed receive, posted first.
	step(5, 9, "fromfive", "from5", DirectDone)
	p.cq.take()
	// tag 9 from 6: the any-source tag 9 receive, which is too short.
	step(6, 9, "truncated", "tag9", DirectDone)
	if r := p.cq.take(); len(r.err) != 1 || r.err[0].Err != provider.ETRUNC || r.err[0].Olen != 5 ||
		r.err[0].Tag != 9 || string(bufs["tag9"]) != "trun" {
		t.Fatalf("truncation: %+v", r)
	}
	// Nothing posted matches: the message is unexpected, for GetTag.
	step(1, 11, "none", "", DirectUnavailable)
	if np, nu := q.Counts(); np != 0 || nu != 0 {
		t.Fatalf("counts %d %d, want 0 0", np, nu)
	}
	if _, err := q.GetTag(1, 4, 11); err != provider.ENOENT {
		t.Fatalf("GetTag after: %v, want ENOENT", err)
	}
}

func TestReceiveDirectTagUnavailable(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, q *Queue)
	}{
		{"nothing posted", func(t *testing.T, q *Queue) {}},
		{"untagged receive only", func(t *testing.T, q *Queue) {
			post(t, q, make([]byte, 8), nil, false, 0, 0, 0)
		}},
		{"other tag", func(t *testing.T, q *Queue) {
			post(t, q, make([]byte, 8), nil, true, 2, 0, 0)
		}},
		{"multi-receive buffer", func(t *testing.T, q *Queue) {
			post(t, q, make([]byte, 64), nil, true, 1, 0, provider.FlagMultiRecv)
		}},
		{"buffered mode", func(t *testing.T, q *Queue) {
			q.SetBuffered(&BufConfig{Limit: 64})
			post(t, q, make([]byte, 8), nil, true, 1, 0, 0)
		}},
		{"closed", func(t *testing.T, q *Queue) {
			post(t, q, make([]byte, 8), nil, true, 1, 0, 0)
			q.Close()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := New(Config{Tagged: true})
			newPeer(q)
			c.setup(t, q)
			src := &fakeSource{msgs: [][]byte{[]byte("x")}}
			if st := q.ReceiveDirectTag(src, 1, 1); st != DirectUnavailable {
				t.Fatalf("status %v, want DirectUnavailable", st)
			}
			if src.calls != 0 {
				t.Fatal("the receiver was called")
			}
		})
	}
}

// TestScatter: data is spread over the buffers in order, empty ones are
// skipped, and what does not fit is not placed.
func TestScatter(t *testing.T) {
	p := []byte("abcdefghij")
	for _, tc := range []struct {
		sizes []int
		want  string // the buffers' contents, joined by |
		n     int
	}{
		{[]int{16}, "abcdefghij", 10},
		{[]int{4}, "abcd", 4},
		{[]int{3, 0, 4, 8}, "abc||defg|hij", 10},
		{[]int{2, 3}, "ab|cde", 5},
		{nil, "", 0},
	} {
		iov := make([][]byte, len(tc.sizes))
		for i, s := range tc.sizes {
			iov[i] = make([]byte, s)
		}
		n := Scatter(iov, p)
		var got []string
		placed := n
		for _, b := range iov {
			k := min(len(b), placed)
			got = append(got, string(b[:k]))
			placed -= k
		}
		if n != tc.n || strings.Join(got, "|") != tc.want {
			t.Errorf("sizes %v: placed %d %q, want %d %q", tc.sizes, n, strings.Join(got, "|"), tc.n, tc.want)
		}
	}
}
