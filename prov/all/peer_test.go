package all_test

import (
	"errors"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/fabtest"
	_ "github.com/gofabric/fabric/prov/all"
)

// udpOwner is the owner of the fi_peer(3) imports: a udp domain exists
// on every host.
var udpOwner = &fabtest.Target{Provider: "udp", EPType: fabric.EPDgram}

// TestPeerSHMImportsUDP: shm imports a udp domain's CQ, counter and SRX
// (fi_peer(3) EXAMPLE PEER CQ SETUP, PEER SRX RECEIVE FLOW).
func TestPeerSHMImportsUDP(t *testing.T) {
	fabtest.RunPeer(t, fabtest.Target{Provider: "shm", EPType: fabric.EPRDM, Owner: udpOwner})
}

func TestPeerSHMAutoProgressImportsUDP(t *testing.T) {
	fabtest.RunPeer(t, fabtest.Target{Provider: "shm", EPType: fabric.EPRDM, Progress: fabric.ProgressAuto,
		Owner: udpOwner})
}

// shmOwner is the owner of the reverse arrangement: udp imports shm's
// objects.
var shmOwner = &fabtest.Target{Provider: "shm", EPType: fabric.EPRDM}

// TestPeerUDPImportsSHM: udp imports an shm domain's objects (the reverse
// of TestPeerSHMImportsUDP).
func TestPeerUDPImportsSHM(t *testing.T) {
	fabtest.RunPeer(t, fabtest.Target{Provider: "udp", EPType: fabric.EPDgram, Owner: shmOwner})
}

// TestPeerTCPMsgImportsUDP: tcp MSG endpoints import a udp fabric's EQ:
// their CM events land in it (fi_peer(3) "PEER EQ").
func TestPeerTCPMsgImportsUDP(t *testing.T) {
	fabtest.RunPeer(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPMsg, Owner: udpOwner})
}

// TestPeerTCPMsgImportsSHM is TestPeerTCPMsgImportsUDP with an shm owner.
func TestPeerTCPMsgImportsSHM(t *testing.T) {
	fabtest.RunPeer(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPMsg, Owner: shmOwner})
}

// TestGetInfoAVUserID: every connectionless configuration claims
// FI_AV_USER_ID when asked (the root's AVs honour it for every provider);
// a connection-oriented one, without an AV, does not.
func TestGetInfoAVUserID(t *testing.T) {
	for _, c := range []struct {
		prov  string
		ep    fabric.EPType
		claim bool
	}{
		{"udp", fabric.EPDgram, true}, {"shm", fabric.EPRDM, true}, {"tcp", fabric.EPRDM, true}, {"tcp", fabric.EPMsg, false},
	} {
		h := fabric.AllocInfo()
		h.FabricAttr.ProvName = c.prov
		h.EPAttr.Type = c.ep
		h.Caps = fabric.CapMsg | fabric.CapAVUserID
		infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
		if !c.claim {
			if !errors.Is(err, fabric.ErrNoData) {
				t.Errorf("%s %v with FI_AV_USER_ID: %d infos, %v; want ENODATA", c.prov, c.ep, len(infos), err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %v with FI_AV_USER_ID: %v", c.prov, c.ep, err)
			continue
		}
		for _, i := range infos {
			if i.Caps&fabric.CapAVUserID == 0 || i.DomainAttr.Caps&fabric.CapAVUserID == 0 {
				t.Errorf("%s %v: caps %v, domain caps %v; want FI_AV_USER_ID", c.prov, c.ep, i.Caps, i.DomainAttr.Caps)
			}
		}
		h.Caps = fabric.CapMsg
		if infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h); err != nil ||
			infos[0].Caps&fabric.CapAVUserID != 0 {
			t.Errorf("%s %v without FI_AV_USER_ID in the hints: %v, %v", c.prov, c.ep, infos, err)
		}
	}
}
