package tcp_test

import (
	"fmt"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// BenchmarkRDMRMA measures one RMA operation to a peer endpoint of the same
// process, posted and waited for (manual progress, both sides driven by
// the waiting loop): write (completing on the target's ACK), read, and a
// fetching 8-byte atomic.
func BenchmarkRDMRMA(b *testing.B) {
	for _, op := range []string{"write", "read", "fetch_add"} {
		for _, size := range []int{64, 4096, 65536} {
			if op == "fetch_add" && size != 64 {
				continue
			}
			b.Run(fmt.Sprintf("op=%s/size=%d", op, size), func(b *testing.B) {
				benchRMA(b, op, size)
			})
		}
	}
}

func benchRMA(b *testing.B, op string, size int) {
	b.Setenv("FI_TCP_IFACE", "lo")
	x, y := openRDMOps(b), openRDMOps(b)
	xy := x.insert(y.name)
	mem := make([]byte, size)
	mr, err := y.dom.RegMR(mem, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, 0x42, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mr.Close() })
	buf := make([]byte, size)
	res := make([]byte, 8)
	ctx := new(int)
	ent := make([]fabric.CQEntry, 4)
	post := func() error {
		switch op {
		case "write":
			return x.ep.RMAWrite(buf, nil, xy, 0, 0x42, ctx)
		case "read":
			return x.ep.RMARead(buf, nil, xy, 0, 0x42, ctx)
		}
		return x.ep.FetchAtomic(buf[:8], nil, res, nil, xy, 0, 0x42, fabric.DatatypeUint64, fabric.AtomicSum, ctx)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if err := post(); err != nil {
			b.Fatal(err)
		}
		for {
			n, err := x.cq.Read(ent)
			if n > 0 {
				break
			}
			if err != nil && err != fabric.ErrAgain {
				b.Fatal(err)
			}
			y.cq.Read(nil)
		}
	}
}
