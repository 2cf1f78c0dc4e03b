package sim

import (
	"github.com/gofabric/fabric/internal/atomics"
	"github.com/gofabric/fabric/provider"
)

// Atomics (fi_atomic(3)), FI_EP_RDM only, carried as RMA requests
// (rma.go): the request holds a copy of the operand (and compare
// operand); the target checks every remote iov (FI_REMOTE_WRITE for the
// base family, FI_REMOTE_READ and FI_REMOTE_WRITE for fetch and compare,
// FI_REMOTE_READ alone for FI_ATOMIC_READ), applies the operation with
// internal/atomics' table under the network's lock (which every remote
// access of the simulated fabric takes: the target is the single actor),
// reports FI_RMA_EVENT, and answers with the fetched values, which the
// initiator copies into its result buffers when the answer arrives.

// atomicMaxBytes is the most bytes one operand of an atomic call holds.
const atomicMaxBytes = 16 << 10

var (
	_ provider.AtomicDomain = (*domain)(nil)
	_ provider.Atomic       = (*endpoint)(nil)
)

// QueryAtomic implements fi_query_atomic from internal/atomics' table
// (FI_LONG_DOUBLE and FI_LONG_DOUBLE_COMPLEX are invalid: Go cannot
// compute on them). Atomics on tagged receive buffers are not
// implemented (ENOSYS), nor are atomics on a domain opened for
// FI_EP_DGRAM or without FI_ATOMIC.
func (dom *domain) QueryAtomic(k provider.AtomicKind, d provider.Datatype, op provider.AtomicOp,
	tagged bool) (provider.AtomicAttr, error) {
	if tagged || !dom.atomics {
		return provider.AtomicAttr{}, provider.ENOSYS
	}
	sz := atomics.Size(d)
	if !atomics.KindValid(k, op, d) || sz == 0 {
		return provider.AtomicAttr{}, provider.EOPNOTSUPP
	}
	return provider.AtomicAttr{Count: uint64(atomicMaxBytes / sz), Size: uint64(sz)}, nil
}

// atomicReq is the part of an RMA request that describes an atomic.
type atomicReq struct {
	kind provider.AtomicKind
	op   provider.AtomicOp
	dt   provider.Datatype
}

// appendBufs appends the buffers of b to dst.
func appendBufs(dst [][]byte, b *provider.AtomicBufs) [][]byte {
	if b.IOV == nil {
		if len(b.Buf) == 0 {
			return dst
		}
		return append(dst, b.Buf)
	}
	return append(dst, b.IOV...)
}

// Atomic starts the atomic operation m (every fi_atomic(3) call).
func (ep *endpoint) Atomic(m provider.AtomicMsg) error {
	sz := uint64(atomics.Size(m.Datatype))
	if sz == 0 || m.Count == 0 || m.Count > atomicMaxBytes/sz {
		return provider.EINVAL
	}
	dst, res, comp, err := ep.startTarget(m.Addr, m.Flags)
	if err != nil {
		return err
	}
	rma := make([]provider.RMAIOV, 0, max(len(m.RMA), 1))
	if m.RMA == nil {
		rma = append(rma, provider.RMAIOV{Addr: m.RMAOne.Addr, Len: m.RMAOne.Count * sz, Key: m.RMAOne.Key})
	} else {
		for _, v := range m.RMA {
			rma = append(rma, provider.RMAIOV{Addr: v.Addr, Len: v.Count * sz, Key: v.Key})
		}
	}
	// The operands, one after the other: operand, then compare operand.
	n := int(m.Count * sz)
	var srcs [2 * IOVLimit][]byte
	src := srcs[:0]
	if m.Op != provider.AtomicRead {
		src = appendBufs(src, &m.Operand)
	}
	if m.Kind == provider.AtomicCompare {
		src = appendBufs(src, &m.Compare)
	}
	var buf []byte
	total := 0
	for _, b := range src {
		total += len(b)
	}
	if total > 0 {
		buf = ep.n.getBuf(total)
		off := 0
		for _, b := range src {
			off += copy(buf[off:], b)
		}
	}
	flags, cntr := provider.FlagAtomic|provider.FlagWrite, ep.wCntr
	var local [][]byte
	if m.Kind != provider.AtomicBase {
		flags, cntr = provider.FlagAtomic|provider.FlagRead, ep.rCntr
		local = appendBufs(nil, &m.Result)
	}
	nw := ep.n
	nw.mu.Lock()
	defer nw.mu.Unlock()
	op, err := ep.startOp(buf, res, opStart{ctx: m.Context, flags: flags, comp: comp,
		inject: m.Flags&provider.FlagInject != 0, cntr: cntr})
	if err != nil {
		return err
	}
	op.local = local
	if ep.x != nil && nw.eps[dst] == nil {
		ep.xrequest(dst, op, rma, buf, n, false, m.Flags, m.Data, &atomicReq{kind: m.Kind, op: m.Op, dt: m.Datatype})
		return nil
	}
	_, arrive, _ := nw.transmit(ep, dst, total, true)
	ev := nw.newEvent()
	ev.kind, ev.src, ev.dst, ev.tx = evRMA, ep, dst, op
	ev.rma, ev.buf, ev.size = rma, buf, n
	ev.atomic = &atomicReq{kind: m.Kind, op: m.Op, dt: m.Datatype}
	if m.Flags&provider.FlagRemoteCQData != 0 {
		ev.data, ev.hasCQD = m.Data, true
	}
	nw.schedule(ev, arrive)
	return nil
}

