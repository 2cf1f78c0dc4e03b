package shm

import (
	"testing"

	"github.com/gofabric/fabric/internal/cntr"
	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

// fakeCQ is a CQ of another provider (an FI_PEER import).
type fakeCQ struct{}

func (fakeCQ) Write(any, provider.Flags, uint64, []byte, uint64, uint64, provider.Addr) error {
	return nil
}
func (fakeCQ) WriteErr(*provider.CQErrEntry) error { return nil }

// fakeCntr is a counter of another provider.
type fakeCntr struct{}

func (fakeCntr) Inc()    {}
func (fakeCntr) IncErr() {}

func TestDomainSerialThreading(t *testing.T) {
	for _, tc := range []struct {
		th   provider.Threading
		want bool
	}{
		{provider.ThreadUnspec, false},
		{provider.ThreadSafe, false},
		{provider.ThreadFID, false},
		{provider.ThreadEndpoint, false},
		{provider.ThreadDomain, true},
		{provider.ThreadCompletion, true},
	} {
		d, err := (&fabric{}).Domain(&provider.Info{DomainAttr: &provider.DomainAttr{Threading: tc.th}})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.(*domain).serial; got != tc.want {
			t.Errorf("%v: serial %v, want %v", tc.th, got, tc.want)
		}
	}
}

func TestSerialResources(t *testing.T) {
	q, err := cq.New(cq.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	c, err := cntr.New(cntr.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := func() *provider.Resources {
		r := &provider.Resources{TxCQ: q, RxCQ: q, OwnSRX: true}
		r.Cntrs[provider.CntrSend] = c
		return r
	}
	if !serialResources(base()) {
		t.Error("own CQ, counter and receive queue: not serial")
	}
	for name, change := range map[string]func(*provider.Resources){
		"shared srx":    func(r *provider.Resources) { r.OwnSRX = false },
		"imported rxcq": func(r *provider.Resources) { r.RxCQ = fakeCQ{} },
		"imported txcq": func(r *provider.Resources) { r.TxCQ = fakeCQ{} },
		"imported cntr": func(r *provider.Resources) { r.Cntrs[provider.CntrRecv] = fakeCntr{} },
		"eq bound":      func(r *provider.Resources) { r.EQ = fakeEQ{} },
	} {
		r := base()
		change(r)
		if serialResources(r) {
			t.Errorf("%s: serial", name)
		}
	}
}

// fakeEQ is a bound event queue.
type fakeEQ struct{}

func (fakeEQ) Write(*provider.EQEntry) error       { return nil }
func (fakeEQ) WriteErr(*provider.EQErrEntry) error { return nil }

func TestRMATargetCaps(t *testing.T) {
	for _, tc := range []struct {
		caps provider.Caps
		want bool
	}{
		{provider.CapMsg | provider.CapTagged, false},
		{provider.CapRMA, true},
		{provider.CapAtomic, true},
		{provider.CapRMA | provider.CapRead | provider.CapWrite, false},
		{provider.CapRMA | provider.CapRemoteWrite, true},
		{provider.CapMsg | provider.CapRemoteRead, true},
	} {
		if got := rmaTarget(tc.caps); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.caps, got, tc.want)
		}
	}
}

// TestSerialEndpoints: which endpoints run without their locks. Under
// FI_THREAD_COMPLETION one that may be an RMA target stays thread-safe
// (a counter bound to a memory region progresses it from the reader's
// thread, which the application need not serialise with the endpoint's).
func TestSerialEndpoints(t *testing.T) {
	q, _ := cq.New(cq.Config{})
	defer q.Close()
	for _, tc := range []struct {
		th   provider.Threading
		caps provider.Caps
		want bool
	}{
		{provider.ThreadSafe, provider.CapMsg, false},
		{provider.ThreadDomain, provider.CapMsg, true},
		{provider.ThreadDomain, provider.CapMsg | provider.CapRMA, true},
		{provider.ThreadCompletion, provider.CapMsg | provider.CapTagged, true},
		{provider.ThreadCompletion, provider.CapMsg | provider.CapRMA, false},
		{provider.ThreadCompletion, 0, false}, // all caps
	} {
		d, err := (&fabric{}).Domain(&provider.Info{DomainAttr: &provider.DomainAttr{Threading: tc.th}})
		if err != nil {
			t.Fatal(err)
		}
		info := baseInfo(nil)
		info.Caps = tc.caps
		pe, err := d.Endpoint(info)
		if err != nil {
			t.Fatal(err)
		}
		ep := pe.(*endpoint)
		if err := ep.Enable(&provider.Resources{TxCQ: q, RxCQ: q, AV: noAV{}, SRX: srx.New(srx.Config{}), OwnSRX: true}); err != nil {
			t.Fatal(err)
		}
		if ep.serial != tc.want {
			t.Errorf("%v caps %v: serial %v, want %v", tc.th, tc.caps, ep.serial, tc.want)
		}
		ep.Close()
	}
}
