package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCAVSet runs fi_av_set(3) from C over goudp (testdata/av_set.c).
func TestCAVSet(t *testing.T) {
	dir := plugin(t)
	bin := filepath.Join(t.TempDir(), "av_set")
	src, _ := filepath.Abs("testdata/av_set.c")
	inc, _ := filepath.Abs(".")
	if out, err := exec.Command("gcc", "-Wall", "-Werror", "-O1", "-I"+inc, "-o", bin, src, "-lfabric", "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if out := run(t, dir, bin, "goudp", filepath.Join(dir, "libgofabric.so")); out != "ok\n" {
		t.Fatalf("output %q", out)
	}
}
