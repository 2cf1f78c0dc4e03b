// Package chaos is the hook "chaos": a hooking provider (libfabric's
// FI_HOOK, provider.Hook) that layers over any provider, to inject the
// faults real fabrics inflict so that applications can test what they do
// about them, seeded and counted, or to trace every call and completion.
//
// # Selecting it
//
// Like libfabric's hooks, chaos is not a provider of its own: GetInfo
// answers as before, and the hook is installed over the fabric a core
// provider opens, seeing every call made on it and on every object opened
// below it (domains, endpoints, passive endpoints, scalable endpoints and
// their contexts). The fabric keeps the core provider's name. Two ways:
//
//   - the environment: FI_HOOK=chaos with the usual provider selection
//     (FI_PROVIDER=tcp, or hints naming the provider), configured by the
//     FI_CHAOS_* variables (EnvSeed, EnvError, EnvDrop, EnvDup, EnvDelay,
//     EnvDelayTime, EnvReorder, EnvReorderTime, EnvTrace), read at each
//     fabric.Open; Env
//     returns that hook, for its controls and counters:
//
//     FI_HOOK=chaos FI_CHAOS_TRACE=1 FI_LOG_LEVEL=trace FI_PROVIDER=udp ./app
//
//   - Go: New(&Config{...}) and fabric.OpenHooked(info, hook), or Open,
//     which does both, with info from fabric.GetInfo naming the provider
//     below:
//
//     infos, _ := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, hints)
//     fab, hook, err := chaos.Open(infos[0], &chaos.Config{Trace: true})
//
// # Mapping
//
//	FI_HOOK=chaos     fabric.OpenFabric installs Env(); fabric.OpenHooked(info, New(cfg))
//	FI_CHAOS_SEED     Config.Seed
//	FI_CHAOS_ERROR    Config.Error
//	FI_CHAOS_DROP     Config.Drop
//	FI_CHAOS_DUP      Config.Dup
//	FI_CHAOS_DELAY    Config.Delay (FI_CHAOS_DELAY_TIME: Config.DelayTime)
//	FI_CHAOS_REORDER  Config.Reorder (FI_CHAOS_REORDER_TIME: Config.ReorderTime)
//	FI_CHAOS_TRACE    Config.Trace
//	(none)            Hook.Configure, Hook.Kill, Hook.Partition, Hook.Heal, Hook.Stats
//
// # Transparency
//
// With the zero Config every call is forwarded unchanged (the transmit
// calls after two atomic loads, allocating nothing: TestPassThroughZeroAllocs)
// and the root package sees the core provider's objects with the same
// optional operations: the conformance suite passes over udp, tcp
// (FI_EP_MSG and FI_EP_RDM) and shm through chaos (conformance_test.go).
// Events the core objects report about themselves reach the event queue
// as about the hooked objects. (The send counter of a datagram endpoint
// is wrapped, to keep duplicates uncounted should Hook.Configure turn Dup
// on later: one more atomic load per increment.)
//
// # Faults
//
// Faults act on the transmits of the hook's endpoints (send, tagged send,
// inject, RMA read and write, atomics), drawn per endpoint from a random
// stream seeded with Config.Seed (see Config), and keep the promises of the
// endpoint type. The fabric's Config applies to all its endpoints;
// Hook.Configure gives one endpoint (by address) faults of its own, at
// any time. The faults:
//
//   - Error (all types): the transmit is not started and completes with an
//     error completion, Err ErrInjected (FI_EIO), as fi_cq(3) defines
//     them: CQ.Read answers FI_EAVAIL and CQ.ReadErr returns the entry with
//     the operation's context and flags (an inject's entry has no
//     context); the counter's error value is bumped. Error completions are
//     written whatever the selective completion flags, so nothing on a
//     reliable endpoint is silently lost. Under resource management the
//     room is reserved first: a full CQ makes the post return FI_EAGAIN.
//   - Drop (FI_EP_DGRAM sends only, the one type that allows loss): the
//     datagram is not sent; the send completes successfully, as a sent
//     datagram does.
//   - Dup (FI_EP_DGRAM sends only): the datagram is sent twice; the
//     application sees one completion and one counter increment.
//   - Delay: the transmit is held for Config.DelayTime, then posted.
//     Transmits posted meanwhile queue behind it, so no ordering promise is
//     broken.
//   - Reorder (endpoints without FI_ORDER_SAS in tx_attr.msg_order): the
//     transmit is held until the endpoint's next transmit has been posted,
//     which thus overtakes it (or until Config.ReorderTime has passed).
//   - Kill(addr), Partition(d, addrs...): transmits to a killed peer (and
//     a killed endpoint's own), or across a partition while it lasts,
//     complete at once in error, Err ErrCut (FI_EHOSTUNREACH), on
//     FI_EP_RDM and FI_EP_MSG, and are dropped (they complete successfully
//     and are not sent) on FI_EP_DGRAM. Heal revives every peer and ends
//     every partition. A peer is named by its address bytes (Endpoint.Name,
//     or for a connected FI_EP_MSG endpoint its peer, Endpoint.Peer, which
//     is its destination). Controls work on a hook without any fault
//     configured; once one is used, the hook's endpoints check every
//     transmit's destination.
//
// Held transmits are posted by the endpoint's progress (the CQ and
// counter reads that drive it, and blocking reads such as CQ.SRead, which
// wake when one falls due) and, where the domain is FI_THREAD_SAFE, by a
// timer as well: nothing depends on the timer's goroutine running while
// the application spins on a CQ. A held transmit the core endpoint
// refuses with FI_EAGAIN stays held and is retried; another error becomes
// its error completion (the application's post had succeeded). Cancel
// finds held transmits (FI_ECANCELED error completion), and Close posts
// what is held before it closes the core endpoint (what the core refuses
// then is canceled). An inject's data is copied when it is held. Under
// resource management a held transmit that will complete keeps room for
// its completion in the transmit CQ (a post without room answers
// FI_EAGAIN, as the core provider's would). A held transmit's destination
// fi_addr is resolved when it is posted to the core provider: removing
// the address from the AV meanwhile changes where it goes. The slow path
// of a transmit that is not held allocates nothing (a held one is copied).
// With Delay on (FI_CHAOS_DELAY=0.2) the conformance suite passes over
// every provider but for its zero-allocation cases (held transmits
// allocate) and fi_av/remove_reinsert_live_peer over udp (that late
// resolution).
//
// Stats counts every fault injected. Receives, and the completions of the
// operations the core provider ran, are not altered: a fault is injected
// where the transmitting endpoint is hooked (a kill or partition cuts both
// directions between two endpoints of one hook; in another process, the
// peer's own hook must be told). Operations the core provider had started
// before a kill are left to finish as the core provider finishes them.
//
// # Trace
//
// Config.Trace (FI_CHAOS_TRACE=1), like libfabric's trace hook, logs
// through the library's logging (log/slog, see fabric.SetLogHandler), at
// libfabric's trace level (FI_LOG_LEVEL=trace), as provider "chaos":
//
//   - each transmit (subsystem ep_data; message fi_send, fi_tsend,
//     fi_read, fi_write or fi_atomic) when the call returns, with the
//     endpoint (ep=, numbered in order of opening under the hook), the
//     destination fi_addr, flags, length (or atomic kind, op and count),
//     tag, context, the error number returned (err=, 0 for success) and
//     the time the call took (dur=);
//   - each control call of an endpoint (ep_ctrl: fi_enable, with the
//     endpoint's address, fi_connect, with the peer's, fi_accept,
//     fi_shutdown, fi_cancel, fi_close) with its result;
//   - each completion written to the endpoint's CQs (cq; "completion" or
//     "error completion"), with the CQ (cq=tx or rx), flags, length, tag,
//     source, context, error, and whether room had been reserved for it.
//
// Each record has slog's time. Tracing changes no result: the conformance
// suite passes with it (TestConformanceChaosTraceTCPRDM). Receive
// completions then take the receive queue's general path (the room it
// reserved in the CQ is given back and the entry written beyond it, which
// a CQ with resource management keeps) and the datagram receive fast path
// of udp is not taken.
//
// The package imports only the root package and provider (the
// architecture test, internal/archtest, enforces it): it wraps the core
// provider's objects through the provider SPI (provider.Hook).
package chaos
