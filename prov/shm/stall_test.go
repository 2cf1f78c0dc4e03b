package shm_test

import (
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/testutil"
)

// TestAutoProgressFullCQSleeps: an auto-progress endpoint whose receive
// CQ is full (FI_RM_ENABLED back-pressure: the messages wait in its
// queue) sleeps until the application reads the CQ instead of spinning on
// the waiting command, and then delivers the rest at once.
func TestAutoProgressFullCQSleeps(t *testing.T) {
	s := newNode(t, nodeOpts{})
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, hints(nodeOpts{auto: true}))
	if err != nil {
		t.Fatal(err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "fabric", fab.Close()) })
	dom, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "domain", dom.Close()) })
	cq, err := dom.OpenCQ(&fabric.CQAttr{Size: 2, Format: fabric.CQFormatContext})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "cq", cq.Close()) })
	av, err := dom.OpenAV(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "av", av.Close()) })
	ep, err := dom.OpenEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "endpoint", ep.Close()) })
	for _, err := range []error{ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv), ep.BindAV(av), ep.Enable()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	name, err := ep.Name()
	if err != nil {
		t.Fatal(err)
	}
	to := s.insert(name)
	const msgs = 6
	bufs := make([][]byte, msgs)
	for i := range bufs {
		bufs[i] = make([]byte, 8)
		if err := ep.Recv(bufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < msgs; i++ {
		if err := s.ep.Send([]byte(fmt.Sprint(i)), nil, to, nil); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond) // the CQ fills up
	testutil.ExpectIdle(t, "auto progress with a full receive CQ")
	start := time.Now()
	ent := make([]fabric.CQEntry, 1)
	for i := 0; i < msgs; i++ {
		n, err := cq.SRead(ent, 0, 5*time.Second)
		if n != 1 || err != nil || ent[0].OpContext != i || string(bufs[i][:1]) != fmt.Sprint(i) {
			t.Fatalf("completion %d: %d %v %+v", i, n, err, ent[0])
		}
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("the held-back messages took %v once the CQ was read", d)
	}
	t.Logf("held-back messages delivered in %v", time.Since(start))
}
