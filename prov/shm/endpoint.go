package shm

import (
	"crypto/rand"
	"encoding/binary"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/av"
	"github.com/gofabric/fabric/internal/cntr"
	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/shmring"
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

// endpoint is a shm FI_EP_RDM endpoint: its own region (the inbound
// command queue and bounce buffers other endpoints write into) and a
// table of the peers' regions it writes into.
//
// Locks: tx.mu guards the queue of pending transmits and the operations
// waiting for acks; rxMu is held by whoever drains the inbound queue
// (Progress takes it with TryLock; a serial endpoint's Progress does
// without, see serial); umu guards the unexpected-message
// buffers and the acks waiting for room (the receive queue calls
// StartMsg/DiscardMsg without rxMu); peers.mu guards peer mapping. Order:
// rxMu, then the receive queue's lock or tx.mu (an ack completes its
// operation), then umu, then peers.mu.
type endpoint struct {
	state atomic.Int32
	// inflight counts data calls in progress: Close waits for them
	// before unmapping the peers' regions.
	inflight atomic.Int32

	id   uint64
	name []byte // with NUL
	auto bool
	// serialDom: the domain was opened with FI_THREAD_DOMAIN or
	// FI_THREAD_COMPLETION. serial (set by Enable, read-only afterwards)
	// adds that nothing but the application's serialised calls drives
	// this endpoint: manual progress (no auto-progress goroutine), its own
	// receive queue, this module's CQs and counters (no FI_PEER import
	// whose owner progresses from its own thread), no EQ (EQ reads, a
	// fabric object, progress it outside the domain's serialisation).
	// Then data calls skip the inflight count (Close cannot run
	// concurrently with them) and Progress drains without rxMu. The
	// blocking waits' watchers call Progress only from within the
	// application's blocking call (internal/progress Notifier.runMu), so
	// their calls are serialised with the application's. The FD wait
	// goroutine and WaitReady touch only atomics and hold/release; the
	// peer death checks run inside Progress.
	serialDom bool
	// serialCQ: FI_THREAD_COMPLETION (the application serialises only
	// the objects sharing completion structures).
	serialCQ bool
	serial   bool
	rm       bool
	caps     provider.Caps
	authKey  []byte

	file *sys.ShmFile
	own  *shmring.Region

	// Set by Enable, read-only afterwards.
	txCQ      provider.CQOwner
	txCQd     *cq.CQ // txCQ, when it is this module's CQ: completions written with WriteMsg
	rxCQ      provider.CQOwner
	txRes     provider.CQReserver
	rxFull    provider.CQReserver
	txCntr    provider.CntrOwner
	rxCntr    provider.CntrOwner
	av        provider.AVView
	dav       *av.AV // av, when it is this module's (srcOf caches its answers)
	rq        provider.SRXOwner
	direct    *srx.Queue
	directCQ  *cq.CQ
	needSrc   bool // look up the source fi_addr of every message
	reportSrc bool // FI_SOURCE: completions carry it
	srcErr    bool // FI_SOURCE_ERR: unknown sources complete in error with their name
	// credits, on a shared transmit context, is its queue
	// (provider.TxCredits): every queued message operation (txOp.credit)
	// and every RMA or atomic operation in the table holds one; a message
	// sent within its post only checks that one is left.
	credits provider.TxCredits

	peers peerTable

	tx txState
	// rma is the RMA and atomic state (rma.go).
	rma rmaState

	rxMu sync.Mutex
	rx   rxState

	umu       sync.Mutex
	acksOut   []ackOut // acks waiting for room in their sender's queue
	nAcksOut  atomic.Int32
	ubufFree  [numUbufClasses][]*ubuf
	unexpN    int
	unexpSize int

	fdr   fdReady
	death deathState
	waits waitState
	cma   cmaState

	mu       sync.Mutex // Enable/Close
	autoDone chan struct{}
	closeCh  chan struct{}
}

var (
	_ provider.Endpoint   = (*endpoint)(nil)
	_ provider.Tagged     = (*endpoint)(nil)
	_ provider.SRXPeer    = (*endpoint)(nil)
	_ provider.Waiter     = (*endpoint)(nil)
	_ provider.AVListener = (*endpoint)(nil)
)

var regionParams = shmring.Params{Slots: RingSlots, SlotSize: SlotSize, Bufs: Bufs, BufSize: BufSize}

func randomID() uint64 {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // crypto/rand does not fail on Linux
		}
		if id := binary.LittleEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

// checkLimits refuses an Info whose limits exceed the provider's.
func checkLimits(info *provider.Info) error {
	if a := info.TxAttr; a != nil && (a.IOVLimit > IOVLimit || a.InjectSize > InjectSize || a.RMAIOVLimit > RMAIOVLimit) {
		return provider.EINVAL
	}
	if a := info.RxAttr; a != nil && a.IOVLimit > IOVLimit {
		return provider.EINVAL
	}
	if a := info.DomainAttr; a != nil && a.CQDataSize > CQDataSize {
		return provider.EINVAL
	}
	if info.AddrFormat != provider.FormatUnspec && info.AddrFormat != provider.AddrStr {
		return provider.EINVAL
	}
	return nil
}

func newEndpoint(d *domain, info *provider.Info) (*endpoint, error) {
	if info == nil {
		return nil, provider.EINVAL
	}
	if info.EPAttr != nil && info.EPAttr.Type != provider.EPUnspec && info.EPAttr.Type != provider.EPRDM {
		return nil, provider.EINVAL
	}
	if err := checkLimits(info); err != nil {
		return nil, err
	}
	if len(d.authKey) > shmring.MaxAuthKey {
		return nil, provider.EINVAL
	}
	var id uint64
	if len(info.SrcAddr) > 0 {
		var ok bool
		if id, ok = parseName(info.SrcAddr); !ok {
			return nil, provider.EINVAL
		}
	}
	ep := &endpoint{caps: info.Caps, authKey: d.authKey, serialDom: d.serial, serialCQ: d.perCompletion}
	if ep.caps == 0 {
		ep.caps = infoCaps
	}
	if info.DomainAttr != nil {
		ep.auto = info.DomainAttr.DataProgress == provider.ProgressAuto
		ep.rm = info.DomainAttr.ResourceMgmt != provider.RMDisabled
	} else {
		ep.rm = true
	}
	if err := ep.createRegion(id); err != nil {
		return nil, err
	}
	ep.tx.init()
	ep.rx.init()
	return ep, nil
}

// createRegion creates the endpoint's region file: with id, or a random
// one when id is 0.
func (ep *endpoint) createRegion(id uint64) error {
	size, _ := regionParams.Size()
	random := id == 0
	for try := 0; ; try++ {
		if random {
			id = randomID()
		}
		f, err := sys.CreateShm(fileName(id), int(size))
		if err == provider.EADDRINUSE && try < 8 {
			if random {
				continue
			}
			// A name given by src_addr: the file may be left over by a
			// process that died without closing (its lock is gone).
			if n, _ := sys.CleanStale(fileName(id)); n > 0 {
				continue
			}
		}
		if err != nil {
			return errnoOf(err)
		}
		h, err := shmring.Init(f.Bytes(), regionParams, uint32(os.Getpid()), id, ep.authKey)
		if err != nil {
			f.Unlink()
			f.Close()
			return provider.EINVAL
		}
		ep.file, ep.own, ep.id = f, shmring.NewRegion(f.Bytes(), h), id
		ep.name = appendName(nil, id)
		ep.cma.idWord = binary.LittleEndian.AppendUint64(make([]byte, 0, 8), id)
		return nil
	}
}

// errnoOf returns the libfabric error of a region file operation
// (internal/sys returns them translated).
func errnoOf(err error) provider.Errno {
	if e, ok := err.(provider.Errno); ok {
		return e
	}
	return provider.EIO
}

// Name returns the endpoint's name (fi_getname): the NUL-terminated
// string "fi_shm://gofabric-shm-<16 hex>".
func (ep *endpoint) Name() ([]byte, error) {
	if ep.state.Load() == stateClosed {
		return nil, provider.EBADF
	}
	return append([]byte(nil), ep.name...), nil
}

// Enable starts the endpoint.
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
	if r.AV == nil {
		return provider.ENOAV
	}
	if r.SRX == nil {
		return provider.EINVAL
	}
	ep.txCQ, ep.rxCQ = r.TxCQ, r.RxCQ
	if r.TxCQ != nil {
		ep.txCQd, _ = r.TxCQ.(*cq.CQ)
	}
	if ep.rm {
		if r.TxCQ != nil {
			ep.txRes, _ = r.TxCQ.(provider.CQReserver)
		}
		if r.RxCQ != nil {
			ep.rxFull, _ = r.RxCQ.(provider.CQReserver)
		}
	}
	ep.txCntr, ep.rxCntr = r.Cntrs[provider.CntrSend], r.Cntrs[provider.CntrRecv]
	ep.credits = r.TxCredits
	ep.av, ep.rq = r.AV, r.SRX
	ep.dav, _ = r.AV.(*av.AV)
	if q, ok := r.SRX.(*srx.Queue); ok {
		// The receive queue's fast path, also when the queue is shared
		// or imported (an lnx endpoint's, which tcp matches against as
		// well): a direct receive takes the first posted receive under
		// the queue's lock, which is what GetMsg would give it.
		ep.direct = q
	}
	if r.RxCQ != nil {
		ep.directCQ, _ = r.RxCQ.(*cq.CQ)
	}
	ep.reportSrc = r.Source
	ep.srcErr = r.Source && r.SourceErr
	ep.enableRMA(r)
	// A receive queue the endpoint does not own (a shared or imported
	// SRX) decides for itself whether receives are directed: it is told
	// every message's source.
	ep.needSrc = r.Source || ep.caps&provider.CapDirectedRecv != 0 || !r.OwnSRX
	// Under FI_THREAD_COMPLETION an endpoint that may be the target of
	// RMA or atomics stays thread-safe: a counter bound to a memory
	// region drives the progress of every endpoint of the domain (the
	// root package's mrcntr.go), and the application may read it from
	// another thread than the one using the endpoint (it is not bound to
	// it). Under FI_THREAD_DOMAIN that counter is serialised too.
	ep.serial = ep.serialDom && serialResources(r) && !ep.auto && !(ep.serialCQ && rmaTarget(ep.caps))
	ep.state.Store(stateEnabled)
	if ep.auto {
		ep.autoDone = make(chan struct{})
		ep.closeCh = make(chan struct{})
		go ep.autoProgress()
	}
	return nil
}

