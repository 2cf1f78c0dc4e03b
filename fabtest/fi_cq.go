package fabtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// cqCases lists the fi_cq(3) behaviours, in the order they run.
var cqCases = []testCase{
	{"fi_cq/read_empty_EAGAIN", cqReadEmptyEAGAIN},
	{"fi_cq/sread_timeout", cqSreadTimeout},
	{"fi_cq/sread_wakes_on_message", cqSreadWakesOnMessage},
	{"fi_cq/signal_before_sread", cqSignalBeforeSread},
	{"fi_cq/format_context_only_context", cqFormatContextOnlyContext},
	{"fi_cq/format_msg_flags_len", cqFormatMsgFlagsLen},
	{"fi_cq/overrun_EOVERRUN", cqOverrunEOVERRUN},
	{"fi_cq/wait_fd_pollable", cqWaitFdPollable},
	{"fi_cq/bad_attr_EINVAL", cqBadAttrEINVAL},
	{"fi_cq/zero_alloc_empty_read", cqZeroAllocEmptyRead},
	{"fi_cq/open_close_sizes", cqOpenCloseSizes},
	{"fi_cq/formats_fill_their_fields", cqFormatsFillTheirFields},
	{"fi_cq/read_count_bounds_and_nil_progress", cqReadCountBoundsAndNilProgress},
	{"fi_cq/error_entry_keeps_order_among_successes", cqErrorEntryKeepsOrderAmongSuccesses},
	{"fi_cq/threshold_cond_and_affinity_accepted", cqThresholdCondAndAffinityAccepted},
	{"fi_cq/readfrom_unknown_or_without_FI_SOURCE_NOTAVAIL", cqReadfromUnknownOrWithoutFISOURCENOTAVAIL},
	{"fi_cq/source_err_data_copy_and_insertable", cqSourceErrDataCopyAndInsertable},
	{"fi_cq/shared_by_endpoints_and_directions", cqSharedByEndpointsAndDirections},
	{"fi_cq/wait_fd_readable_on_completion", cqWaitFdReadableOnCompletion},
	{"fi_cq/strerror_printable", cqStrerrorPrintable},
	{"fi_cq/rm_enabled_recv_with_full_rx_cq_EAGAIN", cqRmEnabledRecvWithFullRxCqEAGAIN},
	{"fi_cq/source_err_unknown_sender_EADDRNOTAVAIL", cqSourceErrUnknownSenderEADDRNOTAVAIL},
	{"fi_cq/source_err_unexpected_large_and_tagged", cqSourceErrUnexpectedLargeAndTagged},
	{"fi_cq/buffered_recv_FI_MORE_and_FI_CLAIM_flags", cqBufferedRecvFIMOREAndFICLAIMFlags},
}

func cqReadEmptyEAGAIN(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{})
	n, err := e.rxcq.Read(make([]fabric.CQEntry, 4))
	if n != 0 {
		t.Fatalf("n=%d", n)
	}
	isErr(t, "read empty", err, fabric.ErrAgain)
	var ee fabric.CQErrEntry
	isErr(t, "readerr empty", e.rxcq.ReadErr(&ee), fabric.ErrAgain)
}

func cqSreadTimeout(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{wait: fabric.WaitUnspec})
	start := time.Now()
	_, err := e.rxcq.SRead(make([]fabric.CQEntry, 1), 0, 200*time.Millisecond)
	el := time.Since(start)
	isErr(t, "sread timeout", err, fabric.ErrAgain)
	if el < 150*time.Millisecond || el > scaled(2*time.Second) {
		t.Fatalf("sread(200ms) returned after %v", el)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = e.rxcq.SReadContext(ctx, make([]fabric.CQEntry, 1), 0)
	if !errors.Is(err, fabric.ErrAgain) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SReadContext deadline error %v should match ErrAgain and DeadlineExceeded", err)
	}
}

func cqSreadWakesOnMessage(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{wait: fabric.WaitUnspec})
	buf := make([]byte, 16)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		ent := make([]fabric.CQEntry, 1)
		n, err := b.rxcq.SRead(ent, 0, scaled(5*time.Second))
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
}

