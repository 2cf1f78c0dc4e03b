package fabric

import (
	"log/slog"
	"slices"
	"sync"

	"github.com/gofabric/fabric/provider"
)

// Counters bound to memory regions (fi_mr_bind with FI_REMOTE_WRITE or
// FI_REMOTE_READ) count remote accesses, which happen when the target
// endpoint makes progress. Under manual progress an application may only
// read or wait on such a counter, with no endpoint bound to it, so the
// counter's reads and waits drive the progress of every endpoint of the
// domain (any of them may be the target of an access to the region), as
// libfabric's providers progress the domain when such a counter is read.
//
// mrProgress keeps the two lists this needs: the domain's open endpoints
// (their provider progress sources) and the counters bound to its regions.
// While a counter is bound to at least one region, every endpoint of the
// domain is one of its progress sources (and, for FI_WAIT_FD, its
// descriptor is in the counter's wait set); endpoints opened or closed
// meanwhile join or leave. A source is added at most once per counter by
// this mechanism (the counter's progress set counts references, so an
// endpoint also bound to the counter with Endpoint.Bind stays bound when
// the region goes).
type mrProgress struct {
	mu    sync.Mutex
	eps   []provider.Progresser  // open endpoints of the domain, once each
	cntrs map[*Cntr]*mrCntrState // counters bound to regions of the domain
}

// mrCntrState is one counter's bindings to regions and the endpoint
// sources added to it.
type mrCntrState struct {
	binds int                          // regions bound to the counter
	added map[provider.Progresser]bool // sources successfully added
}

// addEndpointSource registers an endpoint opened on the domain: counters
// bound to its regions drive its progress from now on.
func (d *Domain) addEndpointSource(p provider.Progresser) {
	if p == nil {
		return
	}
	m := &d.ext.mrp
	m.mu.Lock()
	defer m.mu.Unlock()
	m.eps = append(m.eps, p)
	for c, st := range m.cntrs {
		st.add(c, p)
	}
}

// removeEndpointSource unregisters an endpoint at its close.
func (d *Domain) removeEndpointSource(p provider.Progresser) {
	if p == nil {
		return
	}
	m := &d.ext.mrp
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := slices.Index(m.eps, p); i >= 0 {
		m.eps = slices.Delete(m.eps, i, i+1)
	}
	for c, st := range m.cntrs {
		st.remove(c, p)
	}
}

// mrCntrBound records one more region bound to c; at the first, the
// domain's endpoints become c's progress sources.
func (d *Domain) mrCntrBound(c *Cntr) {
	m := &d.ext.mrp
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.cntrs[c]
	if st == nil {
		if m.cntrs == nil {
			m.cntrs = make(map[*Cntr]*mrCntrState)
		}
		st = &mrCntrState{added: make(map[provider.Progresser]bool)}
		m.cntrs[c] = st
		for _, p := range m.eps {
			st.add(c, p)
		}
	}
	st.binds++
}

// mrCntrUnbound undoes mrCntrBound; with the last region gone the
// endpoints added for it leave c's progress sources.
func (d *Domain) mrCntrUnbound(c *Cntr) {
	m := &d.ext.mrp
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.cntrs[c]
	if st == nil {
		return
	}
	if st.binds--; st.binds > 0 {
		return
	}
	delete(m.cntrs, c)
	for p := range st.added {
		c.removeSource(p)
	}
}

// add makes p a progress source of c. A source the counter refuses (its
// descriptor cannot join the wait set) is left out: reads and waits then
// progress the others, and nothing is removed for it later.
func (st *mrCntrState) add(c *Cntr, p provider.Progresser) {
	if st.added[p] {
		return
	}
	if err := c.addSource(p); err != nil {
		infoLogger(c.prov).Warn(provider.SubsysCntr, "an endpoint's progress not added to a counter bound to a memory region",
			slog.String("error", err.Error()))
		return
	}
	st.added[p] = true
}

func (st *mrCntrState) remove(c *Cntr, p provider.Progresser) {
	if !st.added[p] {
		return
	}
	delete(st.added, p)
	c.removeSource(p)
}
