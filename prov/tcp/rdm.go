package tcp

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/provider"
)

// Reliable datagram endpoints (FI_EP_RDM), wire-compatible with libfabric
// 1.17's tcp;ofi_rxm (../shared/spec/libfabric-1.17-wire.md §5).
//
// An RDM endpoint listens on its address (the one fi_getname returns, and
// the one peers put in their AVs) and keeps one TCP connection per peer,
// opened on demand by the first operation towards that peer, or accepted
// when the peer opens it. Connections carry libfabric's tcp frames (§4.2)
// with the rxm connection data in the CM exchange and, for untagged
// messages and control traffic, the 64-byte rxm header after the tcp
// header. Protocols by size: eager up to rxmwire.EagerLimit bytes (tagged
// eager messages carry no rxm header, as rxm over tcp sends them), and
// rendezvous by RMA read above it: the sender announces the message with a
// rendezvous request, the receiver reads the data with a tcp read request
// once a receive matches, then tells the sender with a read-done message.
// Between two endpoints of this implementation, larger messages are
// streamed whole or copied by CMA instead (rdm_stream.go, rdm_cma.go).
//
// Progress is manual by default (inline in CQ, counter and EQ reads, as
// for FI_EP_MSG); FI_PROGRESS_AUTO adds one goroutine per endpoint that
// polls the endpoint's sockets. A send to a peer without a connection is
// queued while the connection is set up and completes once its frame is
// written; it is never refused with EAGAIN for that reason. Simultaneous
// connects between two endpoints are resolved as rxm resolves them: the
// request of the endpoint with the higher address (IP, then port) wins, the
// other is rejected with EALREADY, so both sides end with one connection.

// rdmState is the state of an RDM endpoint.
type rdmState uint8

const (
	rdmOpen rdmState = iota
	rdmEnabled
	rdmClosed
)

