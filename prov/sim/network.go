package sim

import (
	"container/heap"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/wire/simwire"
	"github.com/gofabric/fabric/provider"
)

// Link describes one direction of the path between two endpoints.
type Link struct {
	// Latency is the one-way propagation delay added to every message.
	// Default 0 (delivery at the next progress step).
	Latency time.Duration
	// Jitter adds a delay drawn uniformly from [0, Jitter) to every
	// message. On FI_EP_DGRAM it may reorder messages; on FI_EP_RDM a
	// message never overtakes an earlier one on the same link
	// (FI_ORDER_SAS). Default 0.
	Jitter time.Duration
	// Bandwidth in bytes per second: a link carries one message at a
	// time, and a message of n bytes occupies it for n/Bandwidth seconds
	// (queued behind the messages before it). 0 means infinite.
	Bandwidth float64
	// Loss is the probability, in [0, 1], that one transmission is lost.
	// FI_EP_DGRAM drops the message (its send still completes, as a sent
	// datagram does). FI_EP_RDM is reliable: a lost transmission is
	// repeated after Config.RTO, so loss shows only as delay. Default 0.
	Loss float64
}

// Config configures a simulated network. The zero value is a lossless
// network with no latency and infinite bandwidth, seed 0.
type Config struct {
	// Seed seeds the network's random number generator (loss, jitter).
	// Two runs with the same seed and the same sequence of calls deliver
	// the same messages in the same order at the same virtual times.
	Seed uint64
	// Default is the link used between endpoints Links does not name.
	Default Link
	// Links returns the link from endpoint src to endpoint dst (the
	// endpoint ids of ID), overriding Default; nil uses Default
	// everywhere. It is called once per pair, the first time src sends
	// to dst, under the network's lock: it must not call into the
	// network.
	Links func(src, dst uint64) Link
	// RTO is the retransmission delay of FI_EP_RDM after a lost
	// transmission. 0 means 2*Latency + 1 µs.
	RTO time.Duration
	// MaxUnexpectedBytes bounds the unexpected messages each endpoint
	// holds (rx_attr.total_buffered_recv; a message counts its size, at
	// least 64 bytes). Beyond it an RDM message waits at the target
	// until receives are posted (back-pressure: nothing is dropped) and
	// a datagram is dropped. 0 means DefaultMaxUnexpectedBytes.
	MaxUnexpectedBytes int64
	// CrossProcess lets endpoints of networks of this name in other
	// processes of the host reach this network's endpoints (xproc.go;
	// FI_SIM_CROSS_PROCESS=1 for the default network). Traffic between
	// processes is not deterministic; Links, Jitter, Bandwidth and Loss
	// apply only within the process, Default.Latency to what arrives
	// from others. The name must be at most 64 bytes. Default false.
	CrossProcess bool
}

// DefaultMaxUnexpectedBytes is Config.MaxUnexpectedBytes when 0.
const DefaultMaxUnexpectedBytes = 64 << 20

// Environment variables of the default network (package documentation).
const (
	envSeed      = "FI_SIM_SEED"
	envLatency   = "FI_SIM_LATENCY"
	envJitter    = "FI_SIM_JITTER"
	envBandwidth = "FI_SIM_BANDWIDTH"
	envLoss      = "FI_SIM_LOSS"
	envRTO       = "FI_SIM_RTO"
)

