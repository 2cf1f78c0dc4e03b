//go:build race

package archtest

import "testing"

// TestRaceDetectorOn exists only in race builds; scripts/test.sh requires
// its output, so a "race" job that silently ran without -race fails.
func TestRaceDetectorOn(t *testing.T) { t.Log("race detector on") }
