package lnx

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// Paths of a destination in the route table.
const (
	pathUnknown uint8 = iota
	pathSHM
	pathTCP
)

// testHookRoute, when set (by tests, before endpoints are opened), is
// called with every route resolved.
var testHookRoute func(e *endpoint, dest provider.Addr, path uint8)

// maxRoutes bounds the fi_addr values the route table caches; larger ones
// are resolved on every send.
const maxRoutes = 1 << 20

// endpoint is an lnx endpoint: an shm endpoint for local peers and a tcp
// RDM endpoint for remote ones, both bound to FI_PEER imports of the lnx
// endpoint's CQs, counters, receive queue and AV.
type endpoint struct {
	d      *domain
	host   uint32
	shmOff bool // EnvDisableSHM: every peer over tcp
	shm    *fabric.Endpoint
	tcp    *fabric.Endpoint

	mu      sync.Mutex // enable, close, route table writes
	enabled bool
	closed  bool
	av      provider.AVView
	closers []func() error // imports, closed after the endpoints, in order
	drivers []*fabric.CQ   // peer CQs whose reads drive the linked endpoints: shm's, then tcp's
	cntrs   []*fabric.Cntr // peer counters (drive progress without CQs): shm's, then tcp's
	// shmDrivers and shmCntrs are how many of drivers and cntrs are shm's.
	shmDrivers, shmCntrs int
	cancel               func() // AV change notification

	// FI_WAIT_FD: a pipe nothing is written to, and a goroutine driving
	// progress while the endpoint is open (see WaitFD).
	waitR, waitW *os.File
	stop         chan struct{}
	pollerDone   chan struct{}

	routes atomic.Pointer[[]uint8]
	gen    uint64 // route generation, under mu

	// Progress of the tcp path (see Progress): polls counts Progress
	// calls, tcpBusy is its value when the tcp path was last seen busy.
	polls   atomic.Uint64
	tcpBusy atomic.Uint64
}

var (
	_ provider.Endpoint   = (*endpoint)(nil)
	_ provider.Tagged     = (*endpoint)(nil)
	_ provider.Injector   = (*endpoint)(nil)
	_ provider.BufSender  = (*endpoint)(nil)
	_ provider.AVListener = (*endpoint)(nil)
	_ provider.Waiter     = (*endpoint)(nil)
	_ provider.FDWaiter   = (*endpoint)(nil)
)

// Endpoint opens the linked endpoints, sharing a receive context each.
func (d *domain) Endpoint(info *provider.Info) (provider.Endpoint, error) {
	e := &endpoint{d: d, host: hostID(), shmOff: shmDisabled()}
	// FI_SOURCE and FI_DIRECTED_RECV as the lnx endpoint has them:
	// completions report sources only with FI_SOURCE.
	// RMA and atomics too: a linked endpoint accepts remote accesses
	// only where the lnx endpoint does.
	drop := (subCaps | rmaCaps | provider.CapSourceErr) &^ info.Caps
	si := d.shmInfo.Dup()
	ti := d.tcpInfo.Dup()
	for _, i := range []*provider.Info{si, ti} {
		i.EPAttr.RxCtxCnt = provider.SharedContext
		i.Caps &^= drop
		i.RxAttr.Caps &^= drop
		i.TxAttr.Caps &^= drop
	}
	if a, ok := parseAddr(info.SrcAddr); ok {
		if a.tcp != nil {
			ti.SrcAddr = a.tcp
		}
		if a.shm != nil {
			si.SrcAddr = a.shm
		}
	}
	var err error
	if e.tcp, err = d.tcpDom.OpenEndpoint(ti); err != nil {
		return nil, err
	}
	// The shm name is derived from the tcp address unless one is given
	// (see srcerr.go); another endpoint's derived name (of another
	// network namespace) makes it a random one.
	derived := false
	if isAnySHM(si.SrcAddr) {
		if t, err := e.tcp.Name(); err == nil {
			si.SrcAddr, derived = derivedSHM(t)
		}
	}
	if e.shm, err = d.shmDom.OpenEndpoint(si); err != nil && derived && isAddrInUse(err) {
		si.SrcAddr = randomSHM()
		e.shm, err = d.shmDom.OpenEndpoint(si)
	}
	if err != nil {
		e.tcp.Close()
		return nil, err
	}
	// Sends through the linked endpoints' plain calls complete by
	// default; their transmit CQs are bound with selective completion,
	// so that a send lnx posts without FI_COMPLETION writes nothing.
	for _, ep := range []*fabric.Endpoint{e.shm, e.tcp} {
		if err := ep.SetOpsFlags(fabric.FlagTransmit | fabric.FlagCompletion); err != nil {
			e.shm.Close()
			e.tcp.Close()
			return nil, err
		}
	}
	return e, nil
}

