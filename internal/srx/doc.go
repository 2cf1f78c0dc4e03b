// Package srx is the receive-matching engine shared by every provider: the
// owner side of a fi_peer(3) shared receive context (fi_ops_srx_owner) plus
// the application-facing posting calls of fi_msg(3) and fi_tagged(3).
//
// A Queue holds two kinds of entries, each kept separately for untagged
// (FI_MSG) and tagged (FI_TAGGED) traffic:
//
//   - posted receives, searched in posting order by GetMsg/GetTag;
//   - unexpected messages, queued by peers with QueueMsg/QueueTag and
//     searched in arrival order by Post.
//
// Tag matching is (send_tag ^ recv_tag) &^ ignore == 0. With
// Config.Directed (FI_DIRECTED_RECV) a posted receive's Addr restricts the
// source; AddrUnspec matches anyone, and a message whose source is unknown
// (AddrUnspec / AddrNotAvail) only matches receives posted with AddrUnspec.
// Without Directed the source filter is ignored.
//
// # Peer protocol (fi_peer(3) PEER SRX)
//
// Expected path: GetMsg/GetTag return nil and the matched entry, whose IOV
// covers the full posted buffer; the peer copies the payload (Deliver
// helps), writes the completion (Complete helps) and calls FreeEntry.
//
// Unexpected path: GetMsg/GetTag return ENOENT and a valid entry; the peer
// sets Peer, PeerContext and (with remote CQ data) CQData and
// Flags|FlagRemoteCQData, then calls QueueMsg/QueueTag. When a matching
// receive is posted the owner fills IOV, Context, Complete and Flags and
// calls Peer.StartMsg/StartTag; for FI_DISCARD and at Close it calls
// Peer.DiscardMsg/DiscardTag instead (the peer writes no completion).
// Either way the peer calls FreeEntry when done.
//
// A receive posted between GetMsg's ENOENT and the peer's QueueMsg is not
// lost: QueueMsg re-checks the posted receives and, on a match, calls
// Peer.StartMsg synchronously before returning. Peers must therefore not
// hold, across QueueMsg, a lock that their StartMsg takes. QueueMsg returns
// an error (EINVAL) only when it did not take the entry (not one returned
// by GetMsg with ENOENT, already queued, no Peer); the peer then still owns
// it. Once taken, the entry is the owner's until it calls Start* or
// Discard*. Errors returned by Start* and Discard* are ignored: a peer that
// cannot deliver reports it with an error completion (CompleteErr) and
// still calls FreeEntry. Peer callbacks (Start*, Discard*) are never made
// with the queue's lock held, so peers may call back into the queue
// (FreeEntry ...) from them.
//
// # Direct receive
//
// A peer that owns its queue and polls a message source (the udp
// provider's socket) may skip GetMsg, the bounce buffer and the copy with
// ReceiveDirect: while the first posted untagged receive takes any source
// and is not a multi-receive buffer, the message is received into its
// buffers and completed under the queue's lock (see Receiver).
//
// # Unexpected queue bound and FI_RM
//
// Config.MaxUnexpected bounds the number of unexpected messages (queued or
// returned by GetMsg with ENOENT and not yet queued or freed). At the bound
// GetMsg/GetTag return EAGAIN and a nil entry: the peer must keep the
// message and retry later (FI_RM_ENABLED: never drop; apply back-pressure
// to the sender), or may drop it when resource management is disabled
// (FI_RM_DISABLED, e.g. DGRAM). The default (0) is unbounded. A peer that
// keeps the message arms Queue.NotifyRoom (provider.RoomNotifier) to learn
// when to retry: it fires when an unexpected message leaves the queue or,
// with resource management, when the CQ frees room.
//
// # Reserved completions (Config.ResourceMgmt)
//
// With Config.ResourceMgmt and a CQ given to SetCompletion that implements
// provider.CQReserver, the queue claims room in the CQ before a receive
// that writes a completion (FlagCompletion, or a multi-receive buffer) is
// handed to a peer, so that no completion is lost (FI_RM_ENABLED):
//
//   - GetMsg/GetTag return EAGAIN and a nil entry when a posted receive
//     matches but the CQ has no room; the receive stays posted and the
//     peer keeps the message (a reliable peer leaves it in its stream and
//     retries, a datagram peer may drop it);
//   - Post returns EAGAIN when the receive would match a queued unexpected
//     message (it completes at once) and the CQ has no room, leaving the
//     message queued; and, as fi_domain(3) "Rx CQ" says, when the CQ is
//     full;
//   - Complete, CompleteErr and CompleteFrom write into the room of the
//     entry, and FreeEntry gives it back when the entry was freed without
//     a completion.
//
// Entries the queue writes itself (peeks, FI_DISCARD, cancellations,
// separate FI_MULTI_RECV releases), and messages matched while being
// queued (QueueMsg, ForeachUnspecAddr, FI_MULTI_RECV posts draining
// queued messages), go in unreserved: a CQ opened with resource
// management keeps them beyond its size rather than overrun.
//
// # FI_PEEK, FI_CLAIM, FI_DISCARD
//
// The owner writes these completions itself, to the CQ and counter given to
// SetCompletion: FI_PEEK with no match gives an FI_ENOMSG error completion;
// with a match a success completion carrying the message length, tag,
// remote CQ data and flags (Buf is nil: no data is copied), and the message
// stays queued. FI_PEEK|FI_CLAIM also reserves the message for that
// operation context: only a later receive posted with FI_CLAIM and the same
// context retrieves it (its completion has FI_CLAIM set), and neither normal
// receives nor further peeks see it. FI_PEEK|FI_DISCARD and
// FI_CLAIM|FI_DISCARD drop the message through the peer's Discard* and
// write a success completion. FI_DISCARD alone is invalid (EINVAL), as is
// FI_CLAIM without FI_PEEK for a context that holds no claimed message.
//
// # FI_MULTI_RECV
//
// A multi-receive buffer (one buffer) stays posted while it serves several
// messages: each match carves an entry at the current offset, sized to the
// message (or to what is left, the peer then reports FI_ETRUNC). Each
// message completes with its own Buf slice and length. Once the free space
// falls below the minimum (Config.MinMultiRecv, SetMinMultiRecv; the value
// in force when the buffer was posted applies; default
// DefaultMinMultiRecv) the buffer is released: if no other message of the
// buffer is still in flight, the last message's completion carries
// FI_MULTI_RECV (and is written even under selective completion);
// otherwise the owner writes a separate entry with flags FI_MULTI_RECV once
// the last in-flight message is freed.
//
// # Cancel and Close
//
// Cancel removes the first pending receive posted with the given context
// and writes exactly one FI_ECANCELED error completion (flags FI_RECV and
// FI_MSG or FI_TAGGED, plus FI_MULTI_RECV for a multi-receive buffer);
// nothing is written into a cancelled buffer afterwards, except messages
// of a multi-receive buffer that were already handed to a peer, in which
// case the cancel completion is written once they are freed. Close cancels
// every pending receive the same way and discards every unexpected message
// through its peer's Discard*.
//
// # Counters
//
// Complete increments the counter on success and its error value on error.
// Owner-written completions increment the counter for FI_DISCARD
// completions only; peeks, FI_ENOMSG and cancellations leave it alone.
//
// # ForeachUnspecAddr
//
// ForeachUnspecAddr calls getAddr, with the queue's lock held, for every
// queued unexpected message whose source is unknown (AddrUnspec), stores the
// result, and then matches newly resolved messages against directed
// receives already posted (starting them through their peers after the lock
// is released). getAddr must not call back into the queue.
package srx
