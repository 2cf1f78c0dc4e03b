package udp_test

import (
	"strconv"
	"testing"

	fabric "github.com/gofabric/fabric"
)

// BenchmarkAPIInjectRecv is BenchmarkAPISendRecv with fi_inject (no send
// completion): the difference between the two is the cost of the send
// completion (write and read), which fi_pingpong pays from inject_size on.
func BenchmarkAPIInjectRecv(b *testing.B) {
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
				if err := a.ep.Inject(msg, to); err != nil {
					b.Fatal(err)
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
