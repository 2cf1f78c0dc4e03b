//go:build race

package udp_test

const raceOn = true
