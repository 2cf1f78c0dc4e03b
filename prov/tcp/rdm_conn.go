package tcp

import (
	"cmp"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
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
	connDraining                  // closed for idleness: shut for writing, read until the peer closes
	connDead                      // failed or replaced; no longer in the endpoint's tables
)

// rdmCMTimeout bounds connection setup, including the wait for the peer's
// request after losing a simultaneous connect, and the drain of a
// connection closed for idleness.
const rdmCMTimeout = 10 * time.Second

// Idle connections. An RDM endpoint keeps at most RDMMaxConns connections
// (FI_TCP_RDM_MAX_CONNS; 0: no bound) open while they are idle: when a
// new connection takes it beyond, the least recently used idle ones
// (nothing queued, nothing in flight either way) are closed until it is
// 7/8 of the bound again; connections in use are never closed, so the
// bound may be exceeded while all are busy. A peer is reconnected when it
// is next sent to, by whichever side sends.
//
// The close is graceful, so that nothing the peer sent meanwhile is lost:
// the socket is shut for writing (the peer reads end of stream) and read
// until the peer closes its side, its messages delivered as usual; a new
// connection to the same peer is read only once that drain has finished,
// keeping the peer's messages in order. A C tcp;ofi_rxm peer sees what it
// sees when a peer closes a connection: it shuts its side down, and
// reconnects on its next send. Our side of a connection the peer closed
// this way, with nothing half-written and nothing in flight, moves the
// frames still queued to a new connection instead of failing them.
const (
	// RDMMaxConns is the default bound on idle connections per RDM endpoint.
	RDMMaxConns = 1024
	envMaxConns = "FI_TCP_RDM_MAX_CONNS"
)

// envMaxConnsValue reads FI_TCP_RDM_MAX_CONNS (a count, 0 for none).
func envMaxConnsValue() int {
	raw := os.Getenv(envMaxConns)
	if strings.TrimSpace(raw) == "" {
		return RDMMaxConns
	}
	v, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil || v < 0 {
		envFallback(envMaxConns, raw, "not a count, using the default")
		return RDMMaxConns
	}
	return v
}

// rdmConn is the connection to one peer.
type rdmConn struct {
	ep    *rdmEP
	key   string // the peer's listening address (ep.peers key); "" for a loopback's accepting side
	addr  []byte // the peer's listening address
	src   []byte // the source of the peer's messages if not addr: a transmit context's scalable endpoint (rxmwire.TypeGoSource)
	index uint32 // our peer index (announced to the peer)
	// remoteIndex is the index the peer announced: it goes into
	// ctrl.conn_id of every rxm header we send.
	remoteIndex uint32
	remotePID   uint32
	state       connState
	gen         uint32 // bumped when the socket is replaced
	sock        *sys.Conn
	deadline    time.Time
	lastUse     uint64    // ep.clock at the last send to the peer or frame from it
	pass        uint64    // ep.pass when progress last visited c
	inWork      bool      // in ep.work
	waitDrain   bool      // not read (nor watched) until the drain of the peer's previous connection ends
	eof         bool      // the peer closed its side: a half-written frame is finished, then a new connection
	retryAt     time.Time // connWaitPeer after a reject while draining: connect again then
	unexpRndv   int       // the peer's rendezvous requests queued as unexpected here

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
	// CMA (rdm_cma.go): local, the peer is on this host; as receiver, the
	// state of the check of the peer's pid and the nonce sent; as sender,
	// the nonce the peer sent.
	local     bool
	cmaState  int8
	cmaNonce  [rxmwire.GoCMANonceSize]byte
	cmaProof  *[rxmwire.GoCMANonceSize]byte
	cmaRemote [1]sys.RemoteIOV
}

// from returns the address the peer's messages come from (their source).
func (c *rdmConn) from() []byte {
	if c.src != nil {
		return c.src
	}
	return c.addr
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
	ep.clock++
	if c := ep.peer(dest); c != nil {
		c.lastUse = ep.clock
		return c, nil
	}
	c := &rdmConn{ep: ep, key: string(dest), addr: append([]byte(nil), dest...), lastUse: ep.clock}
	c.rx.init()
	ep.addConn(c)
	if err := c.dial(); err != nil {
		ep.removeConn(c)
		return nil, err
	}
	ep.setPeer(c)
	ep.noteWork(c)
	ep.trimIdle()
	ep.kick()
	return c, nil
}

