package fabric

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gofabric/fabric/provider"
)

var infoV = Version(1, 17)

// infoIsolate enables the fake providers and restricts GetInfo to them.
func infoIsolate(t *testing.T) {
	t.Helper()
	infoFakeEnable(t)
	t.Setenv("FI_PROVIDER", infoFakeA+","+infoFakeB)
}

func infoProvs(infos []*Info) []string {
	var out []string
	for _, i := range infos {
		out = append(out, i.FabricAttr.ProvName)
	}
	return out
}

func infoByProv(infos []*Info, name string) []*Info {
	var out []*Info
	for _, i := range infos {
		if i.FabricAttr.ProvName == name {
			out = append(out, i)
		}
	}
	return out
}

func infoWantNoData(t *testing.T, infos []*Info, err error) {
	t.Helper()
	if !errors.Is(err, ErrNoData) {
		t.Fatalf("err = %v, want ErrNoData (infos from %v)", err, infoProvs(infos))
	}
	if infos != nil {
		t.Fatalf("infos = %v, want nil with ENODATA", infoProvs(infos))
	}
	var oe *OpError
	if !errors.As(err, &oe) || oe.Op != "fi_getinfo" {
		t.Fatalf("err = %#v, want *OpError{Op: fi_getinfo}", err)
	}
}

func infoMust(t *testing.T, version uint32, node, service string, flags Flags, hints *Info) []*Info {
	t.Helper()
	infos, err := GetInfo(version, node, service, flags, hints)
	if err != nil {
		t.Fatalf("GetInfo(%q, %q, %v): %v", node, service, flags, err)
	}
	for _, i := range infos {
		if i.TxAttr == nil || i.RxAttr == nil || i.EPAttr == nil || i.DomainAttr == nil || i.FabricAttr == nil {
			t.Fatalf("info of %s has a nil attribute structure", i.FabricAttr.ProvName)
		}
	}
	return infos
}

// Checklist 1: nil hints return every configuration, with src_addr set and
// api_version = requested version; provider name and version filled in.
func TestGetInfoNoHints(t *testing.T) {
	infoIsolate(t)
	for _, v := range []uint32{Version(1, 0), Version(1, 5), infoV} {
		infos := infoMust(t, v, "", "", 0, nil)
		if got := infoProvs(infos); !slices.Equal(got, []string{infoFakeA, infoFakeA, infoFakeB}) {
			t.Fatalf("providers = %v", got)
		}
		for _, i := range infos {
			if len(i.SrcAddr) == 0 {
				t.Errorf("%s: no src_addr", i.FabricAttr.ProvName)
			}
			if i.FabricAttr.APIVersion != v {
				t.Errorf("api_version = %#x, want %#x", i.FabricAttr.APIVersion, v)
			}
		}
		if infos[0].FabricAttr.ProvVersion != Version(3, 1) || infos[2].FabricAttr.ProvVersion != Version(2, 0) {
			t.Errorf("prov_version = %#x, %#x", infos[0].FabricAttr.ProvVersion, infos[2].FabricAttr.ProvVersion)
		}
		// Nil hints: the provider's own description, optional mode included.
		if infos[0].Mode != ModeBufferedRecv || infos[2].Mode != ModeContext {
			t.Errorf("modes = %v, %v", infos[0].Mode, infos[2].Mode)
		}
		if infos[2].DomainAttr.MRMode != MRLocal|MRVirtAddr|MRAllocated|MRProvKey {
			t.Errorf("b mr_mode = %v", infos[2].DomainAttr.MRMode)
		}
	}
}

func TestGetInfoVersions(t *testing.T) {
	infoIsolate(t)
	for _, v := range []uint32{Version(1, 18), Version(2, 0), Version(0, 9), 0} {
		infos, err := GetInfo(v, "", "", 0, nil)
		if !errors.Is(err, ErrNoSys) || infos != nil {
			t.Errorf("version %#x: %v, %d infos; want ErrNoSys", v, err, len(infos))
		}
	}
	infos := infoMust(t, Version(1, 5), "", "", 0, &Info{Caps: CapMsg})
	for _, i := range infos {
		if i.FabricAttr.APIVersion != Version(1, 5) {
			t.Errorf("api_version = %#x", i.FabricAttr.APIVersion)
		}
	}
}

// Checklist 2 and 3: node/service semantics, FI_SOURCE, FI_NUMERICHOST.
func TestGetInfoNodeService(t *testing.T) {
	infoIsolate(t)
	lo := func(port uint16) []byte { return infoSockaddrIn([4]byte{127, 0, 0, 1}, port) }

	// Without FI_SOURCE node+service name the destination; infotest-b does
	// not resolve addresses, so its infos are dropped.
	infos := infoMust(t, infoV, "127.0.0.1", "9228", 0, nil)
	if got := infoProvs(infos); !slices.Equal(got, []string{infoFakeA, infoFakeA}) {
		t.Fatalf("providers = %v", got)
	}
	for _, i := range infos {
		if !slices.Equal(i.DestAddr, lo(9228)) || len(i.SrcAddr) == 0 {
			t.Errorf("dest %x src %x", i.DestAddr, i.SrcAddr)
		}
	}
	// FI_SOURCE: node, service, or both name the source.
	for _, c := range []struct {
		node, service string
		want          []byte
	}{{"127.0.0.1", "", lo(0)}, {"", "7000", lo(7000)}, {"127.0.0.2", "7001", infoSockaddrIn([4]byte{127, 0, 0, 2}, 7001)}} {
		// (infotest-b keeps its own source address: the root cannot
		// check how a provider resolved node and service, only that it
		// returned the address that was asked for.)
		infos := infoByProv(infoMust(t, infoV, c.node, c.service, FlagSource, nil), infoFakeA)
		if len(infos) != 2 {
			t.Fatalf("%q:%q: %d infos of %s", c.node, c.service, len(infos), infoFakeA)
		}
		for _, i := range infos {
			if !slices.Equal(i.SrcAddr, c.want) || i.DestAddr != nil {
				t.Errorf("%q:%q src %x dest %x", c.node, c.service, i.SrcAddr, i.DestAddr)
			}
		}
	}
	// FI_SOURCE needs a node or a service.
	infos, err := GetInfo(infoV, "", "", FlagSource, nil)
	infoWantNoData(t, infos, err)
	// Unresolvable node.
	infos, err = GetInfo(infoV, "g00n13s", "", 0, nil)
	infoWantNoData(t, infos, err)
	// FI_NUMERICHOST: a name is not looked up.
	infoMust(t, infoV, "localhost", "", 0, nil)
	infos, err = GetInfo(infoV, "localhost", "", FlagNumericHost, nil)
	infoWantNoData(t, infos, err)
	infoMust(t, infoV, "127.0.0.1", "", FlagNumericHost, nil)
}

