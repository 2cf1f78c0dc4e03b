package sim_test

import (
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/fabtest"
	_ "github.com/gofabric/fabric/prov/sim"
)

func TestConformanceSimRDM(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "sim", EPType: fabric.EPRDM, InProcess: true})
}

func TestConformanceSimDgram(t *testing.T) {
	fabtest.Run(t, fabtest.Target{Provider: "sim", EPType: fabric.EPDgram, InProcess: true})
}

func TestFabtestHelper(t *testing.T) { fabtest.Helper(t) }
