package srx

import (
	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/provider"
)

// Receiver receives messages straight into the buffers of posted receives
// (see Queue.ReceiveDirect). Both methods run with the queue's lock held
// and must not call back into the queue.
type Receiver interface {
	// ReceiveInto places the next waiting message in iov, in order, and
	// returns its full length (which may exceed the buffers: the rest is
	// lost). ok is false when no message is waiting; nothing is then
	// consumed and iov is untouched.
	ReceiveInto(iov [][]byte) (size int, ok bool)
	// ReceivedDirect completes e, into which ReceiveInto placed n bytes
	// of a message, olen more not fitting (FI_ETRUNC when non-zero): it
	// writes the completion (Complete or CompleteFrom). e is the queue's
	// and valid only during the call; the peer does not call FreeEntry.
	ReceivedDirect(e *provider.RxEntry, n int, olen uint64)
}

// DirectStatus is the outcome of Queue.ReceiveDirect.
type DirectStatus uint8

const (
	// DirectEmpty: the receiver had no message waiting.
	DirectEmpty DirectStatus = iota
	// DirectDone: a message was received into the first posted receive
	// and completed.
	DirectDone
	// DirectUnavailable: the queue does not allow a direct receive now
	// (no posted receive, or the first one is a directed receive or a
	// multi-receive buffer, or the queue is closed); the peer receives
	// the message itself and matches it with GetMsg.
	DirectUnavailable
)

// ReceiveDirect is the owner's fast path for a peer that receives untagged
// messages one at a time from a source it polls, such as a datagram socket
// or a shared-memory ring: when the first
// posted untagged receive accepts any source and is not a multi-receive
// buffer, r receives the next message straight into that receive's
// buffers and completes it, with no bounce buffer, no copy and no second
// matching step.
//
// The first posted receive matches any message in posting order, so the
// outcome is the one GetMsg would give, whoever else matches against the
// queue (other endpoints sharing it, the peers of an imported queue): they
// take receives under the same lock, and no queued unexpected untagged
// message can be waiting while an any-source receive is posted (Post
// matches those first). The queue's lock is held while r
// runs, so the receive and its completion are one step for Post, Cancel
// and Close: a receive is either completed by r or cancelled, and nothing
// is written into it after its cancellation. r's completion writes
// therefore take the CQ's lock inside the queue's, an order no other path
// reverses (the queue writes its own completions after unlocking).
//
// With Config.ResourceMgmt no room is reserved in the CQ (GetMsg reserves
// before it matches): a reservation per poll would cost two CQ locks on
// every empty poll. The peer checks the CQ's room (CQReserver.Full) before
// it polls, and a CQ with resource management keeps the rare completion
// that a concurrent writer pushed beyond its size rather than lose it.
func (q *Queue) ReceiveDirect(r Receiver) DirectStatus {
	q.mu.Lock()
	p := q.postedMsg.head
	if q.closed || p == nil || p.multi || p.rx.Addr != provider.AddrUnspec {
		q.mu.Unlock()
		return DirectUnavailable
	}
	return q.receiveInto(r, &q.postedMsg, p, false, 0, 0)
}

// receiveInto has r place its message in posted receive p, which leaves
// list l (and, tagged, takes the message's source and tag), and completes
// it. q.mu is held; receiveInto releases it.
func (q *Queue) receiveInto(r Receiver, l *list, p *entry, tagged bool, addr provider.Addr, tag uint64) DirectStatus {
	size, ok := r.ReceiveInto(p.rx.IOV)
	if !ok {
		q.mu.Unlock()
		return DirectEmpty
	}
	n, olen := size, uint64(0)
	var room uint64
	if len(p.rx.IOV) == 1 {
		room = uint64(len(p.rx.IOV[0])) // fi_recv's one buffer, without IOVLen's loop
	} else {
		room = p.rx.IOVLen()
	}
	if uint64(size) > room {
		n, olen = int(room), uint64(size)-room
	}
	l.remove(p)
	q.nposted--
	p.st = stHanded
	p.rx.MsgSize = uint64(size)
	if tagged {
		p.rx.Addr, p.rx.Tag = addr, tag
	}
	r.ReceivedDirect(&p.rx, n, olen)
	q.freePosted(p)
	q.mu.Unlock()
	return DirectDone
}

// ReceiveDirectTag is ReceiveDirect for a tagged message from addr with
// tag: the first posted tagged receive that matches it, as GetTag would
// find it (directed receives and wildcards included), takes the message
// straight into its buffers from r and completes. It steps aside
// (DirectUnavailable) where GetTag would do more than match one plain
// receive: no receive matches (the message is unexpected), the match is
// a multi-receive buffer, the queue is in buffered mode or closed. As in
// ReceiveDirect, no room is reserved in the CQ: the peer checks it first.
//
// No queued unexpected tagged message can match a posted receive (Post
// matches those first), so taking the receive for this message is what
// GetTag gives it.
func (q *Queue) ReceiveDirectTag(r Receiver, addr provider.Addr, tag uint64) DirectStatus {
	q.mu.Lock()
	if q.closed || q.buf != nil || q.postedTag.head == nil {
		q.mu.Unlock()
		return DirectUnavailable
	}
	p := q.postedTag.idx.find(addr, tag)
	if p == nil || p.multi {
		q.mu.Unlock()
		return DirectUnavailable
	}
	return q.receiveInto(r, &q.postedTag, p, true, addr, tag)
}

// CompleteDirect is Complete for the receive a Receiver is handed in
// ReceivedDirect, when the message fit (no FI_ETRUNC) and the completion
// goes to a CQ of this module (the provider found the *cq.CQ behind its
// provider.CQOwner at enable time). ReceiveDirect hands over only plain
// posted receives: no multi-receive buffer (so no buffer to report), no
// reservation to consume, no remote CQ data; the completion is then one
// narrow CQ write instead of Complete's general case analysis and its
// eleven-argument interface call. An entry that is not plain after all
// (a peer set FI_REMOTE_CQ_DATA) takes Complete.
func CompleteDirect(c *cq.CQ, cntr provider.CntrOwner, e *provider.RxEntry, n int, src provider.Addr) {
	if e.Flags&provider.FlagRemoteCQData != 0 {
		Complete(c, cntr, e, n, 0, src)
		return
	}
	// The counter first, as in Complete: a thread that has read the
	// completion sees the counter include it.
	if cntr != nil {
		cntr.Inc()
	}
	if e.Complete {
		_ = c.WriteMsg(e.Context, e.Flags, uint64(n), e.Tag, src)
	}
}
