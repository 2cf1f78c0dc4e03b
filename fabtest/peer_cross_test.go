package fabtest_test

import (
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	_ "github.com/gofabric/fabric/prov/shm"
	_ "github.com/gofabric/fabric/prov/udp"
)

// closeLater closes c at cleanup.
func closeLater(t *testing.T, what string, c interface{ Close() error }) {
	t.Cleanup(func() {
		if err := c.Close(); err != nil && !errors.Is(err, fabric.ErrClosed) {
			t.Errorf("close %s: %v", what, err)
		}
	})
}

func openDomain(t *testing.T, hints *fabric.Info) (*fabric.Info, *fabric.Domain) {
	t.Helper()
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, hints)
	if err != nil {
		t.Fatalf("GetInfo(%s): %v", hints.FabricAttr.ProvName, err)
	}
	fab, err := fabric.Open(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, "fabric", fab)
	dom, err := fab.OpenDomain(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, "domain", dom)
	return infos[0], dom
}

// TestPeerShmIntoUDPOwner: fi_peer(3) with providers of two kinds, as the
// composite provider uses them: a shm endpoint imports a udp domain's CQ
// and shared receive context (the owner's). Messages from another shm
// endpoint are matched against receives posted on the udp SRX and
// complete in the udp CQ, whether the receive was posted before
// ("EXAMPLE PEER SRX RECEIVE FLOW": get_msg finds it) or after (queued
// with the owner, start_msg when it is posted).
func TestPeerShmIntoUDPOwner(t *testing.T) {
	uh := fabric.AllocInfo()
	uh.Caps = fabric.CapMsg
	uh.EPAttr.Type = fabric.EPDgram
	uh.FabricAttr.ProvName = "udp"
	_, udom := openDomain(t, uh)
	ucq, err := udom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, "udp cq", ucq)
	usrx, err := udom.OpenSRX(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, "udp srx", usrx)

	sh := fabric.AllocInfo()
	sh.Caps = fabric.CapMsg
	sh.EPAttr.Type = fabric.EPRDM
	sh.FabricAttr.ProvName = "shm"
	sinfo, sdom := openDomain(t, sh)
	pcq, err := sdom.OpenCQ(&fabric.CQAttr{Flags: fabric.FlagPeer, Peer: ucq.Owner(), Format: fabric.CQFormatTagged})
	if err != nil {
		t.Fatalf("import the udp CQ into shm: %v", err)
	}
	closeLater(t, "imported cq", pcq)
	psrx, err := sdom.OpenSRX(&fabric.RxAttr{OpFlags: fabric.FlagPeer}, &fabric.PeerSRX{Owner: usrx.Owner()})
	if err != nil {
		t.Fatalf("import the udp SRX into shm: %v", err)
	}
	closeLater(t, "imported srx", psrx)
	av, err := sdom.OpenAV(&fabric.AVAttr{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, "av", av)
	rinfo := sinfo.Dup()
	rinfo.EPAttr.RxCtxCnt = fabric.SharedContext
	r, err := sdom.OpenEndpoint(rinfo)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, "receiver", r)
	for _, err := range []error{r.BindCQ(pcq, fabric.FlagTransmit|fabric.FlagRecv), r.BindAV(av), r.BindSRX(psrx), r.Enable()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	scq, err := sdom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, "sender cq", scq)
	s, err := sdom.OpenEndpoint(sinfo)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, "sender", s)
	for _, err := range []error{s.BindCQ(scq, fabric.FlagTransmit|fabric.FlagRecv), s.BindAV(av), s.Enable()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	name, err := r.Name()
	if err != nil {
		t.Fatal(err)
	}
	fa := []fabric.Addr{0}
	if n, err := av.Insert([][]byte{name}, fa, 0); n != 1 || err != nil {
		t.Fatalf("insert: %d %v", n, err)
	}
	// wait drives the shm receiver (through its imported CQ) and reads the
	// owner's CQ.
	wait := func(what string) fabric.CQEntry {
		t.Helper()
		ent := make([]fabric.CQEntry, 1)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			pcq.Read(nil)
			scq.Read(nil)
			if n, err := ucq.Read(ent); n == 1 {
				return ent[0]
			} else if err != nil && !errors.Is(err, fabric.ErrAgain) {
				t.Fatalf("%s: owner CQ: %v", what, err)
			}
		}
		t.Fatalf("%s: no completion in the owner's CQ", what)
		return fabric.CQEntry{}
	}
	send := func(m string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			err := s.Send([]byte(m), nil, fa[0], nil)
			if err == nil {
				return
			}
			if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
				t.Fatal(err)
			}
			scq.Read(nil)
		}
	}
	// Expected: posted on the owner's queue first.
	buf := make([]byte, 16)
	if err := usrx.Recv(buf, nil, fabric.AddrUnspec, "expected"); err != nil {
		t.Fatal(err)
	}
	send("hello")
	if got := wait("expected"); got.OpContext != "expected" || string(buf[:got.Len]) != "hello" {
		t.Fatalf("expected: %+v %q", got, buf[:got.Len])
	}
	// Unexpected: queued with the owner until a receive is posted there.
	send("later")
	deadline := time.Now().Add(20 * time.Millisecond)
	for time.Now().Before(deadline) {
		pcq.Read(nil)
	}
	late := make([]byte, 16)
	if err := usrx.Recv(late, nil, fabric.AddrUnspec, "late"); err != nil {
		t.Fatal(err)
	}
	if got := wait("unexpected"); got.OpContext != "late" || string(late[:got.Len]) != "later" {
		t.Fatalf("unexpected: %+v %q", got, late[:got.Len])
	}
}
