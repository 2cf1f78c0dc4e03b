package srx

import "github.com/gofabric/fabric/provider"

// Receiver receives one message straight into the buffers of a posted
// receive (see Queue.ReceiveDirect).
type Receiver interface {
	// ReceiveInto places the next waiting message in iov, in order, and
	// returns its full length (which may exceed the buffers: the rest is
	// lost). ok is false when no message is waiting; nothing is then
	// consumed and iov is untouched.
	ReceiveInto(iov [][]byte) (size int, ok bool)
}

// DirectStatus is the outcome of Queue.ReceiveDirect.
type DirectStatus uint8

const (
	// DirectEmpty: the receiver had no message waiting.
	DirectEmpty DirectStatus = iota
	// DirectDone: a message was received into the first posted receive.
	DirectDone
	// DirectUnavailable: the queue does not allow a direct receive now
	// (no posted receive, or the first one is a directed receive or a
	// multi-receive buffer, or the queue is closed); the peer receives
	// the message itself and matches it with GetMsg.
	DirectUnavailable
)

// ReceiveDirect is the owner's fast path for a peer that owns this queue
// (no other peer matches against it) and receives untagged messages one at
// a time from a source it polls, such as a datagram socket: when the first
// posted untagged receive accepts any source and is not a multi-receive
// buffer, it asks r to receive the next message straight into that
// receive's buffers, with no bounce buffer, copy, or second matching step.
//
// The first posted receive matches any message in posting order, so the
// result is the one GetMsg would give, without the copy. The queue's lock
// is held while r runs: a Cancel or Close waits for it, and nothing is
// written into a receive after its cancellation. r must not call back into
// the queue.
//
// On DirectDone the receive has left the queue and its entry is already
// back in the pool: out is set to a copy of what its completion needs
// (Context, Flags, Tag, Complete, MsgSize = size; IOV and OwnerContext
// nil), which the caller passes to Complete or CompleteFrom and never to
// FreeEntry. n is the number of bytes placed, olen the number that did not
// fit (FI_ETRUNC when non-zero).
func (q *Queue) ReceiveDirect(r Receiver, out *provider.RxEntry) (n int, olen uint64, st DirectStatus) {
	q.mu.Lock()
	p := q.postedMsg.head
	if q.closed || p == nil || p.multi || p.rx.Addr != provider.AddrUnspec {
		q.mu.Unlock()
		return 0, 0, DirectUnavailable
	}
	size, ok := r.ReceiveInto(p.rx.IOV)
	if !ok {
		q.mu.Unlock()
		return 0, 0, DirectEmpty
	}
	n = size
	if room := p.rx.IOVLen(); uint64(size) > room {
		n, olen = int(room), uint64(size)-room
	}
	q.postedMsg.remove(p)
	q.nposted--
	*out = provider.RxEntry{
		Addr:     provider.AddrUnspec,
		MsgSize:  uint64(size),
		Tag:      p.rx.Tag,
		Flags:    p.rx.Flags,
		Context:  p.rx.Context,
		Complete: p.rx.Complete,
	}
	q.free(p)
	q.mu.Unlock()
	return n, olen, DirectDone
}