// rdmEP is a tcp FI_EP_RDM endpoint. All state is guarded by mu, taken
// with TryLock by progress; the receive-queue peer callbacks (StartMsg ...)
// run without mu (the owner may call them from inside a QueueMsg made under
// mu) and hand rendezvous work over through smu.
type rdmEP struct {
	caps    provider.Caps
	fmt     provider.AddrFormat
	auto    bool
	rm      bool
	nodelay bool
	loopCC  string // congestion control of loopback connections (FI_TCP_LOOPBACK_CC)
	pid     uint32
	txSize  int
	sockBuf [2]int // FI_OPT_RECV_BUF_SIZE, FI_OPT_SEND_BUF_SIZE requested (0: the kernel's default); see opts.go

	mu       sync.Mutex
	state    rdmState
	lis      *sys.Conn
	name     []byte // the listening address (fi_getname)
	srcPort  uint16 // transmit context of a scalable endpoint: its port, our messages' source to peers of ours (rxmwire.TypeGoSource)
	txCQ     provider.CQOwner
	rxCQ     provider.CQOwner
	txRes    provider.CQReserver
	rxRes    provider.CQReserver // FI_RM_ENABLED: room for remote CQ data of RMA writes
	txCntr   provider.CntrOwner
	rxCntr   provider.CntrOwner
	av       provider.AVView
	rq       provider.SRXOwner
	report   bool // FI_SOURCE: completions carry the source
	needSrc  bool // sources are looked up (FI_SOURCE or directed receive)
	srcErr   bool // FI_SOURCE_ERR
	peers    map[string]*rdmConn
	lastPeer *rdmConn // the connection peer found last (ep.peers[lastPeer.key] == lastPeer)
	// direct: the receive queue when it is ours (also shared or
	// imported), whose fast path (srx.Queue.ReceiveDirect) takes an
	// untagged eager message straight into the first posted receive;
	// directCQ the receive CQ when it is ours (srx.CompleteDirect).
	// dmsg ... dhas: the message ReceiveInto and ReceivedDirect handle.
	direct   *srx.Queue
	directCQ *cq.CQ
	dmsg     []byte
	dconn    *rdmConn
	ddata    uint64
	dhas     bool
	// nowSent, nowQueued, directRecv count the messages sendNow wrote
	// whole, those it queued (in part or whole), and the receives
	// ReceivedDirect completed.
	nowSent, nowQueued, directRecv uint64
	// nowBuf and nowIOV: sendNow's frame (rdm_tx.go).
	nowBuf   []byte
	nowIOV   [][]byte
	conns    []*rdmConn       // by our peer index; nil slots are free
	nconns   int              // connections in conns
	maxConns int              // idle connection bound (RDMMaxConns)
	clock    uint64           // use clock of the connections (LRU order)
	draining []*rdmConn       // connections closed for idleness, read until the peer closes
	simul    int              // simultaneous connects resolved, late requests included (a statistic)
	drained  int              // connections closed for idleness (a statistic)
	nextTrim time.Time        // when control progress next looks for idle connections (trimIdle)
	byFD     map[int]*rdmConn // connections by socket descriptor
	work     []*rdmConn       // connections with work of their own (noteWork)
	spare    []*rdmConn       // the other buffer of work (progressConns)
	pass     uint64           // progress passes (progressConns)
	incoming []*rdmIncome     // accepted sockets whose connect request is being read
	orphans  []*sys.Conn      // losing sides of simultaneous connects, closed at progress
	rndv     map[uint64]*rdmTx
	amo      map[uint64]*rdmTx // atomics waiting for their response, by msg_id
	nextKey  uint64
	cntrs    [provider.NumCntrs]provider.CntrOwner
	mr       provider.MRKeys
	// dynRbuf mirrors rxm's FI_OFI_RXM_ENABLE_DYN_RBUF (on by default):
	// off, tagged eager messages carry the rxm header and messages above
	// the eager limit up to sarLimit go by SAR, as a C peer so configured
	// expects. sarLimit is rxm's: the eager limit while dynRbuf is on.
	dynRbuf  bool
	sarLimit int
	// streamLimit: messages above the eager limit up to it go whole to
	// peers of this implementation (rdm_stream.go); streamed counts them
	// (a statistic).
	streamLimit int
	streamed    int
	// cmaOn, cmaMin: messages of at least cmaMin bytes to peers of ours on
	// this host go by CMA (rdm_cma.go).
	cmaOn     bool
	cmaMin    int
	cmaCopies int // messages received by CMA (a statistic)
	queued    int // operations queued or in flight (tx_attr.size bound)
	// credits: bound to a shared transmit context, its queue; every
	// operation counted in queued holds one (provider.TxCredits).
	credits provider.TxCredits
	// Buffered receives (rdm_bufrecv.go): on, FI_OPT_BUFFERED_MIN, and
	// the receive queue told when a message's first bytes arrive.
	bufOn   bool
	bufMin  uint64
	bufNote provider.BufferedNotifier
	// acceptTick counts data progress calls: every 256th accepts too.
	acceptTick uint8
	txFree     []*rdmTx

	smu      sync.Mutex
	starts   []*provider.RxEntry // unexpected rendezvous requests matched since the last progress
	discards []*rdmUnexp         // unexpected rendezvous requests discarded since the last progress
	// nstarts is len(starts)+len(discards), read without smu by progress.
	nstarts atomic.Int32

	// Unexpected messages held (rdmUnexpCost each), bounded by maxUnexp
	// messages and maxUnexpBytes; beyond, connections stop reading
	// (backpressure) until receives take some. held counts the connections
	// waiting for room.
	unexpN        atomic.Int64
	unexpBytes    atomic.Int64
	held          atomic.Int32
	maxUnexp      int64
	maxUnexpBytes int64

	kickFD  int  // eventfd: wakes the progress goroutines and WaitReady
	lazyFD  int  // timerfd: wakes the control goroutine for lazy frames (manual progress)
	epfd    int  // epoll set of the listener, kickFD and (epAll) every socket (WaitFD)
	epAll   bool // the sockets are in epfd (watchAll)
	closeCh chan struct{}
	wg      sync.WaitGroup
}

var (
	_ provider.Endpoint   = (*rdmEP)(nil)
	_ provider.Tagged     = (*rdmEP)(nil)
	_ provider.Waiter     = (*rdmEP)(nil)
	_ provider.FDWaiter   = (*rdmEP)(nil)
	_ provider.SRXPeer    = (*rdmEP)(nil)
	_ provider.AVListener = (*rdmEP)(nil)
)

