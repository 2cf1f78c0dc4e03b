package sys

import (
	"errors"
	"strings"
	"testing"

	"github.com/gofabric/fabric/provider"
)

func TestCMAProbeTable(t *testing.T) {
	for _, c := range []struct {
		disable, scope string
		scopeErr       error
		missing        bool
		self           error
		ok             bool
		why            string
	}{
		{"1", "0", nil, false, nil, false, "disabled by FI_SHM_DISABLE_CMA"},
		{"YES", "", nil, true, nil, false, "disabled"},
		{"0", "0\n", nil, false, nil, true, "ptrace_scope=0"},
		{"bogus", "0", nil, false, nil, true, "ptrace_scope=0"},
		{"", "", nil, true, nil, true, "no yama"},
		{"", "", nil, true, provider.ENOSYS, false, "Function not implemented"},
		{"", "0", nil, false, provider.EPERM, false, "seccomp"},
		{"", "1\n", nil, false, nil, true, "restricted"},
		{"", "2\n", nil, false, nil, false, "ptrace_scope=2"},
		{"", "3", nil, false, nil, false, "ptrace_scope=3"},
		{"", "x", nil, false, nil, true, "not understood"},
		{"", "", errors.New("denied"), false, nil, true, "unreadable"},
	} {
		ok, why := cmaProbe(c.disable, c.scope, c.scopeErr, c.missing, c.self)
		if ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("cmaProbe(%q, %q, %v, %v, %v) = %v %q; want %v, containing %q",
				c.disable, c.scope, c.scopeErr, c.missing, c.self, ok, why, c.ok, c.why)
		}
	}
}

// FuzzCMAProbe: any environment value and ptrace_scope content gives an
// answer with a reason, never a panic; a true FI_SHM_DISABLE_CMA always
// turns CMA off and a failed self read always does.
func FuzzCMAProbe(f *testing.F) {
	f.Add("1", "0\n", false)
	f.Add("", "1\n", false)
	f.Add("no", "-7", true)
	f.Fuzz(func(t *testing.T, disable, scope string, selfFails bool) {
		var self error
		if selfFails {
			self = provider.EPERM
		}
		ok, why := cmaProbe(disable, scope, nil, false, self)
		if why == "" {
			t.Fatal("no reason")
		}
		if v, set := parseBool(disable); set && v && ok {
			t.Fatalf("FI_SHM_DISABLE_CMA=%q but CMA on", disable)
		}
		if selfFails && ok {
			t.Fatal("self read failed but CMA on")
		}
	})
}
