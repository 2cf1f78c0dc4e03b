package fabtest

import (
	"errors"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/peer"
)

func init() {
	register("fi_peer/av_owner_query_ep_addr", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("no AV for FI_EP_MSG")
		}
		a, b, ab, _ := tg.pair(t, envOpts{})
		var owner peer.AVOwner = a.av
		attr, err := owner.Query()
		if err != nil || attr.Count != 1 {
			t.Fatalf("query = %+v, %v; want count 1", attr, err)
		}
		if got := owner.EPAddr(b.ep); got != ab {
			t.Fatalf("ep_addr(b) = %v; want %v", got, ab)
		}
		if got := owner.EPAddr(a.ep); got != fabric.AddrNotAvail {
			t.Fatalf("ep_addr of an address not inserted = %v; want FI_ADDR_NOTAVAIL", got)
		}
	})
	register("fi_peer/av_set_members", func(t *testing.T, tg Target) {
		m := peer.Members{1, 2, 3}
		n, err := m.Members(make([]fabric.Addr, 2))
		if n != 3 || !errors.Is(err, fabric.ErrTooSmall) {
			t.Fatalf("members with a short array = %d, %v; want 3, ETOOSMALL", n, err)
		}
		out := make([]fabric.Addr, 4)
		if n, err := m.Members(out); n != 3 || err != nil || out[2] != 3 {
			t.Fatalf("members = %d, %v, %v", n, err, out)
		}
	})
	register("fi_peer/domain_shares_mr_keys", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		if _, err := e.fab.OpenPeerDomain(e.info, nil); !errors.Is(err, fabric.ErrInval) {
			t.Fatalf("peer domain without context: %v", err)
		}
		pd, err := e.fab.OpenPeerDomain(e.info, &peer.DomainContext{Domain: e.dom})
		if err != nil {
			t.Fatalf("fi_domain2(FI_PEER): %v", err)
		}
		buf := make([]byte, 64)
		mr, err := e.dom.RegMR(buf, fabric.FlagRemoteWrite, 0, 0x77, 0)
		if err != nil {
			t.Fatal(err)
		}
		if e.info.DomainAttr.MRMode&fabric.MRProvKey == 0 {
			_, err = pd.RegMR(buf, fabric.FlagRemoteWrite, 0, 0x77, 0)
			isErr(t, "same key through the peer domain", err, fabric.ErrNoKey)
		}
		isErr(t, "owner domain close while imported", e.dom.Close(), fabric.ErrBusy)
		mr.Close()
		if err := pd.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
