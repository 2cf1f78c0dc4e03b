package hints

import (
	"errors"
	"testing"

	"github.com/gofabric/fabric/provider"
)

func TestProvFilter(t *testing.T) {
	cases := []struct {
		value string
		set   bool
		name  string
		excl  bool
	}{
		{"", false, "udp", false},
		{"", true, "udp", true},
		{"udp", true, "udp", false},
		{"udp", true, "UDP", false},
		{"udp", true, "tcp", true},
		{"tcp,udp", true, "udp", false},
		{"tcp, udp", true, "udp", true}, // not trimmed
		{"^udp", true, "udp", true},
		{"^udp", true, "tcp", false},
		{"^udp,tcp", true, "tcp", true},
		{"^", true, "tcp", false},
	}
	for _, c := range cases {
		if got := ParseProvFilter(c.value, c.set).Excludes(c.name); got != c.excl {
			t.Errorf("FI_PROVIDER=%q (set %v) excludes %q = %v, want %v", c.value, c.set, c.name, got, c.excl)
		}
	}
}

func TestFirstProvName(t *testing.T) {
	for in, want := range map[string]string{"tcp": "tcp", "tcp;ofi_rxm": "tcp", "": "", ";x": ""} {
		if got := FirstProvName(in); got != want {
			t.Errorf("FirstProvName(%q) = %q", in, got)
		}
	}
}

func TestFormatAddr(t *testing.T) {
	in4 := []byte{2, 0, 0x24, 0x0c, 192, 168, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0}
	in6 := make([]byte, 28)
	in6[0] = 10
	in6[2], in6[3] = 0x1f, 0x90
	in6[8], in6[9], in6[23] = 0xfe, 0x80, 1
	cases := []struct {
		f    provider.AddrFormat
		b    []byte
		want string
		ok   bool
	}{
		{provider.SockAddrIn, in4, "fi_sockaddr_in://192.168.1.2:9228", true},
		{provider.SockAddr, in4, "fi_sockaddr_in://192.168.1.2:9228", true},
		{provider.SockAddrIn6, in6, "fi_sockaddr_in6://[fe80::1]:8080", true},
		{provider.SockAddr, in6, "fi_sockaddr_in6://[fe80::1]:8080", true},
		{provider.SockAddr, []byte{7, 0, 0, 0}, "", false},
		{provider.SockAddr, nil, "", false},
		{provider.SockAddrIn, in4[:7], "", false},
		{provider.SockAddrIn6, in6[:20], "", false},
		{provider.AddrStr, []byte("fi_ns://h:1"), "fi_ns://h:1", true},
		{provider.AddrPSMX2, []byte{1, 2}, "", false},
	}
	for _, c := range cases {
		got, ok := FormatAddr(c.f, c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("FormatAddr(%v, %x) = %q, %v; want %q, %v", c.f, c.b, got, ok, c.want, c.ok)
		}
	}
}

func TestAddrFormatOK(t *testing.T) {
	cases := []struct {
		prov, user provider.AddrFormat
		ok         bool
	}{
		{provider.SockAddrIn, provider.FormatUnspec, true},
		{provider.FormatUnspec, provider.AddrStr, true},
		{provider.SockAddrIn, provider.SockAddr, true},
		{provider.SockAddrIn6, provider.SockAddr, true},
		{provider.SockAddrIn, provider.SockAddrIn, true},
		{provider.SockAddrIn, provider.SockAddrIn6, false},
		{provider.SockAddrIn6, provider.SockAddrIn, false},
		{provider.SockAddr, provider.SockAddrIn6, true},
		{provider.SockAddr, provider.SockAddrIB, false},
		{provider.SockAddrIB, provider.SockAddrIn, true},
		{provider.AddrStr, provider.AddrStr, true},
		{provider.AddrStr, provider.SockAddr, false},
	}
	for _, c := range cases {
		if got := AddrFormatOK(c.prov, c.user); got != c.ok {
			t.Errorf("AddrFormatOK(prov %v, user %v) = %v", c.prov, c.user, got)
		}
	}
}

func testInfo() *provider.Info {
	i := &provider.Info{Caps: provider.CapMsg | provider.CapRMA | provider.CapSend | provider.CapRecv |
		provider.CapRead | provider.CapWrite | provider.CapRemoteRead | provider.CapRemoteWrite}
	Normalize(i)
	i.TxAttr.Caps = i.Caps
	i.RxAttr.Caps = i.Caps
	i.DomainAttr.MRMode = provider.MRLocal | provider.MRVirtAddr
	return i
}

func TestCheckMismatch(t *testing.T) {
	err := Check(provider.Version(1, 17), testInfo(), &provider.Info{Caps: provider.CapTagged})
	var m *Mismatch
	if !errors.As(err, &m) || m.Field != "caps" || !errors.Is(err, provider.ENODATA) {
		t.Fatalf("err = %v", err)
	}
	if Check(provider.Version(1, 17), testInfo(), nil) != nil {
		t.Fatal("nil hints must match")
	}
}

