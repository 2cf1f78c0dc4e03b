package tcp

import (
	"encoding/binary"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// cmTimeout bounds how long an accepted connection may take to send its
// connect request before it is dropped.
const cmTimeout = 30 * time.Second

type pepState uint8

const (
	pepOpen pepState = iota
	pepListening
	pepClosed
)

// pep is a passive endpoint: a listening socket. Accepted connections
// first deliver their connect request (read without blocking by Progress,
// or by a goroutine per connection parked in the netpoller under
// FI_PROGRESS_AUTO control progress); each complete request becomes an
// FI_CONNREQ event whose Info.Handle is a *connReq.
type pep struct {
	info     *provider.Info
	fmt      provider.AddrFormat
	ctrlAuto bool
	nodelay  bool

	mu      sync.Mutex
	state   pepState
	backlog int // FI_BACKLOG; 0 means Backlog
	conn    *sys.Conn
	eq      provider.EQWriter
	pending []*pendingConn
	reqs    map[*connReq]struct{}
	closeCh chan struct{}
	wg      sync.WaitGroup
}

var (
	_ provider.PassiveEndpoint = (*pep)(nil)
	_ provider.Progresser      = (*pep)(nil)
	_ provider.Waiter          = (*pep)(nil)
	_ provider.FDWaiter        = (*pep)(nil)
	_ provider.OptionHandler   = (*pep)(nil)
)

// pendingConn is an accepted connection whose connect request is being
// read.
type pendingConn struct {
	mu       sync.Mutex
	conn     *sys.Conn
	peer     []byte
	buf      [tcpwire.MaxCMSize]byte
	have     int
	need     int
	swap     bool
	done     bool // finished: ok, or dropped (conn closed)
	ok       bool
	deadline time.Time
}

// connReq is a connection request: the Handle of an FI_CONNREQ event's
// Info. Opening an endpoint from that Info adopts its connection (then
// Accept answers it); Reject refuses it.
type connReq struct {
	pep     *pep
	conn    *sys.Conn
	peer    []byte
	swap    bool
	claimed atomic.Bool
}

// claim takes ownership of the request's connection (once).
func (cr *connReq) claim() bool {
	if !cr.claimed.CompareAndSwap(false, true) {
		return false
	}
	cr.pep.forget(cr)
	return true
}

func newPEP(info *provider.Info) (*pep, error) {
	if err := checkMsgInfo(info); err != nil {
		return nil, err
	}
	p := &pep{info: info.Dup(), fmt: info.AddrFormat, ctrlAuto: true, nodelay: envBool(envNoDelay, true),
		reqs: map[*connReq]struct{}{}, closeCh: make(chan struct{})}
	p.info.Handle = nil
	if info.DomainAttr != nil {
		p.ctrlAuto = info.DomainAttr.ControlProgress != provider.ProgressManual
	}
	src := info.SrcAddr
	if src == nil {
		src = defaultSource(info)
	}
	if _, f, ok := decodeSockaddr(src); !ok || !formatOK(info.AddrFormat, f) {
		return nil, provider.EINVAL
	}
	conn, err := sys.TCPSocket(src, true)
	if err != nil {
		return nil, err
	}
	if err := bindPort(src, func(a []byte) error { return sys.TCPBind(conn, a) }); err != nil {
		conn.Close()
		return nil, err
	}
	p.conn = conn
	return p, nil
}

// bindPort binds with bind(addr); with port 0 and FI_TCP_PORT_LOW_RANGE /
// FI_TCP_PORT_HIGH_RANGE set, it tries the ports of the range from a
// random start, as libfabric does.
func bindPort(addr []byte, bind func([]byte) error) error {
	lo, hi, ok := portRange()
	if !ok || len(addr) < 4 || binary.BigEndian.Uint16(addr[2:]) != 0 {
		return bind(addr)
	}
	n := int(hi) - int(lo) + 1
	start := rand.IntN(n)
	var err error
	for i := 0; i < n; i++ {
		port := uint16(int(lo) + (start+i)%n)
		if err = bind(withPort(addr, port)); err != provider.EADDRINUSE {
			return err
		}
	}
	return err
}

// Name returns the bound address (getsockname).
func (p *pep) Name() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == pepClosed {
		return nil, provider.EBADF
	}
	return p.conn.Name()
}

// SetName binds the passive endpoint to addr; only before Listen.
func (p *pep) SetName(addr []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case pepClosed:
		return provider.EBADF
	case pepListening:
		return provider.EOPBADSTATE
	}
	if _, f, ok := decodeSockaddr(addr); !ok || !formatOK(p.fmt, f) {
		return provider.EINVAL
	}
	return bindPort(addr, func(a []byte) error { return sys.TCPRebind(p.conn, a, true) })
}

