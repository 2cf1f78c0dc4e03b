// Package tcp is the "tcp" provider: connection-oriented endpoints
// (FI_EP_MSG) over TCP, wire-compatible with libfabric 1.17's tcp provider
// (tcpx), so that Go and C endpoints connect and exchange messages, tagged
// messages, remote CQ data and RMA reads and writes in both directions.
//
// Import it for its side effect of registering the provider:
//
//	import _ "github.com/gofabric/fabric/prov/tcp"
//
// # Connection management
//
// A passive endpoint (fabric or domain PassiveEndpoint) listens on its
// source address: the src_addr of its Info, or the first interface address
// (FI_TCP_IFACE selects the interface), with the port given, or a random
// port of [FI_TCP_PORT_LOW_RANGE, FI_TCP_PORT_HIGH_RANGE] when both are
// set, or an ephemeral one. Each connection request is reported on the EQ
// as FI_CONNREQ with the request's connection data; its Info carries the
// peer's address as dest_addr and, as Handle, the request: an endpoint
// opened from that Info adopts the connection and Accept answers it, or
// the passive endpoint's Reject refuses it with data, which the requester
// receives as an EQ error entry with FI_ECONNREFUSED. Both sides report
// FI_CONNECTED (the connecting side with the accept data). Connection data
// is limited to FI_OPT_CM_DATA_SIZE = 256 bytes (read-only option); longer
// data gives FI_EINVAL. FI_SHUTDOWN is reported exactly once per endpoint:
// after a local Shutdown, when the peer shuts down or goes away, or when
// the connection fails.
//
// Options (opts.go): fi_control(FI_BACKLOG) on a passive endpoint is the
// listen(2) backlog (default 4096, capped by net.core.somaxconn), before or
// while listening. FI_OPT_SEND_BUF_SIZE / FI_OPT_RECV_BUF_SIZE set
// SO_SNDBUF / SO_RCVBUF of the MSG endpoint's socket, or of the RDM
// endpoint's listener and every connection, present and future; getopt
// reports the kernel's value (twice the request). FI_OPT_TX_SIZE resizes
// the transmit queue before the endpoint is enabled.
//
// # Data transfer and completions
//
// Send, sendv, sendmsg, inject, senddata and injectdata, tagged sends (op 1
// frames, matched by the peer's receive queue), RMA write, writedata,
// inject write and read (the target checks the key, access and range of
// every region against the domain's registrations; with mr_mode 0 remote
// addresses are offsets into the region). Receives are posted to the
// receive queue (the SRX owner); messages that arrive before a matching
// receive are buffered (up to 64 KiB each, 8 MiB per endpoint) or, beyond
// that and for delivery-complete messages, left in the stream until a
// receive is posted, as libfabric does.
//
// Completions are written in posting order (comp_order FI_ORDER_STRICT).
// A send or write completes when its frame is written to the socket;
// with FI_DELIVERY_COMPLETE, FI_TRANSMIT_COMPLETE or FI_MATCH_COMPLETE the
// frame carries libfabric's delivery-complete flag and the operation
// completes when the peer's ACK arrives (libfabric maps transmit complete
// to delivery complete too); FI_COMMIT_COMPLETE on writes sends the commit
// flag, also ACKed. A read completes when its response has been received.
// FI_INJECT copies the data before returning. FI_FENCE holds an operation
// (and everything posted after it) until all earlier ones have completed.
//
// Differences from libfabric 1.17:
//   - A message larger than the posted receive completes with FI_ETRUNC,
//     len = the bytes placed and olen = the excess, and the connection stays
//     usable: the excess is read from the stream and dropped (libfabric
//     drops the connection, ofiwg/libfabric#8274). The wire is unchanged.
//   - A malformed frame, or an RMA request with a bad key, access or range,
//     ends the connection, as in libfabric, and is also reported as an
//     error completion on the receive CQ (FI_EIO, or the access error)
//     before FI_SHUTDOWN. The initiator of a failed read or
//     delivery-complete write gets an error completion (the connection is
//     gone); a plain write has already completed, as in libfabric, and only
//     FI_SHUTDOWN tells.
//   - A target completion for writedata has flags FI_RMA|FI_REMOTE_WRITE|
//     FI_REMOTE_CQ_DATA and len = the bytes written (libfabric: no FI_RMA,
//     len 0).
//   - Data progress defaults to FI_PROGRESS_MANUAL: progress runs inline in
//     the application's CQ, counter and EQ reads with raw non-blocking
//     system calls. FI_PROGRESS_AUTO adds two goroutines per connected
//     endpoint parked in the runtime's network poller. Control progress is
//     FI_PROGRESS_AUTO by default, as in libfabric (goroutines parked in the
//     poller accept connections and finish connects; reading the EQ also
//     progresses them inline).
//   - FI_TAGGED, FI_MULTI_RECV and FI_FENCE are offered when the hints ask
//     for them (libfabric's tcp lists neither for FI_EP_MSG).
//   - TCP_NODELAY is set on every data connection by default, as in
//     libfabric; FI_TCP_NODELAY=0 turns it off.
//   - A data connection between two loopback addresses (MSG or RDM) uses
//     the reno congestion control (TCP_CONGESTION), not the system's
//     default: there is no network to congest, and bbr's per-ACK model
//     update made a small message's round trip about 3% longer.
//     FI_TCP_LOOPBACK_CC names another algorithm; empty keeps the
//     system's default. libfabric leaves the default.
//   - Passive endpoints, and active endpoints bound to a given source
//     port, have SO_REUSEADDR, as in libfabric: such a port can be bound
//     again while its last connection is in TIME_WAIT. Active endpoints
//     bound to an ephemeral port do not (libfabric sets it on every
//     socket), so fi_setname to the address of such an endpoint fails with
//     FI_EADDRINUSE, as it does to a listening address.
//   - Operations posted between Connect and FI_CONNECTED are queued and
//     sent once connected; posting on an endpoint that is not connected
//     (never, or no longer) returns FI_ENOTCONN.
//   - When the connection ends, the untagged receives still posted to the
//     endpoint's own receive queue complete with FI_ECANCELED (a shared
//     receive context is left alone).
//   - fi_close of an endpoint, on a shared transmit context or not,
//     completes each transmit still outstanding with FI_ECANCELED on its
//     CQ and counter (fi_endpoint(3) allows them to be discarded without
//     completions); fi_shutdown does so before it returns, as fi_cm(3)
//     asks of the operations a provider cancels.
//
// # Progress and the fast path
//
// Under manual progress each Progress call polls the socket with raw
// non-blocking system calls: it reads through a 16 KiB prefetch buffer or
// straight into the destination, and returns as soon as a frame
// completed. An idle connection is polled by that read alone. (A
// zero-timeout poll(2) before each read of an idle connection, which does
// not take the socket lock that a read finding nothing takes, put a
// second system call on the path of every message and cost 2-5% of the
// round trip from 1 B to 1 MiB, MSG and RDM alike, measured against the
// read alone in interleaved runs under SCHED_FIFO.) Transmits are written inline by the posting
// call (writev of the header and the caller's buffers; frames with at most
// 128 bytes of data are copied behind the header and written in one piece;
// several queued frames are gathered into one writev). Steady-state
// send, receive and CQ reads allocate nothing.
//
// # Reliable datagram endpoints (FI_EP_RDM)
//
// The provider also offers FI_EP_RDM, wire-compatible with libfabric
// 1.17's tcp;ofi_rxm (C peers run `fi_pingpong -p tcp -e rdm`): one
// endpoint reaches every peer of its AV over TCP connections opened on
// demand, one per peer, with rxm's connection data, its 64-byte message
// header, eager messages up to 16 KiB (tagged ones without the rxm header,
// as rxm over tcp sends them) and rendezvous by RMA read above. The first
// send to a peer is queued while the connection is set up (never
// FI_EAGAIN for that reason); simultaneous connects resolve into one
// connection as rxm resolves them, also against a C peer. A control
// goroutine (control progress FI_PROGRESS_AUTO) accepts and sets up
// connections; data progress is manual by default, or a goroutine per
// endpoint with FI_PROGRESS_AUTO. Capabilities: FI_MSG, FI_TAGGED,
// FI_RMA (read, write, writedata, inject write: the tcp RMA frames over the
// peer's connection, as rxm passes RMA through), FI_MULTI_RECV, and on
// request FI_ATOMIC (rxm's atomic request and response packets, the
// operations of internal/atomics), FI_RMA_EVENT, FI_FENCE, FI_SOURCE,
// FI_SOURCE_ERR, FI_DIRECTED_RECV. With FI_OFI_RXM_ENABLE_DYN_RBUF=0 (as
// for rxm), messages above 16 KiB up to the SAR limit (FI_OFI_RXM_SAR_LIMIT,
// default 128 KiB) go by segmentation and reassembly; SAR from a C peer is
// received whatever the setting. FI_DELIVERY_COMPLETE sends complete on the
// peer's ACK, writes always do (so that a refused write completes in error).
// The target checks every RMA and atomic access against its registrations:
// a C peer's refused RMA access ends the connection, as the C tcp provider
// does; between two of our endpoints the refusal is reported (an extension
// the two recognise in the connection data) and the connection stays. A
// malformed frame from a peer ends that peer's connection only; its
// operations complete in error. Unexpected messages are held up to
// RDMMaxUnexpected messages and RDMMaxUnexpectedBytes (SAR ones by their
// whole length); beyond (and, with FI_RM_ENABLED, while the receive CQ has
// no room) the endpoint stops reading the connection that brought the next
// message, so that its sender backs up: nothing is dropped. Idle
// connections beyond RDMMaxConns per endpoint (FI_TCP_RDM_MAX_CONNS, 0 for
// no bound) are closed gracefully, least recently used first, and reopened
// by whichever side sends next (see rdm_conn.go; a C peer sees a peer
// closing its connection and reconnects on its next send).
//
// Between two endpoints of this implementation (they recognise each other
// by a marker byte in the padding of rxm's connection data, which rxm
// zeroes and never reads; internal/wire/rxmwire), two extensions replace
// rxm's rendezvous, whose four messages cost a 64 KiB message twice what
// one MSG message costs. A message above the eager limit up to
// FI_TCP_RDM_STREAM_LIMIT (default 16 MiB; 0 turns streaming off) goes
// whole in one frame (rxmwire.TypeGoEager) written from the application's
// buffer and read straight into the matching receive; unexpected, it is
// buffered whole against the unexpected-message bound, beyond which the
// connection is not read (backpressure, as for eager messages); see
// rdm_stream.go. A message of at least FI_TCP_RDM_CMA_MIN bytes (default
// 768 KiB) to a peer on the same host is announced by a rendezvous
// request carrying its address (rxmwire.TypeGoCMAReq), and the receiver
// copies it from the sender's memory with process_vm_readv(2) once it has
// proved the peer's pid (a nonce it sent must be found at the address the
// sender names); otherwise, or with FI_TCP_RDM_CMA=0, it reads it with
// rxm's tcp read request (rdm_cma.go). The first messages to a peer, sent
// while the first connection to it is set up, use rxm's protocols. Towards
// a C peer nothing changes on the wire. RDM connections have 4 MiB socket
// buffers unless FI_OPT_RECV_BUF_SIZE / FI_OPT_SEND_BUF_SIZE say otherwise
// (with the kernel's autotuning, a message of a few hundred KiB often
// waited for the receiver's window).
//
// Environment: FI_TCP_IFACE, FI_TCP_PORT_LOW_RANGE, FI_TCP_PORT_HIGH_RANGE,
// FI_TCP_TX_SIZE, FI_TCP_RX_SIZE (default 256), FI_TCP_NODELAY, FI_TCP_LOOPBACK_CC,
// FI_OFI_RXM_ENABLE_DYN_RBUF, FI_OFI_RXM_SAR_LIMIT, FI_TCP_RDM_MAX_CONNS,
// FI_TCP_RDM_STREAM_LIMIT, FI_TCP_RDM_CMA, FI_TCP_RDM_CMA_MIN (RDM). As in libfabric, these are the sizes fi_getinfo reports when the
// hints name none; hints may ask for up to 1024 (tx) and 65536 (rx), and an endpoint
// on a shared receive context gets an rx size of 65536 by default.
//
// RDM endpoints also come as scalable endpoints (fi_scalable_ep, up to
// MaxEPCtx transmit and receive contexts, FI_NAMED_RX_CTX), which
// tcp;ofi_rxm 1.17 lacks: an RDM endpoint per context, receive context i
// listening on the port base+i, see scalable.go. A transmit context tells
// a peer of this implementation, in the first frame of each connection
// (rxmwire.TypeGoSource), the scalable endpoint's port, so that the peer
// reports the scalable endpoint as the source of its messages; a C peer
// is told nothing and reports FI_ADDR_NOTAVAIL.
//
// Buffered receives (FI_BUFFERED_RECV) are offered on both endpoint
// types: bufrecv.go for FI_EP_MSG, rdm_bufrecv.go for FI_EP_RDM (where a
// rendezvous message is reported once its first FI_OPT_BUFFERED_MIN bytes
// have been read from the sender, and the rest is read when it is
// claimed).
package tcp
