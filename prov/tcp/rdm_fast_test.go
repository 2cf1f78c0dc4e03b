package tcp

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/provider"
)

// rxSeen is a receive completion with what TestRDMEagerFastPaths checks.
type rxSeen struct {
	ctx   int
	len   uint64
	data  uint64
	tag   uint64
	flags provider.Flags
	err   provider.Errno
}

func pollRx(q *cq.CQ, out []rxSeen) []rxSeen {
	var e [32]provider.CQEntry
	for {
		k, err := q.Read(e[:])
		for _, x := range e[:max(k, 0)] {
			out = append(out, rxSeen{ctx: x.OpContext.(int), len: x.Len, data: x.Data, tag: x.Tag, flags: x.Flags})
		}
		if err == provider.EAVAIL {
			var ee provider.CQErrEntry
			if q.ReadErr(&ee) == nil {
				out = append(out, rxSeen{ctx: ee.OpContext.(int), len: ee.Len, data: ee.Data, tag: ee.Tag, flags: ee.Flags, err: ee.Err})
			}
			continue
		}
		if k <= 0 {
			return out
		}
	}
}

// TestRDMEagerFastPaths drives the eager fast paths both ways: sends
// written from the caller's call (sendNow; below rdmCopyMax copied after
// the header, above it gathered from the caller's buffers, one buffer or
// several) and, while the receiver does not read, the same sends queued
// in part or whole behind what the socket did not take; receives taken
// straight into the first posted receive (srx.Queue.ReceiveDirect),
// truncated ones included, with and without remote CQ data and send
// completions. Every message arrives once, in order, intact; every send
// that asked for a completion gets exactly one.
func TestRDMEagerFastPaths(t *testing.T) {
	for _, tagged := range []bool{false, true} {
		name := "msg"
		if tagged {
			name = "tagged" // each receive takes its own tag, srx.Queue.ReceiveDirectTag
		}
		t.Run(name, func(t *testing.T) { testEagerFastPaths(t, tagged) })
	}
}

