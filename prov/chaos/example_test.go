package chaos_test

import (
	"errors"
	"fmt"
	"log"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
	_ "github.com/gofabric/fabric/prov/tcp"
)

// Example opens tcp's FI_EP_RDM endpoint through a chaos hook that fails
// every transmit, and reads the error completion fi_cq(3) defines: the
// send returned success, and the CQ reports FI_EAVAIL, then the entry.
func Example() {
	hints := fabric.AllocInfo()
	hints.Caps = fabric.CapMsg
	hints.EPAttr.Type = fabric.EPRDM
	hints.FabricAttr.ProvName = "tcp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, hints)
	if err != nil {
		log.Fatal(err)
	}
	fab, hook, err := chaos.Open(infos[0], &chaos.Config{Seed: 1, Error: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer fab.Close()
	dom, err := fab.OpenDomain(infos[0])
	if err != nil {
		log.Fatal(err)
	}
	defer dom.Close()
	cq, err := dom.OpenCQ(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cq.Close()
	av, err := dom.OpenAV(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer av.Close()
	ep, err := dom.OpenEndpoint(infos[0])
	if err != nil {
		log.Fatal(err)
	}
	defer ep.Close()
	for _, err := range []error{ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv), ep.BindAV(av), ep.Enable()} {
		if err != nil {
			log.Fatal(err)
		}
	}
	self, err := ep.Name()
	if err != nil {
		log.Fatal(err)
	}
	addrs := make([]fabric.Addr, 1)
	if _, err := av.Insert([][]byte{self}, addrs, 0); err != nil {
		log.Fatal(err)
	}
	fmt.Println("send:", ep.Send([]byte("hello"), nil, addrs[0], "my send"))
	_, err = cq.SRead(make([]fabric.CQEntry, 1), 0, 5*time.Second)
	fmt.Println("read:", errors.Is(err, fabric.ErrAvail))
	var e fabric.CQErrEntry
	if err := cq.ReadErr(&e); err != nil {
		log.Fatal(err)
	}
	fmt.Println("error completion:", e.OpContext, e.Err, errors.Is(e.Err, chaos.ErrInjected))
	fmt.Println("injected errors:", hook.Stats().Errors)
	// Output:
	// send: <nil>
	// read: true
	// error completion: my send Input/output error true
	// injected errors: 1
}