// newRDM opens an RDM endpoint: its listening socket is bound and
// listening at once, so that fi_getname answers before Enable.
func newRDM(info *provider.Info) (*rdmEP, error) {
	if info.TxAttr != nil && (info.TxAttr.IOVLimit > IOVLimit || info.TxAttr.InjectSize > RDMInjectSize) {
		return nil, provider.EINVAL
	}
	if info.RxAttr != nil && info.RxAttr.IOVLimit > IOVLimit {
		return nil, provider.EINVAL
	}
	ep := &rdmEP{caps: info.Caps, fmt: info.AddrFormat, nodelay: envBool(envNoDelay, true), loopCC: envLoopbackCC(),
		pid: uint32(os.Getpid()), peers: map[string]*rdmConn{}, rndv: map[uint64]*rdmTx{}, amo: map[uint64]*rdmTx{},
		closeCh: make(chan struct{}), txSize: RDMQueueSize, kickFD: -1, lazyFD: -1, epfd: -1,
		maxUnexp: RDMMaxUnexpected, maxUnexpBytes: RDMMaxUnexpectedBytes, maxConns: envMaxConnsValue()}
	if ep.caps == 0 {
		ep.caps = rdmInfoCaps
	}
	ep.dynRbuf, ep.sarLimit = rdmProtoLimits()
	ep.streamLimit = rdmStreamLimitValue()
	ep.cmaOn, ep.cmaMin = rdmCMAConfig()
	ep.rm = true
	if info.DomainAttr != nil {
		ep.auto = info.DomainAttr.DataProgress == provider.ProgressAuto
		ep.rm = info.DomainAttr.ResourceMgmt != provider.RMDisabled
	}
	if info.TxAttr != nil && info.TxAttr.Size > 0 {
		ep.txSize = int(min(info.TxAttr.Size, maxQueueSize))
	}
	src := info.SrcAddr
	if src == nil {
		src = defaultSource(info)
	}
	if src == nil {
		return nil, provider.EINVAL
	}
	if _, f, ok := decodeSockaddr(src); !ok || !formatOK(info.AddrFormat, f) {
		return nil, provider.EINVAL
	}
	lis, err := sys.TCPSocket(src, true)
	if err != nil {
		return nil, err
	}
	if err := bindPort(src, func(a []byte) error { return sys.TCPBind(lis, a) }); err != nil {
		lis.Close()
		return nil, err
	}
	if err := sys.TCPListen(lis, Backlog); err != nil {
		lis.Close()
		return nil, err
	}
	name, err := lis.Name()
	if err != nil {
		lis.Close()
		return nil, err
	}
	ep.lis, ep.name = lis, name
	if err := ep.openWait(); err != nil {
		ep.closeWait()
		lis.Close()
		return nil, err
	}
	rdmTrack(ep)
	return ep, nil
}

// openWait creates the kick eventfd and the epoll set behind WaitFD.
func (ep *rdmEP) openWait() error {
	fd, err := sys.EventFDOpen()
	if err != nil {
		return err
	}
	ep.kickFD = fd
	if !ep.auto {
		if ep.lazyFD, err = sys.TimerFDOpen(); err != nil {
			return err
		}
	}
	if ep.epfd, err = sys.EpollCreate(); err != nil {
		return err
	}
	if err := sys.EpollAdd(ep.epfd, ep.kickFD); err != nil {
		return err
	}
	return sys.EpollAdd(ep.epfd, ep.lis.FD())
}

func (ep *rdmEP) closeWait() {
	if ep.epfd >= 0 {
		_ = sys.EpollClose(ep.epfd)
		ep.epfd = -1
	}
	if ep.kickFD >= 0 {
		_ = sys.EventFDClose(ep.kickFD)
		ep.kickFD = -1
	}
	if ep.lazyFD >= 0 {
		_ = sys.TimerFDClose(ep.lazyFD)
		ep.lazyFD = -1
	}
}

// watch adds a socket to the WaitFD set (a closed socket leaves it by
// itself), once the set is in use (watchAll). ep.mu is held.
func (ep *rdmEP) watch(fd int) {
	if ep.epAll && ep.epfd >= 0 {
		_ = sys.EpollAdd(ep.epfd, fd)
	}
}

// unwatch removes a socket from the WaitFD set. ep.mu is held.
func (ep *rdmEP) unwatch(fd int) {
	if ep.epAll && ep.epfd >= 0 {
		_ = sys.EpollDel(ep.epfd, fd)
	}
}

