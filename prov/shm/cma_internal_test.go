package shm

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

func patternBytes(n, k int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*11 + k*5 + i>>9)
	}
	return b
}

func post(t *testing.T, ep *endpoint, buf []byte, ctx any) {
	t.Helper()
	if err := ep.rq.(*srx.Queue).Post(&provider.Msg{Buf: buf, Context: ctx, Flags: provider.FlagCompletion}, false); err != nil {
		t.Fatal(err)
	}
}

// next progresses eps until c has an entry or an error entry, for 5 s.
func next(t *testing.T, c *cq.CQ, eps ...*endpoint) (provider.CQEntry, *provider.CQErrEntry) {
	t.Helper()
	var ent [1]provider.CQEntry
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		for _, ep := range eps {
			ep.Progress()
		}
		n, err := c.Read(ent[:])
		if n == 1 {
			return ent[0], nil
		}
		if err == provider.EAVAIL {
			var ee provider.CQErrEntry
			if err := c.ReadErr(&ee); err != nil {
				t.Fatal(err)
			}
			return provider.CQEntry{}, &ee
		}
	}
	t.Fatal("no completion within 5 s")
	return provider.CQEntry{}, nil
}

func send(t *testing.T, from *endpoint, to provider.Addr, buf []byte, ctx any) {
	t.Helper()
	if err := from.Send(provider.Msg{Buf: buf, Addr: to, Context: ctx, Flags: provider.FlagCompletion}); err != nil {
		t.Fatal(err)
	}
}

// TestCMAMatchedAndUnexpected: 1 MiB messages go by CMA, into a posted
// receive (single copy) and unexpected (pulled into provider memory, then
// delivered when the receive is posted), with every byte checked; and a
// short receive buffer truncates with FI_ETRUNC.
func TestCMAMatchedAndUnexpected(t *testing.T) {
	if ok, why := sys.CMAAvailable(); !ok {
		t.Skipf("CMA unavailable here: %s", why) // the fallback tests cover this case
	}
	a, acq, _ := testEP(t)
	b, bcq, bav := testEP(t)
	dst := insertName(t, bav, a.name)
	const size = 1 << 20
	for round, unexpected := range []bool{false, true} {
		got := make([]byte, size)
		msg := patternBytes(size, round)
		if !unexpected {
			post(t, a, got, "recv")
		}
		send(t, b, dst, msg, "send")
		if unexpected {
			for i := 0; i < 10; i++ {
				a.Progress()
			}
			post(t, a, got, "recv")
		}
		if e, ee := next(t, acq, a, b); ee != nil || e.Len != size || e.OpContext != "recv" {
			t.Fatalf("round %d: receive %+v %+v", round, e, ee)
		}
		if e, ee := next(t, bcq, a, b); ee != nil || e.OpContext != "send" {
			t.Fatalf("round %d: send %+v %+v", round, e, ee)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("round %d: data differs", round)
		}
	}
	if a.cma.pulls != 2 {
		t.Fatalf("%d CMA pulls, want 2", a.cma.pulls)
	}
	short := make([]byte, 100<<10)
	post(t, a, short, "short")
	msg := patternBytes(size, 7)
	send(t, b, dst, msg, "send")
	_, ee := next(t, acq, a, b)
	if ee == nil || ee.Err != provider.ETRUNC || ee.Len != uint64(len(short)) || ee.Olen != size-uint64(len(short)) {
		t.Fatalf("truncated receive: %+v, want FI_ETRUNC", ee)
	}
	if !bytes.Equal(short, msg[:len(short)]) {
		t.Fatal("truncated data differs")
	}
	if e, ee := next(t, bcq, a, b); ee != nil || e.OpContext != "send" {
		t.Fatalf("send of the truncated message: %+v %+v", e, ee)
	}
}

