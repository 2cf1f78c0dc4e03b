// Package provider is the provider interface of the fabric library: the
// vocabulary shared by the public object model and the providers (error
// numbers, flags, capabilities, attributes, completion entries), the
// operations a provider implements (Provider, Fabric, Domain, Endpoint and
// their optional extensions), the fi_peer(3) owner and peer operations
// through which providers report completions and match receives, and the
// provider registry, and the logging providers use (NewLogger: libfabric's
// FI_LOG_* semantics through log/slog; see Logger).
//
// It plays the role of database/sql/driver: applications use package
// fabric; providers implement this package's interfaces and call Register
// from init.
//
// # What the root package guarantees
//
// Argument and state checks live in package fabric, once for every
// provider (DESIGN principle 2). A provider may rely on the following
// and need not check it again; what is not listed is the provider's to
// check (connection state, addresses in its AV, queue depth, connection
// data size, memory keys at the target ...).
//
// Objects and their life:
//
//   - A provider object is used only through the root object that wraps
//     it. Its Close is called once, after the root refused it (FI_EBUSY)
//     while dependent objects were open or bound. A data call that passed
//     the root's state check may still reach an endpoint while Close runs;
//     the endpoint answers it with EBADF.
//   - Endpoint.Enable is called once, before any data call, Connect or
//     Accept, with a non-nil *Resources whose objects belong to the
//     endpoint's domain (or fabric, for the EQ): SRX is always set (the
//     endpoint's own receive queue or a bound shared context); EQ is set
//     for FI_EP_MSG; AV is set for connectionless endpoints; an endpoint
//     with FI_MSG, FI_TAGGED, FI_RMA or FI_ATOMIC has a TxCQ or a send,
//     read or write counter, and with FI_MSG or FI_TAGGED also an RxCQ or
//     a receive counter. TxFlags/RxFlags carry FlagSelectiveCompletion of
//     the bindings. Nothing is bound after Enable.
//   - Connector.Connect and Accept are called on an enabled endpoint;
//     Shutdown, Cancel and the size-left queries too.
//     PassiveEndpoint.Listen gets the non-nil EQ the root has bound;
//     SetName gets a non-empty address and Reject a non-nil handle.
//
// Data calls (Endpoint.Send, Tagged.TSend, RMA.Read, RMA.Write,
// Atomic.Atomic, and the fast paths Injector.Inject and
// BufSender.SendBuf, which stand for a Send of the Msg they describe) are
// made only when, at the time of the check:
//
//   - the endpoint is enabled and not closed, and has the capability of
//     the call (FI_MSG; FI_TAGGED and a Tagged implementation; FI_RMA and
//     an RMA implementation; FI_ATOMIC, an Atomic implementation and an
//     AtomicDomain domain), otherwise the root returns FI_ENOSYS;
//   - Msg.Flags holds the effective operation flags: the explicit flags
//     of a *Msg call (only those fi_msg(3)/fi_rma(3) define, otherwise
//     FI_EBADFLAGS) or the endpoint's default op_flags; FlagCompletion is
//     set exactly when a successful completion must be written (always,
//     unless the CQ binding is selective and the call did not ask for it;
//     never for the inject calls fi_inject*, fi_inject_write*);
//     FlagInject never on a read; FlagRemoteCQData only when the domain's
//     cq_data_size is not 0;
//   - the sizes are within the limits of the Info the endpoint was opened
//     with: len(IOV) <= tx_attr.iov_limit (IOV is nil when Buf is the one
//     buffer), len(RMA) <= tx_attr.rma_iov_limit and at least 1 (RMAOne is
//     used when RMA is nil), total length <= ep_attr.max_msg_size and,
//     with FlagInject, <= tx_attr.inject_size; for RMA the remote regions
//     add up to exactly the local length. An application may raise these
//     limits in the Info after GetInfo: the provider refuses (EINVAL), at
//     endpoint open, an Info whose limits exceed its own, so that these
//     checks are enough;
//   - Desc/Descs hold one descriptor per local buffer or none, and, when
//     the domain has FI_MR_LOCAL, every non-empty local buffer of a
//     non-inject call lies in a live region of the domain with the access
//     the operation needs (Msg documents the fields);
//   - an operation with FlagCompletion has somewhere to report it (a TxCQ
//     or the operation's counter, otherwise FI_ENOCQ).
//
// Atomic calls (fi_atomic(3)) reach Atomic.Atomic as one AtomicMsg,
// passed by value, whatever form the application used (Atomic, AtomicV,
// AtomicMsg, AtomicInject and the fetch and compare families;
// AtomicMsg.Kind says which). Besides the above, the operation and
// datatype are legal for the family, Count does not exceed what the
// domain's AtomicDomain.QueryAtomic answered for them (the root asks it
// on every call, so it must be a cheap lookup that does not allocate),
// and every buffer holds whole elements: AtomicMsg lists the checks.
//
// Memory descriptors. The application's MRDesc is a *MRRegion (buffers,
// access, key), not a copy or a handle: a provider that needs registered
// memory (shm) reads it directly from Msg.Desc/Descs, AtomicMsg's
// AtomicBufs descriptors and the Desc of a posted receive, with no lookup.
//
// Receives never reach the provider: the root posts them to the receive
// queue (internal/srx), which hands matched and unexpected messages to
// the provider through the SRX owner and peer operations (SRXOwner,
// SRXPeer). Posting limits (rx_attr.iov_limit, FI_MULTI_RECV needing the
// capability, FI_DIRECTED_RECV, FI_EBADFLAGS) are checked there or in the
// root.
//
// # Hooks
//
// A hooking provider (Hook, libfabric's FI_HOOK) is not registered with
// Register but with RegisterHook: the root package installs it over the
// fabric a core provider opened, and it wraps every object opened below
// that fabric, forwarding to the core provider's objects (see Hook for
// what the wrappers must keep). What is guaranteed above holds for the
// calls a hook receives; a hook that changes a call (fault injection)
// keeps those guarantees for the calls it makes to the core provider.
//
// # Resource management (FI_RM_ENABLED)
//
// Unless the domain's resource_mgmt is FI_RM_DISABLED, no completion is
// ever lost (fi_domain(3)). The root opens CQs that never overrun and
// receive queues that reserve room for receive completions; a provider
// reserves room for the completions of its own operations through
// CQReserver, which it finds by type assertion on Resources.TxCQ and
// RxCQ, and returns EAGAIN from a post whose completion has no room (see
// CQReserver for the rules). An imported FI_PEER CQ that does not
// implement CQReserver is written without reservation: whether it keeps
// every entry is its owner's business.
package provider
