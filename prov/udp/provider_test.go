package udp

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/gofabric/fabric/provider"
)

func TestRegistered(t *testing.T) {
	p, ok := provider.Lookup("udp")
	if !ok {
		t.Fatal("udp not registered")
	}
	if p.Name() != "udp" || p.Version() != 117<<16 {
		t.Fatalf("name %q version %#x", p.Name(), p.Version())
	}
	if _, ok := p.(provider.AddrHandler); !ok {
		t.Fatal("not an AddrHandler")
	}
	params := p.(provider.ParamLister).Params()
	if len(params) != 1 || params[0].Name != "FI_UDP_IFACE" || params[0].Type != provider.ParamString {
		t.Fatalf("params %+v", params)
	}
}

// The attributes mirror `FI_UDP_IFACE=lo fi_info -p udp -t FI_EP_DGRAM -v`
// of libfabric 1.17.
func TestGetInfoLoopback(t *testing.T) {
	t.Setenv(envIface, "lo")
	infos, err := udpProvider{}.GetInfo(provider.APIVersion, "", "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 {
		t.Fatalf("%d infos, want 2 (127.0.0.1, ::1)", len(infos))
	}
	v4, v6 := infos[0], infos[1]
	for _, c := range []struct {
		info         *provider.Info
		fmt          provider.AddrFormat
		src, fab     string
		srcLen, dlen int
	}{
		{v4, provider.SockAddrIn, "fi_sockaddr_in://127.0.0.1:0", "127.0.0.1/32", 16, 0},
		{v6, provider.SockAddrIn6, "fi_sockaddr_in6://[::1]:0", "::1/128", 28, 0},
	} {
		i := c.info
		if i.AddrFormat != c.fmt || formatSockaddr(i.SrcAddr) != c.src || len(i.SrcAddr) != c.srcLen ||
			i.DestAddr != nil {
			t.Errorf("addressing: %v %q dest %v", i.AddrFormat, formatSockaddr(i.SrcAddr), i.DestAddr)
		}
		if i.FabricAttr.Name != c.fab || i.DomainAttr.Name != "lo" || i.FabricAttr.ProvName != "udp" ||
			i.FabricAttr.ProvVersion != provider.Version(117, 0) {
			t.Errorf("names: fabric %q domain %q prov %q", i.FabricAttr.Name, i.DomainAttr.Name, i.FabricAttr.ProvName)
		}
		if i.Caps&provider.CapRemoteComm != 0 || i.Caps&provider.CapLocalComm == 0 {
			t.Errorf("loopback caps %v: want FI_LOCAL_COMM only", i.Caps)
		}
		want := provider.CapMsg | provider.CapSend | provider.CapRecv | provider.CapSource
		if i.Caps&want != want || i.Caps&(provider.CapMulticast|provider.CapTagged|provider.CapRMA) != 0 {
			t.Errorf("caps %v", i.Caps)
		}
		if i.Mode != 0 {
			t.Errorf("mode %v", i.Mode)
		}
		tx, rx, ep, d := i.TxAttr, i.RxAttr, i.EPAttr, i.DomainAttr
		if tx.Caps != provider.CapMsg|provider.CapSend|provider.CapNamedRxCtx || tx.CompOrder != provider.CompOrderStrict ||
			tx.InjectSize != 1472 || tx.Size != 1024 || tx.IOVLimit != 4 || tx.RMAIOVLimit != 0 || tx.MsgOrder != 0 {
			t.Errorf("tx_attr %+v", tx)
		}
		if rx.Caps&(provider.CapMsg|provider.CapRecv|provider.CapSource) != provider.CapMsg|provider.CapRecv|provider.CapSource ||
			rx.CompOrder != provider.CompOrderStrict || rx.Size != 1024 || rx.IOVLimit != 4 {
			t.Errorf("rx_attr %+v", rx)
		}
		if ep.Type != provider.EPDgram || ep.Protocol != provider.ProtoUDP || ep.MaxMsgSize != 1472 ||
			ep.TxCtxCnt != 1 || ep.RxCtxCnt != 1 || ep.MemTagFormat != 0 {
			t.Errorf("ep_attr %+v", ep)
		}
		if d.Threading != provider.ThreadSafe || d.ControlProgress != provider.ProgressAuto ||
			d.DataProgress != provider.ProgressManual || d.ResourceMgmt != provider.RMEnabled ||
			d.MRMode != 0 || d.MRKeySize != 8 || d.CQDataSize != 0 || d.CQCnt != 256 || d.EPCnt != 256 ||
			d.CntrCnt != 0 || d.MaxEPTxCtx != MaxEPCtx || d.MaxEPRxCtx != MaxEPCtx ||
			d.Caps != provider.CapLocalComm|provider.CapRemoteComm {
			t.Errorf("domain_attr %+v", d)
		}
	}
}

