package fabtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// endpointCases lists the fi_endpoint(3) (with scalable endpoints and shared receive contexts) behaviours, in the order they run.
var endpointCases = []testCase{
	{"fi_endpoint/created_disabled_send_EOPBADSTATE", epCreatedDisabledSendEOPBADSTATE},
	{"fi_endpoint/bind_cq_bad_flags_EBADFLAGS", epBindCqBadFlagsEBADFLAGS},
	{"fi_endpoint/bind_second_cq_same_direction_EINVAL", epBindSecondCqSameDirectionEINVAL},
	{"fi_endpoint/bind_after_enable_EOPBADSTATE", epBindAfterEnableEOPBADSTATE},
	{"fi_endpoint/bind_nil_EINVAL", epBindNilEINVAL},
	{"fi_endpoint/bind_object_of_other_domain_EDOMAIN", epBindObjectOfOtherDomainEDOMAIN},
	{"fi_endpoint/enable_without_av_ENOAV", epEnableWithoutAvENOAV},
	{"fi_endpoint/enable_without_cq_ENOCQ", epEnableWithoutCqENOCQ},
	{"fi_endpoint/alias_flags", epAliasFlags},
	{"fi_endpoint/control_getopsflag_setopsflag", epControlGetopsflagSetopsflag},
	{"fi_endpoint/getopt_unknown_ENOPROTOOPT", epGetoptUnknownENOPROTOOPT},
	{"fi_endpoint/min_multi_recv_getopt_setopt", epMinMultiRecvGetoptSetopt},
	{"fi_endpoint/endpoint2_flags", epEndpoint2Flags},
	{"fi_endpoint/hmem_p2p_xpu_trigger_ENOPROTOOPT", epHMEMP2PXPUTriggerENOPROTOOPT},
	{"fi_endpoint/rx_size_before_enable_bounds_posts", epRxSizeBeforeEnableBoundsPosts},
	{"fi_endpoint/tx_size_before_enable", epTxSizeBeforeEnable},
	{"fi_endpoint/send_recv_buf_size", epSendRecvBufSize},
	{"fi_endpoint/getname_sockaddr_layout", epGetnameSockaddrLayout},
	{"fi_endpoint/cancel_recv_ECANCELED", epCancelRecvECANCELED},
	{"fi_endpoint/tx_rx_size_left", epTxRxSizeLeft},
	{"fi_endpoint/dscp_helpers", epDscpHelpers},
	{"fi_endpoint/failed_post_before_enable_has_no_effect", epFailedPostBeforeEnableHasNoEffect},
	{"fi_endpoint/bind_flags_and_objects_validation", epBindFlagsAndObjectsValidation},
	{"fi_endpoint/bind_other_domain_EDOMAIN", epBindOtherDomainEDOMAIN},
	{"fi_endpoint/close_cancels_outstanding_receives", epCloseCancelsOutstandingReceives},
	{"fi_endpoint/close_completes_outstanding_sends", epCloseCompletesOutstandingSends},
	{"fi_endpoint/setname_ephemeral_and_in_use", epSetnameEphemeralAndInUse},
	{"fi_endpoint/many_endpoints_share_an_av", epManyEndpointsShareAnAv},
	{"fi_endpoint/loopback_send_to_self", epLoopbackSendToSelf},
	{"fi_endpoint/address_reuse_after_close", epAddressReuseAfterClose},
	{"fi_endpoint/cancel_unknown_or_completed_no_extra_completion", epCancelUnknownOrCompletedNoExtraCompletion},
	{"fi_endpoint/rx_size_exceeded_EAGAIN_then_resumes", epRxSizeExceededEAGAINThenResumes},
	{"fi_endpoint/alias_ops_use_alias_flags", epAliasOpsUseAliasFlags},
	{"fi_scalable_ep/unclaimed_ENOSYS", scalableEPUnclaimedENOSYS},
	{"fi_srx_context/shared_rx_serves_every_bound_endpoint", srxSharedRxServesEveryBoundEndpoint},
	{"fi_endpoint/buffered_opts_defaults_and_range", epBufferedOptsDefaultsAndRange},
	{"fi_endpoint/buffered_opts_after_enable_EOPBADSTATE", epBufferedOptsAfterEnableEOPBADSTATE},
	{"fi_endpoint/buffered_opts_without_mode_ENOPROTOOPT", epBufferedOptsWithoutModeENOPROTOOPT},
}

