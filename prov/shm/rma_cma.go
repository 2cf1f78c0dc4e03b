package shm

import (
	"encoding/binary"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Cross-memory attach for RMA (the hook rma.go describes).
//
// An RMA write or read of FI_SHM_RMA_CMA_MIN bytes or more (default
// RMACMAMin) to a target that has not refused CMA goes as one request
// (FlagCMA, inline): the remote iov table, then the initiator's pid, the
// address of its id word and its local iovs (as a CMA message request,
// cma.go). The target checks the keys and access as for any request, then
// checks that it can read the initiator (the id word reads back as the
// initiator's id), and moves the data itself with one system call:
// process_vm_readv from the initiator's buffers into the registered
// memory (write), process_vm_writev from the registered memory into the
// initiator's buffers (read). Its answer carries no data (FlagCMA): the
// initiator completes on it. A target that cannot read the initiator
// answers ackUseSegments; the initiator remembers the target as refusing
// (logged once at info) and sends the operation again through bounce
// buffers, ahead of the operations queued after it, as it sends its later
// ones. A transfer that fails (a range not mapped in the initiator:
// FI_EFAULT; the initiator died: FI_ECONNRESET) completes the operation in
// error; the registered memory of a failed read is untouched, that of a
// failed write may hold part of the data (as with any failed write).

// envRMACMAMin overrides RMACMAMin (ours, not in C's parameter list).
const envRMACMAMin = "FI_SHM_RMA_CMA_MIN"

// rmaCMAMin is FI_SHM_RMA_CMA_MIN, read once (RMACMAMin if unset or
// invalid; at least InjectSize+1).
var rmaCMAMin = sync.OnceValue(func() uint64 {
	if v, err := strconv.ParseUint(strings.TrimSpace(os.Getenv(envRMACMAMin)), 0, 63); err == nil {
		return max(v, InjectSize+1)
	}
	return RMACMAMin
})

// rmaCMAFor reports whether an RMA transfer of n bytes to p goes by CMA
// (ep.rma.mu held).
func (ep *endpoint) rmaCMAFor(p *peer, n uint64) bool {
	return n >= rmaCMAMin() && cmaProbe() && !ep.rma.cmaRefused[p.id]
}

// cmaSection appends the CMA part of a request (pid, iov count, id word
// address, then the local iovs) to dst at off and returns the new end.
func (ep *endpoint) cmaSection(dst []byte, off int, local [][]byte) int {
	le := binary.LittleEndian
	le.PutUint32(dst[off:], uint32(selfPid))
	le.PutUint32(dst[off+4:], uint32(len(local)))
	le.PutUint64(dst[off+8:], sys.IOVOf(ep.cma.idWord).Base)
	off += rtsHeader
	for _, b := range local {
		r := sys.IOVOf(b)
		le.PutUint64(dst[off:], r.Base)
		le.PutUint64(dst[off+8:], r.Len)
		off += 16
	}
	return off
}

// pushRMACMA pushes o's CMA request (pushRMA): one inline command.
func (ep *endpoint) pushRMACMA(o *rmaOp) (done, sent bool) {
	p := o.p
	pos, cmd, ok := p.r.Reserve()
	if !ok {
		return false, false
	}
	pl := cmd[shmring.CmdPayload:]
	off := putRemote(pl, o.rma[:o.nrma])
	local := o.src[:o.nsrc]
	size := uint64(off) + o.size
	if o.code == opRead {
		local = o.dst[:o.ndst]
	}
	off = ep.cmaSection(pl, off, local)
	if o.code == opRead {
		size = uint64(off) // a read request's size is its payload
	}
	c := shmring.Cmd{Op: o.code, Flags: o.cflags | shmring.FlagInline | shmring.FlagFirst | shmring.FlagLast |
		shmring.FlagCMA, Src: ep.id, Data: o.data, MsgID: o.id, Size: size, Aux: o.aux, Len: uint32(off)}
	shmring.PutHeader(cmd, &c)
	o.first, o.off = true, o.size
	o.live = true
	ep.rma.started.Add(1)
	p.r.Publish(pos)
	wake(p)
	return true, true
}

// cmaRequestFits reports whether a CMA request with nrma remote and
// nlocal local iovs fits in a command slot of p.
func cmaRequestFits(p *peer, nrma, nlocal int) bool {
	return nrma*rmaIOVSize+rtsHeader+16*nlocal <= p.inline
}

// parseCMASection decodes the CMA part of a request's payload: the
// initiator's pid, its id word address and iovs adding up to total. The
// iovs are copied into ep.cma.riov (ep.rxMu held).
func (ep *endpoint) parseCMASection(pl []byte, total uint64) (pid int, riov []sys.RemoteIOV, idAddr uint64, ok bool) {
	if len(pl) < rtsHeader {
		return 0, nil, 0, false
	}
	le := binary.LittleEndian
	pid = int(le.Uint32(pl[0:]))
	n := int(le.Uint32(pl[4:]))
	idAddr = le.Uint64(pl[8:])
	if pid <= 0 || n < 1 || n > IOVLimit || len(pl) != rtsHeader+16*n {
		return 0, nil, 0, false
	}
	var sum uint64
	for i := 0; i < n; i++ {
		r := sys.RemoteIOV{Base: le.Uint64(pl[rtsHeader+16*i:]), Len: le.Uint64(pl[rtsHeader+16*i+8:])}
		if r.Len > total-sum {
			return 0, nil, 0, false
		}
		sum += r.Len
		ep.cma.riov[i] = r
	}
	if sum != total {
		return 0, nil, 0, false
	}
	return pid, ep.cma.riov[:n], idAddr, true
}

// cmaMove moves the data of a CMA RMA request between the registered
// memory local and the initiator's ranges riov (equal totals): a read
// from the initiator (write request) or a write into it (read request).
func cmaMove(toInitiator bool, pid int, local [][]byte, riov []sys.RemoteIOV) provider.Errno {
	want := iovBytes(local)
	if want == 0 {
		return 0
	}
	var n int
	var err error
	if toInitiator {
		n, err = sys.ProcessVMWritev(pid, local, riov)
	} else {
		n, err = sys.ProcessVMReadv(pid, local, riov)
	}
	if err != nil {
		if e, ok := err.(provider.Errno); ok && e != 0 {
			return e
		}
		return provider.EIO
	}
	if uint64(n) != want {
		return provider.EFAULT // a range not (wholly) mapped
	}
	return 0
}

// rxWriteCMA serves a CMA write request (rxWrite, ep.rxMu held); false
// leaves it queued (back-pressure).
func (ep *endpoint) rxWriteCMA(c *shmring.Cmd) bool {
	const single = shmring.FlagInline | shmring.FlagFirst | shmring.FlagLast
	if c.MsgID != 0 && ep.respFull() {
		return false
	}
	reserved, ok := ep.reserveRx(c)
	if !ok {
		return false
	}
	s := &ep.rma
	if st := s.recv[c.Src]; st != nil {
		// A segmented write of this initiator left unfinished: it can
		// never complete.
		ep.dropCmd(shmring.ErrBadLength)
		ep.endWrite(c, st, provider.EIO)
	}
	var tbl [RMAIOVLimit]remoteIOV
	n := int(c.Aux & 0xff)
	rest, ok := parseRemote(c.Payload, n, &tbl)
	e := provider.Errno(0)
	var pid int
	var riov []sys.RemoteIOV
	var idAddr uint64
	switch {
	case c.Flags&single != single || !ok || c.Size < uint64(n*rmaIOVSize):
		e = provider.EIO
	default:
		total := c.Size - uint64(n*rmaIOVSize)
		if pid, riov, idAddr, ok = ep.parseCMASection(rest, total); !ok {
			e = provider.EIO
			break
		}
		var sum uint64
		for _, v := range tbl[:n] {
			if v.Len > total-sum {
				e = provider.EINVAL
				break
			}
			sum += v.Len
		}
		if sum != total {
			e = provider.EINVAL
		}
	}
	if e != 0 {
		ep.dropCmd(shmring.ErrBadLength)
	}
	var dst [][]byte
	if e == 0 {
		dst, e = ep.checkRemote(tbl[:n], 1, provider.FlagRemoteWrite, s.pieces[:0])
	}
	if e == 0 && !ep.canPull(c.Src, pid, idAddr) {
		ep.remoteData(c, reserved, 0, false)
		ep.answerCMA(c.Src, opWriteAck, c.MsgID, ackUseSegments)
		return true
	}
	if e == 0 {
		e = cmaMove(false, pid, dst, riov)
		ep.cma.rmaMoves++
	}
	if e == 0 {
		ep.events(tbl[:n], provider.FlagRemoteWrite, s.rWrite)
	}
	ep.remoteData(c, reserved, provider.FlagRMA|provider.FlagRemoteWrite, e == 0 && c.Flags&shmring.FlagCQData != 0)
	ep.answerCMA(c.Src, opWriteAck, c.MsgID, uint64(e))
	return true
}

// rxReadCMA serves a CMA read request (rxRead, ep.rxMu held).
func (ep *endpoint) rxReadCMA(c *shmring.Cmd) bool {
	const single = shmring.FlagInline | shmring.FlagFirst | shmring.FlagLast
	if ep.respFull() {
		return false
	}
	s := &ep.rma
	var tbl [RMAIOVLimit]remoteIOV
	n := int(c.Aux & 0xff)
	rest, ok := parseRemote(c.Payload, n, &tbl)
	var pid int
	var riov []sys.RemoteIOV
	var idAddr uint64
	if ok && c.Flags&single == single {
		var sum uint64
		for _, v := range tbl[:n] {
			if v.Len > ^uint64(0)-sum {
				ok = false
			}
			sum += v.Len
		}
		if ok {
			pid, riov, idAddr, ok = ep.parseCMASection(rest, sum)
		}
	}
	if !ok || c.Flags&single != single {
		ep.dropCmd(shmring.ErrBadLength)
		ep.answerCMA(c.Src, opReadResp, c.MsgID, uint64(provider.EIO))
		return true
	}
	dst, e := ep.checkRemote(tbl[:n], 1, provider.FlagRemoteRead, s.pieces[:0])
	if e == 0 && !ep.canPull(c.Src, pid, idAddr) {
		ep.answerCMA(c.Src, opReadResp, c.MsgID, ackUseSegments)
		return true
	}
	if e == 0 {
		e = cmaMove(true, pid, dst, riov)
		ep.cma.rmaMoves++
	}
	if e == 0 {
		ep.events(tbl[:n], provider.FlagRemoteRead, s.rRead)
	}
	ep.answerCMA(c.Src, opReadResp, c.MsgID, uint64(e))
	return true
}

// answerCMA answers a CMA request: the status (an errno, 0, or
// ackUseSegments), no data, FlagCMA.
func (ep *endpoint) answerCMA(id uint64, code uint8, msgID uint64, st uint64) {
	p := ep.respPeer(id)
	if p == nil || msgID == 0 {
		return
	}
	s := &ep.rma
	r := &s.cur
	*r = resp{p: p, code: code, msgID: msgID, st: st, cma: true}
	if len(s.respQ) == 0 && ep.pushResp(r) {
		return
	}
	var q *resp
	if k := len(s.respFree); k > 0 {
		q = s.respFree[k-1]
		s.respFree = s.respFree[:k-1]
	} else {
		q = &resp{}
	}
	buf := q.buf
	*q = *r
	q.buf = buf
	s.respQ = append(s.respQ, q)
	s.respN.Add(1)
}

// cmaRefusedOp handles the refusal of CMA request o (rxAnswer, s.mu
// held): the target is remembered as refusing (logged once) and o is
// sent again segmented, ahead of the operations queued after it.
func (ep *endpoint) cmaRefusedOp(o *rmaOp) {
	s := &ep.rma
	if s.cmaRefused == nil {
		s.cmaRefused = make(map[uint64]bool)
	}
	if !s.cmaRefused[o.p.id] {
		s.cmaRefused[o.p.id] = true
		log.Info(provider.SubsysEPData, "RMA target cannot reach this process (CMA): large RMA to it goes through bounce buffers",
			slog.String("endpoint", fileName(ep.id)), slog.String("peer", fileName(o.p.id)))
	}
	o.cma, o.first, o.off = false, false, 0
	if o.live {
		o.live = false
		s.started.Add(-1)
	}
	i := int32(o.id&0xffff) - 1
	o.next = s.qhead
	s.qhead = i
	if s.qtail < 0 {
		s.qtail = i
	}
	s.pending.Add(1)
	ep.pushQueued()
}
