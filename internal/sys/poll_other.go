//go:build !linux

package sys

import "github.com/gofabric/fabric/provider"

// PollFD is one descriptor of a Poll call.
type PollFD struct {
	FD    int
	Write bool
	// NoRead leaves readability out (a socket whose reader waits for
	// room elsewhere): only writability, errors and hang-ups wake.
	NoRead bool
	Ready  bool
}

// Poll is not supported on this platform.
func Poll(fds []PollFD, timeoutMs int) (bool, error) { return false, provider.ENOSYS }
