package fabtest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// getinfoCases lists the fi_getinfo(3) behaviours, in the order they run.
var getinfoCases = []testCase{
	{"fi_getinfo/no_hints_src_addr_and_version", getinfoNoHintsSrcAddrAndVersion},
	{"fi_getinfo/node_service_dest_addr", getinfoNodeServiceDestAddr},
	{"fi_getinfo/no_match_ENODATA", getinfoNoMatchENODATA},
	{"fi_getinfo/caps_subsets_no_extra_primary", getinfoCapsSubsetsNoExtraPrimary},
	{"fi_getinfo/progress_echo", getinfoProgressEcho},
	{"fi_getinfo/mode_zero_and_caps4_requery", getinfoModeZeroAndCaps4Requery},
	{"fi_getinfo/dup_is_deep", getinfoDupIsDeep},
	{"fi_getinfo/version_too_new_ENOSYS", getinfoVersionTooNewENOSYS},
	{"fi_getinfo/source_node_service_combinations", getinfoSourceNodeServiceCombinations},
	{"fi_getinfo/hint_limits_honoured_or_ENODATA", getinfoHintLimitsHonouredOrENODATA},
	{"fi_getinfo/addr_format_sockaddr_and_ep_type", getinfoAddrFormatSockaddrAndEpType},
	{"fi_getinfo/caps_tx_rx_cover_request_and_null_hints", getinfoCapsTxRxCoverRequestAndNullHints},
	{"fi_getinfo/domain_caps_honoured", getinfoDomainCapsHonoured},
	{"fi_getinfo/msg_order_superset_or_ENODATA", getinfoMsgOrderSupersetOrENODATA},
	{"fi_getinfo/mr_mode_subset_or_ENODATA", getinfoMrModeSubsetOrENODATA},
	{"fi_getinfo/msg_prefix_mode_offered", getinfoMsgPrefixModeOffered},
	{"fi_getinfo/getname_fits_control_message", getinfoGetnameFitsControlMessage},
	{"fi_getinfo/buffered_recv_mode_only_when_asked", getinfoBufferedRecvModeOnlyWhenAsked},
	{"fi_getinfo/total_buffered_recv_truthful", getinfoTotalBufferedRecvTruthful},
}

func getinfoNoHintsSrcAddrAndVersion(t *testing.T, tg Target) {
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, nil)
	if err != nil || len(infos) == 0 {
		t.Fatalf("GetInfo(nil hints): %v", err)
	}
	found := false
	for _, in := range infos {
		if in.FabricAttr.ProvName != tg.Provider {
			continue
		}
		found = true
		if len(in.SrcAddr) == 0 {
			t.Errorf("info without src_addr: %+v", in)
		}
		if in.FabricAttr.APIVersion != fabric.APIVersion {
			t.Errorf("api_version %#x; want %#x", in.FabricAttr.APIVersion, fabric.APIVersion)
		}
	}
	if !found {
		t.Fatalf("provider %s absent from GetInfo(nil)", tg.Provider)
	}
}

