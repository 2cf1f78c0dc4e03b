package tcp

import (
	"log/slog"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Connection management of RDM endpoints: one rdmConn per peer address,
// created by the first send to the peer (connect) or by the peer's connect
// request (accept).

// Connection states.
type connState uint8

const (
	connTCP      connState = iota // TCP connect in progress
	connReqSent                   // connect request written (or being written); reading the response
	connWaitPeer                  // our request lost a simultaneous connect: the peer's is coming
	connUp                        // connected: frames flow
	connDead                      // failed or replaced; no longer in the endpoint's tables
)

// rdmCMTimeout bounds connection setup, including the wait for the peer's
// request after losing a simultaneous connect.
const rdmCMTimeout = 10 * time.Second

// rdmConn is the connection to one peer.
type rdmConn struct {
	ep    *rdmEP
	key   string // the peer's listening address (ep.peers key); "" for a loopback's accepting side
	addr  []byte // the peer's listening address: the source of its messages
	index uint32 // our peer index (announced to the peer)
	// remoteIndex is the index the peer announced: it goes into
	// ctrl.conn_id of every rxm header we send.
	remoteIndex uint32
	remotePID   uint32
	state       connState
	gen         uint32 // bumped when the socket is replaced
	sock        *sys.Conn
	deadline    time.Time

	out    []byte // CM bytes to write before any frame (request or accept)
	cmIn   [tcpwire.MaxCMSize]byte
	cmHave int
	cmNeed int

	tx rdmTxQueue
	rx rdmRx

	acks   []*rdmTx           // operations written that wait for the peer's ACK, oldest first
	fenced bool               // the next frame is fenced and waits for earlier operations
	sar    map[uint64]*rdmSAR // SAR messages being received, by msg_id (rdm_sar.go)
	// ext: the peer is of this implementation (rxmwire.GoMarker), so a
	// refused RMA access is answered, not fatal (rdm_rma.go).
	ext bool
}

// rdmIncome is an accepted socket whose connect request is being read.
type rdmIncome struct {
	sock     *sys.Conn
	peer     []byte
	buf      [tcpwire.MaxCMSize]byte
	have     int
	need     int
	out      []byte // a reject being written; the socket closes after it
	deadline time.Time
}

// conn returns the connection to dest, starting one if there is none.
// ep.mu is held.
func (ep *rdmEP) conn(dest []byte) (*rdmConn, error) {
	if c := ep.peers[string(dest)]; c != nil {
		return c, nil
	}
	c := &rdmConn{ep: ep, key: string(dest), addr: append([]byte(nil), dest...)}
	c.rx.init()
	ep.addConn(c)
	if err := c.dial(); err != nil {
		ep.removeConn(c)
		return nil, err
	}
	ep.peers[c.key] = c
	ep.kick()
	return c, nil
}

// dial opens a socket from the endpoint's IP (as rxm does: the peer
// identifies us by that IP and the port in the connect data) and starts
// the connect; the request is written once the socket is connected.
func (c *rdmConn) dial() error {
	ep := c.ep
	src := withPort(ep.name, 0)
	s, err := sys.TCPSocket(c.addr, false)
	if err != nil {
		return err
	}
	if err := sys.TCPBind(s, src); err != nil {
		s.Close()
		return err
	}
	if ep.nodelay {
		_ = sys.TCPSetNoDelay(s, true)
	}
	ep.applySockBufs(s)
	c.sock = s
	ep.watch(s.FD())
	c.gen++
	c.state = connTCP
	c.deadline = time.Now().Add(rdmCMTimeout)
	switch e := sys.TCPConnect(s, c.addr); e {
	case 0:
		c.state = connReqSent
		c.writeRequest()
	case provider.EINPROGRESS:
	default:
		s.Close()
		c.sock = nil
		return e.AsError()
	}
	logCM(provider.LevelInfo, "rdm: connecting", c.addr)
	return nil
}

// writeRequest encodes the connect request (now that our index is known)
// for the socket writer.
func (c *rdmConn) writeRequest() {
	ep := c.ep
	port := uint16(0)
	if a, _, ok := decodeSockaddr(ep.name); ok {
		port = a.AP.Port()
	}
	data := rxmwire.AppendConnect(nil, &rxmwire.Connect{Port: port, FlowCtrl: rxmwire.FlowCtrlPeerOff, Pad: rxmwire.GoMarker,
		EagerLimit: rxmwire.EagerLimit, RxSize: rxmwire.RxSize, ConnID: ep.rdmConnID(c.index)})
	c.out, _ = tcpwire.AppendCM(c.out[:0], tcpwire.CMConnReq, data)
	c.cmHave, c.cmNeed = 0, tcpwire.CMHeaderSize
}

// wantWrite reports whether the socket is waited for writability.
func (c *rdmConn) wantWrite() bool {
	return c.state == connTCP || len(c.out) > 0 || (c.state == connUp && c.tx.len() > 0 && !c.fenced)
}

// progress advances c: connect, CM exchange, frames out and in. ep.mu is
// held.
func (c *rdmConn) progress() {
	switch c.state {
	case connTCP:
		done, e := sys.TCPConnectDone(c.sock)
		if !done {
			if time.Now().After(c.deadline) {
				c.fail(provider.ETIMEDOUT, true)
			}
			return
		}
		if e != 0 {
			c.fail(e, true)
			return
		}
		c.state = connReqSent
		c.writeRequest()
		fallthrough
	case connReqSent:
		if !c.flushOut() {
			return
		}
		if len(c.out) == 0 {
			c.readResponse()
		}
		if c.state != connUp {
			if c.state != connDead && time.Now().After(c.deadline) {
				c.fail(provider.ETIMEDOUT, true)
			}
			return
		}
	case connWaitPeer:
		if time.Now().After(c.deadline) {
			c.fail(provider.ETIMEDOUT, true)
		}
		return
	case connUp:
	default:
		return
	}
	if !c.flushOut() || len(c.out) > 0 {
		return
	}
	c.flush()
	if c.state == connUp {
		c.progressRx()
	}
	if c.state == connUp && c.tx.len() > c.tx.lazy {
		c.flush()
	}
}

// flushOut writes pending CM bytes; false if the connection failed.
func (c *rdmConn) flushOut() bool {
	for len(c.out) > 0 {
		n, e := c.sock.Write(c.out)
		switch {
		case e == provider.EAGAIN || e == provider.EINTR:
			return true
		case e != 0:
			c.fail(e, true)
			return false
		}
		c.out = c.out[n:]
	}
	return true
}

// readResponse reads the connect response (or reject) without blocking.
func (c *rdmConn) readResponse() {
	for c.cmHave < c.cmNeed {
		n, e := c.sock.Read(c.cmIn[c.cmHave:c.cmNeed])
		if e == provider.EAGAIN || e == provider.EINTR {
			return
		}
		if e != 0 || n == 0 {
			if e == 0 {
				e = provider.ECONNRESET
			}
			c.fail(e, true)
			return
		}
		c.cmHave += n
		if c.cmHave == tcpwire.CMHeaderSize && c.cmNeed == tcpwire.CMHeaderSize {
			typ, dlen, _, err := tcpwire.ParseCMHeader(c.cmIn[:])
			if err != nil || (typ != tcpwire.CMConnResp && typ != tcpwire.CMReject) {
				logCM(provider.LevelWarn, "rdm: malformed connect response", c.addr)
				c.fail(provider.EIO, true)
				return
			}
			c.cmNeed += dlen
		}
	}
	data := c.cmIn[tcpwire.CMHeaderSize:c.cmNeed]
	if c.cmIn[1] == tcpwire.CMReject {
		reason := rxmwire.ParseReject(data)
		c.sock.Close()
		c.sock = nil
		if reason == rxmwire.RejectAlready {
			// The peer's request won; it is on its way (or already
			// adopted, in which case we are no longer in connReqSent).
			logCM(provider.LevelInfo, "rdm: simultaneous connect, waiting for the peer's request", c.addr)
			c.state = connWaitPeer
			return
		}
		logCM(provider.LevelWarn, "rdm: connection refused", c.addr)
		c.fail(provider.ECONNREFUSED, true)
		return
	}
	a, err := rxmwire.ParseAccept(data)
	if err != nil {
		logCM(provider.LevelWarn, "rdm: malformed accept data", c.addr)
		c.fail(provider.EIO, true)
		return
	}
	c.remoteIndex, c.remotePID = rxmwire.ConnIndex(a.ConnID), rxmwire.ConnPID(a.ConnID)
	c.ext = a.Pad == rxmwire.GoMarker
	c.state = connUp
	logCM(provider.LevelInfo, "rdm: connected", c.addr)
}

// fail ends the connection: queued and in-flight operations complete with
// err (when report), the socket closes and the peer entry is forgotten,
// so that the next send reconnects. ep.mu is held.
func (c *rdmConn) fail(err provider.Errno, report bool) {
	if c.state == connDead {
		return
	}
	ep := c.ep
	if c.state == connUp || c.state == connReqSent {
		logCM(provider.LevelInfo, "rdm: connection ended", c.addr, errAttr(err))
	}
	c.state = connDead
	if c.sock != nil {
		c.sock.Close()
		c.sock = nil
	}
	ep.removeConn(c)
	c.failOps(err, report)
}

// failOps completes c's queued operations, its operations waiting for the
// peer (rendezvous read-done, ACK, read response, atomic response) and its
// outstanding reads with err.
func (c *rdmConn) failOps(err provider.Errno, report bool) {
	ep := c.ep
	for _, t := range c.tx.drain() {
		if t.kind == txRndv {
			delete(ep.rndv, t.key)
		}
		if t.kind == txAtomic {
			delete(ep.amo, t.key)
		}
		if t.kind == txCtrl && t.rd != nil {
			c.failRead(t.rd, err, report)
		}
		ep.finishTx(t, err, report)
	}
	c.failWaiting(err, report, false)
	c.rx.resetFrame()
}

// acceptAll accepts pending connections on the listening socket. ep.mu is
// held.
func (ep *rdmEP) acceptAll() {
	for {
		s, peer, e := sys.TCPAccept(ep.lis)
		if e != 0 {
			return
		}
		if ep.nodelay {
			_ = sys.TCPSetNoDelay(s, true)
		}
		ep.applySockBufs(s)
		ep.watch(s.FD())
		ep.incoming = append(ep.incoming, &rdmIncome{sock: s, peer: peer, need: tcpwire.CMHeaderSize,
			deadline: time.Now().Add(rdmCMTimeout)})
	}
}

// progressIncoming reads the connect requests of accepted sockets and
// answers them. ep.mu is held.
func (ep *rdmEP) progressIncoming() {
	k := 0
	for _, in := range ep.incoming {
		if !ep.readIncoming(in) {
			ep.incoming[k] = in
			k++
		}
	}
	clear(ep.incoming[k:])
	ep.incoming = ep.incoming[:k]
}

// readIncoming advances one accepted socket; true when it is finished
// (adopted by a connection, rejected or dropped).
func (ep *rdmEP) readIncoming(in *rdmIncome) bool {
	if len(in.out) > 0 {
		// Writing a reject.
		n, e := in.sock.Write(in.out)
		if e == provider.EAGAIN && time.Now().Before(in.deadline) {
			return false
		}
		if e == 0 && n < len(in.out) {
			in.out = in.out[n:]
			return false
		}
		_ = sys.TCPShutdown(in.sock)
		in.sock.Close()
		return true
	}
	for in.have < in.need {
		n, e := in.sock.Read(in.buf[in.have:in.need])
		if e == provider.EAGAIN || e == provider.EINTR {
			if time.Now().After(in.deadline) {
				in.sock.Close()
				return true
			}
			return false
		}
		if e != 0 || n == 0 {
			in.sock.Close()
			return true
		}
		in.have += n
		if in.have == tcpwire.CMHeaderSize && in.need == tcpwire.CMHeaderSize {
			typ, dlen, _, err := tcpwire.ParseCMHeader(in.buf[:])
			if err != nil || typ != tcpwire.CMConnReq {
				logCM(provider.LevelWarn, "rdm: dropping a malformed connection request", in.peer)
				in.sock.Close()
				return true
			}
			in.need += dlen
		}
	}
	return ep.handleRequest(in)
}

// handleRequest answers a complete connect request as rxm does (see the
// package comment on simultaneous connects).
func (ep *rdmEP) handleRequest(in *rdmIncome) bool {
	req, err := rxmwire.ParseConnect(in.buf[tcpwire.CMHeaderSize:in.need])
	if err != nil {
		logCM(provider.LevelWarn, "rdm: refusing a connection request", in.peer, slog.String("reason", err.Error()))
		return ep.reject(in, rxmwire.RejectConnRefused)
	}
	from := withPort(in.peer, req.Port)
	pid := rxmwire.ConnPID(req.ConnID)
	c := ep.peers[string(from)]
	switch {
	case c == nil:
		c = &rdmConn{ep: ep, key: string(from), addr: from}
		c.rx.init()
		ep.addConn(c)
		ep.peers[c.key] = c
	case c.state == connTCP || c.state == connReqSent:
		switch cmpAddr(from, ep.name) {
		case -1:
			logCM(provider.LevelInfo, "rdm: simultaneous connect, rejecting the peer's request", from)
			return ep.reject(in, rxmwire.RejectAlready)
		case 1:
			logCM(provider.LevelInfo, "rdm: simultaneous connect, accepting the peer's request", from)
			ep.orphans = append(ep.orphans, c.sock)
			c.sock = nil
		default:
			// Connecting to ourselves: the accepting side is a
			// connection of its own, known by index only.
			c = &rdmConn{ep: ep, addr: from}
			c.rx.init()
			ep.addConn(c)
		}
	case c.state == connWaitPeer:
	case c.state == connUp:
		if c.remotePID != 0 && c.remotePID == pid {
			logCM(provider.LevelInfo, "rdm: already connected, rejecting the peer's request", from)
			return ep.reject(in, rxmwire.RejectAlready)
		}
		// The peer restarted: the old connection is replaced, and what
		// was in flight on it fails.
		logCM(provider.LevelInfo, "rdm: peer reconnected, replacing the old connection", from)
		ep.orphans = append(ep.orphans, c.sock)
		c.sock = nil
		c.failInFlight(provider.ECONNRESET)
	}
	c.sock = in.sock
	c.gen++
	c.remoteIndex, c.remotePID = rxmwire.ConnIndex(req.ConnID), pid
	c.ext = req.Pad == rxmwire.GoMarker
	acc := rxmwire.AppendAccept(nil, &rxmwire.Accept{ConnID: ep.rdmConnID(c.index), RxSize: rxmwire.RxSize,
		FlowCtrl: rxmwire.FlowCtrlPeerOff, Pad: goPad(c.ext)})
	c.out, _ = tcpwire.AppendCM(c.out[:0], tcpwire.CMConnResp, acc)
	c.state = connUp
	c.rx.resetStream()
	logCM(provider.LevelInfo, "rdm: accepted", from)
	c.progress()
	return true
}

// failInFlight fails what was sent on a connection that is replaced:
// operations waiting for the peer and reads waiting for data; frames not
// yet written stay queued for the new connection, except a partly written
// one and the control frames of the old stream, which fail too.
func (c *rdmConn) failInFlight(err provider.Errno) {
	ep := c.ep
	if t := c.tx.head(); t != nil && t.off > 0 {
		c.tx.pop()
		switch t.kind {
		case txRndv:
			delete(ep.rndv, t.key)
		case txAtomic:
			delete(ep.amo, t.key)
		}
		ep.finishTx(t, err, true)
	}
	for _, t := range c.tx.dropCtrl() {
		if t.rd != nil {
			c.failRead(t.rd, err, true)
		}
	}
	c.failWaiting(err, true, true)
}

// reject answers a request with reject data, then closes the socket.
func (ep *rdmEP) reject(in *rdmIncome, reason uint8) bool {
	in.out, _ = tcpwire.AppendCM(nil, tcpwire.CMReject, rxmwire.AppendReject(nil, reason))
	in.deadline = time.Now().Add(time.Second)
	return ep.readIncoming(in)
}

// cmpAddr compares two socket addresses as rxm does (IP bytes, then port
// in network order): -1, 0 or 1.
func cmpAddr(a, b []byte) int {
	x, _, ok1 := decodeSockaddr(a)
	y, _, ok2 := decodeSockaddr(b)
	if !ok1 || !ok2 {
		return 0
	}
	if c := x.AP.Addr().Compare(y.AP.Addr()); c != 0 {
		return c
	}
	switch {
	case x.AP.Port() < y.AP.Port():
		return -1
	case x.AP.Port() > y.AP.Port():
		return 1
	}
	return 0
}
