package shm

import (
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/provider"
)

// RMA (fi_rma(3)) and the transport of atomics (atomic.go).
//
// Initiator: an operation takes an entry of the endpoint's operation
// table (its index and a generation make the MsgID the target echoes),
// and its request is pushed into the target's queue at once, or queued
// (FIFO, pushed by Progress) when the target's queue or bounce buffers
// are full. The first command of a request carries the remote iov table
// and as much data as fits: in the slot when table and data fit there
// (inline), else in one bounce buffer of the target; the rest of a write
// follows in bounce-buffer segments. Every operation but an inject write
// without completion waits for the target's answer: writes complete when
// the target has checked and copied the data (FI_DELIVERY_COMPLETE
// semantics, so that a refused key, access or range completes in error),
// reads and atomics when the data or fetched values are back.
//
// Target: Progress (rxMu held) decodes the request, checks every remote
// iov with Resources.MR before touching memory (FI_REMOTE_WRITE for
// writes, FI_REMOTE_READ for reads, both for fetching atomics, and
// FI_REMOTE_READ alone for FI_ATOMIC_READ), copies, reports FI_RMA_EVENT
// (the endpoint's remote counters and the MR's bound counters, MRKeys
// Event), writes the remote CQ data completion of a write with data, and
// answers into the initiator's own queue: inline, or through bounce
// buffers taken from the INITIATOR's pool. Answers that find no room
// wait in a FIFO pushed by later Progress calls; while it holds
// maxResponses answers the target stops draining its queue
// (back-pressure), so nothing is dropped.
//
// Cross-memory attach (rma_cma.go): a large write or read request
// carries the initiator's pid and iovecs instead of data, and the target
// moves the data with ProcessVMReadv/ProcessVMWritev; postRMA chooses it,
// pushRMA pushes the request, rxWrite/rxRead hand it to rxWriteCMA/
// rxReadCMA, and rxAnswer completes the operation (or sends it again
// through bounce buffers after a refusal).

// RMA limits.
const (
	// RMAIOVLimit is tx_attr.rma_iov_limit: remote iovs per operation.
	RMAIOVLimit = 4
	// maxRMAOps bounds the RMA and atomic operations in flight per
	// endpoint (queued or waiting for their answer); more get EAGAIN.
	maxRMAOps = QueueSize
	// maxResponses bounds the answers a target holds back.
	maxResponses = 4 * RingSlots
	// maxDstPieces is the number of target memory pieces an operation
	// records without allocating.
	maxDstPieces = 2 * RMAIOVLimit
)

// rmaOp is an RMA or atomic operation of the initiator.
type rmaOp struct {
	id    uint64 // MsgID; 0 while free
	next  int32  // push queue link (-1: last)
	code  uint8  // opWrite, opRead, opAtomic
	p     *peer
	ctx   any
	flags provider.Flags // completion flags
	comp  bool           // write a success completion
	res   provider.CQReserver
	cntr  provider.CntrOwner

	cflags uint8 // shmring.FlagCQData
	data   uint64
	aux    uint32
	rma    [RMAIOVLimit]remoteIOV
	nrma   int
	src    [2 * IOVLimit][]byte // write data; atomic operand then compare operand
	nsrc   int
	size   uint64 // data bytes to push after the table
	off    uint64 // data bytes pushed
	first  bool   // the first command is out
	noResp bool   // inject write without completion: no answer
	fence  bool   // FI_FENCE: starts once every earlier operation completed
	live   bool   // counted in rmaState.started
	// given: the shared transmit context's credit (ep.credits) is given
	// back already (before the completion is written).
	given bool
	cma   bool // the target moves the data by CMA (rma_cma.go)

	dst  [IOVLimit][]byte // read destination, atomic results
	ndst int
	got  uint64 // answer bytes received
	want uint64 // answer bytes expected
}

// rmaRecv is a write being received from one initiator.
type rmaRecv struct {
	msgID  uint64
	total  uint64
	off    uint64
	status provider.Errno
	cq     bool
	data   uint64
	keys   [RMAIOVLimit]uint64
	nkeys  int
	dst    [][]byte
	dstArr [maxDstPieces][]byte
}

// resp is an answer to an initiator.
type resp struct {
	p       *peer
	code    uint8
	msgID   uint64
	status  provider.Errno
	src     [][]byte // the answer's bytes (target memory, or buf)
	srcArr  [maxDstPieces][]byte
	buf     []byte // owned copy of fetched values
	total   uint64
	off     uint64
	started bool
	cma     bool   // the answer to a CMA request (rma_cma.go): st, no data
	st      uint64 // its status: an errno, 0 or ackUseSegments
}