// rmaTarget reports whether caps let remote RMA or atomics reach the
// endpoint's memory: FI_REMOTE_READ or FI_REMOTE_WRITE, or FI_RMA or
// FI_ATOMIC without any of the four direction bits (which implies all).
func rmaTarget(caps provider.Caps) bool {
	const dirs = provider.CapRead | provider.CapWrite | provider.CapRemoteRead | provider.CapRemoteWrite
	if caps&(provider.CapRemoteRead|provider.CapRemoteWrite) != 0 {
		return true
	}
	return caps&(provider.CapRMA|provider.CapAtomic) != 0 && caps&dirs == 0
}

// serialResources reports whether r leaves the endpoint to the
// application's serialised calls (see endpoint.serial).
func serialResources(r *provider.Resources) bool {
	if !r.OwnSRX || r.EQ != nil {
		return false
	}
	for _, q := range [...]provider.CQOwner{r.TxCQ, r.RxCQ} {
		if _, ok := q.(*cq.CQ); q != nil && !ok {
			return false
		}
	}
	for _, c := range r.Cntrs {
		if _, ok := c.(*cntr.Cntr); c != nil && !ok {
			return false
		}
	}
	return true
}

// enter registers a data call; it fails once the endpoint is not enabled.
// A serial endpoint does not count its calls (Close is serialised with
// them).
func (ep *endpoint) enter() provider.Errno {
	if ep.state.Load() == stateEnabled && ep.serial {
		return 0
	}
	ep.inflight.Add(1)
	if st := ep.state.Load(); st != stateEnabled {
		ep.inflight.Add(-1)
		if st == stateClosed {
			return provider.EBADF
		}
		return provider.EOPBADSTATE
	}
	return 0
}

