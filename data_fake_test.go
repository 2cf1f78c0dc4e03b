package fabric

import (
	"testing"

	"github.com/gofabric/fabric/provider"
)

// datatest is a fake provider for the data-path tests of the root
// package: its endpoints record the last operation they were handed
// (message, RMA, atomic) and claim FI_ATOMIC with a valid count of
// dataTestAtomicMax elements for every operation except FI_BOR on
// floating-point types. Its GetInfo matches nothing; tests build the Info
// themselves (dataTestInfo) and choose the domain's mr_mode.
const dataTestProvName = "datatest"

const dataTestAtomicMax = 4

type dataTestProv struct{}

func (dataTestProv) Name() string    { return dataTestProvName }
func (dataTestProv) Version() uint32 { return provider.Version(1, 0) }
func (dataTestProv) GetInfo(uint32, string, string, Flags, *Info) ([]*Info, error) {
	return nil, provider.ENODATA
}
func (dataTestProv) Fabric(*FabricAttr) (provider.Fabric, error) { return dataTestFabric{}, nil }

type dataTestFabric struct{}

func (dataTestFabric) Domain(*Info) (provider.Domain, error) { return dataTestDomain{}, nil }
func (dataTestFabric) Close() error                          { return nil }

type dataTestDomain struct{}

func (dataTestDomain) Endpoint(*Info) (provider.Endpoint, error) { return &dataTestEP{}, nil }
func (dataTestDomain) Close() error                              { return nil }

// QueryAtomic (fi_query_atomic) answers for the domain's endpoints:
// tagged atomics are ENOSYS except base FI_ATOMIC_WRITE (as libfabric's
// util answers), FI_LONG_DOUBLE elements are reported with size 10 (a
// provider-specific layout), the rest as the package doc says.
func (dataTestDomain) QueryAtomic(k provider.AtomicKind, d Datatype, op AtomicOp, tagged bool) (provider.AtomicAttr, error) {
	if tagged && (k != provider.AtomicBase || op != AtomicWrite) {
		return provider.AtomicAttr{}, provider.ENOSYS
	}
	if op == AtomicBOr && (d == DatatypeFloat || d == DatatypeDouble) {
		return provider.AtomicAttr{}, provider.EOPNOTSUPP
	}
	a := provider.AtomicAttr{Count: dataTestAtomicMax}
	if d == DatatypeLongDouble {
		a.Size = 10
	}
	return a, nil
}

func init() { provider.Register(dataTestProv{}) }

// dataTestEP records what the root hands it.
type dataTestEP struct {
	res    *provider.Resources
	msg    provider.Msg
	atomic provider.AtomicMsg
	calls  int
}

func (e *dataTestEP) Progress()                          {}
func (e *dataTestEP) Enable(r *provider.Resources) error { e.res = r; return nil }
func (e *dataTestEP) Close() error                       { return nil }
func (e *dataTestEP) Name() ([]byte, error)              { return []byte{1, 2, 3, 4}, nil }
func (e *dataTestEP) Send(m provider.Msg) error          { e.msg = m; e.calls++; return nil }
func (e *dataTestEP) TSend(m provider.Msg) error         { e.msg = m; e.calls++; return nil }
func (e *dataTestEP) Read(m provider.Msg) error          { e.msg = m; e.calls++; return nil }
func (e *dataTestEP) Write(m provider.Msg) error         { e.msg = m; e.calls++; return nil }
func (e *dataTestEP) Cancel(any) error                   { return provider.ENOENT }
func (e *dataTestEP) Atomic(m provider.AtomicMsg) error  { e.atomic = m; e.calls++; return nil }

// dataTestInfo is an RDM configuration of datatest with caps and mr_mode.
func dataTestInfo(caps Caps, mrMode MRMode) *Info {
	return &Info{
		Caps:       caps,
		AddrFormat: SockAddrIn,
		TxAttr:     &TxAttr{InjectSize: 16, Size: 64, IOVLimit: 4, RMAIOVLimit: 4},
		RxAttr:     &RxAttr{Size: 64, IOVLimit: 4},
		EPAttr:     &EPAttr{Type: EPRDM, MaxMsgSize: 1 << 20, TxCtxCnt: 1, RxCtxCnt: 1},
		DomainAttr: &DomainAttr{MRMode: mrMode | MRProvKey, MRIOVLimit: 4, CQDataSize: 8, MRKeySize: 8},
		FabricAttr: &FabricAttr{Name: "datatest", ProvName: dataTestProvName, APIVersion: APIVersion},
	}
}

// dataTestEnv is an enabled datatest endpoint and its objects, closed at
// the end of the test.
type dataTestEnv struct {
	dom *Domain
	ep  *Endpoint
	p   *dataTestEP
	cq  *CQ
}

func dataTestOpen(t testing.TB, caps Caps, mrMode MRMode) *dataTestEnv {
	t.Helper()
	info := dataTestInfo(caps, mrMode)
	fab, err := Open(info)
	if err != nil {
		t.Fatalf("open fabric: %v", err)
	}
	t.Cleanup(func() { fab.Close() })
	dom, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatalf("open domain: %v", err)
	}
	t.Cleanup(func() { dom.Close() })
	cq, err := dom.OpenCQ(&CQAttr{Format: CQFormatMsg})
	if err != nil {
		t.Fatalf("open cq: %v", err)
	}
	t.Cleanup(func() { cq.Close() })
	av, err := dom.OpenAV(nil)
	if err != nil {
		t.Fatalf("open av: %v", err)
	}
	t.Cleanup(func() { av.Close() })
	ep, err := dom.OpenEndpoint(info)
	if err != nil {
		t.Fatalf("open endpoint: %v", err)
	}
	t.Cleanup(func() { ep.Close() })
	if err := ep.BindCQ(cq, FlagTransmit|FlagRecv); err != nil {
		t.Fatalf("bind cq: %v", err)
	}
	if err := ep.BindAV(av); err != nil {
		t.Fatalf("bind av: %v", err)
	}
	if err := ep.Enable(); err != nil {
		t.Fatalf("enable: %v", err)
	}
	return &dataTestEnv{dom: dom, ep: ep, p: ep.p.(*dataTestEP), cq: cq}
}

// reg registers b with access, closed at the end of the test.
func (v *dataTestEnv) reg(t testing.TB, b []byte, access Flags) *MR {
	t.Helper()
	mr, err := v.dom.RegMR(b, access, 0, 0, 0)
	if err != nil {
		t.Fatalf("reg mr: %v", err)
	}
	t.Cleanup(func() { mr.Close() })
	return mr
}
