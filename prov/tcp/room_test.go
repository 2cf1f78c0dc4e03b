//go:build unix

package tcp

import (
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// readOne waits for one successful entry from q (waitCQ); it returns
// how long that took.
func readOne(t *testing.T, q *cq.CQ) (provider.CQEntry, time.Duration) {
	t.Helper()
	t0 := time.Now()
	e, ee := waitCQ(t, q)
	if ee != nil {
		t.Fatalf("error completion: %+v", ee)
	}
	return e, time.Since(t0)
}

// TestRMAutoIdleWhileCQFull: an auto-progress endpoint whose stream waits
// for room in the receive CQ (a message matched to a posted receive, or
// an RMA write with remote CQ data) sleeps until the application reads
// the CQ, and then resumes delivery at once (the defect: a 1 ms polling
// timer, thousands of wake-ups a second).
func TestRMAutoIdleWhileCQFull(t *testing.T) {
	t.Run("receive", func(t *testing.T) {
		cli, srv := pair(t, opts{cqSize: 2, auto: true})
		const msgs = 4
		for i := 0; i < msgs; i++ {
			srv.post(make([]byte, 8), i)
		}
		for i := 0; i < msgs; i++ {
			if err := cli.ep.Send(provider.Msg{Buf: []byte{byte(i)}, Flags: provider.FlagInject}); err != nil {
				t.Fatal(err)
			}
		}
		waitCounts(t, "receive CQ full", time.Now().Add(waitLimit), srv.rxCQ.Full)
		time.Sleep(20 * time.Millisecond) // let the stream reach the full CQ
		testutil.ExpectIdle(t, "stream waiting for receive CQ room")
		var worst time.Duration
		for i := 0; i < msgs; i++ {
			e, d := readOne(t, srv.rxCQ)
			if e.OpContext != i {
				t.Fatalf("completion %d: context %v", i, e.OpContext)
			}
			worst = max(worst, d)
		}
		t.Logf("slowest completion after a read freed room: %v", worst)
		if worst > time.Second {
			t.Fatalf("delivery resumed %v after the CQ was read", worst)
		}
	})
	t.Run("remote CQ data", func(t *testing.T) {
		cli, srv := pair(t, opts{cqSize: 2, auto: true})
		mem := make([]byte, 64)
		if _, err := srv.mr.Register([][]byte{mem}, rmaAccess, 0, 0xc0de, true); err != nil {
			t.Fatal(err)
		}
		const writes = 4
		for i := 0; i < writes; i++ {
			if err := cli.ep.Write(provider.Msg{Buf: []byte("abcdefgh"), Data: uint64(i),
				Flags:  provider.FlagInject | provider.FlagRemoteCQData,
				RMAOne: provider.RMAIOV{Addr: uint64(8 * i), Len: 8, Key: 0xc0de}}); err != nil {
				t.Fatal(err)
			}
		}
		waitCounts(t, "receive CQ full", time.Now().Add(waitLimit), srv.rxCQ.Full)
		time.Sleep(20 * time.Millisecond)
		testutil.ExpectIdle(t, "write waiting for receive CQ room")
		for i := 0; i < writes; i++ {
			e, d := readOne(t, srv.rxCQ)
			if e.Data != uint64(i) {
				t.Fatalf("completion %d: data %d", i, e.Data)
			}
			if d > time.Second {
				t.Fatalf("delivery resumed %v after the CQ was read", d)
			}
		}
	})
	t.Run("unexpected limit", func(t *testing.T) {
		cli, srv := pair(t, opts{auto: true, maxUnexp: 1})
		for i := 0; i < 2; i++ {
			if err := cli.ep.Send(provider.Msg{Buf: []byte{byte(i)}, Flags: provider.FlagInject}); err != nil {
				t.Fatal(err)
			}
		}
		waitCounts(t, "unexpected queue full", time.Now().Add(waitLimit),
			func() bool { _, u := srv.rq.Counts(); return u == 1 })
		time.Sleep(20 * time.Millisecond)
		testutil.ExpectIdle(t, "stream waiting for unexpected-queue room")
		// A receive takes the queued message; the next one moves up.
		srv.post(make([]byte, 8), "first")
		if e, _ := readOne(t, srv.rxCQ); e.OpContext != "first" {
			t.Fatalf("completion: %+v", e)
		}
		srv.post(make([]byte, 8), "second")
		e, d := readOne(t, srv.rxCQ)
		if e.OpContext != "second" {
			t.Fatalf("completion: %+v", e)
		}
		if d > time.Second {
			t.Fatalf("second message delivered %v after room was freed", d)
		}
	})
}
