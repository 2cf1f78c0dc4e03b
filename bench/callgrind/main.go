// Command callgrind is the Go half of bench/callgrind/count.sh: a fixed
// number of udp message rounds through the public API in one goroutine,
// between two endpoints on loopback, so that callgrind can count the
// user-space instructions of one round (count.sh runs it twice and takes
// the difference). c/cdrv.c is the same loop over the C libfabric.
//
// Modes: inject (fi_recv, fi_inject, fi_cq_read of the receive), send
// (fi_recv, fi_send, fi_cq_read of the send and of the receive), empty
// (fi_cq_read of an empty receive CQ with a receive posted: one busy poll).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	fabric "github.com/gofabric/fabric"
	_ "github.com/gofabric/fabric/prov/udp"
)

type env struct {
	ep         *fabric.Endpoint
	txcq, rxcq *fabric.CQ
	av         *fabric.AV
	name       []byte
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "callgrind:", err)
		os.Exit(1)
	}
}

// open opens one udp endpoint as fi_pingpong does (FI_CQ_FORMAT_CONTEXT,
// no wait object, an AV table).
func open() *env {
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg
	h.EPAttr.Type = fabric.EPDgram
	h.FabricAttr.ProvName = "udp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
	must(err)
	info := infos[0]
	fab, err := fabric.Open(info)
	must(err)
	dom, err := fab.OpenDomain(info)
	must(err)
	e := &env{}
	e.txcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatContext, WaitObj: fabric.WaitNone})
	must(err)
	e.rxcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatContext, WaitObj: fabric.WaitNone})
	must(err)
	e.av, err = dom.OpenAV(&fabric.AVAttr{Type: fabric.AVTable})
	must(err)
	e.ep, err = dom.OpenEndpoint(info)
	must(err)
	must(e.ep.BindCQ(e.txcq, fabric.FlagTransmit))
	must(e.ep.BindCQ(e.rxcq, fabric.FlagRecv))
	must(e.ep.BindAV(e.av))
	must(e.ep.Enable())
	e.name, err = e.ep.Name()
	must(err)
	return e
}

var (
	a, p     *env
	to       fabric.Addr
	msg, buf []byte
	ent      = make([]fabric.CQEntry, 1)
	ctx      = new(int)
)

//go:noinline
func postRecv() { must(p.ep.Recv(buf, nil, fabric.AddrUnspec, ctx)) }

//go:noinline
func inject() { must(a.ep.Inject(msg, to)) }

//go:noinline
func send() { must(a.ep.Send(msg, nil, to, ctx)) }

//go:noinline
func readTx() {
	for n, _ := a.txcq.Read(ent); n != 1; n, _ = a.txcq.Read(ent) {
	}
}

//go:noinline
func readRx() {
	for n, _ := p.rxcq.Read(ent); n != 1; n, _ = p.rxcq.Read(ent) {
	}
}

//go:noinline
func emptyPoll() { p.rxcq.Read(ent) }

//go:noinline
func measureInject(n int) {
	for i := 0; i < n; i++ {
		postRecv()
		inject()
		readRx()
	}
}

//go:noinline
func measureSend(n int) {
	for i := 0; i < n; i++ {
		postRecv()
		send()
		readTx()
		readRx()
	}
}

//go:noinline
func measureEmpty(n int) {
	for i := 0; i < n; i++ {
		emptyPoll()
	}
}

func main() {
	size := flag.Int("size", 64, "message size (at most 1472)")
	n := flag.Int("n", 10000, "rounds")
	mode := flag.String("mode", "inject", "inject, send or empty")
	flag.Parse()
	if *size < 0 || *size > 1472 {
		must(fmt.Errorf("size %d out of 0..1472", *size))
	}
	debug.SetGCPercent(-1) // nothing here allocates per round; no collector in the counts
	a, p = open(), open()
	fa := make([]fabric.Addr, 1)
	_, err := a.av.Insert([][]byte{p.name}, fa, 0)
	must(err)
	to = fa[0]
	msg, buf = make([]byte, *size), make([]byte, 1472) // the receive takes any datagram, as fi_pingpong's
	switch *mode {
	case "inject":
		measureInject(1000) // warm-up
		measureInject(*n)
	case "send":
		measureSend(1000)
		measureSend(*n)
	case "empty":
		postRecv()
		measureEmpty(*n)
	default:
		must(fmt.Errorf("unknown mode %q", *mode))
	}
}
