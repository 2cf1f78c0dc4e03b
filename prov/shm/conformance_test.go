package shm_test

import (
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/fabtest"
	_ "github.com/gofabric/fabric/prov/shm"
)

func TestConformanceSHM(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "shm", EPType: fabric.EPRDM})
}

func TestConformanceSHMAutoProgress(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "shm", EPType: fabric.EPRDM, Progress: fabric.ProgressAuto})
}

// TestConformanceSHMThreadDomain runs the suite at FI_THREAD_DOMAIN with
// manual progress: the endpoints run without their locks (endpoint.serial).
func TestConformanceSHMThreadDomain(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "shm", EPType: fabric.EPRDM, Threading: fabric.ThreadDomain})
}

func TestFabtestHelper(t *testing.T) { fabtest.Helper(t) }