// serveAtomic applies the atomic request e at its target ep and returns
// the answer's status and data (the fetched values); n.mu is held.
func (ep *endpoint) serveAtomic(e *event) (provider.Errno, []byte) {
	a := e.atomic
	if !a.kind.Allows(a.op) {
		return provider.EINVAL, nil // only from another process (xproc.go)
	}
	size := atomics.Size(a.dt)
	access := provider.FlagRemoteWrite
	switch {
	case a.op == provider.AtomicRead:
		access = provider.FlagRemoteRead
	case a.kind != provider.AtomicBase:
		access = provider.FlagRemoteRead | provider.FlagRemoteWrite
	}
	var pieces [RMAIOVLimit][]byte
	var count uint64
	for _, v := range e.rma {
		count += v.Len
	}
	if ep.mr == nil || len(e.rma) > RMAIOVLimit {
		return provider.EKEYREJECTED, nil
	}
	operands := 1
	switch {
	case a.op == provider.AtomicRead:
		operands = 0
	case a.kind == provider.AtomicCompare:
		operands = 2
	}
	if size == 0 || count != uint64(e.size) || len(e.buf) != operands*e.size {
		return provider.EINVAL, nil
	}
	for i, v := range e.rma {
		b, err := ep.mr.Access(v.Key, v.Addr, v.Len, access)
		if err != nil {
			if en, ok := err.(provider.Errno); ok {
				return en, nil
			}
			return provider.EINVAL, nil
		}
		if len(b)%size != 0 {
			return provider.EINVAL, nil
		}
		pieces[i] = b
	}
	var src, cmp, res []byte
	switch {
	case a.op == provider.AtomicRead:
	case a.kind == provider.AtomicCompare:
		src, cmp = e.buf[:e.size], e.buf[e.size:2*e.size]
	default:
		src = e.buf[:e.size]
	}
	if a.kind != provider.AtomicBase {
		res = ep.n.getBuf(e.size)
	}
	off := 0
	for _, b := range pieces[:len(e.rma)] {
		k := len(b)
		var err error
		switch a.kind {
		case provider.AtomicBase:
			err = atomics.Apply(a.op, a.dt, b, src[off:off+k])
		case provider.AtomicFetch:
			var s []byte
			if src != nil {
				s = src[off : off+k]
			}
			err = atomics.ApplyFetch(a.op, a.dt, b, s, res[off:off+k])
		default:
			err = atomics.ApplyCompare(a.op, a.dt, b, src[off:off+k], cmp[off:off+k], res[off:off+k])
		}
		if err != nil {
			ep.n.putBuf(res)
			return provider.EINVAL, nil
		}
		off += k
	}
	// FI_RMA_EVENT: a base atomic is a remote write, a fetching one a
	// remote read; the regions it modified count a write, those it read
	// a read.
	for _, v := range e.rma {
		if a.op != provider.AtomicRead {
			ep.mr.Event(v.Key, provider.FlagRemoteWrite)
		}
		if a.kind != provider.AtomicBase {
			ep.mr.Event(v.Key, provider.FlagRemoteRead)
		}
	}
	c := ep.rwCntr
	if a.kind != provider.AtomicBase {
		c = ep.rrCntr
	}
	if c != nil {
		c.Inc()
	}
	if e.hasCQD {
		ep.remoteData(e, provider.FlagAtomic|provider.FlagRemoteWrite)
	}
	return 0, res
}
