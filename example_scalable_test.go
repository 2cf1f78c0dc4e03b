package fabric_test

import (
	"fmt"
	"log"
	"time"

	fabric "github.com/gofabric/fabric"
)

// A scalable endpoint with two receive contexts (fi_scalable_ep,
// fi_rx_context) and one with a transmit context (fi_tx_context): the
// sender names receive context 1 with RxAddr (fi_rx_addr), and only that
// context's CQ sees the message. Each context has its own CQ and could be
// driven by a goroutine of its own.
func Example_scalable() {
	hints := fabric.AllocInfo()
	hints.Caps = fabric.CapMsg | fabric.CapNamedRxCtx
	hints.EPAttr.Type = fabric.EPDgram
	hints.EPAttr.TxCtxCnt, hints.EPAttr.RxCtxCnt = 2, 2
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
	// One receive context bit: addresses name receive context 0 or 1.
	av, err := dom.OpenAV(&fabric.AVAttr{RxCtxBits: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer av.Close()
	cq := func() *fabric.CQ {
		c, err := dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg})
		if err != nil {
			log.Fatal(err)
		}
		return c
	}
	check := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}

	sep, err := dom.OpenScalableEndpoint(info)
	check(err)
	defer sep.Close()
	check(sep.Bind(av, 0))
	var rx [2]*fabric.Endpoint
	var rxcq [2]*fabric.CQ
	for i := range rx {
		rxcq[i] = cq()
		defer rxcq[i].Close()
		rx[i], err = sep.RxContext(i, nil)
		check(err)
		defer rx[i].Close()
		check(rx[i].BindCQ(rxcq[i], fabric.FlagRecv))
		check(rx[i].Enable())
	}
	txcq := cq()
	defer txcq.Close()
	tx, err := sep.TxContext(0, nil)
	check(err)
	defer tx.Close()
	check(tx.BindCQ(txcq, fabric.FlagTransmit))
	check(tx.Enable())
	check(sep.Enable())

	// The scalable endpoint's one address; here it sends to itself.
	name, err := sep.Name()
	check(err)
	addr := make([]fabric.Addr, 1)
	_, err = av.Insert([][]byte{name}, addr, 0)
	check(err)

	bufs := [2][]byte{make([]byte, 64), make([]byte, 64)}
	for i := range rx {
		check(rx[i].Recv(bufs[i], nil, fabric.AddrUnspec, i))
	}
	check(tx.Send([]byte("to context 1"), nil, fabric.RxAddr(addr[0], 1, 1), nil))

	ent := make([]fabric.CQEntry, 1)
	_, err = txcq.SRead(ent, 0, 5*time.Second)
	check(err)
	_, err = rxcq[1].SRead(ent, 0, 5*time.Second)
	check(err)
	fmt.Printf("receive context %v: %q\n", ent[0].OpContext, bufs[1][:ent[0].Len])
	n, _ := rxcq[0].Read(ent)
	fmt.Println("receive context 0:", n, "completions")
	// Output:
	// receive context 1: "to context 1"
	// receive context 0: 0 completions
}
