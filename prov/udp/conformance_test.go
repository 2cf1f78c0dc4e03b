package udp_test

import (
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/fabtest"
	_ "github.com/gofabric/fabric/prov/udp"
)

func TestConformanceUDP(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "udp", EPType: fabric.EPDgram})
}

func TestConformanceUDPAutoProgress(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "udp", EPType: fabric.EPDgram, Progress: fabric.ProgressAuto})
}

func TestFabtestHelper(t *testing.T) { fabtest.Helper(t) }
