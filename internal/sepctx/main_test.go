package sepctx

import (
	"testing"

	"github.com/gofabric/fabric/internal/testutil"
)

// TestMain fails the run if a test leaves goroutines behind.
func TestMain(m *testing.M) { testutil.Main(m) }
