//go:build !race

package fabtest

const raceEnabled = false