// peer returns the connection to dest, or nil: the last one found, else
// the one in ep.peers (a map lookup costs a hash of the address on every
// message). ep.mu is held.
func (ep *rdmEP) peer(dest []byte) *rdmConn {
	if c := ep.lastPeer; c != nil && c.key == string(dest) {
		return c
	}
	c := ep.peers[string(dest)]
	if c != nil {
		ep.lastPeer = c
	}
	return c
}

// setPeer makes c the connection to its peer (ep.peers[c.key]). ep.mu is
// held.
func (ep *rdmEP) setPeer(c *rdmConn) {
	ep.peers[c.key] = c
	ep.lastPeer = c
}

// rdmScanMax is the number of connections up to which progress visits
// every connection; above it, only those with work of their own and those
// whose sockets are readable (an epoll_wait of the endpoint's set), so that
// the cost of progress does not grow with the number of idle peers.
const rdmScanMax = 8

// progressConns progresses the connections. ep.mu is held.
func (ep *rdmEP) progressConns() {
	ep.maybeTrim()
	if ep.nconns <= rdmScanMax || ep.epfd < 0 {
		for _, c := range ep.conns {
			if c != nil {
				c.progress()
			}
		}
		return
	}
	ep.pass++
	w := ep.work
	ep.work = ep.spare[:0]
	for _, c := range w {
		c.inWork = false
		if c.pass != ep.pass && c.state != connDraining && c.state != connDead {
			c.pass = ep.pass
			c.progress()
		}
	}
	clear(w)
	ep.spare = w[:0]
	var fds [64]int32
	n, _ := sys.EpollReady(ep.epfd, fds[:])
	for _, fd := range fds[:n] {
		c := ep.byFD[int(fd)]
		if c != nil && c.pass != ep.pass && c.state != connDraining && c.state != connDead {
			c.pass = ep.pass
			c.progress()
		}
	}
}

// pollSetLarge is pollSet with many connections: the epoll set (readable
// when one of its sockets is: every connection not held, being drained or
// set up) and the sockets of the connections with work that wait to write.
// ep.mu is held.
func (ep *rdmEP) pollSetLarge(fds []sys.PollFD) []sys.PollFD {
	fds = append(fds, sys.PollFD{FD: ep.epfd})
	for _, c := range ep.work {
		if c.sock != nil && c.wantWrite() {
			fds = append(fds, sys.PollFD{FD: c.sock.FD(), Write: true, NoRead: true})
		}
	}
	return fds
}

// noteWork keeps c in ep.work while it has work that no readable socket
// announces: a connection being set up, CM bytes or frames to write, a
// frame waiting for room or already buffered. ep.mu is held.
func (ep *rdmEP) noteWork(c *rdmConn) {
	if c.inWork {
		return
	}
	switch c.state {
	case connTCP, connReqSent, connWaitPeer:
	case connUp:
		if len(c.out) == 0 && c.tx.len() == 0 && !c.rx.held && c.rx.start == c.rx.end && !c.waitDrain && !c.eof {
			return
		}
	default:
		return
	}
	c.inWork = true
	ep.work = append(ep.work, c)
}

// setSock sets c's socket, keeping the endpoint's index by descriptor (the
// old socket is not closed here). ep.mu is held.
func (c *rdmConn) setSock(s *sys.Conn) {
	ep := c.ep
	if c.sock != nil && ep.byFD[c.sock.FD()] == c {
		delete(ep.byFD, c.sock.FD())
	}
	c.sock = s
	if s != nil {
		if ep.byFD == nil {
			ep.byFD = map[int]*rdmConn{}
		}
		ep.byFD[s.FD()] = c
	}
}

// used notes traffic on c (for the idle bound's LRU order).
func (c *rdmConn) used() {
	c.ep.clock++
	c.lastUse = c.ep.clock
}