func getinfoNodeServiceDestAddr(t *testing.T, tg Target) {
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "9228", 0, tg.hints(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if len(in.DestAddr) == 0 || len(in.SrcAddr) == 0 {
			t.Fatalf("node+service without FI_SOURCE: src %x dest %x; want both", in.SrcAddr, in.DestAddr)
		}
	}
	infos, err = fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "9228", fabric.FlagSource, tg.hints(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(infos[0].SrcAddr) == 0 || len(infos[0].DestAddr) != 0 {
		t.Fatalf("node+service with FI_SOURCE: src %x dest %x", infos[0].SrcAddr, infos[0].DestAddr)
	}
}

// getinfoNoMatchENODATA: no match is ENODATA, and the error says why: the
// provider and the hint field it could not satisfy.
func getinfoNoMatchENODATA(t *testing.T, tg Target) {
	h := tg.hints(0)
	h.DomainAttr.Name = "invalid_domain"
	_, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	isErr(t, "unknown domain name", err, fabric.ErrNoData)
	if want := tg.Provider + ": domain_attr.name"; err != nil && !strings.Contains(err.Error(), want) {
		t.Errorf("unknown domain name: %q does not say %q", err, want)
	}
	h = tg.hints(0)
	h.FabricAttr.ProvName = "no-such-provider"
	_, err = fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	isErr(t, "unknown provider", err, fabric.ErrNoData)
	if want := `no provider named "no-such-provider"`; err != nil && !strings.Contains(err.Error(), want) {
		t.Errorf("unknown provider: %q does not say %q", err, want)
	}
	_, err = fabric.GetInfo(fabric.APIVersion, "g00n13s.invalid", "9228", 0, tg.hints(0))
	isErr(t, "unresolvable node", err, fabric.ErrNoData)
}

func getinfoCapsSubsetsNoExtraPrimary(t *testing.T, tg Target) {
	prim := []fabric.Caps{fabric.CapMsg, fabric.CapTagged, fabric.CapRMA, fabric.CapAtomic,
		fabric.CapMulticast, fabric.CapDirectedRecv, fabric.CapNamedRxCtx}
	for mask := 1; mask < 1<<len(prim); mask++ {
		var want fabric.Caps
		for i, c := range prim {
			if mask&(1<<i) != 0 {
				want |= c
			}
		}
		h := fabric.AllocInfo()
		h.Caps = want
		h.EPAttr.Type = tg.EPType
		h.FabricAttr.ProvName = tg.Provider
		infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
		if errors.Is(err, fabric.ErrNoData) {
			continue
		}
		if err != nil {
			t.Fatalf("caps %v: %v", want, err)
		}
		for _, in := range infos {
			if in.Caps&want != want {
				t.Fatalf("caps %v: returned %v lacks requested caps", want, in.Caps)
			}
			if extra := in.Caps & fabric.PrimaryCaps &^ want; extra != 0 {
				t.Fatalf("caps %v: returned extra primary caps %v", want, extra)
			}
			if in.TxAttr.Caps&^in.Caps != 0 || in.RxAttr.Caps&^in.Caps != 0 {
				t.Fatalf("tx/rx caps not a subset of info caps: %v %v %v", in.TxAttr.Caps, in.RxAttr.Caps, in.Caps)
			}
		}
	}
}

func getinfoProgressEcho(t *testing.T, tg Target) {
	for _, p := range []fabric.Progress{fabric.ProgressManual, fabric.ProgressAuto} {
		h := tg.hints(0)
		h.DomainAttr.DataProgress = p
		h.DomainAttr.ControlProgress = p
		infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
		if errors.Is(err, fabric.ErrNoData) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := infos[0].DomainAttr; d.DataProgress != p || d.ControlProgress != p {
			t.Fatalf("progress %v returned data %v control %v", p, d.DataProgress, d.ControlProgress)
		}
	}
}

func getinfoModeZeroAndCaps4Requery(t *testing.T, tg Target) {
	h := tg.hints(0)
	h.Mode = 0
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err == nil {
		for _, in := range infos {
			if in.Mode != 0 {
				t.Fatalf("mode=0 hint returned an info needing %v", in.Mode)
			}
		}
	}
	base := tg.info(t, 0)
	h = fabric.AllocInfo()
	h.Caps = base.Caps
	h.Mode = fabric.ModeContext
	h.EPAttr.Type = tg.EPType
	h.DomainAttr.MRMode = fabric.MRLocal | fabric.MRAllocated | fabric.MRProvKey | fabric.MRVirtAddr
	h.FabricAttr.ProvName = tg.Provider
	if _, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h); err != nil {
		t.Fatalf("re-query with the caps of a result plus FI_CONTEXT and MR_BASIC_MAP: %v", err)
	}
}

func getinfoDupIsDeep(t *testing.T, tg Target) {
	in := tg.info(t, 0)
	d := in.Dup()
	d.TxAttr.Size++
	d.SrcAddr[0] ^= 0xff
	d.DomainAttr.Name = "changed"
	if in.TxAttr.Size == d.TxAttr.Size || in.SrcAddr[0] == d.SrcAddr[0] || in.DomainAttr.Name == "changed" {
		t.Fatal("Dup shares memory with the original")
	}
}

func getinfoVersionTooNewENOSYS(t *testing.T, tg Target) {
	_, err := fabric.GetInfo(fabric.Version(9, 0), "", "", 0, tg.hints(0))
	isErr(t, "future API version", err, fabric.ErrNoSys)
}

