package fabtest

import (
	"context"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// pollCases lists the fi_poll(3) behaviours (wait sets and poll sets), in
// the order they run.
var pollCases = []testCase{
	{"fi_poll/wait_open_attr_errors_EINVAL", pollWaitOpenAttrErrors},
	{"fi_poll/wait_set_member_from_other_fabric_EINVAL", pollWaitSetOtherFabric},
	{"fi_poll/wait_close_in_use_EBUSY", pollWaitCloseInUse},
	{"fi_poll/wait_wakes_on_completion", pollWaitWakesOnCompletion},
	{"fi_poll/wait_counter_eq_and_signal_members", pollWaitCounterEQSignal},
	{"fi_poll/wait_context_cancel_and_deadline", pollWaitContext},
	{"fi_poll/wait_fd_trywait", pollWaitFDTryWait},
	{"fi_poll/wait_64_cqs_one_with_work", pollWait64CQs},
	{"fi_poll/poll_reports_members_with_work", pollPollReportsMembers},
	{"fi_poll/poll_add_del_close_errors", pollAddDelCloseErrors},
	{"fi_poll/pollfd_getwait_signals_completion", pollPollFDGetwait},
}

func pollWaitOpenAttrErrors(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	for _, w := range []fabric.WaitObj{fabric.WaitNone, fabric.WaitSet, fabric.WaitPollFD, fabric.WaitObj(42)} {
		ws, err := e.fab.OpenWait(&fabric.WaitAttr{WaitObj: w})
		if err == nil {
			ws.Close()
		}
		isErr(t, "fi_wait_open with "+w.String(), err, fabric.ErrInval)
	}
	_, err := e.fab.OpenWait(&fabric.WaitAttr{Flags: 1})
	isErr(t, "fi_wait_open with flags", err, fabric.ErrInval)
	ws, err := e.fab.OpenWait(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "wait set", ws.Close()) })
	_, err = e.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitSet})
	isErr(t, "CQ FI_WAIT_SET without a set", err, fabric.ErrInval)
	_, err = e.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitFD, WaitSet: ws})
	isErr(t, "CQ with a set but FI_WAIT_FD", err, fabric.ErrInval)
	_, err = e.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec, WaitSet: ws})
	isErr(t, "counter with a set but FI_WAIT_UNSPEC", err, fabric.ErrInval)
	_, err = e.fab.OpenEQ(&fabric.EQAttr{WaitObj: fabric.WaitSet})
	isErr(t, "EQ FI_WAIT_SET without a set", err, fabric.ErrInval)
	if _, err := ws.WaitFD(); !errors.Is(err, fabric.ErrNoSys) {
		t.Fatalf("FI_GETWAIT on an FI_WAIT_UNSPEC set: %v, want ErrNoSys", err)
	}
}

func pollWaitSetOtherFabric(t *testing.T, tg Target) {
	a := tg.open(t, envOpts{noEnable: true})
	b := tg.open(t, envOpts{noEnable: true})
	ws, err := a.fab.OpenWait(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "wait set", ws.Close()) })
	_, err = b.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	isErr(t, "CQ of another fabric's wait set", err, fabric.ErrInval)
	_, err = b.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	isErr(t, "counter of another fabric's wait set", err, fabric.ErrInval)
	_, err = b.fab.OpenEQ(&fabric.EQAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	isErr(t, "EQ of another fabric's wait set", err, fabric.ErrInval)
	isErr(t, "fi_trywait with another fabric's set", b.fab.TryWait(ws), fabric.ErrInval)
	isErr(t, "fi_trywait with another fabric's CQ", b.fab.TryWait(a.rxcq), fabric.ErrInval)
	isErr(t, "fi_trywait with a nil object", a.fab.TryWait((*fabric.CQ)(nil)), fabric.ErrInval)
}

