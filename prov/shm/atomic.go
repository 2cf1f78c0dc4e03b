package shm

import (
	"sync"

	"github.com/gofabric/fabric/internal/atomics"
	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/provider"
)

// Atomics (fi_atomic(3)). The domain answers the valid queries from
// internal/atomics' table (FI_LONG_DOUBLE and FI_LONG_DOUBLE_COMPLEX are
// invalid: Go cannot compute on them). A request carries the family,
// operation and datatype in Aux, the remote iovs (element counts) and
// the operands after them, inline or in one bounce buffer of the target
// (an operand holds at most atomicMaxBytes, so operand and compare
// operand fit one buffer with the table). The target checks every remote
// iov (FI_REMOTE_WRITE for the base family, FI_REMOTE_READ and
// FI_REMOTE_WRITE for fetch and compare, FI_REMOTE_READ alone for
// FI_ATOMIC_READ) before it touches memory, applies the operation under
// atomicMu, and answers with the fetched values (the answer to a base
// atomic only carries the status).

// atomicMaxBytes is the most bytes one operand of an atomic call holds.
const atomicMaxBytes = (BufSize - RMAIOVLimit*rmaIOVSize) / 2

// atomicMu serialises every atomic operation applied to this process's
// memory, whatever endpoint or peer it comes from (the target process is
// the single actor of fi_atomic(3)).
var atomicMu sync.Mutex

var (
	_ provider.AtomicDomain = (*domain)(nil)
	_ provider.Atomic       = (*endpoint)(nil)
)

// QueryAtomic implements fi_query_atomic: internal/atomics decides which
// operations apply to which datatypes; one call carries up to
// atomicMaxBytes of operand. Atomics on tagged receive buffers are not
// implemented (ENOSYS).
func (*domain) QueryAtomic(k provider.AtomicKind, d provider.Datatype, op provider.AtomicOp,
	tagged bool) (provider.AtomicAttr, error) {
	if tagged {
		return provider.AtomicAttr{}, provider.ENOSYS
	}
	sz := atomics.Size(d)
	if !atomics.KindValid(k, op, d) || sz == 0 {
		return provider.AtomicAttr{}, provider.EOPNOTSUPP
	}
	return provider.AtomicAttr{Count: uint64(atomicMaxBytes / sz), Size: uint64(sz)}, nil
}