func (ep *endpoint) exit() {
	if !ep.serial {
		ep.inflight.Add(-1)
	}
}

// Progress drains the inbound command queue (a bounded batch) and
// advances pending transmits. A Progress already running elsewhere makes
// it return at once.
func (ep *endpoint) Progress() {
	if ep.enter() != 0 {
		return
	}
	if ep.tx.pending.Load()|ep.tx.nacks.Load() != 0 {
		ep.progressTx()
	}
	ep.progressRMA()
	switch {
	case ep.serial:
		// Nobody else drains (see endpoint.serial).
		ep.progressRx()
		ep.checkPeers()
	case ep.rxMu.TryLock():
		ep.progressRx()
		ep.checkPeers()
		ep.rxMu.Unlock()
	}
	if ep.fdr.on.Load() {
		ep.fdDrain()
	}
	ep.exit()
}

// pollSpin is how long the auto-progress goroutine and WaitReady poll
// before they start sleeping.
const pollSpin = 50 * time.Microsecond

// autoProgress is the FI_PROGRESS_AUTO goroutine: it drains the
// inbound queue while commands arrive, polls for pollSpin after the last
// one, then sleeps on the region's futex (wait.go) until a producer wakes
// it; pending transmits are retried every txPoll meanwhile.
func (ep *endpoint) autoProgress() {
	defer close(ep.autoDone)
	last := time.Now()
	kick := make(chan struct{}, 1)
	for {
		select {
		case <-ep.closeCh:
			return
		default:
		}
		if ep.own.Pending() {
			if ep.rx.stalled.Load() {
				ep.waitRoom(kick, ep.idleSleep(time.Time{})) // back-pressure: no spinning
			} else {
				ep.Progress()
			}
			last = time.Now()
			continue
		}
		if ep.waitingOnPeers() {
			ep.Progress()
		}
		if time.Since(last) < pollSpin {
			runtime.Gosched()
			continue
		}
		ep.sleepOwn(ep.idleSleep(time.Time{}))
	}
}

// busy reports whether progress has something to do.
func (ep *endpoint) busy() bool {
	return ep.own.Pending() || ep.tx.pending.Load() != 0 || ep.rmaBusy()
}

// Close stops the endpoint: its file is unlinked and marked closing, data
// calls in flight finish, pending transmits complete with FI_ECANCELED,
// and the regions are unmapped.
func (ep *endpoint) Close() error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.state.Load() == stateClosed {
		return provider.EBADF
	}
	ep.state.Store(stateClosed)
	ep.own.SetClosing()
	ep.wakeOwn()
	if err := ep.file.Unlink(); err != nil {
		log.Warn(provider.SubsysEPData, "unlink region", slog.String("name", fileName(ep.id)), slog.Any("err", err))
	}
	if ep.autoDone != nil {
		close(ep.closeCh)
		ep.wakeOwn()
		<-ep.autoDone
	}
	for ep.inflight.Load() != 0 {
		runtime.Gosched()
	}
	ep.rxMu.Lock()
	ep.rx.close(ep)
	ep.rxMu.Unlock()
	ep.cancelTx()
	ep.closeRMA()
	ep.peers.closeAll()
	ep.fdClose()
	return ep.file.Close()
}