func pollWaitCloseInUse(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	ws, err := e.fab.OpenWait(nil)
	if err != nil {
		t.Fatal(err)
	}
	cq, err := e.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	if err != nil {
		t.Fatal(err)
	}
	isErr(t, "close a wait set with members", ws.Close(), fabric.ErrBusy)
	isErr(t, "close the fabric of an open wait set", e.fab.Close(), fabric.ErrBusy)
	if err := cq.Close(); err != nil {
		t.Fatal(err)
	}
	isErr(t, "close a wait set with a counter", ws.Close(), fabric.ErrBusy)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// A waiter blocked on the set returns ErrClosed when it is closed.
	done := make(chan error, 1)
	go func() { done <- ws.Wait(-1) }()
	time.Sleep(scaled(5 * time.Millisecond))
	if err := ws.Close(); err != nil {
		t.Fatalf("close an unused wait set: %v", err)
	}
	select {
	case err := <-done:
		isErr(t, "wait on a closed set", err, fabric.ErrClosed)
	case <-time.After(scaled(5 * time.Second)):
		t.Fatal("Wait did not return after Close")
	}
	isErr(t, "second close", ws.Close(), fabric.ErrClosed)
	isErr(t, "wait after close", ws.Wait(0), fabric.ErrClosed)
	_, err = e.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	isErr(t, "CQ with a closed set", err, fabric.ErrClosed)
}

// waitSetFor waits on ws until it reports work, driving the progress of
// the sender's CQs between short waits (a manual-progress sender only
// sends when driven), and fails after the bound.
func waitSetFor(t testing.TB, ws *fabric.Wait, sender ...*fabric.CQ) {
	t.Helper()
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		err := ws.Wait(scaled(2 * time.Millisecond))
		if err == nil {
			return
		}
		if !errors.Is(err, fabric.ErrTimedOut) {
			t.Fatalf("fi_wait: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("fi_wait never reported the arriving completion")
		}
		for _, c := range sender {
			c.Read(nil)
		}
	}
}

func pollWaitWakesOnCompletion(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{waitSet: true})
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "r"); err != nil {
		t.Fatal(err)
	}
	isErr(t, "fi_wait with nothing queued", b.ws.Wait(scaled(time.Millisecond)), fabric.ErrTimedOut)
	retry(t, "send", func() error { return a.ep.Send([]byte("ws"), nil, ab, nil) }, a.txcq)
	waitSetFor(t, b.ws, a.txcq)
	ent := make([]fabric.CQEntry, 1)
	if n, err := b.rxcq.Read(ent); n != 1 || err != nil || ent[0].OpContext != "r" || ent[0].Len != 2 {
		t.Fatalf("read after fi_wait = %d, %v, %+v; want the receive", n, err, ent[0])
	}
	isErr(t, "fi_wait after the CQ was drained", b.ws.Wait(0), fabric.ErrTimedOut)
	// The sender's set reports its send completion.
	waitSetFor(t, a.ws)
	if n, err := a.txcq.Read(ent); n != 1 || err != nil {
		t.Fatalf("tx read after fi_wait = %d, %v", n, err)
	}
}

func pollWaitCounterEQSignal(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	ws, err := e.fab.OpenWait(&fabric.WaitAttr{WaitObj: fabric.WaitMutexCond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "wait set", ws.Close()) })
	c, err := e.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	skipIfNotSupported(t, "fi_cntr_open", err)
	t.Cleanup(func() { closeOK(t, "cntr", c.Close()) })
	eq, err := e.fab.OpenEQ(&fabric.EQAttr{WaitObj: fabric.WaitSet, WaitSet: ws, Flags: fabric.FlagWrite})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "eq", eq.Close()) })
	cq, err := e.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "cq", cq.Close()) })
	isErr(t, "empty set", ws.Wait(0), fabric.ErrTimedOut)

	// A counter change wakes one Wait from another goroutine.
	done := make(chan error, 1)
	go func() { done <- ws.Wait(scaled(5 * time.Second)) }()
	time.Sleep(scaled(2 * time.Millisecond))
	if err := c.Add(1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("fi_wait for a counter change: %v", err)
	}
	isErr(t, "counter change consumed", ws.Wait(0), fabric.ErrTimedOut)

	// An EQ event is work until it is read.
	if err := eq.Write(&fabric.EQEntry{Event: fabric.EventNotify, Context: "ev"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := ws.Wait(scaled(time.Second)); err != nil {
			t.Fatalf("fi_wait with a queued event (%d): %v", i, err)
		}
	}
	if _, err := eq.Read(0); err != nil {
		t.Fatal(err)
	}
	isErr(t, "event read", ws.Wait(0), fabric.ErrTimedOut)

	// fi_cq_signal on a member ends one Wait.
	if err := cq.Signal(); err != nil {
		t.Fatal(err)
	}
	if err := ws.Wait(0); err != nil {
		t.Fatalf("fi_wait after fi_cq_signal: %v", err)
	}
	isErr(t, "signal consumed", ws.Wait(0), fabric.ErrTimedOut)
}

