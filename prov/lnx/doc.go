// Package lnx is the "lnx" provider: one FI_EP_RDM endpoint whose peers on
// the same host are reached over shared memory (the shm provider) and whose
// remote peers over tcp's RDM endpoint, joined only through fi_peer(3), as
// libfabric 2.x's lnx does.
//
// The application sees one endpoint, one CQ per direction, one receive
// queue, one AV and one set of counters, all the root package's. At
// Enable, lnx imports them (FI_PEER) into both linked domains: the linked
// endpoints write their completions into the lnx CQs (peer CQ), bump the
// lnx counters (peer counters), match incoming messages against the lnx
// receive queue (peer SRX: a receive posted with FI_ADDR_UNSPEC is matched
// exactly once, in posting order, by whichever path delivers first) and
// use the lnx AV's fi_addrs (peer AV: each linked AV follows the lnx AV and
// keeps, at each fi_addr, its own part of the composite address), so a
// remote keeps one fi_addr across both paths and completions carry it as
// their source (FI_SOURCE). The shm domain imports the tcp domain (peer
// domain), so that the linked domains share one memory registration table.
//
// Linked providers are selected with FI_LNX_PROV_LINKS (EnvLinks): only
// shm+tcp, the default, is accepted. Addresses are described in addr.go:
// FI_ADDR_STR strings "fi_lnx://<host>;<shm>;<tcp>;", where <host>
// identifies the kernel and network namespace; FI_LNX_HOST_ID overrides it
// (tests force the tcp path between endpoints of one host with it).
//
// Capabilities: FI_MSG and FI_TAGGED (send, sendv, sendmsg, senddata,
// inject, injectdata and their tagged forms; receives through the root's
// queue, with directed receive and FI_SOURCE), FI_RMA and FI_ATOMIC (every
// fi_rma(3) and fi_atomic(3) call, posted on the destination's path; the
// atomics both linked domains support, with the smaller count). Memory is
// registered through the lnx domain, whose registration table is the tcp
// domain's (provider.MRSharer), which the shm domain shares as its peer
// domain: one key is valid on both paths, and the linked endpoints check
// remote accesses against it. FI_MULTI_RECV: a multi-receive buffer is
// posted in the root's receive queue, which both paths match against, so
// messages from local and remote peers fill one buffer. An EQ bound to
// the lnx endpoint is imported into both linked fabrics (peer EQ): what a
// linked endpoint reports about itself reaches it as about the lnx
// endpoint (shm and tcp RDM endpoints report no events today).
// FI_RMA_EVENT: remote accesses count on the lnx endpoint's remote
// counters (peer counters) and on counters bound to the region (the one
// table). FI_SOURCE_ERR, when the hints name it: a message from a sender
// not in the AV completes with FI_EADDRNOTAVAIL and the sender's lnx
// address in err_data, which the linked endpoint reports as its path's
// raw address and lnx completes (srcerr.go: an lnx endpoint's shm name is
// derived from its tcp address, so that a sender on this host is named
// whole whichever path it took; a remote sender by its tcp address).
//
// Progress: lnx reads of the linked peer CQs drive both paths (manual
// progress), or the linked providers progress themselves (FI_PROGRESS_AUTO).
// Under manual progress an idle tcp path (nothing posted on it nor
// arrived over it in the last 4096 calls) is polled on every 8th call
// only, so that local traffic costs what it costs over shm alone (see
// Progress in endpoint.go).
// Blocking reads (CQ.SRead, Cntr.Wait) poll both paths with pauses of 20 to
// 500 µs (Waiter), and FI_WAIT_FD objects get a goroutine that drives both
// paths every 500 µs while the endpoint is open: the linked endpoints'
// descriptors are not reachable through FI_PEER imports.
//
// The package imports only the root package, peer and provider (the
// architecture test, internal/archtest, enforces it): the linked providers
// are opened by name, through fabric.GetInfoProvider.
package lnx
