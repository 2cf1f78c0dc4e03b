// Package fabtest is the conformance suite of the fabric library: each
// behaviour that the libfabric 1.17 man pages (and libfabric's own fabtests)
// require is stated once, as a named subtest ("fi_cq/read_empty_EAGAIN",
// "fi_endpoint/send_before_enable_EOPBADSTATE" ...), and run against every
// provider according to the capabilities it claims.
//
// A provider's test file is one call, in the manner of x/net/nettest:
//
//	func TestConformance(t *testing.T) {
//		fabtest.Run(t, fabtest.Target{Provider: "udp", EPType: fabric.EPDgram})
//	}
//
//	func TestFabtestHelper(t *testing.T) { fabtest.Helper(t) } // peer processes
//
// A case is skipped only when the target does not claim what it needs: a
// capability or attribute GetInfo does not report, an endpoint type the
// behaviour does not apply to, a call the target answers with ErrNoSys or
// ErrOpNotSupp, or a peer in another process for a target whose fabric
// stays inside one (Target.InProcess: the sim provider). Any other error,
// setup included, is a failure.
package fabtest
