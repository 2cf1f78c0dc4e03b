package tcp

import (
	"testing"

	"github.com/gofabric/fabric/internal/wire/rxmwire"
)

// TestEnvSizes: the size variables fall back to their defaults when unset,
// empty or unparsable, and are clamped to their ranges.
func TestEnvSizes(t *testing.T) {
	const name = "FI_TCP_TEST_ENV_UINT"
	for _, c := range []struct {
		raw  string
		want uint64
	}{{"", 7}, {"  ", 7}, {"x", 7}, {"-1", 7}, {"0", 0}, {"42", 42}, {"0x10", 16}, {" 9 ", 9}} {
		t.Setenv(name, c.raw)
		if got := envUint(name, 7); got != c.want {
			t.Errorf("envUint(%q) = %d, want %d", c.raw, got, c.want)
		}
	}

	t.Setenv(envRxmDynRbuf, "0")
	for _, c := range []struct {
		raw  string
		want int
	}{{"", 8 * rxmwire.EagerLimit}, {"bad", 8 * rxmwire.EagerLimit}, {"1", rxmwire.EagerLimit},
		{"100000", 100000}, {"1099511627776", rdmSARMax}} {
		t.Setenv(envRxmSARLimit, c.raw)
		if dyn, got := rdmProtoLimits(); dyn || got != c.want {
			t.Errorf("%s=%q: SAR limit %d (dynamic %v), want %d", envRxmSARLimit, c.raw, got, dyn, c.want)
		}
	}

	for _, c := range []struct {
		raw  string
		want int
	}{{"", rdmStreamLimit}, {"bad", rdmStreamLimit}, {"0", 0}, {"65536", 65536}, {"1099511627776", rdmSARMax}} {
		t.Setenv(envStreamLimit, c.raw)
		if got := rdmStreamLimitValue(); got != c.want {
			t.Errorf("%s=%q: stream limit %d, want %d", envStreamLimit, c.raw, got, c.want)
		}
	}

	for _, c := range []struct {
		raw  string
		want int
	}{{"", rdmCMAMin}, {"bad", rdmCMAMin}, {"1", rxmwire.EagerLimit + 1}, {"1048576", 1 << 20}} {
		t.Setenv(envCMAMin, c.raw)
		if _, got := rdmCMAConfig(); got != c.want {
			t.Errorf("%s=%q: CMA threshold %d, want %d", envCMAMin, c.raw, got, c.want)
		}
	}
}