// handOver gives the bound, not yet listening socket to an active
// endpoint (an Info whose handle is this passive endpoint); the passive
// endpoint keeps a new unbound socket. EOPBADSTATE once listening.
func (p *pep) handOver() (*sys.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case pepClosed:
		return nil, provider.EBADF
	case pepListening:
		return nil, provider.EOPBADSTATE
	}
	name, err := p.conn.Name()
	if err != nil {
		return nil, err
	}
	fresh, err := sys.TCPSocket(name, true)
	if err != nil {
		return nil, err
	}
	c := p.conn
	p.conn = fresh
	return c, nil
}

// Listen starts listening; connection requests are reported on eq (never
// nil: the root package requires a bound EQ).
func (p *pep) Listen(eq provider.EQWriter) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case pepClosed:
		return provider.EBADF
	case pepListening:
		return provider.EOPBADSTATE
	}
	if err := sys.TCPListen(p.conn, p.listenBacklog()); err != nil {
		return err
	}
	p.eq = eq
	p.state = pepListening
	if p.ctrlAuto {
		p.wg.Add(1)
		go p.acceptLoop()
	}
	return nil
}

// acceptLoop is the FI_PROGRESS_AUTO control goroutine: it parks in the
// netpoller until a connection is pending and accepts it.
func (p *pep) acceptLoop() {
	defer p.wg.Done()
	for {
		if err := p.conn.WaitReadable(time.Time{}); err != nil {
			return
		}
		p.mu.Lock()
		if p.state != pepListening {
			p.mu.Unlock()
			return
		}
		p.acceptAll()
		p.mu.Unlock()
	}
}

// Progress accepts pending connections and reads their connect requests
// without blocking (with FI_PROGRESS_AUTO control progress, a request that
// is not complete at accept time is read by its own goroutine).
func (p *pep) Progress() {
	if !p.mu.TryLock() {
		return
	}
	defer p.mu.Unlock()
	if p.state != pepListening {
		return
	}
	p.acceptAll()
	if p.ctrlAuto {
		return // a goroutine reads each pending request
	}
	k := 0
	for _, pc := range p.pending {
		if pc.mu.TryLock() {
			fin := pc.read()
			pc.mu.Unlock()
			if fin {
				p.finishLocked(pc)
				continue
			}
		}
		p.pending[k] = pc
		k++
	}
	clear(p.pending[k:])
	p.pending = p.pending[:k]
}

// acceptAll accepts every pending connection. p.mu is held.
func (p *pep) acceptAll() {
	for {
		c, peer, e := sys.TCPAccept(p.conn)
		if e != 0 {
			return
		}
		if p.nodelay {
			_ = sys.TCPSetNoDelay(c, true)
		}
		pc := &pendingConn{conn: c, peer: peer, need: tcpwire.CMHeaderSize, deadline: time.Now().Add(cmTimeout)}
		// The request usually follows the connection at once.
		pc.mu.Lock()
		fin := pc.read()
		pc.mu.Unlock()
		if fin {
			p.finishLocked(pc)
			continue
		}
		p.pending = append(p.pending, pc)
		if p.ctrlAuto {
			p.wg.Add(1)
			go p.pendingLoop(pc)
		}
	}
}

// pendingLoop reads one connection's connect request, parked in the
// netpoller between reads.
func (p *pep) pendingLoop(pc *pendingConn) {
	defer p.wg.Done()
	for {
		pc.mu.Lock()
		fin := pc.read()
		pc.mu.Unlock()
		if fin {
			p.mu.Lock()
			if p.removePending(pc) {
				p.finishLocked(pc)
			}
			p.mu.Unlock()
			return
		}
		if err := pc.conn.WaitReadable(pc.deadline); err != nil {
			pc.mu.Lock()
			if !pc.done {
				pc.done = true
				pc.conn.Close()
			}
			pc.mu.Unlock()
			p.mu.Lock()
			p.removePending(pc)
			p.mu.Unlock()
			return
		}
	}
}

func (p *pep) removePending(pc *pendingConn) bool {
	for i, x := range p.pending {
		if x == pc {
			p.pending = append(p.pending[:i], p.pending[i+1:]...)
			return true
		}
	}
	return false
}

// read reads the connect request without blocking; it reports whether
// the connection is finished (a complete request, or dropped: bad
// message, end of stream, timeout). pc.mu is held.
func (pc *pendingConn) read() bool {
	if pc.done {
		return true
	}
	bad := false
	for pc.have < pc.need {
		n, e := pc.conn.Read(pc.buf[pc.have:pc.need])
		if e == provider.EAGAIN || e == provider.EINTR {
			if time.Now().After(pc.deadline) {
				break
			}
			return false
		}
		if e != 0 || n == 0 {
			break
		}
		pc.have += n
		if pc.have == tcpwire.CMHeaderSize && pc.need == tcpwire.CMHeaderSize {
			typ, dlen, probe, err := tcpwire.ParseCMHeader(pc.buf[:tcpwire.CMHeaderSize])
			if err != nil || typ != tcpwire.CMConnReq {
				reason := "not a connect request"
				if err != nil {
					reason = err.Error()
				}
				logCM(provider.LevelWarn, "dropping a malformed connection request", pc.peer, slog.String("reason", reason))
				bad = true
				break
			}
			pc.need += dlen
			pc.swap = probe != 1
		}
	}
	pc.done = true
	if !bad && pc.have == pc.need && pc.have >= tcpwire.CMHeaderSize {
		pc.ok = true
	} else {
		if !bad {
			// A connection closed before sending anything is a probe,
			// not worth a warning.
			level := provider.LevelWarn
			if pc.have == 0 {
				level = provider.LevelInfo
			}
			logCM(level, "dropping an incomplete connection request (closed or timed out)", pc.peer,
				slog.Int("have", pc.have), slog.Int("need", pc.need))
		}
		pc.conn.Close()
	}
	return true
}

// finishLocked turns a complete request into an FI_CONNREQ event. p.mu is
// held; pc is no longer in p.pending.
func (p *pep) finishLocked(pc *pendingConn) {
	if !pc.ok {
		return
	}
	if p.state != pepListening {
		pc.conn.Close()
		return
	}
	cr := &connReq{pep: p, conn: pc.conn, peer: pc.peer, swap: pc.swap}
	info := p.info.Dup()
	info.Handle = cr
	info.DestAddr = append([]byte(nil), pc.peer...)
	if local, err := pc.conn.Name(); err == nil {
		info.SrcAddr = local
	}
	p.reqs[cr] = struct{}{}
	logCM(provider.LevelInfo, "connection request", pc.peer)
	_ = p.eq.Write(&provider.EQEntry{Event: provider.EventConnReq, FID: p, Info: info,
		CMData: pc.buf[tcpwire.CMHeaderSize:pc.need]})
}

func (p *pep) forget(cr *connReq) {
	p.mu.Lock()
	delete(p.reqs, cr)
	p.mu.Unlock()
}

// Reject refuses a connection request: the requester gets a reject
// message with data (its EQ reports ECONNREFUSED with the data), then the
// connection is closed.
func (p *pep) Reject(handle any, data []byte) error {
	if len(data) > CMDataSize {
		return provider.EINVAL
	}
	cr, ok := handle.(*connReq)
	if !ok || cr == nil || cr.pep != p {
		return provider.EINVAL
	}
	if !cr.claim() {
		return provider.EINVAL
	}
	logCM(provider.LevelInfo, "rejecting a connection request", cr.peer)
	defer cr.conn.Close()
	b, _ := tcpwire.AppendCM(nil, tcpwire.CMReject, data)
	deadline := time.Now().Add(5 * time.Second)
	for len(b) > 0 {
		n, e := cr.conn.Write(b)
		switch e {
		case 0:
			b = b[n:]
		case provider.EAGAIN, provider.EINTR:
			if err := cr.conn.WaitWritable(deadline); err != nil {
				return provider.ETIMEDOUT
			}
		default:
			return e.AsError()
		}
	}
	return sys.TCPShutdown(cr.conn)
}

// WaitReady parks until a connection is pending on the listening socket
// (or, with manual control progress, until a request being read has more
// data), the deadline passes (ETIMEDOUT) or the endpoint is closed.
func (p *pep) WaitReady(deadline time.Time) error {
	p.mu.Lock()
	st, conn := p.state, p.conn
	var pc *pendingConn
	if !p.ctrlAuto && len(p.pending) > 0 {
		pc = p.pending[0]
	}
	p.mu.Unlock()
	switch st {
	case pepClosed:
		return provider.EBADF
	case pepListening:
		if pc != nil {
			if err := pc.conn.WaitReadable(deadline); err == sys.ErrClosed {
				return nil // finished meanwhile
			} else {
				return err
			}
		}
		return conn.WaitReadable(deadline)
	}
	var tc <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return provider.ETIMEDOUT
		}
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-tc:
		return provider.ETIMEDOUT
	case <-p.closeCh:
		return provider.EBADF
	}
}

// WaitFD returns the listening socket's descriptor.
func (p *pep) WaitFD() int { return p.conn.FD() }

// Close stops listening; requests neither accepted nor rejected are
// closed.
func (p *pep) Close() error {
	p.mu.Lock()
	if p.state == pepClosed {
		p.mu.Unlock()
		return provider.EBADF
	}
	p.state = pepClosed
	close(p.closeCh)
	pending := p.pending
	p.pending = nil
	reqs := make([]*connReq, 0, len(p.reqs))
	for cr := range p.reqs {
		reqs = append(reqs, cr)
	}
	err := p.conn.Close()
	p.mu.Unlock()
	for _, pc := range pending {
		pc.mu.Lock()
		if !pc.done {
			pc.done = true
			pc.conn.Close()
		} else if pc.ok {
			pc.conn.Close()
		}
		pc.mu.Unlock()
	}
	for _, cr := range reqs {
		if cr.claim() {
			cr.conn.Close()
		}
	}
	p.wg.Wait()
	return err
}