func epCreatedDisabledSendEOPBADSTATE(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	isErr(t, "Send before Enable", e.ep.Send([]byte("x"), nil, 0, nil), fabric.ErrOpBadState)
	isErr(t, "Recv before Enable", e.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil), fabric.ErrOpBadState)
	isErr(t, "Inject before Enable", e.ep.Inject([]byte("x"), 0), fabric.ErrOpBadState)
}

func epBindCqBadFlagsEBADFLAGS(t *testing.T, tg Target) {
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
}

func epBindSecondCqSameDirectionEINVAL(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	cq := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	isErr(t, "second tx CQ", e.ep.BindCQ(cq, fabric.FlagTransmit), fabric.ErrInval)
	isErr(t, "second rx CQ", e.ep.BindCQ(cq, fabric.FlagRecv), fabric.ErrInval)
}

func epBindAfterEnableEOPBADSTATE(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{})
	cq := e.openCQ(&fabric.CQAttr{Format: fabric.CQFormatContext})
	isErr(t, "bind after enable", e.ep.BindCQ(cq, fabric.FlagTransmit), fabric.ErrOpBadState)
}

func epBindNilEINVAL(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	isErr(t, "bind nil", e.ep.Bind(nil, fabric.FlagTransmit), fabric.ErrInval)
	isErr(t, "bind nil CQ", e.ep.BindCQ(nil, fabric.FlagTransmit), fabric.ErrInval)
}

func epBindObjectOfOtherDomainEDOMAIN(t *testing.T, tg Target) {
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
}

func epEnableWithoutAvENOAV(t *testing.T, tg Target) {
	connectionless(t, tg)
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
}

func epEnableWithoutCqENOCQ(t *testing.T, tg Target) {
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
}

func epAliasFlags(t *testing.T, tg Target) {
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
}

func epControlGetopsflagSetopsflag(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{})
	_, err := e.ep.OpsFlags(fabric.FlagTransmit | fabric.FlagRecv)
	isErr(t, "GETOPSFLAG with both", err, fabric.ErrInval)
	isErr(t, "SETOPSFLAG with neither", e.ep.SetOpsFlags(fabric.FlagCompletion), fabric.ErrInval)
	if err := e.ep.SetOpsFlags(fabric.FlagRecv | fabric.FlagCompletion); err != nil {
		t.Fatalf("SETOPSFLAG: %v", err)
	}
	if get, err := e.ep.OpsFlags(fabric.FlagRecv); err != nil || get != fabric.FlagCompletion {
		t.Fatalf("GETOPSFLAG = %v, %v; want FI_COMPLETION", get, err)
	}
}

func epGetoptUnknownENOPROTOOPT(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{})
	_, err := e.ep.GetOpt(fabric.OptEndpoint, 1000)
	isErr(t, "unknown option", err, fabric.ErrNoProtoOpt)
	_, err = e.ep.GetOpt(7, fabric.OptMinMultiRecv)
	isErr(t, "unknown level", err, fabric.ErrNoProtoOpt)
	isErr(t, "setopt unknown", e.ep.SetOpt(fabric.OptEndpoint, 1000, 1), fabric.ErrNoProtoOpt)
}

func epMinMultiRecvGetoptSetopt(t *testing.T, tg Target) {
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
}

func epGetnameSockaddrLayout(t *testing.T, tg Target) {
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
}

func epCancelRecvECANCELED(t *testing.T, tg Target) {
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
}

func epTxRxSizeLeft(t *testing.T, tg Target) {
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
}

func epDscpHelpers(t *testing.T, tg Target) {
	tc := fabric.TCDSCPSet(46)
	if fabric.TCDSCPGet(tc) != 46 || fabric.TCDSCPGet(0x201) != 0 {
		t.Fatalf("fi_tc_dscp_set/get round trip failed: %#x", tc)
	}
}

func epFailedPostBeforeEnableHasNoEffect(t *testing.T, tg Target) {
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
}

