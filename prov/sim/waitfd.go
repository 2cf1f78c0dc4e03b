package sim

import (
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// FI_WAIT_FD support (provider.FDWaiter). The network has one eventfd,
// created at the first WaitFD call of one of its endpoints and closed
// when the last endpoint that asked for it closes. It is readable while
// messages or completions are in flight (progress has work: the
// simulation's equivalent of a socket with data waiting), and made
// unreadable by the progress step that leaves nothing in flight.
//
// The descriptor has its own lock, fdMu, taken after the network's:
// WaitFD does not take the network's lock, because the root package
// calls it with the lock of an FI_WAIT_FD wait object held, a lock that
// a completion written by a progress step (under the network's lock)
// takes to signal that wait object.

var _ provider.FDWaiter = (*endpoint)(nil)

// WaitFD returns the network's wait descriptor, or -1 if none can be
// made (closed endpoint, no eventfd on this system). The descriptor is
// made readable: the next progress step makes it unreadable again if
// nothing is in flight.
func (ep *endpoint) WaitFD() int {
	n := ep.n
	n.fdMu.Lock()
	defer n.fdMu.Unlock()
	if ep.state.Load() == stateClosed {
		return -1
	}
	if n.fd < 0 {
		fd, err := sys.EventFDOpen()
		if err != nil {
			return -1
		}
		n.fd = fd
		n.fdArmed.Store(false)
		n.fdOn.Store(true)
	}
	if !ep.fdUser {
		ep.fdUser = true
		n.fdUsers++
	}
	if !n.fdArmed.Load() && sys.EventFDSignal(n.fd) == nil {
		n.fdArmed.Store(true)
	}
	return n.fd
}

// fdArm makes the descriptor readable; n.mu is held. Without a
// descriptor, or with it readable already, it costs an atomic load.
func (n *Network) fdArm() {
	if !n.fdOn.Load() || n.fdArmed.Load() {
		return
	}
	n.fdMu.Lock()
	if n.fd >= 0 && !n.fdArmed.Load() && sys.EventFDSignal(n.fd) == nil {
		n.fdArmed.Store(true)
	}
	n.fdMu.Unlock()
}

// fdDisarm makes the descriptor unreadable once nothing is in flight;
// n.mu is held.
func (n *Network) fdDisarm() {
	if !n.fdArmed.Load() || n.busy() {
		return
	}
	n.fdMu.Lock()
	if n.fd >= 0 && n.fdArmed.Load() && sys.EventFDDrain(n.fd) == nil {
		n.fdArmed.Store(false)
	}
	n.fdMu.Unlock()
}

// fdRelease drops ep's use of the descriptor (ep is closing).
func (n *Network) fdRelease(ep *endpoint) {
	n.fdMu.Lock()
	defer n.fdMu.Unlock()
	if !ep.fdUser {
		return
	}
	ep.fdUser = false
	n.fdUsers--
	if n.fdUsers == 0 && n.fd >= 0 {
		_ = sys.EventFDClose(n.fd)
		n.fd = -1
		n.fdOn.Store(false)
		n.fdArmed.Store(false)
	}
}
