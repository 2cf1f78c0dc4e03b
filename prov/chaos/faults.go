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
	if e.roll(e.st.cfg.Error) {
		return e.completeErr(o, ErrInjected, &h.stats.errors)
	}
	return e.postOnce(o, o.flags())
}

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
