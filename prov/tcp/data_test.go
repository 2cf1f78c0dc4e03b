package tcp

import (
	"bytes"
	"testing"
	"time"

	"github.com/gofabric/fabric/provider"
)

func TestSendRecvSizes(t *testing.T) {
	for _, o := range []opts{{}, {auto: true}} {
		cli, srv := pair(t, o)
		sizes := []int{0, 1, 15, 16, 127, 128, 129, 1000, 2047, 2048, 4096, 9000, 65535, 65536, 1 << 20, 3<<20 + 17}
		for k, size := range sizes {
			want := pattern(make([]byte, size), k)
			got := make([]byte, size+8)
			srv.post(got, k)
			cli.send(want, k, 0)
			e := expectComp(t, srv.rxCQ, k, provider.FlagRecv|provider.FlagMsg, cli)
			if e.Len != uint64(size) || !bytes.Equal(got[:size], want) {
				t.Fatalf("size %d: len %d, data differs %v", size, e.Len, !bytes.Equal(got[:size], want))
			}
			expectComp(t, cli.txCQ, k, provider.FlagSend|provider.FlagMsg, srv)
			// And back, gathered from 3 buffers into 2.
			a, b, c := want[:size/3], want[size/3:size/2], want[size/2:]
			g1, g2 := make([]byte, size/2), make([]byte, size-size/2)
			m := provider.Msg{IOV: [][]byte{g1, g2}, Context: "v", Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
			if err := cli.rq.Post(&m, false); err != nil {
				t.Fatal(err)
			}
			if err := srv.ep.Send(provider.Msg{IOV: [][]byte{a, b, c}, Context: "sv", Flags: provider.FlagCompletion}); err != nil {
				t.Fatal(err)
			}
			e = expectComp(t, cli.rxCQ, "v", provider.FlagRecv|provider.FlagMsg, srv)
			if e.Len != uint64(size) || !bytes.Equal(append(g1, g2...), want) {
				t.Fatalf("sendv size %d: len %d", size, e.Len)
			}
			expectComp(t, srv.txCQ, "sv", provider.FlagSend|provider.FlagMsg, cli)
		}
		if v, _ := cli.cntrs[provider.CntrSend].Read(); v != uint64(len(sizes)) {
			t.Fatalf("send counter %d", v)
		}
		if v, _ := srv.cntrs[provider.CntrRecv].Read(); v != uint64(len(sizes)) {
			t.Fatalf("recv counter %d", v)
		}
	}
}

func TestSendDataInject(t *testing.T) {
	cli, srv := pair(t, opts{})
	got := make([]byte, 32)
	srv.post(got, 1)
	if err := cli.ep.Send(provider.Msg{Buf: []byte("0123456789abcdef"), Context: "sd", Data: 0x1122334455667788,
		Flags: provider.FlagCompletion | provider.FlagRemoteCQData}); err != nil {
		t.Fatal(err)
	}
	e := expectComp(t, srv.rxCQ, 1, provider.FlagRecv|provider.FlagMsg|provider.FlagRemoteCQData, cli)
	if e.Data != 0x1122334455667788 || e.Len != 16 {
		t.Fatalf("senddata entry %+v", e)
	}
	expectComp(t, cli.txCQ, "sd", provider.FlagSend|provider.FlagMsg)
	// Inject: the buffer is reusable on return; no completion.
	buf := []byte("inj!")
	srv.post(got, 2)
	if err := cli.ep.Send(provider.Msg{Buf: buf, Flags: provider.FlagInject | provider.FlagRemoteCQData, Data: 7}); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXX")
	e = expectComp(t, srv.rxCQ, 2, provider.FlagRecv|provider.FlagMsg|provider.FlagRemoteCQData, cli)
	if string(got[:e.Len]) != "inj!" || e.Data != 7 {
		t.Fatalf("inject delivered %q data %d", got[:e.Len], e.Data)
	}
	expectEmpty(t, cli.txCQ, 20*time.Millisecond, srv)
	// FI_INJECT with a completion (sendmsg flag): copied and completed.
	srv.post(got, 3)
	buf = []byte("inj2")
	cli.send(buf, "ic", provider.FlagInject)
	copy(buf, "YYYY")
	e = expectComp(t, srv.rxCQ, 3, provider.FlagRecv|provider.FlagMsg, cli)
	if string(got[:e.Len]) != "inj2" {
		t.Fatalf("inject+completion delivered %q", got[:e.Len])
	}
	expectComp(t, cli.txCQ, "ic", provider.FlagSend|provider.FlagMsg)
}

// TestLimitsAboveProviderRefused: an Info whose limits exceed tcp's is
// refused at open, so the limits the root package enforces on each call
// (inject size, iov counts) are never above what post can carry.
func TestLimitsAboveProviderRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*provider.Info)
	}{
		{"tx iov_limit", func(i *provider.Info) { i.TxAttr.IOVLimit = IOVLimit + 1 }},
		{"rma_iov_limit", func(i *provider.Info) { i.TxAttr.RMAIOVLimit = IOVLimit + 1 }},
		{"inject_size", func(i *provider.Info) { i.TxAttr.InjectSize = InjectSize + 1 }},
		{"rx iov_limit", func(i *provider.Info) { i.RxAttr.IOVLimit = IOVLimit + 1 }},
	} {
		info := loInfo(t, opts{})
		tc.mod(info)
		if ep, err := (&domain{}).Endpoint(info); err != provider.EINVAL {
			if ep != nil {
				ep.Close()
			}
			t.Errorf("%s above the provider's: open = %v, want EINVAL", tc.name, err)
		}
	}
	pe, err := (&domain{}).Endpoint(loInfo(t, opts{}))
	if err != nil {
		t.Fatalf("GetInfo's own limits: %v", err)
	}
	pe.Close()
}

