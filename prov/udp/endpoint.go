package udp

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/av"
	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Endpoint states.
const (
	stateCreated int32 = iota
	stateEnabled
	stateClosed
)

// maxDatagram is the bounce buffer size: the largest UDP payload.
const maxDatagram = 65536

// endpoint is a udp FI_EP_DGRAM endpoint: one non-blocking UDP socket.
type endpoint struct {
	state atomic.Int32
	auto  bool // FI_PROGRESS_AUTO: a goroutine progresses receives
	rm    bool // FI_RM_ENABLED: never overrun a CQ
	caps  provider.Caps
	fmt   provider.AddrFormat

	mu       sync.Mutex // control path: SetName, Enable, Close
	sock     *sys.Conn  // replaced only before Enable (SetName)
	sockBuf  [2]int     // FI_OPT_RECV_BUF_SIZE, FI_OPT_SEND_BUF_SIZE set (0: default), kept across SetName (opts.go)
	autoDone chan struct{}
	closeCh  chan struct{} // closed by Close (auto progress)
	roomKick chan struct{} // armed with provider.RoomNotifier while the receive CQ is full

	// Set by Enable, read-only afterwards.
	txCQ, rxCQ     provider.CQOwner
	txRes          provider.CQReserver // txCQ's reservations, with rm, when it is not txDirect (nil if it has none)
	txDirect       *cq.CQ              // txCQ, when it is this module's CQ: sends complete through it (see Send)
	rxFull         provider.CQReserver // rxCQ's fullness, with rm (nil if unknown)
	rxFullCQ       *cq.CQ              // rxFull, when it is this module's CQ: Full without an interface call
	txCntr, rxCntr provider.CntrOwner
	av             provider.AVView
	rq             provider.SRXOwner
	direct         *srx.Queue // rq, when the endpoint owns it: receive into posted buffers
	directCQ       *cq.CQ     // rxCQ, when it is this module's CQ: direct receives complete through it
	needSrc        bool       // look up the source fi_addr of every datagram
	reportSrc      bool       // FI_SOURCE: completions carry the source
	sourceErr      bool       // FI_SOURCE_ERR: unknown sources complete with FI_EADDRNOTAVAIL

	// Receive side, guarded by rxMu.
	rxMu   sync.Mutex
	bounce []byte
	from   [sys.SizeofSockaddrMax]byte

	// Direct receive side, guarded by the lock of the direct queue
	// (ReceiveInto and ReceivedDirect run under it).
	dfrom    [sys.SizeofSockaddrMax]byte
	dfromLen int
	drxErr   provider.Errno  // why ReceiveInto received nothing
	dav      *av.AV          // av, when it is this module's AV: sources looked up through drev
	drev     av.ReverseCache // the last source looked up on the direct path

	// Unexpected-message buffers, guarded by poolMu (never held across a
	// call into the SRX).
	poolMu sync.Mutex
	free   []*ubuf
	live   int
	drops  atomic.Uint64 // datagrams dropped for lack of a buffer
}

// ubuf holds an unexpected datagram until a receive matches it.
type ubuf struct {
	b      []byte // pooled buffer (MaxMsgSize), or a larger one-off
	n      int    // bytes stored
	size   int    // the datagram's real length
	src    [28]byte
	srcLen int // length of the source sockaddr in src
}

var (
	_ provider.Endpoint   = (*endpoint)(nil)
	_ provider.Waiter     = (*endpoint)(nil)
	_ provider.FDWaiter   = (*endpoint)(nil)
	_ provider.Namer      = (*endpoint)(nil)
	_ provider.SRXPeer    = (*endpoint)(nil)
	_ provider.Progresser = (*endpoint)(nil)
	_ provider.Injector   = (*endpoint)(nil)
	_ provider.BufSender  = (*endpoint)(nil)
)

func newEndpoint(info *provider.Info) (*endpoint, error) {
	if info == nil {
		return nil, provider.EINVAL
	}
	if info.EPAttr != nil && info.EPAttr.Type != provider.EPUnspec && info.EPAttr.Type != provider.EPDgram {
		return nil, provider.EINVAL
	}
	if err := checkLimits(info); err != nil {
		return nil, err
	}
	src := info.SrcAddr
	if src == nil {
		src = defaultSource(info)
	}
	if _, f, ok := decodeSockaddr(src); !ok || !formatOK(info.AddrFormat, f) {
		return nil, provider.EINVAL
	}
	sock, err := sys.OpenUDP(src)
	if err != nil {
		return nil, err
	}
	return newEndpointOn(info, sock), nil
}