// TestCMARefusedFallsBack: a receiver that cannot read the sender answers
// "use segments": the sender sends the message segmented in its place (a
// message posted right after it arrives after it), remembers the peer,
// and sends its later large messages segmented at once.
func TestCMARefusedFallsBack(t *testing.T) {
	a, acq, _ := testEP(t)
	b, bcq, bav := testEP(t)
	a.cma.refused = map[uint64]bool{b.id: true}
	dst := insertName(t, bav, a.name)
	const size = 1 << 20
	bufs := [][]byte{make([]byte, size), make([]byte, 200<<10), make([]byte, size)}
	for i, buf := range bufs {
		post(t, a, buf, i)
	}
	msgs := [][]byte{patternBytes(size, 1), patternBytes(200<<10, 2), patternBytes(size, 3)}
	for i, m := range msgs {
		send(t, b, dst, m, i)
	}
	for i := range msgs {
		e, ee := next(t, acq, a, b)
		if ee != nil || e.OpContext != i || !bytes.Equal(bufs[i], msgs[i]) {
			t.Fatalf("message %d: %+v %+v (out of order or damaged)", i, e, ee)
		}
	}
	for range msgs {
		if _, ee := next(t, bcq, a, b); ee != nil {
			t.Fatalf("send: %+v", ee)
		}
	}
	if sys.CMAAvailable(); a.cma.pulls != 0 {
		t.Fatalf("%d pulls from a refused sender", a.cma.pulls)
	}
	b.tx.mu.Lock()
	st := b.cma.peers[a.id]
	b.tx.mu.Unlock()
	if ok, _ := sys.CMAAvailable(); ok && st != cmaRefused {
		t.Fatalf("sender's CMA state for the peer = %d, want refused", st)
	}
}

// TestCMABadRequests: requests with a damaged payload, or whose id word
// does not read back as the sender's id (another process, another pid
// namespace), consume no receive: a later message still lands in it.
func TestCMABadRequests(t *testing.T) {
	a, acq, _ := testEP(t)
	b, _, bav := testEP(t)
	dst := insertName(t, bav, a.name)
	p, e := b.peerFor(dst)
	if p == nil {
		t.Fatal(e)
	}
	got := make([]byte, 64)
	post(t, a, got, "recv")
	wrongID := binary.LittleEndian.AppendUint64(nil, b.id+1)
	buf := make([]byte, 1<<20)
	le := binary.LittleEndian
	rts := func(pid int, n uint32, idAddr uint64, ranges ...sys.RemoteIOV) []byte {
		pl := le.AppendUint32(nil, uint32(pid))
		pl = le.AppendUint32(pl, n)
		pl = le.AppendUint64(pl, idAddr)
		for _, r := range ranges {
			pl = le.AppendUint64(le.AppendUint64(pl, r.Base), r.Len)
		}
		return pl
	}
	whole := sys.IOVOf(buf)
	for i, pl := range [][]byte{
		nil,                    // no header
		rts(os.Getpid(), 0, 0), // no ranges
		rts(os.Getpid(), 5, 0, whole, whole, whole, whole, whole),        // too many
		rts(os.Getpid(), 2, 0, whole),                                    // count and length disagree
		rts(0, 1, 0, whole),                                              // no pid
		rts(os.Getpid(), 1, 0, sys.RemoteIOV{Base: whole.Base, Len: 10}), // short of the size
		rts(os.Getpid(), 1, sys.IOVOf(wrongID).Base, whole),              // id word of someone else
		rts(os.Getpid(), 1, 4096, whole),                                 // id word not mapped
	} {
		pos, cmd, ok := p.r.Reserve()
		if !ok {
			t.Fatal("queue full")
		}
		c := shmring.Cmd{Op: shmring.OpMsg, Flags: shmring.FlagInline | shmring.FlagDeliver | shmring.FlagCMA,
			Src: b.id, MsgID: 1000 + uint64(i), Size: uint64(len(buf))}
		if !shmring.Encode(cmd, &c, pl) {
			t.Fatal("encode")
		}
		p.r.Publish(pos)
		a.Progress()
		b.Progress() // takes the acks (unknown message ids: dropped)
	}
	if a.cma.pulls != 0 {
		t.Fatalf("%d pulls of bad requests", a.cma.pulls)
	}
	if !a.cma.refused[b.id] {
		t.Fatal("a sender whose id word does not read back is not refused")
	}
	send(t, b, dst, []byte("after the bad requests"), nil)
	if e, ee := next(t, acq, a, b); ee != nil || e.OpContext != "recv" || string(got[:e.Len]) != "after the bad requests" {
		t.Fatalf("receive after bad requests: %+v %+v", e, ee)
	}
}