// Name returns the composite address.
func (e *endpoint) Name() ([]byte, error) {
	s, err := e.shm.Name()
	if err != nil {
		return nil, err
	}
	t, err := e.tcp.Name()
	if err != nil {
		return nil, err
	}
	return addr{host: e.host, shm: s, tcp: t}.encode(), nil
}

var cntrFlags = [provider.NumCntrs]fabric.Flags{
	provider.CntrSend:        fabric.FlagSend,
	provider.CntrRecv:        fabric.FlagRecv,
	provider.CntrRead:        fabric.FlagRead,
	provider.CntrWrite:       fabric.FlagWrite,
	provider.CntrRemoteRead:  fabric.FlagRemoteRead,
	provider.CntrRemoteWrite: fabric.FlagRemoteWrite,
}

// Enable imports the lnx endpoint's objects into both linked domains and
// enables the linked endpoints.
func (e *endpoint) Enable(r *provider.Resources) error {
	if r == nil || r.SRX == nil {
		return provider.EINVAL
	}
	owner, ok := r.AV.(peer.AVAddrOwner)
	if !ok {
		return provider.EINVAL // the root's AV views all are
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return provider.EBADF
	}
	var err error
	for _, l := range []struct {
		ep      *fabric.Endpoint
		fab     *fabric.Fabric
		dom     *fabric.Domain
		conv    func([]byte) []byte
		fromRaw func([]byte) []byte
	}{
		{e.shm, e.d.shmFab, e.d.shmDom, e.shmAddr, e.fromSHM},
		{e.tcp, e.d.tcpFab, e.d.tcpDom, tcpAddr, e.fromTCP},
	} {
		rl := *r
		if r.RxCQ != nil && r.Source && r.SourceErr {
			// FI_SOURCE_ERR: unknown senders are reported with their
			// lnx address.
			rl.RxCQ = srcErrOwner(r.RxCQ, l.fromRaw)
		}
		if l.ep == e.tcp {
			// Messages arriving over tcp make the path busy (Progress).
			rl.SRX = tcpSRX{SRXOwner: r.SRX, e: e}
		}
		if err = e.link(l.ep, l.fab, l.dom, l.conv, &rl, owner); err != nil {
			break
		}
		if l.ep == e.shm {
			e.shmDrivers, e.shmCntrs = len(e.drivers), len(e.cntrs)
		}
	}
	if err != nil {
		e.closeImports()
		e.drivers, e.cntrs = nil, nil
		return err
	}
	e.av = r.AV
	e.cancel = owner.OnChange(e.resetRoutes)
	e.enabled = true
	return nil
}

// link binds ep to imports of r's objects opened in dom and enables it.
func (e *endpoint) link(ep *fabric.Endpoint, fab *fabric.Fabric, dom *fabric.Domain, conv func([]byte) []byte,
	r *provider.Resources, owner peer.AVAddrOwner) error {
	if r.EQ != nil {
		// Peer EQ: what the linked endpoint reports lands in the lnx
		// endpoint's EQ, about the lnx endpoint.
		eq, err := fab.OpenEQ(&fabric.EQAttr{Flags: fabric.FlagPeer,
			Peer: &peer.EQContext{EQ: eqAs{w: r.EQ, from: ep, to: e}}})
		if err != nil {
			return err
		}
		e.closers = append(e.closers, eq.Close)
		if err := ep.BindEQ(eq); err != nil {
			return err
		}
	}
	if r.TxCQ != nil {
		cq, err := dom.OpenCQ(&fabric.CQAttr{Flags: fabric.FlagPeer, Peer: r.TxCQ, Format: fabric.CQFormatTagged})
		if err != nil {
			return err
		}
		e.closers = append(e.closers, cq.Close)
		e.drivers = append(e.drivers, cq)
		if err := ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagSelectiveCompletion); err != nil {
			return err
		}
	}
	if r.RxCQ != nil {
		cq, err := dom.OpenCQ(&fabric.CQAttr{Flags: fabric.FlagPeer, Peer: r.RxCQ, Format: fabric.CQFormatTagged})
		if err != nil {
			return err
		}
		e.closers = append(e.closers, cq.Close)
		if r.TxCQ == nil {
			e.drivers = append(e.drivers, cq)
		}
		if err := ep.BindCQ(cq, fabric.FlagRecv|r.RxFlags&fabric.FlagSelectiveCompletion); err != nil {
			return err
		}
	}
	for i, c := range r.Cntrs {
		if c == nil {
			continue
		}
		pc, err := dom.OpenCntr(&fabric.CntrAttr{Flags: fabric.FlagPeer, Peer: c})
		if err != nil {
			return err
		}
		e.closers = append(e.closers, pc.Close)
		e.cntrs = append(e.cntrs, pc)
		if err := ep.BindCntr(pc, cntrFlags[i]); err != nil {
			return err
		}
	}
	srx, err := dom.OpenSRX(&fabric.RxAttr{OpFlags: fabric.FlagPeer}, &fabric.PeerSRX{Owner: r.SRX})
	if err != nil {
		return err
	}
	e.closers = append(e.closers, srx.Close)
	if err := ep.BindSRX(srx); err != nil {
		return err
	}
	av, err := dom.OpenAV(&fabric.AVAttr{Flags: fabric.FlagPeer, Peer: &peer.AVContext{AV: owner, Addr: conv}})
	if err != nil {
		return err
	}
	e.closers = append(e.closers, av.Close)
	if err := ep.BindAV(av); err != nil {
		return err
	}
	return ep.Enable()
}

