package fabtest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// msgCases lists the fi_msg(3) behaviours, in the order they run.
var msgCases = []testCase{
	{"fi_msg/zero_alloc_send_recv_steady_state", msgZeroAllocSendRecvSteadyState},
	{"fi_msg/send_recv_byte_exact_all_sizes", msgSendRecvByteExactAllSizes},
	{"fi_msg/sendv_recvv_scatter_gather", msgSendvRecvvScatterGather},
	{"fi_msg/inject_no_completion_buffer_reusable", msgInjectNoCompletionBufferReusable},
	{"fi_msg/sendmsg_FI_INJECT_still_completes", msgSendmsgFIINJECTStillCompletes},
	{"fi_msg/max_msg_size_EMSGSIZE", msgMaxMsgSizeEMSGSIZE},
	{"fi_msg/truncation_ETRUNC_olen_endpoint_usable", msgTruncationETRUNCOlenEndpointUsable},
	{"fi_msg/truncation_expected_and_unexpected_every_size", msgTruncationExpectedAndUnexpectedEverySize},
	{"fi_msg/unexpected_then_posted", msgUnexpectedThenPosted},
	{"fi_msg/order_SAS_single_sender", msgOrderSASSingleSender},
	{"fi_msg/selective_completion", msgSelectiveCompletion},
	{"fi_msg/senddata_remote_cq_data", msgSenddataRemoteCqData},
	{"fi_msg/source_address_FI_SOURCE", msgSourceAddressFISOURCE},
	{"fi_msg/multi_recv_buffer", msgMultiRecvBuffer},
	{"fi_msg/directed_recv", msgDirectedRecv},
	{"fi_msg/directed_recv_leaves_other_sources_queued", msgDirectedRecvLeavesOtherSourcesQueued},
	{"fi_msg/recv_flags_validation", msgRecvFlagsValidation},
	{"fi_msg/rx_selective_completion_errors_always_complete", msgRxSelectiveCompletionErrorsAlwaysComplete},
	{"fi_msg/completion_level_flags_accepted", msgCompletionLevelFlagsAccepted},
	{"fi_msg/FI_MORE_batches_then_flushes", msgFIMOREBatchesThenFlushes},
	{"fi_msg/tx_op_flags_FI_INJECT_still_completes", msgTxOpFlagsFIINJECTStillCompletes},
	{"fi_msg/tx_op_flags_FI_DELIVERY_COMPLETE_waits_for_the_peer", msgTxOpFlagsFIDELIVERYCOMPLETEWaitsForThePeer},
	{"fi_msg/inject_complete_buffer_reusable_at_completion", msgInjectCompleteBufferReusableAtCompletion},
	{"fi_msg/rx_op_flags_FI_MULTI_RECV_default", msgRxOpFlagsFIMULTIRECVDefault},
	{"fi_msg/multi_recv_release_under_selective_and_repost", msgMultiRecvReleaseUnderSelectiveAndRepost},
	{"fi_msg/every_send_and_recv_variant", msgEverySendAndRecvVariant},
	{"fi_msg/unexpected_from_unknown_then_directed_after_insert", msgUnexpectedFromUnknownThenDirectedAfterInsert},
	{"fi_msg/buffered_recv_reported_then_claimed", msgBufferedRecvReportedThenClaimed},
	{"fi_msg/buffered_recv_discard_frees_without_completion", msgBufferedRecvDiscardFreesWithoutCompletion},
	{"fi_msg/buffered_recv_FI_MORE_beyond_limit_claim_gets_all", msgBufferedRecvFIMOREBeyondLimitClaimGetsAll},
	{"fi_msg/buffered_recv_in_arrival_order", msgBufferedRecvInArrivalOrder},
	{"fi_msg/buffered_recv_posted_receive_takes_message", msgBufferedRecvPostedReceiveTakesMessage},
	{"fi_msg/buffered_recv_claim_twice_EINVAL", msgBufferedRecvClaimTwiceEINVAL},
	{"fi_msg/buffered_recv_unknown_context_EINVAL", msgBufferedRecvUnknownContextEINVAL},
	{"fi_msg/buffered_recv_claim_without_mode_EBADFLAGS", msgBufferedRecvClaimWithoutModeEBADFLAGS},
	{"fi_msg/buffered_recv_unclaimed_released_at_close", msgBufferedRecvUnclaimedReleasedAtClose},
	{"fi_msg/buffered_recv_claim_into_small_buffer_ETRUNC", msgBufferedRecvClaimIntoSmallBufferETRUNC},
	{"fi_msg/buffered_recv_selective_completion", msgBufferedRecvSelectiveCompletion},
	{"fi_msg/buffered_recv_every_size_shows_min_claim_gets_all", msgBufferedRecvEverySize},
	{"fi_tagged/buffered_recv_tag_reported_then_claimed", taggedBufferedRecvTagReportedThenClaimed},
	{"fi_tagged/buffered_recv_unexpected_tag_reported_when_posted", taggedBufferedRecvUnexpectedTagReportedWhenPosted},
}

func msgZeroAllocSendRecvSteadyState(t *testing.T, tg Target) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	a, b, ab, _ := tg.pair(t, envOpts{})
	sbuf, rbuf := make([]byte, 64), make([]byte, 64)
	ent := make([]fabric.CQEntry, 1)
	var ctx = new(int)
	round := func() {
		if err := b.ep.Recv(rbuf, nil, fabric.AddrUnspec, ctx); err != nil {
			panic(err)
		}
		for a.ep.Send(sbuf, nil, ab, ctx) != nil {
			a.txcq.Read(ent)
		}
		for {
			if n, _ := a.txcq.Read(ent); n == 1 {
				break
			}
		}
		for {
			if n, _ := b.rxcq.Read(ent); n == 1 {
				break
			}
		}
	}
	for i := 0; i < 50; i++ {
		round()
	}
	if n := testing.AllocsPerRun(200, round); n != 0 {
		t.Fatalf("send+recv+CQ reads allocate %v times per round", n)
	}
}

func msgSendRecvByteExactAllSizes(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	for k, size := range sizes(a.info.EPAttr.MaxMsgSize) {
		rbuf := make([]byte, size+64)
		rctx := new(int)
		if err := b.ep.Recv(rbuf, nil, fabric.AddrUnspec, rctx); err != nil {
			t.Fatalf("recv: %v", err)
		}
		sbuf := pattern(make([]byte, size), k)
		sctx := new(int)
		retry(t, "send", func() error { return a.ep.Send(sbuf, nil, ab, sctx) }, a.txcq)
		sent, ee := waitCQ(t, a.txcq, b.rxcq)
		if ee != nil || sent.OpContext != sctx || sent.Flags != fabric.FlagSend|fabric.FlagMsg {
			t.Fatalf("size %d: send completion %+v %+v", size, sent, ee)
		}
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil {
			t.Fatalf("size %d: recv error %+v", size, ee)
		}
		if got.OpContext != rctx || got.Len != uint64(size) || got.Flags != fabric.FlagRecv|fabric.FlagMsg {
			t.Fatalf("size %d: recv completion %+v", size, got)
		}
		if !bytes.Equal(rbuf[:size], sbuf) {
			t.Fatalf("size %d: payload differs", size)
		}
	}
}

func msgSendvRecvvScatterGather(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	if a.info.TxAttr.IOVLimit < 2 || a.info.RxAttr.IOVLimit < 2 {
		t.Skip("iov_limit < 2")
	}
	r1, r2 := make([]byte, 5), make([]byte, 64)
	if err := b.ep.RecvV([][]byte{r1, r2}, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "sendv", func() error {
		return a.ep.SendV([][]byte{[]byte("hello"), []byte(" world")}, nil, ab, nil)
	}, a.txcq)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.Len != 11 || string(r1) != "hello" || string(r2[:6]) != " world" {
		t.Fatalf("recvv got %+v %+v %q %q", got, ee, r1, r2[:6])
	}
	limit := int(a.info.TxAttr.IOVLimit)
	iov := make([][]byte, limit+1)
	isErr(t, "sendv over iov_limit", a.ep.SendV(iov, nil, ab, nil), fabric.ErrInval)
}

