package main

import (
	"runtime"
	"testing"
)

// TestSingleP checks that the timed loops run with one P and that the
// previous GOMAXPROCS comes back, and that a GOMAXPROCS set by the user is
// left alone.
func TestSingleP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	t.Setenv("GOMAXPROCS", "")
	restore := singleP()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS inside the loops = %d, want 1", got)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("GOMAXPROCS after restore = %d, want 3", got)
	}

	t.Setenv("GOMAXPROCS", "3")
	restore = singleP()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("GOMAXPROCS with the variable set = %d, want 3 (the user's)", got)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("GOMAXPROCS after restore = %d, want 3", got)
	}
}
