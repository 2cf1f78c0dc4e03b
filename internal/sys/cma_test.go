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
