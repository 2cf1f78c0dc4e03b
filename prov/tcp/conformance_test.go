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