// watchAll puts the sockets in the epoll set from the time it is first
// needed: WaitFD (a wait object watches it) or more than rdmScanMax
// connections (progress asks it which sockets are readable). Until then
// the sockets stay out of it: a socket in an epoll set pays for the
// set's wake-up callback on every segment it receives, which is a few
// per cent of a small message's latency. ep.mu is held.
func (ep *rdmEP) watchAll() {
	if ep.epAll || ep.epfd < 0 {
		return
	}
	ep.epAll = true
	for _, in := range ep.incoming {
		ep.watch(in.sock.FD())
	}
	for _, c := range ep.conns {
		if c != nil && c.sock != nil && !c.rx.held && !c.waitDrain && !c.eof {
			ep.watch(c.sock.FD())
		}
	}
	for _, c := range ep.draining {
		if c.sock != nil && !c.rx.held {
			ep.watch(c.sock.FD())
		}
	}
}

// WaitFD returns a descriptor that is readable when progress may be
// possible: an epoll set holding the listening socket, every connection
// and the endpoint's wake-up eventfd (FI_WAIT_FD CQs and counters add it to
// their own sets).
func (ep *rdmEP) WaitFD() int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.watchAll()
	return ep.epfd
}

// Name returns the listening address.
func (ep *rdmEP) Name() ([]byte, error) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state == rdmClosed {
		return nil, provider.EBADF
	}
	return append([]byte(nil), ep.name...), nil
}