func msgInjectNoCompletionBufferReusable(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	rbuf := make([]byte, 64)
	if err := b.ep.Recv(rbuf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	sbuf := []byte("inject!")
	retry(t, "inject", func() error { return a.ep.Inject(sbuf, ab) }, a.txcq)
	copy(sbuf, "XXXXXXX")
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || string(rbuf[:got.Len]) != "inject!" {
		t.Fatalf("inject delivered %q (%+v)", rbuf[:got.Len], ee)
	}
	expectEmpty(t, a.txcq, scaled(20*time.Millisecond))
	big := make([]byte, a.info.TxAttr.InjectSize+1)
	isErr(t, "inject over inject_size", a.ep.Inject(big, ab), fabric.ErrInval)
}

func msgSendmsgFIINJECTStillCompletes(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	rbuf := make([]byte, 64)
	if err := b.ep.Recv(rbuf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	sbuf := []byte("abc")
	ctx := new(int)
	retry(t, "sendmsg", func() error {
		return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{sbuf}, Addr: ab, Context: ctx}, fabric.FlagInject|fabric.FlagCompletion)
	}, a.txcq)
	copy(sbuf, "zzz")
	got, ee := waitCQ(t, a.txcq, b.rxcq)
	if ee != nil || got.OpContext != ctx {
		t.Fatalf("FI_INJECT sendmsg completion %+v %+v", got, ee)
	}
	r, _ := waitCQ(t, b.rxcq, a.txcq)
	if string(rbuf[:r.Len]) != "abc" {
		t.Fatalf("delivered %q", rbuf[:r.Len])
	}
}

func msgMaxMsgSizeEMSGSIZE(t *testing.T, tg Target) {
	a, _, ab, _ := tg.pair(t, envOpts{})
	max := a.info.EPAttr.MaxMsgSize
	if max > 64<<20 {
		t.Skip("no practical max_msg_size")
	}
	isErr(t, "send over max_msg_size", a.ep.Send(make([]byte, max+1), nil, ab, nil), fabric.ErrMsgSize)
}

func msgTruncationETRUNCOlenEndpointUsable(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	small := make([]byte, 4)
	ctx := new(int)
	if err := b.ep.Recv(small, nil, fabric.AddrUnspec, ctx); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("0123456789"), nil, ab, nil) }, a.txcq)
	_, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrTrunc) || ee.Olen != 6 || ee.Len != 4 || ee.OpContext != ctx {
		t.Fatalf("truncation completion = %+v; want ETRUNC len 4 olen 6", ee)
	}
	if string(small) != "0123" {
		t.Fatalf("truncated data %q", small)
	}
	if _, ee := waitCQ(t, a.txcq); ee != nil {
		t.Fatalf("send completion: %+v", ee)
	}
	next := make([]byte, 16)
	if err := b.ep.Recv(next, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("after"), nil, ab, nil) }, a.txcq)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || string(next[:got.Len]) != "after" {
		t.Fatalf("after truncation got %+v %+v %q", got, ee, next[:got.Len])
	}
}

// msgTruncationExpectedAndUnexpectedEverySize: a message longer than its
// receive completes that receive in error with FI_ETRUNC whether it arrived
// after the receive was posted or before (unexpected), small or large (up
// to max_msg_size): the entry has FI_RECV|FI_MSG, len the bytes placed and
// olen the bytes dropped; the send itself succeeds, and the endpoint (and,
// connection-oriented, its connection) carries the next message intact.
func msgTruncationExpectedAndUnexpectedEverySize(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	const small = 50
	max := a.info.EPAttr.MaxMsgSize
	want := fabric.FlagRecv | fabric.FlagMsg
	for k, size := range []uint64{100, 200000} {
		size = min(size, max)
		for _, unexpected := range []bool{false, true} {
			what := fmt.Sprintf("%d bytes into %d (unexpected %v)", size, small, unexpected)
			msg := pattern(make([]byte, size), k)
			buf := make([]byte, small)
			ctx := new(int)
			post := func() {
				if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, ctx); err != nil {
					t.Fatalf("%s: recv: %v", what, err)
				}
			}
			if !unexpected {
				post()
			}
			retry(t, "send", func() error { return a.ep.Send(msg, nil, ab, nil) }, a.txcq)
			if unexpected {
				// Let the message arrive and be progressed before the post.
				deadline := time.Now().Add(scaled(20 * time.Millisecond))
				for time.Now().Before(deadline) {
					b.rxcq.Read(nil)
					a.txcq.Read(nil)
				}
				post()
			}
			_, ee := waitCQ(t, b.rxcq, a.txcq)
			if ee == nil || !errors.Is(ee.Err, fabric.ErrTrunc) || ee.OpContext != ctx || ee.Len != small ||
				ee.Olen != size-small || ee.Flags&want != want {
				t.Fatalf("%s: %+v; want FI_ETRUNC, FI_RECV|FI_MSG, len %d, olen %d", what, ee, small, size-small)
			}
			if !bytes.Equal(buf, msg[:small]) {
				t.Fatalf("%s: placed %q; want the message's first %d bytes", what, buf, small)
			}
			if _, ee := waitCQ(t, a.txcq, b.rxcq); ee != nil {
				t.Fatalf("%s: send completion %+v", what, ee)
			}
			next := pattern(make([]byte, min(300, max)), k+1)
			got := make([]byte, len(next))
			if err := b.ep.Recv(got, nil, fabric.AddrUnspec, "next"); err != nil {
				t.Fatal(err)
			}
			retry(t, "send", func() error { return a.ep.Send(next, nil, ab, nil) }, a.txcq)
			ent, ee := waitCQ(t, b.rxcq, a.txcq)
			if ee != nil || ent.OpContext != "next" || !bytes.Equal(got[:ent.Len], next) {
				t.Fatalf("%s: next message %+v %+v", what, ent, ee)
			}
			if _, ee := waitCQ(t, a.txcq, b.rxcq); ee != nil {
				t.Fatalf("%s: next send completion %+v", what, ee)
			}
		}
	}
	for _, e := range []*env{a, b} {
		if e.eq == nil {
			continue
		}
		if ev, err := e.eq.SRead(scaled(10*time.Millisecond), 0); err == nil {
			t.Fatalf("event after truncations: %+v; the connection must stay up", ev)
		}
	}
}

func msgUnexpectedThenPosted(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	retry(t, "send", func() error { return a.ep.Send([]byte("early"), nil, ab, nil) }, a.txcq)
	waitCQ(t, a.txcq)
	// Give the datagram/stream time to arrive and be progressed.
	deadline := time.Now().Add(scaled(20 * time.Millisecond))
	for time.Now().Before(deadline) {
		b.rxcq.Read(nil)
	}
	buf := make([]byte, 16)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	got, ee := waitCQ(t, b.rxcq)
	if ee != nil || string(buf[:got.Len]) != "early" {
		t.Fatalf("unexpected message: %+v %+v %q", got, ee, buf[:got.Len])
	}
}

func msgOrderSASSingleSender(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	const n = 32
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, 8)
		if err := b.ep.Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		msg := []byte{byte(i)}
		retry(t, "send", func() error { return a.ep.Send(msg, nil, ab, nil) }, a.txcq)
		waitCQ(t, a.txcq, b.rxcq)
	}
	for i := 0; i < n; i++ {
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != i || bufs[i][0] != byte(i) {
			t.Fatalf("message %d: %+v %+v first byte %d", i, got, ee, bufs[i][0])
		}
	}
}

