package sim

import (
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/gofabric/fabric/internal/wire/simwire"
	"github.com/gofabric/fabric/provider"
)

// The cross-process mode (Config.CrossProcess, FI_SIM_CROSS_PROCESS=1):
// endpoints of networks of the same name in different processes of one
// host (one network namespace) reach each other. Every endpoint of such a
// network binds a unix datagram socket in the abstract namespace named
// after its network and id (sockName); a message to an id that is not an
// endpoint of this process is encoded (internal/wire/simwire), cut into
// datagrams and written to that socket by the endpoint's writer
// goroutine, through a socket connected to it (so that a full receive
// queue blocks the writer, not the application, and nothing is dropped).
// The target's reader goroutine decodes what arrives and injects it into
// its network at its own virtual time plus the default link's latency,
// where progress delivers it as it delivers local arrivals.
//
// Reliability (FI_EP_RDM): every operation to another process waits for a
// reply: the target's reader acknowledges a send as soon as the message is
// in its network, and answers an RMA or atomic request when its progress
// has served it. A write that finds no socket (the endpoint closed, its
// process gone) completes the operation with FI_EHOSTUNREACH at once; while
// operations wait for replies, the writer probes their targets every
// probeEvery, and the operations of a target whose socket is gone are
// completed with FI_EHOSTUNREACH a probe interval later (time for replies
// already queued to our socket to be read). Nothing waits for ever for a
// process that is gone.

// xprocBase marks the ids endpoints take in the cross-process mode: the
// process id in bits 24 to 51, a counter below, far from the service ids
// (serviceBase + port).
const xprocBase = 1 << 52

// probeEvery is the interval of liveness probes while replies are
// awaited.
const probeEvery = 100 * time.Millisecond

// maxNetNameXProc bounds a cross-process network's name (a socket name
// holds at most 107 bytes).
const maxNetNameXProc = 64

// maxRemotes bounds the stand-ins of other processes' endpoints a
// network keeps.
const maxRemotes = 1 << 16

// envCrossProcess selects the mode for the default network.
const envCrossProcess = "FI_SIM_CROSS_PROCESS"

func sockName(network string, id uint64) string {
	return "@gofabric-sim/" + network + "/" + string(appendName(nil, id)[len(namePrefix):nameLen])
}

// pending is an operation that waits for a reply from another process.
type pending struct {
	op  *txOp
	dst uint64
}

// outFrame is an encoded message waiting for the writer.
type outFrame struct {
	dst uint64
	req uint64 // the operation that fails if the frame cannot be written (0: none)
	msg []byte
}

// xport is an endpoint's cross-process state.
type xport struct {
	ep   *endpoint
	conn *net.UnixConn
	stop chan struct{}
	kick chan struct{}
	wg   sync.WaitGroup

	mu  sync.Mutex
	out []outFrame

	// Guarded by n.mu.
	nextReq uint64
	pend    map[uint64]pending
}

// remoteOf returns the stand-in endpoint of the endpoint id of another
// process (the source of what it sends: its name, its id); n.mu is held.
func (n *Network) remoteOf(id uint64) *endpoint {
	if r := n.remotes[id]; r != nil {
		return r
	}
	if n.remotes == nil || len(n.remotes) >= maxRemotes {
		// Stand-ins hold nothing but the id and name: forgetting them
		// (the events in flight keep theirs) bounds what sources that
		// another process makes up can cost.
		n.remotes = map[uint64]*endpoint{}
	}
	r := &endpoint{n: n, id: id, name: appendName(nil, id), reliable: true, remote: true}
	n.remotes[id] = r
	return r
}

