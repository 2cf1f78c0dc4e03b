package udp_test

import (
	"strconv"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// openBufAPI opens an endpoint through the public API with the given
// hints mode (FI_BUFFERED_RECV or not).
func openBufAPI(tb testing.TB, mode fabric.Mode) (ep *fabric.Endpoint, txcq, rxcq *fabric.CQ, av *fabric.AV) {
	tb.Helper()
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg
	h.Mode = mode
	h.EPAttr.Type = fabric.EPDgram
	h.FabricAttr.ProvName = "udp"
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
	if err != nil {
		tb.Fatal(err)
	}
	info := infos[0]
	if info.Mode&fabric.ModeBufferedRecv != mode&fabric.ModeBufferedRecv {
		tb.Fatalf("mode %v, asked %v", info.Mode, mode)
	}
	fab, err := fabric.Open(info)
	if err != nil {
		tb.Fatal(err)
	}
	dom, err := fab.OpenDomain(info)
	if err != nil {
		tb.Fatal(err)
	}
	if txcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatData}); err != nil {
		tb.Fatal(err)
	}
	if rxcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatData}); err != nil {
		tb.Fatal(err)
	}
	if av, err = dom.OpenAV(&fabric.AVAttr{Type: fabric.AVTable}); err != nil {
		tb.Fatal(err)
	}
	if ep, err = dom.OpenEndpoint(info); err != nil {
		tb.Fatal(err)
	}
	for _, err := range []error{ep.BindCQ(txcq, fabric.FlagTransmit), ep.BindCQ(rxcq, fabric.FlagRecv),
		ep.BindAV(av), ep.Enable()} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() {
		ep.Close()
		av.Close()
		txcq.Close()
		rxcq.Close()
		dom.Close()
		fab.Close()
	})
	return ep, txcq, rxcq, av
}

// BenchmarkAPIBufferedRecv measures one message through the public API
// received under FI_BUFFERED_RECV: the report (the provider's buffer), then
// a claim into the application's buffer and its completion, or a discard.
// op=recv is the same exchange without the mode (a posted receive), for
// comparison.
func BenchmarkAPIBufferedRecv(b *testing.B) {
	for _, size := range []int{64, 1472} {
		for _, op := range []string{"recv", "claim", "discard"} {
			b.Run("prov=udp/size="+strconv.Itoa(size)+"/op="+op, func(b *testing.B) {
				mode := fabric.ModeBufferedRecv
				if op == "recv" {
					mode = 0
				}
				a, atx, _, aav := openBufAPI(b, 0)
				p, _, prx, _ := openBufAPI(b, mode)
				name, err := p.Name()
				if err != nil {
					b.Fatal(err)
				}
				to := make([]fabric.Addr, 1)
				if _, err := aav.Insert([][]byte{name}, to, 0); err != nil {
					b.Fatal(err)
				}
				msg, buf := make([]byte, size), make([]byte, size)
				ent := make([]fabric.CQEntry, 1)
				ctx := new(int)
				m := &fabric.Msg{IOV: [][]byte{buf}}
				read := func(cq *fabric.CQ) {
					for {
						if n, _ := cq.Read(ent); n == 1 {
							return
						}
					}
				}
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					if op == "recv" {
						if err := p.Recv(buf, nil, fabric.AddrUnspec, ctx); err != nil {
							b.Fatal(err)
						}
					}
					if err := a.Send(msg, nil, to[0], ctx); err != nil {
						b.Fatal(err)
					}
					read(atx)
					read(prx)
					if op == "recv" {
						continue
					}
					m.Context = ent[0].OpContext
					flags := fabric.FlagClaim
					if op == "discard" {
						flags = fabric.FlagDiscard
					}
					if err := p.RecvMsg(m, flags); err != nil {
						b.Fatal(err)
					}
					if op == "claim" {
						read(prx)
					}
				}
			})
		}
	}
}

// A buffered receive costs one allocation, its RecvContext (which is the
// application's to hold until it claims or discards): the report, the
// claim and their completions allocate nothing else; without the mode
// the receive path stays at none.
func TestAPIBufferedRecvAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts are not meaningful under -race")
	}
	a, atx, _, aav := openBufAPI(t, 0)
	p, _, prx, _ := openBufAPI(t, fabric.ModeBufferedRecv)
	name, err := p.Name()
	if err != nil {
		t.Fatal(err)
	}
	to := make([]fabric.Addr, 1)
	if _, err := aav.Insert([][]byte{name}, to, 0); err != nil {
		t.Fatal(err)
	}
	msg, buf := make([]byte, 64), make([]byte, 64)
	ent := make([]fabric.CQEntry, 1)
	m := &fabric.Msg{IOV: [][]byte{buf}}
	read := func(cq *fabric.CQ) {
		for i := 0; ; i++ {
			if n, _ := cq.Read(ent); n == 1 {
				return
			}
			if i > 10_000_000 {
				t.Fatal("no completion")
			}
		}
	}
	round := func() {
		if err := a.Send(msg, nil, to[0], nil); err != nil {
			t.Fatal(err)
		}
		read(atx)
		read(prx)
		m.Context = ent[0].OpContext
		if err := p.RecvMsg(m, fabric.FlagClaim); err != nil {
			t.Fatal(err)
		}
		read(prx)
	}
	round()
	if n := testing.AllocsPerRun(200, round); n > 1 {
		t.Fatalf("%v allocations per buffered receive, want at most 1 (the RecvContext)", n)
	}
}