// newEndpointOn returns an endpoint on the socket sock (which it owns)
// for the validated info.
func newEndpointOn(info *provider.Info, sock *sys.Conn) *endpoint {
	ep := &endpoint{sock: sock, caps: info.Caps, fmt: info.AddrFormat, bounce: make([]byte, maxDatagram)}
	if ep.caps == 0 {
		ep.caps = infoCaps
	}
	if info.DomainAttr != nil && info.DomainAttr.DataProgress == provider.ProgressAuto {
		ep.auto = true
	}
	ep.rm = info.DomainAttr == nil || info.DomainAttr.ResourceMgmt != provider.RMDisabled
	return ep
}

// checkLimits refuses an Info whose limits exceed the provider's (an
// application may raise them after GetInfo): the root package enforces the
// Info's limits on every data call, and Send and the receive path rely on
// them.
func checkLimits(info *provider.Info) error {
	if a := info.EPAttr; a != nil && a.MaxMsgSize > MaxMsgSize {
		return provider.EINVAL
	}
	if a := info.TxAttr; a != nil && (a.IOVLimit > IOVLimit || a.InjectSize > InjectSize) {
		return provider.EINVAL
	}
	if a := info.RxAttr; a != nil && a.IOVLimit > IOVLimit {
		return provider.EINVAL
	}
	if a := info.DomainAttr; a != nil && a.CQDataSize > 0 {
		return provider.EINVAL
	}
	return nil
}

// Name returns the socket's address (getsockname) in libfabric's layout.
func (ep *endpoint) Name() ([]byte, error) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state.Load() == stateClosed {
		return nil, provider.EBADF
	}
	return ep.sock.Name()
}

// SetName rebinds the endpoint to addr (fi_setname); only before Enable.
func (ep *endpoint) SetName(addr []byte) error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch ep.state.Load() {
	case stateClosed:
		return provider.EBADF
	case stateEnabled:
		return provider.EOPBADSTATE
	}
	if _, f, ok := decodeSockaddr(addr); !ok || !formatOK(ep.fmt, f) {
		return provider.EINVAL
	}
	sock, err := sys.OpenUDP(addr)
	if err != nil {
		return err
	}
	ep.applySockBufs(sock)
	old := ep.sock
	ep.sock = sock
	old.Close()
	return nil
}