// Atomic starts the atomic operation m (every fi_atomic(3) call).
func (ep *endpoint) Atomic(m provider.AtomicMsg) error {
	if e := ep.enter(); e != 0 {
		return e
	}
	err := ep.postAtomic(&m)
	ep.exit()
	return err
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

func (ep *endpoint) postAtomic(m *provider.AtomicMsg) error {
	p, e := ep.peerFor(m.Addr)
	if p == nil {
		return e
	}
	s := &ep.rma
	flags, cntr := provider.FlagAtomic|provider.FlagWrite, s.write
	if m.Kind != provider.AtomicBase {
		flags, cntr = provider.FlagAtomic|provider.FlagRead, s.read
	}
	comp := m.Flags&provider.FlagCompletion != 0
	inject := m.Flags&provider.FlagInject != 0
	noResp := m.Kind == provider.AtomicBase && inject && !comp
	if e != 0 {
		return ep.failPostRMA(m.Context, flags, cntr, noResp, e)
	}
	sz := uint64(atomics.Size(m.Datatype))
	if sz == 0 {
		return provider.EOPNOTSUPP
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, res, err := ep.newOp(comp)
	if err != nil {
		return err
	}
	*o = rmaOp{id: o.id, next: -1, code: opAtomic, p: p, ctx: m.Context, flags: flags, comp: comp, res: res,
		cntr: cntr, noResp: noResp, fence: m.Flags&provider.FlagFence != 0}
	if m.Flags&provider.FlagRemoteCQData != 0 {
		o.cflags, o.data = shmring.FlagCQData, m.Data
	}
	if m.RMA != nil {
		for i, v := range m.RMA {
			o.rma[i] = remoteIOV{v.Addr, v.Count, v.Key}
		}
		o.nrma = len(m.RMA)
	} else {
		o.rma[0] = remoteIOV{m.RMAOne.Addr, m.RMAOne.Count, m.RMAOne.Key}
		o.nrma = 1
	}
	o.aux = atomicAux(o.nrma, m.Kind, m.Op, m.Datatype)
	src := o.src[:0]
	if m.Op != provider.AtomicRead {
		src = appendBufs(src, &m.Operand)
	}
	if m.Kind == provider.AtomicCompare {
		src = appendBufs(src, &m.Compare)
	}
	o.nsrc, o.size = len(src), iovBytes(src)
	if m.Kind != provider.AtomicBase {
		dst := appendBufs(o.dst[:0], &m.Result)
		o.ndst, o.want = len(dst), m.Count*sz
	}
	return ep.startOp(o, inject)
}

// rxAtomic serves an atomic request (ep.rxMu held); false leaves it
// queued (back-pressure).
func (ep *endpoint) rxAtomic(c *shmring.Cmd) bool {
	if c.MsgID != 0 && ep.respFull() {
		return false
	}
	reserved, ok := ep.reserveRx(c)
	if !ok {
		return false
	}
	s := &ep.rma
	var tbl [RMAIOVLimit]remoteIOV
	var dst [][]byte
	var rest []byte
	var count uint64
	e := provider.Errno(0)
	d, ok := parseAtomicAux(c.Aux)
	switch {
	case !ok:
		e = provider.EOPNOTSUPP
	default:
		if rest, ok = parseRemote(ep.payload(c), d.n, &tbl); !ok {
			e = provider.EIO
			break
		}
		for _, v := range tbl[:d.n] {
			if v.Len > atomicMaxBytes {
				e = provider.EINVAL
			}
			count += v.Len
		}
		if e == 0 && (count == 0 || count*uint64(d.size) > atomicMaxBytes ||
			uint64(len(rest)) != d.operandBytes(count)) {
			e = provider.EINVAL
		}
	}
	if e == 0 {
		access := provider.FlagRemoteWrite
		switch {
		case d.op == provider.AtomicRead:
			access = provider.FlagRemoteRead
		case d.kind != provider.AtomicBase:
			access = provider.FlagRemoteRead | provider.FlagRemoteWrite
		}
		dst, e = ep.checkRemote(tbl[:d.n], uint64(d.size), access, s.pieces[:0])
		for _, b := range dst {
			if len(b)%d.size != 0 { // an element split across registered buffers
				e = provider.EINVAL
			}
		}
	}
	var res []byte
	if e == 0 {
		n := int(count) * d.size
		if d.kind != provider.AtomicBase {
			if cap(s.scratch) < n {
				s.scratch = make([]byte, atomicMaxBytes)
			}
			res = s.scratch[:n]
		}
		e = applyAtomic(d, dst, rest, res, n)
	}
	ep.doneBuf(c)
	if e == 0 {
		ep.atomicEvents(d, tbl[:d.n])
	}
	ep.remoteData(c, reserved, provider.FlagAtomic|provider.FlagRemoteWrite, e == 0 && c.Flags&shmring.FlagCQData != 0)
	var data [][]byte
	if res != nil {
		s.cur.srcArr[0] = res
		data = s.cur.srcArr[:1]
	}
	ep.answer(c.Src, opAtomicResp, c.MsgID, e, data)
	return true
}

// applyAtomic applies the request d to the target pieces dst, with the
// operands in opnd (operand, then compare operand), fetching into res (n
// bytes in all), under atomicMu.
func applyAtomic(d atomicDesc, dst [][]byte, opnd, res []byte, n int) provider.Errno {
	var src, cmp []byte
	switch {
	case d.op == provider.AtomicRead:
	case d.kind == provider.AtomicCompare:
		src, cmp = opnd[:n], opnd[n:2*n]
	default:
		src = opnd[:n]
	}
	atomicMu.Lock()
	defer atomicMu.Unlock()
	off := 0
	for _, b := range dst {
		k := len(b)
		var err error
		switch d.kind {
		case provider.AtomicBase:
			err = atomics.Apply(d.op, d.dt, b, src[off:off+k])
		case provider.AtomicFetch:
			var s []byte
			if src != nil {
				s = src[off : off+k]
			}
			err = atomics.ApplyFetch(d.op, d.dt, b, s, res[off:off+k])
		default:
			err = atomics.ApplyCompare(d.op, d.dt, b, src[off:off+k], cmp[off:off+k], res[off:off+k])
		}
		if err != nil {
			return provider.EINVAL
		}
		off += k
	}
	return 0
}

// atomicEvents reports a served atomic (FI_RMA_EVENT): a base atomic is a
// remote write, a fetching one a remote read; the regions it modified
// (all but FI_ATOMIC_READ) count it as a write, those it read as a read.
func (ep *endpoint) atomicEvents(d atomicDesc, tbl []remoteIOV) {
	s := &ep.rma
	if s.mr != nil {
		for _, v := range tbl {
			if d.op != provider.AtomicRead {
				s.mr.Event(v.Key, provider.FlagRemoteWrite)
			}
			if d.kind != provider.AtomicBase {
				s.mr.Event(v.Key, provider.FlagRemoteRead)
			}
		}
	}
	c := s.rWrite
	if d.kind != provider.AtomicBase {
		c = s.rRead
	}
	if c != nil {
		c.Inc()
	}
}