// shmAddr is the shm part of an lnx address of this host (peer.AVContext.Addr).
func (e *endpoint) shmAddr(b []byte) []byte {
	a, ok := parseAddr(b)
	if !ok || a.host != e.host {
		return nil
	}
	return a.shm
}

// tcpAddr is the tcp part of an lnx address.
func tcpAddr(b []byte) []byte {
	a, ok := parseAddr(b)
	if !ok {
		return nil
	}
	return a.tcp
}

// closeImports closes the imports in reverse order of opening (callers
// hold mu; the linked endpoints are closed or were never enabled).
func (e *endpoint) closeImports() error {
	var errs []error
	for i := len(e.closers) - 1; i >= 0; i-- {
		errs = append(errs, e.closers[i]())
	}
	e.closers = nil
	return errors.Join(errs...)
}

// Close closes the linked endpoints, then the imports.
func (e *endpoint) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if e.cancel != nil {
		e.cancel()
	}
	if e.stop != nil {
		close(e.stop)
		e.mu.Unlock()
		<-e.pollerDone
		e.mu.Lock()
	}
	err := errors.Join(e.shm.Close(), e.tcp.Close())
	err = errors.Join(err, e.closeImports())
	if e.waitR != nil {
		err = errors.Join(err, e.waitR.Close(), e.waitW.Close())
	}
	return err
}

// Polling of the tcp path. Progress polls shm on every call, and tcp on
// every call while it is busy: within tcpBusyPolls calls of lnx posting
// an operation on it or of a message arriving over it. An idle tcp path
// is polled every tcpIdleEvery calls: a poll of tcp RDM costs as much as
// one of shm, and polling it on every call made lnx's local latency 1.2
// to 1.3 times shm's (BenchmarkPingPong, CPU time); a remote message
// arriving on an idle path waits at most tcpIdleEvery-1 polls of shm
// (a few hundred ns, against tcp's 5 µs and more), and then the path is
// busy. Blocking waits (WaitReady, the FI_WAIT_FD poller) poll both
// paths every time.
const (
	tcpBusyPolls = 1 << 12
	tcpIdleEvery = 8
)

// markTCPBusy notes activity on the tcp path.
func (e *endpoint) markTCPBusy() {
	if n := e.polls.Load(); e.tcpBusy.Load() != n {
		e.tcpBusy.Store(n)
	}
}

// Progress drives the linked endpoints (reads of their peer CQs, which
// write nothing themselves: completions are in the lnx CQs): shm always,
// tcp as described above.
func (e *endpoint) Progress() {
	n := e.polls.Add(1)
	e.progress(n-e.tcpBusy.Load() < tcpBusyPolls || n%tcpIdleEvery == 0)
}

// progressAll drives both linked endpoints.
func (e *endpoint) progressAll() { e.progress(true) }

// progress drives shm, and tcp when withTCP.
func (e *endpoint) progress(withTCP bool) {
	if len(e.drivers) > 0 {
		for i, c := range e.drivers {
			if withTCP || i < e.shmDrivers {
				c.Read(nil)
			}
		}
		return
	}
	for i, c := range e.cntrs {
		if withTCP || i < e.shmCntrs {
			c.Read()
		}
	}
}

