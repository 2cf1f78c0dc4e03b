package fabtest

import (
	"bytes"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// bufferedSizes are the message sizes of the cross-process buffered
// receive case, up to max_msg_size: whole in a provider buffer, and
// beyond what tcp buffers whole.
func bufferedSizes(max uint64) []int {
	var out []int
	for _, n := range []int{1, 100, 1000, 1472, 5000, 70000, 300000} {
		if uint64(n) <= max {
			out = append(out, n)
		}
	}
	return out
}

// processBufferedRecvFromSeparateProcess: messages of every size from
// another process are reported in the provider's buffers (FI_MORE with at
// least FI_OPT_BUFFERED_MIN bytes beyond FI_OPT_BUFFERED_LIMIT), and
// claimed or discarded in turn; the claimed ones arrive whole.
func processBufferedRecvFromSeparateProcess(t *testing.T, tg Target) {
	bufRecvOffered(t, tg, 0)
	var b *env
	var wait func()
	if tg.EPType == fabric.EPMsg {
		o := envOpts{mode: fabric.ModeBufferedRecv}
		l := tg.listen(t, o)
		wait = startHelper(t, tg, "buffered-send", l.name, 0)
		b = tg.accept(t, l, o, nil)
		if ev, ee := waitEvent(t, b.eq); ee != nil || ev.Event != fabric.EventConnected {
			t.Fatalf("accept: %+v %+v", ev, ee)
		}
	} else {
		b = tg.open(t, envOpts{mode: fabric.ModeBufferedRecv})
		wait = startHelper(t, tg, "buffered-send", b.addr, 0)
	}
	min, err := b.ep.GetOpt(fabric.OptEndpoint, fabric.OptBufferedMin)
	if err != nil {
		t.Fatal(err)
	}
	limit, err := b.ep.GetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit)
	if err != nil {
		t.Fatal(err)
	}
	// Reports arrive in order; claim completions among them.
	sizes := bufferedSizes(b.info.EPAttr.MaxMsgSize)
	bufs := make([][]byte, len(sizes))
	next, claims := 0, 0
	for next < len(sizes) || claims > 0 {
		got, ee := waitCQ(t, b.rxcq, b.txcq)
		if ee != nil {
			t.Fatalf("after %d reports: %+v", next, ee)
		}
		if k, ok := got.OpContext.(int); ok { // a claim's completion
			if k < 0 || k >= len(sizes) || bufs[k] == nil || got.Flags&fabric.FlagClaim == 0 ||
				!bytes.Equal(bufs[k], pattern(make([]byte, sizes[k]), k)) {
				t.Fatalf("claim completion %+v", got)
			}
			bufs[k] = nil
			claims--
			continue
		}
		i := next
		next++
		if i >= len(sizes) {
			t.Fatalf("an extra completion %+v", got)
		}
		size := sizes[i]
		msg := pattern(make([]byte, size), i)
		rc, ok := got.OpContext.(*fabric.RecvContext)
		if !ok || got.Len != uint64(size) {
			t.Fatalf("message %d (%d bytes): report %+v", i, size, got)
		}
		more := got.Flags&fabric.FlagMore != 0
		if uint64(len(got.Buf)) > limit || (more && uint64(len(got.Buf)) < min) || (!more && len(got.Buf) != size) ||
			!bytes.Equal(got.Buf, msg[:len(got.Buf)]) {
			t.Fatalf("message %d (%d bytes): report shows %d bytes, FI_MORE %v", i, size, len(got.Buf), more)
		}
		if i%2 == 1 {
			if err := discard(b.ep, rc, false); err != nil {
				t.Fatalf("discard %d: %v", i, err)
			}
			continue
		}
		bufs[i] = make([]byte, size)
		rc.Context = i
		if err := claim(b.ep, rc, bufs[i], false); err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		claims++
	}
	if tg.EPType == fabric.EPMsg {
		if err := b.ep.Shutdown(0); err != nil {
			t.Fatal(err)
		}
	}
	wait()
}

// helperBufferedSend sends bufferedSizes messages to peer (connecting to
// it first for FI_EP_MSG), each after the last one's send completion.
func helperBufferedSend(t *testing.T, tg Target, peer []byte) {
	var e *env
	dst := fabric.AddrUnspec
	if tg.EPType == fabric.EPMsg {
		e = tg.open(t, envOpts{deferConn: true})
		if err := e.ep.Connect(peer, nil); err != nil {
			t.Fatal(err)
		}
		if ev, ee := waitEvent(t, e.eq); ee != nil || ev.Event != fabric.EventConnected {
			t.Fatalf("connect: %+v %+v", ev, ee)
		}
	} else {
		e = tg.open(t, envOpts{})
		dst = e.insert(peer)
	}
	for i, size := range bufferedSizes(e.info.EPAttr.MaxMsgSize) {
		msg := pattern(make([]byte, size), i)
		retry(t, "send", func() error { return e.ep.Send(msg, nil, dst, nil) }, e.txcq)
		if _, ee := waitCQ(t, e.txcq, e.rxcq); ee != nil {
			t.Fatalf("send %d: %+v", i, ee)
		}
	}
	if tg.EPType == fabric.EPMsg {
		if ev, ee := waitEvent(t, e.eq); ee != nil || ev.Event != fabric.EventShutdown {
			t.Fatalf("want FI_SHUTDOWN from the parent, got %+v %+v", ev, ee)
		}
	}
}
