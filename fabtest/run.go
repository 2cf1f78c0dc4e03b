package fabtest

import "testing"

type testCase struct {
	name string
	fn   func(t *testing.T, tg Target)
}

var cases []testCase

func register(name string, fn func(t *testing.T, tg Target)) {
	cases = append(cases, testCase{name, fn})
}

// Run runs every conformance case against the target, each as a subtest
// named after its man page and behaviour.
func Run(t *testing.T, tg Target) {
	t.Helper()
	if !tg.claims(0) {
		t.Fatalf("provider %q offers no %v endpoint", tg.Provider, tg.EPType)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, tg) })
	}
}

// Names lists the behaviours the suite checks, in order.
func Names() []string {
	n := make([]string, len(cases))
	for i, c := range cases {
		n[i] = c.name
	}
	return n
}
