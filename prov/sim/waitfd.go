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

var _ provider.FDWaiter = (*endpoint)(nil)

// WaitFD returns the network's wait descriptor, or -1 if none can be
// made (closed endpoint, no eventfd on this system).
func (ep *endpoint) WaitFD() int {
	n := ep.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if ep.closing {
		return -1
	}
	if n.fd < 0 {
		fd, err := sys.EventFDOpen()
		if err != nil {
			return -1
		}
		n.fd, n.fdArmed = fd, false
	}
	if !ep.fdUser {
		ep.fdUser = true
		n.fdUsers++
	}
	if n.busy() {
		n.fdArm()
	}
	return n.fd
}

// fdArm makes the descriptor readable; n.mu is held.
func (n *Network) fdArm() {
	if n.fd >= 0 && !n.fdArmed {
		n.fdArmed = sys.EventFDSignal(n.fd) == nil
	}
}

// fdDisarm makes the descriptor unreadable once nothing is in flight;
// n.mu is held.
func (n *Network) fdDisarm() {
	if n.fd >= 0 && n.fdArmed && !n.busy() {
		n.fdArmed = sys.EventFDDrain(n.fd) != nil
	}
}

// fdRelease drops ep's use of the descriptor; n.mu is held.
func (n *Network) fdRelease(ep *endpoint) {
	if !ep.fdUser {
		return
	}
	ep.fdUser = false
	n.fdUsers--
	if n.fdUsers == 0 && n.fd >= 0 {
		_ = sys.EventFDClose(n.fd)
		n.fd, n.fdArmed = -1, false
	}
}