// xbind binds the socket of a new endpoint of a cross-process network:
// the id asked for (EADDRINUSE when another endpoint of the host has it),
// or, for id 0, the next free id of this process. n.mu is held.
func (n *Network) xbind(id uint64) (uint64, *net.UnixConn, error) {
	auto := id == 0
	for tries := 0; ; tries++ {
		if auto {
			n.nextID++
			id = xprocBase | uint64(os.Getpid()&(1<<28-1))<<24 | n.nextID&(1<<24-1)
			if n.eps[id] != nil {
				continue
			}
		} else if n.eps[id] != nil {
			return 0, nil, provider.EADDRINUSE
		}
		c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockName(n.name, id), Net: "unixgram"})
		if err == nil {
			return id, c, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			log.Warn(provider.SubsysEPCtrl, "sim: cannot bind the endpoint's socket: "+err.Error())
			return 0, nil, provider.EIO
		}
		if !auto || tries > 1000 {
			return 0, nil, provider.EADDRINUSE
		}
	}
}

// startXport starts the reader and writer of ep's socket.
func (ep *endpoint) startXport(c *net.UnixConn) {
	x := &xport{ep: ep, conn: c, stop: make(chan struct{}), kick: make(chan struct{}, 1), pend: map[uint64]pending{}}
	ep.x = x
	x.wg.Add(2)
	go x.reader()
	go x.writer()
}

// shutdown ends the goroutines and closes the sockets; n.mu is not held.
func (x *xport) shutdown() {
	close(x.stop)
	_ = x.conn.Close()
	x.wg.Wait()
}

// failPending completes the operations waiting for a reply from dst (or
// all of them) with err, in posting order; n.mu is held.
func (x *xport) failPending(dst uint64, all bool, err provider.Errno) {
	var reqs []uint64
	for r, p := range x.pend {
		if all || p.dst == dst {
			reqs = append(reqs, r)
		}
	}
	slices.Sort(reqs)
	for _, r := range reqs {
		p := x.pend[r]
		delete(x.pend, r)
		if err == provider.EHOSTUNREACH {
			x.ep.n.stats.Failed++
		}
		x.ep.txComplete(p.op, err)
	}
}

// xsend queues m for the endpoint dst of another process; op, when not
// nil, is the operation m starts: a reliable one waits for the reply, an
// unreliable one (a datagram) completes at the next progress step. n.mu
// is held.
func (ep *endpoint) xsend(dst uint64, op *txOp, m *simwire.Message) {
	x := ep.x
	n := ep.n
	var req uint64
	if op != nil {
		if m.Flags&simwire.FlagReliable != 0 {
			x.nextReq++
			req = x.nextReq
			m.Req = req
			x.pend[req] = pending{op: op, dst: dst}
		} else {
			done := n.newEvent()
			done.kind, done.src, done.tx = evTxDone, ep, op
			n.schedule(done, n.now)
		}
	}
	b := simwire.AppendMessage(make([]byte, 0, simwire.HeaderSize+simwire.RMAIOVSize*m.NRMA+len(m.Payload)), m)
	x.mu.Lock()
	x.out = append(x.out, outFrame{dst: dst, req: req, msg: b})
	x.mu.Unlock()
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// writer writes the queued frames, each to its target's socket, and
// probes the targets of operations that wait for replies.
func (x *xport) writer() {
	defer x.wg.Done()
	peers := map[uint64]*net.UnixConn{}
	defer func() {
		for _, c := range peers {
			_ = c.Close()
		}
	}()
	dead := map[uint64]bool{} // targets found gone, failed at the next tick
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	var scratch []byte
	write := func(dst uint64, msg []byte) error {
		c := peers[dst]
		if c == nil {
			var err error
			c, err = net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sockName(x.ep.n.name, dst), Net: "unixgram"})
			if err != nil {
				return err
			}
			peers[dst] = c
		}
		err := simwire.AppendFrags(scratch, x.ep.id, msg, func(d []byte) error {
			scratch = d[:0]
			for {
				// A deadline bounds each attempt, so that a stop is seen
				// while the target's queue is full.
				_ = c.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
				_, err := c.Write(d)
				if err == nil {
					return nil
				}
				if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOBUFS) {
					select {
					case <-x.stop:
						return err
					default:
						continue
					}
				}
				return err
			}
		})
		if err != nil {
			_ = c.Close()
			delete(peers, dst)
		}
		return err
	}
	for {
		select {
		case <-x.stop:
			return
		case <-x.kick:
			x.mu.Lock()
			out := x.out
			x.out = nil
			x.mu.Unlock()
			for i, f := range out {
				if err := write(f.dst, f.msg); err != nil {
					select {
					case <-x.stop:
						return
					default:
					}
					dead[f.dst] = true
					if f.req != 0 {
						x.fail(f.req)
					}
				}
				out[i] = outFrame{}
			}
		case <-tick.C:
			// The targets found gone at least a tick ago, and still gone
			// (an endpoint of that name may have come back since): the
			// replies they sent before going have been read by now.
			var gone []uint64
			for dst := range dead {
				if write(dst, nil) != nil {
					gone = append(gone, dst)
				}
			}
			clear(dead)
			n := x.ep.n
			n.mu.Lock()
			for _, dst := range gone {
				x.failPending(dst, false, provider.EHOSTUNREACH)
			}
			var probe []uint64
			for _, p := range x.pend {
				probe = append(probe, p.dst)
			}
			n.mu.Unlock()
			slices.Sort(probe)
			probe = slices.Compact(probe)
			for _, dst := range probe {
				if err := write(dst, nil); err != nil {
					dead[dst] = true
				}
			}
		}
	}
}

