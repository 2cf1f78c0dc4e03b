package progress

import (
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// FDWait is an FI_WAIT_FD wait object: an epoll descriptor (FD) that holds
// an eventfd, signalled when the owning object has something to read, plus
// the descriptors of bound sources that implement provider.FDWaiter, so
// that the FD also becomes readable when progress may be possible (as
// libfabric's util wait fd does with its pollset).
//
// Signal writes the eventfd only when it is not already armed, so a stream
// of writes costs one atomic load each. Reset disarms and drains it
// (fi_trywait); a Signal after Reset arms it again.
type FDWait struct {
	armed atomic.Bool

	mu     sync.Mutex // guards the descriptors against Close
	epfd   int
	evfd   int
	closed bool
	fds    map[int]int                   // source descriptor -> references
	change uint64                        // bumped when fds gains or loses a descriptor
	srcs   map[provider.Progresser]srcFD // descriptor recorded at AddSource
}

type srcFD struct{ fd, refs int }

// NewFDWait creates the epoll and eventfd descriptors.
func NewFDWait() (*FDWait, error) {
	ev, err := sys.EventFDOpen()
	if err != nil {
		return nil, err
	}
	ep, err := sys.EpollCreate()
	if err != nil {
		sys.EventFDClose(ev)
		return nil, err
	}
	if err := sys.EpollAdd(ep, ev); err != nil {
		sys.EventFDClose(ev)
		sys.EpollClose(ep)
		return nil, err
	}
	return &FDWait{epfd: ep, evfd: ev}, nil
}

// FD returns the descriptor applications wait on (poll, select, epoll),
// or -1 once closed.
func (w *FDWait) FD() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return -1
	}
	return w.epfd
}

// Signal makes FD readable. It is cheap when already signalled.
func (w *FDWait) Signal() {
	if w.armed.Load() || !w.armed.CompareAndSwap(false, true) {
		return
	}
	w.mu.Lock()
	if !w.closed {
		sys.EventFDSignal(w.evfd)
	}
	w.mu.Unlock()
}

// Reset clears the signal: the eventfd stops making FD readable until the
// next Signal. Callers check their object for pending work after Reset
// (a write that races with Reset signals again).
func (w *FDWait) Reset() {
	w.armed.Store(false)
	w.mu.Lock()
	if !w.closed {
		sys.EventFDDrain(w.evfd)
	}
	w.mu.Unlock()
}

// AddFD adds a source descriptor to the epoll set (counted: adding the same
// descriptor twice needs two RemoveFDs).
func (w *FDWait) AddFD(fd int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.addFDLocked(fd)
}

func (w *FDWait) addFDLocked(fd int) error {
	if fd < 0 {
		return provider.EINVAL
	}
	if w.closed {
		return provider.EBADF
	}
	if w.fds[fd] > 0 {
		w.fds[fd]++
		return nil
	}
	if err := sys.EpollAdd(w.epfd, fd); err != nil {
		return err
	}
	if w.fds == nil {
		w.fds = make(map[int]int)
	}
	w.fds[fd] = 1
	w.change++
	return nil
}

// RemoveFD drops one reference to a source descriptor added with AddFD.
func (w *FDWait) RemoveFD(fd int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.removeFDLocked(fd)
}

func (w *FDWait) removeFDLocked(fd int) {
	c := w.fds[fd]
	if c == 0 {
		return
	}
	if c > 1 {
		w.fds[fd] = c - 1
		return
	}
	delete(w.fds, fd)
	w.change++
	if !w.closed {
		// The source may have closed its descriptor already (the kernel
		// then dropped it from the set); that error is expected.
		sys.EpollDel(w.epfd, fd)
	}
}

// PollFDs appends to dst the descriptors an FI_WAIT_POLLFD user polls for
// reading: the eventfd first, then the sources' descriptors; and returns
// the change index, which grows whenever the set of descriptors changes.
// EBADF once closed.
func (w *FDWait) PollFDs(dst []int) ([]int, uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return dst, 0, provider.EBADF
	}
	dst = append(dst, w.evfd)
	for fd := range w.fds {
		dst = append(dst, fd)
	}
	return dst, w.change, nil
}

// Close closes the descriptors. It is idempotent.
func (w *FDWait) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := sys.EpollClose(w.epfd)
	if e := sys.EventFDClose(w.evfd); err == nil {
		err = e
	}
	return err
}

// AddSource adds p's descriptor if p implements provider.FDWaiter. The
// descriptor is recorded so RemoveSource works after p closed it.
func (w *FDWait) AddSource(p provider.Progresser) error {
	fw, ok := p.(provider.FDWaiter)
	if !ok {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if s, ok := w.srcs[p]; ok {
		s.refs++
		w.srcs[p] = s
		return nil
	}
	fd := fw.WaitFD()
	if err := w.addFDLocked(fd); err != nil {
		return err
	}
	if w.srcs == nil {
		w.srcs = make(map[provider.Progresser]srcFD)
	}
	w.srcs[p] = srcFD{fd: fd, refs: 1}
	return nil
}

// RemoveSource undoes one AddSource of p.
func (w *FDWait) RemoveSource(p provider.Progresser) {
	if _, ok := p.(provider.FDWaiter); !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.srcs[p]
	if !ok {
		return
	}
	if s.refs > 1 {
		s.refs--
		w.srcs[p] = s
		return
	}
	delete(w.srcs, p)
	w.removeFDLocked(s.fd)
}