// Before API 1.5 mr_mode hints are FI_MR_BASIC/FI_MR_SCALABLE only, and a
// provider that needs FI_MR_LOCAL requires the FI_LOCAL_MR mode.
func TestLegacyMRMode(t *testing.T) {
	v14 := provider.Version(1, 4)
	prov := testInfo()
	prov.DomainAttr.MRMode = provider.MRBasic | provider.MRLocal
	user := &provider.Info{Mode: provider.ModeLocalMR, DomainAttr: &provider.DomainAttr{MRMode: provider.MRBasic}}
	if err := Check(v14, prov, user); err != nil {
		t.Fatalf("basic: %v", err)
	}
	info := testInfo()
	info.DomainAttr.MRMode = provider.MRBasic | provider.MRLocal
	Alter(v14, info, user)
	if info.DomainAttr.MRMode != provider.MRBasic || info.Mode&provider.ModeLocalMR == 0 {
		t.Fatalf("altered mr_mode %v mode %v", info.DomainAttr.MRMode, info.Mode)
	}
	user.Mode = 0
	if Check(v14, prov, user) == nil {
		t.Fatal("FI_LOCAL_MR required but not offered")
	}
	user = &provider.Info{Mode: provider.ModeLocalMR, DomainAttr: &provider.DomainAttr{MRMode: provider.MRScalable}}
	if Check(v14, prov, user) == nil {
		t.Fatal("scalable requested from a basic provider")
	}
	user.DomainAttr.MRMode = provider.MRLocal
	if Check(v14, prov, user) == nil {
		t.Fatal("1.4 accepts only legacy modes")
	}
}

// Remote access is dropped from the capabilities when the application's
// mr_mode lacks what the provider needs for RMA targets.
func TestInfoCapsRMATargetTrim(t *testing.T) {
	v := provider.Version(1, 17)
	prov := testInfo()
	user := &provider.Info{DomainAttr: &provider.DomainAttr{MRMode: provider.MRLocal}}
	// Zero caps in the hints: FI_RMA without direction modifiers is an RMA
	// target, but check uses the hint caps, so this passes Check.
	if err := Check(v, prov, user); err != nil {
		t.Fatal(err)
	}
	info := testInfo()
	Alter(v, info, user)
	if info.Caps&(provider.CapRemoteRead|provider.CapRemoteWrite) != 0 {
		t.Fatalf("caps %v keep remote access without FI_MR_VIRT_ADDR", info.Caps)
	}
	if info.DomainAttr.MRMode != provider.MRLocal {
		t.Fatalf("mr_mode %v", info.DomainAttr.MRMode)
	}
	user.DomainAttr.MRMode |= provider.MRVirtAddr
	info = testInfo()
	Alter(v, info, user)
	if info.Caps&provider.CapRemoteWrite == 0 || info.DomainAttr.MRMode != provider.MRLocal|provider.MRVirtAddr {
		t.Fatalf("caps %v mr_mode %v", info.Caps, info.DomainAttr.MRMode)
	}
}

func TestNormalize(t *testing.T) {
	var i provider.Info
	Normalize(&i)
	if i.TxAttr == nil || i.RxAttr == nil || i.EPAttr == nil || i.DomainAttr == nil || i.FabricAttr == nil {
		t.Fatal("nil attribute left")
	}
	tx := i.TxAttr
	Normalize(&i)
	if i.TxAttr != tx {
		t.Fatal("Normalize replaced an existing attribute")
	}
}

// Default operation flags: FI_COMPLETION is always accepted, FI_MULTI_RECV
// on receives only when the provider claims FI_MULTI_RECV, other flags only
// when the provider lists them.
func TestOpFlagsAccepted(t *testing.T) {
	v := provider.Version(1, 17)
	check := func(prov *provider.Info, tx, rx provider.Flags) error {
		u := &provider.Info{TxAttr: &provider.TxAttr{OpFlags: tx}, RxAttr: &provider.RxAttr{OpFlags: rx}}
		return Check(v, prov, u)
	}
	prov := testInfo()
	if err := check(prov, provider.FlagCompletion, provider.FlagCompletion); err != nil {
		t.Fatalf("FI_COMPLETION refused: %v", err)
	}
	if err := check(prov, 0, provider.FlagMultiRecv); !errors.Is(err, provider.ENODATA) {
		t.Fatalf("FI_MULTI_RECV without the capability: %v", err)
	}
	if err := check(prov, provider.FlagInject, 0); !errors.Is(err, provider.ENODATA) {
		t.Fatalf("unlisted FI_INJECT: %v", err)
	}
	prov.Caps |= provider.CapMultiRecv
	prov.RxAttr.Caps |= provider.CapMultiRecv
	prov.TxAttr.OpFlags = provider.FlagInject
	if err := check(prov, provider.FlagInject, provider.FlagMultiRecv|provider.FlagCompletion); err != nil {
		t.Fatalf("listed and generic flags refused: %v", err)
	}
}
