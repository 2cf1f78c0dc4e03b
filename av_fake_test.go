package fabric

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// avtest is a trivial provider for the AV, MR and SRX tests: it opens
// fabrics and domains (no endpoints) and handles 6-byte IPv4 addresses
// (4 address bytes, 2 port bytes, big endian; all zero is invalid) as its
// provider.AddrHandler. Its GetInfo never answers, so other tests calling
// GetInfo do not see it.
const avTestProvName = "avtest"

type avTestProv struct{}

func (avTestProv) Name() string    { return avTestProvName }
func (avTestProv) Version() uint32 { return provider.Version(1, 0) }
func (avTestProv) GetInfo(uint32, string, string, Flags, *Info) ([]*Info, error) {
	return nil, provider.ENODATA
}
func (avTestProv) Fabric(*FabricAttr) (provider.Fabric, error) { return avTestFabric{}, nil }

func (avTestProv) ValidAddr(f provider.AddrFormat, b []byte) bool {
	if len(b) != 6 {
		return false
	}
	for _, c := range b {
		if c != 0 {
			return true
		}
	}
	return false
}

func (avTestProv) AddrString(f provider.AddrFormat, b []byte) string {
	if len(b) != 6 {
		return "fi_avtest://invalid"
	}
	return "fi_avtest://" + strconv.Itoa(int(b[0])) + "." + strconv.Itoa(int(b[1])) + "." +
		strconv.Itoa(int(b[2])) + "." + strconv.Itoa(int(b[3])) + ":" + strconv.Itoa(int(b[4])<<8|int(b[5]))
}

func (avTestProv) ResolveService(f provider.AddrFormat, node, service string) ([]byte, error) {
	parts := strings.Split(node, ".")
	port, err := strconv.Atoi(service)
	if len(parts) != 4 || err != nil || port < 0 || port > 65535 {
		return nil, provider.ENODATA
	}
	b := make([]byte, 6)
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || v > 255 {
			return nil, provider.ENODATA
		}
		b[i] = byte(v)
	}
	b[4], b[5] = byte(port>>8), byte(port)
	return b, nil
}

type avTestFabric struct{}

func (avTestFabric) Domain(*Info) (provider.Domain, error) { return avTestDomain{}, nil }
func (avTestFabric) Close() error                          { return nil }

type avTestDomain struct{}

func (avTestDomain) Endpoint(*Info) (provider.Endpoint, error) { return nil, provider.ENOSYS }
func (avTestDomain) Close() error                              { return nil }

func init() { provider.Register(avTestProv{}) }

// avTestOpenDomain opens an avtest domain; mutate adjusts the info first.
// The domain and fabric are closed at the end of the test.
func avTestOpenDomain(t *testing.T, mutate func(*Info)) *Domain {
	t.Helper()
	fab, err := OpenFabric(&FabricAttr{ProvName: avTestProvName})
	if err != nil {
		t.Fatal(err)
	}
	info := &Info{
		Caps:       CapMsg | CapTagged | CapMultiRecv | CapDirectedRecv | CapRMA,
		AddrFormat: SockAddrIn,
		DomainAttr: &DomainAttr{MRIOVLimit: 4},
		RxAttr:     &RxAttr{Size: 16, IOVLimit: 4},
	}
	if mutate != nil {
		mutate(info)
	}
	d, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("domain close: %v", err)
		}
		if err := fab.Close(); err != nil {
			t.Errorf("fabric close: %v", err)
		}
	})
	return d
}

func avTestAddr(i int) []byte { return []byte{127, 0, 0, byte(i), 0x24, byte(i)} }
