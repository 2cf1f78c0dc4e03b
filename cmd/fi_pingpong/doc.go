// Command fi_pingpong is libfabric's fi_pingpong built on the pure-Go fabric
// library: a ping-pong latency and bandwidth test between a server and a
// client, with the same flags, defaults, size lists, payload pattern,
// out-of-band control protocol and result table as the C tool of libfabric
// 1.17, so that either side can be the C fi_pingpong and the other this
// one.
//
// Usage:
//
//	fi_pingpong [OPTIONS]            start server
//	fi_pingpong [OPTIONS] <srv_addr> connect to server
//	fi_pingpong --local [OPTIONS]    run a server child process and a client on loopback
//
// Options (as in libfabric):
//
//	-B <src_port>   source control port number (server: 47592, client: auto)
//	-P <dst_port>   destination control port number (client: 47592)
//	-d <domain>     domain name
//	-p <provider>   specific provider name, e.g. udp, tcp, shm, lnx
//	-e <ep_type>    endpoint type: msg|rdm|dgram (dgram)
//	-I <number>     number of iterations (10)
//	-S <size>       specific transfer size or 'all' (default list)
//	-c              enables data integrity checks
//	-m <mode>       transmit mode type: msg|tagged (msg)
//	-h              display help output
//	-v              enable debugging output
//	-6              use IPv6 for the control connection
//
// Extensions of this implementation (long options, absent from the C tool):
//
//	-L, --local       start the server side as a child process on loopback (a
//	                  free control port, FI_UDP_IFACE/FI_TCP_IFACE default to
//	                  lo) and print the client's table
//	--timeout=<sec>   bound on every wait: control connection and messages,
//	                  connection events, and the time without any completion
//	                  in the ping-pong loop (default 60; 0 = wait forever, as
//	                  the C tool does)
//
// The result line is computed exactly as the C tool computes it: usec/xfer
// is elapsed time / iterations / 2 (one-way latency, half a round trip),
// MB/sec counts both directions in decimal megabytes. Like the C tool, the
// loop busy-polls the completion queues (manual progress, no goroutine
// hand-offs), uses inject for sizes below the provider's inject_size, and
// ends with a "fin" message sent with FI_TRANSMIT_COMPLETE.
//
// Failures print a message to stderr and exit with the libfabric error
// number when there is one (61 for FI_ENODATA from fi_getinfo, 103 when the
// peer closes the control connection, 110 on a timeout, 74 for a malformed
// control message), otherwise 1.
package main