func msgSelectiveCompletion(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{txFlags: fabric.FlagSelectiveCompletion})
	for i := 0; i < 2; i++ {
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("a"), nil, ab, new(int)) }, a.txcq)
	waitCQ(t, b.rxcq, a.txcq)
	expectEmpty(t, a.txcq, scaled(10*time.Millisecond))
	ctx := new(int)
	retry(t, "sendmsg", func() error {
		return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{[]byte("b")}, Addr: ab, Context: ctx}, fabric.FlagCompletion)
	}, a.txcq)
	got, ee := waitCQ(t, a.txcq, b.rxcq)
	if ee != nil || got.OpContext != ctx {
		t.Fatalf("FI_COMPLETION sendmsg: %+v %+v", got, ee)
	}
}

func msgSenddataRemoteCqData(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{format: fabric.CQFormatData})
	if a.info.DomainAttr.CQDataSize == 0 {
		isErr(t, "senddata without cq_data_size", a.ep.SendData([]byte("x"), nil, 1, ab, nil), fabric.ErrNoSys)
		return
	}
	buf := make([]byte, 8)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "senddata", func() error { return a.ep.SendData([]byte("x"), nil, 0x0123456789abcdef, ab, nil) }, a.txcq)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	mask := uint64(1)<<(8*a.info.DomainAttr.CQDataSize) - 1
	if a.info.DomainAttr.CQDataSize >= 8 {
		mask = ^uint64(0)
	}
	if ee != nil || got.Flags&fabric.FlagRemoteCQData == 0 || got.Data != 0x0123456789abcdef&mask {
		t.Fatalf("senddata completion %+v %+v", got, ee)
	}
}

func msgSourceAddressFISOURCE(t *testing.T, tg Target) {
	a, b, ab, ba := tg.pair(t, envOpts{caps: fabric.CapSource})
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("s"), nil, ab, nil) }, a.txcq)
	if _, src := waitFrom(t, "source", b.rxcq, a.txcq); src != ba {
		t.Fatalf("source = %v; want %v (the sender's fi_addr in b's AV)", src, ba)
	}
}

func msgMultiRecvBuffer(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{caps: fabric.CapMultiRecv})
	const msg = 100
	if err := b.ep.SetOpt(fabric.OptEndpoint, fabric.OptMinMultiRecv, msg); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 350)
	ctx := new(int)
	if err := b.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{buf}, Addr: fabric.AddrUnspec, Context: ctx}, fabric.FlagMultiRecv); err != nil {
		t.Fatalf("multi-recv post: %v", err)
	}
	released := false
	for i := 0; i < 3; i++ {
		m := pattern(make([]byte, msg), i)
		retry(t, "send", func() error { return a.ep.Send(m, nil, ab, nil) }, a.txcq)
		waitCQ(t, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.Len != msg || got.OpContext != ctx || got.Flags&(fabric.FlagRecv|fabric.FlagMsg) != fabric.FlagRecv|fabric.FlagMsg {
			t.Fatalf("multi-recv message %d: %+v %+v; want FI_RECV|FI_MSG", i, got, ee)
		}
		if i < 2 && got.Flags&fabric.FlagMultiRecv != 0 {
			t.Fatalf("message %d released the buffer with %d bytes (>= FI_OPT_MIN_MULTI_RECV) left", i, len(buf)-(i+1)*msg)
		}
		if !bytes.Equal(got.Buf, m) || &got.Buf[0] != &buf[i*msg] {
			t.Fatalf("message %d not placed at offset %d", i, i*msg)
		}
		if got.Flags&fabric.FlagMultiRecv != 0 {
			released = true
		}
	}
	if !released {
		got, ee := waitCQ(t, b.rxcq)
		if ee != nil || got.Flags&fabric.FlagMultiRecv == 0 || got.OpContext != ctx {
			t.Fatalf("buffer release completion %+v %+v", got, ee)
		}
	}
}

func msgDirectedRecv(t *testing.T, tg Target) {
	a, b, ab, ba := tg.pair(t, envOpts{caps: fabric.CapDirectedRecv})
	c := tg.open(t, envOpts{caps: fabric.CapDirectedRecv})
	cb := c.insert(b.addr)
	bc := b.insert(c.addr)
	fromC := make([]byte, 8)
	fromA := make([]byte, 8)
	if err := b.ep.Recv(fromC, nil, bc, "c"); err != nil {
		t.Fatal(err)
	}
	if err := b.ep.Recv(fromA, nil, ba, "a"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send a", func() error { return a.ep.Send([]byte("A"), nil, ab, nil) }, a.txcq)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.OpContext != "a" || fromA[0] != 'A' {
		t.Fatalf("directed receive from a: %+v %+v", got, ee)
	}
	retry(t, "send c", func() error { return c.ep.Send([]byte("C"), nil, cb, nil) }, c.txcq)
	got, ee = waitCQ(t, b.rxcq, c.txcq)
	if ee != nil || got.OpContext != "c" || fromC[0] != 'C' {
		t.Fatalf("directed receive from c: %+v %+v", got, ee)
	}
}

// msgDirectedRecvLeavesOtherSourcesQueued: with FI_DIRECTED_RECV a receive
// posted for one source is not matched by a message from another; that
// message waits, unexpected, for a receive that accepts its source.
func msgDirectedRecvLeavesOtherSourcesQueued(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{caps: fabric.CapDirectedRecv})
	c := tg.open(t, envOpts{caps: fabric.CapDirectedRecv})
	cb := c.insert(b.addr)
	bc := b.insert(c.addr)
	fromC := make([]byte, 16)
	if err := b.ep.Recv(fromC, nil, bc, "c"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send a", func() error { return a.ep.Send([]byte("from a"), nil, ab, nil) }, a.txcq)
	if _, ee := waitCQ(t, a.txcq, b.rxcq); ee != nil {
		t.Fatalf("send from a: %+v", ee)
	}
	expectEmpty(t, b.rxcq, scaled(20*time.Millisecond), a.txcq)
	retry(t, "send c", func() error { return c.ep.Send([]byte("from c"), nil, cb, nil) }, c.txcq)
	got, ee := waitCQ(t, b.rxcq, c.txcq)
	if ee != nil || got.OpContext != "c" || string(fromC[:got.Len]) != "from c" {
		t.Fatalf("receive directed at c: %+v %+v %q", got, ee, fromC)
	}
	anySrc := make([]byte, 16)
	if err := b.ep.Recv(anySrc, nil, fabric.AddrUnspec, "any"); err != nil {
		t.Fatal(err)
	}
	got, ee = waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.OpContext != "any" || string(anySrc[:got.Len]) != "from a" {
		t.Fatalf("undirected receive after a's message waited: %+v %+v %q", got, ee, anySrc)
	}
}

func msgRecvFlagsValidation(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{})
	isErr(t, "recvmsg nil", e.ep.RecvMsg(nil, 0), fabric.ErrInval)
	isErr(t, "sendmsg nil", e.ep.SendMsg(nil, 0), fabric.ErrInval)
	isErr(t, "recvmsg bad flag", e.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{make([]byte, 1)}}, fabric.FlagFence), fabric.ErrBadFlags)
	if !tg.claims(fabric.CapTagged) {
		isErr(t, "tsend without FI_TAGGED", e.ep.TSend([]byte("x"), nil, 0, 1, nil), fabric.ErrNoSys)
	}
	if !tg.claims(fabric.CapRMA) {
		isErr(t, "write without FI_RMA", e.ep.RMAWrite([]byte("x"), nil, 0, 0, 0, nil), fabric.ErrNoSys)
	}
}