// ConfigFromEnv returns the configuration of the default network: the
// zero Config with the FI_SIM_* variables applied. A variable that does
// not parse is ignored with a warning.
func ConfigFromEnv() Config {
	var c Config
	if v, ok := os.LookupEnv(envSeed); ok {
		if s, err := strconv.ParseUint(v, 0, 64); err == nil {
			c.Seed = s
		} else {
			log.Warn(provider.SubsysFabric, "ignoring "+envSeed+": "+err.Error())
		}
	}
	dur := func(name string, d *time.Duration) {
		if v, ok := os.LookupEnv(name); ok {
			if x, err := time.ParseDuration(v); err == nil && x >= 0 {
				*d = x
			} else {
				log.Warn(provider.SubsysFabric, "ignoring "+name+": want a duration such as 10us")
			}
		}
	}
	dur(envLatency, &c.Default.Latency)
	dur(envJitter, &c.Default.Jitter)
	dur(envRTO, &c.RTO)
	if v, ok := os.LookupEnv(envBandwidth); ok {
		if x, err := strconv.ParseFloat(v, 64); err == nil && x >= 0 {
			c.Default.Bandwidth = x
		} else {
			log.Warn(provider.SubsysFabric, "ignoring "+envBandwidth+": want bytes per second")
		}
	}
	if v, ok := os.LookupEnv(envCrossProcess); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			c.CrossProcess = b
		} else {
			log.Warn(provider.SubsysFabric, "ignoring "+envCrossProcess+": want 0 or 1")
		}
	}
	if v, ok := os.LookupEnv(envLoss); ok {
		if x, err := strconv.ParseFloat(v, 64); err == nil && x >= 0 && x <= 1 {
			c.Default.Loss = x
		} else {
			log.Warn(provider.SubsysFabric, "ignoring "+envLoss+": want a probability in [0, 1]")
		}
	}
	return c
}

// Network is one simulated fabric: the endpoints opened on it, the
// messages in flight between them and its virtual clock. Fabrics opened
// with FabricAttr.Name equal to the network's name use it.
type Network struct {
	name     string
	cfg      Config
	maxUnexp int64 // Config.MaxUnexpectedBytes or its default

	mu     sync.Mutex
	now    int64 // virtual time, ns since the network was created
	seq    uint64
	nextID uint64
	rng    *rand.Rand
	eps    map[uint64]*endpoint
	// remotes holds the stand-ins of the endpoints of other processes
	// that sent here (cross-process mode, xproc.go).
	remotes map[uint64]*endpoint
	q       eventHeap
	// blocked lists the endpoints whose RDM arrivals wait for room in
	// their receive queue or CQ, in the order they first blocked.
	blocked []*endpoint
	stats   Stats
	// wake is made by the first WaitReady caller that waits, and closed
	// (then forgotten) when an event is scheduled while any waits: a
	// network that nobody waits on holds no channel, so that a default
	// network first used inside a testing/synctest bubble does not hold
	// one of the bubble's channels.
	wake    chan struct{}
	waiters int

	// The FI_WAIT_FD descriptor (waitfd.go), or -1, under fdMu.
	fdMu    sync.Mutex
	fd      int
	fdUsers int
	fdOn    atomic.Bool // fd is open
	fdArmed atomic.Bool // fd is readable

	// Free lists (pool.go): events and ops under mu, the rest under
	// poolMu.
	free   []*event
	ops    []*txOp
	poolMu sync.Mutex
	bufs   [numClasses][][]byte
	ubufs  []*ubuf
}

// Stats counts what a network did.
type Stats struct {
	Sent      uint64 // messages and RMA/atomic requests accepted by posts
	Delivered uint64 // messages handed to a receive queue (matched or unexpected)
	// Dropped counts DGRAM messages lost (Loss, no endpoint, no room in
	// the receive queue) and RDM messages a target had taken (their
	// sends completed) but not yet matched when it closed.
	Dropped    uint64
	Retransmit uint64 // RDM transmissions repeated after a loss
	Failed     uint64 // RDM operations completed in error because their target was gone
	Steps      uint64 // progress steps that delivered something
}

var (
	netMu    sync.Mutex
	networks = map[string]*Network{}
)

// DefaultName is the name of the network configured from the
// environment, which GetInfo offers unless the hints name another.
const DefaultName = "sim"

// NewNetwork creates and registers a network named name, for fabrics
// opened with that fabric name. It fails with EADDRINUSE when a network
// of that name is registered, and EINVAL for an empty name or a Link
// outside its range. A network named DefaultName registered before the
// default network's first use replaces the environment's configuration.
func NewNetwork(name string, cfg Config) (*Network, error) {
	if name == "" || !validLink(cfg.Default) || cfg.RTO < 0 || cfg.MaxUnexpectedBytes < 0 ||
		(cfg.CrossProcess && !validXProcName(name)) {
		return nil, provider.EINVAL
	}
	netMu.Lock()
	defer netMu.Unlock()
	if _, dup := networks[name]; dup {
		return nil, provider.EADDRINUSE
	}
	n := newNetwork(name, cfg)
	networks[name] = n
	return n, nil
}