func getinfoSourceNodeServiceCombinations(t *testing.T, tg Target) {
	// node + FI_SOURCE: src_addr is node (any port), no dest_addr.
	for _, in := range getInfoOK(t, "node+FI_SOURCE", tg.node(), "", fabric.FlagSource, tg.hints(0)) {
		if len(in.SrcAddr) == 0 || len(in.DestAddr) != 0 {
			t.Fatalf("node+FI_SOURCE: src % x dest % x; want src only", in.SrcAddr, in.DestAddr)
		}
		if tg.node() == "127.0.0.1" && in.AddrFormat == fabric.SockAddrIn && !isLoopback4(in.AddrFormat, in.SrcAddr) {
			t.Fatalf("node+FI_SOURCE: src % x is not 127.0.0.1", in.SrcAddr)
		}
	}
	// service + FI_SOURCE: src_addr has that port.
	infos := getInfoOK(t, "service+FI_SOURCE", "", "9229", fabric.FlagSource, tg.hints(0))
	if infos == nil {
		t.Fatal("service+FI_SOURCE: ENODATA")
	}
	for _, in := range infos {
		if len(in.SrcAddr) == 0 {
			t.Fatal("service+FI_SOURCE: no src_addr")
		}
		if p, ok := sockPort(in.AddrFormat, in.SrcAddr); ok && p != 9229 {
			t.Fatalf("service+FI_SOURCE: src port %d; want 9229", p)
		}
	}
	// node + service + FI_SOURCE: both in src_addr.
	for _, in := range getInfoOK(t, "node+service+FI_SOURCE", tg.node(), "9229", fabric.FlagSource, tg.hints(0)) {
		if p, ok := sockPort(in.AddrFormat, in.SrcAddr); ok && p != 9229 {
			t.Fatalf("node+service+FI_SOURCE: src port %d; want 9229", p)
		}
	}
	// node + service, no flag: dest_addr is node:service, src_addr set.
	infos = getInfoOK(t, "node+service", "127.0.0.1", "9229", 0, tg.hints(0))
	if infos == nil {
		t.Fatal("node+service: ENODATA")
	}
	for _, in := range infos {
		if len(in.SrcAddr) == 0 || len(in.DestAddr) == 0 {
			t.Fatalf("node+service: src % x dest % x; want both", in.SrcAddr, in.DestAddr)
		}
		if p, ok := sockPort(in.AddrFormat, in.DestAddr); ok && p != 9229 {
			t.Fatalf("node+service: dest port %d; want 9229", p)
		}
		if in.AddrFormat == fabric.SockAddrIn && !isLoopback4(in.AddrFormat, in.DestAddr) {
			t.Fatalf("node+service: dest % x is not 127.0.0.1", in.DestAddr)
		}
	}
	// FI_SOURCE with neither node nor service names nothing.
	_, err := fabric.GetInfo(fabric.APIVersion, "", "", fabric.FlagSource, tg.hints(0))
	if err == nil {
		t.Fatal("FI_SOURCE without node or service succeeded")
	}
}