// WaitReady is provider.Waiter, so that blocking reads of the lnx CQs and
// counters progress: the linked endpoints can be waited on only through
// their own CQs, which an import does not offer (FI_PEER CQs answer
// ErrNoSys to waits), so it drives both paths with pauses from 20 µs up
// to 500 µs until the deadline; what they complete lands in the lnx CQs,
// whose writes wake the readers.
func (e *endpoint) WaitReady(deadline time.Time) error {
	pause := 20 * time.Microsecond
	for {
		e.mu.Lock()
		closed := e.closed || !e.enabled
		e.mu.Unlock()
		if closed {
			return provider.EBADF
		}
		e.progressAll()
		left := time.Until(deadline)
		if !deadline.IsZero() && left <= 0 {
			return provider.ETIMEDOUT
		}
		if !deadline.IsZero() && left < pause {
			pause = left
		}
		time.Sleep(pause)
		if pause < 500*time.Microsecond {
			pause *= 2
		}
	}
}

// pollPause is the pause between two progress runs of the FI_WAIT_FD
// poller.
const pollPause = 500 * time.Microsecond

// WaitFD is provider.FDWaiter, for CQs and counters with FI_WAIT_FD: the
// linked endpoints' descriptors are not reachable through their FI_PEER
// imports, so lnx gives a pipe that never becomes readable and starts a
// goroutine that drives both paths every 500 µs while the endpoint is
// open; what it completes lands in the lnx CQs and counters, whose own
// descriptors then become readable. It returns -1 when the pipe cannot be
// made or the endpoint is closed.
func (e *endpoint) WaitFD() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return -1
	}
	if e.waitR == nil {
		r, w, err := os.Pipe()
		if err != nil {
			return -1
		}
		e.waitR, e.waitW = r, w
		e.stop, e.pollerDone = make(chan struct{}), make(chan struct{})
		go e.poll()
	}
	return int(e.waitR.Fd())
}

// poll is the FI_WAIT_FD poller.
func (e *endpoint) poll() {
	defer close(e.pollerDone)
	t := time.NewTicker(pollPause)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		e.mu.Lock()
		on := e.enabled && !e.closed
		e.mu.Unlock()
		if on {
			e.progressAll()
		}
	}
}

// AddrInserted implements provider.AVListener: nothing to do, the imports
// follow the AV themselves; routes are reset by resetRoutes.
func (e *endpoint) AddrInserted() {}

// resetRoutes forgets the cached routes after the AV changed.
func (e *endpoint) resetRoutes() {
	e.mu.Lock()
	e.gen++
	e.routes.Store(nil)
	e.mu.Unlock()
}

// route returns the linked endpoint that reaches dest.
func (e *endpoint) route(dest provider.Addr) *fabric.Endpoint {
	if t := e.routes.Load(); t != nil && uint64(dest) < uint64(len(*t)) {
		switch (*t)[dest] {
		case pathSHM:
			return e.shm
		case pathTCP:
			e.markTCPBusy()
			return e.tcp
		}
	}
	ep := e.routeSlow(dest)
	if ep == e.tcp {
		e.markTCPBusy()
	}
	return ep
}