// FuzzParseRTS: any request payload and message size is parsed without a
// panic, and one accepted names 1 to IOVLimit ranges adding up to the
// size, with a pid.
func FuzzParseRTS(f *testing.F) {
	le := binary.LittleEndian
	good := le.AppendUint32(nil, 1234)
	good = le.AppendUint32(good, 2)
	good = le.AppendUint64(good, 0x1000)
	good = le.AppendUint64(le.AppendUint64(good, 0x2000), 100)
	good = le.AppendUint64(le.AppendUint64(good, 0x9000), 28)
	f.Add(good, uint64(128))
	f.Add(good[:20], uint64(128))
	f.Add([]byte{}, uint64(0))
	f.Fuzz(func(t *testing.T, pl []byte, size uint64) {
		ep := &endpoint{}
		c := &shmring.Cmd{Payload: pl, Size: size}
		pid, riov, _, ok := ep.parseRTS(c)
		if !ok {
			return
		}
		var total uint64
		for _, r := range riov {
			total += r.Len
		}
		if pid <= 0 || len(riov) < 1 || len(riov) > IOVLimit || total != size {
			t.Fatalf("accepted pid %d, %d ranges of %d bytes for size %d", pid, len(riov), total, size)
		}
	})
}

// TestCMAKnownSenderReadBack: a request from a sender whose id word was
// read back before is checked by the pull itself; when the word no
// longer holds the sender's id (its pid now names another process), the
// receive completes with FI_ECONNRESET, and the next request is checked
// apart again.
func TestCMAKnownSenderReadBack(t *testing.T) {
	if ok, why := sys.CMAAvailable(); !ok {
		t.Skip(why)
	}
	a, acq, _ := testEP(t)
	b, _, bav := testEP(t)
	dst := insertName(t, bav, a.name)
	p, e := b.peerFor(dst)
	if p == nil {
		t.Fatal(e)
	}
	le := binary.LittleEndian
	msg := patternBytes(64<<10, 5)
	src := sys.IOVOf(msg)
	wrongID := le.AppendUint64(nil, b.id+1)
	push := func(msgID uint64, idAddr uint64) {
		pl := le.AppendUint32(nil, uint32(os.Getpid()))
		pl = le.AppendUint32(pl, 1)
		pl = le.AppendUint64(pl, idAddr)
		pl = le.AppendUint64(le.AppendUint64(pl, src.Base), src.Len)
		pos, cmd, ok := p.r.Reserve()
		if !ok {
			t.Fatal("queue full")
		}
		c := shmring.Cmd{Op: shmring.OpMsg, Flags: shmring.FlagInline | shmring.FlagDeliver | shmring.FlagCMA,
			Src: b.id, MsgID: msgID, Size: uint64(len(msg))}
		if !shmring.Encode(cmd, &c, pl) {
			t.Fatal("encode")
		}
		p.r.Publish(pos)
		a.Progress()
		b.Progress() // takes the ack (unknown message id: dropped)
	}
	own := sys.IOVOf(b.cma.idWord).Base
	for i, tc := range []struct {
		idAddr uint64
		ok     bool
	}{
		{own, true},                      // read back apart, then pulled
		{own, true},                      // known: checked by the pull
		{sys.IOVOf(wrongID).Base, false}, // known, but the word changed
		{own, true},                      // read back apart again
	} {
		got := make([]byte, len(msg))
		post(t, a, got, "recv")
		push(2000+uint64(i), tc.idAddr)
		e, ee := next(t, acq, a, b)
		switch {
		case tc.ok && (ee != nil || e.Len != uint64(len(msg)) || !bytes.Equal(got, msg)):
			t.Fatalf("request %d: %+v %+v", i, e, ee)
		case !tc.ok && (ee == nil || ee.Err != provider.ECONNRESET):
			t.Fatalf("request %d with a changed id word: %+v %+v, want FI_ECONNRESET", i, e, ee)
		}
		if known := a.cma.pids[b.id] == os.Getpid(); known != tc.ok {
			t.Fatalf("request %d: sender known = %v", i, known)
		}
	}
	if a.cma.refused[b.id] {
		t.Fatal("a known sender whose word changed is refused")
	}
}
