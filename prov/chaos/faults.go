package chaos

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/gofabric/fabric/provider"
)

// ErrInjected is the Err of an injected error completion (Config.Error).
const ErrInjected = provider.EIO

// faults is an endpoint's fault state, under endpoint.mu.
type faults struct {
	rng    *rand.Rand
	closed bool
	rm     bool // resource management: reserve room for injected completions
	// dupSkip counts send counter increments of duplicates still to be
	// swallowed (dupCntr).
	dupSkip atomic.Int32
}

func (f *faults) init(st *state, id uint64, info *provider.Info) {
	f.rng = rand.New(rand.NewPCG(st.cfg.Seed, id))
	f.rm = true
	if info != nil && info.DomainAttr != nil {
		f.rm = info.DomainAttr.ResourceMgmt != provider.RMDisabled
	}
}

// roll draws one fault of the given rate (callers hold mu); a zero rate
// draws nothing, so that adding a fault leaves the others' draws alone.
func (e *endpoint) roll(rate float64) bool {
	return rate > 0 && e.f.rng.Float64() < rate
}

// inject applies the faults to o, then posts what is left of it.
func (e *endpoint) inject(o *op) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f.closed {
		return provider.EBADF
	}
	h := e.st.hook
	cfg := &e.st.cfg
	if e.roll(cfg.Error) {
		return e.completeErr(o, ErrInjected, &h.stats.errors)
	}
	dgramSend := e.epType == provider.EPDgram && (o.kind == opSend || o.kind == opTSend)
	if dgramSend && e.roll(cfg.Drop) {
		return e.completeLocally(o, &h.stats.dropped)
	}
	if dgramSend && e.roll(cfg.Dup) {
		o.dup = true
	}
	return e.post(o)
}

// post hands o to the core endpoint, twice for a duplicate: the copy
// completes nothing and counts nothing (dupCntr), and is given up if the
// core endpoint refuses it.
func (e *endpoint) post(o *op) error {
	err := e.postOnce(o, o.flags())
	if err != nil || !o.dup {
		return err
	}
	e.f.dupSkip.Add(1)
	if e.postOnce(o, o.flags()&^provider.FlagCompletion) != nil {
		e.f.dupSkip.Add(-1)
		return nil
	}
	e.st.hook.stats.dups.Add(1)
	return nil
}

// completeLocally ends a datagram send that is not sent: it completes
// successfully, as a sent datagram does (callers hold mu). Under resource
// management a full CQ answers FI_EAGAIN, as the core provider's send
// would.
func (e *endpoint) completeLocally(o *op, n *atomic.Uint64) error {
	cq := e.res.TxCQ
	comp := o.flags()&provider.FlagCompletion != 0 && cq != nil
	if r, ok := cq.(provider.CQReserver); ok && comp && e.f.rm && r.Full() {
		return provider.EAGAIN
	}
	if c := e.res.Cntrs[o.cntr()]; c != nil {
		c.Inc()
	}
	if comp {
		_ = cq.Write(o.ctx(), o.compFlags(), 0, nil, 0, 0, provider.AddrNotAvail)
	}
	n.Add(1)
	e.st.traceEnd(e, o, 0)
	return nil
}

// dupCntr is the send counter the core endpoint bumps: the duplicate of a
// datagram does not count. (The core provider bumps it while the
// duplicate is posted, under the endpoint's mu, so the skip is the
// duplicate's.)
type dupCntr struct {
	c provider.CntrOwner
	e *endpoint
}

func (d dupCntr) Inc() {
	for {
		n := d.e.f.dupSkip.Load()
		if n <= 0 {
			d.c.Inc()
			return
		}
		if d.e.f.dupSkip.CompareAndSwap(n, n-1) {
			return
		}
	}
}

func (d dupCntr) IncErr() { d.c.IncErr() }

// completeErr ends o without starting it: an error completion with err
// and the counter's error value (callers hold mu). The error completion
// is written whatever the selective completion flags: an operation that
// failed is never silent. With resource management the room is reserved
// first: without room the post returns FI_EAGAIN, and nothing happened.
func (e *endpoint) completeErr(o *op, err provider.Errno, n *atomic.Uint64) error {
	ee := provider.CQErrEntry{OpContext: o.ctx(), Flags: o.compFlags(), Err: err}
	switch cq := e.res.TxCQ.(type) {
	case nil:
		e.countErr(o)
	case provider.CQReserver:
		if e.f.rm {
			if !cq.Reserve() {
				return provider.EAGAIN
			}
			e.countErr(o)
			_ = cq.WriteErrReserved(&ee)
			break
		}
		e.countErr(o)
		_ = cq.WriteErr(&ee)
	default:
		e.countErr(o)
		_ = cq.WriteErr(&ee)
	}
	n.Add(1)
	e.st.traceEnd(e, o, err)
	return nil
}

// countErr bumps the error value of o's counter (the counter first, as
// the providers do: a thread that read the completion sees it counted).
func (e *endpoint) countErr(o *op) {
	if c := e.res.Cntrs[o.cntr()]; c != nil {
		c.IncErr()
	}
}