func epBindFlagsAndObjectsValidation(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	ep := e.bareEndpoint()
	if cntr, err := e.dom.OpenCntr(nil); supported(t, "fi_cntr_open", err) {
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
	isErr(t, "typed nil object", ep.Bind((*fabric.CQ)(nil), 0), fabric.ErrInval)
	isErr(t, "nil object", ep.Bind(nil, 0), fabric.ErrInval)
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
}

func epBindOtherDomainEDOMAIN(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	other := tg.open(t, envOpts{noEnable: true}) // another fabric and domain
	ep := e.bareEndpoint()
	if other.av != nil {
		isErr(t, "AV of another domain", ep.BindAV(other.av), fabric.ErrDomain)
	}
	if c, err := other.dom.OpenCntr(nil); supported(t, "fi_cntr_open", err) {
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
}

// Project rule (stricter than fi_endpoint(3), which allows silent
// discard): nothing posted is lost silently; closing an endpoint
// completes its posted receives with FI_ECANCELED, exactly once each,
// and never writes into their buffers afterwards.
func epCloseCancelsOutstandingReceives(t *testing.T, tg Target) {
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
}

// Project rule (as for receives, epCloseCancelsOutstandingReceives):
// closing an endpoint with sends outstanding (FI_DELIVERY_COMPLETE to a
// peer that has posted no receive) completes each exactly once on its CQ,
// successfully or with FI_ECANCELED, and counts it once on its send
// counter, in the error value if it failed.
func epCloseCompletesOutstandingSends(t *testing.T, tg Target) {
	bind, cntrs := bindSendCntr(t)
	a, _, ab, _ := tg.pair(t, envOpts{bind: bind})
	want := map[any]bool{}
	var sends uint64
	for k := 0; k < 3; k++ {
		ctx := fmt.Sprintf("s%d", k)
		if err := sendHeld(tg, a.ep, []byte(ctx), ab, ctx); err != nil {
			if errors.Is(err, fabric.ErrAgain) {
				break
			}
			t.Fatal(err)
		}
		want[ctx] = false
		sends++
	}
	if sends == 0 {
		t.Fatal("no send could be posted")
	}
	if err := a.ep.Close(); err != nil {
		t.Fatalf("close with sends outstanding: %v", err)
	}
	errs := drainPosted(t, "closed endpoint", a.txcq, want)
	checkSendCntr(t, "closed endpoint", cntrs[a], sends, errs)
}

func epSetnameEphemeralAndInUse(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{})
	ep := e.bareEndpoint()
	src := e.info.SrcAddr
	if p, ok := sockPort(e.info.AddrFormat, src); !ok || p != 0 {
		t.Skipf("src_addr % x is not a port-0 socket address", src)
	}
	err := ep.SetName(src)
	skipIfNotSupported(t, "fi_setname(port 0)", err)
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
}

func epManyEndpointsShareAnAv(t *testing.T, tg Target) {
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
}

func epLoopbackSendToSelf(t *testing.T, tg Target) {
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
}

func epAddressReuseAfterClose(t *testing.T, tg Target) {
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
}

func epCancelUnknownOrCompletedNoExtraCompletion(t *testing.T, tg Target) {
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
}

func epRxSizeExceededEAGAINThenResumes(t *testing.T, tg Target) {
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
}

func epAliasOpsUseAliasFlags(t *testing.T, tg Target) {
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
}

func scalableEPUnclaimedENOSYS(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	if e.info.DomainAttr.MaxEPTxCtx > 1 || e.info.DomainAttr.MaxEPRxCtx > 1 {
		t.Skip("provider claims scalable endpoints")
	}
	_, err := e.dom.OpenScalableEndpoint(e.info)
	isErr(t, "fi_scalable_ep", err, fabric.ErrNoSys)
}

func srxSharedRxServesEveryBoundEndpoint(t *testing.T, tg Target) {
	connectionless(t, tg)
	r := tg.open(t, envOpts{noEnable: true})
	srx, err := r.dom.OpenSRX(nil, nil)
	if err != nil {
		t.Fatalf("fi_srx_context: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "srx", srx.Close()) })
	info := r.info.Dup()
	sharedRxInfo(info)
	var eps [2]*fabric.Endpoint
	var cqs [2]*fabric.CQ
	var addrs [2][]byte
	for i := range eps {
		cqs[i] = r.openCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
		ep, err := r.dom.OpenEndpoint(info)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOK(t, "endpoint", ep.Close()) })
		if err := ep.BindCQ(cqs[i], fabric.FlagTransmit|fabric.FlagRecv); err != nil {
			t.Fatal(err)
		}
		if err := ep.BindAV(r.av); err != nil {
			t.Fatal(err)
		}
		isErr(t, "enable without the SRX", ep.Enable(), fabric.ErrNoRX)
		if err := ep.BindSRX(srx); err != nil {
			t.Fatalf("bind srx: %v", err)
		}
		if err := ep.Enable(); err != nil {
			t.Fatal(err)
		}
		eps[i] = ep
		if addrs[i], err = ep.Name(); err != nil {
			t.Fatal(err)
		}
	}
	isErr(t, "close SRX while bound", srx.Close(), fabric.ErrBusy)
	bufs := [][]byte{make([]byte, 16), make([]byte, 16)}
	for i, b := range bufs {
		if err := srx.Recv(b, nil, fabric.AddrUnspec, i); err != nil {
			t.Fatalf("srx recv: %v", err)
		}
	}
	s := tg.open(t, envOpts{})
	for i := range eps {
		dst := s.insert(addrs[i])
		msg := []byte{'m', byte('0' + i)}
		retry(t, "send", func() error { return s.ep.Send(msg, nil, dst, nil) }, s.txcq)
		waitCQ(t, s.txcq)
		got, ee := waitCQ(t, cqs[i], s.txcq)
		if ee != nil || got.OpContext != i || string(bufs[i][:got.Len]) != string(msg) {
			t.Fatalf("endpoint %d: %+v %+v %q", i, got, ee, bufs[i][:got.Len])
		}
	}
}

func epEndpoint2Flags(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	ep, err := e.dom.OpenEndpoint2(e.info, 0)
	if err != nil {
		t.Fatalf("fi_endpoint2 with flags 0: %v", err)
	}
	closeOK(t, "endpoint2", ep.Close())
	for _, c := range []struct {
		f    fabric.Flags
		want error
	}{
		{fabric.FlagPeerTransfer, fabric.ErrNoSys}, // no provider imports peer transfers
		{fabric.FlagPeer, fabric.ErrBadFlags},
		{fabric.FlagTransmit, fabric.ErrBadFlags},
		{fabric.FlagPeerTransfer | 1<<62, fabric.ErrBadFlags},
	} {
		ep, err := e.dom.OpenEndpoint2(e.info, c.f)
		isErr(t, fmt.Sprintf("fi_endpoint2 flags %#x", uint64(c.f)), err, c.want)
		if ep != nil {
			t.Fatalf("fi_endpoint2 flags %#x returned an endpoint with its error", uint64(c.f))
		}
	}
	_, err = e.dom.OpenEndpoint2(nil, 0)
	isErr(t, "fi_endpoint2 nil info", err, fabric.ErrInval)
}

func epHMEMP2PXPUTriggerENOPROTOOPT(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	for _, name := range []int{fabric.OptHMEMP2P, fabric.OptXPUTrigger} {
		_, err := e.ep.GetOpt(fabric.OptEndpoint, name)
		isErr(t, fmt.Sprintf("getopt %d", name), err, fabric.ErrNoProtoOpt)
		isErr(t, fmt.Sprintf("setopt %d", name), e.ep.SetOpt(fabric.OptEndpoint, name, 0), fabric.ErrNoProtoOpt)
	}
}

func epRxSizeBeforeEnableBoundsPosts(t *testing.T, tg Target) {
	const size = 4
	set := func(e *env) {
		if v, err := e.ep.GetOpt(fabric.OptEndpoint, fabric.OptRxSize); err != nil || v != e.info.RxAttr.Size {
			t.Fatalf("FI_OPT_RX_SIZE = %d, %v; want rx_attr.size %d", v, err, e.info.RxAttr.Size)
		}
		isErr(t, "FI_OPT_RX_SIZE 0", e.ep.SetOpt(fabric.OptEndpoint, fabric.OptRxSize, 0), fabric.ErrInval)
		if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptRxSize, size); err != nil {
			t.Fatalf("FI_OPT_RX_SIZE before enable: %v", err)
		}
	}
	a, b, ab, _ := tg.pair(t, envOpts{bind: set})
	if v, err := b.ep.GetOpt(fabric.OptEndpoint, fabric.OptRxSize); err != nil || v != size {
		t.Fatalf("FI_OPT_RX_SIZE after set = %d, %v; want %d", v, err, size)
	}
	isErr(t, "FI_OPT_RX_SIZE after enable", b.ep.SetOpt(fabric.OptEndpoint, fabric.OptRxSize, 8), fabric.ErrOpBadState)
	var err error
	posted := 0
	for ; posted <= size; posted++ {
		if err = b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
			break
		}
	}
	if posted != size || !errors.Is(err, fabric.ErrAgain) {
		t.Fatalf("posted %d receives (FI_OPT_RX_SIZE %d), then %v; want %d then ErrAgain", posted, size, err, size)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("one"), nil, ab, nil) }, a.txcq)
	waitCQ(t, b.rxcq, a.txcq)
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatalf("post after a completion freed a slot: %v", err)
	}
}

