package chaos_test

import (
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
)

// BenchmarkSendRecv measures one send and its receive over udp and shm,
// unhooked and through chaos: transparent (fast path), with a control in
// use (every transmit on the slow path, nothing injected), and tracing
// (records not printed).
func BenchmarkSendRecv(b *testing.B) {
	for _, prov := range []struct {
		name string
		ept  fabric.EPType
	}{{"udp", fabric.EPDgram}, {"shm", fabric.EPRDM}} {
		for _, mode := range []string{"none", "chaos", "chaos-slow", "chaos-trace"} {
			b.Run("prov="+prov.name+"/hook="+mode, func(b *testing.B) {
				var a, r *node
				switch mode {
				case "none":
					a, r = pairEnv(b, prov.name, prov.ept, 0) // FI_HOOK unset: no hook
				case "chaos-trace":
					_, a, r = pair(b, prov.name, prov.ept, 0, &chaos.Config{Trace: true})
				default:
					var h *chaos.Hook
					h, a, r = pair(b, prov.name, prov.ept, 0, nil)
					if mode == "chaos-slow" {
						h.Kill([]byte("nobody"))
					}
				}
				msg := make([]byte, 64)
				rbuf := make([]byte, 64)
				ent := make([]fabric.CQEntry, 4)
				wait := func(cq *fabric.CQ) {
					deadline := time.Now().Add(10 * time.Second)
					for {
						if n, _ := cq.Read(ent); n > 0 {
							return
						}
						if time.Now().After(deadline) {
							b.Fatal("no completion in 10 s")
						}
					}
				}
				b.ReportAllocs()
				b.SetBytes(int64(len(msg)))
				for b.Loop() {
					if err := r.ep.Recv(rbuf, nil, fabric.AddrUnspec, nil); err != nil {
						b.Fatal(err)
					}
					if err := a.ep.Send(msg, nil, a.peer, nil); err != nil {
						b.Fatal(err)
					}
					wait(r.rxcq)
					wait(a.txcq)
				}
			})
		}
	}
}