func msgRxSelectiveCompletionErrorsAlwaysComplete(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{rxFlags: fabric.FlagSelectiveCompletion})
	// A receive without FI_COMPLETION, then one with it: only the second
	// is reported, and its completion orders the first one's data.
	quiet, loud := make([]byte, 16), make([]byte, 16)
	if err := b.ep.Recv(quiet, nil, fabric.AddrUnspec, "quiet"); err != nil {
		t.Fatal(err)
	}
	if err := b.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{loud}, Addr: fabric.AddrUnspec, Context: "loud"},
		fabric.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"q", "L"} {
		msg := []byte(m)
		retry(t, "send", func() error { return a.ep.Send(msg, nil, ab, nil) }, a.txcq)
		waitCQ(t, a.txcq)
	}
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.OpContext != "loud" || loud[0] != 'L' || quiet[0] != 'q' {
		t.Fatalf("selective receive completions: %+v %+v quiet %q loud %q", got, ee, quiet[:1], loud[:1])
	}
	expectEmpty(t, b.rxcq, scaled(5*time.Millisecond))
	// A failing receive completes in error even without FI_COMPLETION.
	if err := b.ep.Recv(make([]byte, 2), nil, fabric.AddrUnspec, "short"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("too long"), nil, ab, nil) }, a.txcq)
	_, ee = waitCQ(t, b.rxcq, a.txcq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrTrunc) || ee.OpContext != "short" {
		t.Fatalf("truncation under selective completion: %+v", ee)
	}
}

func msgCompletionLevelFlagsAccepted(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	for _, f := range []fabric.Flags{fabric.FlagTransmitComplete, fabric.FlagDeliveryComplete,
		fabric.FlagInjectComplete, fabric.FlagCompletion | fabric.FlagTransmitComplete} {
		buf := make([]byte, 8)
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, f); err != nil {
			t.Fatal(err)
		}
		sbuf := []byte("level")
		ctx := new(int)
		retry(t, "sendmsg", func() error {
			return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{sbuf}, Addr: ab, Context: ctx}, f)
		}, a.txcq)
		sent, ee := waitCQ(t, a.txcq, b.rxcq)
		if ee != nil || sent.OpContext != ctx {
			t.Fatalf("sendmsg(%v) completion %+v %+v", f, sent, ee)
		}
		copy(sbuf, "XXXXX") // reusable once the completion is read
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || string(buf[:got.Len]) != "level" {
			t.Fatalf("sendmsg(%v) delivered %q %+v", f, buf[:got.Len], ee)
		}
	}
}

func msgFIMOREBatchesThenFlushes(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	bufs := make([][]byte, 3)
	for i := range bufs {
		bufs[i] = make([]byte, 8)
		if err := b.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{bufs[i]}, Addr: fabric.AddrUnspec, Context: i},
			fabric.FlagMore); err != nil {
			t.Fatalf("recvmsg FI_MORE: %v", err)
		}
	}
	for i, f := range []fabric.Flags{fabric.FlagMore, fabric.FlagMore, 0} {
		msg := []byte{'m', byte('0' + i)}
		retry(t, "sendmsg", func() error {
			return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{msg}, Addr: ab, Context: i}, f)
		}, a.txcq)
	}
	drainTx(t, a.txcq, 3, b.rxcq)
	for i := range bufs {
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != i || string(bufs[i][:got.Len]) != string([]byte{'m', byte('0' + i)}) {
			t.Fatalf("message %d after FI_MORE: %+v %+v", i, got, ee)
		}
	}
}

// msgTxOpFlagsFIDELIVERYCOMPLETEWaitsForThePeer: where GetInfo echoes
// FI_DELIVERY_COMPLETE as a default transmit flag (tx_attr.op_flags), an
// endpoint opened with it completes a plain fi_send only once the peer has
// processed the message (fi_cq(3): placed, or buffered by the provider):
// not while the peer, under manual progress, makes none, and then once it
// does (and, for providers that wait for it, a receive takes the
// message).
func msgTxOpFlagsFIDELIVERYCOMPLETEWaitsForThePeer(t *testing.T, tg Target) {
	if tg.EPType == fabric.EPDgram {
		t.Skip("FI_EP_DGRAM: unreliable, no delivery complete")
	}
	h := tg.hints(0)
	h.TxAttr.OpFlags = fabric.FlagDeliveryComplete
	infos := getInfoOK(t, "tx op_flags FI_DELIVERY_COMPLETE", tg.node(), "", fabric.FlagSource, h)
	if len(infos) == 0 {
		t.Skipf("%s does not offer FI_DELIVERY_COMPLETE as a default transmit flag", tg.Provider)
	}
	o := envOpts{modify: func(in *fabric.Info) { in.TxAttr.OpFlags |= fabric.FlagDeliveryComplete }}
	a, b, ab, _ := tg.pair(t, o)
	if a.info.DomainAttr.DataProgress == fabric.ProgressAuto {
		t.Skip("FI_PROGRESS_AUTO: the peer progresses by itself")
	}
	// One exchange first, with both sides progressing: a connection made
	// on demand (tcp RDM, lnx's remote path) is set up by the peer's
	// control progress, which may also take in the first message and
	// answer it, where only data progress is to run below.
	warm := make([]byte, 16)
	if err := b.ep.Recv(warm, nil, fabric.AddrUnspec, "warm-r"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("warm"), nil, ab, "warm") }, a.txcq)
	if sent, ee := waitCQ(t, a.txcq, b.rxcq); ee != nil || sent.OpContext != "warm" {
		t.Fatalf("first send's completion %+v %+v", sent, ee)
	}
	if got, ee := waitCQ(t, b.rxcq, a.txcq); ee != nil || got.OpContext != "warm-r" {
		t.Fatalf("first receive %+v %+v", got, ee)
	}
	msg := []byte("delivered")
	retry(t, "send", func() error { return a.ep.Send(msg, nil, ab, "dc") }, a.txcq)
	expectEmpty(t, a.txcq, scaled(30*time.Millisecond))
	// The peer progresses; a provider may also wait for the receive that
	// takes the message (as FI_MATCH_COMPLETE would), so one is posted.
	for end := time.Now().Add(scaled(10 * time.Millisecond)); time.Now().Before(end); {
		b.rxcq.Read(nil)
	}
	buf := make([]byte, 16)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, "r"); err != nil {
		t.Fatal(err)
	}
	sent, ee := waitCQ(t, a.txcq, b.rxcq)
	if ee != nil || sent.OpContext != "dc" {
		t.Fatalf("send completion %+v %+v", sent, ee)
	}
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.OpContext != "r" || string(buf[:got.Len]) != "delivered" {
		t.Fatalf("receive %+v %+v %q", got, ee, buf[:got.Len])
	}
}

func msgTxOpFlagsFIINJECTStillCompletes(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	if err := a.ep.SetOpsFlags(fabric.FlagTransmit | fabric.FlagInject); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	sbuf := []byte("defaultinject")
	ctx := new(int)
	retry(t, "send", func() error { return a.ep.Send(sbuf, nil, ab, ctx) }, a.txcq)
	copy(sbuf, "XXXXXXXXXXXXX") // FI_INJECT: reusable on return
	sent, ee := waitCQ(t, a.txcq, b.rxcq)
	if ee != nil || sent.OpContext != ctx {
		t.Fatalf("default FI_INJECT send: completion %+v %+v", sent, ee)
	}
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || string(buf[:got.Len]) != "defaultinject" {
		t.Fatalf("delivered %q %+v", buf[:got.Len], ee)
	}
	if inj := a.info.TxAttr.InjectSize; inj < a.info.EPAttr.MaxMsgSize {
		isErr(t, "default FI_INJECT send above inject_size",
			a.ep.Send(make([]byte, inj+1), nil, ab, nil), fabric.ErrInval)
	}
}

