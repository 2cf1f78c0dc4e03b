package main

import (
	"path/filepath"
	"testing"
)

// TestCBufferedRecv drives buffered receives from C (testdata/bufrecv.c):
// FI_BUFFERED_RECV in fi_getinfo, the options, reports whose op_context
// is a struct fi_recv_context and whose buf is in C memory, FI_CLAIM
// (with the context set in the struct), FI_DISCARD, a second claim,
// tagged receives, an unclaimed report released at close, no handle leak.
func TestCBufferedRecv(t *testing.T) {
	dir := plugin(t)
	bin := cProgram(t, "bufrecv")
	for _, p := range []string{"goudp", "gotcp", "goshm"} {
		t.Run(p, func(t *testing.T) {
			if out := run(t, dir, bin, p, filepath.Join(dir, "libgofabric.so")); out != "ok\n" {
				t.Fatalf("output %q", out)
			}
		})
	}
}
