package testutil

import (
	"os"
	"testing"
)

// InteropEnv names the variable that decides whether the interoperability
// tests against the C libfabric 1.17 (fi_info, fi_pingpong, a C peer built
// against libfabric-dev) are required. It means one thing in every package:
//
//   - "1": required. A missing or unusable C tool fails the test (CI sets it).
//   - unset, "" or "0": optional. The tests run when the tools are there and
//     skip, saying why, when they are not.
//
// Any other value fails the test, so that a typo ("true", "yes") cannot
// silently turn a required run into an optional one.
const InteropEnv = "FABRIC_INTEROP"

// InteropRequired reports whether FABRIC_INTEROP requires the interop
// tests; it fails t on a value other than "1", "0" or "".
func InteropRequired(t testing.TB) bool {
	t.Helper()
	required, ok := parseInterop(os.Getenv(InteropEnv))
	if !ok {
		t.Fatalf("%s=%q: want 1 (required) or 0/unset (optional)", InteropEnv, os.Getenv(InteropEnv))
	}
	return required
}

func parseInterop(v string) (required, ok bool) {
	switch v {
	case "1":
		return true, true
	case "", "0":
		return false, true
	}
	return false, false
}

// InteropCheck is called by every interop test with what it needs from
// the C libfabric (what) and the error met getting it (nil when it is
// there). It fails t on an invalid FABRIC_INTEROP; otherwise, when err is
// not nil, it ends the test: a failure with FABRIC_INTEROP=1, a skip
// without.
func InteropCheck(t testing.TB, what string, err error) {
	t.Helper()
	required := InteropRequired(t)
	if err == nil {
		return
	}
	if required {
		t.Fatalf("%s=1 but %s is unusable: %v", InteropEnv, what, err)
	}
	t.Skipf("%s unusable (%v); set %s=1 to make this a failure", what, err, InteropEnv)
}