func TestGetInfoInterfaces(t *testing.T) {
	t.Setenv(envIface, "")
	infos, err := udpProvider{}.GetInfo(provider.APIVersion, "", "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(infos)
	if n < 2 || formatSockaddr(infos[n-2].SrcAddr) != "fi_sockaddr_in://127.0.0.1:0" {
		t.Fatalf("loopback not last: %d infos", n)
	}
	for _, i := range infos[:n-2] {
		if i.Caps&provider.CapRemoteComm == 0 {
			t.Errorf("%s lacks FI_REMOTE_COMM", formatSockaddr(i.SrcAddr))
		}
		a := mustAddrPort(t, i.SrcAddr)
		pfx, err := netip.ParsePrefix(i.FabricAttr.Name)
		if err != nil || !pfx.Contains(a.Addr()) || a.Port() != 0 || i.DomainAttr.Name == "" {
			t.Errorf("%s: fabric %q domain %q", formatSockaddr(i.SrcAddr), i.FabricAttr.Name, i.DomainAttr.Name)
		}
	}
	// An unknown FI_UDP_IFACE filters nothing, as in libfabric.
	t.Setenv(envIface, "nosuchif0")
	if all, _ := (udpProvider{}).GetInfo(provider.APIVersion, "", "", 0, nil); len(all) != n {
		t.Fatalf("unknown interface: %d infos, want %d", len(all), n)
	}
}

func TestGetInfoHints(t *testing.T) {
	t.Setenv(envIface, "lo")
	p := udpProvider{}
	get := func(node, service string, flags provider.Flags, h *provider.Info) ([]*provider.Info, error) {
		return p.GetInfo(provider.APIVersion, node, service, flags, h)
	}
	infos, err := get("", "", 0, &provider.Info{AddrFormat: provider.SockAddrIn6})
	if err != nil || len(infos) != 1 || infos[0].AddrFormat != provider.SockAddrIn6 {
		t.Fatalf("FI_SOCKADDR_IN6 hint: %v %v", infos, err)
	}
	for _, h := range []*provider.Info{
		{AddrFormat: provider.AddrStr},
		{EPAttr: &provider.EPAttr{Type: provider.EPRDM}},
		{EPAttr: &provider.EPAttr{Type: provider.EPMsg}},
	} {
		if _, err := get("", "", 0, h); !errors.Is(err, provider.ENODATA) {
			t.Errorf("hints %+v: %v, want ENODATA", h, err)
		}
	}
	auto, _ := get("", "", 0, &provider.Info{DomainAttr: &provider.DomainAttr{DataProgress: provider.ProgressAuto}})
	if auto[0].DomainAttr.DataProgress != provider.ProgressAuto {
		t.Fatal("AUTO hint not honoured")
	}
	man, _ := get("", "", 0, &provider.Info{DomainAttr: &provider.DomainAttr{ControlProgress: provider.ProgressManual}})
	if man[0].DomainAttr.ControlProgress != provider.ProgressManual || man[0].DomainAttr.DataProgress != provider.ProgressManual {
		t.Fatal("MANUAL control hint not honoured")
	}

	// node/service name the destination; the source is the local address
	// towards it, port 0; the names are the interface's.
	infos, err = get("127.0.0.1", "9999", 0, nil)
	if err != nil || len(infos) != 1 {
		t.Fatal(infos, err)
	}
	i := infos[0]
	if formatSockaddr(i.DestAddr) != "fi_sockaddr_in://127.0.0.1:9999" ||
		formatSockaddr(i.SrcAddr) != "fi_sockaddr_in://127.0.0.1:0" || i.AddrFormat != provider.SockAddrIn ||
		i.FabricAttr.Name != "127.0.0.1/32" || i.DomainAttr.Name != "lo" || i.Caps&provider.CapRemoteComm == 0 {
		t.Fatalf("node+service: src %s dest %s fabric %s domain %s", formatSockaddr(i.SrcAddr),
			formatSockaddr(i.DestAddr), i.FabricAttr.Name, i.DomainAttr.Name)
	}
	// Service alone: the loopback destination, ::1 first as glibc's
	// getaddrinfo orders it.
	infos, _ = get("", "9999", 0, nil)
	if formatSockaddr(infos[0].DestAddr) != "fi_sockaddr_in6://[::1]:9999" {
		t.Fatalf("service only: %s", formatSockaddr(infos[0].DestAddr))
	}
	infos, _ = get("", "9999", 0, &provider.Info{AddrFormat: provider.SockAddrIn})
	if formatSockaddr(infos[0].DestAddr) != "fi_sockaddr_in://127.0.0.1:9999" {
		t.Fatalf("service only, IPv4: %s", formatSockaddr(infos[0].DestAddr))
	}
	// FI_SOURCE: node/service name the source.
	infos, err = get("127.0.0.1", "9999", provider.FlagSource, nil)
	if err != nil || formatSockaddr(infos[0].SrcAddr) != "fi_sockaddr_in://127.0.0.1:9999" || infos[0].DestAddr != nil ||
		infos[0].DomainAttr.Name != "lo" {
		t.Fatalf("FI_SOURCE: %v %v", infos, err)
	}
	infos, _ = get("", "9999", provider.FlagSource, nil)
	if formatSockaddr(infos[0].SrcAddr) != "fi_sockaddr_in://0.0.0.0:9999" || infos[0].FabricAttr.Name != "UDP-IP" ||
		infos[0].DomainAttr.Name != "udp" {
		t.Fatalf("FI_SOURCE wildcard: %s %s %s", formatSockaddr(infos[0].SrcAddr), infos[0].FabricAttr.Name,
			infos[0].DomainAttr.Name)
	}
	infos, _ = get("::1", "", provider.FlagSource, nil)
	if formatSockaddr(infos[0].SrcAddr) != "fi_sockaddr_in6://[::1]:0" || infos[0].AddrFormat != provider.SockAddrIn6 {
		t.Fatalf("FI_SOURCE ::1: %s", formatSockaddr(infos[0].SrcAddr))
	}
	if _, err := get("", "", provider.FlagSource, nil); !errors.Is(err, provider.EINVAL) {
		t.Fatalf("FI_SOURCE without node or service: %v", err)
	}
	if _, err := get("g00n13s", "", provider.FlagNumericHost, nil); !errors.Is(err, provider.ENODATA) {
		t.Fatalf("non-numeric host with FI_NUMERICHOST: %v", err)
	}
	if _, err := get("127.0.0.1", "not-a-service-name", provider.FlagNumericHost, nil); !errors.Is(err, provider.ENODATA) {
		t.Fatalf("bad service: %v", err)
	}
	if _, err := get("::1", "", 0, &provider.Info{AddrFormat: provider.SockAddrIn}); !errors.Is(err, provider.ENODATA) {
		t.Fatalf("IPv6 node with FI_SOCKADDR_IN: %v", err)
	}
	// Hint addresses.
	src := appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("127.0.0.1:4242")})
	infos, _ = get("", "", 0, &provider.Info{SrcAddr: src})
	if len(infos) != 1 || !bytes.Equal(infos[0].SrcAddr, src) || infos[0].DomainAttr.Name != "lo" {
		t.Fatalf("src_addr hint: %v", infos)
	}
	if _, err := get("", "", 0, &provider.Info{SrcAddr: []byte{1, 2, 3}}); !errors.Is(err, provider.ENODATA) {
		t.Fatalf("garbage src_addr hint: %v", err)
	}
	dst := appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("127.0.0.1:4243")})
	infos, _ = get("", "", 0, &provider.Info{DestAddr: dst})
	if !bytes.Equal(infos[0].DestAddr, dst) || formatSockaddr(infos[0].SrcAddr) != "fi_sockaddr_in://127.0.0.1:0" {
		t.Fatalf("dest_addr hint: %v", infos)
	}
}