// Checklist 4: unknown names give ENODATA; prov_name selects providers.
func TestGetInfoNames(t *testing.T) {
	infoIsolate(t)
	cases := []struct {
		name  string
		hints *Info
		want  []string // nil: ENODATA
	}{
		{"prov a", &Info{FabricAttr: &FabricAttr{ProvName: infoFakeA}}, []string{infoFakeA, infoFakeA}},
		{"prov case", &Info{Mode: ModeContext, FabricAttr: &FabricAttr{ProvName: "INFOTEST-B"}}, []string{infoFakeB}},
		{"prov layered", &Info{FabricAttr: &FabricAttr{ProvName: "infotest-a;ofi_rxm"}}, []string{infoFakeA, infoFakeA}},
		{"prov unknown", &Info{FabricAttr: &FabricAttr{ProvName: "nosuchprov"}}, nil},
		{"prov util only", &Info{FabricAttr: &FabricAttr{ProvName: "ofi_rxm"}}, nil},
		{"domain", &Info{DomainAttr: &DomainAttr{Name: "A0", MRMode: ^MRMode(0) &^ (MRBasic | MRScalable)}}, []string{infoFakeA, infoFakeA}},
		{"domain unknown", &Info{DomainAttr: &DomainAttr{Name: "nosuchdomain"}}, nil},
		{"fabric", &Info{Mode: ModeContext, FabricAttr: &FabricAttr{Name: "shmfab"}}, []string{infoFakeB}},
		{"fabric unknown", &Info{FabricAttr: &FabricAttr{Name: "nosuchfabric"}}, nil},
		{"prov_version too new", &Info{FabricAttr: &FabricAttr{ProvName: infoFakeA, ProvVersion: Version(3, 2)}}, nil},
		{"prov_version ok", &Info{FabricAttr: &FabricAttr{ProvName: infoFakeA, ProvVersion: Version(3, 1)}}, []string{infoFakeA, infoFakeA}},
		// A hint copied from a result obtained with an older version.
		{"api_version old", &Info{FabricAttr: &FabricAttr{ProvName: infoFakeA, APIVersion: Version(1, 5)}}, []string{infoFakeA, infoFakeA}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			infos, err := GetInfo(infoV, "", "", 0, c.hints)
			if c.want == nil {
				infoWantNoData(t, infos, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := infoProvs(infos); !slices.Equal(got, c.want) {
				t.Fatalf("providers = %v, want %v", got, c.want)
			}
		})
	}
}

func TestGetInfoProviderEnv(t *testing.T) {
	infoFakeEnable(t)
	hints := func() *Info { return &Info{Mode: ^Mode(0)} }
	cases := []struct {
		env  string
		want []string // fake providers present; nil: none of them
	}{
		{infoFakeA, []string{infoFakeA}},
		{"INFOTEST-B", []string{infoFakeB}},
		{"infotest-b,infotest-a", []string{infoFakeA, infoFakeB}},
		{"^" + infoFakeA, []string{infoFakeB}},
		{"^infotest-a,infotest-b", nil},
		{" infotest-a", nil}, // not trimmed, as in libfabric
		{"", nil},            // set but empty: no provider
	}
	for _, c := range cases {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv("FI_PROVIDER", c.env)
			infos, _ := GetInfo(infoV, "", "", 0, hints())
			var got []string
			for _, name := range []string{infoFakeA, infoFakeB} {
				if len(infoByProv(infos, name)) > 0 {
					got = append(got, name)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("FI_PROVIDER=%q: fake providers %v, want %v", c.env, got, c.want)
			}
		})
	}
	// FI_PROVIDER combines with prov_name: both must admit the provider.
	t.Setenv("FI_PROVIDER", infoFakeA)
	infos, err := GetInfo(infoV, "", "", 0, &Info{Mode: ^Mode(0), FabricAttr: &FabricAttr{ProvName: infoFakeB}})
	infoWantNoData(t, infos, err)
	// FI_PROV_ATTR_ONLY lists every registered provider regardless.
	infos = infoMust(t, infoV, "", "", FlagProvAttrOnly, &Info{FabricAttr: &FabricAttr{ProvName: infoFakeB}})
	var seen []string
	for _, i := range infos {
		if strings.HasPrefix(i.FabricAttr.ProvName, "infotest") {
			seen = append(seen, i.FabricAttr.ProvName)
			if i.FabricAttr.APIVersion != infoV || i.EPAttr.Type != EPUnspec || i.Caps != 0 {
				t.Errorf("prov attr only info: %+v %+v", i.FabricAttr, i.EPAttr)
			}
		}
	}
	if !slices.Equal(seen, []string{infoFakeA, infoFakeB}) {
		t.Errorf("FI_PROV_ATTR_ONLY listed %v", seen)
	}
}

// manPrimary is the man page's list of primary capabilities (without the
// primary modifiers).
var manPrimary = []Caps{CapMsg, CapRMA, CapTagged, CapAtomic, CapMulticast, CapCollective, CapNamedRxCtx,
	CapDirectedRecv, CapVariableMsg, CapHMEM}

const infoTxPrimary = CapMsg | CapRMA | CapTagged | CapAtomic | CapMulticast | CapNamedRxCtx
const infoRxPrimary = CapMsg | CapRMA | CapTagged | CapAtomic | CapDirectedRecv | CapVariableMsg