// txSizeSettable reports whether the provider queues transmits and so
// takes FI_OPT_TX_SIZE (tcp); udp sends at once and shm's transmit depth
// is its ring's.
func txSizeSettable(tg Target) bool { return tg.Provider == "tcp" }

func epTxSizeBeforeEnable(t *testing.T, tg Target) {
	e := tg.open(t, envOpts{noEnable: true})
	v, err := e.ep.GetOpt(fabric.OptEndpoint, fabric.OptTxSize)
	if err != nil || v != e.info.TxAttr.Size {
		t.Fatalf("FI_OPT_TX_SIZE = %d, %v; want tx_attr.size %d", v, err, e.info.TxAttr.Size)
	}
	err = e.ep.SetOpt(fabric.OptEndpoint, fabric.OptTxSize, 8)
	if !txSizeSettable(tg) {
		isErr(t, "FI_OPT_TX_SIZE", err, fabric.ErrNoProtoOpt)
		return
	}
	if err != nil {
		t.Fatalf("FI_OPT_TX_SIZE before enable: %v", err)
	}
	if v, err := e.ep.GetOpt(fabric.OptEndpoint, fabric.OptTxSize); err != nil || v != 8 {
		t.Fatalf("FI_OPT_TX_SIZE after set = %d, %v; want 8", v, err)
	}
	isErr(t, "FI_OPT_TX_SIZE 0", e.ep.SetOpt(fabric.OptEndpoint, fabric.OptTxSize, 0), fabric.ErrInval)
	isErr(t, "FI_OPT_TX_SIZE huge", e.ep.SetOpt(fabric.OptEndpoint, fabric.OptTxSize, 1<<40), fabric.ErrInval)
	if e.info.EPAttr.Type == fabric.EPMsg {
		return // enabled by Connect; the pair case below covers enabled endpoints
	}
	if err := e.ep.Enable(); err != nil {
		t.Fatal(err)
	}
	isErr(t, "FI_OPT_TX_SIZE after enable", e.ep.SetOpt(fabric.OptEndpoint, fabric.OptTxSize, 16), fabric.ErrOpBadState)
	if v, err := e.ep.GetOpt(fabric.OptEndpoint, fabric.OptTxSize); err != nil || v != 8 {
		t.Fatalf("FI_OPT_TX_SIZE after a refused set = %d, %v; want 8", v, err)
	}
}

