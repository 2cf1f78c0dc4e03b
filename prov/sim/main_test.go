package sim_test

import (
	"testing"

	"github.com/gofabric/fabric/internal/testutil"
)

// TestMain checks for leaked goroutines and descriptors.
func TestMain(m *testing.M) { testutil.Main(m) }