// validXProcName reports whether a cross-process network may be named
// name: it is part of its endpoints' socket names.
func validXProcName(name string) bool {
	if len(name) > maxNetNameXProc {
		return false
	}
	for _, c := range []byte(name) {
		if c <= ' ' || c >= 0x7f || c == '/' {
			return false
		}
	}
	return true
}

func validLink(l Link) bool {
	return l.Latency >= 0 && l.Jitter >= 0 && l.Bandwidth >= 0 && l.Loss >= 0 && l.Loss <= 1
}

func newNetwork(name string, cfg Config) *Network {
	maxUnexp := cfg.MaxUnexpectedBytes
	if maxUnexp == 0 {
		maxUnexp = DefaultMaxUnexpectedBytes
	}
	return &Network{
		name: name, cfg: cfg, maxUnexp: maxUnexp,
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		eps: map[uint64]*endpoint{},
		fd:  -1,
	}
}

// lookupNetwork returns the network named name; the default network is
// created from the environment at first use.
func lookupNetwork(name string) *Network {
	if name == "" {
		name = DefaultName
	}
	netMu.Lock()
	defer netMu.Unlock()
	n := networks[name]
	if n == nil && name == DefaultName {
		n = newNetwork(DefaultName, ConfigFromEnv())
		if n.cfg.CrossProcess {
			log.Info(provider.SubsysFabric, "sim: the default network is cross-process ("+envCrossProcess+")")
		}
		networks[name] = n
	}
	return n
}

// Close unregisters the network: fabrics can no longer be opened on it.
// Endpoints already open keep working until they are closed.
func (n *Network) Close() error {
	netMu.Lock()
	defer netMu.Unlock()
	if networks[n.name] != n {
		return provider.EBADF
	}
	delete(networks, n.name)
	return nil
}

// Name returns the network's name (the fabric name that selects it).
func (n *Network) Name() string { return n.name }

// Now returns the network's virtual time: the time since it was created,
// advanced only by progress (see the package documentation).
func (n *Network) Now() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return time.Duration(n.now)
}

// Stats returns the network's counts so far.
func (n *Network) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// Pending returns the number of messages and completions scheduled and
// not yet due or delivered.
func (n *Network) Pending() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.q) + n.blockedLen()
}

func (n *Network) blockedLen() int {
	c := 0
	for _, ep := range n.blocked {
		c += len(ep.backlog)
	}
	return c
}

// ---- events ----

// Event kinds.
const (
	evArrive uint8 = iota // a message reaches its target
	evTxDone              // a DGRAM send has left: its completion
	evRMA                 // an RMA request reaches its target (rma.go)
	evAnswer              // the target's answer reaches the initiator
)

// event is a message in flight, or a send completion due at a time.
type event struct {
	at     int64
	seq    uint64
	kind   uint8
	tagged bool
	src    *endpoint
	dst    uint64
	tx     *txOp // the send's completion, or nil
	tag    uint64
	data   uint64
	hasCQD bool
	size   int
	buf    []byte // the payload (a copy taken at send time)
	idx    int    // heap index
	req    uint64 // a request of another process: its id there (xproc.go)
	// ackReq: a delivery-complete send of another process, acknowledged
	// (its id there) once delivered (xproc.go).
	ackReq uint64
	// RMA (rma.go): a read (else a write), its remote iovs, the
	// answer's status.
	read   bool
	rma    []provider.RMAIOV
	status provider.Errno
	atomic *atomicReq // an atomic request (atomic.go)
}

// txOp is a send (or RMA operation) whose completion is pending.
type txOp struct {
	ep     *endpoint
	ctx    any
	flags  provider.Flags // completion flags (FI_SEND|FI_MSG or FI_TAGGED, FI_RMA|FI_READ ...)
	comp   bool           // write a success completion
	res    provider.CQReserver
	cntr   provider.CntrOwner // the counter of the operation's kind
	inject bool
	// dc: FI_DELIVERY_COMPLETE (cross-process networks only): an RDM send
	// completes when its message is matched or queued as unexpected, not
	// while it waits for room at the target.
	dc     bool
	credit bool     // holds a credit of the endpoint's shared transmit context
	local  [][]byte // where a read's data goes
}

