package fabtest

import (
	"errors"
	"testing"

	fabric "github.com/gofabric/fabric"
)

func init() {
	register("fi_endpoint/created_disabled_send_EOPBADSTATE", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		isErr(t, "Send before Enable", e.ep.Send([]byte("x"), nil, 0, nil), fabric.ErrOpBadState)
		isErr(t, "Recv before Enable", e.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil), fabric.ErrOpBadState)
		isErr(t, "Inject before Enable", e.ep.Inject([]byte("x"), 0), fabric.ErrOpBadState)
	})
	register("fi_endpoint/bind_cq_bad_flags_EBADFLAGS", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		cq := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		ep2, err := e.dom.OpenEndpoint(e.info)
		if err != nil {
			t.Fatal(err)
		}
		defer ep2.Close()
		isErr(t, "bind with no direction", ep2.BindCQ(cq, 0), fabric.ErrBadFlags)
		isErr(t, "bind with selective only", ep2.BindCQ(cq, fabric.FlagSelectiveCompletion), fabric.ErrBadFlags)
		isErr(t, "bind with FI_READ", ep2.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRead), fabric.ErrBadFlags)
	})
	register("fi_endpoint/bind_second_cq_same_direction_EINVAL", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		cq := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		isErr(t, "second tx CQ", e.ep.BindCQ(cq, fabric.FlagTransmit), fabric.ErrInval)
		isErr(t, "second rx CQ", e.ep.BindCQ(cq, fabric.FlagRecv), fabric.ErrInval)
	})
	register("fi_endpoint/bind_after_enable_EOPBADSTATE", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		cq := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		isErr(t, "bind after enable", e.ep.BindCQ(cq, fabric.FlagTransmit), fabric.ErrOpBadState)
	})
	register("fi_endpoint/bind_nil_EINVAL", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		isErr(t, "bind nil", e.ep.Bind(nil, fabric.FlagTransmit), fabric.ErrInval)
		isErr(t, "bind nil CQ", e.ep.BindCQ(nil, fabric.FlagTransmit), fabric.ErrInval)
	})
	register("fi_endpoint/bind_object_of_other_domain_EDOMAIN", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		dom2, err := e.fab.OpenDomain(e.info)
		if err != nil {
			t.Fatal(err)
		}
		defer dom2.Close()
		cq, err := dom2.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		if err != nil {
			t.Fatal(err)
		}
		defer cq.Close()
		ep2, err := e.dom.OpenEndpoint(e.info)
		if err != nil {
			t.Fatal(err)
		}
		defer ep2.Close()
		isErr(t, "bind CQ of another domain", ep2.BindCQ(cq, fabric.FlagTransmit), fabric.ErrDomain)
	})
	register("fi_endpoint/enable_without_av_ENOAV", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("connection-oriented endpoints take no AV")
		}
		e := tg.open(t, envOpts{noEnable: true})
		ep2, err := e.dom.OpenEndpoint(e.info)
		if err != nil {
			t.Fatal(err)
		}
		defer ep2.Close()
		tx := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		rx := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		if err := ep2.BindCQ(tx, fabric.FlagTransmit); err != nil {
			t.Fatal(err)
		}
		if err := ep2.BindCQ(rx, fabric.FlagRecv); err != nil {
			t.Fatal(err)
		}
		isErr(t, "enable without AV", ep2.Enable(), fabric.ErrNoAV)
	})
	register("fi_endpoint/enable_without_cq_ENOCQ", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		ep2, err := e.dom.OpenEndpoint(e.info)
		if err != nil {
			t.Fatal(err)
		}
		defer ep2.Close()
		if e.av != nil {
			if err := ep2.BindAV(e.av); err != nil {
				t.Fatal(err)
			}
		}
		if e.eq != nil { // connection-oriented: the EQ is checked first
			if err := ep2.BindEQ(e.eq); err != nil {
				t.Fatal(err)
			}
		}
		isErr(t, "enable without CQs", ep2.Enable(), fabric.ErrNoCQ)
		tx := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
		if err := ep2.BindCQ(tx, fabric.FlagTransmit); err != nil {
			t.Fatal(err)
		}
		isErr(t, "enable without rx CQ", ep2.Enable(), fabric.ErrNoCQ)
	})
	register("fi_close/cq_bound_EBUSY", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		isErr(t, "close bound CQ", e.txcq.Close(), fabric.ErrBusy)
		if e.av != nil {
			isErr(t, "close bound AV", e.av.Close(), fabric.ErrBusy)
		}
		isErr(t, "close domain with endpoint", e.dom.Close(), fabric.ErrBusy)
		isErr(t, "close fabric with domain", e.fab.Close(), fabric.ErrBusy)
	})
	register("fi_close/twice_ErrClosed", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		if err := e.ep.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		isErr(t, "second close", e.ep.Close(), fabric.ErrClosed)
		isErr(t, "send after close", e.ep.Send([]byte("x"), nil, 0, nil), fabric.ErrClosed)
		if err := e.txcq.Close(); err != nil {
			t.Fatalf("close CQ after endpoint closed: %v", err)
		}
		_, err := e.txcq.Read(make([]fabric.CQEntry, 1))
		isErr(t, "read closed CQ", err, fabric.ErrClosed)
	})
	register("fi_endpoint/alias_flags", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		_, err := e.ep.Alias(fabric.FlagTransmit | fabric.FlagRecv)
		isErr(t, "alias with both directions", err, fabric.ErrInval)
		_, err = e.ep.Alias(0)
		isErr(t, "alias with no direction", err, fabric.ErrInval)
		a, err := e.ep.Alias(fabric.FlagTransmit | fabric.FlagInjectComplete)
		if err != nil {
			t.Fatalf("alias: %v", err)
		}
		f, err := a.OpsFlags(fabric.FlagTransmit)
		if err != nil || f != fabric.FlagInjectComplete {
			t.Fatalf("alias tx op flags = %v, %v; want FI_INJECT_COMPLETE", f, err)
		}
		isErr(t, "close parent with alias", e.ep.Close(), fabric.ErrBusy)
		if err := a.Close(); err != nil {
			t.Fatalf("alias close: %v", err)
		}
	})
	register("fi_endpoint/control_getopsflag_setopsflag", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		f := fabric.FlagTransmit | fabric.FlagRecv
		isErr(t, "GETOPSFLAG with both", e.ep.Control(fabric.CtrlGetOpsFlag, &f), fabric.ErrInval)
		set := fabric.FlagRecv | fabric.FlagCompletion
		if err := e.ep.Control(fabric.CtrlSetOpsFlag, &set); err != nil {
			t.Fatalf("SETOPSFLAG: %v", err)
		}
		get := fabric.FlagRecv
		if err := e.ep.Control(fabric.CtrlGetOpsFlag, &get); err != nil || get != fabric.FlagCompletion {
			t.Fatalf("GETOPSFLAG = %v, %v; want FI_COMPLETION", get, err)
		}
		isErr(t, "FI_GETWAIT on an endpoint", e.ep.Control(fabric.CtrlGetWait, nil), fabric.ErrNoSys)
	})
	register("fi_endpoint/getopt_unknown_ENOPROTOOPT", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		_, err := e.ep.GetOpt(fabric.OptEndpoint, 1000)
		isErr(t, "unknown option", err, fabric.ErrNoProtoOpt)
		_, err = e.ep.GetOpt(7, fabric.OptMinMultiRecv)
		isErr(t, "unknown level", err, fabric.ErrNoProtoOpt)
		isErr(t, "setopt unknown", e.ep.SetOpt(fabric.OptEndpoint, 1000, 1), fabric.ErrNoProtoOpt)
	})
	register("fi_endpoint/min_multi_recv_getopt_setopt", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{caps: fabric.CapMultiRecv})
		if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptMinMultiRecv, 4096); err != nil {
			t.Fatalf("setopt: %v", err)
		}
		v, err := e.ep.GetOpt(fabric.OptEndpoint, fabric.OptMinMultiRecv)
		if err != nil || v != 4096 {
			t.Fatalf("getopt = %d, %v; want 4096", v, err)
		}
		n, err := e.ep.GetOptBytes(fabric.OptEndpoint, fabric.OptMinMultiRecv, make([]byte, 4))
		if !errors.Is(err, fabric.ErrTooSmall) || n != 8 {
			t.Fatalf("getopt short buffer = %d, %v; want 8, ErrTooSmall", n, err)
		}
		isErr(t, "setopt wrong length", e.ep.SetOptBytes(fabric.OptEndpoint, fabric.OptMinMultiRecv, []byte{1}), fabric.ErrInval)
	})
	register("fi_endpoint/getname_sockaddr_layout", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{})
		switch e.info.AddrFormat {
		case fabric.SockAddrIn:
			if len(e.addr) != 16 || e.addr[0] != 2 || e.addr[1] != 0 {
				t.Fatalf("sockaddr_in name = % x; want 16 bytes, family 02 00", e.addr)
			}
			if e.addr[2] == 0 && e.addr[3] == 0 {
				t.Fatalf("port 0 after enable: % x", e.addr)
			}
		case fabric.SockAddrIn6:
			if len(e.addr) != 28 || e.addr[0] != 10 {
				t.Fatalf("sockaddr_in6 name = % x", e.addr)
			}
		default:
			if len(e.addr) == 0 || len(e.addr) > 256 {
				t.Fatalf("name length %d", len(e.addr))
			}
		}
		n, err := e.ep.GetName(make([]byte, 1))
		if !errors.Is(err, fabric.ErrTooSmall) || n != len(e.addr) {
			t.Fatalf("GetName short = %d, %v", n, err)
		}
	})
	register("fi_endpoint/cancel_recv_ECANCELED", func(t *testing.T, tg Target) {
		peer, e, dst, _ := tg.pair(t, envOpts{})
		ctxA, ctxB := new(int), new(int)
		if err := e.ep.Recv(make([]byte, 64), nil, fabric.AddrUnspec, ctxA); err != nil {
			t.Fatal(err)
		}
		if err := e.ep.Recv(make([]byte, 64), nil, fabric.AddrUnspec, ctxB); err != nil {
			t.Fatal(err)
		}
		if err := e.ep.Cancel(ctxA); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		_, ee := waitCQ(t, e.rxcq)
		if ee == nil || !errors.Is(ee.Err, fabric.ErrCanceled) || ee.OpContext != ctxA || ee.Flags&fabric.FlagRecv == 0 {
			t.Fatalf("cancel completion = %+v", ee)
		}
		var x fabric.CQErrEntry
		isErr(t, "second ReadErr", e.rxcq.ReadErr(&x), fabric.ErrAgain)
		if err := e.ep.Cancel(ctxA); err == nil {
			expectEmpty(t, e.rxcq, scaled(20e6))
		}
		// ctxB is still posted: a message reaches it.
		retry(t, "send", func() error { return peer.ep.Send([]byte("hi"), nil, dst, nil) }, peer.txcq)
		ent, ee := waitCQ(t, e.rxcq, peer.txcq)
		if ee != nil || ent.OpContext != ctxB || ent.Len != 2 {
			t.Fatalf("completion after cancel = %+v %+v; want ctxB len 2", ent, ee)
		}
	})
	register("fi_endpoint/tx_rx_size_left", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		_, err := e.ep.TxSizeLeft()
		isErr(t, "tx_size_left before enable", err, fabric.ErrOpBadState)
		if err := e.ep.Enable(); err != nil {
			t.Fatal(err)
		}
		n, err := e.ep.RxSizeLeft()
		if err != nil || n <= 0 {
			t.Fatalf("rx_size_left = %d, %v", n, err)
		}
		if err := e.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
			t.Fatal(err)
		}
		m, err := e.ep.RxSizeLeft()
		if err != nil || m != n-1 {
			t.Fatalf("rx_size_left after a post = %d, %v; want %d", m, err, n-1)
		}
	})
	register("fi_endpoint/dscp_helpers", func(t *testing.T, tg Target) {
		tc := fabric.TCDSCPSet(46)
		if fabric.TCDSCPGet(tc) != 46 || fabric.TCDSCPGet(0x201) != 0 {
			t.Fatalf("fi_tc_dscp_set/get round trip failed: %#x", tc)
		}
	})
	register("fi_scalable_ep/unclaimed_ENOSYS", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		if e.info.DomainAttr.MaxEPTxCtx > 1 || e.info.DomainAttr.MaxEPRxCtx > 1 {
			t.Skip("provider claims scalable endpoints")
		}
		_, err := e.dom.OpenScalableEndpoint(e.info)
		isErr(t, "fi_scalable_ep", err, fabric.ErrNoSys)
		_, err = e.dom.OpenSTX(nil)
		isErr(t, "fi_stx_context", err, fabric.ErrNoSys)
	})
}
