package udp

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

func sepInfo(src []byte, tx, rx uint64) *provider.Info {
	info := baseInfo(nil)
	info.AddrFormat = provider.SockAddrIn
	info.SrcAddr = src
	info.EPAttr.TxCtxCnt, info.EPAttr.RxCtxCnt = tx, rx
	return info
}

func port(b []byte) int { return int(binary.BigEndian.Uint16(b[2:])) }

// The receive contexts' sockets are bound at consecutive ports from the
// base, which is the scalable endpoint's name.
func TestScalableConsecutivePorts(t *testing.T) {
	s, err := (&domain{}).ScalableEndpoint(sepInfo(withPort(loopback4(), 0), 2, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	name, _ := s.Name()
	for i, sock := range s.(*sep).socks {
		n, err := sock.Name()
		if err != nil || port(n) != port(name)+i {
			t.Fatalf("socket %d at %v, want port %d+%d (%v)", i, n, port(name), i, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != provider.EBADF {
		t.Fatalf("second close: %v", err)
	}
	if _, err := s.RxContext(0, nil); err == nil {
		t.Fatal("context of a closed scalable endpoint")
	}
}

// A given port whose successor is taken: EADDRINUSE, and nothing stays
// bound.
func TestScalableGivenPortInUse(t *testing.T) {
	// Find a free port pn whose successor can be bound (next), then
	// release pn and ask for a base there.
	var pn []byte
	var next *sys.Conn
	for try := 0; next == nil; try++ {
		if try == 20 {
			t.Fatal("no free port with a free successor in 20 tries")
		}
		probe, err := sys.OpenUDP(withPort(loopback4(), 0))
		if err != nil {
			t.Fatal(err)
		}
		pn, _ = probe.Name()
		if port(pn) < 0xffff {
			next, _ = sys.OpenUDP(withPort(loopback4(), uint16(port(pn)+1)))
		}
		probe.Close()
	}
	defer next.Close()
	if _, err := (&domain{}).ScalableEndpoint(sepInfo(pn, 1, 2)); err != provider.EADDRINUSE {
		t.Fatalf("base %d with %d+1 in use: %v, want EADDRINUSE", port(pn), port(pn), err)
	}
	// The base port was released: an ordinary socket binds it.
	again, err := sys.OpenUDP(pn)
	if err != nil {
		t.Fatalf("base port left bound: %v", err)
	}
	again.Close()
}

func TestScalableBadInfo(t *testing.T) {
	d := &domain{}
	for _, info := range []*provider.Info{
		nil,
		sepInfo(withPort(loopback4(), 0), MaxEPCtx+1, 1),
		sepInfo(withPort(loopback4(), 0), 1, MaxEPCtx+1),
		sepInfo([]byte{1, 2, 3}, 1, 1),
	} {
		if s, err := d.ScalableEndpoint(info); err != provider.EINVAL {
			if s != nil {
				s.Close()
			}
			t.Errorf("ScalableEndpoint(%v): %v, want EINVAL", info, err)
		}
	}
}

func loopback4() []byte {
	return appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("127.0.0.1:0")})
}
