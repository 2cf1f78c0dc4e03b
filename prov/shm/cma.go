package shm

import (
	"encoding/binary"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// Cross-memory attach (CMA) for large messages (shm.md "Protocols").
//
// A message of FI_SHM_CMA_MIN bytes or more (default CMAMin; to an
// endpoint of this process, CMAMinSameProcess at least) to a peer that has not refused CMA is
// queued like any other, but pushed as one request (RTS): a command
// carrying the sender's pid, the address of an 8-byte word of the sender
// holding its endpoint id, and the addresses of the message's buffers
// (FlagCMA; the payload rides inline). The receiver first reads the id
// word with process_vm_readv: if it cannot (EPERM under yama or seccomp,
// ENOSYS, another pid namespace where the pid names someone else, its own
// CMA switched off) it answers "use segments" (ackUseSegments) and
// remembers the sender as refused; the sender marks the peer refused
// (logged once at info) and sends that message, and the later ones,
// segmented. (A sender read back before, with the same pid, is checked by
// the pull itself, which reads the id word first: one system call per
// message.) Otherwise the receiver matches the message and pulls the data
// straight into the posted buffer (single copy), or, unexpected, into
// provider memory like a segmented message (bounded by
// MaxUnexpectedBytes: back-pressure beyond), and acks; the sender
// completes on the ack. A message with FI_DELIVERY_COMPLETE that arrived
// unexpected is acked when it is matched.
//
// Order: until a peer has answered one request, the request blocks the
// transmit queue (later operations wait behind it), so a refusal resends
// the message in its place. Once the peer accepted CMA, requests leave the
// queue at once and complete on their acks; a peer that refuses later
// (its process cannot be read any more) gets the message resent behind
// later ones: the only case where messages to a peer can overtake.
//
// The pull is bounded by the receive buffer: a smaller buffer truncates
// (the completion reports the overrun as ever). A failing pull (the sender
// died: FI_ECONNRESET; a range not mapped: FI_EFAULT) completes the
// receive in error and acks the sender with the same error.

// selfPid is this process's id, carried by CMA requests.
var selfPid = os.Getpid()

// ackUseSegments is the ack status of a refused CMA request: not an errno.
const ackUseSegments = 1 << 20

// cmaAuxDeliver in a request's Aux: the sender asked for
// FI_DELIVERY_COMPLETE (ack when matched).
const cmaAuxDeliver = 1

// Peer CMA states (cmaState.peers).
const (
	cmaUnknown int8 = iota // no request answered yet
	cmaOK                  // a request was accepted
	cmaRefused             // use segments
)

// rtsHeader is the fixed part of a request's payload: pid u32, iov count
// u32, address of the id word u64; then count (base u64, len u64) pairs.
const rtsHeader = 16

// cmaState is the per-endpoint CMA state.
type cmaState struct {
	// Guarded by ep.tx.mu (transmit side).
	peers map[uint64]int8
	// Guarded by ep.rxMu (receive side).
	refused map[uint64]bool // senders whose requests cannot be served
	// pids holds the pid each sender's id word was read back from
	// (canPull): a later request from it with the same pid reads the id
	// word in the same process_vm_readv as the data (pull).
	pids   map[uint64]int
	riov   [IOVLimit]sys.RemoteIOV
	idRead [1]sys.RemoteIOV
	local  [1][]byte
	idBuf  [8]byte
	// The lists of a pull that reads the id word first.
	plocal  [IOVLimit + 1][]byte
	premote [IOVLimit + 1]sys.RemoteIOV
	ubList  [1][]byte
	pulls   uint64 // requests served by a pull (tests)
	// rmaMoves counts the RMA requests whose data was moved by CMA
	// (rma_cma.go; tests).
	rmaMoves uint64

	idWord []byte // this endpoint's id, read by receivers to check the pid (set at creation)
}

// Environment variables of the CMA path (fi_info -e lists them).
const (
	envDisableCMA = "FI_SHM_DISABLE_CMA" // read by internal/sys (CMAAvailable)
	envCMAMin     = "FI_SHM_CMA_MIN"
)

// Params lists the environment variables the provider reads that C
// libfabric's shm also defines (fi_info -e prints them as C does).
// FI_SHM_CMA_MIN is ours only and not listed (the interop test holds the
// listing to C's).
func (shmProvider) Params() []provider.Param {
	return []provider.Param{
		{Name: envDisableCMA, Type: provider.ParamBool, Help: "Manually disables CMA. Default: false"},
	}
}

// cmaMin is FI_SHM_CMA_MIN, read once (CMAMin if unset or invalid; at
// least InjectSize+1).
var cmaMin = sync.OnceValue(func() int {
	if v, err := strconv.ParseUint(strings.TrimSpace(os.Getenv(envCMAMin)), 0, 63); err == nil {
		return int(max(v, InjectSize+1))
	}
	return CMAMin
})

// cmaProbe is the process-wide CMA decision (sys.CMAAvailable), logged
// once.
var cmaProbe = sync.OnceValue(func() bool {
	ok, why := sys.CMAAvailable()
	log.Info(provider.SubsysCore, "cross-memory attach for large messages", slog.Bool("available", ok),
		slog.String("reason", why), slog.Int("min_size", cmaMin()))
	return ok
})

// cmaFor reports whether a queued message of n bytes to p goes by CMA.
// ep.tx.mu is held.
func (ep *endpoint) cmaFor(p *peer, n int) bool {
	if !ep.cmaMaybe(p, n) {
		return false
	}
	return ep.cma.peers[p.id] != cmaRefused
}

// cmaMaybe reports, without ep.tx.mu, whether a message of n bytes to p
// may go by CMA: then it is queued, and queueOp decides (cmaFor).
func (ep *endpoint) cmaMaybe(p *peer, n int) bool {
	if n < cmaMin() || p.id == ep.id || (n < CMAMinSameProcess && int(p.r.Pid) == selfPid) {
		return false
	}
	return cmaProbe()
}

// markCMA queues o as a CMA request (queueOp, ep.tx.mu held).
func (ep *endpoint) markCMA(o *txOp) {
	if !ep.cmaFor(o.p, int(o.total)) {
		return
	}
	o.cma = true
	o.dc = true // completes on the receiver's ack
}

// pushCMA pushes o's request (pushOp, ep.tx.mu held): true when it may
// leave the queue (its peer answered a request before), false while its
// slot is not free or its peer's answer is awaited.
func (ep *endpoint) pushCMA(o *txOp) bool {
	p := o.p
	if p.r.Closing() {
		// The peer closed or died; an answer it pushed before that is in
		// our queue, ahead of anything pushed after the flag was seen.
		if o.rtsSent && ep.own.Pending() {
			return false
		}
		ep.failOp(o, provider.ECONNRESET)
		return true
	}
	if !o.rtsSent {
		pos, cmd, ok := p.r.Reserve()
		if !ok {
			return false
		}
		pl := cmd[shmring.CmdPayload:]
		le := binary.LittleEndian
		le.PutUint32(pl[0:], uint32(selfPid))
		le.PutUint32(pl[4:], uint32(len(o.iov)))
		le.PutUint64(pl[8:], sys.IOVOf(ep.cma.idWord).Base)
		off := rtsHeader
		for _, b := range o.iov {
			r := sys.IOVOf(b)
			le.PutUint64(pl[off:], r.Base)
			le.PutUint64(pl[off+8:], r.Len)
			off += 16
		}
		c := shmring.Cmd{Op: o.op, Flags: shmring.FlagInline | shmring.FlagDeliver | shmring.FlagCMA |
			o.cflags&shmring.FlagCQData, Len: uint32(off), Src: ep.id, Tag: o.tag, Data: o.data,
			MsgID: o.msgID, Size: o.total}
		if o.flags&provider.FlagDeliveryComplete != 0 {
			c.Aux = cmaAuxDeliver
		}
		shmring.PutHeader(cmd, &c)
		p.r.Publish(pos)
		wake(p)
		o.rtsSent = true
		o.off = o.total
	}
	return ep.cma.peers[p.id] == cmaOK
}

// cmaAck handles an ack for a CMA request: of the request blocking the
// queue head (the peer's first answer), or a refusal of one waiting in
// acks. It reports false for any other ack (gotAck handles it).
func (ep *endpoint) cmaAck(c *shmring.Cmd) bool {
	t := &ep.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	if o := t.head; o != nil && o.cma && o.rtsSent && o.msgID == c.MsgID && o.p.id == c.Src {
		if c.Data == ackUseSegments {
			ep.refuseCMA(o.p)
			ep.toSegments(o)
		} else {
			if ep.cma.peers == nil {
				ep.cma.peers = map[uint64]int8{}
			}
			ep.cma.peers[o.p.id] = cmaOK
			t.head = o.next
			if t.head == nil {
				t.tail = nil
			}
			t.pending.Add(-1)
			if c.Data != 0 {
				ep.failOp(o, provider.Errno(min(c.Data, 1<<16)))
			} else {
				ep.dropCredit(o) // before the completion: its reader may post at once
				ep.completeTx(o.res, o.comp, o.ctx, o.op)
			}
			ep.freeOp(o)
		}
		ep.progressTxLocked()
		return true
	}
	if c.Data != ackUseSegments {
		return false
	}
	o := t.acks[c.MsgID]
	if o == nil || !o.cma || o.p.id != c.Src {
		return false
	}
	t.delAck(c.MsgID, o)
	ep.refuseCMA(o.p)
	ep.toSegments(o)
	o.next = nil
	if t.tail == nil {
		t.head = o
	} else {
		t.tail.next = o
	}
	t.tail = o
	t.pending.Add(1)
	ep.progressTxLocked()
	return true
}

// toSegments turns CMA request o back into a segmented message.
func (ep *endpoint) toSegments(o *txOp) {
	o.cma, o.rtsSent, o.off = false, false, 0
	o.dc = o.flags&provider.FlagDeliveryComplete != 0
}

// refuseCMA marks p as refusing CMA (ep.tx.mu held), logged once.
func (ep *endpoint) refuseCMA(p *peer) {
	if ep.cma.peers == nil {
		ep.cma.peers = map[uint64]int8{}
	}
	if ep.cma.peers[p.id] != cmaRefused {
		ep.cma.peers[p.id] = cmaRefused
		log.Info(provider.SubsysEPData, "peer cannot read this process (CMA): large messages to it are segmented",
			slog.String("endpoint", fileName(ep.id)), slog.String("peer", fileName(p.id)))
	}
}

// rxCMA handles a CMA request (rxMsg, ep.rxMu held); false means it must
// stay queued (back-pressure).
func (ep *endpoint) rxCMA(c *shmring.Cmd, tagged bool) bool {
	pid, riov, idAddr, ok := ep.parseRTS(c)
	if !ok {
		ep.dropCmd(shmring.ErrBadLength)
		ep.sendAck(c.Src, c.MsgID, uint64(provider.EINVAL))
		return true
	}
	// A sender read back before is checked by the pull itself.
	known := ep.cma.pids[c.Src] == pid && !ep.cma.refused[c.Src]
	if !known && !ep.canPull(c.Src, pid, idAddr) {
		ep.sendAck(c.Src, c.MsgID, ackUseSegments)
		return true
	}
	if !known {
		idAddr = 0 // just checked
	}
	src := ep.srcOf(c.Src)
	e, err := ep.get(tagged, src, c.Size, c.Tag)
	switch {
	case err == nil:
		setCQData(e, c)
		n, perr := ep.pull(pid, e.IOV, riov, c.Src, idAddr)
		if perr != 0 {
			srx.CompleteErr(ep.rxCQ, ep.rxCntr, e, perr, provider.AddrNotAvail)
			ep.rq.FreeEntry(e)
			ep.sendAck(c.Src, c.MsgID, uint64(perr))
			return true
		}
		ep.cma.pulls++
		ep.completeRx(e, n, c.Size-uint64(n), src, c.Src)
		ep.rq.FreeEntry(e)
		ep.sendAck(c.Src, c.MsgID, 0)
		return true
	case err == provider.ENOENT && e != nil:
		ub := ep.getUbuf(c.Size)
		if ub == nil {
			ep.rq.FreeEntry(e)
			return false
		}
		ep.cma.ubList[0] = ub.b[:c.Size]
		n, perr := ep.pull(pid, ep.cma.ubList[:], riov, c.Src, idAddr)
		ep.cma.ubList[0] = nil
		if perr != 0 || uint64(n) != c.Size {
			if perr == 0 {
				perr = provider.EFAULT
			}
			ep.putUbuf(ub)
			ep.rq.FreeEntry(e)
			ep.sendAck(c.Src, c.MsgID, uint64(perr))
			return true
		}
		ep.cma.pulls++
		ub.n, ub.src = n, c.Src
		if c.Aux&cmaAuxDeliver != 0 {
			ub.ack, ub.msgID = true, c.MsgID // acked when matched
		} else {
			ep.sendAck(c.Src, c.MsgID, 0)
		}
		ep.queueUnexpected(e, ub, c, tagged)
		return true
	case err == provider.EAGAIN:
		return false
	}
	ep.sendAck(c.Src, c.MsgID, uint64(provider.ECANCELED)) // the receive queue is closed
	return true
}

// parseRTS validates a request's payload: at most IOVLimit ranges whose
// lengths add up to the message size. The ranges are copied into
// ep.cma.riov.
func (ep *endpoint) parseRTS(c *shmring.Cmd) (pid int, riov []sys.RemoteIOV, idAddr uint64, ok bool) {
	pl := c.Payload
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
	var total uint64
	for i := 0; i < n; i++ {
		r := sys.RemoteIOV{Base: le.Uint64(pl[rtsHeader+16*i:]), Len: le.Uint64(pl[rtsHeader+16*i+8:])}
		if r.Len > c.Size-total {
			return 0, nil, 0, false
		}
		total += r.Len
		ep.cma.riov[i] = r
	}
	if total != c.Size {
		return 0, nil, 0, false
	}
	return pid, ep.cma.riov[:n], idAddr, true
}

// canPull reports whether the sender's memory can be read: CMA is on here,
// the sender was not refused before, and its id word reads back as its id
// (which also proves that pid names the sender in our pid namespace).
func (ep *endpoint) canPull(src uint64, pid int, idAddr uint64) bool {
	if !cmaProbe() || ep.cma.refused[src] {
		return false
	}
	cs := &ep.cma
	cs.idBuf = [8]byte{}
	cs.local[0] = cs.idBuf[:]
	cs.idRead[0] = sys.RemoteIOV{Base: idAddr, Len: 8}
	n, err := sys.ProcessVMReadv(pid, cs.local[:], cs.idRead[:])
	if err == nil && n == 8 && binary.LittleEndian.Uint64(cs.idBuf[:]) == src {
		if cs.pids == nil {
			cs.pids = map[uint64]int{}
		}
		cs.pids[src] = pid
		return true
	}
	if ep.cma.refused == nil {
		ep.cma.refused = map[uint64]bool{}
	}
	ep.cma.refused[src] = true
	log.Info(provider.SubsysEPData, "cannot read a peer's memory (CMA): it sends large messages segmented",
		slog.String("endpoint", fileName(ep.id)), slog.String("peer", fileName(src)), slog.Any("err", err))
	return false
}

// pull reads the ranges riov of process pid into local (bounded by
// local's size) and returns the bytes moved, or the error of the read.
// With idAddr not 0 the same read first takes the 8-byte word at idAddr,
// which must hold src (the sender's id, as canPull checked on an earlier
// request with this pid): if it does not, pid names another process now
// (the sender died and its pid was reused) and the pull fails with
// FI_ECONNRESET (the data read is not delivered: the receive completes in
// error).
func (ep *endpoint) pull(pid int, local [][]byte, riov []sys.RemoteIOV, src, idAddr uint64) (int, provider.Errno) {
	var room uint64
	for _, b := range local {
		room += uint64(len(b))
	}
	// Trim the remote list to the local room (a truncated receive).
	k := 0
	var want uint64
	for ; k < len(riov) && want < room; k++ {
		if riov[k].Len > room-want {
			riov[k].Len = room - want
		}
		want += riov[k].Len
	}
	riov = riov[:k]
	if want == 0 {
		return 0, 0
	}
	cs := &ep.cma
	if idAddr != 0 {
		cs.idBuf = [8]byte{}
		cs.plocal[0] = cs.idBuf[:]
		nl := 1 + copy(cs.plocal[1:], local)
		cs.premote[0] = sys.RemoteIOV{Base: idAddr, Len: 8}
		nr := 1 + copy(cs.premote[1:], riov)
		local, riov = cs.plocal[:nl], cs.premote[:nr]
	}
	n, err := sys.ProcessVMReadv(pid, local, riov)
	if idAddr != 0 {
		clear(cs.plocal[:]) // no reference to the receive buffers kept
		if err == nil && (n < 8 || binary.LittleEndian.Uint64(cs.idBuf[:]) != src) {
			delete(cs.pids, src) // the next request from src is checked apart
			return 0, provider.ECONNRESET
		}
		n -= 8
	}
	if err != nil {
		e, _ := err.(provider.Errno)
		if e == 0 {
			e = provider.EIO
		}
		return 0, e
	}
	if uint64(n) != want {
		// Partial: a remote range is not (wholly) mapped.
		return n, provider.EFAULT
	}
	return n, 0
}