func cqSignalBeforeSread(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{})
	cq := e.openCQ(&fabric.CQAttr{Size: 1, WaitObj: fabric.WaitUnspec, Format: fabric.CQFormatContext})
	if err := cq.Signal(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := cq.SRead(make([]fabric.CQEntry, 1), 0, 2*time.Second)
	if !errors.Is(err, fabric.ErrAgain) && !errors.Is(err, fabric.ErrCanceled) {
		t.Fatalf("sread after signal: %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatalf("signalled sread took %v", time.Since(start))
	}
}

func cqFormatContextOnlyContext(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{format: fabric.CQFormatContext})
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "rctx"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("x"), nil, ab, "sctx") }, a.txcq)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.OpContext != "rctx" || got.Len != 0 || got.Flags != 0 {
		t.Fatalf("FI_CQ_FORMAT_CONTEXT entry %+v; only op_context may be set", got)
	}
}

func cqFormatMsgFlagsLen(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{format: fabric.CQFormatMsg})
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("xyz"), nil, ab, nil) }, a.txcq)
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.Len != 3 || got.Flags != fabric.FlagRecv|fabric.FlagMsg || got.Buf != nil {
		t.Fatalf("FI_CQ_FORMAT_MSG entry %+v", got)
	}
}

func cqOverrunEOVERRUN(t *testing.T, tg Target) {
	connectionless(t, tg)
	// Only without resource management may a CQ overrun (fi_domain(3));
	// fi_domain/rm_enabled_* cover FI_RM_ENABLED.
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
	// A provider that sets up connections on demand (tcp RDM) completes
	// the first send to a peer once connected: warm the path up first, so
	// that the sends below complete as they are posted.
	retry(t, "warm-up send", func() error { return ep.Send([]byte("w"), nil, ab, -1) }, cq)
	if _, ee := waitCQ(t, cq); ee != nil {
		t.Fatalf("warm-up send: %+v", ee)
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
}

func cqWaitFdPollable(t *testing.T, tg Target) {
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
}

func cqBadAttrEINVAL(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	if _, err := e.dom.OpenCQ(&fabric.CQAttr{Format: 99}); !errors.Is(err, fabric.ErrInval) && !errors.Is(err, fabric.ErrNoSys) {
		t.Fatalf("bad format: %v", err)
	}
	if _, err := e.dom.OpenCQ(&fabric.CQAttr{WaitObj: 99}); !errors.Is(err, fabric.ErrInval) && !errors.Is(err, fabric.ErrNoSys) {
		t.Fatalf("bad wait object: %v", err)
	}
}

func cqZeroAllocEmptyRead(t *testing.T, tg Target) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	e := tg.open(t, envOpts{})
	ent := make([]fabric.CQEntry, 4)
	if n := testing.AllocsPerRun(200, func() { e.rxcq.Read(ent) }); n != 0 {
		t.Fatalf("empty CQ read allocates %v times", n)
	}
}

func cqOpenCloseSizes(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	sizes := []uint64{0}
	for s := uint64(1); s <= 1<<16; s *= 2 {
		sizes = append(sizes, s)
	}
	for _, s := range sizes {
		cq, err := e.dom.OpenCQ(&fabric.CQAttr{Size: s, WaitObj: fabric.WaitUnspec})
		if err != nil {
			t.Fatalf("fi_cq_open(size %d): %v", s, err)
		}
		if a := cq.Attr(); a.Size < s || a.Size == 0 || a.Format == fabric.CQFormatUnspec {
			t.Fatalf("size %d: attr %+v (size and format must be filled in)", s, a)
		}
		if err := cq.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func cqFormatsFillTheirFields(t *testing.T, tg Target) {
	for _, f := range []fabric.CQFormat{fabric.CQFormatUnspec, fabric.CQFormatData, fabric.CQFormatTagged} {
		a, b, ab, _ := tg.pair(t, envOpts{format: f})
		rctx, sctx := new(int), new(int)
		buf := make([]byte, 16)
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, rctx); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("fmt"), nil, ab, sctx) }, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != rctx {
			t.Fatalf("format %v: %+v %+v", f, got, ee)
		}
		sent, ee := waitCQ(t, a.txcq, b.rxcq)
		if ee != nil || sent.OpContext != sctx {
			t.Fatalf("format %v: send completion %+v %+v", f, sent, ee)
		}
		switch f {
		case fabric.CQFormatUnspec:
			if b.rxcq.Attr().Format == fabric.CQFormatUnspec {
				t.Fatal("FI_CQ_FORMAT_UNSPEC not resolved to a format")
			}
		default:
			if got.Flags != fabric.FlagRecv|fabric.FlagMsg || got.Len != 3 || got.Buf != nil || got.Data != 0 || got.Tag != 0 {
				t.Fatalf("format %v receive entry %+v: want flags FI_RECV|FI_MSG, len 3, no buf/data/tag", f, got)
			}
			if sent.Flags != fabric.FlagSend|fabric.FlagMsg || sent.Buf != nil || sent.Data != 0 {
				t.Fatalf("format %v send entry %+v", f, sent)
			}
		}
	}
}