type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *eventHeap) Push(x any) {
	e := x.(*event)
	e.idx = len(*h)
	*h = append(*h, e)
}
func (h *eventHeap) Pop() any {
	old := *h
	k := len(old) - 1
	e := old[k]
	old[k] = nil
	*h = old[:k]
	return e
}

func (n *Network) newEvent() *event {
	if k := len(n.free); k > 0 {
		e := n.free[k-1]
		n.free = n.free[:k-1]
		return e
	}
	return &event{}
}

func (n *Network) freeEvent(e *event) {
	*e = event{}
	n.free = append(n.free, e)
}

// schedule queues e at time at; n.mu is held.
func (n *Network) schedule(e *event, at int64) {
	n.seq++
	e.at, e.seq = at, n.seq
	heap.Push(&n.q, e)
	if n.waiters > 0 && n.wake != nil {
		// Wake every WaitReady caller; later events until one waits
		// again have nobody to wake.
		close(n.wake)
		n.wake = nil
	}
	n.fdArm()
}

// ---- links ----

// link is the state of one direction between two endpoints.
type link struct {
	Link
	busy int64 // the time the link is free again
	last int64 // the latest arrival scheduled (RDM keeps order)
}

func (n *Network) linkTo(src *endpoint, dst uint64) *link {
	if l := src.links[dst]; l != nil {
		return l
	}
	cfg := n.cfg.Default
	if n.cfg.Links != nil {
		if c := n.cfg.Links(src.id, dst); validLink(c) {
			cfg = c
		} else {
			log.Warn(provider.SubsysEPData, "invalid link, using the default",
				slog.Uint64("src", src.id), slog.Uint64("dst", dst))
		}
	}
	l := &link{Link: cfg}
	if src.links == nil {
		src.links = map[uint64]*link{}
	}
	src.links[dst] = l
	return l
}

func (n *Network) rto(l *link) int64 {
	if n.cfg.RTO > 0 {
		return int64(n.cfg.RTO)
	}
	return 2*int64(l.Latency) + int64(time.Microsecond)
}

// transmit computes when a message of size bytes from src to dst leaves
// and arrives, drawing loss and jitter; lost reports a DGRAM loss. n.mu
// is held.
func (n *Network) transmit(src *endpoint, dst uint64, size int, reliable bool) (left, arrive int64, lost bool) {
	l := n.linkTo(src, dst)
	start := max(n.now, l.busy)
	left = start
	if l.Bandwidth > 0 {
		left += int64(float64(size) * 1e9 / l.Bandwidth)
	}
	l.busy = left
	arrive = left + int64(l.Latency)
	if l.Loss > 0 {
		for n.rng.Float64() < l.Loss {
			if !reliable {
				return left, 0, true
			}
			n.stats.Retransmit++
			arrive += n.rto(l)
		}
	}
	if l.Jitter > 0 {
		arrive += n.rng.Int64N(int64(l.Jitter))
	}
	if reliable {
		arrive = max(arrive, l.last)
		l.last = arrive
	}
	return left, arrive, false
}

// ---- progress ----

// step is one progress step: blocked arrivals are retried, then, when
// nothing is due, the clock jumps to the next scheduled event, and every
// event due is processed in (time, sequence) order.
func (n *Network) step() {
	n.mu.Lock()
	if len(n.blocked) > 0 {
		n.retryBlocked()
	}
	if len(n.q) == 0 {
		n.fdDisarm()
		n.mu.Unlock()
		return
	}
	if t := n.q[0].at; t > n.now {
		n.now = t
	}
	did := false
	for len(n.q) > 0 && n.q[0].at <= n.now {
		e := heap.Pop(&n.q).(*event)
		did = true
		switch e.kind {
		case evTxDone:
			e.src.txComplete(e.tx, 0)
			n.freeEvent(e)
		case evArrive:
			n.arrive(e)
		case evRMA:
			if dst := n.eps[e.dst]; dst != nil && !dst.closing && dst.state.Load() == stateEnabled {
				dst.serveRMA(e)
			} else {
				n.undeliverable(e)
			}
		case evAnswer:
			n.answered(e)
		}
	}
	if did {
		n.stats.Steps++
	}
	n.fdDisarm()
	n.mu.Unlock()
}

