package fabtest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// connectionless skips connection-oriented targets.
func connectionless(t *testing.T, tg Target) {
	t.Helper()
	if tg.EPType == fabric.EPMsg {
		t.Skip("needs connectionless addressing")
	}
}

// bareEndpoint opens a second endpoint on e's domain, closed at cleanup.
func (e *env) bareEndpoint() *fabric.Endpoint {
	e.t.Helper()
	ep, err := e.dom.OpenEndpoint(e.info)
	if err != nil {
		e.t.Fatalf("OpenEndpoint: %v", err)
	}
	e.t.Cleanup(func() { closeOK(e.t, "endpoint", ep.Close()) })
	return ep
}

func init() {
	register("fi_endpoint/failed_post_before_enable_has_no_effect", func(t *testing.T, tg Target) {
		connectionless(t, tg)
		b := tg.open(t, envOpts{noEnable: true})
		stale := make([]byte, 8)
		isErr(t, "recv before enable", b.ep.Recv(stale, nil, fabric.AddrUnspec, "stale"), fabric.ErrOpBadState)
		if err := b.ep.Enable(); err != nil {
			t.Fatal(err)
		}
		addr, err := b.ep.Name()
		if err != nil {
			t.Fatal(err)
		}
		n, err := b.ep.RxSizeLeft()
		if err != nil || uint64(n) != b.info.RxAttr.Size {
			t.Fatalf("rx_size_left after a refused post = %d, %v", n, err)
		}
		a := tg.open(t, envOpts{})
		ab := a.insert(addr)
		fresh := make([]byte, 8)
		if err := b.ep.Recv(fresh, nil, fabric.AddrUnspec, "fresh"); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("x"), nil, ab, nil) }, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != "fresh" || stale[0] != 0 {
			t.Fatalf("the refused receive was posted after all: %+v %+v stale %q", got, ee, stale)
		}
	})
	register("fi_endpoint/bind_flags_and_objects_validation", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		ep := e.bareEndpoint()
		if cntr, err := e.dom.OpenCntr(nil); err == nil {
			defer cntr.Close()
			isErr(t, "counter with FI_REMOTE_CQ_DATA", ep.BindCntr(cntr, fabric.FlagRecv|fabric.FlagRemoteCQData),
				fabric.ErrBadFlags)
			isErr(t, "counter with FI_SELECTIVE_COMPLETION", ep.BindCntr(cntr, fabric.FlagSend|fabric.FlagSelectiveCompletion),
				fabric.ErrBadFlags)
		} else if !errors.Is(err, fabric.ErrNoSys) {
			t.Fatal(err)
		}
		eq, err := e.fab.OpenEQ(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer eq.Close()
		isErr(t, "EQ with flags", ep.Bind(eq, fabric.FlagRecv), fabric.ErrBadFlags)
		isErr(t, "unknown object", ep.Bind(struct{}{}, 0), fabric.ErrInval)
		if e.av != nil {
			isErr(t, "AV with flags", ep.Bind(e.av, fabric.FlagRecv), fabric.ErrBadFlags)
			if err := ep.BindAV(e.av); err != nil {
				t.Fatal(err)
			}
			av2, err := e.dom.OpenAV(nil)
			if err != nil {
				t.Fatal(err)
			}
			defer av2.Close()
			isErr(t, "second AV", ep.BindAV(av2), fabric.ErrInval)
		}
	})
	register("fi_endpoint/bind_other_domain_EDOMAIN", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		other := tg.open(t, envOpts{noEnable: true}) // another fabric and domain
		ep := e.bareEndpoint()
		if other.av != nil {
			isErr(t, "AV of another domain", ep.BindAV(other.av), fabric.ErrDomain)
		}
		if c, err := other.dom.OpenCntr(nil); err == nil {
			defer c.Close()
			isErr(t, "counter of another domain", ep.BindCntr(c, fabric.FlagSend), fabric.ErrDomain)
		}
		eq, err := other.fab.OpenEQ(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer eq.Close()
		isErr(t, "EQ of another fabric", ep.BindEQ(eq), fabric.ErrDomain)
		// The failed binds left nothing behind: the foreign objects close.
		if other.av != nil {
			if err := other.ep.Close(); err != nil {
				t.Fatal(err)
			}
			if err := other.av.Close(); err != nil {
				t.Fatalf("AV after a refused foreign bind: %v", err)
			}
		}
	})
	// Project rule (stricter than fi_endpoint(3), which allows silent
	// discard): nothing posted is lost silently; closing an endpoint
	// completes its posted receives with FI_ECANCELED, exactly once each,
	// and never writes into their buffers afterwards.
	register("fi_endpoint/close_cancels_outstanding_receives", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		bufs := [][]byte{make([]byte, 16), make([]byte, 16)}
		for i, b := range bufs {
			if err := e.ep.Recv(b, nil, fabric.AddrUnspec, i); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.ep.Close(); err != nil {
			t.Fatalf("close with posted receives: %v", err)
		}
		for i := range bufs {
			_, ee := waitCQ(t, e.rxcq)
			if ee == nil || !errors.Is(ee.Err, fabric.ErrCanceled) || ee.OpContext != i || ee.Flags&fabric.FlagRecv == 0 {
				t.Fatalf("receive %d after fi_close: %+v; want FI_ECANCELED", i, ee)
			}
		}
		var ent [1]fabric.CQEntry
		for _, cq := range []*fabric.CQ{e.rxcq, e.txcq} {
			n, err := cq.Read(ent[:])
			if n != 0 || !errors.Is(err, fabric.ErrAgain) {
				t.Fatalf("extra completion after fi_close of the endpoint: n=%d err=%v entry=%+v", n, err, ent[0])
			}
		}
		if tg.EPType != fabric.EPMsg {
			// A message to the closed endpoint's address lands nowhere.
			a := tg.open(t, envOpts{})
			ab := a.insert(e.addr)
			a.ep.Send([]byte("late"), nil, ab, nil)
			expectEmpty(t, e.rxcq, scaled(10*time.Millisecond), a.txcq)
			for _, b := range bufs {
				if b[0] != 0 {
					t.Fatalf("a discarded receive buffer was written: %q", b)
				}
			}
		}
		for _, c := range []*fabric.CQ{e.txcq, e.rxcq} {
			if err := c.Close(); err != nil && !errors.Is(err, fabric.ErrClosed) {
				t.Fatalf("CQ close after its endpoint closed: %v", err)
			}
		}
		if e.av != nil {
			if err := e.av.Close(); err != nil {
				t.Fatalf("AV close after its endpoint closed: %v", err)
			}
		}
	})
	register("fi_endpoint/setname_ephemeral_and_in_use", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		ep := e.bareEndpoint()
		src := e.info.SrcAddr
		if p, ok := sockPort(e.info.AddrFormat, src); !ok || p != 0 {
			t.Skipf("src_addr % x is not a port-0 socket address", src)
		}
		err := ep.SetName(src)
		if errors.Is(err, fabric.ErrNoSys) {
			t.Skip("fi_setname not supported")
		}
		if err != nil {
			t.Fatalf("fi_setname(port 0): %v", err)
		}
		name, err := ep.Name()
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := sockPort(e.info.AddrFormat, name); p == 0 {
			t.Fatalf("fi_getname after fi_setname(port 0) = % x; want an ephemeral port", name)
		}
		if p, ok := sockPort(e.info.AddrFormat, e.addr); ok && p != 0 {
			if bytes.Equal(name, e.addr) {
				t.Fatalf("two endpoints share the address % x", name)
			}
			isErr(t, "fi_setname to an address in use", ep.SetName(e.addr), fabric.ErrAddrInUse)
		}
		isErr(t, "fi_setname after enable", e.ep.SetName(src), fabric.ErrOpBadState)
	})
	register("fi_endpoint/many_endpoints_share_an_av", func(t *testing.T, tg Target) {
		connectionless(t, tg)
		srv := tg.open(t, envOpts{})
		cli := tg.open(t, envOpts{})
		const n = 4
		type leg struct {
			ep         *fabric.Endpoint
			tx, rx     *fabric.CQ
			addr       []byte
			toSrv, srv fabric.Addr
		}
		legs := make([]leg, n)
		toSrv := cli.insert(srv.addr)
		names := map[string]bool{string(cli.addr): true}
		for i := range legs {
			l := &legs[i]
			l.tx = cli.openCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
			l.rx = cli.openCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
			l.ep = cli.bareEndpoint() // closed before its CQs
			for _, err := range []error{l.ep.BindCQ(l.tx, fabric.FlagTransmit), l.ep.BindCQ(l.rx, fabric.FlagRecv),
				l.ep.BindAV(cli.av), l.ep.Enable()} {
				if err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if l.addr, err = l.ep.Name(); err != nil {
				t.Fatal(err)
			}
			if names[string(l.addr)] {
				t.Fatalf("endpoint %d reuses address % x", i, l.addr)
			}
			names[string(l.addr)] = true
			l.toSrv = toSrv
			l.srv = srv.insert(l.addr)
		}
		for i := range legs {
			if err := srv.ep.Recv(make([]byte, 16), nil, fabric.AddrUnspec, nil); err != nil {
				t.Fatal(err)
			}
			if err := legs[i].ep.Recv(make([]byte, 16), nil, fabric.AddrUnspec, i); err != nil {
				t.Fatal(err)
			}
		}
		for i := range legs {
			l := &legs[i]
			msg := []byte(fmt.Sprintf("leg %d", i))
			retry(t, "send", func() error { return l.ep.Send(msg, nil, l.toSrv, nil) }, l.tx)
			waitCQ(t, l.tx)
		}
		for i := 0; i < n; i++ {
			if _, ee := waitCQ(t, srv.rxcq); ee != nil {
				t.Fatalf("server receive %d: %+v", i, ee)
			}
		}
		for i := range legs {
			l := &legs[i]
			retry(t, "reply", func() error { return srv.ep.Send([]byte("back"), nil, l.srv, nil) }, srv.txcq)
			got, ee := waitCQ(t, l.rx, srv.txcq)
			if ee != nil || got.OpContext != i || got.Len != 4 {
				t.Fatalf("reply to endpoint %d: %+v %+v", i, got, ee)
			}
		}
	})
	register("fi_endpoint/loopback_send_to_self", func(t *testing.T, tg Target) {
		connectionless(t, tg)
		e := tg.open(t, envOpts{})
		self := e.insert(e.addr)
		buf := make([]byte, 16)
		if err := e.ep.Recv(buf, nil, fabric.AddrUnspec, "self"); err != nil {
			t.Fatal(err)
		}
		retry(t, "send to self", func() error { return e.ep.Send([]byte("mirror"), nil, self, nil) }, e.txcq)
		got, ee := waitCQ(t, e.rxcq, e.txcq)
		if ee != nil || got.OpContext != "self" || string(buf[:got.Len]) != "mirror" {
			t.Fatalf("loopback: %+v %+v %q", got, ee, buf[:got.Len])
		}
	})
	register("fi_endpoint/address_reuse_after_close", func(t *testing.T, tg Target) {
		connectionless(t, tg)
		old := tg.open(t, envOpts{})
		a := tg.open(t, envOpts{})
		ab := a.insert(old.addr)
		addr := append([]byte(nil), old.addr...)
		if err := old.ep.Close(); err != nil {
			t.Fatal(err)
		}
		b := tg.open(t, envOpts{modify: func(in *fabric.Info) { in.SrcAddr = addr }})
		if !bytes.Equal(b.addr, addr) {
			t.Fatalf("new endpoint bound % x; want the closed endpoint's % x", b.addr, addr)
		}
		buf := make([]byte, 16)
		if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		// The peer removes and re-inserts the address, then reaches the new
		// endpoint.
		if err := a.av.Remove([]fabric.Addr{ab}, 0); err != nil {
			t.Fatal(err)
		}
		ab = a.insert(addr)
		retry(t, "send", func() error { return a.ep.Send([]byte("again"), nil, ab, nil) }, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || string(buf[:got.Len]) != "again" {
			t.Fatalf("reused address: %+v %+v", got, ee)
		}
	})
	register("fi_endpoint/cancel_unknown_or_completed_no_extra_completion", func(t *testing.T, tg Target) {
		a, b, ab, _ := tg.pair(t, envOpts{})
		if err := b.ep.Cancel("never posted"); err != nil && !errors.Is(err, fabric.ErrNoEnt) {
			t.Fatalf("cancel of an unknown context: %v", err)
		}
		expectEmpty(t, b.rxcq, scaled(5*time.Millisecond))
		bufA, bufB := make([]byte, 16), make([]byte, 16)
		if err := b.ep.Recv(bufA, nil, fabric.AddrUnspec, "A"); err != nil {
			t.Fatal(err)
		}
		if err := b.ep.Recv(bufB, nil, fabric.AddrUnspec, "B"); err != nil {
			t.Fatal(err)
		}
		if err := b.ep.Cancel("A"); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		_, ee := waitCQ(t, b.rxcq)
		if ee == nil || !errors.Is(ee.Err, fabric.ErrCanceled) || ee.OpContext != "A" {
			t.Fatalf("cancel completion %+v", ee)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("to B"), nil, ab, nil) }, a.txcq)
		got, ee := waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != "B" || string(bufB[:got.Len]) != "to B" {
			t.Fatalf("after cancel: %+v %+v", got, ee)
		}
		if bufA[0] != 0 {
			t.Fatalf("the cancelled buffer was written: %q", bufA)
		}
		for _, ctx := range []string{"A", "B"} {
			if err := b.ep.Cancel(ctx); err != nil && !errors.Is(err, fabric.ErrNoEnt) {
				t.Fatalf("cancel of finished %s: %v", ctx, err)
			}
		}
		expectEmpty(t, b.rxcq, scaled(5*time.Millisecond), a.txcq)
		// Re-posting the cancelled context works.
		if err := b.ep.Recv(bufA, nil, fabric.AddrUnspec, "A"); err != nil {
			t.Fatal(err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("to A"), nil, ab, nil) }, a.txcq)
		got, ee = waitCQ(t, b.rxcq, a.txcq)
		if ee != nil || got.OpContext != "A" || string(bufA[:got.Len]) != "to A" {
			t.Fatalf("re-posted receive: %+v %+v", got, ee)
		}
	})
	register("fi_endpoint/rx_size_exceeded_EAGAIN_then_resumes", func(t *testing.T, tg Target) {
		a, b, ab, _ := tg.pair(t, envOpts{})
		size := b.info.RxAttr.Size
		if size == 0 || size > 1<<16 {
			t.Skipf("rx_attr.size %d", size)
		}
		var err error
		posted := uint64(0)
		for ; posted <= size; posted++ {
			if err = b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
				break
			}
		}
		if posted < size || !errors.Is(err, fabric.ErrAgain) {
			t.Fatalf("posted %d receives (rx_attr.size %d), then %v; want rx_attr.size then ErrAgain", posted, size, err)
		}
		retry(t, "send", func() error { return a.ep.Send([]byte("one"), nil, ab, nil) }, a.txcq)
		waitCQ(t, b.rxcq, a.txcq)
		if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatalf("post after a completion freed a slot: %v", err)
		}
	})
}

