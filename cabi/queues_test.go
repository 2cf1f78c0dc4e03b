package main

import (
	"path/filepath"
	"testing"
)

// TestCQueues runs testdata/queues.c: CQ, counter, EQ, AV, MR, wait and
// poll sets from C through the C libfabric, with bad input, and no handle
// left at the end.
func TestCQueues(t *testing.T) {
	dir := plugin(t)
	bin := compileC(t, "queues.c", "-lpthread")
	for _, p := range []string{"gotcp", "goudp"} {
		t.Run(p, func(t *testing.T) {
			if out := run(t, dir, bin, p, filepath.Join(dir, "libgofabric.so")); out != "ok\n" {
				t.Fatalf("output %q", out)
			}
		})
	}
}
