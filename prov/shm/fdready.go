package shm

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/provider"
)

// FI_WAIT_FD support (provider.FDWaiter), a stand-in until the futex-based
// wake-up lands: the first WaitFD call creates a pipe and a goroutine that
// waits (WaitReady) for a command or a pending transmit and then makes the
// pipe readable; Progress drains the pipe once nothing is left to do.
type fdReady struct {
	on    atomic.Bool
	armed atomic.Bool
	r, w  *os.File
	buf   [1]byte
	done  chan struct{}
}

var _ provider.FDWaiter = (*endpoint)(nil)

// fdArmDelay is how long work must wait unprogressed before the
// descriptor is made readable.
const fdArmDelay = 50 * time.Microsecond

// WaitFD returns a descriptor that is readable while progress may be
// possible, or -1 if none can be made.
func (ep *endpoint) WaitFD() int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	f := &ep.fdr
	if f.on.Load() {
		return int(f.r.Fd())
	}
	if ep.state.Load() == stateClosed {
		return -1
	}
	r, w, err := os.Pipe()
	if err != nil {
		return -1
	}
	f.r, f.w, f.done = r, w, make(chan struct{})
	fd := int(r.Fd())
	f.on.Store(true)
	go ep.fdLoop()
	return fd
}

func (ep *endpoint) fdLoop() {
	f := &ep.fdr
	defer close(f.done)
	for {
		if err := ep.WaitReady(time.Now().Add(10 * time.Millisecond)); err == provider.EBADF {
			return
		}
		if ep.state.Load() == stateClosed {
			return
		}
		if f.armed.Load() || !ep.busy() {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		// Arm only when nobody is progressing: an application that
		// polls consumes the command within microseconds, and then
		// needs no descriptor (and no system calls per message).
		head := ep.own.Head()
		time.Sleep(fdArmDelay)
		if !ep.busy() || ep.own.Head() != head {
			continue
		}
		if _, err := f.w.Write([]byte{1}); err != nil {
			return
		}
		f.armed.Store(true)
	}
}

// fdDrain makes the pipe unreadable once nothing is left to do.
func (ep *endpoint) fdDrain() {
	f := &ep.fdr
	if f.armed.Load() && !ep.busy() && f.armed.CompareAndSwap(true, false) {
		f.r.Read(f.buf[:])
	}
}

// fdClose stops the goroutine and closes the pipe (Close).
func (ep *endpoint) fdClose() {
	f := &ep.fdr
	if !f.on.Load() {
		return
	}
	<-f.done
	f.r.Close()
	f.w.Close()
}
