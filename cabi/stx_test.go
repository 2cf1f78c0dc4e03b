package main

import (
	"path/filepath"
	"testing"
)

// TestCSharedContexts drives shared transmit and receive contexts and an
// FI_WAIT_POLLFD CQ from C (testdata/stx.c): fi_getinfo with
// FI_SHARED_CONTEXT, several endpoints on one STX and one SRX sending to
// each other, the bind and close errors, FI_GETWAIT with a struct
// fi_wait_pollfd, no handle leak.
func TestCSharedContexts(t *testing.T) {
	dir := plugin(t)
	bin := cProgram(t, "stx")
	for _, p := range []string{"goudp", "gotcp", "goshm"} {
		t.Run(p, func(t *testing.T) {
			if out := run(t, dir, bin, p, filepath.Join(dir, "libgofabric.so")); out != "ok\n" {
				t.Fatalf("output %q", out)
			}
		})
	}
}