func cqReadCountBoundsAndNilProgress(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	const n = 5
	for i := 0; i < n; i++ {
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		retry(t, "send", func() error { return a.ep.Send([]byte{byte(i)}, nil, ab, nil) }, a.txcq)
	}
	drainTx(t, a.txcq, n, b.rxcq)
	// fi_cq_read(cq, NULL, 0) only drives progress and reports state.
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		_, err := b.rxcq.Read(nil)
		if err == nil {
			break
		}
		if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			t.Fatalf("Read(nil) with completions pending: %v", err)
		}
	}
	ent := make([]fabric.CQEntry, 2)
	total := 0
	for total < n && time.Now().Before(deadline) {
		k, err := b.rxcq.Read(ent)
		if k < 0 || k > len(ent) {
			t.Fatalf("Read of %d entries returned %d", len(ent), k)
		}
		if err != nil && !errors.Is(err, fabric.ErrAgain) {
			t.Fatal(err)
		}
		for _, c := range ent[:k] {
			if c.OpContext != total {
				t.Fatalf("completion %d has context %v", total, c.OpContext)
			}
			total++
		}
	}
	if total != n {
		t.Fatalf("read %d of %d completions", total, n)
	}
	_, err := b.rxcq.Read(ent)
	isErr(t, "read after draining", err, fabric.ErrAgain)
}

func cqErrorEntryKeepsOrderAmongSuccesses(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	bufs := [][]byte{make([]byte, 16), make([]byte, 2), make([]byte, 16)}
	for i, buf := range bufs {
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"first", "second", "third"} {
		msg := []byte(m)
		retry(t, "send", func() error { return a.ep.Send(msg, nil, ab, nil) }, a.txcq)
		waitCQ(t, a.txcq)
	}
	got, ee := waitCQ(t, b.rxcq)
	if ee != nil || got.OpContext != 0 {
		t.Fatalf("first completion %+v %+v", got, ee)
	}
	// The truncated receive is next: reads return ErrAvail until it is
	// read with ReadErr; ReadErr then reports ErrAgain.
	waitAvail(t, "read before the error entry", b.rxcq)
	var ent [1]fabric.CQEntry
	_, err := b.rxcq.Read(ent[:])
	isErr(t, "second read with the error at the head", err, fabric.ErrAvail)
	var e fabric.CQErrEntry
	if err := b.rxcq.ReadErr(&e); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(e.Err, fabric.ErrTrunc) || e.OpContext != 1 || e.Flags != fabric.FlagRecv|fabric.FlagMsg ||
		e.Len != 2 || e.Olen != 4 {
		t.Fatalf("error entry %+v; want ETRUNC, ctx 1, FI_RECV|FI_MSG, len 2, olen 4", e)
	}
	isErr(t, "second readerr", b.rxcq.ReadErr(&e), fabric.ErrAgain)
	got, ee = waitCQ(t, b.rxcq)
	if ee != nil || got.OpContext != 2 || string(bufs[2][:got.Len]) != "third" {
		t.Fatalf("success after the error %+v %+v", got, ee)
	}
}