func getinfoHintLimitsHonouredOrENODATA(t *testing.T, tg Target) {
	base := tg.info(t, 0)
	type probe struct {
		name  string
		set   func(h *fabric.Info)
		check func(in *fabric.Info) bool // returned value satisfies the hint
		fits  bool                       // the provider can satisfy it
	}
	maxMsg, inj := base.EPAttr.MaxMsgSize, base.TxAttr.InjectSize
	probes := []probe{
		{"max_msg_size=max", func(h *fabric.Info) { h.EPAttr.MaxMsgSize = maxMsg },
			func(in *fabric.Info) bool { return in.EPAttr.MaxMsgSize >= maxMsg }, true},
		{"inject_size=max", func(h *fabric.Info) { h.TxAttr.InjectSize = inj },
			func(in *fabric.Info) bool { return in.TxAttr.InjectSize >= inj }, true},
		{"tx size", func(h *fabric.Info) { h.TxAttr.Size = base.TxAttr.Size },
			func(in *fabric.Info) bool { return in.TxAttr.Size >= base.TxAttr.Size }, true},
		{"rx size", func(h *fabric.Info) { h.RxAttr.Size = base.RxAttr.Size },
			func(in *fabric.Info) bool { return in.RxAttr.Size >= base.RxAttr.Size }, true},
		{"tx iov_limit", func(h *fabric.Info) { h.TxAttr.IOVLimit = base.TxAttr.IOVLimit },
			func(in *fabric.Info) bool { return in.TxAttr.IOVLimit >= base.TxAttr.IOVLimit }, true},
		{"threading=FI_THREAD_DOMAIN", func(h *fabric.Info) { h.DomainAttr.Threading = fabric.ThreadDomain },
			func(in *fabric.Info) bool { return in.DomainAttr.Threading != fabric.ThreadUnspec }, true},
		{"resource_mgmt=FI_RM_ENABLED", func(h *fabric.Info) { h.DomainAttr.ResourceMgmt = fabric.RMEnabled },
			func(in *fabric.Info) bool { return in.DomainAttr.ResourceMgmt == fabric.RMEnabled },
			base.DomainAttr.ResourceMgmt == fabric.RMEnabled},
		{"cq_data_size=4", func(h *fabric.Info) { h.DomainAttr.CQDataSize = 4 },
			func(in *fabric.Info) bool { return in.DomainAttr.CQDataSize >= 4 }, base.DomainAttr.CQDataSize >= 4},
	}
	if maxMsg < ^uint64(0) {
		probes = append(probes, probe{"max_msg_size=max+1", func(h *fabric.Info) { h.EPAttr.MaxMsgSize = maxMsg + 1 },
			nil, false})
	}
	if inj < ^uint64(0) {
		probes = append(probes, probe{"inject_size=max+1", func(h *fabric.Info) { h.TxAttr.InjectSize = inj + 1 },
			nil, false})
	}
	// The queue sizes a hint-less query reports are the provider's
	// defaults, which may be below the largest it grants (libfabric's tcp
	// reports 256 and grants up to 1024 tx, 65536 rx entries): one more is
	// either granted or ENODATA; a size no queue can have is ENODATA.
	maybe := []probe{
		{"tx size+1", func(h *fabric.Info) { h.TxAttr.Size = base.TxAttr.Size + 1 },
			func(in *fabric.Info) bool { return in.TxAttr.Size > base.TxAttr.Size }, true},
		{"rx size+1", func(h *fabric.Info) { h.RxAttr.Size = base.RxAttr.Size + 1 },
			func(in *fabric.Info) bool { return in.RxAttr.Size > base.RxAttr.Size }, true},
	}
	probes = append(probes,
		probe{"tx size=2^48", func(h *fabric.Info) { h.TxAttr.Size = 1 << 48 }, nil, false},
		probe{"rx size=2^48", func(h *fabric.Info) { h.RxAttr.Size = 1 << 48 }, nil, false})
	for _, p := range maybe {
		h := tg.hints(0)
		p.set(h)
		infos, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
		if errors.Is(err, fabric.ErrNoData) {
			continue
		}
		if err != nil {
			t.Errorf("%s: %v; want ENODATA or an info granting it", p.name, err)
		}
		for _, in := range infos {
			if !p.check(in) {
				t.Errorf("%s: returned info does not satisfy the hint: %s", p.name, fabric.InfoToString(in))
			}
		}
	}
	if base.DomainAttr.CQDataSize < 8 {
		probes = append(probes, probe{"cq_data_size=8", func(h *fabric.Info) { h.DomainAttr.CQDataSize = 8 }, nil, false})
	}
	for _, p := range probes {
		h := tg.hints(0)
		p.set(h)
		infos, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
		if !p.fits {
			if !errors.Is(err, fabric.ErrNoData) {
				t.Errorf("%s: a hint the provider cannot satisfy returned %v; want ENODATA", p.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		for _, in := range infos {
			if !p.check(in) {
				t.Errorf("%s: returned info does not satisfy the hint: %s", p.name, fabric.InfoToString(in))
			}
		}
	}
	// Operation flags: either ENODATA or echoed; FI_COMPLETION (needed
	// with selective completion) always, and FI_MULTI_RECV as a default
	// receive flag wherever FI_MULTI_RECV is claimed.
	for _, f := range []fabric.Flags{fabric.FlagCompletion, fabric.FlagInject, fabric.FlagDeliveryComplete,
		fabric.FlagTransmitComplete, fabric.FlagInjectComplete} {
		h := tg.hints(0)
		h.TxAttr.OpFlags = f
		infos := getInfoOK(t, "tx op_flags", tg.node(), "", fabric.FlagSource, h)
		if infos == nil && f == fabric.FlagCompletion {
			t.Errorf("tx op_flags FI_COMPLETION: ENODATA")
		}
		for _, in := range infos {
			if in.TxAttr.OpFlags != f {
				t.Errorf("tx op_flags hint %v returned %v", f, in.TxAttr.OpFlags)
			}
		}
	}
	for _, f := range []fabric.Flags{fabric.FlagCompletion, fabric.FlagMultiRecv} {
		h := tg.hints(0)
		h.RxAttr.OpFlags = f
		infos := getInfoOK(t, "rx op_flags", tg.node(), "", fabric.FlagSource, h)
		if infos == nil && (f == fabric.FlagCompletion || tg.claims(fabric.CapMultiRecv)) {
			t.Errorf("rx op_flags %v: ENODATA", f)
		}
		for _, in := range infos {
			if in.RxAttr.OpFlags != f {
				t.Errorf("rx op_flags hint %v returned %v", f, in.RxAttr.OpFlags)
			}
		}
	}
}

func getinfoAddrFormatSockaddrAndEpType(t *testing.T, tg Target) {
	base := tg.info(t, 0)
	if base.AddrFormat == fabric.SockAddrIn || base.AddrFormat == fabric.SockAddrIn6 {
		h := tg.hints(0)
		h.AddrFormat = fabric.SockAddr
		infos := getInfoOK(t, "FI_SOCKADDR", tg.node(), "", fabric.FlagSource, h)
		if infos == nil {
			t.Fatal("FI_SOCKADDR hint refused by an IP provider")
		}
		for _, in := range infos {
			if in.AddrFormat != fabric.SockAddrIn && in.AddrFormat != fabric.SockAddrIn6 && in.AddrFormat != fabric.SockAddr {
				t.Fatalf("FI_SOCKADDR hint returned format %v", in.AddrFormat)
			}
		}
	}
	for _, typ := range []fabric.EPType{fabric.EPMsg, fabric.EPDgram, fabric.EPRDM} {
		h := tg.hints(0)
		h.EPAttr.Type = typ
		for _, in := range getInfoOK(t, "ep type", "", "", 0, h) {
			if in.EPAttr.Type != typ {
				t.Fatalf("ep_attr.type hint %v returned %v", typ, in.EPAttr.Type)
			}
		}
	}
}

func getinfoCapsTxRxCoverRequestAndNullHints(t *testing.T, tg Target) {
	txCaps := fabric.CapMsg | fabric.CapTagged | fabric.CapRMA | fabric.CapAtomic | fabric.CapMulticast
	rxCaps := fabric.CapMsg | fabric.CapTagged | fabric.CapRMA | fabric.CapAtomic | fabric.CapDirectedRecv
	for _, want := range []fabric.Caps{fabric.CapMsg, fabric.CapMsg | fabric.CapTagged, fabric.CapMsg | fabric.CapRMA,
		fabric.CapMsg | fabric.CapDirectedRecv, fabric.CapTagged} {
		h := fabric.AllocInfo()
		h.Caps = want
		h.EPAttr.Type = tg.EPType
		h.FabricAttr.ProvName = tg.Provider
		for _, in := range getInfoOK(t, "caps", "", "", 0, h) {
			if in.TxAttr.Caps&want&txCaps != want&txCaps {
				t.Errorf("caps %v: tx caps %v lack the requested transmit caps", want, in.TxAttr.Caps)
			}
			if in.RxAttr.Caps&want&rxCaps != want&rxCaps {
				t.Errorf("caps %v: rx caps %v lack the requested receive caps", want, in.RxAttr.Caps)
			}
		}
	}
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.FabricAttr.ProvName != tg.Provider {
			continue
		}
		if in.TxAttr.Caps&^in.Caps != 0 || in.RxAttr.Caps&^in.Caps != 0 {
			t.Errorf("nil hints: tx/rx caps %v/%v not within %v", in.TxAttr.Caps, in.RxAttr.Caps, in.Caps)
		}
	}
}

func getinfoDomainCapsHonoured(t *testing.T, tg Target) {
	for _, c := range []fabric.Caps{fabric.CapLocalComm, fabric.CapRemoteComm, fabric.CapSharedAV,
		fabric.CapLocalComm | fabric.CapRemoteComm} {
		h := tg.hints(0)
		h.DomainAttr.Caps = c
		for _, in := range getInfoOK(t, "domain caps", "", "", 0, h) {
			if in.DomainAttr.Caps&c != c {
				t.Errorf("domain caps hint %v returned %v", c, in.DomainAttr.Caps)
			}
		}
		h = tg.hints(c)
		for _, in := range getInfoOK(t, "caps", "", "", 0, h) {
			if in.Caps&c != c {
				t.Errorf("caps hint %v returned %v", c, in.Caps)
			}
		}
	}
}

func getinfoMsgOrderSupersetOrENODATA(t *testing.T, tg Target) {
	bits := []fabric.Order{fabric.OrderRAR, fabric.OrderRAW, fabric.OrderRAS, fabric.OrderWAR, fabric.OrderWAW,
		fabric.OrderWAS, fabric.OrderSAR, fabric.OrderSAW, fabric.OrderSAS}
	for mask := 0; mask < 1<<len(bits); mask++ {
		var o fabric.Order
		for i, b := range bits {
			if mask&(1<<i) != 0 {
				o |= b
			}
		}
		h := tg.hints(0)
		h.TxAttr.MsgOrder = o
		h.RxAttr.MsgOrder = o
		for _, in := range getInfoOK(t, "msg_order", "", "", 0, h) {
			if in.TxAttr.MsgOrder&o != o || in.RxAttr.MsgOrder&o != o {
				t.Fatalf("msg_order %v returned tx %v rx %v", o, in.TxAttr.MsgOrder, in.RxAttr.MsgOrder)
			}
		}
	}
	// Ordering sizes of RMA providers: RAW/WAR/WAW ⇒ max_order_*_size > 0;
	// a hint above the supported size ⇒ ENODATA.
	h := tg.hints(fabric.CapRMA)
	for _, in := range getInfoOK(t, "rma", "", "", 0, h) {
		ep := in.EPAttr
		for _, c := range []struct {
			bit  fabric.Order
			size uint64
			set  func(h *fabric.Info, v uint64)
		}{
			{fabric.OrderRAW, ep.MaxOrderRAWSize, func(h *fabric.Info, v uint64) { h.EPAttr.MaxOrderRAWSize = v }},
			{fabric.OrderWAR, ep.MaxOrderWARSize, func(h *fabric.Info, v uint64) { h.EPAttr.MaxOrderWARSize = v }},
			{fabric.OrderWAW, ep.MaxOrderWAWSize, func(h *fabric.Info, v uint64) { h.EPAttr.MaxOrderWAWSize = v }},
		} {
			if in.TxAttr.MsgOrder&c.bit != 0 && c.size == 0 {
				t.Errorf("order %v returned with max_order size 0", c.bit)
			}
			if c.size == 0 || c.size == ^uint64(0) {
				continue
			}
			hh := tg.hints(fabric.CapRMA)
			c.set(hh, c.size+1)
			if _, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, hh); !errors.Is(err, fabric.ErrNoData) {
				t.Errorf("max_order size %d+1 for %v: %v; want ENODATA", c.size, c.bit, err)
			}
		}
		break
	}
}

func getinfoMrModeSubsetOrENODATA(t *testing.T, tg Target) {
	bits := []fabric.MRMode{fabric.MRLocal, fabric.MRRaw, fabric.MRVirtAddr, fabric.MRAllocated, fabric.MRProvKey,
		fabric.MRMMUNotify, fabric.MRRMAEvent, fabric.MREndpoint}
	for mask := 0; mask < 1<<len(bits); mask++ {
		var m fabric.MRMode
		for i, b := range bits {
			if mask&(1<<i) != 0 {
				m |= b
			}
		}
		h := tg.hints(0)
		h.DomainAttr.MRMode = m
		for _, in := range getInfoOK(t, "mr_mode", "", "", 0, h) {
			if in.DomainAttr.MRMode&^m != 0 {
				t.Fatalf("mr_mode hint %v returned %v (not a subset)", m, in.DomainAttr.MRMode)
			}
		}
	}
	for _, legacy := range []fabric.MRMode{fabric.MRBasic, fabric.MRScalable} {
		h := tg.hints(0)
		h.DomainAttr.MRMode = legacy
		for _, in := range getInfoOK(t, "legacy mr_mode", "", "", 0, h) {
			if in.DomainAttr.MRMode != legacy {
				t.Fatalf("legacy mr_mode %v returned %v", legacy, in.DomainAttr.MRMode)
			}
		}
	}
}

func getinfoMsgPrefixModeOffered(t *testing.T, tg Target) {
	h := tg.hints(0)
	h.Mode |= fabric.ModeMsgPrefix
	for _, in := range getInfoOK(t, "FI_MSG_PREFIX", "", "", 0, h) {
		if in.Mode&fabric.ModeMsgPrefix != 0 && in.EPAttr.MsgPrefixSize == 0 {
			t.Fatalf("FI_MSG_PREFIX required with msg_prefix_size 0")
		}
		if in.Mode&fabric.ModeMsgPrefix == 0 && in.EPAttr.MsgPrefixSize != 0 {
			t.Fatalf("msg_prefix_size %d without FI_MSG_PREFIX", in.EPAttr.MsgPrefixSize)
		}
	}
	// Without the mode bit the provider must still be usable.
	h = tg.hints(0)
	if infos := getInfoOK(t, "no FI_MSG_PREFIX", "", "", 0, h); infos == nil {
		t.Fatal("provider requires FI_MSG_PREFIX")
	}
}

func getinfoGetnameFitsControlMessage(t *testing.T, tg Target) {
	in := tg.info(t, 0)
	if len(in.SrcAddr) > 256 {
		t.Fatalf("src_addr of %d bytes exceeds FT_MAX_CTRL_MSG", len(in.SrcAddr))
	}
	e := tg.open(t, envOpts{})
	if len(e.addr) == 0 || len(e.addr) > 256 {
		t.Fatalf("fi_getname length %d; want 1..256", len(e.addr))
	}
	d := fabric.Dup(in)
	if d == in || !bytes.Equal(d.SrcAddr, in.SrcAddr) || d.EPAttr == in.EPAttr || d.DomainAttr == in.DomainAttr ||
		d.FabricAttr == in.FabricAttr || d.TxAttr == in.TxAttr || d.RxAttr == in.RxAttr {
		t.Fatal("fi_dupinfo shares attribute structures")
	}
}

// isLoopback4 reports whether b is a sockaddr_in for 127.0.0.1.
func isLoopback4(f fabric.AddrFormat, b []byte) bool {
	return f == fabric.SockAddrIn && len(b) >= 8 && bytes.Equal(b[4:8], []byte{127, 0, 0, 1})
}

// getInfoOK returns GetInfo's result, failing on any error but ErrNoData
// (reported as nil).
func getInfoOK(t *testing.T, what, node, service string, flags fabric.Flags, h *fabric.Info) []*fabric.Info {
	t.Helper()
	infos, err := fabric.GetInfo(fabric.APIVersion, node, service, flags, h)
	if errors.Is(err, fabric.ErrNoData) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: GetInfo: %v", what, err)
	}
	if len(infos) == 0 {
		t.Fatalf("%s: GetInfo returned no infos and no error", what)
	}
	return infos
}