func msgInjectCompleteBufferReusableAtCompletion(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	buf := make([]byte, 32)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	sbuf := pattern(make([]byte, 32), 3)
	want := append([]byte(nil), sbuf...)
	ctx := new(int)
	retry(t, "sendmsg", func() error {
		return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{sbuf}, Addr: ab, Context: ctx}, fabric.FlagInjectComplete)
	}, a.txcq)
	sent, ee := waitCQ(t, a.txcq, b.rxcq)
	if ee != nil || sent.OpContext != ctx {
		t.Fatalf("FI_INJECT_COMPLETE completion %+v %+v", sent, ee)
	}
	clear(sbuf)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || !bytes.Equal(buf[:got.Len], want) {
		t.Fatalf("data after memset at completion: %q %+v", buf[:got.Len], ee)
	}
}

func msgRxOpFlagsFIMULTIRECVDefault(t *testing.T, tg Target) {
	connectionless(t, tg) // the two sides are opened with different infos
	o := envOpts{caps: fabric.CapMultiRecv}
	a := tg.open(t, o)
	o.modify = func(in *fabric.Info) { in.RxAttr.OpFlags = fabric.FlagMultiRecv }
	b := tg.open(t, o)
	ab := a.insert(b.addr)
	b.insert(a.addr)
	const msg = 64
	if err := b.ep.SetOpt(fabric.OptEndpoint, fabric.OptMinMultiRecv, msg); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2*msg+16)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, "multi"); err != nil {
		t.Fatal(err)
	}
	released := false
	for i := 0; i < 2; i++ {
		m := pattern(make([]byte, msg), i)
		retry(t, "send", func() error { return a.ep.Send(m, nil, ab, nil) }, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != "multi" || got.Len != msg || !bytes.Equal(got.Buf, m) ||
			&got.Buf[0] != &buf[i*msg] {
			t.Fatalf("message %d into a default multi-receive buffer: %+v %+v", i, got, ee)
		}
		released = released || got.Flags&fabric.FlagMultiRecv != 0
	}
	if !released {
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.Flags&fabric.FlagMultiRecv == 0 {
			t.Fatalf("no buffer release: %+v %+v", got, ee)
		}
	}
}

func msgMultiRecvReleaseUnderSelectiveAndRepost(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{caps: fabric.CapMultiRecv, rxFlags: fabric.FlagSelectiveCompletion})
	const msg = 50
	if err := b.ep.SetOpt(fabric.OptEndpoint, fabric.OptMinMultiRecv, msg); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		buf := make([]byte, 2*msg)
		if err := b.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{buf}, Addr: fabric.AddrUnspec, Context: round},
			fabric.FlagMultiRecv); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			m := pattern(make([]byte, msg), i+round)
			retry(t, "send", func() error { return a.ep.Send(m, nil, ab, nil) }, a.txcq)
			waitCQ(t, a.txcq)
		}
		// Only the release is reported: selective completion, no
		// FI_COMPLETION on the receive.
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.Flags&fabric.FlagMultiRecv == 0 || got.OpContext != round {
			t.Fatalf("round %d: release under selective completion %+v %+v", round, got, ee)
		}
		if !bytes.Equal(buf[:msg], pattern(make([]byte, msg), round)) ||
			!bytes.Equal(buf[msg:], pattern(make([]byte, msg), round+1)) {
			t.Fatalf("round %d: buffer contents wrong", round)
		}
		expectEmpty(t, b.rxcq, scaled(5*time.Millisecond), a.txcq)
	}
}

func msgEverySendAndRecvVariant(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{format: fabric.CQFormatData})
	type variant struct {
		name   string
		post   func() error
		data   bool // carries remote CQ data
		inject bool // no send completion
	}
	payload := []byte("variant")
	half1, half2 := payload[:3], payload[3:]
	cqd := a.info.DomainAttr.CQDataSize > 0
	variants := []variant{
		{"fi_msg/send_delivers_the_buffer", func() error { return a.ep.Send(payload, nil, ab, "s") }, false, false},
		{"fi_msg/sendv_gathers_the_iov", func() error { return a.ep.SendV([][]byte{half1, half2}, nil, ab, "s") }, false, false},
		{"fi_msg/sendmsg_gathers_the_msg_iov", func() error {
			return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{half1, half2}, Addr: ab, Context: "s"}, 0)
		}, false, false},
		{"fi_msg/inject_writes_no_send_completion", func() error { return a.ep.Inject(payload, ab) }, false, true},
	}
	if cqd {
		variants = append(variants,
			variant{"fi_msg/senddata_carries_remote_cq_data", func() error { return a.ep.SendData(payload, nil, 0x5a, ab, "s") }, true, false},
			variant{"fi_msg/injectdata_carries_data_without_send_completion", func() error { return a.ep.InjectData(payload, 0x5a, ab) }, true, true})
	} else {
		isErr(t, "fi_senddata without cq_data_size", a.ep.SendData(payload, nil, 1, ab, nil), fabric.ErrNoSys)
		isErr(t, "fi_injectdata without cq_data_size", a.ep.InjectData(payload, 1, ab), fabric.ErrNoSys)
	}
	recvs := []func(buf []byte) error{
		func(buf []byte) error { return b.ep.Recv(buf, nil, fabric.AddrUnspec, "r") },
		func(buf []byte) error { return b.ep.RecvV([][]byte{buf[:2], buf[2:]}, nil, fabric.AddrUnspec, "r") },
		func(buf []byte) error {
			return b.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{buf[:5], buf[5:]}, Addr: fabric.AddrUnspec, Context: "r"}, 0)
		},
	}
	for i, v := range variants {
		buf := make([]byte, 16)
		if err := recvs[i%len(recvs)](buf); err != nil {
			t.Fatalf("%s: posting receive %d: %v", v.name, i%len(recvs), err)
		}
		retry(t, v.name, v.post, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != "r" || got.Len != uint64(len(payload)) ||
			!bytes.Equal(buf[:got.Len], payload) {
			t.Fatalf("%s: receive %+v %+v %q", v.name, got, ee, buf)
		}
		wantFlags := fabric.FlagRecv | fabric.FlagMsg
		if v.data {
			wantFlags |= fabric.FlagRemoteCQData
			if got.Data != 0x5a {
				t.Fatalf("%s: data %#x", v.name, got.Data)
			}
		}
		if got.Flags != wantFlags {
			t.Fatalf("%s: receive flags %v; want %v", v.name, got.Flags, wantFlags)
		}
		if v.inject {
			expectEmpty(t, a.txcq, scaled(2*time.Millisecond))
		} else if sent, ee := waitCQ(t, a.txcq); ee != nil || sent.OpContext != "s" {
			t.Fatalf("%s: send completion %+v %+v", v.name, sent, ee)
		}
	}
	iov := make([][]byte, int(b.info.RxAttr.IOVLimit)+1)
	for i := range iov {
		iov[i] = make([]byte, 1)
	}
	isErr(t, "fi_recvv over iov_limit", b.ep.RecvV(iov, nil, fabric.AddrUnspec, nil), fabric.ErrInval)
	if !tg.claims(fabric.CapTagged) {
		for name, err := range map[string]error{
			"fi_trecv":       b.ep.TRecv(make([]byte, 4), nil, fabric.AddrUnspec, 1, 0, nil),
			"fi_trecvv":      b.ep.TRecvV([][]byte{make([]byte, 4)}, nil, fabric.AddrUnspec, 1, 0, nil),
			"fi_trecvmsg":    b.ep.TRecvMsg(&fabric.Msg{IOV: [][]byte{make([]byte, 4)}}, 0),
			"fi_tsendv":      a.ep.TSendV([][]byte{payload}, nil, ab, 1, nil),
			"fi_tsendmsg":    a.ep.TSendMsg(&fabric.Msg{IOV: [][]byte{payload}, Addr: ab}, 0),
			"fi_tinject":     a.ep.TInject(payload, ab, 1),
			"fi_tsenddata":   a.ep.TSendData(payload, nil, 1, ab, 1, nil),
			"fi_tinjectdata": a.ep.TInjectData(payload, 1, ab, 1),
		} {
			isErr(t, name+" without FI_TAGGED", err, fabric.ErrNoSys)
		}
	}
	if !tg.claims(fabric.CapRMA) {
		rma := []fabric.RMAIOV{{Len: 1}}
		for name, err := range map[string]error{
			"fi_read":             a.ep.RMARead(make([]byte, 1), nil, ab, 0, 0, nil),
			"fi_readv":            a.ep.RMAReadV([][]byte{make([]byte, 1)}, nil, ab, 0, 0, nil),
			"fi_readmsg":          a.ep.RMAReadMsg(&fabric.Msg{IOV: [][]byte{make([]byte, 1)}, Addr: ab, RMA: rma}, 0),
			"fi_writev":           a.ep.RMAWriteV([][]byte{payload}, nil, ab, 0, 0, nil),
			"fi_writemsg":         a.ep.RMAWriteMsg(&fabric.Msg{IOV: [][]byte{payload}, Addr: ab, RMA: rma}, 0),
			"fi_writedata":        a.ep.RMAWriteData(payload, nil, 1, ab, 0, 0, nil),
			"fi_inject_write":     a.ep.RMAInjectWrite(payload, ab, 0, 0),
			"fi_inject_writedata": a.ep.RMAInjectWriteData(payload, 1, ab, 0, 0),
		} {
			isErr(t, name+" without FI_RMA", err, fabric.ErrNoSys)
		}
	}
}

