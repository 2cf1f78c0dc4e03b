//go:build unix

package udp

import (
	"net/netip"
	"testing"

	"github.com/gofabric/fabric/internal/av"
	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

// TestSendBufOwnCQAndAV drives SendBuf on an endpoint bound to this
// module's CQ and AV, as the root package binds it (the straight path for
// fi_send): a completion with the context and the counter bumped; no
// completion and no send without room in a CQ with resource management
// (EAGAIN), then a send once the CQ was read; EINVAL for an address not in
// the AV; an error completion for a kernel error; EBADF once closed.
func TestSendBufOwnCQAndAV(t *testing.T) {
	txq, err := cq.New(cq.Config{Size: 1, Format: provider.CQFormatMsg, ResourceMgmt: true})
	if err != nil {
		t.Fatal(err)
	}
	table, err := av.New(av.Config{Type: provider.AVTable, Format: provider.SockAddrIn})
	if err != nil {
		t.Fatal(err)
	}
	x := openEP(t, epOpts{})
	pe, err := (&domain{}).Endpoint(loInfo(t, epOpts{}))
	if err != nil {
		t.Fatal(err)
	}
	ep := pe.(*endpoint)
	rq := srx.New(srx.Config{})
	cntr := &testCntr{}
	r := &provider.Resources{TxCQ: txq, RxCQ: newTestCQ(), AV: table, SRX: rq, OwnSRX: true}
	r.Cntrs[provider.CntrSend] = cntr
	if err := ep.Enable(r); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ep.Close()
		rq.Close()
		txq.Close()
	})
	if ep.txDirect == nil || ep.dav == nil {
		t.Fatal("the endpoint did not take this module's CQ and AV")
	}
	name, err := x.ep.Name()
	if err != nil {
		t.Fatal(err)
	}
	six := appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("[::1]:9")})
	fa := make([]provider.Addr, 2)
	if n, err := table.Insert([][]byte{name, six}, fa, 0, nil); n != 2 || err != nil {
		t.Fatalf("AV insert: %d, %v", n, err)
	}
	to, bad := fa[0], fa[1]
	buf := make([]byte, 16)
	x.post(t, buf, "rx")
	if err := ep.SendBuf([]byte("hello"), to, "tx", provider.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	x.waitRx(t, 1)
	if string(buf[:5]) != "hello" {
		t.Fatalf("received %q", buf[:5])
	}
	if v, _ := cntr.get(); v != 1 {
		t.Fatalf("send counter %d", v)
	}
	// The CQ (size 1, FI_RM_ENABLED) holds that completion: no room.
	if err := ep.SendBuf([]byte("full"), to, "full", provider.FlagCompletion); err != provider.EAGAIN {
		t.Fatalf("send with the CQ full: %v, want EAGAIN", err)
	}
	var ents [2]provider.CQEntry
	if n, err := txq.Read(ents[:]); n != 1 || err != nil || ents[0].OpContext != "tx" ||
		ents[0].Flags != provider.FlagSend|provider.FlagMsg {
		t.Fatalf("send completions: %d %v %+v", n, err, ents[0])
	}
	x.post(t, buf, "rx2")
	if err := ep.SendBuf([]byte("again"), to, "tx2", provider.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	x.waitRx(t, 2)
	if string(buf[:5]) != "again" {
		t.Fatalf("received %q after the CQ was read (the refused send went out?)", buf[:5])
	}
	if n, _ := txq.Read(ents[:]); n != 1 || ents[0].OpContext != "tx2" {
		t.Fatalf("second send completion: %d %+v", n, ents[0])
	}
	if err := ep.SendBuf([]byte("x"), 99, "bad", provider.FlagCompletion); err != provider.EINVAL {
		t.Fatalf("send to an address not in the AV: %v", err)
	}
	// An IPv6 destination on an IPv4 socket: the kernel refuses it, which
	// completes in error (and counts as a send error).
	if err := ep.SendBuf([]byte("x"), bad, "err", provider.FlagCompletion); err != nil {
		t.Fatalf("send: %v", err)
	}
	if n, err := txq.Read(ents[:]); n != 0 || err != provider.EAVAIL {
		t.Fatalf("read after a failed send: %d, %v, want EAVAIL", n, err)
	}
	var ee provider.CQErrEntry
	if err := txq.ReadErr(&ee); err != nil || ee.OpContext != "err" || ee.Err == 0 {
		t.Fatalf("error completion: %v %+v", err, ee)
	}
	if _, e := cntr.get(); e != 1 {
		t.Fatalf("send error counter %d", e)
	}
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ep.SendBuf([]byte("x"), to, "closed", provider.FlagCompletion); err != provider.EBADF {
		t.Fatalf("send after Close: %v, want EBADF", err)
	}
}