func testEagerFastPaths(t *testing.T, tagged bool) {
	leakCheck(t)
	a, b := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	for _, x := range []*fltNode{a, b} {
		// Small socket buffers (FI_OPT_RECV_BUF_SIZE / SEND_BUF_SIZE), so
		// that the sends below fill them while b does not read.
		x.ep.mu.Lock()
		x.ep.sockBuf = [2]int{64 << 10, 64 << 10}
		x.ep.mu.Unlock()
	}
	ab := a.mustInsert(t, b.name)
	sizes := []int{0, 1, 64, rdmCopyMax, rdmCopyMax + 1, 4096, 16384}
	const n = 1000 // about 3 MiB: more than the sockets hold while b does not read
	size := func(i int) int { return sizes[i%len(sizes)] }
	msg := func(i int) []byte {
		m := make([]byte, size(i))
		if len(m) >= 8 {
			binary.LittleEndian.PutUint64(m, uint64(i))
			pattern(m[8:], i)
		} else {
			pattern(m, i)
		}
		return m
	}
	// Receive i's buffer: every 5th is 100 bytes short (FI_ETRUNC
	// when the message is longer).
	rbuf := make([][]byte, n)
	for i := range rbuf {
		l := size(i)
		if i%5 == 4 {
			l = max(l-100, 0)
		}
		rbuf[i] = make([]byte, l)
		m := provider.Msg{Buf: rbuf[i], Addr: provider.AddrUnspec, Tag: uint64(i), Context: i, Flags: provider.FlagCompletion}
		if err := b.rq.Post(&m, tagged); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
	}
	// Connect first, so that the sends below find the connection up.
	if err := a.send(ab, nil, true, 1<<60, "hello"); err != nil {
		t.Fatal(err)
	}
	hello := make([]byte, 0)
	hm := provider.Msg{Buf: hello, Addr: provider.AddrUnspec, Tag: 1 << 60, Context: n, Flags: provider.FlagCompletion}
	if err := b.rq.Post(&hm, true); err != nil {
		t.Fatal(err)
	}
	if got := pollRxUntil(t, b, a, 1); got[0].ctx != n {
		t.Fatalf("hello: %+v", got[0])
	}
	waitComps(t, a.tx, 1, waitLimit, b)
	wantComp := 0
	for i := 0; i < n; i++ {
		m := provider.Msg{Addr: ab, Tag: uint64(i), Context: i, Flags: provider.FlagCompletion}
		data := msg(i)
		switch i % 3 {
		case 0:
			m.Buf = data
		case 1: // two buffers
			h := len(data) / 2
			m.IOV = [][]byte{data[:h], data[h:]}
		case 2: // inject: no completion
			m.Buf = data
			m.Flags = provider.FlagInject
		}
		if i%4 == 1 {
			m.Flags |= provider.FlagRemoteCQData
			m.Data = uint64(i) * 3
		}
		if m.Flags&provider.FlagCompletion != 0 {
			wantComp++
		}
		if i%100 == 99 {
			// Now and then b reads and a's queue drains: sendNow
			// again after queued frames.
			for k := 0; k < 50; k++ {
				b.ep.Progress()
				a.ep.Progress()
			}
		}
		for {
			var err error
			if tagged {
				err = a.ep.TSend(m)
			} else {
				err = a.ep.Send(m)
			}
			if err == nil {
				break
			}
			if err != provider.EAGAIN {
				t.Fatalf("send %d: %v", i, err)
			}
			a.ep.Progress() // tx_attr.size reached: the receiver catches up below
			b.ep.Progress()
		}
	}
	got := pollRxUntil(t, b, a, n)
	for k, c := range got {
		if c.ctx != k {
			t.Fatalf("receive %d completed as receive %d: out of order", k, c.ctx)
		}
		want := msg(k)
		l := len(rbuf[k])
		switch {
		case l < len(want):
			if c.err != provider.ETRUNC || c.len != uint64(l) {
				t.Fatalf("receive %d (%d of %d bytes): %+v, want FI_ETRUNC", k, l, len(want), c)
			}
		case c.err != 0 || c.len != uint64(len(want)):
			t.Fatalf("receive %d: %+v, want %d bytes", k, c, len(want))
		}
		if !bytes.Equal(rbuf[k], want[:l]) {
			t.Fatalf("receive %d: data damaged", k)
		}
		if tagged && c.tag != uint64(k) {
			t.Fatalf("receive %d: tag %d", k, c.tag)
		}
		if has := c.flags&provider.FlagRemoteCQData != 0; has != (k%4 == 1) || (has && c.data != uint64(k)*3) {
			t.Fatalf("receive %d: flags %v data %d", k, c.flags, c.data)
		}
	}
	sent := waitComps(t, a.tx, wantComp, waitLimit, b)
	seen := map[any]bool{}
	for _, c := range sent {
		if c.err != 0 || seen[c.ctx] || c.ctx.(int)%3 == 2 {
			t.Fatalf("send completion %+v (twice: %v)", c, seen[c.ctx])
		}
		seen[c.ctx] = true
	}
	a.ep.mu.Lock()
	nowSent, nowQueued := a.ep.nowSent, a.ep.nowQueued
	a.ep.mu.Unlock()
	b.ep.mu.Lock()
	direct := b.ep.directRecv
	b.ep.mu.Unlock()
	t.Logf("sendNow: %d written whole, %d queued; %d receives direct", nowSent, nowQueued, direct)
	// n receives and the tagged hello.
	if nowSent == 0 || nowQueued == 0 || direct != n+1 {
		t.Fatalf("the fast paths were not all taken: %d written whole, %d queued, %d of %d receives direct",
			nowSent, nowQueued, direct, n+1)
	}
}

// pollRxUntil reads want receive completions from n, progressing others.
func pollRxUntil(t *testing.T, n, other *fltNode, want int) []rxSeen {
	t.Helper()
	var got []rxSeen
	deadline := time.Now().Add(waitLimit)
	for len(got) < want {
		got = pollRx(n.rx, got)
		other.ep.Progress()
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d receive completions within %v", len(got), want, waitLimit)
		}
	}
	return got
}