// ---- FI_BUFFERED_RECV, total_buffered_recv ----

func getinfoBufferedRecvModeOnlyWhenAsked(t *testing.T, tg Target) {
	bufRecvOffered(t, tg, 0)
	infos, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, tg.hints(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Mode&fabric.ModeBufferedRecv != 0 {
			t.Fatalf("FI_BUFFERED_RECV returned to hints without it: mode %v", in.Mode)
		}
	}
	h := tg.hints(0)
	h.Mode |= fabric.ModeBufferedRecv
	infos, err = fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Mode&fabric.ModeBufferedRecv == 0 {
			t.Fatalf("an Info without FI_BUFFERED_RECV: mode %v", in.Mode)
		}
		if in.RxAttr.TotalBufferedRecv == 0 {
			t.Fatal("FI_BUFFERED_RECV offered with total_buffered_recv 0")
		}
	}
}

func getinfoTotalBufferedRecvTruthful(t *testing.T, tg Target) {
	bufRecvOffered(t, tg, 0)
	total := tg.info(t, 0).RxAttr.TotalBufferedRecv
	if total == 0 {
		t.Fatal("total_buffered_recv 0 from a provider that buffers received messages")
	}
	// A smaller hint is accepted and does not change what the endpoint
	// buffers, so the value returned stays the provider's.
	h := tg.hints(0)
	h.RxAttr.TotalBufferedRecv = total / 2
	infos, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
	if err != nil {
		t.Fatalf("total_buffered_recv hint %d: %v", total/2, err)
	}
	if got := infos[0].RxAttr.TotalBufferedRecv; got != total {
		t.Fatalf("total_buffered_recv %d with a hint of %d, want the provider's %d", got, total/2, total)
	}
	h.RxAttr.TotalBufferedRecv = total + 1
	_, err = fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
	isErr(t, "total_buffered_recv beyond the provider's", err, fabric.ErrNoData)
}