func pollWaitContext(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	ws, err := e.fab.OpenWait(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "wait set", ws.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), scaled(3*time.Millisecond))
	defer cancel()
	err = ws.WaitContext(ctx)
	var we *fabric.WaitError
	if !errors.As(err, &we) || !errors.Is(err, fabric.ErrTimedOut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitContext past its deadline: %v", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	go func() { time.Sleep(scaled(2 * time.Millisecond)); ccancel() }()
	err = ws.WaitContext(cctx)
	if !errors.Is(err, fabric.ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitContext cancelled: %v", err)
	}
	c, err := e.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	skipIfNotSupported(t, "fi_cntr_open", err)
	t.Cleanup(func() { closeOK(t, "cntr", c.Close()) })
	c.Add(1)
	if err := ws.WaitContext(context.Background()); err != nil {
		t.Fatalf("WaitContext with work: %v", err)
	}
}

func pollWaitFDTryWait(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	ws, err := e.fab.OpenWait(&fabric.WaitAttr{WaitObj: fabric.WaitFD})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "wait set", ws.Close()) })
	fd, err := ws.WaitFD()
	if err != nil || fd < 0 {
		t.Fatalf("FI_GETWAIT: %d, %v", fd, err)
	}
	c, err := e.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	skipIfNotSupported(t, "fi_cntr_open", err)
	t.Cleanup(func() { closeOK(t, "cntr", c.Close()) })
	if err := e.fab.TryWait(ws); err != nil {
		t.Fatalf("fi_trywait on an idle set: %v", err)
	}
	if r, ok := fdReadable(fd); !ok || r {
		t.Fatalf("idle set descriptor readable=%v ok=%v", r, ok)
	}
	c.Add(1)
	if r, ok := fdReadable(fd); !ok || !r {
		t.Fatalf("descriptor after a counter change: readable=%v ok=%v", r, ok)
	}
	isErr(t, "fi_trywait with work", e.fab.TryWait(ws), fabric.ErrAgain)
	if err := e.fab.TryWait(ws); err != nil {
		t.Fatalf("fi_trywait once the change was seen: %v", err)
	}
	if err := e.fab.TryWait(); err != nil {
		t.Fatalf("fi_trywait with no objects: %v", err)
	}
}

func pollWait64CQs(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	ws, err := e.fab.OpenWait(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "wait set", ws.Close()) })
	cqs := make([]*fabric.CQ, 64)
	for i := range cqs {
		cqs[i] = e.openCQ(&fabric.CQAttr{WaitObj: fabric.WaitSet, WaitSet: ws})
	}
	for _, k := range []int{37, 0, 63} {
		done := make(chan error, 1)
		go func() { done <- ws.Wait(scaled(5 * time.Second)) }()
		time.Sleep(scaled(time.Millisecond))
		if err := cqs[k].Owner().Write(k, fabric.FlagRecv, 1, nil, 0, 0, fabric.AddrNotAvail); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("fi_wait for CQ %d: %v", k, err)
		}
		ent := make([]fabric.CQEntry, 1)
		if n, err := cqs[k].Read(ent); n != 1 || err != nil || ent[0].OpContext != k {
			t.Fatalf("CQ %d read = %d, %v, %+v", k, n, err, ent[0])
		}
		isErr(t, "set drained", ws.Wait(0), fabric.ErrTimedOut)
	}
}

