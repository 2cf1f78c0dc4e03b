// Package sim is the "sim" provider: a deterministic simulated fabric in
// one process (or, in its cross-process mode, between the processes of
// one host), with virtual time, for testing applications at scale
// (thousands of endpoints) and under latency, bandwidth limits and loss,
// without sockets or shared memory. Importing it registers the provider:
//
//	import _ "github.com/gofabric/fabric/prov/sim"
//
// It offers FI_EP_RDM (reliable, FI_ORDER_SAS) and FI_EP_DGRAM
// (unreliable, unordered) endpoints with FI_MSG and FI_TAGGED, matched by
// the shared receive queue (package internal/srx: FI_DIRECTED_RECV,
// FI_MULTI_RECV, FI_SOURCE, FI_PEEK/FI_CLAIM/FI_DISCARD, cancellation,
// shared receive contexts and fi_peer(3) imports), remote CQ data
// (cq_data_size 8), shared transmit contexts, counters and every wait
// object; FI_EP_RDM also has FI_RMA and FI_ATOMIC with FI_RMA_EVENT
// (rma.go, atomic.go: memory keys, access and ranges checked at the
// target through the domain's registrations, mr_mode 0, rma_iov_limit
// 4; atomics from the shared table of internal/atomics, without
// FI_LONG_DOUBLE). Scalable endpoints, FI_BUFFERED_RECV and
// FI_SOURCE_ERR are not offered.
//
// # Networks
//
// A Network is one simulated fabric: its endpoints, the messages in
// flight between them, a virtual clock and a seeded random number
// generator. The fabric name (fabric_attr.name) selects it: the default
// network "sim" is configured from the environment at first use;
// NewNetwork registers others with a Config, for tests that want their
// own clock, seed and links:
//
//	nw, _ := sim.NewNetwork("test-1", sim.Config{Seed: 7,
//		Default: sim.Link{Latency: 2 * time.Microsecond, Bandwidth: 12.5e9}})
//	defer nw.Close()
//	hints.FabricAttr.Name = "test-1" // then fabric.GetInfo, Open ... as usual
//
// Each direction between two endpoints is a Link (Config.Default, or
// Config.Links for a pair of endpoint ids): a message of n bytes waits
// until the link is free, occupies it n/Bandwidth seconds, then arrives
// Latency plus a random Jitter later. A transmission is lost with
// probability Loss: a DGRAM message is dropped (its send still
// completes); an RDM message is retransmitted after Config.RTO, as many
// times as the draws say, so loss shows as delay and nothing is lost.
// An RDM message never overtakes an earlier one on its link.
//
// Environment variables configure the default network:
//
//	FI_SIM_SEED       seed of loss and jitter draws (default 0)
//	FI_SIM_LATENCY    one-way latency, a Go duration such as 5us (default 0)
//	FI_SIM_JITTER     random extra delay in [0, jitter) per message (default 0)
//	FI_SIM_BANDWIDTH  bytes per second per link (default 0: infinite)
//	FI_SIM_LOSS       probability that a transmission is lost (default 0)
//	FI_SIM_RTO        RDM retransmission delay (default 2*latency + 1us)
//	FI_SIM_CROSS_PROCESS  1: the cross-process mode (below; default 0)
//
// # Processes
//
// A network lives in one process, unless it is created in the
// cross-process mode: Config.CrossProcess for a network of NewNetwork,
// FI_SIM_CROSS_PROCESS=1 for the default network. Then the networks of
// the same name in the processes of one host (one network namespace) form
// one fabric: the endpoints of each process reach those of the others,
// as libfabric's fabtests need (a server and a client process exchange
// names and talk; the C plugin registers the provider as gosim, and
// scripts/fabtests.sh runs it with FI_SIM_CROSS_PROCESS=1). Each endpoint
// binds a unix datagram socket in the abstract namespace,
// "@gofabric-sim/<network>/<16 hex>"; an endpoint opened without a name
// takes the id 2^52 + pid*2^24 + n (n counting this process's
// endpoints), a service's endpoint its usual id, and a name that another
// endpoint of the host holds is FI_EADDRINUSE. A message to an endpoint
// of this process takes the in-process path, exactly as without the
// mode; one to an endpoint of another process is encoded
// (internal/wire/simwire, checked and fuzzed: what arrives from another
// process is untrusted), written by the endpoint's writer goroutine, and
// read by the target's reader goroutine, which injects it into its
// network at that network's virtual time plus Config.Default.Latency,
// where progress delivers it like a local arrival. Links, Jitter,
// Bandwidth and Loss apply only within a process.
//
// Cross-process traffic is not deterministic: it depends on when the
// processes and their goroutines run, and each process has its own
// virtual clock. Reliability holds: an RDM send completes when the target
// process's reader has put the message in its network (it then behaves
// as a local arrival: matched, unexpected, or held for room); an RMA or
// atomic operation completes when the target's progress has served it
// and its answer is back. An operation whose target endpoint is gone
// (closed, or its process exited or killed: its socket is gone) completes
// with FI_EHOSTUNREACH: at once when its request cannot be written, else
// within about two probe intervals (0.2 s), the writer probing the
// targets of operations that wait for replies. Closing an endpoint
// completes its operations still waiting for replies with FI_ECANCELED.
// The mode starts two goroutines per endpoint (the reader and the
// writer), which end when the endpoint is closed.
//
// # libfabric calls and variables in Go
//
//	fi_getinfo          fabric.GetInfo with fabric_attr.prov_name "sim"; fabric_attr.name
//	                    selects the network (DefaultName when empty)
//	fi_fabric           fabric.Open: the named network (ENODATA if none is registered)
//	fi_getname          Endpoint.Name: "fi_sim://<16 hex>"; ID and NameOf convert
//	fi_send, fi_tsend   Endpoint.Send, TSend ...: the payload is copied, the message scheduled
//	fi_read, fi_write   Endpoint.RMARead, RMAWrite ... (FI_EP_RDM)
//	fi_atomic ...       Endpoint.Atomic, FetchAtomic, CompareAtomic ... (FI_EP_RDM)
//	fi_cq_read          CQ.Read: one progress step of the network per bound endpoint
//	fi_cq_sread         CQ.SRead: provider.Waiter, parks until something is in flight
//	FI_WAIT_FD          the network's eventfd (provider.FDWaiter)
//	FI_SIM_*            ConfigFromEnv, the default network (above)
//	(none)              NewNetwork, Config, Link: networks of a test's own;
//	                    Network.Now, Stats, Pending: its clock and counts
//
// # Names
//
// Endpoint names (fi_getname, FI_ADDR_STR) are "fi_sim://<16 hex>" with
// a NUL, the hex being the endpoint's id in its network: 1, 2, 3 ... in
// the order endpoints are opened (ID and NameOf convert). GetInfo with
// FI_SOURCE and a decimal service names the endpoint of that service, so
// that two sides agree on a name without exchanging it; without FI_SOURCE,
// this host without a service names the endpoint of service 0 (as shm
// does). In the cross-process mode ids are unique on the host instead
// (see Processes).
//
// # Virtual time and determinism
//
// The network's clock (Network.Now) starts at 0 and is never read from
// the wall clock. Sends are scheduled on it: a send takes a sequence
// number, draws its loss and jitter from the network's generator, and
// schedules its arrival at a virtual time. Progress is a step of the
// whole network (any endpoint's Progress, called from the application's
// CQ and counter reads, FI_PROGRESS_MANUAL): it retries arrivals waiting
// for room in a receive queue, then, when nothing is due, advances the
// clock to the next scheduled event, and delivers every event due, in
// (time, sequence) order. Time thus jumps from one delivery to the next:
// a run of a million simulated microseconds costs only the steps that
// deliver something.
//
// Everything that decides the outcome — sequence numbers, random draws,
// delivery order, endpoint ids — depends only on the order of the
// application's calls on the network. An application whose calls come in
// a deterministic order (one goroutine, or goroutines that hand over
// deterministically) therefore gets the same completions, in the same
// order, with the same virtual times, every run with the same seed; a
// different seed changes what Loss and Jitter draw. Blocking reads
// (fi_cq_sread, fi_cntr_wait) work, but their watcher goroutines step the
// network at times the Go scheduler picks: poll (fi_cq_read) for
// bit-for-bit repeatable runs.
//
// # testing/synctest
//
// The provider reads no clock and starts no goroutine (outside the
// cross-process mode), so it runs inside
// a synctest bubble (synctest.Test) like any other code: fabrics,
// endpoints and polling reads behave the same, and the bubble's fake
// clock is free to drive the application's own timers and timeouts. The
// network's virtual clock is separate from the bubble's: simulated
// latency does not advance time.Now, and sleeping in the bubble does not
// deliver messages (only progress does). Blocking reads are the part
// that does not fit: before parking they spin for a while measured on
// time.Now, which stands still in a bubble while the goroutine runs, so a
// blocking read with nothing in flight spins for ever there (one with a
// message in flight returns, as each spin steps the network). Use polling
// reads in a bubble. A network is used either inside one bubble or
// outside any (NewNetwork inside the bubble for the former): Go panics on
// a bubble's channel used from outside it, and a blocking read's
// wake-up channel belongs to the goroutine that waits.
//
// # Completions
//
// An RDM send completes when its message reaches the target endpoint
// (FI_TRANSMIT_COMPLETE): matched, queued as unexpected, or held by the
// target while its receive queue or CQ has no room (FI_RM_ENABLED) or
// its unexpected messages already fill Config.MaxUnexpectedBytes
// (rx_attr.total_buffered_recv, default 64 MiB per endpoint): held,
// never dropped, delivered in order once room is made. A send to an
// endpoint that does not exist or closed before the arrival completes
// with FI_EHOSTUNREACH. A DGRAM send completes when it has left the link;
// a datagram that is lost, finds no endpoint, or finds its receive queue
// or unexpected-message bound full is dropped. Closing an endpoint takes its sends still in flight
// off the network: they complete with FI_ECANCELED; messages it had
// taken but not yet matched are discarded with it, as the unexpected
// messages in its receive queue are (Stats.Dropped). Payloads are copied
// at send time, so every buffer is the caller's again when the call
// returns; buffers, events and operations are pooled (no allocation per
// message in steady state).
//
// # Waiting
//
// Endpoints implement provider.Waiter (blocking reads sleep until a
// message is in flight) and provider.FDWaiter: the network's eventfd is
// readable while messages or completions are in flight.
//
// # Attributes
//
// FI_EP_RDM and FI_EP_DGRAM (one Info each; FI_EP_RDM first), FI_ADDR_STR,
// inject_size 4096, tx/rx size 1024, iov_limit 4, max_msg_size 1 MiB
// (RDM) or 65507 (DGRAM), cq_data_size 8, ep_cnt 2^20, FI_THREAD_SAFE
// (or the model the hints ask for: every model is safe), FI_RM_ENABLED
// (or disabled when asked), data progress FI_PROGRESS_MANUAL only
// (hints asking for FI_PROGRESS_AUTO get ENODATA), mr_mode 0. The
// fabtest conformance suite runs against both endpoint types, except the
// cases that need a peer in another process (Target.InProcess).
package sim
