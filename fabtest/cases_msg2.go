package fabtest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

func init() {
	register("fi_msg/rx_selective_completion_errors_always_complete", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/completion_level_flags_accepted", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/FI_MORE_batches_then_flushes", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/tx_op_flags_FI_INJECT_still_completes", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/inject_complete_buffer_reusable_at_completion", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/rx_op_flags_FI_MULTI_RECV_default", func(t *testing.T, tg Target) {
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
	})
	register("fi_msg/multi_recv_release_under_selective_and_repost", func(t *testing.T, tg Target) {
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
	})
	register("fi_mr/desc_accepted_by_data_ops", func(t *testing.T, tg Target) {
		a, b, ab, _ := tg.pair(t, envOpts{})
		sbuf, rbuf := []byte("described"), make([]byte, 16)
		smr, err := a.dom.RegMR(sbuf, fabric.FlagSend, 0, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer smr.Close()
		rmr, err := b.dom.RegMR(rbuf, fabric.FlagRecv, 0, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer rmr.Close()
		if err := b.ep.Recv(rbuf, rmr.Desc(), fabric.AddrUnspec, nil); err != nil {
			t.Fatalf("recv with a descriptor: %v", err)
		}
		retry(t, "send", func() error { return a.ep.Send(sbuf, smr.Desc(), ab, nil) }, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || string(rbuf[:got.Len]) != "described" {
			t.Fatalf("with descriptors: %+v %+v", got, ee)
		}
		if err := b.ep.RecvV([][]byte{rbuf}, []any{rmr.Desc()}, fabric.AddrUnspec, nil); err != nil {
			t.Fatalf("recvv with descriptors: %v", err)
		}
		retry(t, "sendv", func() error { return a.ep.SendV([][]byte{sbuf}, []any{smr.Desc()}, ab, nil) }, a.txcq)
		if _, ee := waitCQ(t, b.rxcq, a.txcq); ee != nil {
			t.Fatalf("vector ops with descriptors: %+v", ee)
		}
	})
}

func init() {
	register("fi_msg/every_send_and_recv_variant", func(t *testing.T, tg Target) {
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
			{"fi_send", func() error { return a.ep.Send(payload, nil, ab, "s") }, false, false},
			{"fi_sendv", func() error { return a.ep.SendV([][]byte{half1, half2}, nil, ab, "s") }, false, false},
			{"fi_sendmsg", func() error {
				return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{half1, half2}, Addr: ab, Context: "s"}, 0)
			}, false, false},
			{"fi_inject", func() error { return a.ep.Inject(payload, ab) }, false, true},
		}
		if cqd {
			variants = append(variants,
				variant{"fi_senddata", func() error { return a.ep.SendData(payload, nil, 0x5a, ab, "s") }, true, false},
				variant{"fi_injectdata", func() error { return a.ep.InjectData(payload, 0x5a, ab) }, true, true})
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
				"fi_read":             a.ep.Read(make([]byte, 1), nil, ab, 0, 0, nil),
				"fi_readv":            a.ep.ReadV([][]byte{make([]byte, 1)}, nil, ab, 0, 0, nil),
				"fi_readmsg":          a.ep.ReadMsg(&fabric.Msg{IOV: [][]byte{make([]byte, 1)}, Addr: ab, RMA: rma}, 0),
				"fi_writev":           a.ep.WriteV([][]byte{payload}, nil, ab, 0, 0, nil),
				"fi_writemsg":         a.ep.WriteMsg(&fabric.Msg{IOV: [][]byte{payload}, Addr: ab, RMA: rma}, 0),
				"fi_writedata":        a.ep.WriteData(payload, nil, 1, ab, 0, 0, nil),
				"fi_inject_write":     a.ep.InjectWrite(payload, ab, 0, 0),
				"fi_inject_writedata": a.ep.InjectWriteData(payload, 1, ab, 0, 0),
			} {
				isErr(t, name+" without FI_RMA", err, fabric.ErrNoSys)
			}
		}
	})
}