// TestDeliveryComplete checks that an operation asking for delivery (or
// transmit) completion completes only after the peer's ACK, which the
// peer sends once the data is placed.
func TestDeliveryComplete(t *testing.T) {
	for _, flag := range []provider.Flags{provider.FlagDeliveryComplete, provider.FlagTransmitComplete} {
		cli, srv := pair(t, opts{})
		// No receive posted: the message waits in the stream, so no ACK.
		cli.send([]byte("fin\x00"), "dc", flag)
		expectEmpty(t, cli.txCQ, 30*time.Millisecond, srv)
		// A plain send posted after it completes after it (posting order).
		cli.send([]byte("next"), "plain", 0)
		expectEmpty(t, cli.txCQ, 10*time.Millisecond, srv)
		got := make([]byte, 8)
		srv.post(got, "r1")
		e := expectComp(t, srv.rxCQ, "r1", provider.FlagRecv|provider.FlagMsg, cli)
		if string(got[:e.Len]) != "fin\x00" {
			t.Fatalf("got %q", got[:e.Len])
		}
		expectComp(t, cli.txCQ, "dc", provider.FlagSend|provider.FlagMsg, srv)
		expectComp(t, cli.txCQ, "plain", provider.FlagSend|provider.FlagMsg, srv)
		srv.post(got, "r2")
		expectComp(t, srv.rxCQ, "r2", provider.FlagRecv|provider.FlagMsg, cli)
	}
}