func cqThresholdCondAndAffinityAccepted(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, b, _, _ := tg.pair(t, envOpts{})
	cq := b.openCQ(&fabric.CQAttr{WaitObj: fabric.WaitUnspec, WaitCond: fabric.CQCondThreshold,
		Format: fabric.CQFormatContext})
	aff := b.openCQ(&fabric.CQAttr{Flags: provider.FlagAffinity, SignalingVector: 1})
	_ = aff
	ep := b.bareEndpoint()
	for _, err := range []error{ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv), bindAVIfAny(ep, b), ep.Enable()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	name, err := ep.Name()
	if err != nil {
		t.Fatal(err)
	}
	dst := a.insert(name)
	const n = 3
	for i := 0; i < n; i++ {
		if err := ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		retry(t, "send", func() error { return a.ep.Send([]byte("t"), nil, dst, nil) }, a.txcq)
	}
	drainTx(t, a.txcq, n)
	ent := make([]fabric.CQEntry, 8)
	got := 0
	deadline := time.Now().Add(scaled(5 * time.Second))
	for got < n && time.Now().Before(deadline) {
		k, err := cq.SRead(ent, n-got, scaled(5*time.Second))
		if err != nil {
			t.Fatalf("sread with threshold: %v", err)
		}
		got += k
	}
	if got != n {
		t.Fatalf("threshold sread delivered %d of %d", got, n)
	}
}

func cqReadfromUnknownOrWithoutFISOURCENOTAVAIL(t *testing.T, tg Target) {
	connectionless(t, tg)
	// Without FI_SOURCE the source is FI_ADDR_NOTAVAIL even for a known
	// peer; with FI_SOURCE (no FI_SOURCE_ERR) an unknown peer is too.
	for _, caps := range []fabric.Caps{0, fabric.CapSource} {
		o := envOpts{caps: caps}
		if caps == 0 {
			// FI_SOURCE is secondary: providers return it unasked.
			o.modify = func(in *fabric.Info) {
				in.Caps &^= fabric.CapSource | fabric.CapSourceErr
				in.RxAttr.Caps &^= fabric.CapSource | fabric.CapSourceErr
			}
		}
		b := tg.open(t, o)
		a := tg.open(t, envOpts{})
		ab := a.insert(b.addr)
		if caps == 0 {
			b.insert(a.addr)
		}
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "r"); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("src"), nil, ab, nil) }, a.txcq)
		ent, src := waitFrom(t, fmt.Sprintf("caps %v", caps), b.rxcq, a.txcq)
		if ent.OpContext != "r" || src != fabric.AddrNotAvail {
			t.Fatalf("caps %v: entry %+v source %v; want FI_ADDR_NOTAVAIL", caps, ent, src)
		}
	}
	e := tg.open(t, envOpts{})
	_, err := e.rxcq.ReadFrom(make([]fabric.CQEntry, 2), make([]fabric.Addr, 1))
	isErr(t, "ReadFrom with a short source slice", err, fabric.ErrInval)
}

func cqSourceErrDataCopyAndInsertable(t *testing.T, tg Target) {
	connectionless(t, tg)
	b := tg.open(t, envOpts{caps: fabric.CapSource | fabric.CapSourceErr})
	a := tg.open(t, envOpts{})
	ab := a.insert(b.addr)
	for i := 0; i < 2; i++ {
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		retry(t, "send", func() error { return a.ep.Send([]byte("?"), nil, ab, nil) }, a.txcq)
	}
	// First error: a caller buffer shorter than the address gets a copy
	// of what fits.
	_, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrAddrNotAvail) {
		t.Fatalf("first unknown-source completion: %+v", ee)
	}
	if !bytes.Equal(ee.ErrData, a.addr) {
		t.Fatalf("provider-owned err_data % x; want % x", ee.ErrData, a.addr)
	}
	waitAvail(t, "second unknown-source completion", b.rxcq, a.txcq)
	user := make([]byte, 4)
	e := fabric.CQErrEntry{ErrData: user}
	if err := b.rxcq.ReadErr(&e); err != nil {
		t.Fatal(err)
	}
	if len(e.ErrData) != 4 || &e.ErrData[0] != &user[0] || !bytes.Equal(e.ErrData, a.addr[:4]) {
		t.Fatalf("err_data copied into a 4-byte buffer = % x", e.ErrData)
	}
	// The reported address is insertable, and then the sender is known.
	ba := b.insert(ee.ErrData)
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "known"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("!"), nil, ab, nil) }, a.txcq)
	got, src := waitFrom(t, "after inserting err_data", b.rxcq, a.txcq)
	if got.OpContext != "known" || src != ba {
		t.Fatalf("after insert: %+v from %v; want from %v", got, src, ba)
	}
}