// Enable starts the endpoint with its CQs, counters, AV and receive queue.
func (ep *rdmEP) Enable(r *provider.Resources) error {
	if r == nil {
		return provider.EINVAL
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch ep.state {
	case rdmClosed:
		return provider.EBADF
	case rdmEnabled:
		return nil
	}
	if r.TxCQ == nil || r.RxCQ == nil {
		return provider.ENOCQ
	}
	if r.AV == nil {
		return provider.ENOAV
	}
	if r.SRX == nil {
		return provider.EINVAL
	}
	ep.txCQ, ep.rxCQ = r.TxCQ, r.RxCQ
	if ep.rm {
		ep.txRes, _ = r.TxCQ.(provider.CQReserver)
		ep.rxRes, _ = r.RxCQ.(provider.CQReserver)
	}
	ep.txCntr, ep.rxCntr = r.Cntrs[provider.CntrSend], r.Cntrs[provider.CntrRecv]
	ep.cntrs, ep.mr = r.Cntrs, r.MR
	ep.av, ep.rq = r.AV, r.SRX
	ep.direct, _ = r.SRX.(*srx.Queue)
	ep.directCQ, _ = r.RxCQ.(*cq.CQ)
	ep.credits = r.TxCredits
	ep.enableBuffered(r.SRX)
	ep.report = r.Source
	ep.srcErr = r.Source && r.SourceErr
	// A shared or imported receive queue is told every message's source:
	// directed receives are its owner's business.
	ep.needSrc = r.Source || ep.caps&(provider.CapSource|provider.CapDirectedRecv) != 0 || !r.OwnSRX
	ep.state = rdmEnabled
	ep.wg.Add(1)
	if ep.auto {
		go ep.autoLoop()
	} else {
		go ep.ctrlLoop()
	}
	return nil
}

// ctrlLoop is control progress (FI_PROGRESS_AUTO, as rxm's connection
// manager thread) under manual data progress: it accepts connections,
// answers connect requests and finishes connects, so that a peer that is
// not reading its CQ still gets connected, and writes the frames queued
// while a connection was set up. Established connections are left to the
// application's progress.
func (ep *rdmEP) ctrlLoop() { ep.pollLoop(ep.progressCtrl, ep.ctrlPollSet, ep.ctrlTimeout) }

// autoLoop is the FI_PROGRESS_AUTO goroutine: all progress.
func (ep *rdmEP) autoLoop() {
	ep.pollLoop(ep.progressLocked, ep.pollSet, func() int { return rdmPollTimeout })
}

// Poll timeouts of the progress goroutines, in milliseconds: while
// something has a deadline or a period (connection setup, drains, the
// idle-connection bound), and otherwise for the control goroutine, whose
// every other event has a descriptor (listener, kick, lazy timer). A
// goroutine asleep in poll(2) holds its thread in a system call, and
// while it does the runtime's monitor wakes every 20 µs to 10 ms to look
// at it: with a 50 ms timeout about a thousand times a second, each
// taking a core from the application's busy-polling threads.
const (
	rdmPollTimeout     = 50
	rdmCtrlIdleTimeout = 1000
)

// ctrlTimeout is the control goroutine's poll timeout. ep.mu is held.
func (ep *rdmEP) ctrlTimeout() int {
	if len(ep.incoming) > 0 || len(ep.draining) > 0 || len(ep.orphans) > 0 ||
		(ep.maxConns > 0 && ep.nconns > ep.maxConns) {
		return rdmPollTimeout
	}
	for _, c := range ep.conns {
		if c != nil && (c.state != connUp || len(c.out) > 0) {
			return rdmPollTimeout
		}
	}
	return rdmCtrlIdleTimeout
}

// pollLoop runs progress (with ep.mu held), then sleeps in poll(2) on the
// descriptors set lists until one is ready or the kick descriptor fires,
// until the endpoint closes.
func (ep *rdmEP) pollLoop(progress func(), set func([]sys.PollFD) []sys.PollFD, timeout func() int) {
	defer ep.wg.Done()
	var fds []sys.PollFD
	for {
		select {
		case <-ep.closeCh:
			return
		default:
		}
		ep.mu.Lock()
		if ep.state != rdmEnabled {
			ep.mu.Unlock()
			return
		}
		progress()
		fds = set(fds[:0])
		ms := timeout()
		ep.mu.Unlock()
		_, _ = sys.Poll(fds, ms)
		_ = sys.EventFDDrain(ep.kickFD)
		if ep.lazyFD >= 0 {
			_ = sys.TimerFDDrain(ep.lazyFD)
		}
	}
}

// progressCtrl advances connection management only. ep.mu is held.
func (ep *rdmEP) progressCtrl() {
	ep.acceptAll()
	ep.progressIncoming()
	for _, c := range ep.conns {
		if c != nil && (c.state != connUp || len(c.out) > 0) {
			c.progress()
		} else if c != nil && c.tx.lazy > 0 {
			// Read-done messages left for the application's next call
			// (the lazy timer woke us: it made none).
			c.flush()
		}
	}
	for _, o := range ep.orphans {
		o.Close()
	}
	clear(ep.orphans)
	ep.orphans = ep.orphans[:0]
}

// armLazy starts the timer after which the control goroutine writes the
// frames left for the next write (rdmTxQueue.lazy) should the application
// make no call meanwhile. ep.mu is held.
func (ep *rdmEP) armLazy() {
	if ep.lazyFD >= 0 {
		_ = sys.TimerFDArm(ep.lazyFD, rdmLazyDelay)
	}
}

// rdmLazyDelay bounds how long a read-done may wait for the receiver's next
// call under manual progress.
const rdmLazyDelay = time.Millisecond

// ctrlPollSet is pollSet for control progress: the listener, the kick and
// lazy-timer descriptors, accepted sockets and connections being set up.
// ep.mu is held.
func (ep *rdmEP) ctrlPollSet(fds []sys.PollFD) []sys.PollFD {
	fds = append(fds, sys.PollFD{FD: ep.lis.FD()}, sys.PollFD{FD: ep.kickFD})
	if ep.lazyFD >= 0 {
		fds = append(fds, sys.PollFD{FD: ep.lazyFD})
	}
	for _, in := range ep.incoming {
		fds = append(fds, sys.PollFD{FD: in.sock.FD(), Write: len(in.out) > 0})
	}
	for _, c := range ep.conns {
		if c != nil && c.sock != nil && (c.state != connUp || len(c.out) > 0) {
			fds = append(fds, sys.PollFD{FD: c.sock.FD(), Write: c.wantWrite()})
		}
	}
	return ep.drainSet(fds)
}

// drainSet appends the connections being drained. ep.mu is held.
func (ep *rdmEP) drainSet(fds []sys.PollFD) []sys.PollFD {
	for _, c := range ep.draining {
		if c.sock != nil {
			fds = append(fds, sys.PollFD{FD: c.sock.FD(), NoRead: c.rx.held})
		}
	}
	return fds
}

// kick wakes the auto-progress goroutine and WaitReady callers.
func (ep *rdmEP) kick() {
	if ep.kickFD >= 0 {
		_ = sys.EventFDSignal(ep.kickFD)
	}
}

// pollSet appends the descriptors progress waits for: the listener, the
// kick descriptor and every socket (writable too when it has frames to
// write or a connect in progress). ep.mu is held.
func (ep *rdmEP) pollSet(fds []sys.PollFD) []sys.PollFD {
	fds = append(fds, sys.PollFD{FD: ep.lis.FD()}, sys.PollFD{FD: ep.kickFD})
	for _, in := range ep.incoming {
		fds = append(fds, sys.PollFD{FD: in.sock.FD(), Write: len(in.out) > 0})
	}
	if ep.nconns > rdmScanMax && ep.epfd >= 0 {
		return ep.pollSetLarge(fds)
	}
	for _, c := range ep.conns {
		if c != nil && c.sock != nil {
			// A held connection, one at end of stream or one whose
			// predecessor is still drained is not read: waiting for its
			// readability would spin.
			noRead := c.rx.held || c.eof || (len(ep.draining) > 0 && c.state == connUp && ep.drainingFor(c.key))
			fds = append(fds, sys.PollFD{FD: c.sock.FD(), Write: c.wantWrite(), NoRead: noRead})
		}
	}
	if ep.auto {
		fds = ep.drainSet(fds)
	}
	return fds
}

// WaitReady sleeps until a socket of the endpoint is ready, a receive
// matched a queued rendezvous request, the deadline passes (ETIMEDOUT) or
// the endpoint is closed (EBADF).
func (ep *rdmEP) WaitReady(deadline time.Time) error {
	ep.mu.Lock()
	if ep.state != rdmEnabled {
		st := ep.state
		ep.mu.Unlock()
		if st == rdmClosed {
			return provider.EBADF
		}
		return provider.EOPBADSTATE
	}
	fds := ep.pollSet(nil)
	ep.mu.Unlock()
	ep.smu.Lock()
	pending := len(ep.starts) > 0 || len(ep.discards) > 0
	ep.smu.Unlock()
	if pending {
		return nil
	}
	ms := 100
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return provider.ETIMEDOUT
		}
		ms = int(min(d, 100*time.Millisecond) / time.Millisecond)
		if ms == 0 {
			ms = 1
		}
	}
	ready, err := sys.Poll(fds, ms)
	if err != nil {
		return err
	}
	if !ready && !deadline.IsZero() && !time.Now().Before(deadline) {
		return provider.ETIMEDOUT
	}
	return nil
}

