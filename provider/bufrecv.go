package provider

// Buffered receives (FI_BUFFERED_RECV, fi_msg(3) "Buffered Receives").
//
// Under ModeBufferedRecv a message that no posted receive takes is not
// kept waiting for one: the receive queue (the SRX owner) reports it at
// once, with the bytes the peer provider holds for it, and the
// application claims it into its own buffer (a receive with FI_CLAIM) or
// discards it (FI_DISCARD). The peer provider buffers unexpected messages
// as it always does (QueueMsg/QueueTag with its PeerContext); what it adds
// is BufferedPeer, which shows the owner those bytes, and, for messages it
// does not buffer whole, reading at least the owner's BufferedMin bytes
// before it queues them.

// BufferedPeer is implemented by an SRXPeer that can show the owner the
// data it holds for a message it queued (QueueMsg/QueueTag).
type BufferedPeer interface {
	// Buffered returns the first bytes of e's message, held in the peer's
	// own memory and left unchanged until the owner starts or discards e.
	// It may be shorter than e.MsgSize when the rest is still in the
	// network; StartMsg/StartTag then deliver all of it.
	Buffered(e *RxEntry) []byte
}

// BufferedWaiter is implemented by a BufferedPeer that may queue a
// message before it holds the bytes the owner must show of it (at least
// min(BufferedMin, MsgSize): the first bytes of a rendezvous message,
// read from the sender after its request was queued to keep the order of
// messages). BufferedReady reports whether it holds them; while it does
// not, the owner reports nothing, and the peer calls the owner's
// BufferedArrived (BufferedNotifier) once it does. BufferedReady must be
// safe to call from any goroutine.
type BufferedWaiter interface {
	BufferedReady(e *RxEntry) bool
}

// BufferedNotifier is implemented by a BufferedOwner that waits for a
// BufferedWaiter: BufferedArrived tells it that the peer now holds the
// first bytes of queued message e (Buffered returns them), so that it
// may report e. It ignores an entry it does not wait for.
type BufferedNotifier interface {
	BufferedArrived(e *RxEntry)
}

// BufferedOwner is implemented by an SRXOwner that reports buffered
// receives. A peer reads the limits once per message, before it queues
// it.
type BufferedOwner interface {
	// BufferedLimits returns FI_OPT_BUFFERED_MIN and FI_OPT_BUFFERED_LIMIT
	// and whether buffered receives are on. A peer that does not buffer
	// a message whole buffers at least min(min, MsgSize) bytes of it.
	BufferedLimits() (min, limit uint64, on bool)
}

// BufferedEndpoint is implemented by a provider Endpoint whose receive
// side can expose its buffers (FI_BUFFERED_RECV): it is a BufferedPeer of
// its receive queue.
type BufferedEndpoint interface {
	// BufferedDefaults returns the endpoint's default FI_OPT_BUFFERED_MIN
	// and FI_OPT_BUFFERED_LIMIT and the largest limit it supports.
	BufferedDefaults() (min, limit, max uint64)
}

// BufferedRecvOffer is implemented by a Provider that offers
// ModeBufferedRecv: GetInfo adds the mode to an Info of the provider for
// which BufferedRecv reports true when the application's hints have it.
// (FI_BUFFERED_RECV is a mode the application supports, not one the
// provider requires, so it is not in the provider's own Info.)
type BufferedRecvOffer interface {
	BufferedRecv(info *Info) bool
}