func cqSharedByEndpointsAndDirections(t *testing.T, tg Target) {
	connectionless(t, tg)
	e := tg.open(t, envOpts{noEnable: true})
	shared := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
	var eps [2]*fabric.Endpoint
	var fa [2]fabric.Addr
	for i := range eps {
		eps[i] = e.bareEndpoint()
		for _, err := range []error{eps[i].BindCQ(shared, fabric.FlagTransmit|fabric.FlagRecv), eps[i].BindAV(e.av),
			eps[i].Enable()} {
			if err != nil {
				t.Fatal(err)
			}
		}
		name, err := eps[i].Name()
		if err != nil {
			t.Fatal(err)
		}
		fa[i] = e.insert(name)
	}
	// 0 -> 1 and 1 -> 0: four completions on the one CQ.
	for i := range eps {
		if err := eps[i].Recv(make([]byte, 8), nil, fabric.AddrUnspec, "recv"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range eps {
		i := i
		retry(t, "send", func() error { return eps[i].Send([]byte("x"), nil, fa[1-i], "send") }, shared)
	}
	counts := map[any]int{}
	for k := 0; k < 4; k++ {
		got, ee := waitCQ(t, shared)
		if ee != nil {
			t.Fatalf("shared CQ error %+v", ee)
		}
		want := fabric.FlagSend | fabric.FlagMsg
		if got.OpContext == "recv" {
			want = fabric.FlagRecv | fabric.FlagMsg
		}
		if got.Flags != want {
			t.Fatalf("entry %+v", got)
		}
		counts[got.OpContext]++
	}
	if counts["send"] != 2 || counts["recv"] != 2 {
		t.Fatalf("shared CQ entries %v; want 2 sends and 2 receives", counts)
	}
	isErr(t, "close the shared CQ", shared.Close(), fabric.ErrBusy)
}

func cqWaitFdReadableOnCompletion(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{wait: fabric.WaitFD})
	fd, err := b.rxcq.WaitFD()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.rxcq.TryWait(); err != nil {
		t.Fatalf("trywait on an empty CQ: %v", err)
	}
	if r, ok := fdReadable(fd); ok && r {
		t.Fatal("wait fd readable before anything arrived")
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("fd"), nil, ab, nil) }, a.txcq)
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		if r, ok := fdReadable(fd); !ok || r {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("wait fd never became readable for an arriving message")
		}
		time.Sleep(100 * time.Microsecond)
	}
	// fi_trywait now refuses to let the caller block, and a read gets it.
	for time.Now().Before(deadline) && !errors.Is(b.rxcq.TryWait(), fabric.ErrAgain) {
	}
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.Len != 2 {
		t.Fatalf("completion %+v %+v", got, ee)
	}
}

func cqStrerrorPrintable(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{})
	for _, errno := range []int{int(fabric.ErrTrunc), int(fabric.ErrCanceled), 0, 12345} {
		if s := e.rxcq.StrError(errno, nil); s == "" {
			t.Fatalf("fi_cq_strerror(%d) is empty", errno)
		}
	}
}

func cqRmEnabledRecvWithFullRxCqEAGAIN(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{cqSize: 2})
	if b.info.DomainAttr.ResourceMgmt != fabric.RMEnabled {
		t.Skip("FI_RM_DISABLED")
	}
	for i := 0; i < 2; i++ {
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("x"), nil, ab, nil) }, a.txcq)
		waitCQ(t, a.txcq)
	}
	// Let both receives complete into the size-2 CQ without reading it.
	deadline := time.Now().Add(scaled(30 * time.Millisecond))
	for time.Now().Before(deadline) {
		b.rxcq.Read(nil)
	}
	isErr(t, "recv with a full rx CQ", b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "third"), fabric.ErrAgain)
	ent := make([]fabric.CQEntry, 2)
	if n, err := b.rxcq.Read(ent); n != 2 || err != nil {
		t.Fatalf("read = %d, %v; want the 2 completions, no overrun", n, err)
	}
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "third"); err != nil {
		t.Fatalf("recv after draining the CQ: %v", err)
	}
}

