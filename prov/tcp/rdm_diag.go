package tcp

import (
	"fmt"
	"io"
	"sync"
	"time"
	"weak"
)

// Diagnostics of RDM endpoints: WriteRDMState prints the connections and
// queues of every open RDM endpoint of the process, for a test or soak
// that finds its traffic stalled (cmd/soak prints it then).

// rdmLive holds the open RDM endpoints, weakly: an endpoint dropped without
// Close stays collectable (and its sockets closed by their cleanups).
var rdmLive struct {
	mu  sync.Mutex
	eps map[weak.Pointer[rdmEP]]struct{}
}

func rdmTrack(ep *rdmEP) {
	rdmLive.mu.Lock()
	if rdmLive.eps == nil {
		rdmLive.eps = map[weak.Pointer[rdmEP]]struct{}{}
	}
	if n := len(rdmLive.eps); n >= 256 && n&(n-1) == 0 {
		// Forget the endpoints collected without Close, now and then,
		// so that the set does not grow with them.
		for p := range rdmLive.eps {
			if p.Value() == nil {
				delete(rdmLive.eps, p)
			}
		}
	}
	rdmLive.eps[weak.Make(ep)] = struct{}{}
	rdmLive.mu.Unlock()
}

func rdmUntrack(ep *rdmEP) {
	rdmLive.mu.Lock()
	delete(rdmLive.eps, weak.Make(ep))
	rdmLive.mu.Unlock()
}

var connStateNames = [...]string{connTCP: "connecting", connReqSent: "request-sent", connWaitPeer: "wait-peer",
	connUp: "up", connDraining: "draining", connDead: "dead"}

func (s connState) String() string {
	if int(s) < len(connStateNames) {
		return connStateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// WriteRDMState writes to w, one line per object, the state of every open
// RDM endpoint of the process: its connections (state, frames queued and
// how much of the head frame is written, receive state, operations
// waiting for the peer), accepted sockets and connections being drained.
// An endpoint whose lock stays held for 100 ms (a progress call that does
// not return) is reported as such. It is for diagnostics only: the format
// may change.
func WriteRDMState(w io.Writer) {
	rdmLive.mu.Lock()
	eps := make([]*rdmEP, 0, len(rdmLive.eps))
	for p := range rdmLive.eps {
		if ep := p.Value(); ep != nil {
			eps = append(eps, ep)
		}
	}
	rdmLive.mu.Unlock()
	if len(eps) == 0 {
		fmt.Fprintln(w, "tcp rdm: no open endpoint")
	}
	for _, ep := range eps {
		ep.writeState(w)
	}
}

func (ep *rdmEP) writeState(w io.Writer) {
	locked := ep.mu.TryLock()
	for end := time.Now().Add(100 * time.Millisecond); !locked && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
		locked = ep.mu.TryLock()
	}
	if !locked {
		fmt.Fprintf(w, "tcp rdm endpoint %p: its lock is held (for 100 ms at least)\n", ep)
		return
	}
	defer ep.mu.Unlock()
	fmt.Fprintf(w, "tcp rdm endpoint %s: state %d, %d connections, %d accepted being read, %d draining, %d orphans; %d ops queued or in flight (tx size %d), %d rendezvous and %d atomics waiting; unexpected %d msgs %d bytes, %d connections held; auto progress %v\n",
		formatSockaddr(ep.name), ep.state, ep.nconns, len(ep.incoming), len(ep.draining), len(ep.orphans),
		ep.queued, ep.txSize, len(ep.rndv), len(ep.amo), ep.unexpN.Load(), ep.unexpBytes.Load(), ep.held.Load(), ep.auto)
	for _, c := range ep.conns {
		if c != nil {
			c.writeState(w, "conn")
		}
	}
	for _, c := range ep.draining {
		c.writeState(w, "draining")
	}
	for _, in := range ep.incoming {
		fmt.Fprintf(w, "  accepted from %s: request %d/%d bytes read, reject %d bytes to write, deadline in %v\n",
			formatSockaddr(in.peer), in.have, in.need, len(in.out), time.Until(in.deadline).Round(time.Millisecond))
	}
}

func (c *rdmConn) writeState(w io.Writer, what string) {
	fd := -1
	if c.sock != nil {
		fd = c.sock.FD()
	}
	r := &c.rx
	fmt.Fprintf(w, "  %s %d to %s: %v gen %d fd %d ext %v local %v; tx: %d frames queued (lazy %d), %d CM bytes to write, fenced %v, eof %v, %d waiting for ACK",
		what, c.index, formatSockaddr(c.addr), c.state, c.gen, fd, c.ext, c.local, c.tx.len(), c.tx.lazy, len(c.out), c.fenced, c.eof, len(c.acks))
	if t := c.tx.head(); t != nil {
		fmt.Fprintf(w, ", head kind %d %d/%d bytes written", t.kind, t.off, t.total)
	}
	fmt.Fprintf(w, "; rx: %d bytes buffered, held %v, waitDrain %v, %d reads outstanding, direct %v (%d left), %d SAR, %d unexpected rendezvous; in work %v",
		r.end-r.start, r.held, c.waitDrain, len(r.reads), r.direct != nil, r.left, len(c.sar), c.unexpRndv, c.inWork)
	if c.state != connUp && !c.deadline.IsZero() {
		fmt.Fprintf(w, ", deadline in %v", time.Until(c.deadline).Round(time.Millisecond))
	}
	fmt.Fprintln(w)
}
