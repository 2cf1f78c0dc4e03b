package tcp_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/tcp"
)

// WriteRDMState lists the open endpoints with their connections, and
// forgets an endpoint once it is closed.
func TestWriteRDMState(t *testing.T) {
	a, b := openRDM(t), openRDM(t)
	ab := a.insert(b.name)
	if err := b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, 0); err != nil {
		t.Fatal(err)
	}
	if err := a.ep.Send([]byte("hi"), nil, ab, 0); err != nil {
		t.Fatal(err)
	}
	drain(t, b.rx, 1, a.tx)
	drain(t, a.tx, 1, b.rx)
	var s strings.Builder
	tcp.WriteRDMState(&s)
	out := s.String()
	an, bn := inAddr(a.name), inAddr(b.name)
	for _, want := range []string{"endpoint " + an + ":", "endpoint " + bn + ":", "to " + bn + ": up", "to " + an + ": up"} {
		if !strings.Contains(out, want) {
			t.Errorf("state lacks %q:\n%s", want, out)
		}
	}
	if err := a.ep.Close(); err != nil {
		t.Fatal(err)
	}
	s.Reset()
	tcp.WriteRDMState(&s)
	if out := s.String(); strings.Contains(out, "endpoint "+an+":") {
		t.Errorf("closed endpoint still listed:\n%s", out)
	}
}

// inAddr formats a sockaddr_in name as the provider's diagnostics do.
func inAddr(n []byte) string {
	return fmt.Sprintf("fi_sockaddr_in://%d.%d.%d.%d:%d", n[4], n[5], n[6], n[7], binary.BigEndian.Uint16(n[2:4]))
}
