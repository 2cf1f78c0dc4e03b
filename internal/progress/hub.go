package progress

import (
	"time"

	"github.com/gofabric/fabric/provider"
)

// Hub is the wake-up machinery of every waitable object (CQ, counter, EQ),
// written once: its progress sources, its Notifier and its wait object.
// Objects embed a Hub, which gives them Sources, AddSource, RemoveSource,
// Progress and WaitFD (and TryWait, unless they refine it), and call Wake
// after each write, Progress before reading an empty queue, and Block in
// their blocking reads. None of these makes an interface call or allocates
// beyond the sources' own Progress.
type Hub struct {
	set      Set
	notifier Notifier
	// fd is the FI_WAIT_FD wait object, nil for other wait objects.
	fd   *FDWait
	wait provider.WaitObj
	// member links an FI_WAIT_SET object to its wait set (JoinSet).
	member *member
}

// CheckWaitObj validates a wait object kind: NONE, UNSPEC, FD, MUTEX_COND,
// YIELD, SET (the object then joins a WaitSet with JoinSet) and POLLFD
// (PollFDs) are supported; anything else EINVAL.
func CheckWaitObj(w provider.WaitObj) error {
	switch w {
	case provider.WaitNone, provider.WaitUnspec, provider.WaitFD, provider.WaitMutexCond, provider.WaitYield,
		provider.WaitSet, provider.WaitPollFD:
		return nil
	}
	return provider.EINVAL
}

// Init prepares the hub for wait object w (creating the descriptors for
// FI_WAIT_FD).
func (h *Hub) Init(w provider.WaitObj) error {
	if err := CheckWaitObj(w); err != nil {
		return err
	}
	h.wait = w
	if w == provider.WaitFD || w == provider.WaitPollFD {
		fd, err := NewFDWait()
		if err != nil {
			return err
		}
		h.fd = fd
	}
	return nil
}

// WaitObj returns the wait object kind.
func (h *Hub) WaitObj() provider.WaitObj { return h.wait }

// Sources is the set of progress sources driven by reads of the object.
func (h *Hub) Sources() *Set { return &h.set }

// Progress drives progress of the bound sources once (in the caller's
// goroutine).
func (h *Hub) Progress() { h.set.Run() }

// Closed reports whether Close was called.
func (h *Hub) Closed() bool { return h.notifier.Closed() }

// AddSource binds a progress source (an endpoint, a peer); for FI_WAIT_FD
// its descriptor joins the wait set when it implements provider.FDWaiter.
// A nil p is accepted and ignored; after Close it returns EBADF.
func (h *Hub) AddSource(p provider.Progresser) error {
	if h.notifier.Closed() {
		return provider.EBADF
	}
	if p == nil {
		return nil
	}
	if err := h.set.Add(p); err != nil {
		return err
	}
	if h.fd != nil {
		if err := h.fd.AddSource(p); err != nil {
			h.set.Remove(p)
			return err
		}
	}
	if h.member != nil {
		if err := h.member.ws.addSource(p); err != nil {
			if h.fd != nil {
				h.fd.RemoveSource(p)
			}
			h.set.Remove(p)
			return err
		}
	}
	return nil
}

// RemoveSource unbinds a progress source (undoes AddSource).
func (h *Hub) RemoveSource(p provider.Progresser) {
	if p == nil {
		return
	}
	if h.fd != nil {
		h.fd.RemoveSource(p)
	}
	if h.member != nil && h.set.Contains(p) {
		h.member.ws.removeSource(p)
	}
	h.set.Remove(p)
}

// Wake wakes blocked readers and marks the FD wait object readable.
// Writers call it after publishing; it costs an atomic load or two when
// nobody waits and the FD is already signalled (or absent).
func (h *Hub) Wake() {
	h.notifier.Notify()
	if h.fd != nil {
		h.fd.Signal()
	}
	if h.member != nil {
		h.member.signal()
	}
}

// Block waits for ready as Notifier.Block does, with the policy of the
// wait object: FI_WAIT_NONE gives ENOSYS at once (blocking reads are not
// allowed, fi_cq(3)); FI_WAIT_YIELD polls with runtime.Gosched.
func (h *Hub) Block(deadline time.Time, done <-chan struct{}, ready func() bool) error {
	if h.wait == provider.WaitNone {
		return provider.ENOSYS
	}
	return h.notifier.Block(Options{Deadline: deadline, Done: done, Set: &h.set, Yield: h.wait == provider.WaitYield}, ready)
}

// WaitFD returns the FI_WAIT_FD descriptor (fi_control FI_GETWAIT). Like
// libfabric's util objects it returns ENODATA for FI_WAIT_NONE; other wait
// objects have no descriptor to hand out and give ENOSYS.
func (h *Hub) WaitFD() (int, error) {
	switch {
	case h.notifier.Closed():
		return -1, provider.EBADF
	case h.wait == provider.WaitNone:
		return -1, provider.ENODATA
	case h.fd == nil, h.wait == provider.WaitPollFD:
		return -1, provider.ENOSYS
	}
	fd := h.fd.FD()
	if fd < 0 {
		return -1, provider.EBADF
	}
	return fd, nil
}

// PollFDs is fi_control(FI_GETWAIT) of an FI_WAIT_POLLFD object: it
// appends the descriptors to poll for reading to dst (see FDWait.PollFDs)
// and returns the change index. ENODATA for FI_WAIT_NONE, ENOSYS for the
// other wait objects, EBADF once closed.
func (h *Hub) PollFDs(dst []int) ([]int, uint64, error) {
	switch {
	case h.notifier.Closed():
		return dst, 0, provider.EBADF
	case h.wait == provider.WaitNone:
		return dst, 0, provider.ENODATA
	case h.wait != provider.WaitPollFD:
		return dst, 0, provider.ENOSYS
	}
	return h.fd.PollFDs(dst)
}

// TryWait prepares for waiting on the wait object (fi_trywait): it resets
// the FD signal, drives progress, and then the caller checks whether its
// object has work (returning EAGAIN if so). It returns EINVAL for
// FI_WAIT_NONE, as libfabric does.
func (h *Hub) TryWait() error {
	if h.notifier.Closed() {
		return provider.EBADF
	}
	if h.wait == provider.WaitNone {
		return provider.EINVAL
	}
	if h.fd != nil {
		h.fd.Reset()
	}
	h.set.Run()
	return nil
}

// Close wakes and fails blocked readers and closes the descriptors.
func (h *Hub) Close() error {
	h.notifier.Close()
	h.leaveSet()
	if h.fd != nil {
		return h.fd.Close()
	}
	return nil
}
