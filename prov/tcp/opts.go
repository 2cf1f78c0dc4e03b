package tcp

import (
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Endpoint options (fi_getopt / fi_setopt at FI_OPT_ENDPOINT) and
// fi_control(FI_BACKLOG). The root package answers FI_OPT_MIN_MULTI_RECV,
// FI_OPT_RX_SIZE (its receive queue) and the options no provider has; the
// providers see the rest.
//
//	FI_OPT_CM_DATA_SIZE                     read-only: CMDataSize
//	FI_OPT_SEND_BUF_SIZE / RECV_BUF_SIZE    SO_SNDBUF / SO_RCVBUF of the socket (MSG) or of
//	                                        every connection, present and future (RDM);
//	                                        getopt reports what the kernel reports (it doubles
//	                                        the request and caps it at wmem_max / rmem_max)
//	FI_OPT_TX_SIZE                          before enable: 1 ... 65536 operations
//	FI_BACKLOG (passive endpoints)          listen(2) backlog, before or after fi_listen

// sockBufOpt maps FI_OPT_SEND_BUF_SIZE / RECV_BUF_SIZE to (send, ok).
func sockBufOpt(name int) (send, ok bool) {
	switch name {
	case provider.OptSendBufSize:
		return true, true
	case provider.OptRecvBufSize:
		return false, true
	}
	return false, false
}

// sockBufValue checks a socket buffer size request: the kernel takes an int.
func sockBufValue(v uint64) (int, error) {
	if v == 0 || v > 1<<30 {
		return 0, provider.EINVAL
	}
	return int(v), nil
}

// GetOpt returns FI_OPT_CM_DATA_SIZE and the socket buffer sizes in
// effect; other options give ENOPROTOOPT.
func (ep *endpoint) GetOpt(name int) (uint64, error) {
	if name == provider.OptCMDataSize {
		return CMDataSize, nil
	}
	if send, ok := sockBufOpt(name); ok {
		ep.mu.Lock()
		defer ep.mu.Unlock()
		if ep.state == epClosed {
			return 0, provider.EBADF
		}
		n, err := sys.SockBuf(ep.conn, send)
		return uint64(n), err
	}
	return 0, provider.ENOPROTOOPT
}

// SetOpt sets the socket buffer sizes, or the transmit queue depth before
// the endpoint is enabled. FI_OPT_CM_DATA_SIZE is read-only.
func (ep *endpoint) SetOpt(name int, v uint64) error {
	if send, ok := sockBufOpt(name); ok {
		n, err := sockBufValue(v)
		if err != nil {
			return err
		}
		ep.mu.Lock()
		defer ep.mu.Unlock()
		if ep.state == epClosed {
			return provider.EBADF
		}
		return sys.SetSockBuf(ep.conn, send, n)
	}
	if name == provider.OptTxSize {
		if v == 0 || v > maxQueueSize {
			return provider.EINVAL
		}
		ep.mu.Lock()
		defer ep.mu.Unlock()
		if ep.enabled {
			return provider.EOPBADSTATE
		}
		ep.tx.init(int(v))
		return nil
	}
	return provider.ENOPROTOOPT
}

// GetOpt returns FI_OPT_CM_DATA_SIZE (256).
func (p *pep) GetOpt(name int) (uint64, error) {
	if name == provider.OptCMDataSize {
		return CMDataSize, nil
	}
	return 0, provider.ENOPROTOOPT
}

// SetOpt: nothing is settable (FI_OPT_CM_DATA_SIZE is read-only).
func (p *pep) SetOpt(name int, v uint64) error { return provider.ENOPROTOOPT }

// SetBacklog sets the listen(2) backlog (fi_control FI_BACKLOG). Before
// Listen it is used by Listen; while listening the socket is put in the
// listening state again with the new backlog, which Linux honours. The
// kernel caps it at net.core.somaxconn.
func (p *pep) SetBacklog(n int) error {
	if n <= 0 {
		return provider.EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case pepClosed:
		return provider.EBADF
	case pepListening:
		if err := sys.TCPListen(p.conn, n); err != nil {
			return err
		}
	}
	p.backlog = n
	return nil
}

// Backlog returns the listen backlog in use (FI_BACKLOG).
func (p *pep) Backlog() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.listenBacklog()
}

// listenBacklog is the backlog Listen uses. p.mu is held.
func (p *pep) listenBacklog() int {
	if p.backlog > 0 {
		return p.backlog
	}
	return Backlog
}

// GetOpt returns the socket buffer sizes new and present connections use
// (read from the listening socket, which accepted connections inherit).
func (ep *rdmEP) GetOpt(name int) (uint64, error) {
	send, ok := sockBufOpt(name)
	if !ok {
		return 0, provider.ENOPROTOOPT
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state == rdmClosed {
		return 0, provider.EBADF
	}
	n, err := sys.SockBuf(ep.lis, send)
	return uint64(n), err
}

// SetOpt sets the socket buffer sizes of the listening socket and of every
// connection, present and future, or the transmit queue depth before the
// endpoint is enabled.
func (ep *rdmEP) SetOpt(name int, v uint64) error {
	if send, ok := sockBufOpt(name); ok {
		n, err := sockBufValue(v)
		if err != nil {
			return err
		}
		ep.mu.Lock()
		defer ep.mu.Unlock()
		if ep.state == rdmClosed {
			return provider.EBADF
		}
		if err := sys.SetSockBuf(ep.lis, send, n); err != nil {
			return err
		}
		i := 0
		if send {
			i = 1
		}
		ep.sockBuf[i] = n
		for _, c := range ep.peers {
			if c.sock != nil {
				_ = sys.SetSockBuf(c.sock, send, n)
			}
		}
		for _, in := range ep.incoming {
			_ = sys.SetSockBuf(in.sock, send, n)
		}
		return nil
	}
	if name == provider.OptTxSize {
		if v == 0 || v > maxQueueSize {
			return provider.EINVAL
		}
		ep.mu.Lock()
		defer ep.mu.Unlock()
		if ep.state != rdmOpen {
			return provider.EOPBADSTATE
		}
		ep.txSize = int(v)
		return nil
	}
	return provider.ENOPROTOOPT
}

// applySockBufs gives a new connection socket the requested buffer sizes.
// ep.mu is held.
func (ep *rdmEP) applySockBufs(s *sys.Conn) {
	if n := ep.sockBuf[0]; n > 0 {
		_ = sys.SetSockBuf(s, false, n)
	}
	if n := ep.sockBuf[1]; n > 0 {
		_ = sys.SetSockBuf(s, true, n)
	}
}

var (
	_ provider.OptionHandler = (*rdmEP)(nil)
	_ provider.Backlogger    = (*pep)(nil)
)