func pollPollReportsMembers(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{})
	ps, err := b.dom.OpenPoll(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "poll set", ps.Close()) })
	c, err := b.dom.OpenCntr(nil)
	skipIfNotSupported(t, "fi_cntr_open", err)
	t.Cleanup(func() { closeOK(t, "cntr", c.Close()) })
	for _, m := range []fabric.Pollable{b.txcq, b.rxcq, c} {
		if err := ps.Add(m, 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, m := range []fabric.Pollable{b.txcq, b.rxcq, c} {
			ps.Del(m, 0)
		}
	})
	out := make([]fabric.Pollable, 4)
	if n, err := ps.Poll(out); n != 0 || err != nil {
		t.Fatalf("fi_poll with nothing queued = %d, %v", n, err)
	}
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, "r"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("p"), nil, ab, nil) }, a.txcq)
	// fi_poll drives the progress of the members' endpoints: polling alone
	// (plus the sender's progress) brings the receive in.
	deadline := time.Now().Add(scaled(5 * time.Second))
	var n int
	for {
		n, err = ps.Poll(out)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 || time.Now().After(deadline) {
			break
		}
		a.txcq.Read(nil)
	}
	if n != 1 || out[0] != fabric.Pollable(b.rxcq) {
		t.Fatalf("fi_poll = %d %v; want the rx CQ", n, out[:n])
	}
	ent := make([]fabric.CQEntry, 1)
	if k, err := b.rxcq.Read(ent); k != 1 || err != nil {
		t.Fatalf("read the polled CQ = %d, %v", k, err)
	}
	// fi_poll(3): a counter is reported when its values changed since the
	// last fi_poll, fi_cntr_set or fi_cntr_add: the application's own Add
	// or Set is not news, a change of the error value is.
	if err := c.Add(2); err != nil {
		t.Fatal(err)
	}
	if n, err := ps.Poll(out); n != 0 || err != nil {
		t.Fatalf("fi_poll after fi_cntr_add = %d, %v %v; want nothing", n, err, out[:n])
	}
	if err := c.Set(7); err != nil {
		t.Fatal(err)
	}
	if n, err := ps.Poll(out); n != 0 || err != nil {
		t.Fatalf("fi_poll after fi_cntr_set = %d, %v %v; want nothing", n, err, out[:n])
	}
	if err := c.AddErr(1); err != nil {
		t.Fatal(err)
	}
	if n, err := ps.Poll(out); n != 1 || err != nil || out[0] != fabric.Pollable(c) {
		t.Fatalf("fi_poll after a counter change = %d, %v", n, err)
	}
	if n, err := ps.Poll(out); n != 0 || err != nil {
		t.Fatalf("fi_poll after the change was reported = %d, %v", n, err)
	}
	c.Add(1)
	if n, err := ps.Poll(out[:0]); n != 0 || err != nil {
		t.Fatalf("fi_poll into an empty slice = %d, %v", n, err)
	}
}

