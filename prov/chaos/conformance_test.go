package chaos_test

import (
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/fabtest"
	"github.com/gofabric/fabric/prov/chaos"
	_ "github.com/gofabric/fabric/prov/shm"
	_ "github.com/gofabric/fabric/prov/tcp"
	_ "github.com/gofabric/fabric/prov/udp"
)

// The conformance suite over each real provider through chaos with its
// faults off (FI_HOOK=chaos, no FI_CHAOS_* variable): the hook is
// transparent. Each run checks that the hook was installed.
func conformance(t *testing.T, tg fabtest.Target) {
	t.Setenv("FI_HOOK", chaos.Name)
	before := chaos.Env().Stats().Endpoints
	fabtest.Run(t, tg)
	if chaos.Env().Stats().Endpoints == before {
		t.Fatal("no endpoint was opened through the chaos hook")
	}
}

func TestConformanceChaosUDP(t *testing.T) {
	conformance(t, fabtest.Target{Provider: "udp", EPType: fabric.EPDgram})
}

func TestConformanceChaosTCP(t *testing.T) {
	conformance(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPMsg})
}

func TestConformanceChaosTCPRDM(t *testing.T) {
	conformance(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPRDM})
}

func TestConformanceChaosSHM(t *testing.T) {
	conformance(t, fabtest.Target{Provider: "shm", EPType: fabric.EPRDM})
}

func TestFabtestHelper(t *testing.T) { fabtest.Helper(t) }

// TestConformanceChaosTraceTCPRDM runs the suite with tracing on
// (FI_CHAOS_TRACE=1) over tcp's RDM endpoint, whose completions go
// through reservations (FI_RM_ENABLED): the traced CQs change no result.
// (The records are not printed unless FI_LOG_LEVEL=trace.)
func TestConformanceChaosTraceTCPRDM(t *testing.T) {
	t.Setenv(chaos.EnvTrace, "1")
	conformance(t, fabtest.Target{Provider: "tcp", EPType: fabric.EPRDM})
}
