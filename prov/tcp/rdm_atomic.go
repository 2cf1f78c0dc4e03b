package tcp

import (
	"sync"

	"github.com/gofabric/fabric/internal/atomics"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Atomics of RDM endpoints (fi_atomic(3)), carried as rxm 1.17 carries
// them (internal/wire/rxmwire atomic.go): a request packet (rxm type 4)
// with the remote targets and the operands, answered by a response packet
// (type 5) with a status and, for the fetch and compare families, the
// target's previous values. The target checks every target region
// (FI_REMOTE_WRITE for the base family, FI_REMOTE_READ for FI_ATOMIC_READ,
// both for the other fetch and compare operations) before it touches
// memory, and answers a refusal with -FI_EACCES, as rxm does: the
// operation completes in error at the initiator and the connection stays
// up. internal/atomics is the operation table and the arithmetic (shared
// with prov/shm); FI_INT128/FI_UINT128 are refused as rxm refuses them,
// and the long double types as internal/atomics cannot compute them.
//
// One request carries at most rxmwire.MaxAtomicData bytes of operands (the
// compare family half as many elements), rxm's limit; FI_REMOTE_CQ_DATA is
// refused with EINVAL, as rxm refuses it.

var (
	_ provider.AtomicDomain = (*domain)(nil)
	_ provider.Atomic       = (*rdmEP)(nil)
)

// rdmAtomicMu serialises the atomics this process applies to its memory,
// whatever endpoint they arrive on.
var rdmAtomicMu sync.Mutex

// atomicDatatypeOK reports whether rxm over tcp offers atomics on d.
func atomicDatatypeOK(d provider.Datatype) bool {
	return atomics.Size(d) > 0 && d != provider.DatatypeInt128 && d != provider.DatatypeUint128
}

// QueryAtomic implements fi_query_atomic for RDM endpoints (FI_EP_MSG
// endpoints do not offer FI_ATOMIC).
func (dom *domain) QueryAtomic(k provider.AtomicKind, d provider.Datatype, op provider.AtomicOp,
	tagged bool) (provider.AtomicAttr, error) {
	if tagged || !dom.rdm {
		return provider.AtomicAttr{}, provider.ENOSYS
	}
	if !atomicDatatypeOK(d) || !atomics.KindValid(k, op, d) {
		return provider.AtomicAttr{}, provider.EOPNOTSUPP
	}
	sz := uint64(atomics.Size(d))
	limit := uint64(rxmwire.MaxAtomicData)
	if k == provider.AtomicCompare {
		limit /= 2
	}
	return provider.AtomicAttr{Count: limit / sz, Size: sz}, nil
}

func atomicBufs(dst [][]byte, b *provider.AtomicBufs) [][]byte {
	if b.IOV == nil {
		return append(dst, b.Buf)
	}
	return append(dst, b.IOV...)
}

// Atomic starts the atomic operation m (every fi_atomic(3) call).
func (ep *rdmEP) Atomic(m provider.AtomicMsg) error {
	if m.Flags&provider.FlagRemoteCQData != 0 {
		return provider.EINVAL
	}
	sz := atomics.Size(m.Datatype)
	if !atomicDatatypeOK(m.Datatype) || !atomics.KindValid(m.Kind, m.Op, m.Datatype) {
		return provider.EOPNOTSUPP
	}
	opLen := int(m.Count) * sz
	data := opLen
	if m.Op == provider.AtomicRead {
		data = 0
	}
	if m.Kind == provider.AtomicCompare {
		data += opLen
	}
	if data > rxmwire.MaxAtomicData {
		return provider.EINVAL
	}
	var ioc [rxmwire.MaxAtomicIOC]rxmwire.AtomicIOC
	n := 1
	if m.RMA != nil {
		n = len(m.RMA)
		if n < 1 || n > rxmwire.MaxAtomicIOC {
			return provider.EINVAL
		}
		for i, v := range m.RMA {
			ioc[i] = rxmwire.AtomicIOC{Addr: v.Addr, Count: v.Count, Key: v.Key}
		}
	} else {
		ioc[0] = rxmwire.AtomicIOC{Addr: m.RMAOne.Addr, Count: m.RMAOne.Count, Key: m.RMAOne.Key}
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	c, t, err := ep.beginOp(m.Addr, m.Context, m.Flags)
	if err != nil {
		return err
	}
	t.kind = txAtomic
	t.flags, t.cntr = provider.FlagAtomic|provider.FlagWrite, provider.CntrWrite
	op := uint8(rxmwire.OpAtomic)
	switch m.Kind {
	case provider.AtomicFetch:
		op = rxmwire.OpAtomicFetch
	case provider.AtomicCompare:
		op = rxmwire.OpAtomicCompare
	}
	if m.Kind != provider.AtomicBase {
		t.flags, t.cntr = provider.FlagAtomic|provider.FlagRead, provider.CntrRead
		t.res = atomicBufs(t.resArr[:0], &m.Result)
	}
	ep.nextKey++
	t.key = rxmwire.KeyBase | ep.nextKey
	body := rxmwire.AtomicReqSize + data
	var h tcpwire.Header
	h.Op = tcpwire.OpMsg
	h.SetPayload(uint64(rxmwire.HeaderSize + body))
	hl := tcpwire.PutHeader(t.hdr[:], &h, false)
	rh := rxmwire.Header{Type: rxmwire.TypeAtomic, ConnID: uint64(c.remoteIndex), MsgID: t.key, Op: op,
		Size: uint64(body), Tag: rxmwire.AtomicTag(uint8(m.Datatype), uint8(m.Op), uint8(n))}
	rh.Put(t.hdr[hl:])
	hl += rxmwire.HeaderSize
	need := hl + body
	if cap(t.buf) < need {
		t.buf = make([]byte, need, max(need, 256))
	}
	buf := t.buf[:need]
	copy(buf, t.hdr[:hl])
	rxmwire.PutAtomicIOC(buf[hl:], ioc[:n])
	off := hl + rxmwire.AtomicReqSize
	var srcs [2 * IOVLimit][]byte
	parts := srcs[:0]
	if m.Op != provider.AtomicRead {
		parts = atomicBufs(parts, &m.Operand)
	}
	if m.Kind == provider.AtomicCompare {
		parts = atomicBufs(parts, &m.Compare)
	}
	for _, p := range parts {
		off += copy(buf[off:], p)
	}
	t.add(buf)
	ep.amo[t.key] = t
	ep.enqueue(c, t)
	return nil
}

// atomicResponse completes the atomic a response answers.
func (c *rdmConn) atomicResponse(rh *rxmwire.Header, body []byte) {
	ep := c.ep
	t := ep.amo[rh.MsgID]
	if t == nil || t.conn != c || !t.sent {
		c.protoFail("atomic response for no request")
		return
	}
	delete(ep.amo, rh.MsgID)
	status, res, err := rxmwire.ParseAtomicResp(body)
	switch {
	case err != nil:
		ep.finishTx(t, provider.EIO, true)
	case status != 0:
		e := provider.EIO
		if status < 0 && status > -4096 {
			e = provider.Errno(-status)
		}
		ep.finishTx(t, e, true)
	default:
		want := 0
		for _, b := range t.res {
			want += len(b)
		}
		if len(res) != want {
			ep.finishTx(t, provider.EIO, true)
			return
		}
		for _, b := range t.res {
			res = res[copy(b, res):]
		}
		ep.finishTx(t, 0, true)
	}
}

// atomicRequest serves an atomic request: checks it, applies it to the
// registered memory and answers. A malformed request drops the connection;
// a refused or unsupported one is answered with an error status.
func (c *rdmConn) atomicRequest(rh *rxmwire.Header, body []byte) {
	ep := c.ep
	var kind provider.AtomicKind
	switch rh.Op {
	case rxmwire.OpAtomic:
		kind = provider.AtomicBase
	case rxmwire.OpAtomicFetch:
		kind = provider.AtomicFetch
	case rxmwire.OpAtomicCompare:
		kind = provider.AtomicCompare
	default:
		c.protoFail("bad atomic op")
		return
	}
	if rh.Size != uint64(len(body)) {
		c.protoFail("atomic size mismatch")
		return
	}
	dt8, op8, n := rxmwire.SplitAtomicTag(rh.Tag)
	var ioc [rxmwire.MaxAtomicIOC]rxmwire.AtomicIOC
	total, err := rxmwire.ParseAtomicIOC(body, int(n), &ioc)
	if err != nil {
		c.protoFail(err.Error())
		return
	}
	dt, op := provider.Datatype(dt8), provider.AtomicOp(op8)
	if !atomicDatatypeOK(dt) || !atomics.KindValid(kind, op, dt) {
		c.atomicAnswer(rh, -int32(provider.EOPNOTSUPP), nil)
		return
	}
	sz := uint64(atomics.Size(dt))
	opLen := total * sz
	data := body[rxmwire.AtomicReqSize:]
	need := opLen
	if op == provider.AtomicRead {
		need = 0
	}
	if kind == provider.AtomicCompare {
		need += opLen
	}
	if uint64(len(data)) != need {
		c.protoFail("atomic operands do not match the targets")
		return
	}
	access := provider.FlagRemoteRead | provider.FlagRemoteWrite
	switch {
	case kind == provider.AtomicBase:
		access = provider.FlagRemoteWrite
	case op == provider.AtomicRead:
		access = provider.FlagRemoteRead
	}
	var dst [rxmwire.MaxAtomicIOC][]byte
	for i := 0; i < int(n); i++ {
		v := ioc[i]
		var s []byte
		err := error(provider.EACCES)
		if ep.mr != nil {
			s, err = ep.mr.Access(v.Key, v.Addr, v.Count*sz, access)
		}
		if err != nil || uint64(len(s)) != v.Count*sz {
			logCM(provider.LevelWarn, "rdm: refused atomic access", c.addr)
			c.atomicAnswer(rh, -int32(provider.EACCES), nil)
			return
		}
		dst[i] = s
	}
	var src, cmp, res []byte
	if op != provider.AtomicRead {
		src = data[:opLen]
	}
	if kind == provider.AtomicCompare {
		cmp = data[opLen:]
	}
	if kind != provider.AtomicBase {
		res = make([]byte, rxmwire.AtomicRespSize+opLen)
	}
	rdmAtomicMu.Lock()
	var off uint64
	for i := 0; i < int(n) && err == nil; i++ {
		k := uint64(len(dst[i]))
		var s []byte
		if src != nil {
			s = src[off : off+k]
		}
		switch kind {
		case provider.AtomicBase:
			err = atomics.Apply(op, dt, dst[i], s)
		case provider.AtomicFetch:
			err = atomics.ApplyFetch(op, dt, dst[i], s, res[rxmwire.AtomicRespSize+off:][:k])
		default:
			err = atomics.ApplyCompare(op, dt, dst[i], s, cmp[off:off+k], res[rxmwire.AtomicRespSize+off:][:k])
		}
		off += k
	}
	rdmAtomicMu.Unlock()
	if err != nil {
		c.atomicAnswer(rh, -int32(provider.EINVAL), nil)
		return
	}
	if ep.mr != nil {
		for i := 0; i < int(n); i++ {
			if op != provider.AtomicRead {
				ep.mr.Event(ioc[i].Key, provider.FlagRemoteWrite)
			}
			if kind != provider.AtomicBase {
				ep.mr.Event(ioc[i].Key, provider.FlagRemoteRead)
			}
		}
	}
	cn := ep.cntrs[provider.CntrRemoteWrite]
	if kind != provider.AtomicBase {
		cn = ep.cntrs[provider.CntrRemoteRead]
	}
	if cn != nil {
		cn.Inc()
	}
	c.atomicAnswer(rh, 0, res)
}

// atomicAnswer queues the response to request rh: status, and the result
// in res after its first rxmwire.AtomicRespSize bytes (res may be nil when
// there is no result).
func (c *rdmConn) atomicAnswer(rh *rxmwire.Header, status int32, res []byte) {
	if res == nil || status != 0 {
		res = make([]byte, rxmwire.AtomicRespSize)
	}
	rxmwire.PutAtomicResp(res, status, uint32(len(res)-rxmwire.AtomicRespSize))
	dt, op, _ := rxmwire.SplitAtomicTag(rh.Tag)
	h := tcpwire.Header{Op: tcpwire.OpMsg}
	h.SetPayload(uint64(rxmwire.HeaderSize + len(res)))
	c.ctrlFrame(&h, &rxmwire.Header{Type: rxmwire.TypeAtomicResp, MsgID: rh.MsgID, Op: rh.Op,
		Size: uint64(len(res)), Tag: rxmwire.AtomicTag(dt, op, 0)}, res)
}
