package shm

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Peer death (shm.md "Faults"). The owner of a region holds an exclusive
// flock on its file for its whole life (internal/sys); the kernel drops it
// when the process exits or is killed. An operation that waits on a peer
// (a transmit queued because the peer's queue or bounce buffers are full,
// a transmit waiting for the peer's ack, an RMA or atomic operation
// waiting to be pushed or for its answer, a segmented message being
// received from it) cannot tell a slow peer from a dead one, so progress
// checks: every deathCheck, the peers that had such operations at the
// previous check too (so for deathCheck at least) are asked
// sys.OwnerAlive. A dead peer's region is marked closing, the flag a peer
// that closes sets itself, so every operation towards it completes with
// FI_ECONNRESET at the next progress (in every process that talks to
// it); its file is removed at once (sys.RemoveStale); and the receives of
// its partial messages complete with FI_ECONNRESET. The bound: an
// operation towards a peer that died completes in error 100-200 ms after
// the death (two checks), plus one progress call; sleepers come back to
// progress every deathCheck while operations wait on peers (wait.go). Its
// mapping stays until the endpoint closes (a concurrent post may hold it).
//
// Stale regions of processes that died before anyone noticed are removed
// when a process opens its first shm fabric (cleanStale).
const deathCheck = 100 * time.Millisecond

// deathState is the per-endpoint state of the checks.
type deathState struct {
	// watch is set while operations wait on peers: sleepers then come
	// back every deathCheck so that progress runs the checks.
	watch atomic.Bool

	mu       sync.Mutex // the rest; TryLock from progress
	next     time.Time
	suspects map[uint64]bool // peers with waiting operations at the last check
	cur      map[uint64]bool
	peers    map[uint64][]*peer // mapped peers among cur (one id may have several)
	dead     map[uint64]bool    // found dead (logged once each)
}

// waitingOnPeers reports whether operations wait on other processes, so
// that a sleeper must come back to progress within deathCheck.
func (ep *endpoint) waitingOnPeers() bool {
	return ep.tx.pending.Load() != 0 || ep.tx.nacks.Load() != 0 || ep.rmaWaiting() || ep.death.watch.Load()
}

// rmaWaiting reports whether RMA or atomic operations are queued or wait
// for their answers, or answers to other initiators wait for room.
func (ep *endpoint) rmaWaiting() bool {
	return ep.rma.pending.Load() != 0 || ep.rma.started.Load() != 0 || ep.rma.respN.Load() != 0
}

// suspect records p, with operations waiting on it, for this check.
func (d *deathState) suspect(p *peer) {
	d.cur[p.id] = true
	for _, q := range d.peers[p.id] {
		if q == p {
			return
		}
	}
	d.peers[p.id] = append(d.peers[p.id], p)
}

// checkPeers runs the death checks when one is due. Progress calls it
// with ep.rxMu held; it costs a few loads when nothing waits on a peer.
func (ep *endpoint) checkPeers() {
	if len(ep.rx.segs) == 0 && ep.tx.pending.Load() == 0 && ep.tx.nacks.Load() == 0 && !ep.rmaWaiting() {
		if ep.death.watch.Load() {
			ep.death.watch.Store(false)
		}
		return
	}
	if !ep.death.watch.Load() {
		ep.death.watch.Store(true)
	}
	d := &ep.death
	if !d.mu.TryLock() {
		return
	}
	defer d.mu.Unlock()
	now := time.Now()
	if now.Before(d.next) {
		return
	}
	d.next = now.Add(deathCheck)
	if d.cur == nil {
		d.suspects, d.cur = map[uint64]bool{}, map[uint64]bool{}
		d.peers, d.dead = map[uint64][]*peer{}, map[uint64]bool{}
	}
	clear(d.cur)
	clear(d.peers)
	for id := range ep.rx.segs {
		d.cur[id] = true
	}
	busy := false
	t := &ep.tx
	if t.mu.TryLock() {
		if o := t.head; o != nil {
			d.suspect(o.p)
		}
		for _, a := range t.ackPeers { // the peers of t.acks
			d.suspect(a.p)
		}
		t.mu.Unlock()
	} else {
		busy = true
	}
	if s := &ep.rma; ep.rmaWaiting() {
		for _, q := range s.respQ { // under rxMu
			d.suspect(q.p)
		}
		if s.mu.TryLock() {
			for _, o := range s.ops {
				if o.id != 0 && o.p != nil {
					d.suspect(o.p)
				}
			}
			s.mu.Unlock()
		} else {
			busy = true
		}
	}
	if busy {
		// Keep the suspects for the next round.
		for id := range d.suspects {
			d.cur[id] = true
		}
	}
	found := false
	for id := range d.cur {
		if !d.suspects[id] || id == ep.id {
			continue
		}
		name := fileName(id)
		if alive, err := sys.OwnerAlive(name); alive || err != nil {
			continue
		}
		found = true
		if !d.dead[id] {
			d.dead[id] = true
			log.Info(provider.SubsysEPData, "peer process is gone: its operations complete with FI_ECONNRESET",
				slog.String("endpoint", fileName(ep.id)), slog.String("peer", name))
		}
		for _, p := range d.peers[id] {
			p.r.SetClosing()
			ep.failRMAPeer(p, provider.ECONNRESET)
		}
		if st := ep.rx.segs[id]; st != nil {
			ep.abortSeg(id, st, provider.ECONNRESET)
		}
		sys.RemoveStale(name)
		delete(d.cur, id)
	}
	d.suspects, d.cur = d.cur, d.suspects
	if found {
		// The peers are closing now: fail what waits on them.
		ep.progressTx()
	}
}

var staleOnce sync.Once

// cleanStale removes the region files of dead processes of this user,
// once per process (the first shm fabric opened).
func cleanStale() {
	staleOnce.Do(func() {
		n, err := sys.CleanStale(filePrefix)
		if n > 0 || err != nil {
			log.Info(provider.SubsysFabric, "removed stale shm regions of dead processes",
				slog.Int("count", n), slog.Any("err", err))
		}
	})
}