func cqSourceErrUnknownSenderEADDRNOTAVAIL(t *testing.T, tg Target) {
	connectionless(t, tg)
	b := tg.open(t, envOpts{caps: fabric.CapSource | fabric.CapSourceErr})
	a := tg.open(t, envOpts{})
	ab := a.insert(b.addr) // b does not know a
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "r"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("who"), nil, ab, nil) }, a.txcq)
	_, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrAddrNotAvail) || ee.OpContext != "r" || ee.Len != 3 {
		t.Fatalf("unknown source completion = %+v; want FI_EADDRNOTAVAIL", ee)
	}
	if !bytes.Equal(ee.ErrData, a.addr) {
		t.Fatalf("err_data = % x; want the sender's address % x", ee.ErrData, a.addr)
	}
}

// cqSourceErrUnexpectedLargeAndTagged: on a reliable endpoint, messages
// from an unknown source complete with FI_EADDRNOTAVAIL and the sender's
// address whichever way the provider receives them: arrived before their
// receive was posted (unexpected), larger than an inline or eager
// message, tagged; each completion carries the whole data and its length.
// Once the reported address is inserted, the sender's next message
// completes normally with that fi_addr as its source.
func cqSourceErrUnexpectedLargeAndTagged(t *testing.T, tg Target) {
	connectionless(t, tg)
	if tg.EPType != fabric.EPRDM {
		t.Skipf("%v: unexpected messages may be dropped (needs FI_EP_RDM)", tg.EPType)
	}
	b := tg.open(t, envOpts{caps: fabric.CapSource | fabric.CapSourceErr | fabric.CapTagged})
	a := tg.open(t, envOpts{caps: fabric.CapTagged})
	ab := a.insert(b.addr) // b does not know a
	large := 256 << 10
	if m := b.info.EPAttr.MaxMsgSize; uint64(large) > m {
		large = int(m)
	}
	type msg struct {
		data     []byte
		tagged   bool
		tag      uint64
		expected bool // the receive is posted before the send
	}
	msgs := []msg{
		{data: pattern(make([]byte, 16), 1)},
		{data: pattern(make([]byte, large), 2)},
		{data: pattern(make([]byte, 40), 3), tagged: true, tag: 7},
		{data: pattern(make([]byte, large), 4), tagged: true, tag: 8, expected: true},
	}
	post := func(i int, buf []byte) {
		var err error
		if msgs[i].tagged {
			err = b.ep.TRecv(buf, nil, fabric.AddrUnspec, msgs[i].tag, 0, i)
		} else {
			err = b.ep.Recv(buf, nil, fabric.AddrUnspec, i)
		}
		if err != nil {
			t.Fatalf("receive %d: %v", i, err)
		}
	}
	bufs := make([][]byte, len(msgs))
	for i, m := range msgs {
		bufs[i] = make([]byte, len(m.data)+8)
		if m.expected {
			post(i, bufs[i])
		}
		retry(t, "send", func() error {
			if m.tagged {
				return a.ep.TSend(m.data, nil, ab, m.tag, i)
			}
			return a.ep.Send(m.data, nil, ab, i)
		}, a.txcq, b.rxcq)
	}
	got := map[int]bool{}
	check := func(ee *fabric.CQErrEntry) {
		t.Helper()
		if ee == nil {
			t.Fatal("a message from an unknown source completed successfully")
		}
		i, ok := ee.OpContext.(int)
		if !ok || i < 0 || i >= len(msgs) || got[i] {
			t.Fatalf("error completion with context %v", ee.OpContext)
		}
		got[i] = true
		m := msgs[i]
		if !errors.Is(ee.Err, fabric.ErrAddrNotAvail) || ee.Len != uint64(len(m.data)) ||
			!bytes.Equal(bufs[i][:len(m.data)], m.data) {
			t.Fatalf("message %d (%d bytes, tagged %v): error entry %+v", i, len(m.data), m.tagged, ee)
		}
		if m.tagged && (ee.Flags&fabric.FlagTagged == 0 || ee.Tag != m.tag) {
			t.Fatalf("message %d: flags %v tag %d", i, ee.Flags, ee.Tag)
		}
		if !bytes.Equal(ee.ErrData, a.addr) {
			t.Fatalf("message %d: err_data %q; want the sender's address %q", i, ee.ErrData, a.addr)
		}
	}
	// Let the unexpected ones arrive before their receives (the
	// expected one may complete meanwhile).
	var ent [1]fabric.CQEntry
	for end := time.Now().Add(scaled(20 * time.Millisecond)); time.Now().Before(end); {
		n, err := b.rxcq.Read(ent[:])
		if n != 0 {
			t.Fatalf("successful completion %+v from an unknown source", ent[0])
		}
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			if err := b.rxcq.ReadErr(&ee); err != nil {
				t.Fatal(err)
			}
			if i, _ := ee.OpContext.(int); !msgs[i].expected {
				t.Fatalf("message %d completed before its receive was posted: %+v", i, ee)
			}
			check(&ee)
		}
		a.txcq.Read(nil)
	}
	for i, m := range msgs {
		if !m.expected {
			post(i, bufs[i])
		}
	}
	for len(got) < len(msgs) {
		_, ee := waitCQ(t, b.rxcq, a.txcq)
		check(ee)
	}
	drainTx(t, a.txcq, len(msgs), b.rxcq)
	ba := b.insert(a.addr)
	post(1, bufs[1])
	retry(t, "send", func() error { return a.ep.Send(msgs[1].data, nil, ab, "known") }, a.txcq, b.rxcq)
	known, src := waitFrom(t, "known sender", b.rxcq, a.txcq)
	if known.OpContext != 1 || src != ba || !bytes.Equal(bufs[1][:len(msgs[1].data)], msgs[1].data) {
		t.Fatalf("after insert: entry %+v source %v; want source %v", known, src, ba)
	}
}