// TestUnexpected: messages sent before their receives are posted (small
// ones buffered, large ones kept in the stream) all arrive; tagged ones in
// any order of posting.
func TestUnexpected(t *testing.T) {
	cli, srv := pair(t, opts{tagged: true})
	sizes := []int{10, 5000, 70000, 1 << 20, 20}
	for k, s := range sizes {
		cli.send(pattern(make([]byte, s), k), k, 0)
	}
	for k := range sizes {
		expectComp(t, cli.txCQ, k, provider.FlagSend|provider.FlagMsg, srv)
		if k == 1 {
			break // the 70000-byte message blocks the stream until a receive
		}
	}
	for k, s := range sizes {
		got := make([]byte, s)
		srv.post(got, k)
		e := expectComp(t, srv.rxCQ, k, provider.FlagRecv|provider.FlagMsg, cli)
		if e.Len != uint64(s) || !bytes.Equal(got, pattern(make([]byte, s), k)) {
			t.Fatalf("unexpected %d (%d bytes) differs", k, s)
		}
	}
	for k := 2; k < len(sizes); k++ {
		expectComp(t, cli.txCQ, k, provider.FlagSend|provider.FlagMsg, srv)
	}
	// Tagged, received in reverse order of sending.
	const n = 12
	for i := 0; i < n; i++ {
		if err := cli.ep.TSend(provider.Msg{Buf: pattern(make([]byte, 100+i), i), Tag: uint64(1000 + i),
			Context: i, Flags: provider.FlagCompletion}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		expectComp(t, cli.txCQ, i, provider.FlagSend|provider.FlagTagged, srv)
	}
	for i := n - 1; i >= 0; i-- {
		got := make([]byte, 200)
		srv.postTag(got, uint64(1000+i), 0, i)
		e := expectComp(t, srv.rxCQ, i, provider.FlagRecv|provider.FlagTagged, cli)
		if e.Tag != uint64(1000+i) || e.Len != uint64(100+i) || !bytes.Equal(got[:e.Len], pattern(make([]byte, 100+i), i)) {
			t.Fatalf("tagged %d: %+v", i, e)
		}
	}
	// Expected tagged with remote CQ data and an ignore mask.
	got := make([]byte, 8)
	srv.postTag(got, 0x500, 0xff, "tr")
	if err := cli.ep.TSend(provider.Msg{Buf: []byte("tag"), Tag: 0x5aa, Data: 9, Context: "ts",
		Flags: provider.FlagCompletion | provider.FlagRemoteCQData}); err != nil {
		t.Fatal(err)
	}
	e := expectComp(t, srv.rxCQ, "tr", provider.FlagRecv|provider.FlagTagged|provider.FlagRemoteCQData, cli)
	if e.Tag != 0x5aa || e.Data != 9 || string(got[:e.Len]) != "tag" {
		t.Fatalf("tagged+data %+v", e)
	}
}

func TestFence(t *testing.T) {
	cli, srv := pair(t, opts{})
	// A delivery-complete send that cannot complete (no receive) holds a
	// fenced send behind it: nothing of the fenced one is written.
	cli.send([]byte("first"), "dc", provider.FlagDeliveryComplete)
	cli.send([]byte("fenced"), "f", provider.FlagFence)
	expectEmpty(t, cli.txCQ, 20*time.Millisecond, srv)
	if cli.ep.tx.wr != cli.ep.tx.head+1 {
		t.Fatalf("fenced op was written early")
	}
	got := make([]byte, 16)
	srv.post(got, "r1")
	srv.post(got, "r2")
	expectComp(t, cli.txCQ, "dc", provider.FlagSend|provider.FlagMsg, srv)
	expectComp(t, cli.txCQ, "f", provider.FlagSend|provider.FlagMsg, srv)
	expectComp(t, srv.rxCQ, "r1", provider.FlagRecv|provider.FlagMsg, cli)
	expectComp(t, srv.rxCQ, "r2", provider.FlagRecv|provider.FlagMsg, cli)
}

func TestQueueFullEAGAIN(t *testing.T) {
	cli, srv := pair(t, opts{txSize: 4})
	for i := 0; i < 4; i++ {
		cli.send([]byte("x"), i, provider.FlagDeliveryComplete)
	}
	if err := cli.ep.Send(provider.Msg{Buf: []byte("x"), Flags: provider.FlagCompletion}); err != provider.EAGAIN {
		t.Fatalf("send beyond tx size: %v", err)
	}
	if n := cli.ep.TxSizeLeft(); n != 0 {
		t.Fatalf("tx size left %d", n)
	}
	for i := 0; i < 4; i++ {
		srv.post(make([]byte, 1), i)
	}
	for i := 0; i < 4; i++ {
		expectComp(t, cli.txCQ, i, provider.FlagSend|provider.FlagMsg, srv)
	}
	if n := cli.ep.TxSizeLeft(); n != 4 {
		t.Fatalf("tx size left %d", n)
	}
}

// TestSendBeforeConnected: operations posted while connecting are sent
// once connected; receives posted before the connection serve its first
// messages.
func TestSendBeforeConnected(t *testing.T) {
	info := loInfo(t, opts{})
	l := listen(t, info)
	cli := newNode(t, info, opts{})
	if err := cli.ep.Send(provider.Msg{Buf: []byte("early")}); err != provider.ENOTCONN {
		t.Fatalf("send before connect: %v", err)
	}
	if err := cli.ep.Connect(l.name, nil); err != nil {
		t.Fatal(err)
	}
	cli.send([]byte("queued"), "q", 0)
	ev := expectEvent(t, l.eq, provider.EventConnReq)
	srv := newNode(t, ev.Info, opts{})
	got := make([]byte, 16)
	srv.post(got, "pre")
	if err := srv.ep.Accept(nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, cli.eq, provider.EventConnected)
	e := expectComp(t, srv.rxCQ, "pre", provider.FlagRecv|provider.FlagMsg, cli)
	if string(got[:e.Len]) != "queued" {
		t.Fatalf("got %q", got[:e.Len])
	}
	expectComp(t, cli.txCQ, "q", provider.FlagSend|provider.FlagMsg, srv)
}

// TestAutoProgressWithoutCalls: with FI_PROGRESS_AUTO, messages (small,
// and large ones whose send blocks on a full socket) are delivered and
// completed while nobody calls Progress or reads a CQ.
func TestAutoProgressWithoutCalls(t *testing.T) {
	cli, srv := pair(t, opts{auto: true})
	sizes := []int{10, 8 << 20, 100}
	bufs := make([][]byte, len(sizes))
	for i, s := range sizes {
		bufs[i] = make([]byte, s)
		srv.post(bufs[i], i)
	}
	for i, s := range sizes {
		cli.send(pattern(make([]byte, s), i), i, 0)
	}
	deadline := time.Now().Add(waitLimit)
	for srv.rxCQ.Len() < len(sizes) || cli.txCQ.Len() < len(sizes) {
		if time.Now().After(deadline) {
			t.Fatalf("auto progress: %d receive and %d send completions", srv.rxCQ.Len(), cli.txCQ.Len())
		}
		time.Sleep(time.Millisecond)
	}
	for i, s := range sizes {
		e := expectComp(t, srv.rxCQ, i, provider.FlagRecv|provider.FlagMsg)
		if e.Len != uint64(s) || !bytes.Equal(bufs[i], pattern(make([]byte, s), i)) {
			t.Fatalf("message %d differs", i)
		}
	}
	// The peer going away is noticed without calls too.
	cli.close()
	for srv.eq.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no FI_SHUTDOWN under auto progress")
		}
		time.Sleep(time.Millisecond)
	}
	expectEvent(t, srv.eq, provider.EventShutdown)
}