// Progress accepts connections, advances connection setup, writes queued
// frames and reads incoming ones, without blocking. If another goroutine is
// progressing the endpoint it returns at once.
func (ep *rdmEP) Progress() {
	if !ep.mu.TryLock() {
		return
	}
	if ep.state == rdmEnabled {
		ep.progressLocked()
	}
	ep.mu.Unlock()
}

func (ep *rdmEP) progressLocked() {
	ep.acceptTick++
	if ep.auto || ep.acceptTick == 0 || len(ep.incoming) > 0 {
		// Without the auto-progress goroutine, the control goroutine
		// accepts connections: the data path saves the accept(2) that
		// would find nothing on almost every call. It still accepts
		// every 256th call, and reads the connect requests of accepted
		// sockets, so that a peer is served even when the control
		// goroutine cannot run (the application's threads busy-polling
		// under SCHED_FIFO starve it: the connect timed out).
		ep.acceptAll()
		ep.progressIncoming()
	}
	ep.takeStarts()
	ep.progressConns()
	ep.takeStarts()
	for _, o := range ep.orphans {
		o.Close()
	}
	clear(ep.orphans)
	ep.orphans = ep.orphans[:0]
}

// Cancel: sends are not cancelled (receives are, by the receive queue).
func (ep *rdmEP) Cancel(ctx any) error { return provider.ENOENT }

// AddrInserted resolves the sources of queued unexpected messages whose
// sender was not in the AV when they arrived.
func (ep *rdmEP) AddrInserted() {
	ep.mu.Lock()
	ok := ep.state == rdmEnabled && ep.needSrc
	ep.mu.Unlock()
	if !ok {
		return
	}
	ep.rq.ForeachUnspecAddr(func(e *provider.RxEntry) provider.Addr {
		u, ok := e.PeerContext.(*rdmUnexp)
		if !ok || u == nil || e.Peer != provider.SRXPeer(ep) {
			return provider.AddrNotAvail
		}
		return ep.av.Reverse(u.from)
	})
}