// Enable starts the endpoint. udp needs both CQs (FI_ENOCQ), an AV
// (FI_ENOAV) and a receive queue.
func (ep *endpoint) Enable(r *provider.Resources) error {
	if r == nil {
		return provider.EINVAL
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	switch ep.state.Load() {
	case stateClosed:
		return provider.EBADF
	case stateEnabled:
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
	ep.txDirect, _ = r.TxCQ.(*cq.CQ)
	if ep.rm {
		if ep.txDirect == nil {
			ep.txRes, _ = r.TxCQ.(provider.CQReserver)
		}
		ep.rxFull, _ = r.RxCQ.(provider.CQReserver)
		ep.rxFullCQ, _ = r.RxCQ.(*cq.CQ)
	}
	ep.txCntr, ep.rxCntr = r.Cntrs[provider.CntrSend], r.Cntrs[provider.CntrRecv]
	ep.av, ep.rq = r.AV, r.SRX
	if q, ok := r.SRX.(*srx.Queue); ok && r.OwnSRX {
		ep.direct = q
	}
	ep.directCQ, _ = r.RxCQ.(*cq.CQ)
	ep.dav, _ = r.AV.(*av.AV)
	ep.reportSrc = r.Source
	ep.sourceErr = r.SourceErr && r.Source
	ep.needSrc = r.Source || ep.caps&(provider.CapSource|provider.CapDirectedRecv) != 0
	ep.state.Store(stateEnabled)
	if ep.auto {
		ep.autoDone = make(chan struct{})
		ep.closeCh = make(chan struct{})
		ep.roomKick = make(chan struct{}, 1)
		go ep.autoProgress(ep.sock, ep.autoDone)
	}
	return nil
}

// Send transmits m as one datagram to the address m.Addr has in the AV.
// The datagram is handed to the kernel before Send returns, so the buffer
// is reusable at once and the completion (written when m.Flags has
// FlagCompletion) is immediate. EAGAIN means the socket buffer is full, or
// (FI_RM_ENABLED) the transmit CQ has no room for the completion, and
// nothing was sent. A kernel error is reported as an error completion
// (whatever FlagCompletion says), or returned by an inject that asked for
// no completion.
//
// The root package has validated m against the endpoint's Info (provider
// package documentation): the endpoint is enabled, m has at most
// tx_attr.iov_limit buffers and at most max_msg_size bytes (inject_size
// with FlagInject), and no FlagRemoteCQData (cq_data_size is 0);
// checkLimits holds those attributes to the provider's own. Send checks
// only what depends on its state: the destination's AV entry and room in
// the CQ. The state test is an assertion (one atomic load): it keeps a
// provider endpoint driven without the root package, as the tests here do,
// from reaching the unset AV, and answers EBADF to a send racing with
// Close.
func (ep *endpoint) Send(m provider.Msg) error {
	return ep.send(m.Buf, m.IOV, m.Addr, m.Context, m.Flags)
}

// SendBuf is Send of one buffer (provider.BufSender).
//
// fi_send's common case, spelled out: this module's AV and transmit CQ, a
// completion wanted, and the datagram accepted by the kernel. It is send's
// outcome for that case, without send's case analysis; anything else
// (including every error) takes send, before anything was sent.
func (ep *endpoint) SendBuf(buf []byte, dest provider.Addr, ctx any, flags provider.Flags) error {
	d, a := ep.txDirect, ep.dav
	if d == nil || a == nil || flags&(provider.FlagInject|provider.FlagCompletion) != provider.FlagCompletion ||
		ep.state.Load() != stateEnabled || (ep.rm && d.Full()) {
		return ep.send(buf, nil, dest, ctx, flags)
	}
	to := a.Lookup(dest)
	if to == nil {
		return provider.EINVAL
	}
	if _, e := ep.sock.SendTo(buf, to); e != 0 {
		return ep.sendFailed(e, ctx, flags, nil)
	}
	if ep.txCntr != nil {
		ep.txCntr.Inc()
	}
	_ = d.WriteMsg(ctx, provider.FlagSend|provider.FlagMsg, 0, 0, provider.AddrNotAvail)
	return nil
}

// send is Send of the message m with Buf buf, IOV iov, Addr to, Context
// ctx and Flags flags.
func (ep *endpoint) send(buf []byte, iov [][]byte, to provider.Addr, ctx any, flags provider.Flags) error {
	if st := ep.state.Load(); st != stateEnabled {
		if st == stateClosed {
			return provider.EBADF
		}
		return provider.EOPBADSTATE
	}
	var dest []byte
	if a := ep.dav; a != nil {
		dest = a.Lookup(to) // inlined: no interface call
	} else {
		dest = ep.av.Lookup(to)
	}
	if dest == nil {
		return provider.EINVAL
	}
	// With resource management a send whose completion the CQ has no room
	// for is EAGAIN (fi_domain(3) "Tx CQ"), never an overrun. A pure
	// inject writes no completion at all; any other send may write one
	// (an error completes even under selective completion).
	//
	// On this module's CQ (txDirect, the common case) the room is checked
	// with Full, one atomic load, and the completion written unreserved:
	// the datagram has left before Send returns, so there is no operation
	// in flight to hold room for, and a CQ with resource management keeps
	// the rare completion that concurrent senders push past its size
	// rather than lose it (as srx.Queue.ReceiveDirect does for receives).
	// Reserve and WriteReserved would take the CQ's lock twice, once
	// before the sendto, on every send. Other CQs that offer reservations
	// (an imported FI_PEER CQ) are reserved in, as provider.CQReserver
	// asks.
	room := flags&(provider.FlagInject|provider.FlagCompletion) != provider.FlagInject
	direct := ep.txDirect
	res := ep.txRes
	switch {
	case !room:
		res = nil
	case direct != nil:
		if ep.rm && direct.Full() {
			return provider.EAGAIN
		}
	case res != nil:
		if !res.Reserve() {
			return provider.EAGAIN
		}
	}
	var e provider.Errno
	switch {
	case iov == nil:
		_, e = ep.sock.SendTo(buf, dest)
	case len(iov) == 1:
		_, e = ep.sock.SendTo(iov[0], dest)
	default:
		_, e = ep.sock.SendMsg(iov, dest)
	}
	switch e {
	case 0:
		// The counter before the completion (as srx.Complete): a thread
		// that has read the completion sees the counter include it.
		if ep.txCntr != nil {
			ep.txCntr.Inc()
		}
		if flags&provider.FlagCompletion != 0 {
			switch {
			case direct != nil:
				_ = direct.WriteMsg(ctx, provider.FlagSend|provider.FlagMsg, 0, 0, provider.AddrNotAvail)
			case res != nil:
				_ = res.WriteReserved(ctx, provider.FlagSend|provider.FlagMsg, 0, nil, 0, 0, provider.AddrNotAvail)
				res = nil
			default:
				_ = ep.txCQ.Write(ctx, provider.FlagSend|provider.FlagMsg, 0, nil, 0, 0, provider.AddrNotAvail)
			}
		}
		if res != nil {
			res.Unreserve()
		}
		return nil
	}
	return ep.sendFailed(e, ctx, flags, res)
}

// sendFailed is the outcome of a send whose datagram the kernel refused
// with e: EAGAIN (nothing sent, try again) or EBADF once closed, with the
// reservation res given back; otherwise the error counted and completed
// (into res when reserved), or returned by an inject that asked for no
// completion.
func (ep *endpoint) sendFailed(e provider.Errno, ctx any, flags provider.Flags, res provider.CQReserver) error {
	switch e {
	case provider.EAGAIN, provider.ENOBUFS, provider.EINTR:
		if res != nil {
			res.Unreserve()
		}
		return provider.EAGAIN
	case sys.ErrClosed:
		if res != nil {
			res.Unreserve()
		}
		return provider.EBADF
	}
	if ep.txCntr != nil {
		ep.txCntr.IncErr()
	}
	if flags&(provider.FlagInject|provider.FlagCompletion) == provider.FlagInject {
		if res != nil {
			res.Unreserve()
		}
		return e.AsError() // fi_inject: no completion at all, so the call reports it
	}
	// Errors complete even under selective completion.
	ee := provider.CQErrEntry{OpContext: ctx, Flags: provider.FlagSend | provider.FlagMsg,
		Err: e, ProvErrno: int(e), Src: provider.AddrNotAvail}
	if res != nil {
		_ = res.WriteErrReserved(&ee)
	} else {
		_ = ep.txCQ.WriteErr(&ee)
	}
	return nil
}

// Inject is Send of a plain inject (provider.Injector): buf to dest, no
// completion, so no CQ room to check; a kernel error is returned.
func (ep *endpoint) Inject(buf []byte, dest provider.Addr) error {
	if st := ep.state.Load(); st != stateEnabled {
		if st == stateClosed {
			return provider.EBADF
		}
		return provider.EOPBADSTATE
	}
	var to []byte
	if a := ep.dav; a != nil {
		to = a.Lookup(dest) // inlined: no interface call
	} else {
		to = ep.av.Lookup(dest)
	}
	if to == nil {
		return provider.EINVAL
	}
	if _, e := ep.sock.SendTo(buf, to); e != 0 {
		return ep.injectErr(e)
	}
	if ep.txCntr != nil {
		ep.txCntr.Inc()
	}
	return nil
}

// injectErr is what an inject that failed with e returns: EAGAIN (nothing
// sent, try again), EBADF once closed, else the kernel's error, counted.
func (ep *endpoint) injectErr(e provider.Errno) error {
	switch e {
	case provider.EAGAIN, provider.ENOBUFS, provider.EINTR:
		return provider.EAGAIN
	case sys.ErrClosed:
		return provider.EBADF
	}
	if ep.txCntr != nil {
		ep.txCntr.IncErr()
	}
	return e.AsError()
}

// Cancel finds nothing to cancel: sends complete before Send returns, and
// receives are cancelled by the receive queue.
func (ep *endpoint) Cancel(ctx any) error { return provider.ENOENT }

// Progress receives up to ProgressBudget datagrams without blocking and
// delivers them through the receive queue. If another goroutine is already
// progressing the endpoint it returns at once.
//
// When the endpoint owns its receive queue and the first posted receive
// takes any datagram (the common case), one datagram is received straight
// into that receive's buffers under the queue's lock (receiveDirect);
// otherwise datagrams go through the bounce buffer and GetMsg, under rxMu.
func (ep *endpoint) Progress() {
	if ep.state.Load() != stateEnabled {
		return
	}
	if q := ep.direct; q != nil {
		// receiveDirect and rxCQFull, spelled out: this is every busy
		// poll (rxCQFull does not inline).
		if c := ep.rxFullCQ; c != nil {
			if c.Full() {
				return // see progressLocked
			}
		} else if ep.rxFull != nil && ep.rxFull.Full() {
			return
		}
		if q.ReceiveDirect(ep) != srx.DirectUnavailable {
			return
		}
	}
	if !ep.rxMu.TryLock() {
		return
	}
	ep.progressLocked()
	ep.rxMu.Unlock()
}

// receiveDirect is one poll of the direct path. It reports false when the
// queue does not allow it now, and the bounce path is to run instead.
func (ep *endpoint) receiveDirect() bool {
	if ep.rxCQFull() {
		return true // see progressLocked
	}
	return ep.direct.ReceiveDirect(ep) != srx.DirectUnavailable
}

// rxCQFull reports whether the receive CQ has no room for a completion
// (with FI_RM_ENABLED; always false without): the receive path then leaves
// datagrams in the socket. On this module's CQ it is one atomic load
// (cq.CQ.Full inlines), without an interface call.
func (ep *endpoint) rxCQFull() bool {
	if c := ep.rxFullCQ; c != nil {
		return c.Full()
	}
	return ep.rxFull != nil && ep.rxFull.Full()
}

func (ep *endpoint) progressLocked() {
	sock := ep.sock
	for i := 0; i < ProgressBudget; i++ {
		if ep.rxCQFull() {
			// FI_RM_ENABLED: a receive CQ without room is never overrun;
			// datagrams wait in the socket buffer until the application
			// reads the CQ (the kernel drops them if that fills up, which
			// FI_EP_DGRAM allows).
			return
		}
		size, fl, e := sock.RecvFrom(ep.bounce, ep.from[:])
		if e != 0 {
			if e == provider.EAGAIN || e == sys.ErrClosed {
				return
			}
			continue // a pending socket error, consumed by the call
		}
		data := ep.bounce
		if size < len(data) {
			data = data[:size]
		}
		if ep.deliver(data, size, ep.from[:fl]) {
			// A completion is ready: let the reader see it now rather
			// than pay one more recvfrom (EAGAIN) on the latency path.
			return
		}
	}
}

// ReceiveInto implements srx.Receiver: one datagram from the socket,
// straight into the posted receive's buffers, under the queue's lock.
// Close sets the state before it waits for that lock, and closes the
// socket only then, so no receive starts once Close has begun and none is
// in flight when the socket closes.
func (ep *endpoint) ReceiveInto(iov [][]byte) (size int, ok bool) {
	if ep.state.Load() != stateEnabled {
		ep.drxErr = sys.ErrClosed
		return 0, false
	}
	var fl int
	var e provider.Errno
	if len(iov) == 1 {
		// No in-flight reference: Close waits for the queue's lock,
		// which the caller holds, before it closes the socket. Without
		// FI_SOURCE the sender's address is not asked for: the kernel
		// then skips copying it out (ReceivedDirect does not use it).
		var from []byte
		if ep.reportSrc {
			from = ep.dfrom[:]
		}
		size, fl, e = ep.sock.RecvFromOwned(iov[0], from)
	} else {
		size, fl, e = ep.sock.RecvMsg(iov, ep.dfrom[:])
	}
	if e != 0 {
		// EAGAIN, or a pending socket error the call consumed: the next
		// poll tries again.
		ep.drxErr = e
		return 0, false
	}
	ep.dfromLen = fl
	return size, true
}

// ReceivedDirect implements srx.Receiver: the completion of the receive
// ReceiveInto filled, under the queue's lock.
func (ep *endpoint) ReceivedDirect(e *provider.RxEntry, n int, olen uint64) {
	src := provider.AddrNotAvail
	if ep.reportSrc {
		if ep.dav != nil {
			src = ep.dav.ReverseCached(&ep.drev, ep.dfrom[:ep.dfromLen])
		} else {
			src = ep.av.Reverse(ep.dfrom[:ep.dfromLen])
		}
	}
	if c := ep.directCQ; c != nil && olen == 0 && (src != provider.AddrNotAvail || !ep.sourceErr) {
		srx.CompleteDirect(c, ep.rxCntr, e, n, src)
		return
	}
	srx.CompleteFrom(ep.rxCQ, ep.rxCntr, e, n, olen, src, ep.dfrom[:ep.dfromLen], ep.sourceErr)
}

// deliver matches one datagram against the receive queue: into the posted
// receive, or queued as unexpected in a pooled copy, or dropped.
func (ep *endpoint) deliver(data []byte, size int, from []byte) (completed bool) {
	src := provider.AddrNotAvail
	if ep.needSrc {
		src = ep.av.Reverse(from)
	}
	e, err := ep.rq.GetMsg(src, uint64(size))
	switch {
	case err == nil:
		ep.complete(e, data, uint64(size-len(data)), from)
		ep.rq.FreeEntry(e)
		return true
	case err == provider.ENOENT && e != nil:
		u := ep.getUbuf(len(data))
		if u == nil {
			ep.drops.Add(1)
			ep.rq.FreeEntry(e)
			return
		}
		u.n = copy(u.b, data)
		u.size = size
		u.srcLen = copy(u.src[:], from)
		e.Peer = ep
		e.PeerContext = u
		if ep.rq.QueueMsg(e) != nil {
			ep.putUbuf(u)
			ep.rq.FreeEntry(e)
			ep.drops.Add(1)
		}
	default:
		// The queue holds as many unexpected messages as it may (EAGAIN)
		// or is closed: a datagram endpoint drops the message.
		ep.drops.Add(1)
	}
	return false
}

// complete copies data into e's buffers and writes the completion: an
// FI_ETRUNC error completion with olen when the message does not fit
// (extra counts bytes already lost before the copy).
func (ep *endpoint) complete(e *provider.RxEntry, data []byte, extra uint64, from []byte) {
	n, olen := srx.Deliver(e, data)
	src := provider.AddrNotAvail
	if ep.reportSrc {
		src = e.Addr
	}
	srx.CompleteFrom(ep.rxCQ, ep.rxCntr, e, n, olen+extra, src, from, ep.sourceErr)
}

// AddrInserted is called after addresses were inserted into the bound AV:
// the owner resolves the sources of queued unexpected datagrams that were
// unknown when they arrived (fi_ops_srx_owner.foreach_unspec_addr).
func (ep *endpoint) AddrInserted() {
	if ep.state.Load() != stateEnabled || !ep.needSrc {
		return
	}
	ep.rq.ForeachUnspecAddr(func(e *provider.RxEntry) provider.Addr {
		u, ok := e.PeerContext.(*ubuf)
		if !ok || u == nil || e.Peer != provider.SRXPeer(ep) {
			return provider.AddrNotAvail // another endpoint's: its AV decides
		}
		return ep.av.Reverse(u.src[:u.srcLen])
	})
}

// StartMsg delivers a queued unexpected datagram into the receive that now
// matches it (fi_ops_srx_peer.start_msg).
func (ep *endpoint) StartMsg(e *provider.RxEntry) error {
	u, ok := e.PeerContext.(*ubuf)
	if !ok || u == nil {
		return provider.EINVAL
	}
	e.PeerContext = nil
	ep.complete(e, u.b[:u.n], uint64(u.size-u.n), u.src[:u.srcLen])
	ep.putUbuf(u)
	ep.rq.FreeEntry(e)
	return nil
}

// DiscardMsg drops a queued unexpected datagram without a completion.
func (ep *endpoint) DiscardMsg(e *provider.RxEntry) error {
	u, ok := e.PeerContext.(*ubuf)
	if !ok || u == nil {
		return provider.EINVAL
	}
	e.PeerContext = nil
	ep.putUbuf(u)
	ep.rq.FreeEntry(e)
	return nil
}

// StartTag: udp queues no tagged messages.
func (ep *endpoint) StartTag(e *provider.RxEntry) error { return provider.ENOSYS }

// DiscardTag: udp queues no tagged messages.
func (ep *endpoint) DiscardTag(e *provider.RxEntry) error { return provider.ENOSYS }

func (ep *endpoint) getUbuf(n int) *ubuf {
	ep.poolMu.Lock()
	defer ep.poolMu.Unlock()
	if ep.live >= MaxUnexpected {
		return nil
	}
	ep.live++
	var u *ubuf
	if k := len(ep.free); k > 0 {
		u = ep.free[k-1]
		ep.free = ep.free[:k-1]
	} else {
		u = &ubuf{}
	}
	if n > MaxMsgSize {
		u.b = make([]byte, n) // an oversized datagram from a non-fabric sender
	} else if len(u.b) < MaxMsgSize {
		u.b = make([]byte, MaxMsgSize)
	}
	return u
}

func (ep *endpoint) putUbuf(u *ubuf) {
	if len(u.b) > MaxMsgSize {
		u.b = nil
	}
	u.n, u.size, u.srcLen = 0, 0, 0
	ep.poolMu.Lock()
	ep.live--
	ep.free = append(ep.free, u)
	ep.poolMu.Unlock()
}

// autoProgress is the FI_PROGRESS_AUTO goroutine: it parks in the network
// poller until the socket is readable, then progresses; it ends when the
// socket is closed. While the receive CQ has no room (FI_RM_ENABLED) the
// socket stays readable, so it parks until the CQ frees room instead.
func (ep *endpoint) autoProgress(sock *sys.Conn, done chan struct{}) {
	defer close(done)
	var t *time.Timer
	for {
		if ep.rxFull != nil && ep.rxFull.Full() {
			if !ep.waitRoom(&t) {
				return
			}
			continue
		}
		if err := sock.WaitReadable(time.Time{}); err != nil && err != sys.ErrTimeout {
			return
		}
		if ep.state.Load() != stateEnabled {
			return
		}
		if ep.direct != nil && ep.receiveDirect() {
			continue
		}
		ep.rxMu.Lock()
		ep.progressLocked()
		ep.rxMu.Unlock()
	}
}

// waitRoom parks the auto-progress goroutine while the receive CQ is full:
// it arms the CQ's room notification, checks once more (room freed before
// the arm is seen), and sleeps until the CQ is read. A CQ that cannot
// notify (an imported one) is polled every millisecond. It reports false
// once the endpoint is closed.
func (ep *endpoint) waitRoom(t **time.Timer) bool {
	if n, ok := ep.rxFull.(provider.RoomNotifier); ok && n.NotifyRoom(ep.roomKick) {
		if !ep.rxFull.Full() {
			return true
		}
		select {
		case <-ep.roomKick:
			return true
		case <-ep.closeCh:
			return false
		}
	}
	if *t == nil {
		*t = time.NewTimer(time.Millisecond)
	} else {
		(*t).Reset(time.Millisecond)
	}
	select {
	case <-(*t).C:
		return true
	case <-ep.closeCh:
		return false
	}
}

// WaitReady parks in the network poller until a datagram (or a socket
// error) is waiting, the deadline passes (ETIMEDOUT) or the endpoint is
// closed (EBADF).
func (ep *endpoint) WaitReady(deadline time.Time) error {
	ep.mu.Lock()
	sock := ep.sock
	ep.mu.Unlock()
	return sock.WaitReadable(deadline)
}

// WaitFD returns the socket descriptor, readable when a datagram waits.
func (ep *endpoint) WaitFD() int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.sock.FD()
}

// Close stops the auto-progress goroutine, waits for a Progress call in
// flight, and closes the socket: nothing is received after Close returns.
// Datagrams already queued as unexpected in a shared receive context stay
// deliverable through it (their data is held in memory); the endpoint's
// own receive queue discards them when it closes.
func (ep *endpoint) Close() error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state.Load() == stateClosed {
		return provider.EBADF
	}
	ep.state.Store(stateClosed)
	if ep.direct != nil {
		// A barrier: a direct receive in flight holds the queue's lock,
		// and none starts after it (ReceiveInto checks the state under
		// that lock), so the socket is not in a RecvFromOwned when it
		// closes.
		ep.direct.Counts()
	}
	err := ep.sock.Close()
	if ep.autoDone != nil {
		close(ep.closeCh)
		<-ep.autoDone
	}
	// Wait for a Progress call in flight to finish before returning: the
	// lock is only a barrier.
	ep.rxMu.Lock()
	//lint:ignore SA2001 empty critical section on purpose (barrier)
	ep.rxMu.Unlock()
	return err
}
