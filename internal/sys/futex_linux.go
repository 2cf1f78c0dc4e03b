package sys

import (
	"math"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

// futex(2) operations, without FUTEX_PRIVATE_FLAG: the words live in
// MAP_SHARED file mappings that several processes see, and a private futex
// would key the waiters by this process's address space only.
const (
	futexWait = 0 // FUTEX_WAIT
	futexWake = 1 // FUTEX_WAKE
)

// FutexWait sleeps while *addr == val, until FutexWake on the same word
// (from any process mapping it) or until timeout passes; a negative timeout
// waits without limit, zero only checks. It returns nil when woken, when
// *addr != val at the call (EAGAIN) and on EINTR (a signal; the runtime
// sends some): the caller re-checks its condition in every case. It returns
// provider.ETIMEDOUT when the timeout passes, FI_EINVAL for a nil or
// misaligned addr.
//
// It blocks the calling thread through syscall.Syscall6, so the Go runtime
// hands the thread's P to other goroutines meanwhile. It does not allocate.
func FutexWait(addr *uint32, val uint32, timeout time.Duration) error {
	if addr == nil || uintptr(unsafe.Pointer(addr))&3 != 0 {
		return provider.EINVAL
	}
	var ts unix.Timespec
	tsp := unsafe.Pointer(nil)
	if timeout >= 0 {
		ts = unix.NsecToTimespec(int64(timeout))
		tsp = unsafe.Pointer(&ts)
	}
	_, _, e := syscall.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait, uintptr(val),
		uintptr(tsp), 0, 0)
	switch e {
	case 0, unix.EAGAIN, unix.EINTR:
		return nil
	case unix.ETIMEDOUT:
		return provider.ETIMEDOUT
	}
	return TranslateErrno(e).AsError()
}

// FutexWakeAll is the count that wakes every waiter.
const FutexWakeAll = math.MaxInt32

// FutexWake wakes up to n (at least 1; FutexWakeAll for all) waiters
// sleeping in FutexWait on addr, in any process that maps the word, and
// returns how many it woke. The caller changes the word before waking. It
// never blocks (a raw system call) and does not allocate. FI_EINVAL for a
// nil or misaligned addr or n < 1.
func FutexWake(addr *uint32, n int) (int, error) {
	if addr == nil || uintptr(unsafe.Pointer(addr))&3 != 0 || n < 1 {
		return 0, provider.EINVAL
	}
	if n > FutexWakeAll {
		n = FutexWakeAll
	}
	r, _, e := syscall.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake, uintptr(n), 0, 0, 0)
	if e != 0 {
		return 0, TranslateErrno(e).AsError()
	}
	return int(r), nil
}

// atomic.Uint32 is one uint32 (its noCopy field takes no space): a pointer
// to it is a pointer to the word.
var _ [4 - unsafe.Sizeof(atomic.Uint32{})]byte
var _ [unsafe.Sizeof(atomic.Uint32{}) - 4]byte

// FutexWaitAtomic is FutexWait on the word of w (the form internal/shmring
// gives its shared words).
func FutexWaitAtomic(w *atomic.Uint32, val uint32, timeout time.Duration) error {
	return FutexWait((*uint32)(unsafe.Pointer(w)), val, timeout)
}

// FutexWakeAtomic is FutexWake on the word of w.
func FutexWakeAtomic(w *atomic.Uint32, n int) (int, error) {
	return FutexWake((*uint32)(unsafe.Pointer(w)), n)
}
