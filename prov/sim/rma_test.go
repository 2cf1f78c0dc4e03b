package sim_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

// TestRMATiming: an RMA operation completes when the target's answer
// is back: a write after its data crossed the link and the answer
// returned, a read after its request crossed and its data came back;
// a fetching atomic likewise, with the fetched value.
func TestRMATiming(t *testing.T) {
	nw := newNetwork(t, sim.Config{Default: sim.Link{Latency: 10 * time.Microsecond, Bandwidth: 1e9}})
	c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: 2, caps: fabric.CapRMA | fabric.CapAtomic})
	mem := make([]byte, 1000)
	mr, err := c.dom.RegMR(mem, fabric.FlagRemoteRead|fabric.FlagRemoteWrite, 0, 0x51, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	// complete waits for the completion of ctx on endpoint 0's CQ and
	// returns the virtual time it took.
	complete := func(what string, ctx any) time.Duration {
		t.Helper()
		start := nw.Now()
		ent := make([]fabric.CQEntry, 1)
		for i := 0; i < 1000; i++ {
			n, err := c.cqs[0].Read(ent)
			if errors.Is(err, fabric.ErrAvail) {
				var ee fabric.CQErrEntry
				c.cqs[0].ReadErr(&ee)
				t.Fatalf("%s: %+v", what, ee)
			}
			if n == 1 && ent[0].OpContext == ctx {
				return nw.Now() - start
			}
		}
		t.Fatalf("%s: no completion after 1000 reads", what)
		return 0
	}
	src := bytes.Repeat([]byte{7}, 1000)
	if err := c.eps[0].RMAWrite(src, nil, c.addrs[1], 0, mr.Key(), "w"); err != nil {
		t.Fatal(err)
	}
	if d := complete("write", "w"); d != 21*time.Microsecond || !bytes.Equal(mem, src) {
		t.Fatalf("write took %v (want 1µs + 10µs there, 10µs back), memory written %v", d, bytes.Equal(mem, src))
	}
	dst := make([]byte, 1000)
	mem[999] = 9
	if err := c.eps[0].RMARead(dst, nil, c.addrs[1], 0, mr.Key(), "r"); err != nil {
		t.Fatal(err)
	}
	if d := complete("read", "r"); d != 21*time.Microsecond || !bytes.Equal(dst, mem) {
		t.Fatalf("read took %v (want 10µs there, 1µs + 10µs back), data read back %v", d, bytes.Equal(dst, mem))
	}
	old := make([]byte, 8)
	if err := c.eps[0].FetchAtomic([]byte{1, 0, 0, 0, 0, 0, 0, 0}, nil, old, nil, c.addrs[1], 0, mr.Key(),
		fabric.DatatypeUint64, fabric.AtomicSum, "a"); err != nil {
		t.Fatal(err)
	}
	if d := complete("fetch atomic", "a"); d != 20*time.Microsecond+16*time.Nanosecond ||
		!bytes.Equal(old, []byte{7, 7, 7, 7, 7, 7, 7, 7}) || mem[0] != 8 {
		t.Fatalf("fetch atomic took %v (want 8ns + 10µs there and back), fetched % x, memory % x", d, old, mem[:8])
	}
}
