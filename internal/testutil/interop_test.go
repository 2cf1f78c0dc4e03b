package testutil

import "testing"

func TestParseInterop(t *testing.T) {
	for _, c := range []struct {
		v            string
		required, ok bool
	}{
		{"1", true, true}, {"", false, true}, {"0", false, true},
		{"true", false, false}, {"yes", false, false}, {"2", false, false}, {" 1", false, false},
	} {
		if r, ok := parseInterop(c.v); r != c.required || ok != c.ok {
			t.Errorf("%q: required %v ok %v, want %v %v", c.v, r, ok, c.required, c.ok)
		}
	}
}

func TestInteropRequired(t *testing.T) {
	t.Setenv(InteropEnv, "1")
	if !InteropRequired(t) {
		t.Fatal("FABRIC_INTEROP=1 not required")
	}
	t.Setenv(InteropEnv, "0")
	if InteropRequired(t) {
		t.Fatal("FABRIC_INTEROP=0 required")
	}
}