func (e *endpoint) routeSlow(dest provider.Addr) *fabric.Endpoint {
	e.mu.Lock()
	gen := e.gen
	e.mu.Unlock()
	av := e.av
	if av == nil {
		return e.tcp
	}
	b := av.Lookup(dest)
	if b == nil {
		return e.tcp // tcp reports the unknown address
	}
	host, hasSHM, ok := parseHost(b)
	path, ep := pathTCP, e.tcp
	if ok && hasSHM && host == e.host && !e.shmOff {
		path, ep = pathSHM, e.shm
	}
	if testHookRoute != nil {
		testHookRoute(e, dest, path)
	}
	if uint64(dest) >= maxRoutes {
		return ep
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen != gen {
		return ep
	}
	var t []uint8
	if old := e.routes.Load(); old != nil {
		t = *old
	}
	n := append([]uint8(nil), t...)
	if uint64(len(n)) <= uint64(dest) {
		size := 2 * len(n)
		if size <= int(dest) {
			size = int(dest) + 1
		}
		n = append(n, make([]uint8, size-len(n))...)
	}
	n[dest] = path
	e.routes.Store(&n)
	return ep
}

// Send sends m over the path of its destination.
func (e *endpoint) Send(m provider.Msg) error { return send(e.route(m.Addr), &m, false) }

// TSend sends a tagged m over the path of its destination.
func (e *endpoint) TSend(m provider.Msg) error { return send(e.route(m.Addr), &m, true) }

// Inject is the plain fi_inject.
func (e *endpoint) Inject(buf []byte, dest provider.Addr) error {
	return e.route(dest).Inject(buf, dest)
}

// SendBuf is fi_send of one buffer.
func (e *endpoint) SendBuf(buf []byte, dest provider.Addr, ctx any, flags provider.Flags) error {
	ep := e.route(dest)
	if flags == provider.FlagCompletion {
		return ep.Send(buf, nil, dest, ctx)
	}
	return send(ep, &provider.Msg{Buf: buf, Addr: dest, Context: ctx, Flags: flags}, false)
}

// send posts m on the linked endpoint ep: through its plain calls where
// their default flags are m's (no allocation), else through SendMsg.
// Memory descriptors are lnx's, not ep's domain's: they are not passed.
func send(ep *fabric.Endpoint, m *provider.Msg, tagged bool) error {
	f := m.Flags
	if m.IOV == nil {
		switch f &^ provider.FlagRemoteCQData {
		case provider.FlagCompletion:
			if f&provider.FlagRemoteCQData != 0 {
				if tagged {
					return ep.TSendData(m.Buf, nil, m.Data, m.Addr, m.Tag, m.Context)
				}
				return ep.SendData(m.Buf, nil, m.Data, m.Addr, m.Context)
			}
			if tagged {
				return ep.TSend(m.Buf, nil, m.Addr, m.Tag, m.Context)
			}
			return ep.Send(m.Buf, nil, m.Addr, m.Context)
		case provider.FlagInject:
			if f&provider.FlagRemoteCQData != 0 {
				if tagged {
					return ep.TInjectData(m.Buf, m.Data, m.Addr, m.Tag)
				}
				return ep.InjectData(m.Buf, m.Data, m.Addr)
			}
			if tagged {
				return ep.TInject(m.Buf, m.Addr, m.Tag)
			}
			return ep.Inject(m.Buf, m.Addr)
		}
	}
	iov := m.IOV
	if iov == nil {
		iov = [][]byte{m.Buf}
	}
	fm := fabric.Msg{IOV: iov, Addr: m.Addr, Context: m.Context, Data: m.Data, Tag: m.Tag}
	if tagged {
		return ep.TSendMsg(&fm, f)
	}
	return ep.SendMsg(&fm, f)
}

// Cancel cancels a transmit with context ctx on whichever path has it.
func (e *endpoint) Cancel(ctx any) error {
	for _, ep := range []*fabric.Endpoint{e.shm, e.tcp} {
		err := ep.Cancel(ctx)
		if err == nil || !errors.Is(err, provider.ENOENT) {
			return err
		}
	}
	return provider.ENOENT
}

// tcpSRX is the receive queue the tcp path matches against: the lnx
// endpoint's, noting that the path is busy whenever a message arrives.
type tcpSRX struct {
	provider.SRXOwner
	e *endpoint
}

var _ provider.RoomNotifier = tcpSRX{}

func (q tcpSRX) GetMsg(addr provider.Addr, size uint64) (*provider.RxEntry, error) {
	q.e.markTCPBusy()
	return q.SRXOwner.GetMsg(addr, size)
}

func (q tcpSRX) GetTag(addr provider.Addr, size, tag uint64) (*provider.RxEntry, error) {
	q.e.markTCPBusy()
	return q.SRXOwner.GetTag(addr, size, tag)
}

// NotifyRoom forwards to the queue, when it notifies.
func (q tcpSRX) NotifyRoom(kick chan<- struct{}) bool {
	if n, ok := q.SRXOwner.(provider.RoomNotifier); ok {
		return n.NotifyRoom(kick)
	}
	return false
}

// eqAs is the owner side of a linked endpoint's peer EQ: events about the
// linked endpoint (from, as its root object reports them) are written to
// the lnx endpoint's EQ (w) as events about the lnx endpoint (to, which w
// reports as the application's endpoint); other events pass unchanged.
type eqAs struct {
	w    provider.EQWriter
	from *fabric.Endpoint
	to   *endpoint
}

func (q eqAs) Write(ev *provider.EQEntry) error {
	if f, ok := ev.FID.(*fabric.Endpoint); ok && f == q.from {
		c := *ev
		c.FID = q.to
		return q.w.Write(&c)
	}
	return q.w.Write(ev)
}

func (q eqAs) WriteErr(ev *provider.EQErrEntry) error {
	if f, ok := ev.FID.(*fabric.Endpoint); ok && f == q.from {
		c := *ev
		c.FID = q.to
		return q.w.WriteErr(&c)
	}
	return q.w.WriteErr(ev)
}
