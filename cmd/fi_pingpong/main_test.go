package main

import (
	"os"
	"testing"

	"github.com/gofabric/fabric/internal/testutil"
)

// envAsMain makes the test binary behave as fi_pingpong itself (the
// re-exec pattern), so that cross-process tests and --local run the real
// command without a separate build.
const envAsMain = "FI_PINGPONG_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envAsMain) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	testutil.Main(m)
}