// Close ends every connection; operations still queued or waiting for a
// rendezvous read complete with FI_ECANCELED.
func (ep *rdmEP) Close() error {
	ep.mu.Lock()
	if ep.state == rdmClosed {
		ep.mu.Unlock()
		return provider.EBADF
	}
	enabled := ep.state == rdmEnabled
	ep.state = rdmClosed
	close(ep.closeCh)
	ep.kick()
	ep.mu.Unlock()
	ep.wg.Wait()
	ep.mu.Lock()
	defer ep.mu.Unlock()
	for _, c := range ep.conns {
		if c != nil {
			c.fail(provider.ECANCELED, enabled)
		}
	}
	for _, c := range ep.draining {
		c.fail(provider.ECANCELED, enabled)
	}
	ep.draining = nil
	for _, in := range ep.incoming {
		in.sock.Close()
	}
	for _, o := range ep.orphans {
		o.Close()
	}
	ep.incoming, ep.orphans, ep.conns = nil, nil, nil
	clear(ep.peers)
	ep.lastPeer = nil
	ep.closeWait()
	rdmUntrack(ep)
	return ep.lis.Close()
}

// takeStarts issues the reads of rendezvous requests that receives matched
// since the last call (StartMsg runs without ep.mu). ep.mu is held.
func (ep *rdmEP) takeStarts() {
	if ep.nstarts.Load() == 0 {
		return
	}
	ep.smu.Lock()
	s, d := ep.starts, ep.discards
	ep.starts, ep.discards = nil, nil
	ep.nstarts.Store(0)
	ep.smu.Unlock()
	for _, u := range d {
		if u.sar != nil {
			ep.sarDiscard(u)
			continue
		}
		if u.conn.gen == u.gen {
			u.conn.unexpRndv--
		}
		switch {
		case u.conn.state != connUp || u.conn.gen != u.gen:
		case u.bufE != nil && ep.bufOn:
			// Buffered: nothing more is read; the read-done goes behind
			// the read request of its first bytes, if any.
			u.conn.sendReadDone(u.msgID)
		default:
			u.conn.startRndv(nil, &u.rndv, u.msgID, u.from, u.cmaPtr())
		}
	}
	for _, e := range s {
		u := e.PeerContext.(*rdmUnexp)
		if u.sar != nil {
			ep.sarStart(e, u)
			continue
		}
		e.PeerContext = nil
		if u.conn.gen == u.gen {
			u.conn.unexpRndv--
		}
		if u.conn.state != connUp || u.conn.gen != u.gen {
			ep.completeRxErr(e, provider.ECONNABORTED)
			continue
		}
		if u.ready.Load() {
			// Claimed after its first bytes were shown (rdm_bufrecv.go).
			u.conn.startBufRndv(e, u, e.MsgSize)
			continue
		}
		u.conn.startRndv(e, &u.rndv, u.msgID, u.from, u.cmaPtr())
	}
}

// rdmConnID returns our connection id for a peer index.
func (ep *rdmEP) rdmConnID(index uint32) uint64 { return rxmwire.ConnID(ep.pid, index) }

// addConn registers c under a free peer index. ep.mu is held.
func (ep *rdmEP) addConn(c *rdmConn) {
	for i, x := range ep.conns {
		if x == nil {
			c.index = uint32(i)
			ep.conns[i] = c
			ep.nconns++
			if ep.nconns > rdmScanMax {
				ep.watchAll()
			}
			return
		}
	}
	c.index = uint32(len(ep.conns))
	ep.conns = append(ep.conns, c)
	ep.nconns++
	if ep.nconns > rdmScanMax {
		ep.watchAll()
	}
}

// removeConn forgets c. ep.mu is held.
func (ep *rdmEP) removeConn(c *rdmConn) {
	if int(c.index) < len(ep.conns) && ep.conns[c.index] == c {
		ep.conns[c.index] = nil
		ep.nconns--
	}
	if c.key != "" && ep.peers[c.key] == c {
		delete(ep.peers, c.key)
	}
	if ep.lastPeer == c {
		ep.lastPeer = nil
	}
}
