package tcp_test

import (
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/fabtest"
	_ "github.com/gofabric/fabric/prov/tcp"
)

func TestConformanceTCP(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPMsg})
}

func TestConformanceTCPAutoProgress(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPMsg, Progress: fabric.ProgressAuto})
}

func TestFabtestHelper(t *testing.T) { fabtest.Helper(t) }

func TestConformanceTCPRDM(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPRDM})
}

func TestConformanceTCPRDMAutoProgress(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPRDM, Progress: fabric.ProgressAuto})
}

// TestConformanceTCPRDMNoDynRbuf runs the suite with rxm's dynamic receive
// buffers off: tagged eager messages carry the rxm header and messages
// above 16 KiB up to 128 KiB go by SAR.
func TestConformanceTCPRDMNoDynRbuf(t *testing.T) {
	t.Setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0")
	fabtest.Run(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPRDM})
}

// The buffered-receive cases with each protocol of a message above the
// eager limit between two endpoints of ours (rdm_bufrecv.go): rxm's
// rendezvous (streaming and CMA off), rxm's SAR up to 128 KiB
// (rendezvous above), and CMA requests from 32 KiB (the claim reads over
// tcp).
func TestConformanceTCPRDMBufferedRendezvous(t *testing.T) {
	t.Setenv("FI_TCP_RDM_STREAM_LIMIT", "0")
	t.Setenv("FI_TCP_RDM_CMA", "0")
	fabtest.RunBuffered(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPRDM})
}

func TestConformanceTCPRDMBufferedSAR(t *testing.T) {
	t.Setenv("FI_TCP_RDM_STREAM_LIMIT", "0")
	t.Setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0")
	fabtest.RunBuffered(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPRDM, Progress: fabric.ProgressAuto})
}

func TestConformanceTCPRDMBufferedCMA(t *testing.T) {
	t.Setenv("FI_TCP_RDM_CMA_MIN", "32768")
	fabtest.RunBuffered(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPRDM})
}
