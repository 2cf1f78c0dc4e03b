//go:build !linux

package sys

import (
	"math"
	"time"

	"github.com/gofabric/fabric/provider"
)

// FutexWakeAll is the count that wakes every waiter.
const FutexWakeAll = math.MaxInt32

// FutexWait is not supported on this platform.
func FutexWait(addr *uint32, val uint32, timeout time.Duration) error { return provider.ENOSYS }

// FutexWake is not supported on this platform.
func FutexWake(addr *uint32, n int) (int, error) { return 0, provider.ENOSYS }
