//go:build unix

package udp

import (
	"runtime"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// TestRMAutoIdleWhileCQFull: an auto-progress endpoint whose receive CQ
// is full (FI_RM_ENABLED) leaves datagrams in the socket and sleeps until
// the application reads the CQ, then delivers the rest at once (the
// defect: the socket stays readable, so the goroutine woke and returned
// in a loop, burning a whole core).
func TestRMAutoIdleWhileCQFull(t *testing.T) {
	bothQueues(t, epOpts{auto: true}, func(t *testing.T, o epOpts) {
		// The receiver: a real CQ of size 2 with resource management, as
		// the root package opens it.
		rxq, err := cq.New(cq.Config{Size: 2, Format: provider.CQFormatTagged, ResourceMgmt: true})
		if err != nil {
			t.Fatal(err)
		}
		x := openEP(t, epOpts{})
		info := loInfo(t, o)
		pe, err := (&domain{}).Endpoint(info)
		if err != nil {
			t.Fatal(err)
		}
		ep := pe.(*endpoint)
		rq := srx.New(srx.Config{ResourceMgmt: true})
		rq.SetCompletion(rxq, nil)
		av := &testAV{}
		r := &provider.Resources{TxCQ: newTestCQ(), RxCQ: rxq, AV: av, SRX: rq, OwnSRX: !o.sharedRQ}
		if err := ep.Enable(r); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ep.Close()
			rq.Close()
			rxq.Close()
		})
		name, err := ep.Name()
		if err != nil {
			t.Fatal(err)
		}
		to := x.av.insert(name)
		const msgs = 5
		for i := 0; i < msgs; i++ {
			m := provider.Msg{Buf: make([]byte, 8), Context: i, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
			if err := rq.Post(&m, false); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < msgs; i++ {
			if err := x.ep.Send(provider.Msg{Buf: []byte{byte(i)}, Addr: to, Flags: provider.FlagInject}); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(2 * time.Second)
		for !rxq.Full() {
			if time.Now().After(deadline) {
				t.Fatal("receive CQ never filled")
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		testutil.ExpectIdle(t, "receive CQ full")
		// Reading the CQ resumes delivery at once; nothing was dropped.
		var ents [1]provider.CQEntry
		var worst time.Duration
		for i := 0; i < msgs; i++ {
			t1 := time.Now()
			for {
				n, err := rxq.Read(ents[:])
				if n == 1 {
					break
				}
				if err != provider.EAGAIN {
					t.Fatalf("cq read: %v", err)
				}
				if time.Since(t1) > 2*time.Second {
					t.Fatalf("completion %d never came after the CQ was read", i)
				}
				runtime.Gosched()
			}
			worst = max(worst, time.Since(t1))
			if ents[0].OpContext != i {
				t.Fatalf("completion %d: context %v", i, ents[0].OpContext)
			}
		}
		t.Logf("slowest completion after a read freed room: %v", worst)
		if worst > time.Second {
			t.Fatalf("delivery resumed %v after the CQ was read", worst)
		}
	})
}