// bindAVIfAny binds e's AV to ep when e has one.
func bindAVIfAny(ep *fabric.Endpoint, e *env) error {
	if e.av == nil {
		return nil
	}
	return ep.BindAV(e.av)
}

// cqBufferedRecvFIMOREAndFICLAIMFlags: with FI_CQ_FORMAT_DATA, a buffered
// receive's report carries buf (the provider's buffer) and len (the
// message size), FI_MORE only when buf is not the whole message; the
// claim's completion carries FI_CLAIM and not FI_MORE.
func cqBufferedRecvFIMOREAndFICLAIMFlags(t *testing.T, tg Target) {
	bufRecvOffered(t, tg, 0)
	const limit = 24
	o := envOpts{format: fabric.CQFormatData, mode: fabric.ModeBufferedRecv, bind: func(e *env) {
		if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedMin, 0); err != nil {
			t.Fatal(err)
		}
		if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit, limit); err != nil {
			t.Fatal(err)
		}
	}}
	a, b, ab, _ := tg.pair(t, o)
	for _, size := range []int{limit - 1, limit + 1} {
		msg := pattern(make([]byte, size), size)
		bufSend(t, a, b, ab, msg, false, 0)
		got, rc := waitBuffered(t, b, a)
		if more := got.Flags&fabric.FlagMore != 0; more != (size > limit) || got.Flags&fabric.FlagClaim != 0 {
			t.Fatalf("size %d: report flags %v", size, got.Flags)
		}
		if got.Len != uint64(size) || len(got.Buf) == 0 || !bytes.Equal(got.Buf, msg[:len(got.Buf)]) {
			t.Fatalf("size %d: report len %d buf %q", size, got.Len, got.Buf)
		}
		buf := make([]byte, size)
		if err := claim(b.ep, rc, buf, false); err != nil {
			t.Fatal(err)
		}
		c, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || c.Flags&fabric.FlagClaim == 0 || c.Flags&fabric.FlagMore != 0 || !bytes.Equal(buf, msg) {
			t.Fatalf("size %d: claim completion %+v %+v", size, c, ee)
		}
	}
}