func msgUnexpectedFromUnknownThenDirectedAfterInsert(t *testing.T, tg Target) {
	connectionless(t, tg)
	b := tg.open(t, envOpts{caps: fabric.CapDirectedRecv})
	a := tg.open(t, envOpts{})
	ab := a.insert(b.addr)
	retry(t, "send", func() error { return a.ep.Send([]byte("early"), nil, ab, nil) }, a.txcq)
	waitCQ(t, a.txcq)
	deadline := time.Now().Add(scaled(20 * time.Millisecond))
	for time.Now().Before(deadline) {
		b.rxcq.Read(nil)
	}
	ba := b.insert(a.addr) // the owner resolves the queued message's source now
	buf := make([]byte, 16)
	if err := b.ep.Recv(buf, nil, ba, "directed"); err != nil {
		t.Fatal(err)
	}
	got, ee := waitCQ(t, b.rxcq)
	if ee != nil || got.OpContext != "directed" || string(buf[:got.Len]) != "early" {
		t.Fatalf("directed receive of an early message: %+v %+v", got, ee)
	}
}

// ---- buffered receives (fi_msg(3) "Buffered Receives") ----

func msgBufferedRecvReportedThenClaimed(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, 0, nil)
	msg := pattern(make([]byte, 48), 1)
	bufSend(t, a, b, ab, msg, false, 0)
	got, rc := waitBuffered(t, b, a)
	if rc.EP != b.ep || rc.Context != nil {
		t.Fatalf("fi_recv_context: ep %p context %v, want ep %p and nil", rc.EP, rc.Context, b.ep)
	}
	if got.Flags&(fabric.FlagRecv|fabric.FlagMsg) != fabric.FlagRecv|fabric.FlagMsg ||
		got.Flags&(fabric.FlagMore|fabric.FlagClaim) != 0 {
		t.Fatalf("report flags %v, want FI_MSG|FI_RECV without FI_MORE or FI_CLAIM", got.Flags)
	}
	if got.Len != uint64(len(msg)) || !bytes.Equal(got.Buf, msg) {
		t.Fatalf("report len %d buf %q, want %d %q", got.Len, got.Buf, len(msg), msg)
	}
	rc.Context = "mine" // the application may change it before claiming
	buf := make([]byte, 64)
	if err := claim(b.ep, rc, buf, false); err != nil {
		t.Fatalf("claim: %v", err)
	}
	c, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || c.OpContext != "mine" || c.Flags&fabric.FlagClaim == 0 || c.Flags&fabric.FlagRecv == 0 ||
		c.Len != uint64(len(msg)) || !bytes.Equal(buf[:len(msg)], msg) {
		t.Fatalf("claim completion %+v %+v, data %q", c, ee, buf[:len(msg)])
	}
	expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
}

func msgBufferedRecvDiscardFreesWithoutCompletion(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, 0, nil)
	msgs := [][]byte{[]byte("drop me")}
	if b.info.EPAttr.MaxMsgSize >= 300000 {
		msgs = append(msgs, pattern(make([]byte, 300000), 3)) // partly in the network (FI_MORE)
	}
	for _, m := range msgs {
		bufSend(t, a, b, ab, m, false, 0)
		_, rc := waitBuffered(t, b, a)
		if err := discard(b.ep, rc, false); err != nil {
			t.Fatalf("discard: %v", err)
		}
		expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
	}
	// The endpoint goes on: the next message is reported.
	bufSend(t, a, b, ab, []byte("next"), false, 0)
	got, rc := waitBuffered(t, b, a)
	if string(got.Buf) != "next" {
		t.Fatalf("next report %q", got.Buf)
	}
	if err := discard(b.ep, rc, false); err != nil {
		t.Fatalf("discard: %v", err)
	}
}

func msgBufferedRecvFIMOREBeyondLimitClaimGetsAll(t *testing.T, tg Target) {
	const min, limit = 8, 16
	a, b, ab := bufPair(t, tg, 0, func(e *env) {
		if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedMin, min); err != nil {
			t.Fatalf("FI_OPT_BUFFERED_MIN: %v", err)
		}
		if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit, limit); err != nil {
			t.Fatalf("FI_OPT_BUFFERED_LIMIT: %v", err)
		}
	})
	sizes := []int{limit, 100, 1000}
	if b.info.EPAttr.MaxMsgSize >= 300000 {
		// Beyond what a provider buffers whole (tcp keeps the rest in the
		// stream until the claim).
		sizes = append(sizes, 300000)
	}
	for _, size := range sizes {
		msg := pattern(make([]byte, size), size)
		bufSend(t, a, b, ab, msg, false, 0)
		got, rc := waitBuffered(t, b, a)
		more := got.Flags&fabric.FlagMore != 0
		if got.Len != uint64(size) || more != (size > limit) {
			t.Fatalf("size %d: report len %d flags %v", size, got.Len, got.Flags)
		}
		if len(got.Buf) > limit || (more && len(got.Buf) < min) || (!more && len(got.Buf) != size) ||
			!bytes.Equal(got.Buf, msg[:len(got.Buf)]) {
			t.Fatalf("size %d: report shows %d bytes (min %d, limit %d) %q", size, len(got.Buf), min, limit, got.Buf)
		}
		buf := make([]byte, size)
		if err := claim(b.ep, rc, buf, false); err != nil {
			t.Fatalf("claim: %v", err)
		}
		c, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || c.Len != uint64(size) || c.Flags&fabric.FlagClaim == 0 || !bytes.Equal(buf, msg) {
			t.Fatalf("size %d: claim completion %+v %+v", size, c, ee)
		}
	}
}

func msgBufferedRecvInArrivalOrder(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, 0, nil)
	const n = 8
	for i := 0; i < n; i++ {
		bufSend(t, a, b, ab, []byte{byte(i), 'x'}, false, 0)
	}
	var rcs []*fabric.RecvContext
	for i := 0; i < n; i++ {
		got, rc := waitBuffered(t, b, a)
		if len(got.Buf) != 2 || got.Buf[0] != byte(i) {
			t.Fatalf("report %d: %q", i, got.Buf)
		}
		rcs = append(rcs, rc)
	}
	// Claim the odd ones (in reverse order: any order is allowed) and
	// discard the even ones.
	bufs := make([][]byte, n)
	for i := n - 1; i >= 0; i-- {
		var err error
		if i%2 == 0 {
			err = discard(b.ep, rcs[i], false)
		} else {
			rcs[i].Context = i
			bufs[i] = make([]byte, 2)
			err = claim(b.ep, rcs[i], bufs[i], false)
		}
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	for i := n - 1; i >= 0; i -= 2 {
		c, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || c.OpContext != i || c.Flags&fabric.FlagClaim == 0 || bufs[i][0] != byte(i) {
			t.Fatalf("claim %d: %+v %+v %q", i, c, ee, bufs[i])
		}
	}
	expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
}