func TestAddrHandler(t *testing.T) {
	p := udpProvider{}
	v4 := appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("10.1.2.3:9228")})
	v6 := appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("[fe80::1]:80"), Scope: 2})
	for _, c := range []struct {
		f    provider.AddrFormat
		b    []byte
		ok   bool
		text string
	}{
		{provider.SockAddrIn, v4, true, "fi_sockaddr_in://10.1.2.3:9228"},
		{provider.SockAddr, v4, true, "fi_sockaddr_in://10.1.2.3:9228"},
		{provider.FormatUnspec, v4, true, "fi_sockaddr_in://10.1.2.3:9228"},
		{provider.SockAddrIn6, v4, false, ""},
		{provider.SockAddrIn6, v6, true, "fi_sockaddr_in6://[fe80::1]:80"},
		{provider.SockAddrIn, v6, false, ""},
		{provider.AddrStr, v4, false, ""},
		{provider.SockAddrIn, v4[:15], false, ""},
		{provider.SockAddrIn, append(v4, 0), false, ""},
		{provider.SockAddrIn, nil, false, ""},
		{provider.SockAddrIn6, v6[:27], false, ""},
	} {
		if got := p.ValidAddr(c.f, c.b); got != c.ok {
			t.Errorf("ValidAddr(%v, % x) = %v", c.f, c.b, got)
		}
		if got := p.AddrString(c.f, c.b); got != c.text {
			t.Errorf("AddrString(%v, % x) = %q, want %q", c.f, c.b, got, c.text)
		}
	}
	b, err := p.ResolveService(provider.SockAddrIn, "127.0.0.1", "9228")
	if err != nil || formatSockaddr(b) != "fi_sockaddr_in://127.0.0.1:9228" {
		t.Fatalf("ResolveService: %s %v", formatSockaddr(b), err)
	}
	b, err = p.ResolveService(provider.SockAddrIn6, "::1", "7")
	if err != nil || formatSockaddr(b) != "fi_sockaddr_in6://[::1]:7" {
		t.Fatalf("ResolveService IPv6: %s %v", formatSockaddr(b), err)
	}
	b, err = p.ResolveService(provider.SockAddrIn, "localhost", "")
	if err != nil || formatSockaddr(b) != "fi_sockaddr_in://127.0.0.1:0" {
		t.Fatalf("ResolveService localhost: %s %v", formatSockaddr(b), err)
	}
	if _, err := p.ResolveService(provider.AddrStr, "127.0.0.1", "1"); err == nil {
		t.Fatal("ResolveService with FI_ADDR_STR")
	}
	if _, err := p.ResolveService(provider.SockAddrIn, "127.0.0.1", "70000"); err == nil {
		t.Fatal("port 70000 accepted")
	}
}

func TestFabricDomain(t *testing.T) {
	f, err := udpProvider{}.Fabric(&provider.FabricAttr{Name: "127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Domain(&provider.Info{EPAttr: &provider.EPAttr{Type: provider.EPMsg}}); err == nil {
		t.Fatal("FI_EP_MSG domain opened")
	}
	d, err := f.Domain(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
