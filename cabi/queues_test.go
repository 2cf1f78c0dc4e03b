package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCQueues runs testdata/queues.c: CQ, counter, EQ, AV, MR, wait and
// poll sets from C through the C libfabric, with bad input, and no handle
// left at the end.
func TestCQueues(t *testing.T) {
	dir := plugin(t)
	bin := filepath.Join(t.TempDir(), "queues")
	src, _ := filepath.Abs("testdata/queues.c")
	inc, _ := filepath.Abs(".")
	if out, err := exec.Command("gcc", "-Wall", "-Werror", "-O1", "-I"+inc, "-o", bin, src, "-lfabric", "-ldl", "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, p := range []string{"gotcp", "goudp"} {
		t.Run(p, func(t *testing.T) {
			if out := run(t, dir, bin, p, filepath.Join(dir, "libgofabric.so")); out != "ok\n" {
				t.Fatalf("output %q", out)
			}
		})
	}
}
