package ipaddr

import (
	"errors"
	"testing"

	infohints "github.com/gofabric/fabric/internal/hints"
	"github.com/gofabric/fabric/provider"
)

func testConfig() InfoConfig {
	return InfoConfig{Network: "udp", EPType: provider.EPDgram, IfaceEnv: "FI_IPADDRTEST_IFACE",
		Base: func(*provider.Info) *provider.Info {
			i := &provider.Info{Caps: provider.CapMsg | provider.CapLocalComm | provider.CapRemoteComm}
			infohints.Normalize(i)
			return i
		}}
}

// With the interface restricted to loopback, hints asking for
// FI_REMOTE_COMM get one Info without a source address (as libfabric's
// util_getinfo), not nothing; hints without it get the loopback addresses,
// which offer FI_LOCAL_COMM only.
func TestGetInfoLoopbackOnlyRemoteComm(t *testing.T) {
	t.Setenv("FI_IPADDRTEST_IFACE", "lo")
	c := testConfig()
	h := &provider.Info{Caps: provider.CapMsg}
	infos, err := c.GetInfo(provider.APIVersion, "", "", 0, h)
	if err != nil || len(infos) == 0 {
		t.Fatalf("loopback infos: %v", err)
	}
	for _, in := range infos {
		if in.SrcAddr == nil || in.Caps&provider.CapRemoteComm != 0 || in.DomainAttr.Name != "lo" {
			t.Fatalf("loopback info: caps %v src %v domain %q", in.Caps, in.SrcAddr, in.DomainAttr.Name)
		}
	}
	h.Caps |= provider.CapRemoteComm
	infos, err = c.GetInfo(provider.APIVersion, "", "", 0, h)
	if err != nil || len(infos) != 1 {
		t.Fatalf("FI_REMOTE_COMM on lo: %d infos, %v", len(infos), err)
	}
	if in := infos[0]; in.SrcAddr != nil || in.Caps&provider.CapRemoteComm == 0 || in.AddrFormat != provider.SockAddr {
		t.Fatalf("FI_REMOTE_COMM on lo: caps %v src %v format %v", in.Caps, in.SrcAddr, in.AddrFormat)
	}
	h.AddrFormat = provider.SockAddrIn6
	if infos, err = c.GetInfo(provider.APIVersion, "", "", 0, h); err != nil || infos[0].AddrFormat != provider.SockAddrIn6 {
		t.Fatalf("FI_REMOTE_COMM on lo, IPv6: %v", err)
	}
}

// A hint the IP layer cannot serve names its field.
func TestGetInfoMismatch(t *testing.T) {
	c := testConfig()
	_, err := c.GetInfo(provider.APIVersion, "", "", 0, &provider.Info{EPAttr: &provider.EPAttr{Type: provider.EPMsg}})
	var m *infohints.Mismatch
	if !errors.As(err, &m) || m.Field != "ep_attr.type" || !errors.Is(err, provider.ENODATA) ||
		err.Error() != "ep_attr.type: FI_EP_MSG not supported (provider: FI_EP_DGRAM)" {
		t.Fatalf("ep type: %v", err)
	}
	_, err = c.GetInfo(provider.APIVersion, "", "", 0, &provider.Info{AddrFormat: provider.AddrStr})
	if !errors.As(err, &m) || m.Field != "addr_format" || !errors.Is(err, provider.ENODATA) {
		t.Fatalf("addr format: %v", err)
	}
}
