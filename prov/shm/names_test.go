package shm_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/shm"
)

// TestServiceNames: node+service name one endpoint: the FI_SOURCE side
// creates it, the other side gets it as dest_addr; a file left by a dead
// process under that name is taken over; this host without a service
// names no destination.
func TestServiceNames(t *testing.T) {
	svc := fmt.Sprintf("shmtest-%d", os.Getpid())
	if err := shm.MakeStaleForTest(svc); err != nil {
		t.Fatal(err)
	}
	h := hints(nodeOpts{})
	src, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", svc, fabric.FlagSource, h)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := fabric.GetInfo(fabric.APIVersion, "localhost", svc, 0, h)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src[0].SrcAddr, dst[0].DestAddr) || len(src[0].DestAddr) != 0 {
		t.Fatalf("src %q, dest %q", src[0].SrcAddr, dst[0].DestAddr)
	}
	fab, err := fabric.Open(src[0])
	if err != nil {
		t.Fatal(err)
	}
	defer fab.Close()
	dom, err := fab.OpenDomain(src[0])
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Close()
	ep, err := dom.OpenEndpoint(src[0])
	if err != nil {
		t.Fatalf("endpoint on a stale name: %v", err)
	}
	name, err := ep.Name()
	if err != nil || !bytes.Equal(name, src[0].SrcAddr) {
		t.Fatalf("name %q %v; want %q", name, err, src[0].SrcAddr)
	}
	// A second endpoint on the live name: in use.
	if ep2, err := dom.OpenEndpoint(src[0]); err == nil {
		ep2.Close()
		t.Fatal("two endpoints on one name")
	}
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	// This host alone names the endpoint of the empty service; an
	// unknown host nothing.
	if in, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", 0, h); err != nil {
		t.Fatalf("node without service: %v", err)
	} else if d, err := fabric.GetInfo(fabric.APIVersion, "localhost", "", 0, h); err != nil ||
		!bytes.Equal(in[0].DestAddr, d[0].DestAddr) || len(d[0].DestAddr) == 0 {
		t.Fatalf("node without service: dest %q, %v", in[0].DestAddr, err)
	}
	if _, err := fabric.GetInfo(fabric.APIVersion, "g00n13s.invalid", svc, 0, h); err == nil {
		t.Fatal("unknown node accepted")
	}
}

// TestTxOpFlagsHints: default transmit flags asked by the hints (the
// fabtests' -U asks FI_DELIVERY_COMPLETE) are offered and echoed.
func TestTxOpFlagsHints(t *testing.T) {
	h := hints(nodeOpts{})
	h.TxAttr.OpFlags = fabric.FlagDeliveryComplete
	in, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err != nil || in[0].TxAttr.OpFlags&fabric.FlagDeliveryComplete == 0 {
		t.Fatalf("%v %v", err, in)
	}
}
