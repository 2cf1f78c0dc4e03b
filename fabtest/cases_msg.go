package fabtest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// sizes returns message sizes up to the provider's limit.
func sizes(max uint64) []int {
	var out []int
	for _, s := range []int{0, 1, 2, 3, 64, 255, 1024, 1472, 4096, 65536, 1 << 20} {
		if uint64(s) <= max {
			out = append(out, s)
		}
	}
	return out
}

func init() {
	register("fi_msg/send_recv_byte_exact_all_sizes", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/sendv_recvv_scatter_gather", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/inject_no_completion_buffer_reusable", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/sendmsg_FI_INJECT_still_completes", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/max_msg_size_EMSGSIZE", func(t *testing.T, tg Target) {
		a, _, ab, _ := tg.pair(t, envOpts{})
		max := a.info.EPAttr.MaxMsgSize
		if max > 64<<20 {
			t.Skip("no practical max_msg_size")
		}
		isErr(t, "send over max_msg_size", a.ep.Send(make([]byte, max+1), nil, ab, nil), fabric.ErrMsgSize)
	})
	register("fi_msg/truncation_ETRUNC_olen_endpoint_usable", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/unexpected_then_posted", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/order_SAS_single_sender", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/selective_completion", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/senddata_remote_cq_data", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/source_address_FI_SOURCE", func(t *testing.T, tg Target) {
		a, b, ab, ba := tg.pair(t, envOpts{caps: fabric.CapSource})
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("s"), nil, ab, nil) }, a.txcq)
		var ent [1]fabric.CQEntry
		var src [1]fabric.Addr
		deadline := time.Now().Add(scaled(5 * time.Second))
		for {
			n, err := b.rxcq.ReadFrom(ent[:], src[:])
			if n == 1 {
				break
			}
			if err != nil && !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
				t.Fatalf("ReadFrom: %v", err)
			}
			a.txcq.Read(nil)
		}
		if src[0] != ba {
			t.Fatalf("source = %v; want %v (the sender's fi_addr in b's AV)", src[0], ba)
		}
	})
	register("fi_msg/multi_recv_buffer", func(t *testing.T, tg Target) {
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
			if ee != nil || got.Len != msg || got.OpContext != ctx || got.Flags&fabric.FlagRecv == 0 {
				t.Fatalf("multi-recv message %d: %+v %+v", i, got, ee)
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
	})
	register("fi_msg/directed_recv", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/recv_flags_validation", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		isErr(t, "recvmsg nil", e.ep.RecvMsg(nil, 0), fabric.ErrInval)
		isErr(t, "sendmsg nil", e.ep.SendMsg(nil, 0), fabric.ErrInval)
		isErr(t, "recvmsg bad flag", e.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{make([]byte, 1)}}, fabric.FlagFence), fabric.ErrBadFlags)
		if !tg.claims(fabric.CapTagged) {
			isErr(t, "tsend without FI_TAGGED", e.ep.TSend([]byte("x"), nil, 0, 1, nil), fabric.ErrNoSys)
		}
		if !tg.claims(fabric.CapRMA) {
			isErr(t, "write without FI_RMA", e.ep.Write([]byte("x"), nil, 0, 0, 0, nil), fabric.ErrNoSys)
		}
	})
}
