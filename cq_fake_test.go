package fabric

import (
	"sync/atomic"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// cqtest is a tiny fake provider for the CQ, counter and EQ tests: its
// fabric and domain do nothing, it has no endpoints, and its GetInfo
// matches nothing (so tests of GetInfo never see it). Tests open it with
// cqTestDomain and play the endpoint themselves through the bind hooks.
const cqTestProvName = "cqtest"

type cqTestProv struct{}

func (cqTestProv) Name() string    { return cqTestProvName }
func (cqTestProv) Version() uint32 { return provider.Version(1, 0) }
func (cqTestProv) GetInfo(uint32, string, string, Flags, *Info) ([]*Info, error) {
	return nil, provider.ENODATA
}
func (cqTestProv) Fabric(*FabricAttr) (provider.Fabric, error) { return cqTestFabric{}, nil }

type cqTestFabric struct{}

func (cqTestFabric) Domain(*Info) (provider.Domain, error) { return cqTestDomainImpl{}, nil }
func (cqTestFabric) Close() error                          { return nil }

type cqTestDomainImpl struct{}

func (cqTestDomainImpl) Endpoint(*Info) (provider.Endpoint, error) { return nil, provider.ENOSYS }
func (cqTestDomainImpl) Close() error                              { return nil }

func init() { provider.Register(cqTestProv{}) }

// cqTestFabricOpen opens a cqtest fabric closed at the end of the test.
func cqTestFabricOpen(t testing.TB, api uint32) *Fabric {
	t.Helper()
	f, err := OpenFabric(&FabricAttr{ProvName: cqTestProvName, APIVersion: api})
	if err != nil {
		t.Fatalf("open cqtest fabric: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// cqTestDomain opens a cqtest fabric and domain (with caps in its Info),
// both closed at the end of the test.
func cqTestDomain(t testing.TB, caps Caps) *Domain {
	t.Helper()
	f := cqTestFabricOpen(t, 0)
	d, err := f.OpenDomain(&Info{Caps: caps, FabricAttr: &FabricAttr{ProvName: cqTestProvName},
		DomainAttr: &DomainAttr{Name: "cqtest"}})
	if err != nil {
		t.Fatalf("open cqtest domain: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// cqTestEP plays a provider endpoint: each Progress call writes the
// completions queued with emit to the CQ/counter owner it was given.
type cqTestEP struct {
	cq       provider.CQOwner
	cntr     provider.CntrOwner
	pending  atomic.Int64
	progress atomic.Int64
}

func (e *cqTestEP) Progress() {
	e.progress.Add(1)
	for e.pending.Load() > 0 {
		e.pending.Add(-1)
		if e.cq != nil {
			e.cq.Write("ep", FlagSend|FlagMsg, 0, nil, 0, 0, AddrNotAvail)
		}
		if e.cntr != nil {
			e.cntr.Inc()
		}
	}
}
