package lnx

import (
	"bytes"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/testutil"
)

// TestDerivedSHMName: an lnx endpoint with an IPv4 tcp address names its
// shm endpoint after it, and the name gives the tcp address back.
func TestDerivedSHMName(t *testing.T) {
	n := openNode(t, "")
	a, ok := parseAddr(n.addr)
	if !ok || a.shm == nil || a.tcp == nil {
		t.Fatalf("address %q", n.addr)
	}
	want, ok := derivedSHM(a.tcp)
	if !ok || !bytes.Equal(a.shm, want) {
		t.Fatalf("shm name %q, want %q (derived from the tcp address)", a.shm, want)
	}
	e := &endpoint{host: a.host}
	if got := e.fromSHM(a.shm); !bytes.Equal(got, n.addr) {
		t.Fatalf("address from the shm name %q, want %q", got, n.addr)
	}
	if got := e.fromTCP(a.tcp); !bytes.Equal(got, n.addr) {
		t.Fatalf("address from the tcp address %q, want %q", got, n.addr)
	}
	for i := 0; i < 100; i++ {
		id, ok := shmID(randomSHM())
		if !ok || id == 0 || id>>48 == derivedMark {
			t.Fatalf("random shm id %#x", id)
		}
	}
}

// TestSourceErrAddresses: what lnx reports for senders it cannot fully
// name. A source whose IP address is not of this network namespace is
// remote: only its tcp address, host unknown (reached over tcp). An shm
// name without the mark: this host and that name only (reached over shm).
func TestSourceErrAddresses(t *testing.T) {
	e := &endpoint{host: 0x1234}
	remote := make([]byte, 16)
	remote[0], remote[2], remote[3] = 2, 0x13, 0x88
	copy(remote[4:8], net.IPv4(192, 0, 2, 7).To4()) // TEST-NET-1: never local
	got, ok := parseAddr(e.fromTCP(remote))
	if !ok || got.host != 0 || got.shm != nil || !bytes.Equal(got.tcp, remote) {
		t.Fatalf("remote source: %+v", got)
	}
	if h, hasSHM, ok := parseHost(e.fromTCP(remote)); !ok || h != 0 || hasSHM {
		t.Fatalf("remote source routes: host %x shm %v", h, hasSHM)
	}
	raw := shmName(0x0123456789abcdef)
	got, ok = parseAddr(e.fromSHM(raw))
	if !ok || got.host != 0x1234 || !bytes.Equal(got.shm, raw) || got.tcp != nil {
		t.Fatalf("unmarked shm source: %+v", got)
	}
}

// freePort returns a tcp port of 127.0.0.1 that nobody binds now,
// outside the kernel's ephemeral range (testutil.FreePort).
func freePort(t *testing.T) string { return strconv.Itoa(testutil.FreePort(t)) }

// TestSourceErrDerivedNameTaken: when the shm name derived from an
// endpoint's tcp address is taken (an shm endpoint of this process holds
// it here; in life, one of another network namespace sharing /dev/shm),
// the endpoint takes a random name and works. Its messages to an
// FI_SOURCE_ERR receiver that does not know it complete with
// FI_EADDRNOTAVAIL and the address fi_lnx://<host>;<its shm name>;;,
// which, inserted, reaches it over shm and names it as the source of its
// next message.
func TestSourceErrDerivedNameTaken(t *testing.T) {
	port := freePort(t)
	sa := make([]byte, 16)
	p, _ := strconv.Atoi(port)
	sa[0], sa[2], sa[3] = 2, byte(p>>8), byte(p)
	copy(sa[4:8], []byte{127, 0, 0, 1})
	name, _ := derivedSHM(sa)
	h := fabric.AllocInfo()
	h.FabricAttr.ProvName = localProv
	h.SrcAddr = name
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err != nil {
		t.Fatal(err)
	}
	fab, err := fabric.Open(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, fab.Close()) })
	dom, err := fab.OpenDomain(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, dom.Close()) })
	holder, err := dom.OpenEndpoint(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, holder.Close()) })

	rt := watchRoutes(t)
	a := openNodeService(t, "", port, 0, false)
	b := openNodeCaps(t, "", fabric.CapSourceErr)
	pa, ok := parseAddr(a.addr)
	if !ok || !bytes.Equal(pa.tcp, sa) || pa.shm == nil || bytes.Equal(pa.shm, name) {
		t.Fatalf("a's address %q: want tcp %x and another shm name than %q", a.addr, sa, name)
	}
	ab := a.insert(b.addr)
	buf := make([]byte, 16)
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, "r1"); err != nil {
		t.Fatal(err)
	}
	retry(t, func() error { return a.ep.Send([]byte("who"), nil, ab, "s1") }, a.txcq)
	ee := waitErr(t, b.rxcq)
	want := addr{host: pa.host, shm: pa.shm}.encode()
	if !errors.Is(ee.Err, fabric.ErrAddrNotAvail) || ee.OpContext != "r1" || ee.Len != 3 || !bytes.Equal(ee.ErrData, want) {
		t.Fatalf("error entry %+v err_data %q, want FI_EADDRNOTAVAIL with %q", ee, ee.ErrData, want)
	}
	waitOne(t, a.txcq, b.rxcq)
	ba := b.insert(ee.ErrData)
	// b reaches a over shm through the reported address.
	abuf := make([]byte, 16)
	if err := a.ep.Recv(abuf, nil, fabric.AddrUnspec, "ra"); err != nil {
		t.Fatal(err)
	}
	retry(t, func() error { return b.ep.Send([]byte("back"), nil, ba, "sb") }, b.txcq)
	if e := waitOne(t, a.rxcq, b.txcq); e.OpContext != "ra" || string(abuf[:e.Len]) != "back" {
		t.Fatalf("a's receive %+v %q", e, abuf[:e.Len])
	}
	waitOne(t, b.txcq, a.rxcq)
	if p := rt.routeOf(b, ba); p != pathSHM {
		t.Fatalf("route to the reported address %d, want shm", p)
	}
	// a's next message names it.
	if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, "r2"); err != nil {
		t.Fatal(err)
	}
	retry(t, func() error { return a.ep.Send([]byte("again"), nil, ab, "s2") }, a.txcq)
	ent := make([]fabric.CQEntry, 1)
	src := make([]fabric.Addr, 1)
	for deadline := time.Now().Add(10 * time.Second); ; {
		n, err := b.rxcq.ReadFrom(ent, src)
		if n == 1 {
			break
		}
		if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			t.Fatalf("b's second receive: %v", err)
		}
		a.txcq.Read(nil)
	}
	if ent[0].OpContext != "r2" || src[0] != ba {
		t.Fatalf("second receive %+v from %v, want from %v", ent[0], src[0], ba)
	}
}