// sockBufs reports whether the provider's endpoints have sockets whose
// buffers FI_OPT_SEND_BUF_SIZE / RECV_BUF_SIZE set.
func sockBufs(tg Target) bool { return tg.Provider == "tcp" || tg.Provider == "udp" }

func epSendRecvBufSize(t *testing.T, tg Target) {
	for _, name := range []int{fabric.OptSendBufSize, fabric.OptRecvBufSize} {
		e := tg.open(t, envOpts{noEnable: true})
		_, err := e.ep.GetOpt(fabric.OptEndpoint, name)
		if !sockBufs(tg) {
			isErr(t, "getopt socket buffer", err, fabric.ErrNoProtoOpt)
			isErr(t, "setopt socket buffer", e.ep.SetOpt(fabric.OptEndpoint, name, 1<<16), fabric.ErrNoProtoOpt)
			continue
		}
		if err != nil {
			t.Fatalf("getopt %d: %v", name, err)
		}
		isErr(t, "setopt 0", e.ep.SetOpt(fabric.OptEndpoint, name, 0), fabric.ErrInval)
		// Linux doubles the request (and caps it at [wr]mem_max, which
		// is at least 212992 by default): getopt reports what is in effect.
		for _, want := range []uint64{24 << 10, 48 << 10} {
			if err := e.ep.SetOpt(fabric.OptEndpoint, name, want); err != nil {
				t.Fatalf("setopt %d = %d: %v", name, want, err)
			}
			v, err := e.ep.GetOpt(fabric.OptEndpoint, name)
			if err != nil || v < want || v > 2*want {
				t.Fatalf("getopt %d after setting %d = %d, %v; want %d..%d", name, want, v, err, want, 2*want)
			}
		}
	}
	// The sizes survive enabling and traffic flows.
	set := func(e *env) {
		if sockBufs(tg) {
			if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptRecvBufSize, 64<<10); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, b, ab, _ := tg.pair(t, envOpts{bind: set})
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("buf"), nil, ab, nil) }, a.txcq)
	waitCQ(t, b.rxcq, a.txcq)
	if sockBufs(tg) {
		v, err := b.ep.GetOpt(fabric.OptEndpoint, fabric.OptRecvBufSize)
		if err != nil || v < 64<<10 {
			t.Fatalf("FI_OPT_RECV_BUF_SIZE after enable = %d, %v; want >= %d", v, err, 64<<10)
		}
	}
}

