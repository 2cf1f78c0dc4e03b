package all_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// FI_PEER_TRANSFER (fi_peer(3)) with a fake offload provider, "offload":
// it asks for FI_PEER_TRANSFER, imports the main provider's endpoint
// (udp, shm) and transfers over it; the main endpoint hands the offload's
// completions back through its fi_ops_transfer_peer.

const offloadName = "offload"

func init() { provider.Register(offloadProv{}) }

type offloadProv struct{}

func (offloadProv) Name() string    { return offloadName }
func (offloadProv) Version() uint32 { return provider.Version(1, 0) }
func (offloadProv) GetInfo(uint32, string, string, provider.Flags, *provider.Info) ([]*provider.Info, error) {
	return nil, provider.ENODATA // opened by name only, by the main provider
}
func (offloadProv) Fabric(*provider.FabricAttr) (provider.Fabric, error) { return offloadFabric{}, nil }

type offloadFabric struct{}

func (offloadFabric) Domain(*provider.Info) (provider.Domain, error) { return offloadDomain{}, nil }
func (offloadFabric) Close() error                                   { return nil }

type offloadDomain struct{}

// Endpoint: the offload provider is not usable on its own.
func (offloadDomain) Endpoint(*provider.Info) (provider.Endpoint, error) { return nil, provider.ENOSYS }
func (offloadDomain) Close() error                                       { return nil }

// offloadMinMsg is the offload's restriction on the main provider's
// objects (fi_peer_transfer_context.info): messages of at least this size.
const offloadMinMsg = 64

// TransferEndpoint links the offload's endpoint to the main endpoint.
func (offloadDomain) TransferEndpoint(info *provider.Info, ctx *provider.TransferContext) (provider.Endpoint, error) {
	if ctx.Info != nil && ctx.Info.EPAttr != nil && ctx.Info.EPAttr.MaxMsgSize < offloadMinMsg {
		return nil, provider.EINVAL // cannot meet the main provider's restrictions
	}
	main, ok := ctx.EP.(*fabric.Endpoint)
	if !ok {
		return nil, provider.EINVAL
	}
	ep := &offloadEP{main: main}
	ctx.Peer = ep
	return ep, nil
}

// offloadEP is the offload's endpoint and its fi_ops_transfer_peer.
type offloadEP struct {
	main *fabric.Endpoint

	mu    sync.Mutex
	ok    []fabric.CQEntry
	errs  []fabric.CQErrEntry
	eps   []any
	srcs  []fabric.Addr
	close bool
}

func (e *offloadEP) Progress()                        {}
func (e *offloadEP) Enable(*provider.Resources) error { return nil }
func (e *offloadEP) Close() error                     { e.close = true; return nil }
func (e *offloadEP) Name() ([]byte, error)            { return []byte("offload"), nil }
func (e *offloadEP) Send(provider.Msg) error          { return provider.ENOSYS }
func (e *offloadEP) Cancel(any) error                 { return provider.ENOENT }
func (e *offloadEP) send(b []byte, dest fabric.Addr, ctx any) error {
	return e.main.Send(b, nil, dest, &peer.TransferOp{Context: ctx})
}
func (e *offloadEP) recv(b []byte, ctx any) error {
	return e.main.Recv(b, nil, fabric.AddrUnspec, &peer.TransferOp{Context: ctx})
}

// Complete implements peer.TransferPeer.
func (e *offloadEP) Complete(ep any, c *fabric.CQEntry, src fabric.Addr) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ok, e.eps, e.srcs = append(e.ok, *c), append(e.eps, ep), append(e.srcs, src)
	return nil
}

// CompErr implements peer.TransferPeer.
func (e *offloadEP) CompErr(ep any, c *fabric.CQErrEntry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs, e.eps = append(e.errs, *c), append(e.eps, ep)
	return nil
}

func (e *offloadEP) counts() (int, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.ok), len(e.errs)
}

// xferNode is an endpoint of the main provider with its CQ and AV.
type xferNode struct {
	info *fabric.Info
	dom  *fabric.Domain
	cq   *fabric.CQ
	av   *fabric.AV
	ep   *fabric.Endpoint
	addr []byte
}

