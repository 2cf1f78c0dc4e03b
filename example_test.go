package fabric_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	_ "github.com/gofabric/fabric/prov/tcp" // registers the tcp provider
	_ "github.com/gofabric/fabric/prov/udp" // registers the udp provider
)

// Two datagram endpoints of the udp provider on 127.0.0.1: bob posts a
// receive, alice sends to bob's address, and both wait for their
// completion.
func Example_dgram() {
	hints := fabric.AllocInfo()
	hints.Caps = fabric.CapMsg
	hints.EPAttr.Type = fabric.EPDgram
	hints.FabricAttr.ProvName = "udp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, hints)
	if err != nil {
		log.Fatal(err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		log.Fatal(err)
	}
	defer fab.Close()
	dom, err := fab.OpenDomain(info)
	if err != nil {
		log.Fatal(err)
	}
	defer dom.Close()
	av, err := dom.OpenAV(nil) // peer addresses -> fabric.Addr
	if err != nil {
		log.Fatal(err)
	}
	defer av.Close()

	// open makes an endpoint with its own completion queue. Deferred
	// closes run in reverse: endpoint first, then its CQ.
	open := func() (*fabric.Endpoint, *fabric.CQ) {
		cq, err := dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
		if err != nil {
			log.Fatal(err)
		}
		ep, err := dom.OpenEndpoint(info)
		if err != nil {
			log.Fatal(err)
		}
		if err := ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
			log.Fatal(err)
		}
		if err := ep.BindAV(av); err != nil {
			log.Fatal(err)
		}
		if err := ep.Enable(); err != nil {
			log.Fatal(err)
		}
		return ep, cq
	}
	alice, aliceCQ := open()
	defer aliceCQ.Close()
	defer alice.Close()
	bob, bobCQ := open()
	defer bobCQ.Close()
	defer bob.Close()

	// Alice learns bob's address (in a real program it comes over the
	// network) and inserts it into the AV.
	bobName, err := bob.Name()
	if err != nil {
		log.Fatal(err)
	}
	bobAddr := make([]fabric.Addr, 1)
	if _, err := av.Insert([][]byte{bobName}, bobAddr, 0); err != nil {
		log.Fatal(err)
	}

	// The buffers belong to the provider until their completion.
	buf := make([]byte, 64)
	if err := bob.Recv(buf, nil, fabric.AddrUnspec, "bob's receive"); err != nil {
		log.Fatal(err)
	}
	if err := alice.Send([]byte("hello bob"), nil, bobAddr[0], "alice's send"); err != nil {
		log.Fatal(err)
	}

	// wait blocks (at most 5 s) for one completion; reading the CQ also
	// makes progress. An error completion is read with ReadErr.
	wait := func(cq *fabric.CQ) fabric.CQEntry {
		ent := make([]fabric.CQEntry, 1)
		_, err := cq.SRead(ent, 0, 5*time.Second)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			if err := cq.ReadErr(&ee); err != nil {
				log.Fatal(err)
			}
			log.Fatalf("%v failed: %v", ee.OpContext, ee.Err)
		}
		if err != nil {
			log.Fatal(err) // fabric.ErrAgain: nothing within 5 s
		}
		return ent[0]
	}
	sent := wait(aliceCQ)
	fmt.Println(sent.OpContext, sent.Flags)
	got := wait(bobCQ)
	fmt.Printf("%v %v: %q\n", got.OpContext, got.Flags, buf[:got.Len])
	// Output:
	// alice's send FI_MSG|FI_SEND
	// bob's receive FI_MSG|FI_RECV: "hello bob"
}