// ---- FI_OPT_BUFFERED_MIN / FI_OPT_BUFFERED_LIMIT ----

func epBufferedOptsDefaultsAndRange(t *testing.T, tg Target) {
	bufRecvOffered(t, tg, 0)
	e := tg.open(t, envOpts{mode: fabric.ModeBufferedRecv, noEnable: true})
	get := func(name int) uint64 {
		t.Helper()
		v, err := e.ep.GetOpt(fabric.OptEndpoint, name)
		if err != nil {
			t.Fatalf("getopt %d: %v", name, err)
		}
		return v
	}
	min, limit := get(fabric.OptBufferedMin), get(fabric.OptBufferedLimit)
	if limit == 0 || min > limit {
		t.Fatalf("defaults: FI_OPT_BUFFERED_MIN %d, FI_OPT_BUFFERED_LIMIT %d", min, limit)
	}
	// SIZE_MAX sets the largest limit the provider supports.
	if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit, math.MaxUint64); err != nil {
		t.Fatalf("FI_OPT_BUFFERED_LIMIT SIZE_MAX: %v", err)
	}
	max := get(fabric.OptBufferedLimit)
	if max < limit {
		t.Fatalf("SIZE_MAX set the limit to %d, below the default %d", max, limit)
	}
	if max < math.MaxUint64 {
		isErr(t, "limit beyond the maximum", e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit, max+1),
			fabric.ErrMsgSize)
	}
	if get(fabric.OptBufferedLimit) != max {
		t.Fatal("a refused FI_OPT_BUFFERED_LIMIT changed the limit")
	}
	if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedMin, 16); err != nil {
		t.Fatalf("FI_OPT_BUFFERED_MIN 16: %v", err)
	}
	if err := e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit, 32); err != nil {
		t.Fatalf("FI_OPT_BUFFERED_LIMIT 32: %v", err)
	}
	isErr(t, "min above the limit", e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedMin, 33), fabric.ErrInval)
	isErr(t, "limit below the min", e.ep.SetOpt(fabric.OptEndpoint, fabric.OptBufferedLimit, 15), fabric.ErrInval)
	var b [8]byte
	if n, err := e.ep.GetOptBytes(fabric.OptEndpoint, fabric.OptBufferedMin, b[:]); err != nil || n != 8 ||
		binary.NativeEndian.Uint64(b[:]) != 16 {
		t.Fatalf("GetOptBytes(FI_OPT_BUFFERED_MIN): n=%d err=%v value %d", n, err, binary.NativeEndian.Uint64(b[:]))
	}
	if got := get(fabric.OptBufferedLimit); got != 32 {
		t.Fatalf("limit %d, want 32", got)
	}
}

func epBufferedOptsAfterEnableEOPBADSTATE(t *testing.T, tg Target) {
	bufRecvOffered(t, tg, 0)
	connectionless(t, tg) // a connection-oriented endpoint is enabled by Connect/Accept
	e := tg.open(t, envOpts{mode: fabric.ModeBufferedRecv})
	for _, name := range []int{fabric.OptBufferedMin, fabric.OptBufferedLimit} {
		v, err := e.ep.GetOpt(fabric.OptEndpoint, name)
		if err != nil {
			t.Fatalf("getopt %d after enable: %v", name, err)
		}
		isErr(t, "setopt after enable", e.ep.SetOpt(fabric.OptEndpoint, name, v), fabric.ErrOpBadState)
	}
}

func epBufferedOptsWithoutModeENOPROTOOPT(t *testing.T, tg Target) {
	bufRecvOffered(t, tg, 0)
	e := tg.open(t, envOpts{noEnable: true})
	for _, name := range []int{fabric.OptBufferedMin, fabric.OptBufferedLimit} {
		_, err := e.ep.GetOpt(fabric.OptEndpoint, name)
		isErr(t, "getopt without FI_BUFFERED_RECV", err, fabric.ErrNoProtoOpt)
		isErr(t, "setopt without FI_BUFFERED_RECV", e.ep.SetOpt(fabric.OptEndpoint, name, 64), fabric.ErrNoProtoOpt)
	}
}