// rmaState is the endpoint's RMA state.
type rmaState struct {
	// Initiator, under mu.
	mu      sync.Mutex
	ops     []*rmaOp
	free    []int32
	gen     uint64
	qhead   int32 // push queue (-1: empty)
	qtail   int32
	pending atomic.Int32 // operations in the push queue
	started atomic.Int32 // operations started and not completed
	// cmaRefused: targets that cannot reach this process by CMA
	// (rma_cma.go).
	cmaRefused map[uint64]bool

	// Set by Enable.
	mr          provider.MRKeys
	seg         mrSegmenter
	write, read provider.CntrOwner
	rWrite      provider.CntrOwner
	rRead       provider.CntrOwner

	// Target, under the endpoint's rxMu.
	recv      map[uint64]*rmaRecv
	recvFree  []*rmaRecv
	respQ     []*resp // FIFO of answers waiting for room
	respFree  []*resp
	respN     atomic.Int32
	respPeers map[uint64]*peer
	scratch   []byte               // fetched values before they are pushed
	pieces    [maxDstPieces][]byte // target memory of the atomic being applied
	cur       resp                 // the answer being pushed without queueing
}

// mrSegmenter is implemented by MR tables that resolve ranges across the
// buffers of a vector registration (internal/mrkey).
type mrSegmenter interface {
	Segments(key, addr, length uint64, access provider.Flags, dst [][]byte) ([][]byte, error)
}

var _ provider.RMA = (*endpoint)(nil)

// enableRMA takes the RMA resources from r (Enable).
func (ep *endpoint) enableRMA(r *provider.Resources) {
	s := &ep.rma
	s.qhead, s.qtail = -1, -1
	s.mr = r.MR
	s.seg, _ = r.MR.(mrSegmenter)
	s.write, s.read = r.Cntrs[provider.CntrWrite], r.Cntrs[provider.CntrRead]
	s.rWrite, s.rRead = r.Cntrs[provider.CntrRemoteWrite], r.Cntrs[provider.CntrRemoteRead]
}

// rmaBusy reports whether RMA work waits for progress.
func (ep *endpoint) rmaBusy() bool {
	return ep.rma.pending.Load() != 0 || ep.rma.respN.Load() != 0
}

// Write writes m to remote memory (fi_write, fi_writev, fi_writemsg,
// fi_writedata, fi_inject_write, fi_inject_writedata).
func (ep *endpoint) Write(m provider.Msg) error {
	if e := ep.enter(); e != 0 {
		return e
	}
	err := ep.postRMA(&m, opWrite)
	ep.exit()
	return err
}

// Read reads remote memory into m's buffers (fi_read, fi_readv,
// fi_readmsg).
func (ep *endpoint) Read(m provider.Msg) error {
	if e := ep.enter(); e != 0 {
		return e
	}
	err := ep.postRMA(&m, opRead)
	ep.exit()
	return err
}

