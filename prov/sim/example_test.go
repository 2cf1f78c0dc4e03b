package sim_test

import (
	"fmt"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

// A network of the example's own, with 5 µs links of 1 GB/s: a 1000-byte
// tagged message arrives 6 µs of virtual time after it was sent, however
// long the program takes.
func ExampleNewNetwork() {
	nw, err := sim.NewNetwork("example", sim.Config{Seed: 1,
		Default: sim.Link{Latency: 5 * time.Microsecond, Bandwidth: 1e9}})
	if err != nil {
		panic(err)
	}
	defer nw.Close()

	hints := fabric.AllocInfo()
	hints.Caps = fabric.CapTagged
	hints.EPAttr.Type = fabric.EPRDM
	hints.FabricAttr.ProvName = "sim"
	hints.FabricAttr.Name = "example" // the network
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, hints)
	if err != nil {
		panic(err)
	}
	fab, _ := fabric.Open(infos[0])
	defer fab.Close()
	dom, _ := fab.OpenDomain(infos[0])
	defer dom.Close()
	av, _ := dom.OpenAV(nil)
	defer av.Close()
	open := func() (*fabric.Endpoint, *fabric.CQ, []byte) {
		cq, _ := dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
		ep, _ := dom.OpenEndpoint(infos[0])
		ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv)
		ep.BindAV(av)
		ep.Enable()
		name, _ := ep.Name()
		return ep, cq, name
	}
	a, acq, _ := open()
	b, bcq, bname := open()
	defer acq.Close()
	defer bcq.Close()
	defer b.Close()
	defer a.Close()
	dst := make([]fabric.Addr, 1)
	av.Insert([][]byte{bname}, dst, 0)

	buf := make([]byte, 1000)
	b.TRecv(buf, nil, fabric.AddrUnspec, 42, 0, "rx")
	a.TSend(make([]byte, 1000), nil, dst[0], 42, "tx")
	ent := make([]fabric.CQEntry, 1)
	for i := 0; i < 100; i++ { // each read is a step of the network
		if n, _ := bcq.Read(ent); n == 1 {
			fmt.Printf("%v: %d bytes, tag %d, at %v\n", ent[0].OpContext, ent[0].Len, ent[0].Tag, nw.Now())
			break
		}
	}
	// Output: rx: 1000 bytes, tag 42, at 6µs
}