// Checklist 5 and 6: for every subset S of the primary capabilities, either
// ENODATA or caps ⊇ S, no primary caps outside S, tx/rx caps ⊇ S∩tx/rx and
// ⊆ caps; and ENODATA exactly when no configuration supports S.
func TestGetInfoCapsSubsets(t *testing.T) {
	infoIsolate(t)
	var allPrimary Caps
	for _, c := range manPrimary {
		allPrimary |= c
	}
	templates := map[string][]*Info{infoFakeA: infoFakeATemplates(), infoFakeB: {infoFakeBTemplate}}
	for n := 0; n < 1<<len(manPrimary); n++ {
		var s Caps
		for i, c := range manPrimary {
			if n&(1<<i) != 0 {
				s |= c
			}
		}
		hints := &Info{Caps: s, Mode: ^Mode(0), DomainAttr: &DomainAttr{MRMode: ^MRMode(0) &^ (MRBasic | MRScalable)}}
		infos, err := GetInfo(infoV, "", "", 0, hints)
		wantN := 0
		for _, ts := range templates {
			for _, ti := range ts {
				if s&^ti.Caps == 0 && s&infoTxPrimary&^ti.TxAttr.Caps == 0 && s&infoRxPrimary&^ti.RxAttr.Caps == 0 {
					wantN++
				}
			}
		}
		if wantN == 0 {
			if !errors.Is(err, ErrNoData) {
				t.Fatalf("caps %v: err %v with %d infos, want ENODATA", s, err, len(infos))
			}
			continue
		}
		if err != nil || len(infos) != wantN {
			t.Fatalf("caps %v: %d infos, err %v; want %d", s, len(infos), err, wantN)
		}
		for _, i := range infos {
			if i.Caps&s != s {
				t.Errorf("caps %v: info caps %v lack some", s, i.Caps)
			}
			if extra := i.Caps & allPrimary &^ s; s != 0 && extra != 0 {
				t.Errorf("caps %v: extra primary caps %v", s, extra)
			}
			if i.TxAttr.Caps&(s&infoTxPrimary) != s&infoTxPrimary || i.RxAttr.Caps&(s&infoRxPrimary) != s&infoRxPrimary {
				t.Errorf("caps %v: tx %v rx %v", s, i.TxAttr.Caps, i.RxAttr.Caps)
			}
			if i.TxAttr.Caps&^i.Caps != 0 || i.RxAttr.Caps&^i.Caps != 0 {
				t.Errorf("caps %v: tx %v / rx %v not within %v", s, i.TxAttr.Caps, i.RxAttr.Caps, i.Caps)
			}
			if s&(CapMsg|CapTagged) != 0 && i.Caps&(CapSend|CapRecv) != CapSend|CapRecv {
				t.Errorf("caps %v: direction modifiers missing: %v", s, i.Caps)
			}
		}
	}
}

func TestGetInfoCapsModifiersAndSecondary(t *testing.T) {
	infoIsolate(t)
	hints := &Info{Caps: CapMsg | CapSend, FabricAttr: &FabricAttr{ProvName: infoFakeA}}
	for _, i := range infoMust(t, infoV, "", "", 0, hints) {
		// Send-only: FI_RECV is not added; secondary caps stay.
		if i.Caps&CapRecv != 0 || i.Caps&CapSend == 0 {
			t.Errorf("caps %v", i.Caps)
		}
		if i.Caps&CapLocalComm == 0 {
			t.Errorf("secondary FI_LOCAL_COMM dropped: %v", i.Caps)
		}
		if i.RxAttr.Caps&CapRecv != 0 {
			t.Errorf("rx caps %v exceed info caps %v", i.RxAttr.Caps, i.Caps)
		}
	}
	// Receive-only: FI_SEND is not added to the transmit side either.
	hints = &Info{Caps: CapMsg | CapRecv, FabricAttr: &FabricAttr{ProvName: infoFakeA}}
	for _, i := range infoMust(t, infoV, "", "", 0, hints) {
		if i.Caps&CapSend != 0 || i.TxAttr.Caps&^i.Caps != 0 {
			t.Errorf("recv-only: caps %v tx %v", i.Caps, i.TxAttr.Caps)
		}
	}
	// A secondary capability that is requested must be supported.
	hints = &Info{Caps: CapMsg | CapSource, Mode: ModeContext}
	infos := infoMust(t, infoV, "", "", 0, hints)
	if got := infoProvs(infos); !slices.Equal(got, []string{infoFakeA}) {
		t.Errorf("FI_SOURCE: %v", got)
	}
	// tx/rx caps hints must be supported by those attributes.
	hints = &Info{Caps: CapMsg, TxAttr: &TxAttr{Caps: CapMsg | CapRecv}, FabricAttr: &FabricAttr{ProvName: infoFakeA}}
	infos, err := GetInfo(infoV, "", "", 0, hints)
	infoWantNoData(t, infos, err)
}

// Checklist 7: domain caps.
func TestGetInfoDomainCaps(t *testing.T) {
	infoIsolate(t)
	mr := ^MRMode(0) &^ (MRBasic | MRScalable)
	for _, c := range []struct {
		caps Caps
		want []string
	}{
		{CapLocalComm, []string{infoFakeA, infoFakeA}},
		{CapLocalComm | CapRemoteComm, []string{infoFakeA, infoFakeA}},
		{CapSharedAV, nil},
	} {
		infos, err := GetInfo(infoV, "", "", 0, &Info{Caps: CapMsg, Mode: ^Mode(0),
			DomainAttr: &DomainAttr{Caps: c.caps, MRMode: mr}})
		if c.want == nil {
			infoWantNoData(t, infos, err)
			continue
		}
		if got := infoProvs(infos); err != nil || !slices.Equal(got, c.want) {
			t.Fatalf("domain caps %v: %v %v", c.caps, got, err)
		}
		for _, i := range infos {
			if i.DomainAttr.Caps&c.caps != c.caps {
				t.Errorf("domain caps %v lack %v", i.DomainAttr.Caps, c.caps)
			}
		}
	}
}