func msgBufferedRecvPostedReceiveTakesMessage(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, 0, nil)
	buf := make([]byte, 16)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, "posted"); err != nil {
		t.Fatal(err)
	}
	bufSend(t, a, b, ab, []byte("direct"), false, 0)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.OpContext != "posted" || got.Flags&fabric.FlagClaim != 0 || string(buf[:got.Len]) != "direct" {
		t.Fatalf("posted receive: %+v %+v %q", got, ee, buf[:got.Len])
	}
}

func msgBufferedRecvClaimTwiceEINVAL(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, 0, nil)
	bufSend(t, a, b, ab, []byte("once"), false, 0)
	_, rc := waitBuffered(t, b, a)
	buf := make([]byte, 8)
	if err := claim(b.ep, rc, buf, false); err != nil {
		t.Fatalf("claim: %v", err)
	}
	if _, ee := waitCQ(t, b.rxcq, a.txcq); ee != nil {
		t.Fatalf("claim completion: %+v", ee)
	}
	isErr(t, "second claim", claim(b.ep, rc, buf, false), fabric.ErrInval)
	isErr(t, "discard after claim", discard(b.ep, rc, false), fabric.ErrInval)
	// A discarded one cannot be claimed either.
	bufSend(t, a, b, ab, []byte("twice"), false, 0)
	_, rc = waitBuffered(t, b, a)
	if err := discard(b.ep, rc, false); err != nil {
		t.Fatalf("discard: %v", err)
	}
	isErr(t, "claim after discard", claim(b.ep, rc, buf, false), fabric.ErrInval)
	isErr(t, "second discard", discard(b.ep, rc, false), fabric.ErrInval)
	expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
}

func msgBufferedRecvUnknownContextEINVAL(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, 0, nil)
	buf := make([]byte, 8)
	isErr(t, "claim of a RecvContext the provider never reported", claim(b.ep, &fabric.RecvContext{EP: b.ep}, buf, false),
		fabric.ErrInval)
	isErr(t, "discard of a RecvContext the provider never reported", discard(b.ep, &fabric.RecvContext{}, false),
		fabric.ErrInval)
	// Another endpoint's report is not this endpoint's to claim.
	bufSend(t, a, b, ab, []byte("b's"), false, 0)
	_, rc := waitBuffered(t, b, a)
	if tg.EPType != fabric.EPMsg {
		isErr(t, "claim on another endpoint", claim(a.ep, rc, buf, false), fabric.ErrInval)
	}
	// The message is still b's.
	if err := claim(b.ep, rc, buf, false); err != nil {
		t.Fatalf("claim: %v", err)
	}
	if c, ee := waitCQ(t, b.rxcq, a.txcq); ee != nil || string(buf[:c.Len]) != "b's" {
		t.Fatalf("claim completion %+v %+v", c, ee)
	}
}

func msgBufferedRecvClaimWithoutModeEBADFLAGS(t *testing.T, tg Target) {
	bufRecvOffered(t, tg, 0)
	a, b, ab, _ := tg.pair(t, envOpts{}) // without FI_BUFFERED_RECV
	rc := &fabric.RecvContext{EP: b.ep}
	isErr(t, "claim", claim(b.ep, rc, make([]byte, 8), false), fabric.ErrBadFlags)
	isErr(t, "discard", discard(b.ep, rc, false), fabric.ErrBadFlags)
	for _, o := range []int{fabric.OptBufferedMin, fabric.OptBufferedLimit} {
		_, err := b.ep.GetOpt(fabric.OptEndpoint, o)
		isErr(t, "getopt", err, fabric.ErrNoProtoOpt)
	}
	// Messages are not reported: they wait for a receive.
	retry(t, "send", func() error { return a.ep.Send([]byte("plain"), nil, ab, nil) }, a.txcq)
	waitCQ(t, a.txcq, b.rxcq)
	expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
	buf := make([]byte, 8)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, "r"); err != nil {
		t.Fatal(err)
	}
	if got, ee := waitCQ(t, b.rxcq, a.txcq); ee != nil || got.OpContext != "r" || string(buf[:got.Len]) != "plain" {
		t.Fatalf("receive: %+v %+v", got, ee)
	}
}

func msgBufferedRecvUnclaimedReleasedAtClose(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, 0, nil)
	var rcs []*fabric.RecvContext
	for i := 0; i < 4; i++ {
		bufSend(t, a, b, ab, pattern(make([]byte, 32), i), false, 0)
		_, rc := waitBuffered(t, b, a)
		rcs = append(rcs, rc)
	}
	if err := b.ep.Close(); err != nil {
		t.Fatalf("close with unclaimed buffered receives: %v", err)
	}
	b.epClosed = true
	for _, rc := range rcs {
		isErr(t, "claim after close", claim(b.ep, rc, make([]byte, 32), false), fabric.ErrClosed)
	}
}

func msgBufferedRecvClaimIntoSmallBufferETRUNC(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, 0, nil)
	msg := pattern(make([]byte, 40), 7)
	bufSend(t, a, b, ab, msg, false, 0)
	_, rc := waitBuffered(t, b, a)
	rc.Context = "small"
	buf := make([]byte, 16)
	if err := claim(b.ep, rc, buf, false); err != nil {
		t.Fatalf("claim: %v", err)
	}
	_, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrTrunc) || ee.OpContext != "small" || ee.Olen != 24 ||
		!bytes.Equal(buf, msg[:16]) {
		t.Fatalf("claim into 16 bytes of a 40-byte message: %+v, data %q", ee, buf)
	}
	// The endpoint goes on.
	bufSend(t, a, b, ab, []byte("after"), false, 0)
	if got, rc := waitBuffered(t, b, a); string(got.Buf) != "after" {
		t.Fatalf("next report %q", got.Buf)
	} else if err := discard(b.ep, rc, false); err != nil {
		t.Fatal(err)
	}
}

// Under FI_SELECTIVE_COMPLETION the reports are written all the same (the
// application must learn of the message); a claim completes only with
// FI_COMPLETION.
func msgBufferedRecvSelectiveCompletion(t *testing.T, tg Target) {
	bufRecvOffered(t, tg, 0)
	o := envOpts{mode: fabric.ModeBufferedRecv, rxFlags: fabric.FlagSelectiveCompletion}
	a, b, ab, _ := tg.pair(t, o)
	for i, flags := range []fabric.Flags{fabric.FlagClaim, fabric.FlagClaim | fabric.FlagCompletion} {
		msg := pattern(make([]byte, 12), i)
		bufSend(t, a, b, ab, msg, false, 0)
		_, rc := waitBuffered(t, b, a)
		buf := make([]byte, 12)
		if err := b.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{buf}, Context: rc}, flags); err != nil {
			t.Fatalf("claim %v: %v", flags, err)
		}
		if flags&fabric.FlagCompletion == 0 {
			expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
		} else if c, ee := waitCQ(t, b.rxcq, a.txcq); ee != nil || c.Flags&fabric.FlagClaim == 0 {
			t.Fatalf("claim with FI_COMPLETION: %+v %+v", c, ee)
		}
		if !bytes.Equal(buf, msg) {
			t.Fatalf("claim %v: data %q", flags, buf)
		}
	}
}