// busy reports whether progress has work: events scheduled or arrivals
// blocked. n.mu is held.
func (n *Network) busy() bool { return len(n.q) > 0 || len(n.blocked) > 0 }

// arrive hands the message of e to its target; n.mu is held.
func (n *Network) arrive(e *event) {
	dst := n.eps[e.dst]
	if dst == nil || dst.closing {
		n.undeliverable(e)
		return
	}
	// An RDM send completes once its message reached the target's
	// provider (FI_TRANSMIT_COMPLETE), whether it matches at once, is
	// queued as unexpected, or waits for room in the receive queue; with
	// FI_DELIVERY_COMPLETE not before it is matched or queued (deliver).
	if e.tx != nil && !e.tx.dc {
		e.src.txComplete(e.tx, 0)
		e.tx = nil
	}
	if len(dst.backlog) > 0 {
		// Earlier arrivals wait for room: this one goes behind them.
		dst.backlog = append(dst.backlog, e)
		return
	}
	if !dst.deliver(e) {
		dst.backlog = append(dst.backlog, e)
		n.blocked = append(n.blocked, dst)
	}
}

// undeliverable ends a message its target cannot take: an RDM send not
// yet complete (the target is gone) completes in error
// (FI_EHOSTUNREACH); otherwise the message is dropped.
func (n *Network) undeliverable(e *event) {
	if req := e.ackReq; req != 0 || (e.kind == evRMA && e.src != nil && e.src.remote) {
		// A delivery-complete send or a request of another process:
		// answered in error while the target endpoint can still write
		// (else the initiator's probe finds its socket gone).
		if req == 0 {
			req = e.req
		}
		if t := n.eps[e.dst]; t != nil && t.x != nil && !t.closing {
			t.xsend(e.src.id, nil, &simwire.Message{Kind: simwire.KindAnswer, Req: req,
				Status: uint32(provider.EHOSTUNREACH)})
		}
		e.ackReq = 0
	}
	if e.tx != nil {
		n.stats.Failed++
		e.src.txComplete(e.tx, provider.EHOSTUNREACH)
	} else {
		n.stats.Dropped++
	}
	n.putBuf(e.buf)
	n.freeEvent(e)
}

// retryBlocked delivers blocked arrivals, in order, while their
// receive queues take them. n.mu is held.
func (n *Network) retryBlocked() {
	keep := n.blocked[:0]
	for _, ep := range n.blocked {
		k := 0
		for k < len(ep.backlog) {
			e := ep.backlog[k]
			if ep.closing {
				n.undeliverable(e)
			} else if !ep.deliver(e) {
				break
			}
			k++
		}
		rest := ep.backlog[k:]
		clear(ep.backlog[:k])
		ep.backlog = append(ep.backlog[:0], rest...)
		if len(ep.backlog) > 0 {
			keep = append(keep, ep)
		}
	}
	clear(n.blocked[len(keep):])
	n.blocked = keep
}

// waitReady blocks until the network has work for progress, the deadline
// passes (ETIMEDOUT) or the endpoint closes (EBADF).
func (n *Network) waitReady(ep *endpoint, deadline time.Time) error {
	for {
		n.mu.Lock()
		if ep.closing {
			n.mu.Unlock()
			return provider.EBADF
		}
		if n.busy() {
			n.mu.Unlock()
			return nil
		}
		if n.wake == nil {
			n.wake = make(chan struct{})
		}
		n.waiters++
		wake := n.wake
		n.mu.Unlock()
		var timeout <-chan time.Time
		var t *time.Timer
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				n.unwait()
				return provider.ETIMEDOUT
			}
			t = time.NewTimer(d)
			timeout = t.C
		}
		select {
		case <-wake:
		case <-ep.closeCh:
		case <-timeout:
		}
		if t != nil {
			t.Stop()
		}
		n.unwait()
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return provider.ETIMEDOUT
		}
	}
}

func (n *Network) unwait() {
	n.mu.Lock()
	n.waiters--
	n.mu.Unlock()
}