// Checklist 5: mode == 0 means no mode supported; optional modes are
// dropped by the provider; required modes exclude the provider.
func TestGetInfoMode(t *testing.T) {
	infoIsolate(t)
	infos := infoMust(t, infoV, "", "", 0, &Info{})
	if got := infoProvs(infos); !slices.Equal(got, []string{infoFakeA, infoFakeA}) {
		t.Fatalf("mode 0: %v", got)
	}
	for _, i := range infos {
		if i.Mode != 0 {
			t.Errorf("mode 0 hints returned mode %v", i.Mode)
		}
	}
	infos = infoMust(t, infoV, "", "", 0, &Info{Mode: ModeContext | ModeBufferedRecv,
		DomainAttr: &DomainAttr{MRMode: MRLocal | MRVirtAddr | MRAllocated | MRProvKey}})
	if got := infoProvs(infos); !slices.Equal(got, []string{infoFakeA, infoFakeA, infoFakeB}) {
		t.Fatalf("modes offered: %v", got)
	}
	if infos[0].Mode != ModeBufferedRecv || infos[2].Mode != ModeContext {
		t.Errorf("modes %v %v", infos[0].Mode, infos[2].Mode)
	}
	// tx/rx attr modes fall back to the info mode.
	infos, err := GetInfo(infoV, "", "", 0, &Info{Mode: ModeContext2, TxAttr: &TxAttr{Mode: ModeContext},
		FabricAttr: &FabricAttr{ProvName: infoFakeB}})
	infoWantNoData(t, infos, err)
}

// Checklist 8: re-querying with a result's caps plus the common modes succeeds.
func TestGetInfoRequery(t *testing.T) {
	infoIsolate(t)
	for _, base := range infoMust(t, infoV, "", "", 0, nil) {
		caps := base.Caps
		if base.FabricAttr.ProvName == infoFakeB {
			caps &^= CapDirectedRecv // claimed, but not supported (see infotest-b)
		}
		hints := &Info{Caps: caps, Mode: ModeContext,
			EPAttr:     &EPAttr{Type: base.EPAttr.Type},
			DomainAttr: &DomainAttr{MRMode: MRLocal | MRAllocated | MRProvKey | MRVirtAddr},
			FabricAttr: &FabricAttr{ProvName: base.FabricAttr.ProvName}}
		infos := infoMust(t, infoV, "", "", 0, hints)
		if len(infos) == 0 {
			t.Errorf("re-query of %s %v found nothing", base.FabricAttr.ProvName, base.EPAttr.Type)
		}
	}
}

// Checklist 9: returned msg_order ⊇ requested for every subset, or ENODATA.
func TestGetInfoMsgOrder(t *testing.T) {
	infoIsolate(t)
	orderBits := []Order{OrderRAR, OrderRAW, OrderRAS, OrderWAR, OrderWAW, OrderWAS, OrderSAR, OrderSAW, OrderSAS}
	for n := 0; n < 1<<len(orderBits); n++ {
		var o Order
		for i, b := range orderBits {
			if n&(1<<i) != 0 {
				o |= b
			}
		}
		for _, side := range []string{"tx", "rx", "both"} {
			hints := &Info{Caps: CapMsg, FabricAttr: &FabricAttr{ProvName: infoFakeA}}
			if side != "rx" {
				hints.TxAttr = &TxAttr{MsgOrder: o}
			}
			if side != "tx" {
				hints.RxAttr = &RxAttr{MsgOrder: o}
			}
			infos, err := GetInfo(infoV, "", "", 0, hints)
			if o&^infoFakeAOrder != 0 {
				infoWantNoData(t, infos, err)
				continue
			}
			if err != nil {
				t.Fatalf("order %v (%s): %v", o, side, err)
			}
			for _, i := range infos {
				if i.TxAttr.MsgOrder&o != o || i.RxAttr.MsgOrder&o != o {
					t.Errorf("order %v: tx %v rx %v", o, i.TxAttr.MsgOrder, i.RxAttr.MsgOrder)
				}
			}
		}
	}
	// max_order sizes: larger than supported → ENODATA; else echoed.
	hints := &Info{Caps: CapRMA, EPAttr: &EPAttr{MaxOrderRAWSize: 8192}, FabricAttr: &FabricAttr{ProvName: infoFakeA}}
	infos, err := GetInfo(infoV, "", "", 0, hints)
	infoWantNoData(t, infos, err)
	hints.EPAttr.MaxOrderRAWSize = 1024
	for _, i := range infoMust(t, infoV, "", "", 0, hints) {
		if i.EPAttr.MaxOrderRAWSize != 1024 {
			t.Errorf("max_order_raw_size = %d", i.EPAttr.MaxOrderRAWSize)
		}
	}
}

// Checklist 10: returned mr_mode ⊆ requested mr_mode for every combination;
// FI_MR_BASIC/FI_MR_SCALABLE requests come back as requested or ENODATA.
func TestGetInfoMRMode(t *testing.T) {
	infoIsolate(t)
	modeBits := []MRMode{MRLocal, MRRaw, MRVirtAddr, MRAllocated, MRProvKey, MRMMUNotify, MRRMAEvent, MREndpoint}
	// With RMA, infotest-b needs all its mr_mode bits; with FI_MSG only,
	// the bits that concern RMA targets (FI_MR_VIRT_ADDR, FI_MR_PROV_KEY)
	// are not needed and must not be returned unless requested.
	for caps, bNeeds := range map[Caps]MRMode{
		CapMsg | CapRMA: infoFakeBTemplate.DomainAttr.MRMode,
		CapMsg:          MRLocal | MRAllocated,
	} {
		for n := 0; n < 1<<len(modeBits); n++ {
			var m MRMode
			for i, b := range modeBits {
				if n&(1<<i) != 0 {
					m |= b
				}
			}
			hints := &Info{Caps: caps, Mode: ^Mode(0), DomainAttr: &DomainAttr{MRMode: m}}
			infos, err := GetInfo(infoV, "", "", 0, hints)
			if err != nil {
				t.Fatalf("mr_mode %v: %v", m, err) // infotest-a needs no mr_mode
			}
			for _, i := range infos {
				if i.DomainAttr.MRMode&^m != 0 {
					t.Errorf("caps %v mr_mode %v: returned %v", caps, m, i.DomainAttr.MRMode)
				}
			}
			gotB := len(infoByProv(infos, infoFakeB)) > 0
			if wantB := m&bNeeds == bNeeds; gotB != wantB {
				t.Errorf("caps %v mr_mode %v: infotest-b returned %v, want %v", caps, m, gotB, wantB)
			}
		}
	}
	for _, legacy := range []MRMode{MRBasic, MRScalable} {
		infos, err := GetInfo(infoV, "", "", 0, &Info{Caps: CapMsg, Mode: ^Mode(0), DomainAttr: &DomainAttr{MRMode: legacy}})
		if err != nil {
			infoWantNoData(t, infos, err)
			continue
		}
		for _, i := range infos {
			if i.DomainAttr.MRMode != legacy {
				t.Errorf("legacy %v: returned %v", legacy, i.DomainAttr.MRMode)
			}
		}
	}
	// FI_MR_BASIC combined with other bits is invalid.
	infos, err := GetInfo(infoV, "", "", 0, &Info{Caps: CapMsg, DomainAttr: &DomainAttr{MRMode: MRBasic | MRLocal}})
	infoWantNoData(t, infos, err)
}

