package udp_test

import (
	"strconv"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// apiEnv is one endpoint opened through the public API.
type apiEnv struct {
	ep   *fabric.Endpoint
	txcq *fabric.CQ
	rxcq *fabric.CQ
	av   *fabric.AV
	name []byte
}

func openAPI(tb testing.TB) *apiEnv {
	tb.Helper()
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg
	h.EPAttr.Type = fabric.EPDgram
	h.FabricAttr.ProvName = "udp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
	if err != nil {
		tb.Fatal(err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		tb.Fatal(err)
	}
	dom, err := fab.OpenDomain(info)
	if err != nil {
		tb.Fatal(err)
	}
	e := &apiEnv{}
	if e.txcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg}); err != nil {
		tb.Fatal(err)
	}
	if e.rxcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg}); err != nil {
		tb.Fatal(err)
	}
	if e.av, err = dom.OpenAV(&fabric.AVAttr{Type: fabric.AVTable}); err != nil {
		tb.Fatal(err)
	}
	if e.ep, err = dom.OpenEndpoint(info); err != nil {
		tb.Fatal(err)
	}
	for _, err := range []error{e.ep.BindCQ(e.txcq, fabric.FlagTransmit), e.ep.BindCQ(e.rxcq, fabric.FlagRecv),
		e.ep.BindAV(e.av), e.ep.Enable()} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	if e.name, err = e.ep.Name(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		e.ep.Close()
		e.av.Close()
		e.txcq.Close()
		e.rxcq.Close()
		dom.Close()
		fab.Close()
	})
	return e
}

func (e *apiEnv) insert(tb testing.TB, name []byte) fabric.Addr {
	fa := make([]fabric.Addr, 1)
	if n, err := e.av.Insert([][]byte{name}, fa, 0); n != 1 || err != nil {
		tb.Fatal(err)
	}
	return fa[0]
}

// BenchmarkAPISendRecv measures one message through the public API in one
// goroutine: post a receive, inject (or send and reap the send
// completion), then read the receive completion from the CQ (manual
// progress inside CQ.Read).
func BenchmarkAPISendRecv(b *testing.B) {
	for _, size := range []int{64, 1472} {
		b.Run("prov=udp/size="+strconv.Itoa(size), func(b *testing.B) {
			a, p := openAPI(b), openAPI(b)
			to := a.insert(b, p.name)
			msg, buf := make([]byte, size), make([]byte, size)
			ent := make([]fabric.CQEntry, 1)
			ctx := new(int)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				if err := p.ep.Recv(buf, nil, fabric.AddrUnspec, ctx); err != nil {
					b.Fatal(err)
				}
				if err := a.ep.Send(msg, nil, to, ctx); err != nil {
					b.Fatal(err)
				}
				for {
					if n, _ := a.txcq.Read(ent); n == 1 {
						break
					}
				}
				for {
					if n, _ := p.rxcq.Read(ent); n == 1 {
						break
					}
				}
			}
		})
	}
}

// BenchmarkAPICQReadEmpty measures an empty CQ read (with its progress
// poll of the bound endpoint's socket) through the public API, with no
// receive posted (the bounce-buffer path).
func BenchmarkAPICQReadEmpty(b *testing.B) {
	e := openAPI(b)
	ent := make([]fabric.CQEntry, 4)
	b.ReportAllocs()
	for b.Loop() {
		e.rxcq.Read(ent)
	}
}

// BenchmarkAPICQReadEmptyPosted is BenchmarkAPICQReadEmpty with a receive
// posted, as in a ping-pong's wait: the poll tries to receive straight
// into it.
func BenchmarkAPICQReadEmptyPosted(b *testing.B) {
	e := openAPI(b)
	if err := e.ep.Recv(make([]byte, 64), nil, fabric.AddrUnspec, new(int)); err != nil {
		b.Fatal(err)
	}
	ent := make([]fabric.CQEntry, 4)
	b.ReportAllocs()
	for b.Loop() {
		e.rxcq.Read(ent)
	}
}

func TestAPIHotPathAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	a, p := openAPI(t), openAPI(t)
	to := a.insert(t, p.name)
	msg, buf := make([]byte, 64), make([]byte, 64)
	ent := make([]fabric.CQEntry, 1)
	ctx := new(int)
	round := func() {
		p.ep.Recv(buf, nil, fabric.AddrUnspec, ctx)
		a.ep.Inject(msg, to)
		for i := 0; i < 1e6; i++ {
			if n, _ := p.rxcq.Read(ent); n == 1 {
				return
			}
		}
		t.Fatal("no receive completion")
	}
	for i := 0; i < 10; i++ {
		round()
	}
	if n := testing.AllocsPerRun(200, round); n != 0 && !raceOn {
		t.Fatalf("inject + recv + CQ read through the public API: %v allocs per round", n)
	}
	if n := testing.AllocsPerRun(200, func() { p.rxcq.Read(ent) }); n != 0 && !raceOn {
		t.Fatalf("empty CQ read: %v allocs", n)
	}
	// fi_send with its completion (provider.BufSender).
	sendRound := func() {
		p.ep.Recv(buf, nil, fabric.AddrUnspec, ctx)
		if err := a.ep.Send(msg, nil, to, ctx); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 1e6; i++ {
			if n, _ := a.txcq.Read(ent); n == 1 {
				break
			}
		}
		for i := 0; i < 1e6; i++ {
			if n, _ := p.rxcq.Read(ent); n == 1 {
				return
			}
		}
		t.Fatal("no receive completion")
	}
	sendRound()
	if n := testing.AllocsPerRun(200, sendRound); n != 0 && !raceOn {
		t.Fatalf("send + recv + CQ reads through the public API: %v allocs per round", n)
	}
}