func (ep *endpoint) postRMA(m *provider.Msg, code uint8) error {
	p, e := ep.peerFor(m.Addr)
	if p == nil {
		return e
	}
	s := &ep.rma
	flags, cntr := provider.FlagRMA|provider.FlagWrite, s.write
	if code == opRead {
		flags, cntr = provider.FlagRMA|provider.FlagRead, s.read
	}
	comp := m.Flags&provider.FlagCompletion != 0
	inject := code == opWrite && m.Flags&provider.FlagInject != 0
	if e != 0 {
		return ep.failPostRMA(m.Context, flags, cntr, inject && !comp, e)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, res, err := ep.newOp(comp)
	if err != nil {
		return err
	}
	*o = rmaOp{id: o.id, next: -1, code: code, p: p, ctx: m.Context, flags: flags, comp: comp, res: res, cntr: cntr,
		noResp: inject && !comp, fence: m.Flags&provider.FlagFence != 0}
	if m.Flags&provider.FlagRemoteCQData != 0 {
		o.cflags, o.data = shmring.FlagCQData, m.Data
	}
	if r := m.RMAIOVs(); r != nil {
		for i, v := range r {
			o.rma[i] = remoteIOV{v.Addr, v.Len, v.Key}
		}
		o.nrma = len(r)
	} else {
		o.rma[0] = remoteIOV{m.RMAOne.Addr, m.RMAOne.Len, m.RMAOne.Key}
		o.nrma = 1
	}
	o.aux = uint32(o.nrma)
	var local [][]byte
	if m.IOV == nil {
		o.src[0] = m.Buf
		local = o.src[:1]
	} else {
		local = o.src[:copy(o.src[:IOVLimit], m.IOV)]
	}
	n := iovBytes(local)
	if code == opWrite {
		o.nsrc, o.size = len(local), n
	} else {
		o.ndst = copy(o.dst[:], local)
		o.want = n
		o.src = [2 * IOVLimit][]byte{}
	}
	o.cma = !o.noResp && ep.rmaCMAFor(p, n) && cmaRequestFits(p, o.nrma, len(local))
	return ep.startOp(o, inject)
}

// iovBytes returns the total length of iov.
func iovBytes(iov [][]byte) uint64 {
	var n uint64
	for _, b := range iov {
		n += uint64(len(b))
	}
	return n
}

// newOp takes an operation entry (s.mu held), reserving room for its
// completion first when comp; EAGAIN when either is exhausted.
func (ep *endpoint) newOp(comp bool) (*rmaOp, provider.CQReserver, error) {
	var res provider.CQReserver
	if ep.txRes != nil && comp {
		if !ep.txRes.Reserve() {
			return nil, nil, provider.EAGAIN
		}
		res = ep.txRes
	}
	s := &ep.rma
	if len(s.free) == 0 && len(s.ops) >= maxRMAOps {
		return nil, nil, unreserveAgain(res)
	}
	// Every operation in the table holds a credit of the shared transmit
	// context, given back by completeOp or freeRMA.
	if ep.credits != nil && !ep.credits.Take() {
		return nil, nil, unreserveAgain(res)
	}
	if len(s.free) == 0 {
		if s.ops == nil {
			s.ops = make([]*rmaOp, 0, 64)
			s.free = make([]int32, 0, 64)
		}
		s.ops = append(s.ops, &rmaOp{})
		s.free = append(s.free, int32(len(s.ops)-1))
	}
	i := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	s.gen++
	o := s.ops[i]
	o.id = s.gen<<16 | uint64(i+1)
	return o, res, nil
}

// freeRMA returns o to the table (s.mu held).
func (ep *endpoint) freeRMA(o *rmaOp) {
	i := int32(o.id&0xffff) - 1
	if o.live {
		ep.rma.started.Add(-1)
	}
	if ep.credits != nil && !o.given {
		ep.credits.Give()
	}
	*o = rmaOp{}
	ep.rma.free = append(ep.rma.free, i)
}

// lookupOp returns the operation with MsgID id (s.mu held), or nil.
func (ep *endpoint) lookupOp(id uint64) *rmaOp {
	i := int(id&0xffff) - 1
	if i < 0 || i >= len(ep.rma.ops) {
		return nil
	}
	if o := ep.rma.ops[i]; o.id == id {
		return o
	}
	return nil
}

// startOp pushes o's request, or queues it behind earlier ones (s.mu
// held). An inject must be out before the call returns: EAGAIN
// otherwise, and nothing was sent.
func (ep *endpoint) startOp(o *rmaOp, inject bool) error {
	s := &ep.rma
	if s.pending.Load() != 0 {
		ep.pushQueued()
	}
	if s.pending.Load() == 0 && (!o.fence || ep.quiet()) {
		if inject && !ep.fitsOne(o) {
			ep.dropOp(o)
			return provider.EAGAIN
		}
		done, sent := ep.pushRMA(o)
		if done {
			ep.pushed(o)
			return nil
		}
		if inject && !sent {
			ep.dropOp(o)
			return provider.EAGAIN
		}
	} else if inject {
		ep.dropOp(o)
		return provider.EAGAIN
	}
	if s.qtail < 0 {
		s.qhead = int32(o.id&0xffff) - 1
	} else {
		s.ops[s.qtail].next = int32(o.id&0xffff) - 1
	}
	s.qtail = int32(o.id&0xffff) - 1
	s.pending.Add(1)
	return nil
}

// quiet reports whether no operation of the endpoint is under way: the
// condition for starting an FI_FENCE operation.
func (ep *endpoint) quiet() bool {
	return ep.rma.started.Load() == 0 && ep.tx.nacks.Load() == 0 && ep.tx.pending.Load() == 0
}

// pushed finishes an operation whose request is all out: one that wants
// no answer (an inject write) is done for the initiator. o may have
// failed and been freed already.
func (ep *endpoint) pushed(o *rmaOp) {
	if o.id != 0 && o.noResp {
		if o.cntr != nil {
			o.cntr.Inc()
		}
		ep.freeRMA(o)
	}
}

// fitsOne reports whether o's request goes out in one command (inline or
// one bounce buffer), as an inject must.
func (ep *endpoint) fitsOne(o *rmaOp) bool {
	return uint64(o.nrma*rmaIOVSize)+o.size <= uint64(o.p.r.BufSize)
}

// dropOp gives back o and its completion room (a post that failed).
func (ep *endpoint) dropOp(o *rmaOp) {
	if o.res != nil {
		o.res.Unreserve()
	}
	ep.freeRMA(o)
}

// pushQueued pushes queued requests in order while there is room (s.mu
// held).
func (ep *endpoint) pushQueued() {
	s := &ep.rma
	for s.qhead >= 0 {
		o := s.ops[s.qhead]
		next := o.next
		if o.fence && !o.first && !ep.quiet() {
			return // FI_FENCE: earlier operations have not completed
		}
		if done, _ := ep.pushRMA(o); !done {
			return
		}
		s.qhead = next
		if s.qhead < 0 {
			s.qtail = -1
		}
		s.pending.Add(-1)
		ep.pushed(o)
	}
}

// progressRMA pushes queued requests (Progress).
func (ep *endpoint) progressRMA() {
	s := &ep.rma
	if s.pending.Load() == 0 || !s.mu.TryLock() {
		return
	}
	ep.pushQueued()
	s.mu.Unlock()
}

// pushRMA pushes what it can of o's request: done when all of it is out,
// sent when some of it is.
func (ep *endpoint) pushRMA(o *rmaOp) (done, sent bool) {
	p := o.p
	if p.r.Closing() {
		ep.completeOp(o, provider.ECONNRESET)
		return true, true
	}
	if o.cma {
		return ep.pushRMACMA(o)
	}
	hdrTotal := uint64(o.nrma * rmaIOVSize)
	for !o.first || o.off < o.size {
		hdr := 0
		if !o.first {
			hdr = int(hdrTotal)
		}
		rest := o.size - o.off
		inline := uint64(hdr)+rest <= uint64(p.inline)
		var idx uint32
		var dst []byte
		if !inline {
			var ok bool
			if idx, ok = p.r.GetBuf(); !ok {
				return false, sent
			}
			dst = p.r.Buf(idx)
		}
		pos, cmd, ok := p.r.Reserve()
		if !ok {
			if !inline {
				p.r.PutBuf(idx)
			}
			return false, sent
		}
		c := shmring.Cmd{Op: o.code, Flags: o.cflags, Src: ep.id, Data: o.data, MsgID: o.id,
			Size: hdrTotal + o.size, Buf: idx, Aux: o.aux, Tag: o.off}
		if o.noResp {
			c.MsgID = 0
		}
		if inline {
			c.Flags |= shmring.FlagInline
			dst = cmd[shmring.CmdPayload:]
		}
		if !o.first {
			c.Flags |= shmring.FlagFirst
			putRemote(dst, o.rma[:o.nrma])
			o.live = true
			ep.rma.started.Add(1)
		}
		n := gatherAt(dst[hdr:], o.src[:o.nsrc], o.off)
		c.Len = uint32(hdr + n)
		o.off += uint64(n)
		o.first = true
		if o.off == o.size {
			c.Flags |= shmring.FlagLast
		}
		shmring.PutHeader(cmd, &c)
		p.r.Publish(pos)
		wake(p)
		sent = true
	}
	return true, sent
}

// completeOp completes o with status e (0: success) and frees it (s.mu
// held).
func (ep *endpoint) completeOp(o *rmaOp, e provider.Errno) {
	// The credit first: whoever reads the completion may post at once.
	if ep.credits != nil && !o.given {
		o.given = true
		ep.credits.Give()
	}
	if e == 0 {
		if o.cntr != nil {
			o.cntr.Inc()
		}
		switch {
		case o.res != nil:
			_ = o.res.WriteReserved(o.ctx, o.flags, 0, nil, 0, 0, provider.AddrNotAvail)
		case o.comp && ep.txCQ != nil:
			_ = ep.txCQ.Write(o.ctx, o.flags, 0, nil, 0, 0, provider.AddrNotAvail)
		}
	} else {
		if o.cntr != nil {
			o.cntr.IncErr()
		}
		ee := provider.CQErrEntry{OpContext: o.ctx, Flags: o.flags, Err: e, ProvErrno: int(e),
			Src: provider.AddrNotAvail}
		switch {
		case o.res != nil:
			_ = o.res.WriteErrReserved(&ee)
		case ep.txCQ != nil && !o.noResp:
			_ = ep.txCQ.WriteErr(&ee)
		}
	}
	ep.freeRMA(o)
}

// failPostRMA reports an operation that cannot reach its peer (another
// auth key): the error itself for an inject without completion, else an
// error completion.
func (ep *endpoint) failPostRMA(ctx any, flags provider.Flags, cntr provider.CntrOwner, inject bool,
	e provider.Errno) error {
	if inject {
		return e.AsError()
	}
	if cntr != nil {
		cntr.IncErr()
	}
	if ep.txCQ != nil {
		ee := provider.CQErrEntry{OpContext: ctx, Flags: flags, Err: e, ProvErrno: int(e), Src: provider.AddrNotAvail}
		_ = ep.txCQ.WriteErr(&ee)
	}
	return nil
}

// ---- target and answers (ep.rxMu held) ----

// rxRMA handles an RMA or atomic command; false leaves it queued
// (back-pressure).
func (ep *endpoint) rxRMA(c *shmring.Cmd) bool {
	switch c.Op {
	case opWrite:
		return ep.rxWrite(c)
	case opRead:
		return ep.rxRead(c)
	case opAtomic:
		return ep.rxAtomic(c)
	case opWriteAck, opReadResp, opAtomicResp:
		ep.rxAnswer(c)
		return true
	}
	ep.dropCmd(shmring.ErrBadOp)
	ep.doneBuf(c)
	return true
}

// payload returns the data of c: in the slot, or in a bounce buffer of
// the endpoint's region (Decode checked the index and length).
func (ep *endpoint) payload(c *shmring.Cmd) []byte {
	if c.Flags&shmring.FlagInline != 0 {
		return c.Payload
	}
	if c.Len == 0 {
		return nil
	}
	return ep.own.Buf(c.Buf)[:c.Len]
}

// doneBuf returns c's bounce buffer to the endpoint's pool.
func (ep *endpoint) doneBuf(c *shmring.Cmd) {
	if c.Flags&shmring.FlagInline == 0 && c.Len > 0 {
		ep.own.PutBuf(c.Buf)
	}
}

// status decodes the status of an answer: an errno, EIO for nonsense.
func status(d uint64) provider.Errno {
	if d >= 1<<16 {
		return provider.EIO
	}
	return provider.Errno(d)
}

// respPeer returns the mapped region of initiator id for answers, or nil
// when it cannot be written (gone, or another auth key: its requests are
// not served).
func (ep *endpoint) respPeer(id uint64) *peer {
	s := &ep.rma
	if p, ok := s.respPeers[id]; ok {
		return p
	}
	p, _ := ep.openPeer(id)
	if p != nil && p.err != 0 {
		p.file.Close()
		p = nil
	}
	if s.respPeers == nil {
		s.respPeers = make(map[uint64]*peer)
	}
	s.respPeers[id] = p
	return p
}

// respFull reports whether the target holds as many answers as it may.
func (ep *endpoint) respFull() bool { return int(ep.rma.respN.Load()) >= maxResponses }

// checkRemote resolves the remote iovs tbl (lengths scaled by unit) with
// access, appending the target memory pieces to dst; the first refusal's
// error (nothing is touched then).
func (ep *endpoint) checkRemote(tbl []remoteIOV, unit uint64, access provider.Flags, dst [][]byte) ([][]byte,
	provider.Errno) {
	s := &ep.rma
	if s.mr == nil {
		return dst, provider.EKEYREJECTED
	}
	for _, v := range tbl {
		n := v.Len * unit
		if unit > 1 && n/unit != v.Len {
			return dst, provider.EINVAL
		}
		var err error
		if s.seg != nil {
			dst, err = s.seg.Segments(v.Key, v.Addr, n, access, dst)
		} else {
			var b []byte
			if b, err = s.mr.Access(v.Key, v.Addr, n, access); err == nil {
				dst = append(dst, b)
			}
		}
		if err != nil {
			if e, ok := err.(provider.Errno); ok {
				return dst, e
			}
			return dst, provider.EINVAL
		}
	}
	return dst, 0
}

// events reports a served remote access: the MR counters of the keys and
// the endpoint's remote counter.
func (ep *endpoint) events(keys []remoteIOV, access provider.Flags, cntr provider.CntrOwner) {
	if ep.rma.mr != nil {
		for _, v := range keys {
			ep.rma.mr.Event(v.Key, access)
		}
	}
	if cntr != nil {
		cntr.Inc()
	}
}

// reserveRx claims room in the receive CQ for a remote CQ data
// completion; false when there is none (the command waits).
func (ep *endpoint) reserveRx(c *shmring.Cmd) (reserved, ok bool) {
	if c.Flags&shmring.FlagCQData == 0 || ep.rxFull == nil {
		return false, true
	}
	if !ep.rxFull.Reserve() {
		return false, false
	}
	return true, true
}

// remoteData writes the target completion of an operation with remote
// CQ data.
func (ep *endpoint) remoteData(c *shmring.Cmd, reserved bool, flags provider.Flags, ok bool) {
	if !ok {
		if reserved {
			ep.rxFull.Unreserve()
		}
		return
	}
	src := provider.AddrNotAvail
	if ep.reportSrc {
		src = ep.srcOf(c.Src)
	}
	flags |= provider.FlagRemoteCQData
	if ep.rxCntr != nil {
		ep.rxCntr.Inc()
	}
	switch {
	case reserved:
		_ = ep.rxFull.WriteReserved(nil, flags, 0, nil, c.Data, 0, src)
	case ep.rxCQ != nil:
		_ = ep.rxCQ.Write(nil, flags, 0, nil, c.Data, 0, src)
	}
}

func (ep *endpoint) rxWrite(c *shmring.Cmd) bool {
	if c.Flags&shmring.FlagCMA != 0 {
		return ep.rxWriteCMA(c)
	}
	s := &ep.rma
	last := c.Flags&shmring.FlagLast != 0
	if last && c.MsgID != 0 && ep.respFull() {
		return false
	}
	var reserved bool
	if last {
		var ok bool
		if reserved, ok = ep.reserveRx(c); !ok {
			return false
		}
	}
	st := s.recv[c.Src]
	data := ep.payload(c)
	if c.Flags&shmring.FlagFirst != 0 {
		if st != nil {
			// The initiator started a new write before finishing the
			// last one: that one can never complete.
			ep.dropCmd(shmring.ErrBadLength)
			ep.endWrite(c, st, provider.EIO)
		}
		st = ep.newRecv()
		st.msgID, st.cq, st.data = c.MsgID, c.Flags&shmring.FlagCQData != 0, c.Data
		var tbl [RMAIOVLimit]remoteIOV
		n := int(c.Aux & 0xff)
		rest, ok := parseRemote(data, n, &tbl)
		switch {
		case !ok || c.Size < uint64(n*rmaIOVSize):
			st.status = provider.EIO
		default:
			st.total = c.Size - uint64(n*rmaIOVSize)
			var sum uint64
			for _, v := range tbl[:n] {
				sum += v.Len
			}
			if sum != st.total {
				st.status = provider.EINVAL
				break
			}
			st.dst, st.status = ep.checkRemote(tbl[:n], 1, provider.FlagRemoteWrite, st.dstArr[:0])
			st.nkeys = n
			for i, v := range tbl[:n] {
				st.keys[i] = v.Key
			}
		}
		data = rest
		if s.recv == nil {
			s.recv = make(map[uint64]*rmaRecv)
		}
		s.recv[c.Src] = st
	} else if st == nil || st.msgID != c.MsgID {
		ep.dropCmd(shmring.ErrBadLength)
		ep.doneBuf(c)
		if reserved {
			ep.rxFull.Unreserve()
		}
		return true
	} else if c.Tag != st.off {
		st.status = provider.EIO
	}
	if st.status == 0 {
		if uint64(len(data)) > st.total-st.off {
			st.status = provider.EIO
		} else {
			scatterAt(st.dst, st.off, data)
		}
	}
	st.off += uint64(len(data))
	ep.doneBuf(c)
	if !last {
		return true
	}
	e := st.status
	if e == 0 && st.off != st.total {
		e = provider.EIO
	}
	if e == 0 {
		for _, k := range st.keys[:st.nkeys] {
			if s.mr != nil {
				s.mr.Event(k, provider.FlagRemoteWrite)
			}
		}
		if s.rWrite != nil {
			s.rWrite.Inc()
		}
	}
	ep.remoteData(c, reserved, provider.FlagRMA|provider.FlagRemoteWrite, e == 0 && st.cq)
	ep.endWrite(c, st, e)
	return true
}

// endWrite answers write st of c's sender with e and forgets it.
func (ep *endpoint) endWrite(c *shmring.Cmd, st *rmaRecv, e provider.Errno) {
	if st.msgID != 0 {
		ep.answer(c.Src, opWriteAck, st.msgID, e, nil)
	}
	delete(ep.rma.recv, c.Src)
	*st = rmaRecv{}
	ep.rma.recvFree = append(ep.rma.recvFree, st)
}

func (ep *endpoint) newRecv() *rmaRecv {
	s := &ep.rma
	if k := len(s.recvFree); k > 0 {
		st := s.recvFree[k-1]
		s.recvFree = s.recvFree[:k-1]
		return st
	}
	return &rmaRecv{}
}

func (ep *endpoint) rxRead(c *shmring.Cmd) bool {
	if c.Flags&shmring.FlagCMA != 0 {
		return ep.rxReadCMA(c)
	}
	if ep.respFull() {
		return false
	}
	var tbl [RMAIOVLimit]remoteIOV
	n := int(c.Aux & 0xff)
	_, ok := parseRemote(ep.payload(c), n, &tbl)
	ep.doneBuf(c)
	if !ok {
		ep.dropCmd(shmring.ErrBadLength)
		ep.answer(c.Src, opReadResp, c.MsgID, provider.EIO, nil)
		return true
	}
	r := &ep.rma.cur
	*r = resp{}
	dst, e := ep.checkRemote(tbl[:n], 1, provider.FlagRemoteRead, r.srcArr[:0])
	if e == 0 {
		ep.events(tbl[:n], provider.FlagRemoteRead, ep.rma.rRead)
	}
	ep.answer(c.Src, opReadResp, c.MsgID, e, dst)
	return true
}

// answer pushes an answer to initiator id, or queues it behind earlier
// ones. data are the answer's bytes (target memory, or the scratch
// buffer, which is copied when the answer must wait).
func (ep *endpoint) answer(id uint64, code uint8, msgID uint64, e provider.Errno, data [][]byte) {
	p := ep.respPeer(id)
	if p == nil || msgID == 0 {
		return
	}
	s := &ep.rma
	r := &s.cur
	if e != 0 {
		data = nil
	}
	srcArr := r.srcArr // data may alias it
	*r = resp{p: p, code: code, msgID: msgID, status: e, total: iovBytes(data)}
	r.srcArr = srcArr
	r.src = data
	if len(s.respQ) == 0 && ep.pushResp(r) {
		return
	}
	// Wait for room: keep a copy of what is not target memory.
	var q *resp
	if k := len(s.respFree); k > 0 {
		q = s.respFree[k-1]
		s.respFree = s.respFree[:k-1]
	} else {
		q = &resp{}
	}
	buf := q.buf
	*q = *r
	q.src = nil
	if code == opAtomicResp {
		buf = append(buf[:0], s.scratch[:r.total]...)
		q.buf = buf
		q.src = append(q.srcArr[:0], buf)
	} else {
		q.src = append(q.srcArr[:0], data...)
	}
	s.respQ = append(s.respQ, q)
	s.respN.Add(1)
}

// flushAnswers pushes waiting answers in order while there is room.
func (ep *endpoint) flushAnswers() {
	s := &ep.rma
	if s.respN.Load() == 0 {
		return
	}
	for len(s.respQ) > 0 {
		q := s.respQ[0]
		if !ep.pushResp(q) {
			return
		}
		copy(s.respQ, s.respQ[1:])
		s.respQ[len(s.respQ)-1] = nil
		s.respQ = s.respQ[:len(s.respQ)-1]
		s.respN.Add(-1)
		buf := q.buf
		*q = resp{buf: buf}
		s.respFree = append(s.respFree, q)
	}
}

// pushResp pushes what it can of answer r; true when all of it is out
// (or its initiator is gone).
func (ep *endpoint) pushResp(r *resp) bool {
	p := r.p
	if p.r.Closing() {
		// The initiator is gone (a dead one, whose region is not marked,
		// is for the peer-death checks to find: until then its answers
		// wait, and past maxResponses so does the queue).
		return true
	}
	for !r.started || r.off < r.total {
		rest := r.total - r.off
		inline := rest <= uint64(p.inline)
		var idx uint32
		var dst []byte
		if !inline {
			var ok bool
			if idx, ok = p.r.GetBuf(); !ok {
				return false
			}
			dst = p.r.Buf(idx)
		}
		pos, cmd, ok := p.r.Reserve()
		if !ok {
			if !inline {
				p.r.PutBuf(idx)
			}
			return false
		}
		c := shmring.Cmd{Op: r.code, Src: ep.id, MsgID: r.msgID, Data: uint64(r.status), Size: r.total, Tag: r.off,
			Buf: idx}
		if r.cma {
			c.Flags, c.Data = shmring.FlagCMA, r.st
		}
		if inline {
			c.Flags |= shmring.FlagInline
			dst = cmd[shmring.CmdPayload:]
		}
		n := gatherAt(dst, r.src, r.off)
		c.Len = uint32(n)
		r.off += uint64(n)
		r.started = true
		if r.off == r.total {
			c.Flags |= shmring.FlagLast
		}
		shmring.PutHeader(cmd, &c)
		p.r.Publish(pos)
		wake(p)
	}
	return true
}

// rxAnswer completes (or advances) the operation an answer is for.
func (ep *endpoint) rxAnswer(c *shmring.Cmd) {
	s := &ep.rma
	data := ep.payload(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer ep.doneBuf(c)
	o := ep.lookupOp(c.MsgID)
	if o == nil || o.noResp || o.code != requestOf(c.Op) {
		ep.dropCmd(shmring.ErrBadOp)
		return
	}
	e := status(c.Data)
	if c.Flags&shmring.FlagCMA != 0 || o.cma {
		// The answer to a CMA request (rma_cma.go): a status, no data.
		if c.Flags&shmring.FlagCMA == 0 || !o.cma {
			ep.dropCmd(shmring.ErrBadOp)
			return
		}
		if c.Data == ackUseSegments {
			ep.cmaRefusedOp(o)
			return
		}
		if e == 0 && o.code == opRead {
			o.got = o.want // the target wrote it all
		}
		ep.completeOp(o, e)
		return
	}
	if c.Op != opWriteAck && e == 0 {
		if c.Tag != o.got || uint64(len(data)) > o.want-o.got {
			e = provider.EIO
		} else {
			scatterAt(o.dst[:o.ndst], o.got, data)
			o.got += uint64(len(data))
		}
	}
	if c.Flags&shmring.FlagLast == 0 && e == 0 {
		return
	}
	if e == 0 && c.Op != opWriteAck && o.got != o.want {
		e = provider.EIO
	}
	ep.completeOp(o, e)
}

// requestOf returns the request an answer code answers.
func requestOf(code uint8) uint8 {
	switch code {
	case opWriteAck:
		return opWrite
	case opReadResp:
		return opRead
	}
	return opAtomic
}

// failRMAPeer completes every operation towards p with e (the peer died
// or its region is unusable): the hook for the peer-death checks. The
// caller holds no RMA lock.
func (ep *endpoint) failRMAPeer(p *peer, e provider.Errno) {
	s := &ep.rma
	s.mu.Lock()
	defer s.mu.Unlock()
	// Unlink the queued ones first, keeping the others' order.
	prev := int32(-1)
	for i := s.qhead; i >= 0; {
		o := s.ops[i]
		next := o.next
		if o.p == p {
			if prev < 0 {
				s.qhead = next
			} else {
				s.ops[prev].next = next
			}
			if s.qtail == i {
				s.qtail = prev
			}
			s.pending.Add(-1)
		} else {
			prev = i
		}
		i = next
	}
	for _, o := range s.ops {
		if o.id != 0 && o.p == p {
			ep.completeOp(o, e)
		}
	}
}

// closeRMA ends the RMA state (Close): operations in flight complete with
// FI_ECANCELED, answers not yet pushed are dropped, the initiators'
// regions are unmapped.
func (ep *endpoint) closeRMA() {
	s := &ep.rma
	ep.rxMu.Lock()
	s.respQ, s.recv = nil, nil
	s.respN.Store(0)
	for _, p := range s.respPeers {
		if p != nil {
			p.file.Close()
		}
	}
	s.respPeers = nil
	ep.rxMu.Unlock()
	s.mu.Lock()
	for _, o := range s.ops {
		if o.id != 0 {
			if o.noResp {
				ep.freeRMA(o)
				continue
			}
			ep.completeOp(o, provider.ECANCELED)
		}
	}
	s.qhead, s.qtail = -1, -1
	s.pending.Store(0)
	s.mu.Unlock()
}
