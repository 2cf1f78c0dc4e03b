// Package udp is the "udp" provider: FI_EP_DGRAM endpoints over UDP
// sockets, interoperable with libfabric 1.17's udp provider and with plain
// Berkeley sockets. Importing it registers the provider:
//
//	import _ "github.com/gofabric/fabric/prov/udp"
//
// # Wire format
//
// A datagram is the application's payload and nothing else: one send is
// one sendto(2)/sendmsg(2) to the sockaddr stored in the address vector.
// Endpoint names (fi_getname) are getsockname(2) bytes in libfabric's
// layout: a 16-byte sockaddr_in (family 2 little-endian, port and address
// big-endian) or a 28-byte sockaddr_in6, so the Go and C providers can
// exchange addresses.
//
// # Attributes
//
// GetInfo mirrors `FI_UDP_IFACE=lo fi_info -p udp -t FI_EP_DGRAM -v` of
// libfabric 1.17: one Info per interface address (fabric name = the
// masked network, e.g. "127.0.0.1/32"; domain name = the interface), the
// loopback addresses last with FI_LOCAL_COMM only; max_msg_size and
// inject_size 1472 (IPv4 and IPv6), tx/rx size 1024, iov_limit 4,
// comp_order FI_ORDER_STRICT, no mode bits, no memory registration,
// cq_data_size 0, FI_THREAD_SAFE, no counters advertised (cntr_cnt 0, as
// fi_udp(7)). FI_UDP_IFACE restricts the interface.
//
// Differences from libfabric's udp provider:
//
//   - Data progress defaults to FI_PROGRESS_MANUAL (libfabric: AUTO):
//     completion queue reads receive inline from the non-blocking socket,
//     which on small VMs is 2-3 times faster than waking a goroutine per
//     datagram. Hints asking for FI_PROGRESS_AUTO get a goroutine per
//     endpoint that parks in the Go network poller.
//   - A datagram larger than the matched receive buffer completes with
//     FI_ETRUNC and olen (fi_msg(3)); libfabric truncates silently.
//   - IPv4 datagrams go out with Don't Fragment set (IP_PMTUDISC_DO):
//     max_msg_size (1472) fits an Ethernet MTU, and an unfragmentable
//     datagram skips the kernel's host-wide IP identifier generator
//     (2-4% of a loopback round trip). Where a path's MTU is smaller,
//     the first datagram too large for it (EMSGSIZE) turns the option
//     off for that endpoint and is sent again fragmented, as libfabric
//     sends every datagram (a router with a smaller MTU may drop the
//     datagrams sent before the kernel learns its MTU, which FI_EP_DGRAM
//     allows). See internal/sys.OpenUDP.
//   - Receives are matched through the shared receive queue (package
//     internal/srx), so FI_DIRECTED_RECV, FI_MULTI_RECV, FI_SOURCE and
//     selective completion work; a datagram arriving with no matching
//     receive is kept (up to MaxUnexpected per endpoint) until one is
//     posted, beyond that it is dropped. libfabric leaves it in the
//     socket buffer.
//
// # Receive path
//
// When the endpoint owns its receive queue (no shared receive context)
// and the first posted receive takes a datagram from any source and is
// not a multi-receive buffer, as fi_pingpong's and most applications'
// are, a progress poll receives the datagram straight into that
// receive's buffers (recvfrom or recvmsg) under the queue's lock and
// completes it there: no bounce buffer, no copy, one lock (as libfabric's
// udp provider, which only has this path). Otherwise datagrams are read
// into a bounce buffer and matched with GetMsg, then copied into the
// matched receive or kept as unexpected.
//   - No FI_MULTICAST (fi_join is not implemented).
//   - Bound counters are incremented, although none are advertised.
//   - Scalable endpoints (fi_scalable_ep, up to MaxEPCtx transmit and
//     receive contexts, FI_NAMED_RX_CTX), which libfabric's udp lacks:
//     receive context i on the port base+i, see scalable.go.
package udp
