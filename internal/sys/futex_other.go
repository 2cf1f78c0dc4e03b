//go:build !linux

package sys

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/provider"
)

// FutexWakeAll is the count that wakes every waiter.
const FutexWakeAll = math.MaxInt32

// FutexWait is not supported on this platform.
func FutexWait(addr *uint32, val uint32, timeout time.Duration) error { return provider.ENOSYS }

// FutexWake is not supported on this platform.
func FutexWake(addr *uint32, n int) (int, error) { return 0, provider.ENOSYS }

// FutexWaitAtomic is not supported on this platform.
func FutexWaitAtomic(w *atomic.Uint32, val uint32, timeout time.Duration) error {
	return provider.ENOSYS
}

// FutexWakeAtomic is not supported on this platform.
func FutexWakeAtomic(w *atomic.Uint32, n int) (int, error) { return 0, provider.ENOSYS }
