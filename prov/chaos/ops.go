package chaos

import (
	"time"

	"github.com/gofabric/fabric/provider"
)

type opKind uint8

const (
	opSend opKind = iota
	opTSend
	opRead
	opWrite
	opAtomic
)

var opNames = [...]string{opSend: "fi_send", opTSend: "fi_tsend", opRead: "fi_read", opWrite: "fi_write", opAtomic: "fi_atomic"}

// op is one transmit going through submit.
type op struct {
	kind     opKind
	m        provider.Msg       // all but opAtomic
	a        provider.AtomicMsg // opAtomic
	start    time.Time          // when the application posted it (trace)
	dup      bool               // post twice (FI_EP_DGRAM)
	due      time.Time          // when a held op may be posted
	reorder  bool               // held until another transmit overtook it
	reserved bool               // held with room kept in the transmit CQ (hold)
}

func (o *op) ctx() any {
	if o.kind == opAtomic {
		return o.a.Context
	}
	return o.m.Context
}

func (o *op) flags() provider.Flags {
	if o.kind == opAtomic {
		return o.a.Flags
	}
	return o.m.Flags
}

func (o *op) addr() provider.Addr {
	if o.kind == opAtomic {
		return o.a.Addr
	}
	return o.m.Addr
}

// compFlags are the flags of the op's completion (fi_cq(3)).
func (o *op) compFlags() provider.Flags {
	switch o.kind {
	case opTSend:
		return provider.FlagTagged | provider.FlagSend
	case opRead:
		return provider.FlagRMA | provider.FlagRead
	case opWrite:
		return provider.FlagRMA | provider.FlagWrite
	case opAtomic:
		if o.fetches() {
			return provider.FlagAtomic | provider.FlagRead
		}
		return provider.FlagAtomic | provider.FlagWrite
	}
	return provider.FlagMsg | provider.FlagSend
}

// fetches reports whether o is a fetching atomic (fi_fetch_atomic,
// fi_compare_atomic), which completes and counts as a read.
func (o *op) fetches() bool {
	return o.kind == opAtomic && o.a.Kind != provider.AtomicBase
}

// cntr is the index of the counter the op bumps.
func (o *op) cntr() int {
	switch o.kind {
	case opRead:
		return provider.CntrRead
	case opWrite:
		return provider.CntrWrite
	case opAtomic:
		if o.fetches() {
			return provider.CntrRead
		}
		return provider.CntrWrite
	}
	return provider.CntrSend
}

// fast reports whether transmits go straight to the core endpoint.
func (e *endpoint) fast() bool {
	return !e.st.slow && !e.st.hook.ctl.Load() && !e.f.holding.Load()
}

// submit is the slow path of every transmit: faults, then the core
// endpoint, traced.
func (e *endpoint) submit(o *op) error {
	o.start = time.Now()
	err := e.inject(o)
	if e.st.trace {
		e.st.traceOp(e, o, err)
	}
	return err
}

// postOnce hands o to the core endpoint with flags.
func (e *endpoint) postOnce(o *op, flags provider.Flags) error {
	m := o.m
	m.Flags = flags
	switch o.kind {
	case opTSend:
		return e.tagged.TSend(m)
	case opRead:
		return e.rma.Read(m)
	case opWrite:
		return e.rma.Write(m)
	case opAtomic:
		return e.atomic.Atomic(o.a)
	}
	return e.p.Send(m)
}

// resources are the resources the core endpoint is enabled with: the
// root's, with the event queue reporting about the wrapper, the send
// counter skipping duplicates and, when tracing, completions logged.
func (st *state) resources(e *endpoint, r *provider.Resources) *provider.Resources {
	c := *r
	if r.EQ != nil {
		c.EQ = eqWriter{w: r.EQ, from: e.p, to: e.self}
	}
	if e.epType == provider.EPDgram && r.Cntrs[provider.CntrSend] != nil {
		// Dup may also be set later (Hook.Configure).
		c.Cntrs[provider.CntrSend] = dupCntr{c: r.Cntrs[provider.CntrSend], e: e}
	}
	if st.trace {
		st.traceResources(e, &c)
	}
	return &c
}
