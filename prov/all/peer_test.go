package all_test

import (
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
