package lnx

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// benchNode is openNode for any RDM provider (prov "lnx", "shm", "tcp").
func benchNode(b *testing.B, prov string) *node {
	b.Helper()
	h := fabric.AllocInfo()
	h.FabricAttr.ProvName = prov
	h.EPAttr.Type = fabric.EPRDM
	h.Caps = fabric.CapMsg
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
	if err != nil {
		b.Fatalf("GetInfo %s: %v", prov, err)
	}
	info := infos[0]
	n := &node{t: b}
	fab, err := fabric.Open(info)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fab.Close() })
	dom, err := fab.OpenDomain(info)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { dom.Close() })
	if n.txcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatContext}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.txcq.Close() })
	if n.rxcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatContext}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.rxcq.Close() })
	if n.av, err = dom.OpenAV(nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.av.Close() })
	if n.ep, err = dom.OpenEndpoint(info); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.ep.Close() })
	for _, err := range []error{n.ep.BindCQ(n.txcq, fabric.FlagTransmit), n.ep.BindCQ(n.rxcq, fabric.FlagRecv),
		n.ep.BindAV(n.av), n.ep.Enable()} {
		if err != nil {
			b.Fatal(err)
		}
	}
	if n.addr, err = n.ep.Name(); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkPingPong: one-way latency (half a round trip) between two
// endpoints of one process, for lnx's local path (shm), its remote path
// (tcp, FI_LNX_DISABLE_SHM) and plain shm and tcp RDM, at 64 B and 64 KiB.
// Compare lnx-local with shm and lnx-remote with tcp.
func BenchmarkPingPong(b *testing.B) {
	for _, c := range []struct{ name, prov, disable string }{
		{"lnx-local", "lnx", ""}, {"shm", "shm", ""}, {"lnx-remote", "lnx", "1"}, {"tcp", "tcp", ""},
	} {
		for _, size := range []int{64, 64 << 10} {
			b.Run(c.name+"/"+sizeName(size), func(b *testing.B) {
				b.Setenv(EnvDisableSHM, c.disable)
				x, y := benchNode(b, c.prov), benchNode(b, c.prov)
				xy, yx := x.insert(y.addr), y.insert(x.addr)
				msg, rx, ry := make([]byte, size), make([]byte, size), make([]byte, size)
				ent := make([]fabric.CQEntry, 4)
				wait := func(cq *fabric.CQ, drive *fabric.CQ) {
					deadline := time.Now().Add(10 * time.Second)
					for {
						if n, _ := cq.Read(ent); n > 0 {
							return
						}
						drive.Read(nil)
						if time.Now().After(deadline) {
							b.Fatal("no completion in 10 s")
						}
					}
				}
				send := func(n *node, dest fabric.Addr) {
					for {
						err := n.ep.Send(msg, nil, dest, nil)
						if err == nil {
							return
						}
						n.txcq.Read(ent)
					}
				}
				round := func() {
					if err := y.ep.Recv(ry, nil, fabric.AddrUnspec, nil); err != nil {
						b.Fatal(err)
					}
					if err := x.ep.Recv(rx, nil, fabric.AddrUnspec, nil); err != nil {
						b.Fatal(err)
					}
					send(x, xy)
					wait(y.rxcq, x.txcq)
					send(y, yx)
					wait(x.rxcq, y.txcq)
					wait(x.txcq, x.rxcq)
					wait(y.txcq, y.rxcq)
				}
				for i := 0; i < 20; i++ {
					round()
				}
				// The thread's CPU time as well: on a loaded machine the
				// wall time also counts the time the benchmark waited
				// for a CPU, the CPU time only the work (one goroutine
				// does it all, on one thread).
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := threadCPU(b)
				b.SetBytes(int64(size))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					round()
				}
				b.StopTimer()
				cpu := threadCPU(b) - cpu0
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N)/1000, "us/oneway")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(2*b.N)/1000, "cpu-us/oneway")
			})
		}
	}
}

// rusageThread is RUSAGE_THREAD of getrusage(2).
const rusageThread = 1

// threadCPU returns the CPU time (user and system) of the calling thread.
func threadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func sizeName(n int) string {
	if n >= 1<<10 {
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// BenchmarkEmptyRead: the cost of a CQ read that finds nothing, which is
// what a busy-polling application mostly does: lnx's drives both paths,
// shm's and tcp's one each.
func BenchmarkEmptyRead(b *testing.B) {
	for _, c := range []struct{ name, prov string }{{"lnx", "lnx"}, {"shm", "shm"}, {"tcp", "tcp"}} {
		b.Run(c.name, func(b *testing.B) {
			n := benchNode(b, c.prov)
			ent := make([]fabric.CQEntry, 4)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n.rxcq.Read(ent)
			}
		})
	}
}
