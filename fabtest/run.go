package fabtest

import (
	"slices"
	"testing"
)

// testCase is one behaviour: its public name ("fi_cq/read_empty_EAGAIN",
// the man page, a slash, the behaviour) and the function that checks it.
type testCase struct {
	name string
	fn   func(t *testing.T, tg Target)
}

// cases is every behaviour the suite checks: one table per man page, each
// in its file of the same name (fi_cq.go holds cqCases), in man-page order.
var cases = slices.Concat(
	getinfoCases,  // fi_getinfo.go
	domainCases,   // fi_domain.go: fi_domain, fi_close
	endpointCases, // fi_endpoint.go: fi_endpoint, fi_scalable_ep, fi_srx_context
	scalableCases, // fi_scalable_ep.go: scalable endpoints, fi_tx/rx_context, fi_rx_addr
	avCases,       // fi_av.go
	avSetCases,    // fi_av_set.go
	cqCases,       // fi_cq.go
	cntrCases,     // fi_cntr.go
	eqCases,       // fi_eq.go
	mrCases,       // fi_mr.go
	msgCases,      // fi_msg.go
	rmaCases,      // fi_rma.go
	atomicCases,   // fi_atomic.go
	cmCases,       // fi_cm.go
	stxCases,      // fi_stx_context.go: shared transmit contexts (fi_endpoint)
	peerCases,     // fi_peer.go
	pollCases,     // fi_poll.go: wait sets, poll sets
	processCases,  // process.go: behaviours across processes
)

// Run runs every conformance case against the target, each as a subtest
// named after its man page and behaviour.
func Run(t *testing.T, tg Target) {
	t.Helper()
	if !tg.claims(0) {
		t.Fatalf("provider %q offers no %v endpoint", tg.Provider, tg.EPType)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, tg) })
	}
}

// RunPeer runs the fi_peer(3) cases only: for a target combined with an
// owner provider (Target.Owner) in a test binary that links both.
func RunPeer(t *testing.T, tg Target) {
	t.Helper()
	if !tg.claims(0) {
		t.Fatalf("provider %q offers no %v endpoint", tg.Provider, tg.EPType)
	}
	for _, c := range peerCases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, tg) })
	}
}

// Names lists the behaviours the suite checks, in order.
func Names() []string {
	n := make([]string, len(cases))
	for i, c := range cases {
		n[i] = c.name
	}
	return n
}
