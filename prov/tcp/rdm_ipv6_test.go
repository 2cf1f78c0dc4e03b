package tcp_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// TestRDMIPv6: RDM endpoints on ::1 have sockaddr_in6 names, connect to
// each other over IPv6 and carry eager and rendezvous messages, untagged
// and tagged, both ways. (The C fi_pingpong of libfabric 1.17 cannot put
// its data path on IPv6, so interop over ::1 is tested for the control
// connection only: see cmd/fi_pingpong's interop cases.)
func TestRDMIPv6(t *testing.T) {
	a, b := openRDMAt(t, "::1"), openRDMAt(t, "::1")
	for _, e := range []*rdmEnv{a, b} {
		// struct sockaddr_in6: 28 bytes, AF_INET6 (10) in host order,
		// address ::1 at offset 8.
		if len(e.name) != 28 || binary.LittleEndian.Uint16(e.name) != 10 || e.name[23] != 1 {
			t.Fatalf("name %x is not a sockaddr_in6 of ::1", e.name)
		}
	}
	ab, ba := a.insert(b.name), b.insert(a.name)
	sizes := []int{1, 64, 16384, 16385, 200000}
	for _, tagged := range []bool{false, true} {
		for _, n := range sizes {
			for _, dir := range []struct {
				from, to *rdmEnv
				dest     fabric.Addr
			}{{a, b, ab}, {b, a, ba}} {
				msg := make([]byte, n)
				for i := range msg {
					msg[i] = byte(i*7 + n)
				}
				rbuf := make([]byte, n)
				var err error
				if tagged {
					err = dir.to.ep.TRecv(rbuf, nil, fabric.AddrUnspec, uint64(n), 0, "rx")
				} else {
					err = dir.to.ep.Recv(rbuf, nil, fabric.AddrUnspec, "rx")
				}
				if err != nil {
					t.Fatal(err)
				}
				if tagged {
					err = dir.from.ep.TSend(msg, nil, dir.dest, uint64(n), "tx")
				} else {
					err = dir.from.ep.Send(msg, nil, dir.dest, "tx")
				}
				if err != nil {
					t.Fatal(err)
				}
				got := drain(t, dir.to.rx, 1, dir.from.tx)
				if int(got[0].Len) != n || !bytes.Equal(rbuf, msg) {
					t.Fatalf("tagged %v, %d bytes: completion %+v, data differs: %v", tagged, n, got[0], !bytes.Equal(rbuf, msg))
				}
				if tagged && got[0].Tag != uint64(n) {
					t.Fatalf("tag %d, want %d", got[0].Tag, n)
				}
				drain(t, dir.from.tx, 1, dir.to.rx)
			}
		}
	}
	if c := established6(t, listenPort(a.name), listenPort(b.name)); c != 1 {
		t.Fatalf("%d IPv6 connections between the two endpoints, want 1", c)
	}
}

// established6 counts ESTABLISHED IPv6 TCP sockets whose remote port is
// one of ports.
func established6(t *testing.T, ports ...int) int {
	t.Helper()
	f, err := os.Open("/proc/net/tcp6")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 4 || fl[3] != "01" {
			continue
		}
		for _, p := range ports {
			if strings.HasSuffix(fl[2], fmt.Sprintf(":%04X", p)) {
				n++
			}
		}
	}
	return n
}
