package progress

import (
	"time"

	"github.com/gofabric/fabric/provider"
)

// Hub bundles what every waitable object (CQ, counter, EQ) needs: its
// progress sources, its Notifier, and its wait object. Objects embed one
// and call Signal after each write, Run before reading an empty queue, and
// Block in their blocking reads.
type Hub struct {
	Set Set
	N   Notifier
	// FD is the FI_WAIT_FD wait object, nil for other wait objects.
	FD   *FDWait
	wait provider.WaitObj
}

// CheckWaitObj validates a wait object kind: NONE, UNSPEC, FD, MUTEX_COND
// and YIELD are supported; FI_WAIT_SET and FI_WAIT_POLLFD give ENOSYS (not
// implemented); anything else EINVAL.
func CheckWaitObj(w provider.WaitObj) error {
	switch w {
	case provider.WaitNone, provider.WaitUnspec, provider.WaitFD, provider.WaitMutexCond, provider.WaitYield:
		return nil
	case provider.WaitSet, provider.WaitPollFD:
		return provider.ENOSYS
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
	if w == provider.WaitFD {
		fd, err := NewFDWait()
		if err != nil {
			return err
		}
		h.FD = fd
	}
	return nil
}

// WaitObj returns the wait object kind.
func (h *Hub) WaitObj() provider.WaitObj { return h.wait }

// AddSource binds a progress source (and its descriptor, for FI_WAIT_FD).
// A nil p is accepted and ignored.
func (h *Hub) AddSource(p provider.Progresser) error {
	if p == nil {
		return nil
	}
	if err := h.Set.Add(p); err != nil {
		return err
	}
	if h.FD != nil {
		if err := h.FD.AddSource(p); err != nil {
			h.Set.Remove(p)
			return err
		}
	}
	return nil
}

// RemoveSource undoes AddSource.
func (h *Hub) RemoveSource(p provider.Progresser) {
	if p == nil {
		return
	}
	if h.FD != nil {
		h.FD.RemoveSource(p)
	}
	h.Set.Remove(p)
}

// Signal wakes blocked readers and marks the FD wait object readable.
// Writers call it after publishing; it costs an atomic load or two when
// nobody waits and the FD is already signalled (or absent).
func (h *Hub) Signal() {
	h.N.Notify()
	if h.FD != nil {
		h.FD.Signal()
	}
}

// Block waits for ready as Notifier.Block does, with the policy of the
// wait object: FI_WAIT_NONE gives ENOSYS at once (blocking reads are not
// allowed, fi_cq(3)); FI_WAIT_YIELD polls with runtime.Gosched.
func (h *Hub) Block(deadline time.Time, done <-chan struct{}, ready func() bool) error {
	if h.wait == provider.WaitNone {
		return provider.ENOSYS
	}
	return h.N.Block(Options{Deadline: deadline, Done: done, Set: &h.Set, Yield: h.wait == provider.WaitYield}, ready)
}

// WaitFD returns the FI_WAIT_FD descriptor (fi_control FI_GETWAIT). Like
// libfabric's util objects it returns ENODATA for FI_WAIT_NONE; other wait
// objects have no descriptor to hand out and give ENOSYS.
func (h *Hub) WaitFD() (int, error) {
	switch {
	case h.N.Closed():
		return -1, provider.EBADF
	case h.wait == provider.WaitNone:
		return -1, provider.ENODATA
	case h.FD == nil:
		return -1, provider.ENOSYS
	}
	fd := h.FD.FD()
	if fd < 0 {
		return -1, provider.EBADF
	}
	return fd, nil
}

// TryWait prepares for waiting on the wait object (fi_trywait): it resets
// the FD signal, drives progress, and then the caller checks whether its
// object has work (returning EAGAIN if so). It returns EINVAL for
// FI_WAIT_NONE, as libfabric does.
func (h *Hub) TryWait() error {
	if h.N.Closed() {
		return provider.EBADF
	}
	if h.wait == provider.WaitNone {
		return provider.EINVAL
	}
	if h.FD != nil {
		h.FD.Reset()
	}
	h.Set.Run()
	return nil
}

// Close wakes and fails blocked readers and closes the descriptors.
func (h *Hub) Close() error {
	h.N.Close()
	if h.FD != nil {
		return h.FD.Close()
	}
	return nil
}
