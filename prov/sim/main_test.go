package sim_test

import (
	"os"
	"testing"

	"github.com/gofabric/fabric/internal/testutil"
)

// TestMain checks for leaked goroutines and descriptors; with
// SIM_TEST_HELPER set it is the peer process of the cross-process tests
// (xproc_test.go) instead.
func TestMain(m *testing.M) {
	if role := os.Getenv(envHelper); role != "" {
		os.Exit(helperMain(role))
	}
	testutil.Main(m)
}
