package shm

import (
	"testing"

	"github.com/gofabric/fabric/internal/cntr"
	"github.com/gofabric/fabric/internal/cq"
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
