package main

import (
	"path/filepath"
	"testing"
)

// TestCAVSet runs fi_av_set(3) from C over goudp (testdata/av_set.c).
func TestCAVSet(t *testing.T) {
	dir := plugin(t)
	bin := compileC(t, "av_set.c")
	if out := run(t, dir, bin, "goudp", filepath.Join(dir, "libgofabric.so")); out != "ok\n" {
		t.Fatalf("output %q", out)
	}
}
