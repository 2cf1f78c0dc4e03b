package eq

import (
	"testing"

	"github.com/gofabric/fabric/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }
