package tcp

import (
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Endpoint states.
type epState uint8

const (
	epIdle       epState = iota // opened, not connected
	epConnecting                // Connect called: TCP connect, then the CM exchange
	epAccepting                 // opened from a connection request; Accept not called yet
	epConnected
	epDown // the connection ended: shutdown, peer gone, refused or failed
	epClosed
)

// Connect phases (epConnecting).
const (
	cmTCP      = iota // TCP connect in progress
	cmSend            // writing the connect request
	cmRecvHdr         // reading the 32-byte response header
	cmRecvData        // reading the response's connection data
)

// endpoint is a tcp FI_EP_MSG endpoint: one TCP connection carrying
// libfabric 1.17's tcp frames. All state is guarded by mu; Progress takes
// it with TryLock, so concurrent progress calls never wait for each other.
// The receive-queue peer callbacks (StartMsg, DiscardMsg ...) are made by
// the SRX owner without mu and use only umu.
type endpoint struct {
	caps     provider.Caps
	fmt      provider.AddrFormat
	auto     bool // FI_PROGRESS_AUTO data progress: goroutines parked in the netpoller
	ctrlAuto bool // FI_PROGRESS_AUTO control progress: a goroutine finishes Connect
	nodelay  bool
	loopCC   string // congestion control of a loopback connection (FI_TCP_LOOPBACK_CC)
	sharedRx bool   // the receive queue is a shared receive context
	rm       bool   // resource management (not FI_RM_DISABLED): never overrun a CQ

	mu      sync.Mutex
	state   epState
	conn    *sys.Conn // created at open; never replaced (SetName rebinds in place)
	req     *connReq  // the request an accepting endpoint was opened from
	res     provider.Resources
	txRes   provider.CQReserver // res.TxCQ's reservations, with rm (nil if it has none)
	rxRes   provider.CQReserver // res.RxCQ's reservations, with rm (nil if it has none)
	enabled bool
	swap    bool   // the peer's byte order differs (CM endianness probe)
	peer    []byte // the peer's address once connected
	downErr provider.Errno
	// flushPending: receives posted when the connection ended are still
	// to be flushed (the receive CQ had no room for all of them).
	flushPending bool

	// Connect state (epConnecting).
	cmPhase int
	cmBuf   [tcpwire.MaxCMSize]byte
	cmLen   int
	cmOff   int

	tx txState
	rx rxState

	// umu guards the unexpected-message hand-off with the receive queue
	// (see rx.go) and the state-change broadcast.
	umu          sync.Mutex
	bpEntry      *provider.RxEntry // queued unexpected message kept in the stream
	started      *provider.RxEntry // bpEntry after StartMsg/DiscardMsg
	startDiscard bool
	rxDeadErr    provider.Errno // set when no more data will be read
	ubufFree     [numUbufClasses][]*ubuf
	ubufBytes    int
	stCh         chan struct{} // closed and replaced on state changes (WaitReady)
	waiters      atomic.Int32

	closeCh  chan struct{}
	rxKick   chan struct{}
	txKick   chan struct{}
	roomKick chan struct{} // armed with provider.RoomNotifier while the stream waits for room
	wg       sync.WaitGroup
	goAuto   bool // auto-progress goroutines started

	buf bufRx // FI_BUFFERED_RECV (bufrecv.go)
}

var (
	_ provider.Endpoint      = (*endpoint)(nil)
	_ provider.Connector     = (*endpoint)(nil)
	_ provider.Tagged        = (*endpoint)(nil)
	_ provider.RMA           = (*endpoint)(nil)
	_ provider.Namer         = (*endpoint)(nil)
	_ provider.OptionHandler = (*endpoint)(nil)
	_ provider.Waiter        = (*endpoint)(nil)
	_ provider.FDWaiter      = (*endpoint)(nil)
	_ provider.SRXPeer       = (*endpoint)(nil)
)

// isSpecific reports whether a source address must be bound: a specific
// IP address or a port (libfabric binds the endpoint socket only then).
func isSpecific(sa []byte) bool {
	a, _, ok := decodeSockaddr(sa)
	return ok && (!a.AP.Addr().IsUnspecified() || a.AP.Port() != 0)
}

// fixedPort reports whether sa names a port (not 0). An active endpoint
// bound to a given port has SO_REUSEADDR, as in libfabric (which sets it
// on every socket): the port can be bound again while its last connection
// is in TIME_WAIT. One bound to an ephemeral port has not, so binding
// another endpoint to its address fails with EADDRINUSE.
func fixedPort(sa []byte) bool {
	a, _, ok := decodeSockaddr(sa)
	return ok && a.AP.Port() != 0
}

func newEndpoint(info *provider.Info) (*endpoint, error) {
	if err := checkMsgInfo(info); err != nil {
		return nil, err
	}
	if err := checkLimits(info); err != nil {
		return nil, err
	}
	ep := &endpoint{caps: info.Caps, fmt: info.AddrFormat, nodelay: envBool(envNoDelay, true), loopCC: envLoopbackCC(),
		stCh: make(chan struct{}), closeCh: make(chan struct{}),
		rxKick: make(chan struct{}, 1), txKick: make(chan struct{}, 1), roomKick: make(chan struct{}, 1)}
	if ep.caps == 0 {
		ep.caps = infoCaps
	}
	ep.ctrlAuto = true
	ep.rm = true
	if info.DomainAttr != nil {
		ep.auto = info.DomainAttr.DataProgress == provider.ProgressAuto
		ep.ctrlAuto = info.DomainAttr.ControlProgress != provider.ProgressManual
		ep.rm = info.DomainAttr.ResourceMgmt != provider.RMDisabled
	}
	if info.EPAttr != nil {
		ep.sharedRx = info.EPAttr.RxCtxCnt == provider.SharedContext
	}
	txSize := uint64(DefaultQueueSize)
	if info.TxAttr != nil && info.TxAttr.Size > 0 {
		txSize = min(info.TxAttr.Size, maxQueueSize)
	}
	if cr, ok := info.Handle.(*connReq); ok && cr != nil {
		if !cr.claim() {
			return nil, provider.EINVAL
		}
		ep.conn, ep.req, ep.state, ep.peer, ep.swap = cr.conn, cr, epAccepting, cr.peer, cr.swap
	} else if p, ok := info.Handle.(*pep); ok && p != nil {
		// An endpoint opened from an Info whose handle is a passive
		// endpoint takes over its bound socket, as libfabric's does.
		conn, err := p.handOver()
		if err != nil {
			return nil, err
		}
		ep.conn = conn
	} else {
		src := info.SrcAddr
		if src == nil {
			src = defaultSource(info)
		}
		fam := src
		if fam == nil {
			fam = info.DestAddr
		}
		if _, f, ok := decodeSockaddr(fam); !ok || !formatOK(info.AddrFormat, f) {
			return nil, provider.EINVAL
		}
		conn, err := sys.TCPSocket(fam, src != nil && fixedPort(src))
		if err != nil {
			return nil, err
		}
		if src != nil && isSpecific(src) {
			if err := sys.TCPBind(conn, src); err != nil {
				conn.Close()
				return nil, err
			}
		}
		ep.conn = conn
	}
	ep.tx.init(int(txSize))
	ep.rx.init()
	return ep, nil
}

// checkLimits refuses an Info whose limits exceed the provider's (an
// application may raise them after GetInfo): the root package enforces the
// Info's limits on every data call, and post relies on them (see post).
func checkLimits(info *provider.Info) error {
	if a := info.TxAttr; a != nil &&
		(a.IOVLimit > IOVLimit || a.RMAIOVLimit > tcpwire.MaxRMAIOV || a.InjectSize > InjectSize) {
		return provider.EINVAL
	}
	if a := info.RxAttr; a != nil && a.IOVLimit > IOVLimit {
		return provider.EINVAL
	}
	return nil
}

// Name returns the socket's address (getsockname).
func (ep *endpoint) Name() ([]byte, error) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state == epClosed {
		return nil, provider.EBADF
	}
	return ep.conn.Name()
}

// SetName binds the endpoint to addr (fi_setname); only before Enable.
func (ep *endpoint) SetName(addr []byte) error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch {
	case ep.state == epClosed:
		return provider.EBADF
	case ep.state != epIdle || ep.enabled:
		return provider.EOPBADSTATE
	}
	if _, f, ok := decodeSockaddr(addr); !ok || !formatOK(ep.fmt, f) {
		return provider.EINVAL
	}
	return sys.TCPRebind(ep.conn, addr, fixedPort(addr))
}

// Peer returns the connected peer's address (fi_getpeer).
func (ep *endpoint) Peer() ([]byte, error) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch ep.state {
	case epClosed:
		return nil, provider.EBADF
	case epConnected, epAccepting, epDown:
		if ep.peer != nil {
			return append([]byte(nil), ep.peer...), nil
		}
	}
	return nil, provider.ENOTCONN
}

// Enable records the bound resources. The endpoint transfers data once
// connected (Connect or Accept). The root package calls it once, with an
// EQ and a receive queue (provider package documentation).
func (ep *endpoint) Enable(r *provider.Resources) error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state == epClosed {
		return provider.EBADF
	}
	ep.res = *r
	ep.tx.credits = r.TxCredits
	if ep.rm {
		ep.txRes, _ = r.TxCQ.(provider.CQReserver)
		ep.rxRes, _ = r.RxCQ.(provider.CQReserver)
	}
	ep.enableBuffered(r.SRX)
	ep.enabled = true
	return nil
}

// Connect starts connecting to addr with connection data (at most
// FI_OPT_CM_DATA_SIZE bytes). The outcome is reported on the EQ:
// FI_CONNECTED with the accept data, or an error entry (ECONNREFUSED with
// the reject data).
func (ep *endpoint) Connect(addr []byte, data []byte) error {
	if len(data) > CMDataSize {
		return provider.EINVAL
	}
	if _, f, ok := decodeSockaddr(addr); !ok || !formatOK(ep.fmt, f) {
		return provider.EINVAL
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch ep.state {
	case epClosed:
		return provider.EBADF
	case epIdle:
	case epConnecting, epConnected:
		return provider.EISCONN
	default:
		return provider.EOPBADSTATE
	}
	// The root package enabled the endpoint before calling Connect.
	b, err := tcpwire.AppendCM(ep.cmBuf[:0], tcpwire.CMConnReq, data)
	if err != nil {
		return provider.EINVAL
	}
	ep.cmLen, ep.cmOff = len(b), 0
	switch e := sys.TCPConnect(ep.conn, addr); e {
	case 0:
		ep.cmPhase = cmSend
	case provider.EINPROGRESS:
		ep.cmPhase = cmTCP
	default:
		return e.AsError()
	}
	ep.peer = append([]byte(nil), addr...)
	ep.setState(epConnecting)
	logCM(provider.LevelInfo, "connecting", addr)
	ep.progressCM()
	if ep.state == epConnecting && ep.ctrlAuto {
		ep.wg.Add(1)
		go ep.cmLoop()
	}
	return nil
}

// cmLoop is the FI_PROGRESS_AUTO control goroutine of a connecting
// endpoint: it parks in the netpoller until the connect, the request write
// or the response can make progress.
func (ep *endpoint) cmLoop() {
	defer ep.wg.Done()
	conn := ep.conn
	if !ep.auto {
		// Its poller registration would slow down manual progress (see
		// connected).
		defer sys.TCPReleaseWaiters(conn)
	}
	for {
		ep.mu.Lock()
		if ep.state != epConnecting {
			ep.mu.Unlock()
			return
		}
		ep.progressCM()
		st, phase := ep.state, ep.cmPhase
		ep.mu.Unlock()
		if st != epConnecting {
			return
		}
		var err error
		if phase == cmTCP || phase == cmSend {
			err = conn.WaitWritable(time.Time{})
		} else {
			err = conn.WaitReadable(time.Time{})
		}
		if err != nil {
			return
		}
	}
}

// progressCM advances a connect: TCP connect, request, response. ep.mu is
// held.
func (ep *endpoint) progressCM() {
	for ep.state == epConnecting {
		switch ep.cmPhase {
		case cmTCP:
			done, e := sys.TCPConnectDone(ep.conn)
			if !done {
				return
			}
			if e != 0 {
				ep.connectFailed(e, nil)
				return
			}
			ep.cmPhase = cmSend
		case cmSend:
			n, e := ep.conn.Write(ep.cmBuf[ep.cmOff:ep.cmLen])
			if e == provider.EAGAIN || e == provider.EINTR {
				return
			}
			if e != 0 {
				ep.connectFailed(e, nil)
				return
			}
			ep.cmOff += n
			if ep.cmOff < ep.cmLen {
				return
			}
			ep.cmPhase, ep.cmOff, ep.cmLen = cmRecvHdr, 0, tcpwire.CMHeaderSize
		case cmRecvHdr, cmRecvData:
			n, e := ep.conn.Read(ep.cmBuf[ep.cmOff:ep.cmLen])
			if e == provider.EAGAIN || e == provider.EINTR {
				return
			}
			if e != 0 {
				ep.connectFailed(e, nil)
				return
			}
			if n == 0 {
				ep.connectFailed(provider.ECONNREFUSED, nil)
				return
			}
			ep.cmOff += n
			if ep.cmOff < ep.cmLen {
				continue
			}
			typ, dlen, probe, err := tcpwire.ParseCMHeader(ep.cmBuf[:tcpwire.CMHeaderSize])
			if err != nil {
				logCM(provider.LevelWarn, "malformed connect response", ep.peer, slog.String("reason", err.Error()))
				ep.connectFailed(provider.ECONNREFUSED, nil)
				return
			}
			if ep.cmPhase == cmRecvHdr && dlen > 0 {
				ep.cmPhase, ep.cmLen = cmRecvData, tcpwire.CMHeaderSize+dlen
				continue
			}
			data := ep.cmBuf[tcpwire.CMHeaderSize : tcpwire.CMHeaderSize+dlen]
			switch typ {
			case tcpwire.CMConnResp:
				ep.swap = probe != 1
				ep.connected(data, false)
			case tcpwire.CMReject:
				ep.connectFailed(provider.ECONNREFUSED, data)
			default:
				logCM(provider.LevelWarn, "unexpected message in reply to a connect request", ep.peer,
					slog.Int("type", int(typ)))
				ep.connectFailed(provider.ECONNREFUSED, nil)
			}
			return
		}
	}
}

// connected makes the endpoint usable and reports FI_CONNECTED with the
// peer's connection data (unless reported, as Accept does before its
// response goes out). ep.mu is held.
func (ep *endpoint) connected(data []byte, reported bool) {
	if ep.nodelay {
		_ = sys.TCPSetNoDelay(ep.conn, true)
	}
	if p, err := sys.TCPPeerName(ep.conn); err == nil {
		ep.peer = p
		setLoopbackCC(ep.conn, p, ep.loopCC)
	}
	ep.setState(epConnected)
	logCM(provider.LevelInfo, "connected", ep.peer)
	if ep.res.EQ != nil && !reported {
		_ = ep.res.EQ.Write(&provider.EQEntry{Event: provider.EventConnected, FID: ep, CMData: data})
	}
	if !ep.auto {
		// Manual progress polls the socket; drop the poller registration
		// the connect wait may have left (see sys.TCPReleaseWaiters).
		sys.TCPReleaseWaiters(ep.conn)
	}
	if ep.auto && !ep.goAuto {
		ep.goAuto = true
		ep.wg.Add(2)
		go ep.rxLoop()
		go ep.txLoop()
	}
	ep.flushTx()
	ep.drain()
}

// connectFailed reports a failed connect on the EQ (an error entry with e
// and, for a reject, its data); operations queued meanwhile complete with
// e. ep.mu is held.
func (ep *endpoint) connectFailed(e provider.Errno, data []byte) {
	if e == provider.ECONNREFUSED {
		logCM(provider.LevelInfo, "connect refused or rejected", ep.peer, slog.Int("reject_data", len(data)))
	} else {
		logCM(provider.LevelWarn, "connect failed", ep.peer, errAttr(e))
	}
	ep.downErr = e
	_ = sys.TCPShutdown(ep.conn)
	ep.setState(epDown)
	ep.failRx(e)
	ep.failTx(e)
	if ep.res.EQ != nil {
		_ = ep.res.EQ.WriteErr(&provider.EQErrEntry{FID: ep, Err: e, ProvErrno: int(e), ErrData: data})
	}
}

// Accept accepts the connection request the endpoint was opened from: it
// sends the connect response with data and reports FI_CONNECTED.
func (ep *endpoint) Accept(data []byte) error {
	if len(data) > CMDataSize {
		return provider.EINVAL
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch ep.state {
	case epClosed:
		return provider.EBADF
	case epAccepting:
	default:
		return provider.EOPBADSTATE
	}
	// The root package enabled the endpoint before calling Accept.
	b, err := tcpwire.AppendCM(ep.cmBuf[:0], tcpwire.CMConnResp, data)
	if err != nil {
		return provider.EINVAL
	}
	// FI_CONNECTED goes on the EQ before the response goes on the wire:
	// once the peer has the response it may connect again at once (as
	// fabtests' fi_multi_ep does, one endpoint after another), and that
	// FI_CONNREQ must not come before this FI_CONNECTED on a shared EQ.
	// Should the write fail, FI_SHUTDOWN follows.
	if ep.res.EQ != nil {
		_ = ep.res.EQ.Write(&provider.EQEntry{Event: provider.EventConnected, FID: ep})
	}
	// A fresh connection always takes a CM message at once; wait briefly
	// in the poller should it not.
	deadline := time.Now().Add(5 * time.Second)
	for len(b) > 0 {
		n, e := ep.conn.Write(b)
		switch e {
		case 0:
			b = b[n:]
		case provider.EAGAIN, provider.EINTR:
			if err := ep.conn.WaitWritable(deadline); err != nil {
				ep.acceptFailed(provider.ETIMEDOUT)
				return provider.ETIMEDOUT
			}
		default:
			ep.acceptFailed(e)
			return e.AsError()
		}
	}
	logCM(provider.LevelInfo, "accepted", ep.peer)
	ep.req = nil
	ep.connected(nil, true)
	return nil
}

// acceptFailed ends an endpoint whose connect response could not be
// written after FI_CONNECTED was reported: FI_SHUTDOWN follows it. ep.mu
// is held.
func (ep *endpoint) acceptFailed(e provider.Errno) {
	logCM(provider.LevelWarn, "accept failed", ep.peer, errAttr(e))
	ep.downErr = e
	ep.setState(epDown)
	if ep.res.EQ != nil {
		_ = ep.res.EQ.Write(&provider.EQEntry{Event: provider.EventShutdown, FID: ep})
	}
}

// Shutdown ends the connection (fi_shutdown): the peer sees end of stream
// and reports FI_SHUTDOWN; locally FI_SHUTDOWN is reported too, and
// outstanding operations complete with ECANCELED.
func (ep *endpoint) Shutdown(flags provider.Flags) error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch ep.state {
	case epClosed:
		return provider.EBADF
	case epConnected, epConnecting, epAccepting:
		ep.disconnect(provider.ECANCELED, 0, true)
		return nil
	case epDown:
		return nil
	}
	return provider.EOPBADSTATE
}

// disconnect ends a connection: outstanding transmits complete with err,
// a receive in progress completes with err, and FI_SHUTDOWN is reported
// once if the endpoint was connected. proto, when non-zero, is a protocol
// violation by the peer, also reported as an error completion on the
// receive CQ. ep.mu is held.
func (ep *endpoint) disconnect(err, proto provider.Errno, local bool) {
	was := ep.state
	if was != epConnected && was != epConnecting && was != epAccepting {
		return
	}
	switch {
	case proto != 0:
		logCM(provider.LevelWarn, "connection closed: protocol violation by the peer", ep.peer, errAttr(proto))
	case local:
		logCM(provider.LevelInfo, "shutdown", ep.peer)
	default:
		logCM(provider.LevelInfo, "connection closed by the peer or lost", ep.peer, errAttr(err))
	}
	ep.downErr = err
	_ = sys.TCPShutdown(ep.conn)
	ep.setState(epDown)
	reported := ep.failRx(err)
	if proto != 0 && !reported && ep.res.RxCQ != nil {
		flags := ep.rx.failFlags
		if flags == 0 {
			flags = provider.FlagRecv | provider.FlagMsg
		}
		if c := ep.res.Cntrs[provider.CntrRecv]; c != nil {
			c.IncErr()
		}
		_ = ep.res.RxCQ.WriteErr(&provider.CQErrEntry{Flags: flags, Err: proto, ProvErrno: int(proto),
			Src: provider.AddrNotAvail})
	}
	ep.failTx(err)
	ep.flushPosted()
	if ep.res.EQ != nil && (was == epConnected || local) {
		_ = ep.res.EQ.Write(&provider.EQEntry{Event: provider.EventShutdown, FID: ep})
	}
}

// flushPosted completes the untagged receives still posted to the
// endpoint's own receive queue with ECANCELED: the connection is gone and
// they can never match (libfabric flushes its receive queue likewise). A
// shared receive context is left alone: other endpoints may still serve
// its receives. ep.mu is held.
func (ep *endpoint) flushPosted() {
	q := ep.res.SRX
	if q == nil || ep.sharedRx {
		return
	}
	ep.flushPending = false
	for {
		// The largest size takes a whole multi-receive buffer at once.
		e, err := q.GetMsg(provider.AddrUnspec, math.MaxUint64)
		if err != nil {
			if e != nil {
				q.FreeEntry(e)
			}
			// EAGAIN: the receive CQ has no room (FI_RM_ENABLED); the
			// rest is flushed by a later Progress, once it has.
			ep.flushPending = err == provider.EAGAIN
			return
		}
		srx.CompleteErr(ep.res.RxCQ, ep.res.Cntrs[provider.CntrRecv], e, provider.ECANCELED, provider.AddrNotAvail)
		q.FreeEntry(e)
	}
}

// setState changes the state and wakes WaitReady callers. ep.mu is held.
func (ep *endpoint) setState(s epState) {
	ep.state = s
	ep.broadcast()
	if s != epConnected && s != epConnecting {
		ep.kick(ep.rxKick)
		ep.kick(ep.txKick)
	}
}

// broadcast wakes goroutines parked in WaitReady on a channel.
func (ep *endpoint) broadcast() {
	if ep.waiters.Load() == 0 {
		return
	}
	ep.umu.Lock()
	close(ep.stCh)
	ep.stCh = make(chan struct{})
	ep.umu.Unlock()
}

func (ep *endpoint) kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Progress makes progress without blocking: the connect exchange, then
// receives and transmits. A concurrent call returns at once.
func (ep *endpoint) Progress() {
	if !ep.mu.TryLock() {
		return
	}
	ep.progressLocked()
	ep.mu.Unlock()
}

func (ep *endpoint) progressLocked() {
	switch ep.state {
	case epConnecting:
		ep.progressCM()
	case epConnected:
		ep.progressRx()
		if ep.state == epConnected {
			ep.flushTx()
		}
		ep.drain()
	case epDown:
		if ep.flushPending {
			ep.flushPosted()
		}
	}
}

// rxLoop is the FI_PROGRESS_AUTO receive goroutine: it parks in the
// netpoller until the socket is readable (or, while the stream waits for
// a receive to be posted, until StartMsg kicks it; or, while it waits for
// room in the receive CQ or the receive queue, until room is freed).
func (ep *endpoint) rxLoop() {
	defer ep.wg.Done()
	var t *time.Timer
	armed := false // roomKick is armed: room freed since then kicks it
	for {
		ep.mu.Lock()
		if ep.state != epConnected {
			ep.mu.Unlock()
			return
		}
		ep.progressRx()
		if ep.state == epConnected {
			ep.flushTx()
			if ep.tx.blocked {
				ep.kick(ep.txKick)
			}
		}
		ep.drain()
		st, buffered, conn := ep.rx.st, ep.rx.rpos < ep.rx.rend, ep.conn
		ep.mu.Unlock()
		switch st {
		case rxWaitStart:
			select {
			case <-ep.rxKick:
			case <-ep.closeCh:
				return
			}
		case rxMatch, rxWaitCQ:
			// The receive queue holds as many unexpected messages as it
			// may, or (FI_RM_ENABLED) the receive CQ has no room for the
			// message's completion. Arm the room notification and try
			// once more (room freed before the arm is seen by the retry),
			// then sleep until room is freed: no polling while the
			// application does not read its CQ.
			if !armed {
				if ep.armRoom(st) {
					armed = true
					continue
				}
				// The queue cannot promise a notification (an SRX
				// owner or CQ from outside): poll.
				if t == nil {
					t = time.NewTimer(time.Millisecond)
				} else {
					t.Reset(time.Millisecond)
				}
				select {
				case <-ep.rxKick:
				case <-t.C:
				case <-ep.closeCh:
					return
				}
				continue
			}
			armed = false
			select {
			case <-ep.roomKick:
			case <-ep.rxKick:
			case <-ep.closeCh:
				return
			}
		default:
			if buffered && st == rxHdr || st == rxPayload && buffered {
				continue
			}
			if err := conn.WaitReadable(time.Time{}); err != nil {
				return
			}
		}
	}
}

// armRoom arms roomKick on what the stream waits for in state st (the
// receive queue for rxMatch, the receive CQ for rxWaitCQ). It reports
// false when that cannot notify.
func (ep *endpoint) armRoom(st int) bool {
	var n provider.RoomNotifier
	var ok bool
	if st == rxWaitCQ {
		n, ok = ep.rxRes.(provider.RoomNotifier)
	} else {
		n, ok = ep.res.SRX.(provider.RoomNotifier)
	}
	return ok && n.NotifyRoom(ep.roomKick)
}

// txLoop is the FI_PROGRESS_AUTO transmit goroutine: woken when a write
// would block, it parks in the netpoller until the socket is writable.
func (ep *endpoint) txLoop() {
	defer ep.wg.Done()
	for {
		select {
		case <-ep.txKick:
		case <-ep.closeCh:
			return
		}
		for {
			ep.mu.Lock()
			if ep.state != epConnected {
				ep.mu.Unlock()
				break
			}
			ep.flushTx()
			ep.drain()
			blocked, conn := ep.tx.blocked, ep.conn
			ep.mu.Unlock()
			if !blocked {
				break
			}
			if err := conn.WaitWritable(time.Time{}); err != nil {
				return
			}
		}
	}
}

// WaitReady parks until progress may be possible: the socket is readable
// (or writable while a transmit is blocked, or connecting), the endpoint's
// state changes, the deadline passes (ETIMEDOUT) or the endpoint is closed
// or disconnected (an error: nothing more will happen).
func (ep *endpoint) WaitReady(deadline time.Time) error {
	ep.waiters.Add(1)
	defer ep.waiters.Add(-1)
	ep.umu.Lock()
	ch := ep.stCh
	ep.umu.Unlock()
	ep.mu.Lock()
	st, conn, phase := ep.state, ep.conn, ep.cmPhase
	txBlocked, rst := ep.tx.blocked, ep.rx.st
	buffered := ep.rx.rpos < ep.rx.rend
	ep.mu.Unlock()
	switch st {
	case epClosed:
		return provider.EBADF
	case epDown:
		return provider.ENOTCONN
	case epConnecting:
		if phase == cmTCP || phase == cmSend {
			return conn.WaitWritable(deadline)
		}
		return conn.WaitReadable(deadline)
	case epConnected:
		switch {
		case buffered && (rst == rxHdr || rst == rxPayload):
			return nil
		case txBlocked:
			return conn.WaitWritable(deadline)
		case rst == rxHdr || rst == rxPayload:
			return conn.WaitReadable(deadline)
		}
	}
	// Idle, accepting, or a stream waiting for a receive: wait for a
	// state change.
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
	case <-ch:
		return nil
	case <-tc:
		return provider.ETIMEDOUT
	case <-ep.closeCh:
		return provider.EBADF
	}
}

// WaitFD returns the socket descriptor.
func (ep *endpoint) WaitFD() int { return ep.conn.FD() }

// TxSizeLeft returns the number of transmits that can be posted now
// (fi_tx_size_left).
func (ep *endpoint) TxSizeLeft() int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.tx.cap - ep.tx.outstanding()
}

// Cancel: transmits cannot be cancelled once posted (receives are
// cancelled by the receive queue).
func (ep *endpoint) Cancel(ctx any) error { return provider.ENOENT }

// Close ends the connection without reporting FI_SHUTDOWN and releases the
// endpoint. Outstanding transmits complete with ECANCELED, in posting
// order, on the CQ and counters the endpoint is bound to (fi_endpoint(3)
// lets fi_close discard them; nothing posted is lost here, on a shared
// transmit context too, whose credits they give back); a receive in
// progress completes with ECANCELED; messages still queued as unexpected
// in a shared receive queue complete with ECANCELED when a receive
// matches them (or stay deliverable if they were buffered).
func (ep *endpoint) Close() error {
	ep.mu.Lock()
	if ep.state == epClosed {
		ep.mu.Unlock()
		return provider.EBADF
	}
	ep.failRx(provider.ECANCELED)
	ep.failTx(provider.ECANCELED)
	ep.state = epClosed
	ep.broadcast()
	close(ep.closeCh)
	err := ep.conn.Close()
	if ep.req != nil {
		ep.req = nil
	}
	ep.mu.Unlock()
	ep.wg.Wait()
	return err
}