// fail completes the operation req with FI_EHOSTUNREACH: its request
// could not be written.
func (x *xport) fail(req uint64) {
	n := x.ep.n
	n.mu.Lock()
	if p, ok := x.pend[req]; ok {
		delete(x.pend, req)
		n.stats.Failed++
		x.ep.txComplete(p.op, provider.EHOSTUNREACH)
	}
	n.mu.Unlock()
}

// reader reads the endpoint's socket until it is closed.
func (x *xport) reader() {
	defer x.wg.Done()
	buf := make([]byte, simwire.MaxDatagram+1)
	var r simwire.Reassembler
	var m simwire.Message
	for {
		k, err := x.conn.Read(buf)
		if err != nil {
			select {
			case <-x.stop:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(time.Millisecond) // not a busy loop on a persistent error
			continue
		}
		if k > simwire.MaxDatagram {
			continue
		}
		src, msg, done, err := r.Add(buf[:k])
		if err != nil {
			log.Debug(provider.SubsysEPData, "sim: dropping a malformed datagram: "+err.Error())
			continue
		}
		if !done || len(msg) == 0 { // a fragment, or a probe
			continue
		}
		if err := simwire.ParseMessage(msg, &m); err != nil {
			log.Debug(provider.SubsysEPData, "sim: dropping a malformed message: "+err.Error())
			continue
		}
		x.receive(src, &m)
	}
}

// receive takes the message m from the endpoint src of another process.
func (x *xport) receive(src uint64, m *simwire.Message) {
	ep := x.ep
	n := ep.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if ep.closing {
		return
	}
	at := n.now + int64(n.cfg.Default.Latency)
	switch m.Kind {
	case simwire.KindAck, simwire.KindAnswer:
		p, ok := x.pend[m.Req]
		if !ok || p.dst != src {
			return // a reply to nothing of ours (late, or forged)
		}
		delete(x.pend, m.Req)
		status := provider.Errno(m.Status)
		if m.Status > 1<<16 {
			status = provider.EIO
		}
		e := n.newEvent()
		e.kind, e.src, e.dst, e.tx, e.status = evAnswer, ep, ep.id, p.op, status
		if m.Kind == simwire.KindAnswer && m.Flags&simwire.FlagFetch != 0 && len(m.Payload) > 0 {
			e.read = true
			e.buf = n.getBuf(len(m.Payload))
			copy(e.buf, m.Payload)
		}
		n.schedule(e, at)
	case simwire.KindMsg:
		e := n.newEvent()
		switch {
		case m.Flags&simwire.FlagReliable == 0:
		case m.Flags&simwire.FlagDelivery != 0 && m.Req != 0:
			e.ackReq = m.Req // acknowledged once delivered (deliver)
		default:
			// In this process's network: the send is complete.
			ep.xsend(src, nil, &simwire.Message{Kind: simwire.KindAck, Req: m.Req})
		}
		e.kind, e.src, e.dst = evArrive, n.remoteOf(src), ep.id
		e.tagged = m.Flags&simwire.FlagTagged != 0
		e.tag, e.size = m.Tag, len(m.Payload)
		e.buf = n.getBuf(len(m.Payload))
		copy(e.buf, m.Payload)
		if m.Flags&simwire.FlagCQData != 0 {
			e.data, e.hasCQD = m.Data, true
		}
		n.schedule(e, at)
	case simwire.KindRMA:
		e := n.newEvent()
		e.kind, e.src, e.dst, e.req = evRMA, n.remoteOf(src), ep.id, m.Req
		e.read = m.Flags&simwire.FlagRead != 0
		e.size = int(m.Size)
		e.rma = make([]provider.RMAIOV, m.NRMA)
		for i, v := range m.RMA[:m.NRMA] {
			e.rma[i] = provider.RMAIOV{Addr: v.Addr, Len: v.Len, Key: v.Key}
		}
		if len(m.Payload) > 0 {
			e.buf = n.getBuf(len(m.Payload))
			copy(e.buf, m.Payload)
		}
		if m.Flags&simwire.FlagCQData != 0 {
			e.data, e.hasCQD = m.Data, true
		}
		if m.Flags&simwire.FlagAtomic != 0 {
			a := &atomicReq{kind: provider.AtomicKind(m.AtomicKind), op: provider.AtomicOp(m.AtomicOp),
				dt: provider.Datatype(m.Datatype)}
			e.atomic = a // serveAtomic checks the kind, operation and sizes
		}
		n.schedule(e, at)
	}
}

// xanswer sends the answer of the request e of another process; n.mu is
// held. It takes data.
func (ep *endpoint) xanswer(e *event, status provider.Errno, data []byte, fetch bool) {
	m := simwire.Message{Kind: simwire.KindAnswer, Req: e.req, Status: uint32(status)}
	if fetch && status == 0 {
		m.Flags, m.Payload = simwire.FlagFetch, data
	}
	ep.xsend(e.src.id, nil, &m)
	ep.n.putBuf(data)
}

// xcloseLocked completes the operations that wait for replies with
// FI_ECANCELED (ep closes); n.mu is held.
func (ep *endpoint) xcloseLocked() { ep.x.failPending(0, true, provider.ECANCELED) }

// xrequest sends an RMA (a == nil) or atomic request to the endpoint dst
// of another process; size is what it addresses there, buf (taken) the
// data of a write or the operands of an atomic. A request whose remote
// iovs do not address size bytes cannot be served: it completes with
// FI_EINVAL at the next progress step. n.mu is held.
func (ep *endpoint) xrequest(dst uint64, op *txOp, rma []provider.RMAIOV, buf []byte, size int, read bool,
	flags provider.Flags, data uint64, a *atomicReq) {
	n := ep.n
	m := simwire.Message{Kind: simwire.KindRMA, Flags: simwire.FlagReliable, Size: uint32(size), Payload: buf}
	var total uint64
	for _, v := range rma {
		total += v.Len
	}
	if len(rma) == 0 || len(rma) > simwire.MaxRMA || total != uint64(size) || size > simwire.MaxPayload {
		n.putBuf(buf)
		e := n.newEvent()
		e.kind, e.src, e.dst, e.tx, e.status = evAnswer, ep, ep.id, op, provider.EINVAL
		n.schedule(e, n.now)
		return
	}
	m.NRMA = len(rma)
	for i, v := range rma {
		m.RMA[i] = simwire.RMAIOV{Addr: v.Addr, Len: v.Len, Key: v.Key}
	}
	if read {
		m.Flags |= simwire.FlagRead
	}
	if a != nil {
		m.Flags |= simwire.FlagAtomic
		m.AtomicKind, m.AtomicOp, m.Datatype = uint8(a.kind), uint32(a.op), uint32(a.dt)
	}
	if flags&provider.FlagRemoteCQData != 0 {
		m.Flags, m.Data = m.Flags|simwire.FlagCQData, data
	}
	ep.xsend(dst, op, &m)
	n.putBuf(buf)
}
