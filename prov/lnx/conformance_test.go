package lnx_test

import (
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/fabtest"
	_ "github.com/gofabric/fabric/prov/lnx"
	_ "github.com/gofabric/fabric/prov/shm"
	_ "github.com/gofabric/fabric/prov/tcp"
)

func TestConformanceLNX(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "lnx", EPType: fabric.EPRDM})
}

func TestFabtestHelper(t *testing.T) { fabtest.Helper(t) }

// TestConformanceLNXRemote runs the suite with every peer reached over
// tcp (FI_LNX_DISABLE_SHM), the path of remote peers.
func TestConformanceLNXRemote(t *testing.T) {
	t.Setenv("FI_LNX_DISABLE_SHM", "1")
	fabtest.Run(t, fabtest.Target{Provider: "lnx", EPType: fabric.EPRDM})
}

func TestConformanceLNXAutoProgress(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "lnx", EPType: fabric.EPRDM, Progress: fabric.ProgressAuto})
}