// ---- receive-queue peer (fi_ops_srx_peer) ----

// StartMsg delivers a queued unexpected message into the receive that now
// matches it.
func (ep *endpoint) StartMsg(e *provider.RxEntry) error { return ep.start(e, false) }

// StartTag is StartMsg for tagged messages.
func (ep *endpoint) StartTag(e *provider.RxEntry) error { return ep.start(e, false) }

// DiscardMsg drops a queued unexpected message without a completion.
func (ep *endpoint) DiscardMsg(e *provider.RxEntry) error { return ep.start(e, true) }

// DiscardTag is DiscardMsg for tagged messages.
func (ep *endpoint) DiscardTag(e *provider.RxEntry) error { return ep.start(e, true) }

func (ep *endpoint) start(e *provider.RxEntry, discard bool) error {
	if e == nil {
		return provider.EINVAL
	}
	switch pc := e.PeerContext.(type) {
	case *ubuf:
		// Buffered: deliver (or drop) from memory.
		e.PeerContext = nil
		if !discard {
			n, olen := srx.Deliver(e, pc.b[:pc.n])
			srx.Complete(ep.res.RxCQ, ep.res.Cntrs[provider.CntrRecv], e, n, olen, provider.AddrNotAvail)
		}
		ep.putUbuf(pc)
		ep.res.SRX.FreeEntry(e)
		return nil
	case *endpoint:
		if pc != ep {
			return provider.EINVAL
		}
		ep.umu.Lock()
		if ep.bpEntry != e {
			ep.umu.Unlock()
			return provider.EINVAL
		}
		ep.bpEntry = nil
		if dead := ep.rxDeadErr; dead != 0 {
			ep.umu.Unlock()
			e.PeerContext = nil
			if !discard {
				srx.CompleteErr(ep.res.RxCQ, ep.res.Cntrs[provider.CntrRecv], e, dead, provider.AddrNotAvail)
			}
			ep.res.SRX.FreeEntry(e)
			return nil
		}
		ep.started, ep.startDiscard = e, discard
		ep.umu.Unlock()
		ep.kick(ep.rxKick)
		ep.broadcast()
		return nil
	}
	return provider.EINVAL
}