func init() {
	register("fi_endpoint/alias_ops_use_alias_flags", func(t *testing.T, tg Target) {
		a, b, ab, _ := tg.pair(t, envOpts{txFlags: fabric.FlagSelectiveCompletion})
		alias, err := a.ep.Alias(fabric.FlagTransmit | fabric.FlagCompletion)
		if err != nil {
			t.Fatal(err)
		}
		defer alias.Close()
		for i := 0; i < 2; i++ {
			if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
				t.Fatal(err)
			}
		}
		// Through the parent: selective completion, no entry.
		retry(t, "send", func() error { return a.ep.Send([]byte("p"), nil, ab, "parent") }, a.txcq)
		waitCQ(t, b.rxcq, a.txcq)
		expectEmpty(t, a.txcq, scaled(5*time.Millisecond))
		// Through the alias: its FI_COMPLETION default asks for one.
		retry(t, "alias send", func() error { return alias.Send([]byte("a"), nil, ab, "alias") }, a.txcq)
		got, ee := waitCQ(t, a.txcq, b.rxcq)
		if ee != nil || got.OpContext != "alias" {
			t.Fatalf("alias send completion %+v %+v", got, ee)
		}
		waitCQ(t, b.rxcq, a.txcq)
		isErr(t, "bind through an alias", alias.BindCQ(a.txcq, fabric.FlagTransmit), fabric.ErrOpBadState)
		if err := alias.Close(); err != nil {
			t.Fatal(err)
		}
		isErr(t, "send through a closed alias", alias.Send([]byte("x"), nil, ab, nil), fabric.ErrClosed)
	})
}
