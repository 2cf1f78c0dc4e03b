package fabtest

import (
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// cntrCases lists the fi_cntr(3) behaviours, in the order they run.
var cntrCases = []testCase{
	{"fi_cntr/set_add_err_wait", cntrSetAddErrWait},
	{"fi_cntr/send_recv_counters_count_completions", cntrSendRecvCountersCountCompletions},
	{"fi_cntr/many_counters_set_seterr_add_adderr", cntrManyCountersSetSeterrAddAdderr},
	{"fi_cntr/wait_timeout_error_change_infinite", cntrWaitTimeoutErrorChangeInfinite},
	{"fi_cntr/counter_only_completion_both_sides", cntrCounterOnlyCompletionBothSides},
	{"fi_cntr/failures_count_only_in_error_value", cntrFailuresCountOnlyInErrorValue},
	{"fi_cntr/wait_fd_getwait", cntrWaitFdGetwait},
}

func cntrSetAddErrWait(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	c, err := e.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec})
	skipIfNotSupported(t, "fi_cntr_open", err)
	defer c.Close()
	if err := c.Set(5); err != nil {
		t.Fatal(err)
	}
	c.SetErr(10)
	c.Add(5)
	c.AddErr(5)
	v, err1 := c.Read()
	ve, err2 := c.ReadErr()
	if v != 10 || ve != 15 || err1 != nil || err2 != nil {
		t.Fatalf("counter = %d/%d (%v %v); want 10/15", v, ve, err1, err2)
	}
	if err := c.Wait(10, 100*time.Millisecond); err != nil {
		t.Fatalf("wait for reached threshold: %v", err)
	}
	err = c.Wait(11, 50*time.Millisecond)
	if err == nil {
		t.Fatal("wait for unreached threshold returned nil")
	}
}

func cntrSendRecvCountersCountCompletions(t *testing.T, tg Target) {
	connectionless(t, tg)
	a, b, _, _ := tg.pair(t, envOpts{})
	tx, err := a.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec})
	skipIfNotSupported(t, "fi_cntr_open", err)
	t.Cleanup(func() { closeOK(t, "cntr", tx.Close()) })
	rx, err := b.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "cntr", rx.Close()) })
	// Fresh endpoints so that counters can be bound before enable.
	txcq := a.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	rxcq := b.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	sep, err := a.dom.OpenEndpoint(a.info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "endpoint", sep.Close()) })
	rep, err := b.dom.OpenEndpoint(b.info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "endpoint", rep.Close()) })
	for _, e := range []error{
		sep.BindCQ(txcq, fabric.FlagTransmit|fabric.FlagRecv|fabric.FlagSelectiveCompletion), sep.BindAV(a.av),
		sep.BindCntr(tx, fabric.FlagSend),
		rep.BindCQ(rxcq, fabric.FlagTransmit|fabric.FlagRecv), rep.BindAV(b.av), rep.BindCntr(rx, fabric.FlagRecv),
	} {
		if e != nil {
			t.Fatal(e)
		}
	}
	isErr(t, "second FI_SEND counter", sep.BindCntr(tx, fabric.FlagSend), fabric.ErrInval)
	isErr(t, "counter bind without flags", sep.BindCntr(tx, 0), fabric.ErrBadFlags)
	if err := sep.Enable(); err != nil {
		t.Fatal(err)
	}
	if err := rep.Enable(); err != nil {
		t.Fatal(err)
	}
	name, _ := rep.Name()
	dst := a.insert(name)
	const n = 5
	for i := 0; i < n; i++ {
		if err := rep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		retry(t, "send", func() error { return sep.Send([]byte("c"), nil, dst, nil) }, txcq)
	}
	if err := tx.Wait(n, scaled(5*time.Second)); err != nil {
		t.Fatalf("tx counter wait: %v", err)
	}
	if err := rx.Wait(n, scaled(5*time.Second)); err != nil {
		v, _ := rx.Read()
		t.Fatalf("rx counter wait: %v (value %d)", err, v)
	}
	expectEmpty(t, txcq, scaled(5*time.Millisecond))
}

func cntrManyCountersSetSeterrAddAdderr(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	n := int(e.info.DomainAttr.CntrCnt)
	if n == 0 || n > 100 {
		n = 100
	}
	cs := make([]*fabric.Cntr, n)
	for i := range cs {
		cs[i] = e.openCntr(nil)
	}
	for i, c := range cs {
		v := uint64(i)
		for _, err := range []error{c.Set(v), c.SetErr(2 * v), c.Add(v), c.AddErr(v)} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, c := range cs {
		v, err1 := c.Read()
		ve, err2 := c.ReadErr()
		if v != 2*uint64(i) || ve != 3*uint64(i) || err1 != nil || err2 != nil {
			t.Fatalf("counter %d = %d/%d (%v %v); want %d/%d", i, v, ve, err1, err2, 2*i, 3*i)
		}
	}
}

func cntrWaitTimeoutErrorChangeInfinite(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	c := e.openCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec})
	start := time.Now()
	err := c.Wait(1, 50*time.Millisecond)
	if el := time.Since(start); !errors.Is(err, fabric.ErrTimedOut) || el < 40*time.Millisecond || el > scaled(time.Second) {
		t.Fatalf("fi_cntr_wait(1, 50 ms) on 0 = %v after %v; want FI_ETIMEDOUT after ~50 ms", err, el)
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		c.AddErr(1)
	}()
	start = time.Now()
	err = c.Wait(5, scaled(5*time.Second))
	if err == nil || errors.Is(err, fabric.ErrTimedOut) || time.Since(start) > scaled(2*time.Second) {
		t.Fatalf("a change of the error value did not unblock fi_cntr_wait: %v after %v", err, time.Since(start))
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		c.Add(3)
	}()
	done := make(chan error, 1)
	go func() { done <- c.Wait(3, -1) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("fi_cntr_wait(3, -1): %v", err)
		}
	case <-time.After(scaled(5 * time.Second)):
		t.Fatal("fi_cntr_wait(-1) did not return when the threshold was reached")
	}
	if err := c.Wait(2, 0); err != nil {
		t.Fatalf("wait for a threshold already passed: %v", err)
	}
}