// Checklist 11: progress hints are echoed, or ENODATA.
func TestGetInfoProgress(t *testing.T) {
	infoIsolate(t)
	mr := MRLocal | MRVirtAddr | MRAllocated | MRProvKey
	for _, c := range []struct {
		p    Progress
		want []string
	}{
		{ProgressManual, []string{infoFakeA, infoFakeA, infoFakeB}},
		{ProgressAuto, []string{infoFakeA, infoFakeA}},
	} {
		for _, ctrl := range []bool{false, true} {
			d := &DomainAttr{MRMode: mr}
			if ctrl {
				d.ControlProgress = c.p
			} else {
				d.DataProgress = c.p
			}
			infos := infoMust(t, infoV, "", "", 0, &Info{Mode: ModeContext, DomainAttr: d})
			if got := infoProvs(infos); !slices.Equal(got, c.want) {
				t.Fatalf("progress %v (control %v): %v", c.p, ctrl, got)
			}
			for _, i := range infos {
				got := i.DomainAttr.DataProgress
				if ctrl {
					got = i.DomainAttr.ControlProgress
				}
				if got != c.p {
					t.Errorf("progress %v (control %v): returned %v", c.p, ctrl, got)
				}
			}
		}
	}
}

// Checklist 12: individual hints are honoured.
func TestGetInfoAttrHints(t *testing.T) {
	infoIsolate(t)
	mr := MRLocal | MRVirtAddr | MRAllocated | MRProvKey
	base := func() *Info {
		return &Info{Mode: ModeContext, DomainAttr: &DomainAttr{MRMode: mr}}
	}
	type tc struct {
		name  string
		set   func(h *Info)
		want  []string
		check func(t *testing.T, i *Info)
	}
	cases := []tc{
		{"ep rdm", func(h *Info) { h.EPAttr = &EPAttr{Type: EPRDM} }, []string{infoFakeA, infoFakeB}, nil},
		{"ep msg", func(h *Info) { h.EPAttr = &EPAttr{Type: EPMsg} }, []string{infoFakeA}, nil},
		{"ep dgram", func(h *Info) { h.EPAttr = &EPAttr{Type: EPDgram} }, nil, nil},
		{"addr sockaddr", func(h *Info) { h.AddrFormat = SockAddr }, []string{infoFakeA, infoFakeA, infoFakeB}, nil},
		{"addr in", func(h *Info) { h.AddrFormat = SockAddrIn }, []string{infoFakeA, infoFakeA}, nil},
		{"addr in6", func(h *Info) { h.AddrFormat = SockAddrIn6 }, []string{infoFakeB}, nil},
		{"addr str", func(h *Info) { h.AddrFormat = AddrStr }, nil, nil},
		{"max_msg_size", func(h *Info) { h.EPAttr = &EPAttr{MaxMsgSize: 1 << 30} }, []string{infoFakeA, infoFakeA}, nil},
		{"protocol", func(h *Info) { h.EPAttr = &EPAttr{Protocol: provider.ProtoSHM} }, []string{infoFakeB}, nil},
		{"inject_size", func(h *Info) { h.TxAttr = &TxAttr{InjectSize: 48} }, []string{infoFakeA, infoFakeA},
			func(t *testing.T, i *Info) {
				if i.TxAttr.InjectSize != 48 {
					t.Errorf("inject_size %d", i.TxAttr.InjectSize)
				}
			}},
		{"tx size", func(h *Info) { h.TxAttr = &TxAttr{Size: 512}; h.RxAttr = &RxAttr{Size: 2048} }, nil, nil},
		{"tx size ok", func(h *Info) { h.TxAttr = &TxAttr{Size: 100, IOVLimit: 1}; h.RxAttr = &RxAttr{Size: 64} },
			[]string{infoFakeA, infoFakeA, infoFakeB}, func(t *testing.T, i *Info) {
				if i.TxAttr.Size != 100 || i.RxAttr.Size != 64 || i.TxAttr.IOVLimit != 1 {
					t.Errorf("sizes %d %d %d", i.TxAttr.Size, i.RxAttr.Size, i.TxAttr.IOVLimit)
				}
			}},
		{"iov limit", func(h *Info) { h.TxAttr = &TxAttr{IOVLimit: 5} }, nil, nil},
		{"rma iov limit", func(h *Info) { h.TxAttr = &TxAttr{RMAIOVLimit: 2} }, []string{infoFakeA, infoFakeA}, nil},
		{"tx op_flags", func(h *Info) { h.TxAttr = &TxAttr{OpFlags: FlagDeliveryComplete | FlagInject} },
			[]string{infoFakeA, infoFakeA}, func(t *testing.T, i *Info) {
				if i.TxAttr.OpFlags != FlagDeliveryComplete|FlagInject {
					t.Errorf("op_flags %v", i.TxAttr.OpFlags)
				}
			}},
		{"rx op_flags", func(h *Info) { h.RxAttr = &RxAttr{OpFlags: FlagMultiRecv} }, []string{infoFakeA, infoFakeA}, nil},
		{"tx op_flags unsupported", func(h *Info) { h.TxAttr = &TxAttr{OpFlags: FlagMatchComplete} }, nil, nil},
		{"threading domain", func(h *Info) { h.DomainAttr.Threading = ThreadDomain },
			[]string{infoFakeA, infoFakeA, infoFakeB}, func(t *testing.T, i *Info) {
				if i.DomainAttr.Threading != ThreadDomain {
					t.Errorf("threading %v", i.DomainAttr.Threading)
				}
			}},
		{"threading safe", func(h *Info) { h.DomainAttr.Threading = ThreadSafe }, []string{infoFakeA, infoFakeA}, nil},
		{"threading bogus", func(h *Info) { h.DomainAttr.Threading = 99 }, nil, nil},
		{"rm enabled", func(h *Info) { h.DomainAttr.ResourceMgmt = RMEnabled }, []string{infoFakeA, infoFakeA, infoFakeB}, nil},
		{"rm disabled", func(h *Info) { h.DomainAttr.ResourceMgmt = RMDisabled }, []string{infoFakeA, infoFakeA, infoFakeB}, nil},
		{"av_type", func(h *Info) { h.DomainAttr.AVType = AVTable }, []string{infoFakeA, infoFakeA, infoFakeB},
			func(t *testing.T, i *Info) {
				if i.DomainAttr.AVType != AVTable {
					t.Errorf("av_type %v", i.DomainAttr.AVType)
				}
			}},
		{"cq_data_size 4", func(h *Info) { h.DomainAttr.CQDataSize = 4 }, []string{infoFakeA, infoFakeA, infoFakeB}, nil},
		{"cq_data_size 8", func(h *Info) { h.DomainAttr.CQDataSize = 8 }, []string{infoFakeA, infoFakeA}, nil},
		{"cntr_cnt", func(h *Info) { h.DomainAttr.CntrCnt = 1 }, []string{infoFakeA, infoFakeA}, nil},
		{"shared rx ctx", func(h *Info) { h.EPAttr = &EPAttr{RxCtxCnt: SharedContext} }, []string{infoFakeA, infoFakeA}, nil},
		{"shared tx ctx", func(h *Info) { h.EPAttr = &EPAttr{TxCtxCnt: SharedContext} }, nil, nil},
		{"tx ctx 2", func(h *Info) { h.EPAttr = &EPAttr{TxCtxCnt: 2} }, nil, nil},
		{"auth key", func(h *Info) { h.EPAttr = &EPAttr{AuthKey: []byte{1}} }, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := base()
			c.set(h)
			infos, err := GetInfo(infoV, "", "", 0, h)
			if c.want == nil {
				infoWantNoData(t, infos, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := infoProvs(infos); !slices.Equal(got, c.want) {
				t.Fatalf("providers %v, want %v", got, c.want)
			}
			if c.check != nil {
				for _, i := range infos {
					c.check(t, i)
				}
			}
		})
	}
}

// Checklist 13: hints.Handle is copied to every returned Info.
func TestGetInfoHandle(t *testing.T) {
	infoIsolate(t)
	type pep struct{ x int }
	h := &pep{1}
	for _, i := range infoMust(t, infoV, "", "", 0, &Info{Handle: h, Mode: ^Mode(0)}) {
		if i.Handle != any(h) {
			t.Errorf("handle %v", i.Handle)
		}
	}
}

// Returned Infos are fresh copies; the caller's hints are not modified even
// by a provider that writes to the hints it receives.
func TestGetInfoCopies(t *testing.T) {
	infoIsolate(t)
	hints := &Info{Caps: CapMsg, Mode: ModeContext, DomainAttr: &DomainAttr{Name: "b0",
		MRMode: MRLocal | MRVirtAddr | MRAllocated | MRProvKey}}
	keep := hints.Dup()
	infos := infoMust(t, infoV, "", "", 0, hints)
	if got := infoProvs(infos); !slices.Equal(got, []string{infoFakeB}) {
		t.Fatalf("providers %v", got)
	}
	if hints.Caps != keep.Caps || hints.Mode != keep.Mode || hints.DomainAttr.Name != "b0" {
		t.Fatalf("hints modified: %+v %+v", hints, hints.DomainAttr)
	}
	// The returned info was narrowed (caps) and the template was not.
	if infos[0].Caps&CapTagged != 0 || infoFakeBTemplate.Caps&CapTagged == 0 {
		t.Fatalf("caps %v, template %v", infos[0].Caps, infoFakeBTemplate.Caps)
	}
	infos[0].SrcAddr[0] = 0xff
	infos[0].DomainAttr.Name = "changed"
	infos[0].TxAttr.Size = 1
	again := infoMust(t, infoV, "", "", 0, hints)
	if again[0].SrcAddr[0] == 0xff || again[0].DomainAttr.Name != "b0" || again[0].TxAttr.Size != 128 {
		t.Fatal("a returned Info shares memory with the provider or a previous result")
	}
	// Each call returns distinct structures.
	a1 := infoMust(t, infoV, "", "", 0, nil)
	a2 := infoMust(t, infoV, "", "", 0, nil)
	if a1[0] == a2[0] || a1[0].TxAttr == a2[0].TxAttr {
		t.Fatal("GetInfo returned shared Infos")
	}
}

func TestDupAllocInfo(t *testing.T) {
	a := AllocInfo()
	if a.TxAttr == nil || a.RxAttr == nil || a.EPAttr == nil || a.DomainAttr == nil || a.FabricAttr == nil {
		t.Fatal("AllocInfo left nil attributes")
	}
	if *a.TxAttr != (TxAttr{}) || a.Caps != 0 || a.DomainAttr.Name != "" {
		t.Fatal("AllocInfo not zero")
	}
	d := Dup(nil)
	if d == nil || d.FabricAttr == nil {
		t.Fatal("Dup(nil) is not an allocated Info")
	}
	orig := infoFakeATemplates()[0]
	orig.DestAddr = infoSockaddrIn([4]byte{10, 0, 0, 1}, 5)
	orig.EPAttr.AuthKey = []byte{1, 2, 3}
	orig.DomainAttr.AuthKey = []byte{4, 5}
	orig.Handle = &struct{}{}
	c := Dup(orig)
	if InfoToString(c) != InfoToString(orig) {
		t.Fatal("Dup differs from the original")
	}
	c.SrcAddr[4] = 9
	c.DestAddr[4] = 9
	c.EPAttr.AuthKey[0] = 9
	c.DomainAttr.AuthKey[0] = 9
	c.TxAttr.Size = 9
	c.RxAttr.Size = 9
	c.EPAttr.Type = EPDgram
	c.DomainAttr.Name = "x"
	c.FabricAttr.Name = "x"
	if orig.SrcAddr[4] != 127 || orig.DestAddr[4] != 10 || orig.EPAttr.AuthKey[0] != 1 || orig.DomainAttr.AuthKey[0] != 4 ||
		orig.TxAttr.Size != 1024 || orig.RxAttr.Size != 1024 || orig.EPAttr.Type != EPRDM ||
		orig.DomainAttr.Name != "a0" || orig.FabricAttr.Name != "127.0.0.1/32" {
		t.Fatal("Dup is not deep")
	}
	if c.Handle != orig.Handle {
		t.Fatal("Dup must keep the handle")
	}
}

func TestEnvVars(t *testing.T) {
	vars := EnvVars()
	// The core variables, in the order libfabric 1.17's fi_info -e lists them.
	core := []string{"FI_LOG_LEVEL", "FI_LOG_PROV", "FI_LOG_SUBSYS", "FI_PROVIDER"}
	if len(vars) < len(core) {
		t.Fatalf("core variables: %+v", vars)
	}
	for i, name := range core {
		if v := vars[i]; v.Name != name || v.Type != ParamString || v.Provider != "" || v.Help == "" {
			t.Fatalf("core variable %d: %+v, want %s", i, v, name)
		}
	}
	var found bool
	for _, v := range vars {
		if v.Name == "FI_INFOTEST_A_IFACE" {
			found = true
			if v.Help != "infotest-a: Specify interface name" || v.Provider != infoFakeA {
				t.Errorf("provider variable %+v", v)
			}
		}
	}
	if !found {
		t.Fatal("provider variables missing")
	}
	t.Setenv("FI_PROVIDER", "udp")
	if val, ok := vars[3].Value(); !ok || val != "udp" {
		t.Fatalf("Value = %q, %v", val, ok)
	}
}

// InfoToString reproduces fi_tostr(FI_TYPE_INFO) of libfabric 1.17; the
// expected text is the C library's output for the same values.
func TestInfoToString(t *testing.T) {
	info := &Info{
		Caps:       CapMsg | CapMulticast | CapRecv | CapSend | CapLocalComm | CapSource | CapAVUserID,
		AddrFormat: SockAddrIn,
		SrcAddr:    infoSockaddrIn([4]byte{127, 0, 0, 1}, 0),
		TxAttr: &TxAttr{Caps: CapMsg | CapMulticast | CapSend, CompOrder: provider.CompOrderStrict,
			InjectSize: 1472, Size: 1024, IOVLimit: 4, OpFlags: FlagInject | FlagMsg},
		RxAttr: &RxAttr{Caps: CapMsg | CapRecv | CapSource, CompOrder: provider.CompOrderStrict, Size: 1024, IOVLimit: 4,
			MsgOrder: OrderSAS | OrderRAR},
		EPAttr: &EPAttr{Type: EPDgram, Protocol: provider.ProtoUDP, MaxMsgSize: 1472, TxCtxCnt: 1, RxCtxCnt: 1},
		DomainAttr: &DomainAttr{Name: "lo", Threading: ThreadSafe, ControlProgress: ProgressAuto,
			DataProgress: ProgressAuto, ResourceMgmt: RMEnabled, MRKeySize: 8, CQCnt: 256, EPCnt: 256,
			TxCtxCnt: 256, RxCtxCnt: 256, MaxEPTxCtx: 1, MaxEPRxCtx: 1, Caps: CapLocalComm | CapRemoteComm,
			MRMode: MRVirtAddr | MRLocal},
		FabricAttr: &FabricAttr{Name: "127.0.0.1/32", ProvName: "udp", ProvVersion: Version(117, 0), APIVersion: infoV},
	}
	want := `fi_info:
    caps: [ FI_MSG, FI_MULTICAST, FI_RECV, FI_SEND, FI_LOCAL_COMM, FI_SOURCE ]
    mode: [  ]
    addr_format: FI_SOCKADDR_IN
    src_addrlen: 16
    dest_addrlen: 0
    src_addr: fi_sockaddr_in://127.0.0.1:0
    dest_addr: (null)
    handle: (nil)
    fi_tx_attr:
        caps: [ FI_MSG, FI_MULTICAST, FI_SEND ]
        mode: [  ]
        op_flags: [ FI_INJECT ]
        msg_order: [  ]
        comp_order: [ FI_ORDER_STRICT ]
        inject_size: 1472
        size: 1024
        iov_limit: 4
        rma_iov_limit: 0
        tclass: 0x0
    fi_rx_attr:
        caps: [ FI_MSG, FI_RECV, FI_SOURCE ]
        mode: [  ]
        op_flags: [  ]
        msg_order: [ FI_ORDER_RAR, FI_ORDER_SAS ]
        comp_order: [ FI_ORDER_STRICT ]
        total_buffered_recv: 0
        size: 1024
        iov_limit: 4
    fi_ep_attr:
        type: FI_EP_DGRAM
        protocol: FI_PROTO_UDP
        protocol_version: 0
        max_msg_size: 1472
        msg_prefix_size: 0
        max_order_raw_size: 0
        max_order_war_size: 0
        max_order_waw_size: 0
        mem_tag_format: 0x0000000000000000
        tx_ctx_cnt: 1
        rx_ctx_cnt: 1
        auth_key_size: 0
    fi_domain_attr:
        domain: 0x0
        name: lo
        threading: FI_THREAD_SAFE
        control_progress: FI_PROGRESS_AUTO
        data_progress: FI_PROGRESS_AUTO
        resource_mgmt: FI_RM_ENABLED
        av_type: FI_AV_UNSPEC
        mr_mode: [ FI_MR_LOCAL, FI_MR_VIRT_ADDR ]
        mr_key_size: 8
        cq_data_size: 0
        cq_cnt: 256
        ep_cnt: 256
        tx_ctx_cnt: 256
        rx_ctx_cnt: 256
        max_ep_tx_ctx: 1
        max_ep_rx_ctx: 1
        max_ep_stx_ctx: 0
        max_ep_srx_ctx: 0
        cntr_cnt: 0
        mr_iov_limit: 0
        caps: [ FI_LOCAL_COMM, FI_REMOTE_COMM ]
        mode: [  ]
        auth_key_size: 0
        max_err_data: 0
        mr_cnt: 0
        tclass: 0x0
    fi_fabric_attr:
        name: 127.0.0.1/32
        prov_name: udp
        prov_version: 117.0
        api_version: 1.17
    nic: (nil)
`
	if got := InfoToString(info); got != want {
		t.Fatalf("InfoToString mismatch:\n%s", infoDiff(got, want))
	}

	// The zero Info prints like fi_tostr of fi_allocinfo().
	z := InfoToString(&Info{})
	for _, line := range []string{"    src_addr: (null)\n", "        comp_order: [ FI_ORDER_NONE ]\n",
		"        name: (null)\n", "        prov_version: 0.0\n", "        type: FI_EP_UNSPEC\n",
		"        resource_mgmt: FI_RM_UNSPEC\n"} {
		if !strings.Contains(z, line) {
			t.Errorf("zero info lacks %q", line)
		}
	}
	if InfoToString(nil) != "" {
		t.Error("nil info")
	}
	if n := strings.Count(z, "\n"); n != strings.Count(want, "\n") {
		t.Errorf("zero info has %d lines, want %d", n, strings.Count(want, "\n"))
	}

	// Unknown enumerations, partial completion order, traffic class,
	// IPv6, string addresses, a handle.
	odd := &Info{AddrFormat: SockAddrIn6, SrcAddr: infoSockaddrIn6([16]byte{15: 1}, 80),
		DestAddr: infoSockaddrIn6([16]byte{10: 0xff, 11: 0xff, 12: 10, 15: 1}, 9),
		Handle:   &struct{}{},
		TxAttr:   &TxAttr{CompOrder: 1, TClass: TCDSCPSet(5)},
		EPAttr:   &EPAttr{Type: 99, Protocol: 17}, DomainAttr: &DomainAttr{ResourceMgmt: 7, TClass: 0x203}}
	s := InfoToString(odd)
	for _, line := range []string{
		"    src_addr: fi_sockaddr_in6://[::1]:80\n",
		"    dest_addr: fi_sockaddr_in6://[::ffff:10.0.0.1]:9\n",
		"        comp_order: [  ]\n", "        tclass: 0x105\n", "        tclass: 0x203\n",
		"        type: Unknown\n", "        protocol: Unknown\n", "        resource_mgmt: Unknown\n",
	} {
		if !strings.Contains(s, line) {
			t.Errorf("missing %q in\n%s", line, s)
		}
	}
	if strings.Contains(s, "handle: (nil)") || !strings.Contains(s, "handle: 0x") {
		t.Error("handle not printed as a pointer")
	}
	str := InfoToString(&Info{AddrFormat: AddrStr, SrcAddr: []byte("fi_shm://1234\x00junk"), DestAddr: []byte{}})
	if !strings.Contains(str, "    src_addr: fi_shm://1234\n") || !strings.Contains(str, "    src_addrlen: 18\n") ||
		!strings.Contains(str, "    dest_addr: \n") {
		t.Errorf("FI_ADDR_STR:\n%s", str)
	}
	gen := InfoToString(&Info{AddrFormat: SockAddr, SrcAddr: infoSockaddrIn([4]byte{10, 1, 2, 3}, 65535)})
	if !strings.Contains(gen, "    src_addr: fi_sockaddr_in://10.1.2.3:65535\n") {
		t.Errorf("FI_SOCKADDR:\n%s", gen)
	}
	// Short, hostile address bytes print nothing and do not panic.
	bad := InfoToString(&Info{AddrFormat: SockAddrIn6, SrcAddr: []byte{10, 0, 1}})
	if !strings.Contains(bad, "    src_addr: \n") {
		t.Errorf("short address:\n%s", bad)
	}
}

// infoDiff returns the first differing lines of two texts.
func infoDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "(equal)"
}