func openXferNode(t *testing.T, prov string, epType fabric.EPType, enable bool) *xferNode {
	t.Helper()
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg
	h.EPAttr.Type = epType
	h.FabricAttr.ProvName = prov
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
	if err != nil {
		t.Fatal(err)
	}
	n := &xferNode{info: infos[0]}
	fab, err := fabric.Open(n.info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fab.Close() })
	if n.dom, err = fab.OpenDomain(n.info); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.dom.Close() })
	if n.cq, err = n.dom.OpenCQ(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.cq.Close() })
	if n.av, err = n.dom.OpenAV(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.av.Close() })
	if n.ep, err = n.dom.OpenEndpoint(n.info); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.ep.Close() })
	if err := n.ep.BindCQ(n.cq, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
		t.Fatal(err)
	}
	if err := n.ep.BindAV(n.av); err != nil {
		t.Fatal(err)
	}
	if enable {
		n.enable(t)
	}
	return n
}

func (n *xferNode) enable(t *testing.T) {
	t.Helper()
	if err := n.ep.Enable(); err != nil {
		t.Fatal(err)
	}
	var err error
	if n.addr, err = n.ep.Name(); err != nil {
		t.Fatal(err)
	}
}

func (n *xferNode) insert(t *testing.T, addr []byte) fabric.Addr {
	t.Helper()
	fa := make([]fabric.Addr, 1)
	if k, err := n.av.Insert([][]byte{addr}, fa, 0); k != 1 || err != nil {
		t.Fatalf("insert: %d %v", k, err)
	}
	return fa[0]
}

// drain reads the CQs until cond holds, bounded, and returns what cq
// itself delivered.
func drain(t *testing.T, what string, cond func() bool, cq *fabric.CQ, others ...*fabric.CQ) []fabric.CQEntry {
	t.Helper()
	var got []fabric.CQEntry
	ent := make([]fabric.CQEntry, 4)
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out", what)
		}
		n, err := cq.Read(ent)
		got = append(got, ent[:max(n, 0)]...)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			cq.ReadErr(&ee)
			t.Fatalf("%s: error completion in the main CQ: %+v", what, ee)
		}
		for _, o := range others {
			o.Read(nil)
		}
	}
	return got
}

func offloadDom(t *testing.T) *fabric.Domain {
	t.Helper()
	fab, err := fabric.OpenFabric(&fabric.FabricAttr{ProvName: offloadName})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fab.Close() })
	d, err := fab.OpenDomain(offloadInfo())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func offloadInfo() *fabric.Info {
	return &fabric.Info{Mode: fabric.ModePeerTransfer, EPAttr: &fabric.EPAttr{Type: fabric.EPRDM},
		FabricAttr: &fabric.FabricAttr{ProvName: offloadName}, DomainAttr: &fabric.DomainAttr{Name: "offload"}}
}

func TestPeerTransferUDP(t *testing.T) { testPeerTransfer(t, "udp", fabric.EPDgram) }

func TestPeerTransferSHM(t *testing.T) { testPeerTransfer(t, "shm", fabric.EPRDM) }

