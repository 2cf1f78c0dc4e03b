// Package shm is the "shm" provider: reliable datagram (FI_EP_RDM)
// endpoints between processes of one host (and within one process)
// through shared memory. Importing it registers the provider:
//
//	import _ "github.com/gofabric/fabric/prov/shm"
//
// # Regions and names
//
// Every endpoint owns a region: a file /dev/shm/gofabric-shm-<16 hex> of
// mode 0600, mapped MAP_SHARED, laid out by package internal/shmring: a
// header page, an inbound command queue (RingSlots slots of SlotSize
// bytes; any process produces, the owner consumes) and a pool of Bufs
// bounce buffers of BufSize bytes with a free-index ring. The endpoint's
// name (fi_getname, FI_ADDR_STR) is the C string
// "fi_shm://gofabric-shm-<16 hex>" with its NUL; AV insert takes it with
// or without the NUL, fi_av_straddr prints it without. The 16 hex digits
// are a random 64-bit id (or, for a name given by node/service, a hash of
// the service and of the network namespace, so that two processes that
// agree on a port find each other without exchanging names, and runs in
// separate namespaces do not collide), which commands carry as their
// sender: the receiver derives the sender's name from it (FI_SOURCE, the
// reverse AV lookup) and finds its region to answer (acks). A peer's
// region is mapped at the first operation towards it and unmapped when the
// endpoint closes; its header is validated first, and every index and
// length read from shared memory is bounds-checked (a damaged region
// fails the operations towards it; a damaged command is dropped with a
// warning). An endpoint unlinks its file when it closes.
//
// # Protocols
//
//   - Inline: a message of up to SlotSize-64 bytes (8128) rides in one
//     command slot of the receiver's queue: one copy in, one copy out, and
//     the send completes when Send returns.
//   - Segmented: larger messages are cut into BufSize segments, each
//     copied into a bounce buffer taken from the RECEIVER's pool and
//     announced by a command; the receiver copies it out (into the posted
//     buffer, or provider memory when unexpected) and returns the buffer.
//     A sender that runs out of buffers or slots keeps the operation
//     queued and pushes the rest from Progress as buffers come back
//     (pipelining); operations start in posting order.
//   - Delivery complete (FI_DELIVERY_COMPLETE): the message carries a
//     request for an ack, which the receiver pushes into the sender's own
//     queue once the data is in a receive buffer; the send completes on
//     the ack (FI_ECONNRESET if the receiver closes first). FI_FENCE holds
//     an operation back until every earlier one completed.
//   - Cross-memory attach (cma.go): a message of FI_SHM_CMA_MIN bytes or
//     more (default CMAMin; between endpoints of one process
//     CMAMinSameProcess at least) is announced by one request naming the
//     sender's buffers; the receiver pulls it with process_vm_readv into
//     the posted buffer (single copy) and acks, and the send completes on
//     the ack. A receiver that cannot read the sender (yama, seccomp,
//     FI_SHM_DISABLE_CMA, another pid namespace: checked by reading back
//     the sender's id word) answers "use segments" and the message goes
//     segmented in its place; the peer is remembered, and the choice is
//     logged at FI_LOG_LEVEL=info.
//   - Unexpected messages are copied into provider memory, at most
//     MaxUnexpectedBytes and MaxUnexpected per endpoint; beyond that the
//     endpoint stops draining its queue until receives are posted
//     (senders see a full queue and keep their operations pending):
//     nothing is dropped.
//
// Every process only consumes its own queue: responses (acks, RMA read
// data, atomic results) are commands pushed into the initiator's queue.
//
// # RMA and atomics
//
// FI_RMA and FI_ATOMIC (rma.go, atomic.go, the command layout in
// rma_cmd.go): a request carries its remote iovs and data inline or in
// the target's bounce buffers; the target checks every remote iov with
// the domain's MR keys (key, access, range) before it touches memory,
// reports FI_RMA_EVENT (remote counters, MR-bound counters), writes the
// remote CQ data completion, and answers. Writes complete on the
// target's answer (so a refused access completes in error and leaves the
// memory untouched); reads and atomics when the data or fetched values
// are back. Atomics follow internal/atomics' table (no FI_LONG_DOUBLE)
// and are applied under one process-wide lock; rma_iov_limit 4, mr_mode 0
// (offset addressing, requested keys). A read or write of
// FI_SHM_RMA_CMA_MIN bytes or more (default RMACMAMin) goes as one
// request naming the initiator's buffers, after which the target, having
// checked the keys, moves the data itself with one process_vm_readv
// (write) or process_vm_writev (read) and answers with the status only
// (rma_cma.go); a target that cannot reach the initiator answers "use
// segments" and the operation goes through bounce buffers again, as the
// later ones to that target do.
//
// # Progress and waiting
//
// Data progress defaults to FI_PROGRESS_MANUAL: CQ and counter reads call
// Progress, which drains the inbound queue (ProgressBudget commands) and
// pushes pending transmits; polling an idle endpoint costs an atomic load.
// With FI_PROGRESS_AUTO a goroutine per endpoint progresses while there is
// work, polls briefly, then sleeps. Blocking reads (fi_cq_sread, counter
// waits) go through provider.Waiter, FI_WAIT_FD wait objects through
// provider.FDWaiter (an eventfd armed by a goroutine started at the first
// WaitFD). Every sleeper sleeps on its region's shared futex word (wait.go):
// a sender that pushes a command wakes it (one atomic load when nobody
// sleeps, so an application that polls pays no system call per message).
//
// # Faults
//
// A region's owner holds an flock on its file while it lives. Operations
// waiting on a peer (its queue or buffers full, an ack awaited, a message
// half received) make progress check the peer's liveness every 100 ms;
// a dead peer's operations complete with FI_ECONNRESET within about
// 200 ms of its death and its file is removed (death.go). Files of dead
// processes are removed when a process opens its first shm fabric.
//
// # Threading
//
// GetInfo offers FI_THREAD_SAFE and returns a less parallel model that
// the hints ask for (FI_THREAD_DOMAIN, FI_THREAD_COMPLETION,
// FI_THREAD_ENDPOINT, FI_THREAD_FID). The send paths take no endpoint
// lock in any model; the CQ, counter and receive queue (internal/cq,
// internal/srx) keep their own locks in every model.
//
// FI_THREAD_SAFE (and FI_THREAD_FID, FI_THREAD_ENDPOINT, which promise
// less): every data call and Progress counts itself in an in-flight
// count, which Close waits to drop to zero before it unmaps any region,
// and Progress drains the inbound queue under a per-endpoint mutex taken
// with TryLock (a drain already running elsewhere makes it return).
//
// FI_THREAD_DOMAIN and FI_THREAD_COMPLETION: an endpoint with manual
// progress, its own receive queue, this module's CQs and counters and no
// bound EQ is "serial": its data calls and Progress skip the in-flight
// count and Progress drains without the mutex (about 10% of a 64-byte
// ping-pong). The application promises to serialise its own calls on the
// endpoint, its CQs and counters; the other callers of Progress are made
// to fit that promise:
//
//   - The blocking waits of CQs and counters (SRead, Cntr.Wait) have
//     watcher goroutines (internal/progress) that call the bound
//     endpoints' Progress when WaitReady reports work. A watcher does so
//     only while the waiting reader sleeps inside its blocking call, and
//     the reader does not leave that call before the watcher's progress
//     returns: every watcher progress call happens within the
//     application's blocking call, so it is serialised with the
//     application's other calls and cannot overlap Close. WaitReady and
//     the FI_WAIT_FD goroutine only read atomics and shared words, and
//     register in the in-flight count while they touch the region, so
//     Close still waits for them.
//   - What cannot be fitted keeps the FI_THREAD_SAFE path: auto progress
//     (its own goroutine), a shared or imported receive queue, an
//     imported CQ or counter (their owner progresses from its own
//     thread), a bound EQ (EQ reads, a fabric-level object, progress
//     the endpoint outside the domain's serialisation), and, under
//     FI_THREAD_COMPLETION only, an endpoint whose caps let RMA or
//     atomics target it: a counter bound to a memory region drives the
//     progress of every endpoint of the domain, and such a counter is
//     not bound to the endpoint, so the application may read it from
//     another thread.
//
// The peer-death checks run inside Progress. Commands from other
// processes arrive through the lock-free ring, in every model.
//
// # Peer imports (fi_peer(3))
//
// An endpoint bound to FI_PEER imports of another provider's CQ, counter
// and SRX writes its completions and counts there and matches every
// message in the owner's receive queue (GetMsg/GetTag, QueueMsg/QueueTag;
// StartMsg/DiscardMsg when the owner matches or drops a queued one). It
// passes each message's source to a queue it does not own, which decides
// about directed receives; with FI_AV_USER_ID these are the owner's
// fi_addrs. Unexpected data stays with the endpoint until the owner starts
// or discards it, also after the endpoint closed.
//
// # Attributes
//
// As libfabric 1.17's shm where it matters to applications: FI_EP_RDM,
// FI_PROTO_SHM, FI_ADDR_STR, inject_size 4096 (an inject rides in one
// command slot), tx/rx size 1024,
// iov_limit 4, max_msg_size SIZE_MAX, cq_data_size 8, FI_THREAD_SAFE (or as asked),
// FI_RM_ENABLED, msg_order FI_ORDER_SAS. FI_TAGGED, FI_DIRECTED_RECV,
// FI_SOURCE and FI_MULTI_RECV are offered as the hints ask, FI_SOURCE_ERR
// only when the hints name it (a message from a sender not in the AV then
// completes with FI_EADDRNOTAVAIL and the sender's name in err_data,
// whichever way it was received: inline, in segments, by
// process_vm_readv, unexpected). Receives are
// matched by package internal/srx (tag matching, directed receives,
// FI_PEEK/FI_CLAIM/FI_DISCARD, multi-receive buffers, cancellation).
//
// Differences from libfabric's shm: names are not "fi_shm://<pid>";
// endpoints are not limited to 256 per host; scalable endpoints
// (fi_scalable_ep, up to MaxEPCtx transmit and receive contexts,
// FI_NAMED_RX_CTX; a region per context, see scalable.go).
package shm