// GetInfo may be called from several goroutines at once (fi_getinfo(3)
// NOTES).
func TestGetInfoConcurrent(t *testing.T) {
	infoIsolate(t)
	want := InfoToString(infoMust(t, infoV, "", "", 0, &Info{Caps: CapMsg})[0])
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 50; i++ {
				infos, err := GetInfo(infoV, "", "", 0, &Info{Caps: CapMsg})
				if err == nil && InfoToString(infos[0]) != want {
					err = errors.New("results differ between goroutines")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestGetInfoProvider: the one named provider answers, FI_PROVIDER does not
// apply, and hints naming another provider match nothing.
func TestGetInfoProvider(t *testing.T) {
	infoFakeEnable(t)
	t.Setenv("FI_PROVIDER", infoFakeA) // excludes B for GetInfo, not for GetInfoProvider
	infos, err := GetInfoProvider(infoFakeB, infoV, "", "", 0, nil)
	if err != nil || len(infos) == 0 {
		t.Fatalf("GetInfoProvider(%s) = %v, %v", infoFakeB, infos, err)
	}
	for _, p := range infoProvs(infos) {
		if p != infoFakeB {
			t.Errorf("GetInfoProvider(%s) returned an Info of %s", infoFakeB, p)
		}
	}
	if infos, err := GetInfo(infoV, "", "", 0, &Info{Mode: ^Mode(0), FabricAttr: &FabricAttr{ProvName: infoFakeB}}); err == nil {
		t.Fatalf("GetInfo ignored FI_PROVIDER: %v", infoProvs(infos))
	}
	infos, err = GetInfoProvider(infoFakeB, infoV, "", "", 0, &Info{Mode: ^Mode(0), FabricAttr: &FabricAttr{ProvName: infoFakeA}})
	infoWantNoData(t, infos, err)
	if _, err := GetInfoProvider("", infoV, "", "", 0, nil); !errors.Is(err, ErrInval) {
		t.Errorf("GetInfoProvider(\"\") = %v, want ErrInval", err)
	}
}
