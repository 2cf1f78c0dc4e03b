package sim

import (
	"github.com/gofabric/fabric/provider"
)

// RMA (fi_rma(3)), FI_EP_RDM only. A write carries a copy of its data to
// the target; a read carries only its request. At the target the
// arrival checks every remote iov against the domain's memory
// registrations (key, access, range: provider.MRKeys) before touching
// memory, copies, reports FI_RMA_EVENT (the endpoint's remote counters,
// the counters bound to the regions), writes the remote CQ data
// completion of a write with data, and sends an answer back over the
// link (the data of a read). The operation completes when the answer
// arrives: so a refused key, access or range completes it in error, with
// the target's memory untouched, and a write's completion means the data
// is in the target's memory (FI_DELIVERY_COMPLETE).

// RMAIOVLimit is tx_attr.rma_iov_limit: remote iovs per operation.
const RMAIOVLimit = 4

var _ provider.RMA = (*endpoint)(nil)

// Write posts an RMA write (fi_write, fi_writev, fi_writemsg,
// fi_writedata, fi_inject_write, fi_inject_writedata).
func (ep *endpoint) Write(m provider.Msg) error { return ep.postRMA(&m, false) }

// Read posts an RMA read (fi_read, fi_readv, fi_readmsg). The local
// buffers are written when the answer arrives.
func (ep *endpoint) Read(m provider.Msg) error { return ep.postRMA(&m, true) }

// dest returns the endpoint id of the fi_addr a.
func (ep *endpoint) dest(a provider.Addr) (uint64, error) {
	b := ep.av.Lookup(a)
	if b == nil {
		return 0, provider.EINVAL
	}
	id, ok := parseName(b)
	if !ok || id == 0 {
		return 0, provider.EINVAL
	}
	return id, nil
}

// startTarget is the first step of an RMA or atomic post: the endpoint
// enabled and reliable (ENOSYS on FI_EP_DGRAM), the target's id, and
// room in the transmit CQ taken when a completion is asked for (flags).
func (ep *endpoint) startTarget(addr provider.Addr, flags provider.Flags) (dst uint64, res provider.CQReserver, comp bool, err error) {
	if err = ep.enter(); err != nil {
		return
	}
	if !ep.reliable {
		return 0, nil, false, provider.ENOSYS
	}
	if dst, err = ep.dest(addr); err != nil {
		return
	}
	comp = flags&provider.FlagCompletion != 0
	res, err = ep.admit(comp)
	return
}

func (ep *endpoint) postRMA(m *provider.Msg, read bool) error {
	dst, res, comp, err := ep.startTarget(m.Addr, m.Flags)
	if err != nil {
		return err
	}
	rma := m.RMA
	if rma == nil {
		rma = []provider.RMAIOV{m.RMAOne}
	} else {
		rma = append([]provider.RMAIOV(nil), rma...)
	}
	size := m.Len()
	var buf []byte
	var local [][]byte
	flags := provider.FlagRMA | provider.FlagWrite
	cntr := ep.wCntr
	if read {
		flags, cntr = provider.FlagRMA|provider.FlagRead, ep.rCntr
		if m.IOV == nil {
			local = [][]byte{m.Buf}
		} else {
			local = append([][]byte(nil), m.IOV...)
		}
	} else {
		buf = ep.n.getBuf(size)
		gather(buf, m)
	}
	n := ep.n
	n.mu.Lock()
	defer n.mu.Unlock()
	op, err := ep.startOp(buf, res, opStart{ctx: m.Context, flags: flags, comp: comp,
		inject: m.Flags&provider.FlagInject != 0, cntr: cntr})
	if err != nil {
		return err
	}
	op.local = local
	if ep.x != nil && n.eps[dst] == nil {
		ep.xrequest(dst, op, rma, buf, size, read, m.Flags, m.Data, nil)
		return nil
	}
	reqSize := size
	if read {
		reqSize = 0
	}
	_, arrive, _ := n.transmit(ep, dst, reqSize, true)
	ev := n.newEvent()
	ev.kind, ev.src, ev.dst, ev.tx = evRMA, ep, dst, op
	ev.read, ev.rma, ev.buf, ev.size = read, rma, buf, size
	if m.Flags&provider.FlagRemoteCQData != 0 {
		ev.data, ev.hasCQD = m.Data, true
	}
	n.schedule(ev, arrive)
	return nil
}