// idle reports whether c carries nothing: up, nothing queued either way,
// no frame half read, no rendezvous of ours waiting for the peer (rndvBusy)
// and none of the peer's waiting for us.
func (c *rdmConn) idle(rndvBusy map[*rdmConn]bool) bool {
	r := &c.rx
	return c.state == connUp && c.tx.len() == 0 && len(c.out) == 0 && len(r.reads) == 0 && r.direct == nil &&
		r.start == r.end && !r.held && !c.waitDrain && !c.eof && c.unexpRndv == 0 && !rndvBusy[c] && len(c.acks) == 0 && len(c.sar) == 0
}

// trimIdle closes the least recently used idle connections when more than
// ep.maxConns are open (see RDMMaxConns). ep.mu is held.
func (ep *rdmEP) trimIdle() {
	if ep.maxConns <= 0 || ep.nconns <= ep.maxConns {
		return
	}
	busy := map[*rdmConn]bool{}
	for _, t := range ep.rndv {
		busy[t.conn] = true
	}
	for _, t := range ep.amo {
		busy[t.conn] = true
	}
	var idle []*rdmConn
	for _, c := range ep.conns {
		if c != nil && c.key != "" && c.idle(busy) {
			idle = append(idle, c)
		}
	}
	slices.SortFunc(idle, func(a, b *rdmConn) int { return cmp.Compare(a.lastUse, b.lastUse) })
	n := min(len(idle), ep.nconns-ep.maxConns*7/8)
	for _, c := range idle[:n] {
		c.drain()
	}
}

// drain closes an idle connection gracefully: it leaves the endpoint's
// tables (the next send to the peer opens a new connection), its socket is
// shut for writing, and it is read until the peer closes (ep.draining).
// ep.mu is held.
func (c *rdmConn) drain() {
	ep := c.ep
	logCM(provider.LevelInfo, "rdm: closing an idle connection", c.addr)
	ep.drained++
	ep.removeConn(c)
	c.state = connDraining
	c.deadline = time.Now().Add(rdmCMTimeout)
	if err := sys.TCPShutdownWrite(c.sock); err != nil {
		c.fail(provider.ECONNABORTED, true)
		return
	}
	ep.draining = append(ep.draining, c)
}

// progressDraining reads the connections being drained and forgets those
// that ended. ep.mu is held.
func (ep *rdmEP) progressDraining() {
	if len(ep.draining) == 0 {
		return
	}
	k := 0
	for i, c := range ep.draining {
		if c.state == connDraining && !ep.drainingBefore(i, c.key) {
			c.progress()
		}
		if c.state == connDraining && time.Now().After(c.deadline) {
			c.fail(provider.ETIMEDOUT, true)
		}
		if c.state == connDraining {
			ep.draining[k] = c
			k++
		} else if n := ep.peers[c.key]; n != nil && n.waitDrain {
			ep.noteWork(n) // its turn to be read
		}
	}
	clear(ep.draining[k:])
	ep.draining = ep.draining[:k]
}

// drainingBefore reports whether one of the first i connections being
// drained is the peer's at key: the later one waits, keeping the peer's
// messages in order.
func (ep *rdmEP) drainingBefore(i int, key string) bool {
	for _, c := range ep.draining[:i] {
		if c.key == key && c.state == connDraining {
			return true
		}
	}
	return false
}

// drainingFor reports whether a connection to the peer at key is still
// being drained (a new connection to it waits before reading).
func (ep *rdmEP) drainingFor(key string) bool {
	for _, c := range ep.draining {
		if c.key == key && c.state == connDraining {
			return true
		}
	}
	return false
}

// peerClosed handles the end of the stream on a connection: a connection
// that carried nothing half-way (the peer closed it for idleness, or died
// between messages) is closed quietly, and frames still queued for the
// peer move to a new connection (which a dead peer refuses: they fail
// then); otherwise what was in flight fails. ep.mu is held.
func (c *rdmConn) peerClosed() {
	if c.state != connUp || !c.quiet(true) {
		c.fail(provider.ECONNRESET, true)
		return
	}
	if t := c.tx.head(); t != nil && t.off > 0 {
		// A frame is half written: the peer still reads (it closed
		// its side only), so it is finished first (eofWrite).
		c.eof = true
		c.ep.unwatch(c.sock.FD()) // readable for ever now
		c.ep.noteWork(c)
		return
	}
	c.reconnectQueued()
}