func cntrCounterOnlyCompletionBothSides(t *testing.T, tg Target) {
	a, b, sep, rep, dst, tx, rx := counterPair(t, tg)
	const n = 8
	for i := 0; i < n; i++ {
		if err := rep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		retry(t, "send", func() error { return sep.Send([]byte("cnt"), nil, dst, nil) }, a.txcq)
	}
	timeout := scaled(5 * time.Second)
	if err := tx.Wait(n, timeout); err != nil {
		t.Fatalf("tx counter: %v", err)
	}
	if err := rx.Wait(n, timeout); err != nil {
		v, _ := rx.Read()
		t.Fatalf("rx counter: %v (value %d)", err, v)
	}
	expectEmpty(t, a.txcq, scaled(5*time.Millisecond))
	expectEmpty(t, b.rxcq, scaled(5*time.Millisecond))
	if v, _ := tx.Read(); v != n {
		t.Fatalf("tx counter %d after %d sends", v, n)
	}
	if ve, _ := rx.ReadErr(); ve != 0 {
		t.Fatalf("rx error value %d", ve)
	}
}

func cntrFailuresCountOnlyInErrorValue(t *testing.T, tg Target) {
	a, b, sep, rep, dst, _, rx := counterPair(t, tg)
	if err := rep.Recv(make([]byte, 2), nil, fabric.AddrUnspec, "short"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return sep.Send([]byte("truncated"), nil, dst, nil) }, a.txcq)
	// The error completion is written even under selective completion.
	_, ee := waitCQ(t, b.rxcq, a.txcq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrTrunc) || ee.OpContext != "short" {
		t.Fatalf("truncation: %+v", ee)
	}
	v, _ := rx.Read()
	ve, _ := rx.ReadErr()
	if v != 0 || ve != 1 {
		t.Fatalf("rx counter %d, error value %d after a failed receive; want 0, 1", v, ve)
	}
}

func cntrWaitFdGetwait(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	c, err := e.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitFD})
	skipIfNotSupported(t, "fi_cntr_open with FI_WAIT_FD", err)
	defer c.Close()
	fd, err := c.WaitFD()
	if err != nil || fd < 0 {
		t.Fatalf("FI_GETWAIT: %d %v", fd, err)
	}
	if err := c.TryWait(); err != nil {
		t.Fatalf("trywait: %v", err)
	}
	if r, ok := fdReadable(fd); ok && r {
		t.Fatal("counter wait fd readable before any change")
	}
	c.Add(1)
	if r, ok := fdReadable(fd); ok && !r {
		t.Fatal("counter wait fd not readable after fi_cntr_add")
	}
	none := e.openCntr(nil)
	if _, err := none.WaitFD(); err == nil {
		t.Fatal("FI_GETWAIT on a FI_WAIT_NONE counter succeeded")
	}
}

// openCntr opens a counter on e's domain, skipping when the provider has
// none; closed at cleanup.
func (e *env) openCntr(attr *fabric.CntrAttr) *fabric.Cntr {
	e.t.Helper()
	c, err := e.dom.OpenCntr(attr)
	skipIfNotSupported(e.t, "fi_cntr_open", err)
	e.t.Cleanup(func() { closeOK(e.t, "cntr", c.Close()) })
	return c
}

// counterPair opens a connectionless pair whose fresh endpoints report
// through counters: a's sends to tx, b's receives to rx. Both CQs are bound
// with selective completion.
func counterPair(t *testing.T, tg Target) (a, b *env, sep, rep *fabric.Endpoint, dst fabric.Addr, tx, rx *fabric.Cntr) {
	t.Helper()
	connectionless(t, tg)
	a, b = tg.open(t, envOpts{}), tg.open(t, envOpts{})
	tx = a.openCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec})
	rx = b.openCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec})
	txcq := a.openCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
	rxcq := b.openCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
	sep, rep = a.bareEndpoint(), b.bareEndpoint()
	for _, err := range []error{
		sep.BindCQ(txcq, fabric.FlagTransmit|fabric.FlagRecv|fabric.FlagSelectiveCompletion), sep.BindAV(a.av),
		sep.BindCntr(tx, fabric.FlagSend), sep.Enable(),
		rep.BindCQ(rxcq, fabric.FlagTransmit|fabric.FlagRecv|fabric.FlagSelectiveCompletion), rep.BindAV(b.av),
		rep.BindCntr(rx, fabric.FlagRecv), rep.Enable(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	name, err := rep.Name()
	if err != nil {
		t.Fatal(err)
	}
	dst = a.insert(name)
	// Keep the CQs reachable for expectEmpty through the env fields.
	a.txcq, b.rxcq = txcq, rxcq
	return a, b, sep, rep, dst, tx, rx
}