// gather copies m's local buffers into buf.
func gather(buf []byte, m *provider.Msg) {
	if m.IOV == nil {
		copy(buf, m.Buf)
		return
	}
	off := 0
	for _, b := range m.IOV {
		off += copy(buf[off:], b)
	}
}

// serveRMA performs the RMA request e at its target ep and sends the
// answer back; n.mu is held.
func (ep *endpoint) serveRMA(e *event) {
	n := ep.n
	if e.atomic != nil {
		status, answer := ep.serveAtomic(e)
		ep.answer(e, status, answer, e.atomic.kind != provider.AtomicBase)
		return
	}
	access := provider.FlagRemoteWrite
	if e.read {
		access = provider.FlagRemoteRead
	}
	var pieces [RMAIOVLimit][]byte
	status := provider.Errno(0)
	if ep.mr == nil || len(e.rma) > RMAIOVLimit {
		status = provider.EKEYREJECTED
	}
	for i, v := range e.rma {
		if status != 0 {
			break
		}
		b, err := ep.mr.Access(v.Key, v.Addr, v.Len, access)
		if err != nil {
			status = provider.EINVAL
			if en, ok := err.(provider.Errno); ok {
				status = en
			}
			break
		}
		pieces[i] = b
	}
	var answer []byte
	if status == 0 {
		if e.read {
			answer = n.getBuf(e.size)
			off := 0
			for _, p := range pieces[:len(e.rma)] {
				off += copy(answer[off:], p)
			}
		} else {
			off := 0
			for _, p := range pieces[:len(e.rma)] {
				off += copy(p, e.buf[off:])
			}
		}
		for _, v := range e.rma {
			ep.mr.Event(v.Key, access)
		}
		cntr := ep.rwCntr
		if e.read {
			cntr = ep.rrCntr
		}
		if cntr != nil {
			cntr.Inc()
		}
		if e.hasCQD && !e.read {
			ep.remoteData(e, provider.FlagRMA|provider.FlagRemoteWrite)
		}
	}
	ep.answer(e, status, answer, e.read)
}

// answer ends the request e at its target ep: the answer, with status
// and data (fetched values, a read's data) to be copied into the
// initiator's buffers when fetch is set, travels back over the link;
// n.mu is held.
func (ep *endpoint) answer(e *event, status provider.Errno, data []byte, fetch bool) {
	n := ep.n
	n.putBuf(e.buf)
	if e.src.remote {
		ep.xanswer(e, status, data, fetch)
		n.freeEvent(e)
		return
	}
	_, arrive, _ := n.transmit(ep, e.src.id, len(data), true)
	a := n.newEvent()
	a.kind, a.src, a.dst, a.tx = evAnswer, e.src, e.src.id, e.tx
	a.read, a.buf, a.status = fetch, data, status
	n.freeEvent(e)
	n.schedule(a, arrive)
}

// remoteData writes the target's completion of a write with remote CQ
// data (FI_REMOTE_CQ_DATA); n.mu is held.
func (ep *endpoint) remoteData(e *event, flags provider.Flags) {
	src := provider.AddrNotAvail
	if ep.reportSrc {
		src = ep.srcOf(e.src.name)
	}
	if ep.rxCntr != nil {
		ep.rxCntr.Inc()
	}
	if ep.rxCQ != nil {
		_ = ep.rxCQ.Write(nil, flags|provider.FlagRemoteCQData, 0, nil, e.data, 0, src)
	}
}

// answered completes the operation of the answer e at its initiator;
// n.mu is held.
func (n *Network) answered(e *event) {
	op := e.tx
	if e.status == 0 && e.read && op != nil {
		data := e.buf
		for _, b := range op.local {
			c := copy(b, data)
			data = data[c:]
		}
	}
	if op != nil {
		op.ep.txComplete(op, e.status)
	}
	n.putBuf(e.buf)
	n.freeEvent(e)
}
