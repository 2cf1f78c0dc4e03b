package fabric

import (
	"sync"
	"sync/atomic"
)

// lifecycle tracks an object's closed state and the dependents bound to it,
// so that Close returns ErrBusy while dependents exist (fi_close(3)) and
// ErrClosed on a second call.
type lifecycle struct {
	mu     sync.Mutex
	closed atomic.Bool
	deps   int
}

// hold registers a dependent; it fails with ErrClosed once closed.
func (l *lifecycle) hold() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	l.deps++
	return nil
}

// release drops a dependent registered with hold.
func (l *lifecycle) release() {
	l.mu.Lock()
	if l.deps > 0 {
		l.deps--
	}
	l.mu.Unlock()
}

// beginClose marks the object closed, or returns ErrClosed (already
// closed) or ErrBusy (dependents exist).
func (l *lifecycle) beginClose() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	if l.deps > 0 {
		return ErrBusy
	}
	l.closed.Store(true)
	return nil
}

// isClosed reports whether Close has begun.
func (l *lifecycle) isClosed() bool { return l.closed.Load() }