// eofWrite finishes the frames half written on a connection the peer
// closed (peerClosed), then moves on to a new connection. ep.mu is held.
func (c *rdmConn) eofWrite() {
	if c.flushOut() && len(c.out) == 0 {
		c.flush()
	}
	if c.state != connUp {
		return
	}
	if t := c.tx.head(); t == nil || t.off == 0 {
		c.reconnectQueued()
	}
}

// reconnectQueued closes c's socket (the peer closed its side, nothing is
// half done) and opens a new connection for the frames still queued, or
// forgets c when there are none. ep.mu is held.
func (c *rdmConn) reconnectQueued() {
	c.eof = false
	if c.tx.len() == 0 {
		c.fail(provider.ECONNRESET, true) // nothing to fail
		return
	}
	logCM(provider.LevelInfo, "rdm: the peer closed the connection, reconnecting for the queued frames", c.addr)
	c.dropHold()
	s := c.sock
	c.setSock(nil)
	s.Close()
	c.rx.resetStream()
	if err := c.dial(); err != nil {
		c.fail(provider.ECONNREFUSED, true)
	}
}

// quiet reports whether nothing of c's stream is half done: no frame half
// written (but the head one, with headOK) or half read, no control frame
// queued, no read outstanding, no rendezvous send of ours waiting for the
// peer.
func (c *rdmConn) quiet(headOK bool) bool {
	r := &c.rx
	if len(r.reads) > 0 || r.direct != nil || r.start != r.end || len(c.out) > 0 || len(c.acks) > 0 || len(c.sar) > 0 {
		return false
	}
	for i := c.tx.head0; i < len(c.tx.q); i++ {
		if t := c.tx.q[i]; t.kind == txCtrl || (t.off > 0 && !(headOK && i == c.tx.head0)) {
			return false
		}
	}
	for _, t := range c.ep.rndv {
		if t.conn == c && t.sent {
			return false
		}
	}
	for _, t := range c.ep.amo {
		if t.conn == c {
			return false
		}
	}
	return true
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
	ep.sockDefaults(s, c.addr)
	ep.applySockBufs(s)
	c.setSock(s)
	ep.watch(s.FD())
	c.gen++
	c.unexpRndv = 0 // the old stream's requests no longer count (their gen differs)
	c.state = connTCP
	c.deadline = time.Now().Add(rdmCMTimeout)
	switch e := sys.TCPConnect(s, c.addr); e {
	case 0:
		c.state = connReqSent
		c.writeRequest()
	case provider.EINPROGRESS:
	default:
		c.setSock(nil)
		s.Close()
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

// progress advances c: connect, CM exchange, frames out and in; then c
// stays in ep.work while it has work of its own. ep.mu is held.
func (c *rdmConn) progress() {
	c.progressOnce()
	c.ep.noteWork(c)
}

func (c *rdmConn) progressOnce() {
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
		now := time.Now()
		if now.After(c.deadline) {
			c.fail(provider.ETIMEDOUT, true)
			return
		}
		if !c.retryAt.IsZero() && now.After(c.retryAt) {
			c.retryAt = time.Time{}
			d := c.deadline
			if err := c.dial(); err != nil {
				c.fail(provider.ECONNREFUSED, true)
				return
			}
			c.deadline = d
		}
		return
	case connUp:
		if c.eof {
			c.eofWrite()
			return
		}
		if len(c.ep.draining) > 0 && c.ep.drainingFor(c.key) {
			// The peer's messages on the connection being drained
			// come first: this one is not read, nor watched (its
			// readability would wake progress for nothing).
			if !c.waitDrain {
				c.waitDrain = true
				c.ep.unwatch(c.sock.FD())
			}
			if c.flushOut() && len(c.out) == 0 {
				c.flush()
			}
			return
		}
		if c.waitDrain {
			c.waitDrain = false
			c.ep.watch(c.sock.FD())
		}
	case connDraining:
		if c.tx.len() > 0 {
			// A read request or read-done cannot be written: what
			// needed it fails.
			c.fail(provider.ECONNABORTED, true)
			return
		}
		c.progressRx()
		return
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
		s := c.sock
		c.setSock(nil)
		s.Close()
		if reason == rxmwire.RejectAlready && c.ep.drainingFor(c.key) {
			// The peer has not seen the end of the connection we are
			// draining yet (a C peer refuses a second connection until
			// it has): connect again shortly.
			logCM(provider.LevelInfo, "rdm: the peer still has the drained connection, connecting again", c.addr)
			c.state = connWaitPeer
			c.retryAt = time.Now().Add(20 * time.Millisecond)
			return
		}
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
	c.setExt(a.Pad == rxmwire.GoMarker)
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
	c.dropHold()
	if s := c.sock; s != nil {
		c.setSock(nil)
		s.Close()
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
		ep.sockDefaults(s, peer)
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
	ep.progressDraining()
	ep.maybeTrim()
}

// maybeTrim closes idle connections while more than the bound are open
// (connections that were busy when the bound was passed are closed once
// idle), at most every rdmTrimEvery. ep.mu is held.
func (ep *rdmEP) maybeTrim() {
	if ep.maxConns > 0 && ep.nconns > ep.maxConns {
		if now := time.Now(); now.After(ep.nextTrim) {
			ep.nextTrim = now.Add(rdmTrimEvery)
			ep.trimIdle()
		}
	}
}

// rdmTrimEvery is how often control progress looks for idle connections
// to close while an endpoint has more than its bound.
const rdmTrimEvery = 20 * time.Millisecond

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
		ep.setPeer(c)
		c.used()
		defer ep.trimIdle()
	case c.state == connTCP || c.state == connReqSent:
		switch cmpAddr(from, ep.name) {
		case -1:
			ep.simul++
			logCM(provider.LevelInfo, "rdm: simultaneous connect, rejecting the peer's request", from)
			return ep.reject(in, rxmwire.RejectAlready)
		case 1:
			ep.simul++
			logCM(provider.LevelInfo, "rdm: simultaneous connect, accepting the peer's request", from)
			ep.orphans = append(ep.orphans, c.sock)
			c.setSock(nil)
		default:
			// Connecting to ourselves: the accepting side is a
			// connection of its own, known by index only.
			c = &rdmConn{ep: ep, addr: from}
			c.rx.init()
			ep.addConn(c)
		}
	case c.state == connWaitPeer:
	case c.state == connUp && c.remotePID != 0 && c.remotePID == pid:
		if c.eof || !c.quiet(false) || !sys.TCPPeerShutWrite(c.sock) {
			// A late request of a simultaneous connect (or a peer
			// that reconnects before its close of the old connection
			// arrived: it tries again).
			ep.simul++
			logCM(provider.LevelInfo, "rdm: already connected, rejecting the peer's request", from)
			return ep.reject(in, rxmwire.RejectAlready)
		}
		// The same peer connects again after closing the old connection
		// (its idle bound) with nothing half done on it. The old one is
		// drained (what the peer wrote on it is still read, first),
		// queued frames move to the new one.
		logCM(provider.LevelInfo, "rdm: the peer reconnected, draining the old connection", from)
		nc := &rdmConn{ep: ep, key: c.key, addr: c.addr}
		nc.rx.init()
		nc.tx, c.tx = c.tx, rdmTxQueue{}
		for i := nc.tx.head0; i < len(nc.tx.q); i++ {
			nc.tx.q[i].conn = nc
		}
		c.drain()
		ep.addConn(nc)
		ep.setPeer(nc)
		c = nc
		c.used()
	case c.state == connUp:
		// The peer restarted: the old connection is replaced, and what
		// was in flight on it fails.
		logCM(provider.LevelInfo, "rdm: peer reconnected, replacing the old connection", from)
		ep.orphans = append(ep.orphans, c.sock)
		c.setSock(nil)
		c.failInFlight(provider.ECONNRESET)
	}
	c.setSock(in.sock)
	c.gen++
	c.unexpRndv = 0 // the old stream's requests no longer count (their gen differs)
	c.remoteIndex, c.remotePID = rxmwire.ConnIndex(req.ConnID), pid
	c.setExt(req.Pad == rxmwire.GoMarker)
	acc := rxmwire.AppendAccept(nil, &rxmwire.Accept{ConnID: ep.rdmConnID(c.index), RxSize: rxmwire.RxSize,
		FlowCtrl: rxmwire.FlowCtrlPeerOff, Pad: goPad(c.ext)})
	c.out, _ = tcpwire.AppendCM(c.out[:0], tcpwire.CMConnResp, acc)
	c.state = connUp
	c.dropHold()
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