func pollAddDelCloseErrors(t *testing.T, tg Target) {
	a := tg.open(t, envOpts{noEnable: true})
	b := tg.open(t, envOpts{noEnable: true})
	isErr(t, "fi_poll_open with flags", func() error { _, err := a.dom.OpenPoll(&fabric.PollAttr{Flags: 1}); return err }(),
		fabric.ErrInval)
	ps, err := a.dom.OpenPoll(nil)
	if err != nil {
		t.Fatal(err)
	}
	isErr(t, "add nil", ps.Add(nil, 0), fabric.ErrInval)
	isErr(t, "add a typed nil CQ", ps.Add((*fabric.CQ)(nil), 0), fabric.ErrInval)
	isErr(t, "add with flags", ps.Add(a.rxcq, 1), fabric.ErrInval)
	isErr(t, "add a CQ of another domain", ps.Add(b.rxcq, 0), fabric.ErrInval)
	if err := ps.Add(a.rxcq, 0); err != nil {
		t.Fatal(err)
	}
	isErr(t, "add twice", ps.Add(a.rxcq, 0), fabric.ErrInval)
	cq, err := a.dom.OpenCQ(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.Add(cq, 0); err != nil {
		t.Fatal(err)
	}
	isErr(t, "close a CQ in a poll set", cq.Close(), fabric.ErrBusy)
	isErr(t, "close a poll set with members", ps.Close(), fabric.ErrBusy)
	isErr(t, "close the domain of a poll set", a.dom.Close(), fabric.ErrBusy)
	for _, m := range []fabric.Pollable{cq, a.rxcq} {
		if err := ps.Del(m, 0); err != nil {
			t.Fatal(err)
		}
	}
	isErr(t, "del a non-member", ps.Del(cq, 0), fabric.ErrInval)
	if err := cq.Close(); err != nil {
		t.Fatalf("close a CQ after fi_poll_del: %v", err)
	}
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	isErr(t, "second close", ps.Close(), fabric.ErrClosed)
	_, err = ps.Poll(make([]fabric.Pollable, 1))
	isErr(t, "poll after close", err, fabric.ErrClosed)
	isErr(t, "add after close", ps.Add(a.rxcq, 0), fabric.ErrClosed)
}

// anyReadable reports whether one of fds is readable now.
func anyReadable(t testing.TB, fds []fabric.PollFD) bool {
	t.Helper()
	for _, f := range fds {
		if f.Events != 1 {
			t.Fatalf("pollfd %+v: events are not POLLIN", f)
		}
		r, ok := fdReadable(f.FD)
		if !ok {
			t.Fatalf("pollfd %d cannot be polled", f.FD)
		}
		if r {
			return true
		}
	}
	return false
}

func pollPollFDGetwait(t *testing.T, tg Target) {
	a, b, ab, _ := tg.pair(t, envOpts{wait: fabric.WaitPollFD})
	fds, change, err := b.rxcq.WaitPollFD()
	if err != nil || len(fds) == 0 {
		t.Fatalf("FI_GETWAIT of an FI_WAIT_POLLFD CQ: %v, %v", fds, err)
	}
	if _, err := b.rxcq.WaitFD(); !errors.Is(err, fabric.ErrNoSys) {
		t.Fatalf("WaitFD of an FI_WAIT_POLLFD CQ: %v, want ErrNoSys", err)
	}
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.rxcq.TryWait(); err != nil {
		t.Fatalf("fi_trywait on an empty CQ: %v", err)
	}
	// The CQ's own signal (the first descriptor) is clear.
	if r, ok := fdReadable(fds[0].FD); !ok || r {
		t.Fatalf("signal descriptor readable=%v ok=%v before anything arrived", r, ok)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("pf"), nil, ab, nil) }, a.txcq)
	deadline := time.Now().Add(scaled(5 * time.Second))
	for !anyReadable(t, fds) {
		if time.Now().After(deadline) {
			t.Fatal("no pollfd became readable for an arriving message")
		}
		a.txcq.Read(nil)
		time.Sleep(100 * time.Microsecond)
	}
	got, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee != nil || got.Len != 2 {
		t.Fatalf("completion %+v %+v", got, ee)
	}
	if _, c2, err := b.rxcq.WaitPollFD(); err != nil || c2 < change {
		t.Fatalf("change index %d -> %d, %v", change, c2, err)
	}
	// Counters and EQs offer it too; WaitNone has no wait object.
	c, err := b.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitPollFD})
	skipIfNotSupported(t, "fi_cntr_open", err)
	t.Cleanup(func() { closeOK(t, "cntr", c.Close()) })
	cfds, _, err := c.WaitPollFD()
	if err != nil || len(cfds) != 1 || anyReadable(t, cfds) {
		t.Fatalf("counter pollfds %v, %v", cfds, err)
	}
	c.Add(1)
	if !anyReadable(t, cfds) {
		t.Fatal("counter pollfd not readable after a change")
	}
	eq, err := b.fab.OpenEQ(&fabric.EQAttr{WaitObj: fabric.WaitPollFD})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "eq", eq.Close()) })
	if fds, _, err := eq.WaitPollFD(); err != nil || len(fds) != 1 {
		t.Fatalf("EQ pollfds %v, %v", fds, err)
	}
	n, err := b.dom.OpenCQ(&fabric.CQAttr{WaitObj: fabric.WaitNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "cq", n.Close()) })
	if _, _, err := n.WaitPollFD(); !errors.Is(err, fabric.ErrNoData) {
		t.Fatalf("FI_GETWAIT of an FI_WAIT_NONE CQ: %v, want ErrNoData", err)
	}
	if _, _, err := a.rxcq.WaitPollFD(); err != nil {
		t.Fatal(err)
	}
}
