//go:build !linux

package sys

import (
	"time"

	"github.com/gofabric/fabric/provider"
)

// TimerFDOpen returns ENOSYS.
func TimerFDOpen() (int, error) { return -1, provider.ENOSYS }

// TimerFDArm returns ENOSYS.
func TimerFDArm(fd int, d time.Duration) error { return provider.ENOSYS }

// TimerFDDrain returns ENOSYS.
func TimerFDDrain(fd int) error { return provider.ENOSYS }

// TimerFDClose returns ENOSYS.
func TimerFDClose(fd int) error { return provider.ENOSYS }