// testPeerTransfer: the offload's sends and receives over the main
// endpoint complete through its Complete/CompErr, with its own contexts
// and the main endpoint as ep, never in the main endpoint's CQ, which
// keeps reporting the main provider's own transfers; the link's errors.
func testPeerTransfer(t *testing.T, prov string, epType fabric.EPType) {
	od := offloadDom(t)
	main := openXferNode(t, prov, epType, false)
	remote := openXferNode(t, prov, epType, true)

	// Errors: no context, info without the mode bit, a main endpoint of
	// the same domain, a provider that does not import transfers, a
	// restriction the offload cannot meet.
	_, err := od.OpenTransferEndpoint(offloadInfo(), nil)
	isInval(t, "no context", err)
	noMode := offloadInfo()
	noMode.Mode = 0
	_, err = od.OpenTransferEndpoint(noMode, &peer.TransferContext{EP: main.ep})
	isInval(t, "info without FI_PEER_TRANSFER", err)
	withMode := main.info.Dup()
	withMode.Mode |= fabric.ModePeerTransfer
	_, err = remote.dom.OpenTransferEndpoint(withMode, &peer.TransferContext{EP: main.ep})
	isInval(t, "a provider that does not import transfers", err)
	small := main.info.Dup()
	small.EPAttr.MaxMsgSize = offloadMinMsg - 1
	_, err = od.OpenTransferEndpoint(offloadInfo(), &peer.TransferContext{EP: main.ep, Info: small})
	isInval(t, "restrictions the offload cannot meet", err)

	ctx := &peer.TransferContext{EP: main.ep, Info: main.info}
	oep, err := od.OpenTransferEndpoint(offloadInfo(), ctx)
	if err != nil {
		t.Fatalf("open the offload's endpoint: %v", err)
	}
	off, ok := ctx.Peer.(*offloadEP)
	if !ok {
		t.Fatalf("ctx.Peer = %T; want the offload's callbacks", ctx.Peer)
	}
	_, err = od.OpenTransferEndpoint(offloadInfo(), &peer.TransferContext{EP: main.ep})
	isInval(t, "a second link to the same main endpoint", err)
	main.enable(t)
	_, err = od.OpenTransferEndpoint(offloadInfo(), &peer.TransferContext{EP: remote.ep})
	isInval(t, "an enabled main endpoint", err)

	dest := main.insert(t, remote.addr)
	back := remote.insert(t, main.addr)

	// Sends: the offload's completes through Complete, the main's own in
	// its CQ.
	rbufs := [2][]byte{make([]byte, 64), make([]byte, 64)}
	for i := range rbufs {
		if err := remote.ep.Recv(rbufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := off.send([]byte("offload"), dest, "x-send"); err != nil {
		t.Fatal(err)
	}
	if err := main.ep.Send([]byte("main"), nil, dest, "own"); err != nil {
		t.Fatal(err)
	}
	var own []fabric.CQEntry
	remoteN := 0
	ent := make([]fabric.CQEntry, 4)
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := main.cq.Read(ent)
		own = append(own, ent[:max(n, 0)]...)
		if errors.Is(err, fabric.ErrAvail) {
			t.Fatal("error completion in the main CQ")
		}
		m, _ := remote.cq.Read(ent)
		remoteN += max(m, 0)
		if ok, _ := off.counts(); ok == 1 && remoteN == 2 && len(own) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sends: offload %d, remote %d, main CQ %+v", len(off.ok), remoteN, own)
		}
	}
	if len(own) != 1 || own[0].OpContext != "own" {
		t.Fatalf("main CQ: %+v; want only the main's own send", own)
	}
	off.mu.Lock()
	if c := off.ok[0]; c.OpContext != "x-send" || c.Flags&fabric.FlagSend == 0 || off.eps[0] != main.ep {
		t.Fatalf("offload completion %+v on %v; want x-send on the main endpoint", c, off.eps[0])
	}
	off.mu.Unlock()

	// A receive the offload posts on the main endpoint, truncated: its
	// error goes to CompErr with the offload's context.
	if err := off.recv(make([]byte, 4), "x-recv"); err != nil {
		t.Fatal(err)
	}
	if err := remote.ep.Send([]byte("longer than four"), nil, back, nil); err != nil {
		t.Fatal(err)
	}
	drain(t, "truncated receive", func() bool { _, e := off.counts(); return e == 1 }, main.cq, remote.cq)
	off.mu.Lock()
	if e := off.errs[0]; e.OpContext != "x-recv" || e.Err != fabric.ErrTrunc {
		t.Fatalf("offload error completion %+v; want x-recv, ETRUNC", e)
	}
	off.mu.Unlock()
	if n, err := main.cq.Read(make([]fabric.CQEntry, 1)); n != 0 || !errors.Is(err, fabric.ErrAgain) {
		t.Fatalf("main CQ after the offload's receive: %d, %v; want empty", n, err)
	}

	if err := main.ep.Close(); !errors.Is(err, fabric.ErrBusy) {
		t.Fatalf("close the main endpoint while linked: %v; want EBUSY", err)
	}
	if err := oep.Close(); err != nil {
		t.Fatal(err)
	}
	if !off.close {
		t.Fatal("the offload's endpoint was not closed")
	}
	if err := main.ep.Close(); err != nil {
		t.Fatalf("close the main endpoint after the offload's: %v", err)
	}
}

func isInval(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, fabric.ErrInval) {
		t.Fatalf("%s: %v; want EINVAL", what, err)
	}
}