// TestUnexpectedLimits: beyond the per-endpoint buffering limit, and when
// the receive queue bounds its unexpected messages, the stream waits for
// receives (back-pressure) and nothing is lost or reordered.
func TestUnexpectedLimits(t *testing.T) {
	for _, o := range []opts{{}, {maxUnexp: 3}, {auto: true, maxUnexp: 3}} {
		cli, srv := pair(t, o)
		const n, size = 200, 60 << 10 // 12 MB: more than ubufLimit
		sent := 0
		deadline := time.Now().Add(waitLimit)
		for sent < n {
			err := cli.ep.Send(provider.Msg{Buf: pattern(make([]byte, size), sent), Context: sent, Flags: provider.FlagCompletion})
			if err == provider.EAGAIN {
				cli.ep.Progress()
				srv.ep.Progress()
				if time.Now().After(deadline) {
					t.Fatalf("%+v: only %d sends posted", o, sent)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			sent++
		}
		for i := 0; i < 20; i++ {
			cli.ep.Progress()
			srv.ep.Progress()
		}
		got := make([]byte, size)
		for i := 0; i < n; i++ {
			srv.post(got, i)
			e := expectComp(t, srv.rxCQ, i, provider.FlagRecv|provider.FlagMsg, cli)
			if e.Len != size || !bytes.Equal(got, pattern(make([]byte, size), i)) {
				t.Fatalf("%+v: message %d differs", o, i)
			}
		}
		for i := 0; i < n; i++ {
			expectComp(t, cli.txCQ, i, provider.FlagSend|provider.FlagMsg, srv)
		}
	}
}

// TestBlockingReads: fi_cq_sread and fi_eq_sread under manual progress
// park in the network poller (through WaitReady) and wake when a message
// or an event arrives.
func TestBlockingReads(t *testing.T) {
	cli, srv := pair(t, opts{})
	got := make([]byte, 8)
	srv.post(got, "r")
	go func() {
		time.Sleep(20 * time.Millisecond)
		cli.send([]byte("late"), "s", 0)
	}()
	var e [1]provider.CQEntry
	start := time.Now()
	n, err := srv.rxCQ.SRead(e[:], nil, 0, time.Now().Add(waitLimit), nil)
	if n != 1 || err != nil || e[0].OpContext != "r" || string(got[:4]) != "late" {
		t.Fatalf("sread: %d %v %+v", n, err, e[0])
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Fatalf("sread returned after %v, before the send", d)
	}
	expectComp(t, cli.txCQ, "s", provider.FlagSend|provider.FlagMsg)
	// The peer shuts down while we sleep in fi_eq_sread.
	go func() {
		time.Sleep(20 * time.Millisecond)
		cli.ep.Shutdown(0)
	}()
	ev, err := srv.eq.SRead(0, time.Now().Add(waitLimit), nil)
	if err != nil || ev.Event != provider.EventShutdown {
		t.Fatalf("eq sread: %+v %v", ev, err)
	}
	// Nothing more will happen: a timed sread times out.
	if _, err := srv.rxCQ.SRead(e[:], nil, 0, time.Now().Add(20*time.Millisecond), nil); err != provider.EAGAIN && err != provider.ETIMEDOUT {
		t.Fatalf("sread on a dead endpoint: %v", err)
	}
}
