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

// TestCAVInsertStrAddrs inserts an array of FI_ADDR_STR addresses of
// different lengths from C over golnx (testdata/av_str.c).
func TestCAVInsertStrAddrs(t *testing.T) {
	dir := plugin(t)
	bin := compileC(t, "av_str.c")
	if out := run(t, dir, bin, "golnx"); out != "ok\n" {
		t.Fatalf("output %q", out)
	}
}