// msgBufferedRecvEverySize: messages of every size the provider carries
// (whatever protocol it uses for each: eager, segmented, rendezvous,
// streamed), all sent before the receiver looks, untagged and tagged: each
// is reported once with its size, showing its first bytes, at least
// FI_OPT_BUFFERED_MIN of them (all of a shorter message) and at most
// FI_OPT_BUFFERED_LIMIT, FI_MORE exactly when not all; a claim gets the
// whole message, a discard drops it, and every send completes once. Each
// report is answered at once (fi_msg(3): what follows an unclaimed
// message may stall).
func msgBufferedRecvEverySize(t *testing.T, tg Target) {
	// 64 KiB shown at most and 20000 bytes at least, or the provider's
	// largest limit if smaller.
	limit, least := uint64(65536), uint64(20000)
	var caps fabric.Caps
	if tg.claims(fabric.CapTagged) {
		caps = fabric.CapTagged
	}
	a, b, ab := bufPair(t, tg, caps, func(e *env) {
		err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit, limit)
		if errors.Is(err, fabric.ErrMsgSize) {
			err = e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit, math.MaxUint64)
			if err == nil {
				limit, err = e.ep.GetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit)
			}
		}
		if err != nil {
			t.Fatalf("FI_OPT_BUFFERED_LIMIT %d: %v", limit, err)
		}
		least = min(least, limit)
		if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedMin, least); err != nil {
			t.Fatalf("FI_OPT_BUFFERED_MIN: %v", err)
		}
	})
	var sizes []int
	for _, n := range []int{1, 100, 16384, 16385, 20000, 40000, 100000, 300000, 1 << 20} {
		if uint64(n) <= b.info.EPAttr.MaxMsgSize && uint64(n) <= a.info.EPAttr.MaxMsgSize {
			sizes = append(sizes, n)
		}
	}
	for _, tagged := range []bool{false, true} {
		if tagged && caps == 0 {
			break
		}
		msgs := map[uint64][]byte{}
		for _, n := range sizes {
			if tagged {
				// Tags posted first: each message is reported as it comes.
				if err := b.ep.TRecv(nil, nil, fabric.AddrUnspec, uint64(n), 0, n); err != nil {
					t.Fatalf("trecv: %v", err)
				}
			}
			m := pattern(make([]byte, n), n+len(msgs))
			msgs[uint64(n)] = m
			retry(t, "send", func() error {
				if tagged {
					return a.ep.TSend(m, nil, ab, uint64(n), n)
				}
				return a.ep.Send(m, nil, ab, n)
			}, a.txcq, b.rxcq)
		}
		// Each report is claimed (every other size) or discarded at once:
		// a provider may hold back what follows a message until then.
		reported := map[uint64]bool{}
		bufs := map[uint64][]byte{}
		claimed := 0
		for len(reported) < len(sizes) || claimed < len(bufs) {
			got, ee := waitCQ(t, b.rxcq, a.txcq)
			if ee != nil {
				t.Fatalf("tagged %v: error completion %+v", tagged, *ee)
			}
			rc, ok := got.OpContext.(*fabric.RecvContext)
			if !ok {
				n, _ := got.OpContext.(uint64)
				if buf := bufs[n]; buf == nil || got.Flags&fabric.FlagClaim == 0 || got.Len != n ||
					!bytes.Equal(buf, msgs[n]) {
					t.Fatalf("tagged %v: claim completion %+v (data ok %v)", tagged, got, bytes.Equal(bufs[n], msgs[n]))
				}
				claimed++
				continue
			}
			m, ok := msgs[got.Len]
			if !ok || reported[got.Len] {
				t.Fatalf("tagged %v: report of %d bytes: not sent, or reported twice", tagged, got.Len)
			}
			reported[got.Len] = true
			shown := uint64(len(got.Buf))
			more := got.Flags&fabric.FlagMore != 0
			if shown > limit || shown < got.Len && shown < least || more != (shown < got.Len) ||
				!bytes.Equal(got.Buf, m[:shown]) {
				t.Fatalf("tagged %v, %d bytes: report shows %d (min %d, limit %d), FI_MORE %v, data ok %v",
					tagged, got.Len, shown, least, limit, more, bytes.Equal(got.Buf, m[:shown]))
			}
			if tagged && (rc.Context != int(got.Len) || got.Tag != got.Len) {
				t.Fatalf("tagged report of %d bytes: context %v, tag %d", got.Len, rc.Context, got.Tag)
			}
			n := got.Len
			if slices.Index(sizes, int(n))%2 == 0 {
				bufs[n] = make([]byte, n)
				rc.Context = n
				err := claim(b.ep, rc, bufs[n], tagged)
				if err != nil {
					t.Fatalf("tagged %v, %d bytes: claim: %v", tagged, n, err)
				}
			} else if err := discard(b.ep, rc, tagged); err != nil {
				t.Fatalf("tagged %v, %d bytes: discard: %v", tagged, n, err)
			}
		}
		sent := map[int]bool{}
		for range sizes {
			c, ee := waitCQ(t, a.txcq, b.rxcq)
			if ee != nil {
				t.Fatalf("tagged %v: send completion %+v", tagged, *ee)
			}
			if n, ok := c.OpContext.(int); !ok || sent[n] {
				t.Fatalf("tagged %v: send completion %+v (twice?)", tagged, c)
			} else {
				sent[n] = true
			}
		}
		expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
	}
}

// ---- fi_tagged(3) "Buffered Tagged Receives" ----

func taggedBufferedRecvTagReportedThenClaimed(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, fabric.CapTagged, nil)
	// The buffers of a tagged receive are ignored in the mode: only the
	// tag is posted.
	if err := b.ep.TRecv(nil, nil, fabric.AddrUnspec, 0x77, 0, "tag77"); err != nil {
		t.Fatalf("trecv: %v", err)
	}
	msg := []byte("tagged payload")
	bufSend(t, a, b, ab, msg, true, 0x77)
	got, rc := waitBuffered(t, b, a)
	if rc.EP != nil || rc.Context != "tag77" || got.Tag != 0x77 || got.Flags&fabric.FlagTagged == 0 ||
		!bytes.Equal(got.Buf, msg) || got.Len != uint64(len(msg)) {
		t.Fatalf("tagged report %+v, fi_recv_context %+v", got, rc)
	}
	buf := make([]byte, 32)
	if err := claim(b.ep, rc, buf, true); err != nil {
		t.Fatalf("tagged claim: %v", err)
	}
	c, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || c.OpContext != "tag77" || c.Flags&fabric.FlagClaim == 0 || c.Tag != 0x77 ||
		!bytes.Equal(buf[:c.Len], msg) {
		t.Fatalf("tagged claim completion %+v %+v", c, ee)
	}
	isErr(t, "untagged claim of a tagged report", claim(b.ep, rc, buf, false), fabric.ErrInval)
}

func taggedBufferedRecvUnexpectedTagReportedWhenPosted(t *testing.T, tg Target) {
	a, b, ab := bufPair(t, tg, fabric.CapTagged, nil)
	bufSend(t, a, b, ab, []byte("early"), true, 5)
	// No tag posted: the message waits unreported.
	expectEmpty(t, b.rxcq, scaled(20*time.Millisecond), a.txcq)
	if err := b.ep.TRecv(nil, nil, fabric.AddrUnspec, 5, 0, "late"); err != nil {
		t.Fatalf("trecv: %v", err)
	}
	got, rc := waitBuffered(t, b, a)
	if rc.Context != "late" || got.Tag != 5 || string(got.Buf) != "early" {
		t.Fatalf("report %+v %+v", got, rc)
	}
	if err := discard(b.ep, rc, true); err != nil {
		t.Fatalf("tagged discard: %v", err)
	}
	expectEmpty(t, b.rxcq, scaled(10*time.Millisecond), a.txcq)
}
