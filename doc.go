// Package fabric is a pure-Go implementation of the libfabric 1.17
// programming model: fabrics, domains, endpoints, completion queues,
// counters, address vectors, event queues, memory registration, message,
// tagged and RMA transfers, and the provider sharing of fi_peer(3).
//
// Providers register themselves by name (like database/sql drivers); import
// the ones you want, or github.com/gofabric/fabric/prov/all for every one:
//
//	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, hints)
//	fab, err := fabric.Open(infos[0])
//	dom, err := fab.OpenDomain(infos[0])
//	cq, err := dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
//	av, err := dom.OpenAV(&fabric.AVAttr{Type: fabric.AVTable})
//	ep, err := dom.OpenEndpoint(infos[0])
//	ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv)
//	ep.BindAV(av)
//	ep.Enable()
//
// (The sketch leaves out error handling; Example_dgram and Example_msg are
// complete programs that go test runs: udp datagrams, and the tcp
// connection sequence.)
//
// Data-transfer calls never block; they return ErrAgain when a queue is
// full, and reading the bound CQ makes progress. Errors are libfabric's
// (see Errno); test them with errors.Is.
//
// Logging is libfabric's (FI_LOG_LEVEL, FI_LOG_PROV, FI_LOG_SUBSYS) through
// log/slog: warnings go to standard error by default, and SetLogHandler
// hands the records to the application's own slog.Handler.
//
// # API decisions
//
// These shapes are fixed on purpose, before more providers copy them.
//
// Memory descriptors. A data call's desc argument is an MRDesc (from
// MR.Desc), not an untyped value: nil means none, and a []MRDesc vector
// has one element per buffer. An MRDesc is deliberately a pointer to the
// registration itself (its buffers, access and key), not a copy or an
// opaque handle: passing one costs nothing and allocates nothing, and the
// provider reads the registered memory through it with no lookup.
// Applications may rely on its methods Key, Access, Base, Segments and
// Contains (nil-safe, see MRDesc) and on comparing descriptors;
// Registration is for the root package and providers. Where the domain's
// MRMode has FI_MR_LOCAL the
// root checks, once per call and without allocating, that every non-empty
// buffer has the descriptor of a live region of the domain that covers it
// and allows the call's access (fi_mr(3) access bits); otherwise the call
// returns ErrInval. The inject calls take no descriptor (the buffer is
// copied before they return).
//
// RMA names. The fi_rma(3) calls carry an RMA prefix, as the tagged calls
// carry T: RMARead, RMAReadV, RMAReadMsg, RMAWrite, RMAWriteV,
// RMAWriteMsg, RMAWriteData, RMAInjectWrite, RMAInjectWriteData. A bare
// Read or Write on an endpoint would read like io.Reader/io.Writer, which
// these one-sided calls are not.
//
// Atomics. fi_atomic(3) is designed in full: AtomicOp (enum fi_op) and
// Datatype (enum fi_datatype, including FI_INT128/FI_UINT128) with
// libfabric's values and names; local operands are byte slices holding a
// whole number of elements (an fi_ioc), remote targets are RMAIOC
// (fi_rma_ioc), MsgAtomic is fi_msg_atomic. The families are Atomic,
// AtomicV, AtomicMsg, AtomicInject; FetchAtomic, FetchAtomicV,
// FetchAtomicMsg; CompareAtomic, CompareAtomicV, CompareAtomicMsg. The
// limits have one source, the domain's fi_query_atomic
// (Domain.QueryAtomic): the endpoint queries AtomicValid,
// FetchAtomicValid and CompareAtomicValid are its answer for the family
// once the endpoint's capabilities allow the operation, and every atomic
// call is checked against it. An op or datatype outside the enums answers
// ErrOpNotSupp, as libfabric 1.17's ofi_atomic_valid does. This package
// validates every argument once, before the provider sees the call
// (capabilities, state, operation and datatype ranges and families,
// element counts against the valid count, result and compare sizes, iov
// and rma_iov limits, flags, descriptors), so every provider answers bad
// arguments alike. No provider claims FI_ATOMIC yet, so these calls return
// ErrNoSys.
//
// Typed parameters. Where the set of legal values is known the parameter
// is typed: Endpoint.Bind takes a Bindable (implemented only by *CQ,
// *Cntr, *AV, *EQ, *SRX and *STX; BindCQ ... BindSTX are the typed
// forms), fi_control's commands are methods (FI_GETOPSFLAG/FI_SETOPSFLAG:
// Endpoint.OpsFlags/SetOpsFlags; FI_ENABLE: Enable; FI_GETWAIT: WaitFD of
// CQs, counters and EQs; FI_BACKLOG: PassiveEndpoint.SetBacklog), AV.EPAddr takes
// anything with an address (peer.Named, e.g. an *Endpoint). The operation
// context (ctx, Msg.Context) stays any: it is the application's opaque
// cookie, returned unchanged in completions, and a pointer stored in an
// interface does not allocate. PassiveEndpoint.Reject's handle stays any as well:
// it is the provider's opaque token from an EventConnReq's Info.Handle.
// GetOpt and SetOpt (and their Bytes forms) keep fi_getopt's int level
// and name: besides OptEndpoint and the Opt* names it defines, a provider
// may define levels and options of its own, which a closed Go type could
// not name.
//
// Valid objects. An object is nil or comes from its constructor
// (Fabric.OpenDomain, Domain.OpenEndpoint ...). A nil object is handled
// (see Nil objects); a zero-value struct such as &fabric.Endpoint{} is
// neither, and its methods' behaviour is undefined.
//
// Versions. APIVersion is a constant (FI_VERSION(1, 17)); Version builds
// other values.
//
// Resource management. Under FI_RM_ENABLED (the default of the tcp and
// udp providers, DomainAttr.ResourceMgmt) a CQ never overruns and no
// completion is lost, and a CQ's Size is what caps the operations in
// flight: a post whose completion the CQ has no room for returns ErrAgain
// (fi_domain(3) "Tx CQ" / "Rx CQ") and starts nothing, until the
// application reads the CQ; a received message whose completion has no
// room waits in the stream (tcp) or the socket buffer (udp). Entries that
// cannot be refused at post time (errors of operations posted without
// FI_COMPLETION, cancellations, FI_MULTI_RECV releases) are kept beyond
// Size, like the overflow list of libfabric's util CQ, and further posts
// wait until they are read. libfabric 1.17's tcp;ofi_rxm takes five sends
// on a size-2 CQ and reports five completions from its overflow list; we
// refuse the third post with ErrAgain until the CQ is read, so that a
// small CQ throttles the sender instead of growing without bound and the
// overflow list stays for the entries nobody can refuse. Size CQs for the
// operations you keep in flight.
//
// Nil objects. Every method of every object type accepts a nil receiver,
// as *os.File does: methods with an error result return ErrInval, the
// others zero values (AddrNotAvail for addresses). Nothing panics.
//
// Timeouts. Blocking calls (CQ.SRead, CQ.SReadFrom, EQ.SRead, Cntr.Wait,
// Wait.Wait)
// take a time.Duration: negative waits forever (C's -1), 0 checks once
// without waiting, otherwise it bounds the wait. On timeout they return
// what the C call returns: ErrAgain (fi_cq_sread, fi_eq_sread) or
// ErrTimedOut (fi_cntr_wait, fi_wait).
//
// Wait and poll sets. A Wait (fi_wait_open) belongs to a fabric; CQs,
// counters and EQs of that fabric join it at open (WaitObj WaitSet and the
// WaitSet attribute; a set of another fabric is ErrInval) and hold it open
// (Close answers ErrBusy). A write to a member marks it ready, so Wait
// looks only at marked members: a 64-CQ set costs a waiter what a one-CQ
// set does (BenchmarkWaitSet). A CQ or EQ is work while it holds entries;
// a counter's change and fi_cq_signal are work once. Wait drives the
// members' progress as SRead does, with the same rule: our goroutines
// call a provider's Progress only inside an application's call. A Poll
// (fi_poll_open) belongs to a domain and reports its members (*CQ, *Cntr:
// the sealed Pollable) that have work, in place of fi_poll's contexts,
// which Go objects do not carry; members cannot close until Del.
//
// Context forms. Each blocking call has a form bounded by a
// context.Context instead, named as Go names them (net.Dialer.DialContext,
// sql.DB.QueryContext): the same name plus Context, ctx first, the same
// arguments without the timeout: CQ.SReadContext, CQ.SReadFromContext,
// EQ.SReadContext, Cntr.WaitContext, Wait.WaitContext. When the context ends first, the
// error is a *WaitError with two identities under errors.Is: the C call's
// error (ErrAgain, ErrTimedOut; ErrCanceled for a cancelled context) and
// ctx.Err(). No data-path call takes a context.
//
// Peer types. No exported signature or field names package provider, the
// SPI: the owner operations of fi_peer(3) (CQ.Owner, Cntr.Owner,
// SRX.Owner, EQ.Owner, CQAttr.Peer, CntrAttr.Peer, PeerSRX.Owner,
// AV.Query's peer.AVAttr) and the import contexts (AVAttr.Peer,
// AVSetAttr.Peer, EQAttr.Peer, OpenTransferEndpoint's
// peer.TransferContext) are package peer's types, aliases of the SPI's interfaces
// documented where users read them. The vocabulary types of this package
// (Info, CQEntry, EQEntry, WaitObj ...) are aliases of the SPI's too, and
// each is documented here in full, so that go doc never sends a user to
// package provider.
//
// Zero values. The zero value (or nil pointer) of every attribute struct
// is a useful default, as a nil quic-go Config is: a CQ, counter or EQ
// opened with nil or a zero attr has sized defaults and a wait object
// (WaitUnspec), so its blocking calls work. Go's WaitObj numbering differs
// from C's for this (WaitUnspec is 0; String keeps libfabric's names):
// WaitNone, a queue that is only polled, must be asked for. A blocking
// call on an object that cannot block returns an *OpError naming the call
// ("fi_eq_sread") that matches ErrNoSys.
//
// # Mapping from libfabric calls
//
//	fi_getinfo                  GetInfo
//	fi_dupinfo / fi_allocinfo   Info.Dup / AllocInfo
//	fi_freeinfo                 none: garbage collected
//	fi_tostr / fi_tostr_r       InfoToString (FI_TYPE_INFO); String of Caps, Flags, EPType ... for the other types
//	fi_getparams / fi_freeparams  EnvVars (freeing: none, garbage collected)
//	fi_version / FI_VERSION     Version; APIVersion is FI_VERSION(1, 17)
//	fi_fabric                   Open, OpenFabric; with hooks (FI_HOOK): OpenHooked
//	fi_domain                   Fabric.OpenDomain
//	fi_domain2 (FI_PEER)        Fabric.OpenPeerDomain
//	fi_domain_bind              Domain.BindEQ
//	fi_passive_ep / fi_pep_bind / fi_listen / fi_reject
//	                            Fabric.OpenPassiveEndpoint / PassiveEndpoint.Bind / Listen / Reject
//	fi_eq_open                  Fabric.OpenEQ
//	fi_cq_open                  Domain.OpenCQ
//	fi_cntr_open                Domain.OpenCntr
//	fi_av_open                  Domain.OpenAV
//	fi_mr_reg / regv / regattr  Domain.RegMR / RegMRv / RegMRAttr
//	fi_endpoint                 Domain.OpenEndpoint
//	fi_endpoint2                Domain.OpenEndpoint2 (FI_PEER_TRANSFER: see OpenTransferEndpoint)
//	fi_scalable_ep              Domain.OpenScalableEndpoint
//	fi_stx_context              Domain.OpenSTX
//	fi_srx_context              Domain.OpenSRX
//	fi_close                    Close on every object
//	fi_ep_bind                  Endpoint.Bind (a Bindable), BindCQ, BindCntr, BindAV, BindEQ, BindSRX, BindSTX
//	fi_scalable_ep_bind         ScalableEndpoint.Bind
//	fi_tx_context / fi_rx_context  ScalableEndpoint.TxContext / RxContext
//	fi_enable                   Endpoint.Enable
//	fi_ep_alias (fi_alias)      Endpoint.Alias
//	fi_control (GETOPSFLAG, SETOPSFLAG, ENABLE)  Endpoint.OpsFlags, SetOpsFlags, Enable
//	fi_control (FI_BACKLOG)     PassiveEndpoint.SetBacklog / Backlog
//	fi_getopt / fi_setopt       Endpoint.GetOpt / SetOpt (GetOptBytes / SetOptBytes)
//	fi_cancel                   Endpoint.Cancel
//	fi_getname / fi_setname / fi_getpeer  Endpoint.Name (GetName) / SetName / Peer
//	fi_connect / fi_accept / fi_shutdown  Endpoint.Connect / Accept / Shutdown
//	fi_tx_size_left / fi_rx_size_left     Endpoint.TxSizeLeft / RxSizeLeft
//	fi_send / sendv / sendmsg / senddata / inject / injectdata
//	                            Endpoint.Send / SendV / SendMsg / SendData / Inject / InjectData
//	fi_recv / recvv / recvmsg   Endpoint.Recv / RecvV / RecvMsg
//	struct fi_recv_context (FI_BUFFERED_RECV)  RecvContext: a buffered receive's OpContext, claimed or
//	                            discarded by RecvMsg / TRecvMsg with FI_CLAIM / FI_DISCARD (see RecvContext)
//	fi_tsend ... fi_tinjectdata, fi_trecv / trecvv / trecvmsg
//	                            Endpoint.TSend ... TInjectData, TRecv / TRecvV / TRecvMsg
//	fi_read / readv / readmsg   Endpoint.RMARead / RMAReadV / RMAReadMsg
//	fi_write / writev / writemsg / writedata / inject_write / inject_writedata
//	                            Endpoint.RMAWrite / RMAWriteV / RMAWriteMsg / RMAWriteData /
//	                            RMAInjectWrite / RMAInjectWriteData
//	fi_atomic / atomicv / atomicmsg / inject_atomic
//	                            Endpoint.Atomic / AtomicV / AtomicMsg / AtomicInject
//	fi_fetch_atomic / fetch_atomicv / fetch_atomicmsg
//	                            Endpoint.FetchAtomic / FetchAtomicV / FetchAtomicMsg
//	fi_compare_atomic / compare_atomicv / compare_atomicmsg
//	                            Endpoint.CompareAtomic / CompareAtomicV / CompareAtomicMsg
//	fi_atomicvalid / fetch_atomicvalid / compare_atomicvalid
//	                            Endpoint.AtomicValid / FetchAtomicValid / CompareAtomicValid
//	fi_query_atomic             Domain.QueryAtomic (FlagFetchAtomic, FlagCompareAtomic, FlagTagged)
//	fi_cq_read / readfrom / readerr       CQ.Read / ReadFrom / ReadErr
//	fi_cq_sread / sreadfrom     CQ.SRead / SReadFrom (SReadContext / SReadFromContext)
//	fi_cq_signal / fi_cq_strerror         CQ.Signal / CQ.StrError
//	fi_control(FI_GETWAIT) / fi_trywait   CQ.WaitFD / CQ.TryWait (also Cntr, EQ)
//	FI_GETWAIT of FI_WAIT_POLLFD  CQ.WaitPollFD (also Cntr, EQ): []PollFD + change index
//	fi_wait_open / fi_wait      Fabric.OpenWait / Wait.Wait (WaitContext); members: CQAttr,
//	                            CntrAttr, EQAttr WaitObj WaitSet + WaitSet; Wait.WaitFD, TryWait
//	fi_poll_open / add / del / fi_poll   Domain.OpenPoll / Poll.Add / Del / Poll
//	fi_trywait (fabric, fids)   Fabric.TryWait(objs ...TryWaiter)
//	fi_cntr_read / readerr / add / set / adderr / seterr / wait
//	                            Cntr.Read / ReadErr / Add / Set / AddErr / SetErr / Wait (WaitContext)
//	fi_eq_read / readerr / sread / write / strerror
//	                            EQ.Read / ReadErr / SRead (SReadContext) / Write / StrError
//	fi_av_insert / insertsvc / insertsym / remove / lookup / straddr
//	                            AV.Insert (InsertWithErrors) / InsertSvc / InsertSym / Remove / Lookup / StrAddr
//	fi_av_set                   AV.OpenSet (AVSetAttr)
//	fi_av_set_union / intersect / diff / insert / remove / addr
//	                            AVSet.Union / Intersect / Diff / Insert / Remove / Addr; members: Members, Len
//	fi_rx_addr                  RxAddr
//	fi_mr_key / fi_mr_desc / fi_mr_bind / fi_mr_enable  MR.Key / Desc (an MRDesc) / Bind / Enable
//	fi_strerror                 StrError (and Errno.Error)
//	fi_tc_dscp_set / get        TCDSCPSet / TCDSCPGet
//	FI_PEER imports (fi_peer(3))  CQAttr.Peer, CntrAttr.Peer, Domain.OpenSRX with PeerSRX,
//	                            AVAttr.Peer (fi_av_open), AVSetAttr.Peer (fi_av_set), EQAttr.Peer (fi_eq_open);
//	                            owner ops of our objects: CQ.Owner, Cntr.Owner, SRX.Owner, EQ.Owner,
//	                            AV.Query / AV.EPAddr (and ForeachAddr / OnChange / OnChangeAt / AddrAt,
//	                            followed by an imported AV),
//	                            AVSet.Members; the interfaces are in package peer
//	fi_endpoint with FI_PEER_TRANSFER (fi_peer_transfer_context)
//	                            Domain.OpenTransferEndpoint
//	fi_export_fid / fi_import_fid  the owner operations above (export) and the FI_PEER
//	                            opens (import); fi_import_log: SetLogHandler
//
// Not offered: fi_av_bind (deprecated); the collective calls (fi_join,
// fi_join_collective, fi_mc_addr, fi_barrier,
// fi_broadcast, fi_allreduce, fi_allgather, fi_alltoall, fi_gather,
// fi_scatter, fi_reduce, fi_reduce_scatter, fi_query_collective);
// triggered operations
// (fi_trigger); fi_mr_refresh, fi_mr_raw_attr,
// fi_mr_map_raw and fi_mr_unmap_key; fi_open_ops, fi_set_ops, fi_open,
// fi_get_val and fi_set_val; fi_nic. The provider-side calls of
// fi_provider(7) (fi_prov_ini, fi_param_define, fi_param_get_*, fi_log_*)
// belong to writing a provider, not to this package. fi_export_fid is
// "reserved for future use" in fi_peer(3) and an fi_control in C; here
// an object is exported to a peer by its owner operations (CQ.Owner,
// Cntr.Owner, SRX.Owner, EQ.Owner, the AV and AVSet themselves), which the
// peer imports with the FI_PEER form of its open call.
package fabric
