package fabtest

import (
	"context"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// recorder is a test CQ owner (fi_peer(3) owner side).
type recorder struct {
	ok   []fabric.CQEntry
	errs []fabric.CQErrEntry
}

func (r *recorder) Write(ctx any, flags fabric.Flags, length uint64, buf []byte, data, tag uint64, src fabric.Addr) error {
	r.ok = append(r.ok, fabric.CQEntry{OpContext: ctx, Flags: flags, Len: length, Buf: buf, Data: data, Tag: tag})
	return nil
}

func (r *recorder) WriteErr(e *fabric.CQErrEntry) error {
	r.errs = append(r.errs, *e)
	return nil
}

var _ provider.CQOwner = (*recorder)(nil)

func init() {
	register("fi_cq/read_empty_EAGAIN", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		n, err := e.rxcq.Read(make([]fabric.CQEntry, 4))
		if n != 0 {
			t.Fatalf("n=%d", n)
		}
		isErr(t, "read empty", err, fabric.ErrAgain)
		var ee fabric.CQErrEntry
		isErr(t, "readerr empty", e.rxcq.ReadErr(&ee), fabric.ErrAgain)
	})
	register("fi_cq/sread_timeout", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{wait: fabric.WaitUnspec})
		start := time.Now()
		_, err := e.rxcq.SRead(make([]fabric.CQEntry, 1), 0, 200)
		el := time.Since(start)
		isErr(t, "sread timeout", err, fabric.ErrAgain)
		if el < 150*time.Millisecond || el > scaled(2*time.Second) {
			t.Fatalf("sread(200ms) returned after %v", el)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err = e.rxcq.ReadWait(ctx, make([]fabric.CQEntry, 1))
		if !errors.Is(err, fabric.ErrAgain) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ReadWait deadline error %v should match ErrAgain and DeadlineExceeded", err)
		}
	})
	register("fi_cq/sread_wakes_on_message", func(t *testing.T, tg Target) {
		a, b, ab, _ := tg.pair(t, envOpts{wait: fabric.WaitUnspec})
		buf := make([]byte, 16)
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			ent := make([]fabric.CQEntry, 1)
			n, err := b.rxcq.SRead(ent, 0, int(scaled(5*time.Second)/time.Millisecond))
			if err == nil && (n != 1 || ent[0].Len != 4) {
				err = errors.New("wrong completion")
			}
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		retry(t, "send", func() error { return a.ep.Send([]byte("wake"), nil, ab, nil) }, a.txcq)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("sread: %v", err)
			}
		case <-time.After(scaled(5 * time.Second)):
			t.Fatal("sread did not wake for an arriving message")
		}
	})
	register("fi_cq/signal_before_sread", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		cq := e.openCQ(&fabric.CQAttr{Size: 1, WaitObj: fabric.WaitUnspec, Format: fabric.CQFormatContext})
		if err := cq.Signal(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := cq.SRead(make([]fabric.CQEntry, 1), 0, 2000)
		if !errors.Is(err, fabric.ErrAgain) && !errors.Is(err, fabric.ErrCanceled) {
			t.Fatalf("sread after signal: %v", err)
		}
		if time.Since(start) > time.Second {
			t.Fatalf("signalled sread took %v", time.Since(start))
		}
	})
	register("fi_cq/format_context_only_context", func(t *testing.T, tg Target) {
		a, b, ab, _ := tg.pair(t, envOpts{format: fabric.CQFormatContext})
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "rctx"); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("x"), nil, ab, "sctx") }, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != "rctx" || got.Len != 0 || got.Flags != 0 {
			t.Fatalf("FI_CQ_FORMAT_CONTEXT entry %+v; only op_context may be set", got)
		}
	})
	register("fi_cq/format_msg_flags_len", func(t *testing.T, tg Target) {
		a, b, ab, _ := tg.pair(t, envOpts{format: fabric.CQFormatMsg})
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("xyz"), nil, ab, nil) }, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.Len != 3 || got.Flags != fabric.FlagRecv|fabric.FlagMsg || got.Buf != nil {
			t.Fatalf("FI_CQ_FORMAT_MSG entry %+v", got)
		}
	})
	register("fi_cq/overrun_EOVERRUN", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("opens extra endpoints that need connectionless addressing")
		}
		// Only without resource management may a CQ overrun (fi_domain(3));
		// fi_cq/rm_enabled_full_cq_EAGAIN_no_overrun covers FI_RM_ENABLED.
		a, _, ab, _ := tg.pair(t, envOpts{modify: func(in *fabric.Info) {
			in.DomainAttr.ResourceMgmt = fabric.RMDisabled
		}})
		cq := a.openCQ(&fabric.CQAttr{Size: 2, Format: fabric.CQFormatContext})
		ep, err := a.dom.OpenEndpoint(a.info)
		if err != nil {
			t.Fatal(err)
		}
		defer ep.Close()
		if err := ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
			t.Fatal(err)
		}
		if err := ep.BindAV(a.av); err != nil {
			t.Fatal(err)
		}
		if err := ep.Enable(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			retry(t, "send", func() error { return ep.Send([]byte("o"), nil, ab, i) }, cq)
		}
		ent := make([]fabric.CQEntry, 8)
		n, err := cq.Read(ent)
		if n != 2 || err != nil {
			t.Fatalf("read of a full size-2 CQ = %d, %v; want the 2 valid entries", n, err)
		}
		_, err = cq.Read(ent)
		isErr(t, "read after drain", err, fabric.ErrOverrun)
	})
	register("fi_cq/wait_fd_pollable", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		cq, err := e.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitFD, Format: fabric.CQFormatContext})
		if err != nil {
			t.Fatalf("FI_WAIT_FD CQ: %v", err)
		}
		defer cq.Close()
		fd, err := cq.WaitFD()
		if err != nil || fd < 0 {
			t.Fatalf("FI_GETWAIT: %d, %v", fd, err)
		}
		if err := cq.TryWait(); err != nil {
			t.Fatalf("trywait on empty CQ: %v", err)
		}
		none, err := e.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitNone, Format: fabric.CQFormatContext})
		if err != nil {
			t.Fatal(err)
		}
		defer none.Close()
		if _, err := none.WaitFD(); err == nil {
			t.Fatal("FI_GETWAIT on a FI_WAIT_NONE CQ succeeded")
		}
	})
	register("fi_cq/bad_attr_EINVAL", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		if _, err := e.dom.OpenCQ(&fabric.CQAttr{Format: 99}); !errors.Is(err, fabric.ErrInval) && !errors.Is(err, fabric.ErrNoSys) {
			t.Fatalf("bad format: %v", err)
		}
		if _, err := e.dom.OpenCQ(&fabric.CQAttr{WaitObj: 99}); !errors.Is(err, fabric.ErrInval) && !errors.Is(err, fabric.ErrNoSys) {
			t.Fatalf("bad wait object: %v", err)
		}
	})
	register("fi_cq/zero_alloc_empty_read", func(t *testing.T, tg Target) {
		if raceEnabled {
			t.Skip("allocation counts are not meaningful under -race")
		}
		e := tg.open(t, envOpts{})
		ent := make([]fabric.CQEntry, 4)
		if n := testing.AllocsPerRun(200, func() { e.rxcq.Read(ent) }); n != 0 {
			t.Fatalf("empty CQ read allocates %v times", n)
		}
	})
	register("fi_msg/zero_alloc_send_recv_steady_state", func(t *testing.T, tg Target) {
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
	})
	register("fi_peer/import_cq_completions_land_in_owner", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("opens extra endpoints that need connectionless addressing")
		}
		a, _, ab, _ := tg.pair(t, envOpts{})
		owner := &recorder{}
		if _, err := a.dom.OpenCQ(&fabric.CQAttr{Flags: fabric.FlagPeer}); !errors.Is(err, fabric.ErrInval) {
			t.Fatalf("FI_PEER without owner: %v", err)
		}
		pcq, err := a.dom.OpenCQ(&fabric.CQAttr{Flags: fabric.FlagPeer, Peer: owner, Format: fabric.CQFormatTagged})
		if err != nil {
			t.Fatalf("open peer CQ: %v", err)
		}
		defer pcq.Close()
		ep, err := a.dom.OpenEndpoint(a.info)
		if err != nil {
			t.Fatal(err)
		}
		defer ep.Close()
		for _, f := range []fabric.Flags{fabric.FlagTransmit, fabric.FlagRecv} {
			if err := ep.BindCQ(pcq, f); err != nil {
				t.Fatal(err)
			}
		}
		if err := ep.BindAV(a.av); err != nil {
			t.Fatal(err)
		}
		if err := ep.Enable(); err != nil {
			t.Fatal(err)
		}
		var ee fabric.CQErrEntry
		isErr(t, "readerr on a peer CQ", pcq.ReadErr(&ee), fabric.ErrNoSys)
		_, err = pcq.SRead(make([]fabric.CQEntry, 1), 0, 10)
		isErr(t, "sread on a peer CQ", err, fabric.ErrNoSys)
		ctx := new(int)
		retry(t, "send", func() error { return ep.Send([]byte("peer"), nil, ab, ctx) }, pcq)
		deadline := time.Now().Add(scaled(2 * time.Second))
		for len(owner.ok) == 0 && time.Now().Before(deadline) {
			pcq.Read(nil)
		}
		if len(owner.ok) != 1 || owner.ok[0].OpContext != ctx || owner.ok[0].Flags != fabric.FlagSend|fabric.FlagMsg {
			t.Fatalf("owner received %+v", owner.ok)
		}
	})
}
