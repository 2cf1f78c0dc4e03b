// Package cq is the completion queue machinery (fi_cq(3)) behind
// fabric.CQ: a bounded ring of completions in which error completions keep
// their place (an error written after successes is reported after them),
// the four entry formats, overrun, FI_SOURCE / FI_SOURCE_ERR source
// addresses, err_data ownership rules, fi_cq_signal, blocking reads with
// FI_CQ_COND_THRESHOLD, and the wait objects (via package progress).
//
// A *CQ implements provider.CQOwner (fi_ops_cq_owner of fi_peer(3)):
// providers write completions with Write and WriteErr; the CQ does the
// locking, the signalling of waiters and the overrun handling.
//
// Hot paths do not allocate: Write, Read (including an empty read that
// returns EAGAIN) and, once the error queue has grown to its working size,
// WriteErr and ReadErr.
//
// Read semantics, summarised:
//
//   - entries are returned oldest first, up to len(entries); a read stops
//     before an error entry, and returns EAVAIL when an error entry is at
//     the head (ReadErr then returns it);
//   - an empty CQ first drives progress of the bound sources, then returns
//     EAGAIN; a completion written with WriteMsg during that progress call
//     while the CQ is still empty is handed to the reader directly (no
//     ring slot, no lock), which is the order the ring would give;
//   - a read that takes entries fires the kicks armed with NotifyRoom
//     (provider.RoomNotifier), as do Unreserve and Close: providers that
//     stopped receiving for lack of room sleep until then;
//   - after an overrun (a write found the CQ full; never with
//     Config.ResourceMgmt, see provider.CQReserver) no further completion is
//     accepted; reads return the entries that were queued and then EOVERRUN
//     for good, as fi_cq(3) NOTES say;
//   - a read with an empty slice only drives progress and reports the state:
//     0 if entries are queued, EAVAIL if an error is at the head, EOVERRUN
//     after an overrun, EAGAIN if empty.
package cq