// A tcp MSG connection, both sides in one program: the server listens on a
// passive endpoint; the client connects; the server reads FI_CONNREQ from
// its event queue, opens an endpoint from the request and accepts; both
// sides read FI_CONNECTED; they exchange a message; the client shuts down
// and the server reads FI_SHUTDOWN. In a real program each side would be
// its own process and the listening address would be known in advance
// (a service port passed to GetInfo).
func Example_msg() {
	hints := fabric.AllocInfo()
	hints.Caps = fabric.CapMsg
	hints.EPAttr.Type = fabric.EPMsg
	hints.FabricAttr.ProvName = "tcp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, hints)
	if err != nil {
		log.Fatal(err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		log.Fatal(err)
	}
	defer fab.Close()
	dom, err := fab.OpenDomain(info)
	if err != nil {
		log.Fatal(err)
	}
	defer dom.Close()

	// nextEvent blocks (at most 5 s) for the next event of an EQ: the
	// connection management events arrive there. A refused or failed
	// connection is an error event, read with ReadErr.
	nextEvent := func(eq *fabric.EQ) fabric.EQEntry {
		ev, err := eq.SRead(5*time.Second, 0)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.EQErrEntry
			if err := eq.ReadErr(&ee); err != nil {
				log.Fatal(err)
			}
			log.Fatalf("connection error: %v", ee.Err)
		}
		if err != nil {
			log.Fatal(err) // fabric.ErrAgain: no event within 5 s
		}
		return ev
	}
	// waitCQ blocks (at most 5 s) for one completion.
	waitCQ := func(cq *fabric.CQ) fabric.CQEntry {
		ent := make([]fabric.CQEntry, 1)
		if _, err := cq.SRead(ent, 0, 5*time.Second); err != nil {
			log.Fatal(err) // fabric.ErrAvail: read the error with cq.ReadErr
		}
		return ent[0]
	}

	// Server, step 1: an EQ and a passive endpoint that listens.
	serverEQ, err := fab.OpenEQ(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer serverEQ.Close()
	pep, err := fab.OpenPassiveEndpoint(info)
	if err != nil {
		log.Fatal(err)
	}
	defer pep.Close()
	if err := pep.Bind(serverEQ, 0); err != nil {
		log.Fatal(err)
	}
	if err := pep.Listen(); err != nil {
		log.Fatal(err)
	}
	serverAddr, err := pep.Name() // the address clients connect to
	if err != nil {
		log.Fatal(err)
	}

	// Client: an endpoint bound to an EQ and a CQ; Connect enables it.
	clientEQ, err := fab.OpenEQ(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer clientEQ.Close()
	clientCQ, err := dom.OpenCQ(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer clientCQ.Close()
	client, err := dom.OpenEndpoint(info)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if err := client.BindEQ(clientEQ); err != nil {
		log.Fatal(err)
	}
	if err := client.BindCQ(clientCQ, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
		log.Fatal(err)
	}
	if err := client.Connect(serverAddr, nil); err != nil {
		log.Fatal(err)
	}

	// Server, step 2: the connection request arrives as FI_CONNREQ; its
	// Info opens the endpoint that accepts it.
	req := nextEvent(serverEQ)
	fmt.Println("server:", req.Event)
	serverCQ, err := dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg}) // entries with Len
	if err != nil {
		log.Fatal(err)
	}
	defer serverCQ.Close()
	server, err := dom.OpenEndpoint(req.Info)
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()
	if err := server.BindEQ(serverEQ); err != nil {
		log.Fatal(err)
	}
	if err := server.BindCQ(serverCQ, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
		log.Fatal(err)
	}
	if err := server.Accept(nil); err != nil {
		log.Fatal(err)
	}

	// Both sides: FI_CONNECTED, for the endpoint in ev.FID.
	ev := nextEvent(serverEQ)
	fmt.Println("server:", ev.Event, ev.FID == server)
	ev = nextEvent(clientEQ)
	fmt.Println("client:", ev.Event, ev.FID == client)

	// Data: connected endpoints take fabric.AddrUnspec as the address.
	buf := make([]byte, 64)
	if err := server.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		log.Fatal(err)
	}
	if err := client.Send([]byte("hello server"), nil, fabric.AddrUnspec, nil); err != nil {
		log.Fatal(err)
	}
	waitCQ(clientCQ) // the send completed
	got := waitCQ(serverCQ)
	fmt.Printf("server: received %q\n", buf[:got.Len])

	// The client shuts the connection down; the server sees FI_SHUTDOWN.
	if err := client.Shutdown(0); err != nil {
		log.Fatal(err)
	}
	ev = nextEvent(serverEQ)
	fmt.Println("server:", ev.Event, ev.FID == server)
	// Output:
	// server: FI_CONNREQ
	// server: FI_CONNECTED true
	// client: FI_CONNECTED true
	// server: received "hello server"
	// server: FI_SHUTDOWN true
}

// The README's Go example is Example_dgram's body, verbatim, in a main
// function.
func TestREADMEExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	const open = "func Example_dgram() {\n"
	i := strings.Index(s, open)
	j := strings.Index(s[i:], "\t// Output:\n")
	if i < 0 || j < 0 {
		t.Fatal("Example_dgram or its Output comment not found")
	}
	body := s[i+len(open) : i+j]
	if want := "func main() {\n" + body + "}\n```"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not hold Example_dgram's body verbatim in func main; want:\n%s", want)
	}
}
