// Package progress is the progress and waiting machinery shared by
// completion queues, counters and event queues.
//
// A Set is the list of progress sources (provider endpoints, peer CQs ...)
// bound to one object. Reads of the object call Set.Run, which calls each
// source's Progress inline in the caller's goroutine (FI_PROGRESS_MANUAL):
// no goroutine hand-off, no allocation, no lock on the read side.
//
// A Notifier is how a blocked reader (fi_cq_sread, fi_cntr_wait,
// fi_eq_sread) sleeps. Block spins briefly (SpinDuration of progress and
// re-checks), then registers as parked, re-checks, and parks until one of:
//
//   - the object is notified (a completion or event was written, a counter
//     changed, fi_cq_signal, close);
//   - a source that implements provider.Waiter (or provider.FDWaiter)
//     reports readiness: while anyone is parked, one watcher goroutine per
//     such source waits for readiness with a bounded deadline, runs the
//     Set's progress and notifies; watchers stop when nobody is parked, and
//     back off exponentially when a source keeps reporting readiness without
//     producing anything or its readiness wait fails at once (a closed or
//     not yet enabled endpoint). A watcher runs the Set's progress only
//     while a reader sleeps in Block, and a reader leaves its sleep only
//     after such a run returned: the watchers' progress calls happen
//     inside a reader's blocking call, serialised with that reader's other
//     calls (what FI_THREAD_DOMAIN applications promise for their own),
//     never after Block returned (the source may be closed then);
//   - the deadline passes, the done channel closes, or the Notifier is
//     closed.
//
// Writers call Notify after publishing; with nobody parked it costs one
// atomic load.
//
// FDWait is the FI_WAIT_FD wait object: an epoll descriptor holding an
// eventfd (signalled once per arming, like libfabric's util wait fd) plus
// the descriptors of bound sources that implement provider.FDWaiter.
package progress
