package udp

import (
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Endpoint options (fi_getopt / fi_setopt at FI_OPT_ENDPOINT) the root
// package leaves to the provider: FI_OPT_SEND_BUF_SIZE and
// FI_OPT_RECV_BUF_SIZE are SO_SNDBUF and SO_RCVBUF of the endpoint's
// socket, settable at any time (and kept when SetName rebinds it); getopt
// reports what the kernel reports, which doubles the request and caps it
// at net.core.wmem_max / rmem_max. Sends are not queued (a send is one
// sendmsg), so FI_OPT_TX_SIZE is not settable: ENOPROTOOPT.

var _ provider.OptionHandler = (*endpoint)(nil)

func sockBufOpt(name int) (send, ok bool) {
	switch name {
	case provider.OptSendBufSize:
		return true, true
	case provider.OptRecvBufSize:
		return false, true
	}
	return false, false
}

// GetOpt returns the socket buffer sizes in effect.
func (ep *endpoint) GetOpt(name int) (uint64, error) {
	send, ok := sockBufOpt(name)
	if !ok {
		return 0, provider.ENOPROTOOPT
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state.Load() == stateClosed {
		return 0, provider.EBADF
	}
	n, err := sys.SockBuf(ep.sock, send)
	return uint64(n), err
}

// SetOpt sets the socket buffer sizes.
func (ep *endpoint) SetOpt(name int, v uint64) error {
	send, ok := sockBufOpt(name)
	if !ok {
		return provider.ENOPROTOOPT
	}
	if v == 0 || v > 1<<30 {
		return provider.EINVAL
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state.Load() == stateClosed {
		return provider.EBADF
	}
	if err := sys.SetSockBuf(ep.sock, send, int(v)); err != nil {
		return err
	}
	i := 0
	if send {
		i = 1
	}
	ep.sockBuf[i] = int(v)
	return nil
}

// applySockBufs gives a new socket the sizes set so far. ep.mu is held.
func (ep *endpoint) applySockBufs(s *sys.Conn) {
	if n := ep.sockBuf[0]; n > 0 {
		_ = sys.SetSockBuf(s, false, n)
	}
	if n := ep.sockBuf[1]; n > 0 {
		_ = sys.SetSockBuf(s, true, n)
	}
}
