package tcp

import (
	"bytes"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cntr"
	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/eq"
	"github.com/gofabric/fabric/internal/mrkey"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

func TestMain(m *testing.M) {
	if h := os.Getenv("TCP_TEST_HELPER"); h != "" {
		if f := testHelpers[h]; f != nil {
			os.Exit(f())
		}
		os.Exit(helperMain())
	}
	testutil.Main(m)
}

const waitLimit = 5 * time.Second

// testHelpers are the roles a re-executed test binary can play, by the
// value of TCP_TEST_HELPER (registered by init functions of test files);
// any other value runs helperMain.
var testHelpers = map[string]func() int{}

type opts struct {
	auto     bool // data progress auto
	manualCM bool // control progress manual
	tagged   bool
	txSize   uint64
	maxUnexp int
	cqSize   int    // size of both CQs (default 4096)
	noRM     bool   // FI_RM_DISABLED
	txCQ     *cq.CQ // a transmit CQ shared with other endpoints (owned by the test)
}

func loInfo(t testing.TB, o opts) *provider.Info {
	t.Helper()
	t.Setenv(envIface, "lo")
	hints := &provider.Info{AddrFormat: provider.SockAddrIn, DomainAttr: &provider.DomainAttr{},
		EPAttr: &provider.EPAttr{Type: provider.EPMsg}}
	if o.auto {
		hints.DomainAttr.DataProgress = provider.ProgressAuto
	}
	if o.manualCM {
		hints.DomainAttr.ControlProgress = provider.ProgressManual
	}
	if o.tagged {
		hints.Caps = provider.CapMsg | provider.CapTagged | provider.CapRMA
	}
	infos, err := tcpProvider{}.GetInfo(provider.APIVersion, "", "", 0, hints)
	if err != nil {
		t.Fatal(err)
	}
	info := infos[0]
	if o.txSize != 0 {
		info.TxAttr.Size = o.txSize
	}
	if o.noRM {
		info.DomainAttr.ResourceMgmt = provider.RMDisabled
	}
	return info
}

// node is an endpoint with real resources: CQs, EQ, receive queue, MR
// table and counters from the internal machinery, with the endpoint bound
// as their progress source.
type node struct {
	t     testing.TB
	ep    *endpoint
	txCQ  *cq.CQ
	rxCQ  *cq.CQ
	eq    *eq.EQ
	rq    *srx.Queue
	mr    *mrkey.Table
	cntrs [provider.NumCntrs]*cntr.Cntr
	ownTx bool // txCQ is the node's own (closed with it)
}

func newNode(t testing.TB, info *provider.Info, o opts) *node {
	t.Helper()
	pe, err := (&domain{}).Endpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, ep: pe.(*endpoint), mr: mrkey.New(mrkey.Config{})}
	// As the root package does: resource management unless the domain
	// disables it.
	rm := info.DomainAttr == nil || info.DomainAttr.ResourceMgmt != provider.RMDisabled
	size := o.cqSize
	if size == 0 {
		size = 4096
	}
	cfg := cq.Config{Size: size, Format: provider.CQFormatTagged, WaitObj: provider.WaitUnspec, ResourceMgmt: rm}
	n.txCQ = o.txCQ
	if n.txCQ == nil {
		n.txCQ = must(cq.New(cfg))(t)
		n.ownTx = true
	}
	n.rxCQ = must(cq.New(cfg))(t)
	n.eq = must(eq.New(eq.Config{WaitObj: provider.WaitUnspec}))(t)
	n.rq = srx.New(srx.Config{Tagged: true, MaxUnexpected: o.maxUnexp, ResourceMgmt: rm})
	n.rq.SetCompletion(n.rxCQ, nil)
	for i := range n.cntrs {
		n.cntrs[i] = must(cntr.New(cntr.Config{}))(t)
	}
	for _, s := range []interface {
		AddSource(provider.Progresser) error
	}{n.txCQ, n.rxCQ, n.eq} {
		if err := s.AddSource(n.ep); err != nil {
			t.Fatal(err)
		}
	}
	r := &provider.Resources{TxCQ: n.txCQ, RxCQ: n.rxCQ, EQ: n.eq, SRX: n.rq, MR: n.mr}
	for i, c := range n.cntrs {
		r.Cntrs[i] = c
	}
	if err := n.ep.Enable(r); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.close)
	return n
}

func (n *node) close() {
	n.rq.Close()
	n.ep.Close()
	if n.ownTx {
		n.txCQ.Close()
	} else {
		n.txCQ.RemoveSource(n.ep)
	}
	n.rxCQ.Close()
	n.eq.Close()
	for _, c := range n.cntrs {
		c.Close()
	}
}

func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// listener is a passive endpoint with its EQ.
type listener struct {
	p    *pep
	eq   *eq.EQ
	name []byte
}

func listen(t testing.TB, info *provider.Info) *listener {
	t.Helper()
	pe, err := (&fabric{}).PassiveEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{p: pe.(*pep), eq: must(eq.New(eq.Config{WaitObj: provider.WaitUnspec}))(t)}
	if err := l.eq.AddSource(l.p); err != nil {
		t.Fatal(err)
	}
	if err := l.p.Listen(l.eq); err != nil {
		t.Fatal(err)
	}
	l.name, err = l.p.Name()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.p.Close()
		l.eq.Close()
	})
	return l
}

// readEQ waits for the next EQ event (or error event).
func readEQ(t testing.TB, q *eq.EQ) (provider.EQEntry, *provider.EQErrEntry) {
	t.Helper()
	ev, err := q.SRead(0, time.Now().Add(waitLimit), nil)
	if err == provider.EAVAIL {
		var ee provider.EQErrEntry
		if err := q.ReadErr(&ee, 0); err != nil {
			t.Fatalf("eq readerr: %v", err)
		}
		return provider.EQEntry{}, &ee
	}
	if err != nil {
		t.Fatalf("eq sread: %v", err)
	}
	return ev, nil
}

func expectEvent(t testing.TB, q *eq.EQ, want provider.EventType) provider.EQEntry {
	t.Helper()
	ev, ee := readEQ(t, q)
	if ee != nil {
		t.Fatalf("want %v, got EQ error %v (%v) data %q", want, ee.Err, ee.Err, ee.ErrData)
	}
	if ev.Event != want {
		t.Fatalf("want %v, got %v", want, ev.Event)
	}
	return ev
}

// expectNoEvent checks the EQ stays empty for d.
func expectNoEvent(t testing.TB, q *eq.EQ, d time.Duration) {
	t.Helper()
	ev, err := q.SRead(0, time.Now().Add(d), nil)
	if err == nil || err == provider.EAVAIL {
		t.Fatalf("unexpected EQ event %+v (%v)", ev, err)
	}
}

// pair connects a client and a server endpoint through a listener.
func pair(t testing.TB, o opts) (cli, srv *node) {
	t.Helper()
	info := loInfo(t, o)
	l := listen(t, info)
	return pairWith(t, l, info, o, nil, nil)
}

func pairWith(t testing.TB, l *listener, info *provider.Info, o opts, reqData, accData []byte) (cli, srv *node) {
	t.Helper()
	cli = newNode(t, info, o)
	if err := cli.ep.Connect(l.name, reqData); err != nil {
		t.Fatal(err)
	}
	ev := expectEvent(t, l.eq, provider.EventConnReq)
	if !bytes.Equal(ev.CMData, reqData) {
		t.Fatalf("connreq data %q want %q", ev.CMData, reqData)
	}
	if ev.FID != any(l.p) || ev.Info == nil || ev.Info.Handle == nil {
		t.Fatalf("connreq entry %+v", ev)
	}
	srv = newNode(t, ev.Info, o)
	if err := srv.ep.Accept(accData); err != nil {
		t.Fatal(err)
	}
	sev := expectEvent(t, srv.eq, provider.EventConnected)
	if sev.FID != any(srv.ep) || len(sev.CMData) != 0 {
		t.Fatalf("server connected entry %+v", sev)
	}
	cev := expectEvent(t, cli.eq, provider.EventConnected)
	if cev.FID != any(cli.ep) || !bytes.Equal(cev.CMData, accData) {
		t.Fatalf("client connected entry %+v", cev)
	}
	return cli, srv
}

func (n *node) post(buf []byte, ctx any) {
	n.t.Helper()
	m := provider.Msg{Buf: buf, Context: ctx, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
	if err := n.rq.Post(&m, false); err != nil {
		n.t.Fatalf("post: %v", err)
	}
}

func (n *node) postTag(buf []byte, tag, ignore uint64, ctx any) {
	n.t.Helper()
	m := provider.Msg{Buf: buf, Context: ctx, Addr: provider.AddrUnspec, Tag: tag, Ignore: ignore,
		Flags: provider.FlagCompletion}
	if err := n.rq.Post(&m, true); err != nil {
		n.t.Fatalf("post: %v", err)
	}
}

func (n *node) send(buf []byte, ctx any, flags provider.Flags) {
	n.t.Helper()
	if err := n.ep.Send(provider.Msg{Buf: buf, Context: ctx, Flags: provider.FlagCompletion | flags}); err != nil {
		n.t.Fatalf("send: %v", err)
	}
}

// waitCQ reads one entry (or error entry) from q, driving progress of
// every node given (a peer's progress is needed under manual progress).
func waitCQ(t testing.TB, q *cq.CQ, others ...*node) (provider.CQEntry, *provider.CQErrEntry) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	var e [1]provider.CQEntry
	for {
		n, err := q.Read(e[:])
		if n == 1 {
			return e[0], nil
		}
		if err == provider.EAVAIL {
			var ee provider.CQErrEntry
			if err := q.ReadErr(&ee); err != nil {
				t.Fatalf("cq readerr: %v", err)
			}
			return provider.CQEntry{}, &ee
		}
		if err != provider.EAGAIN {
			t.Fatalf("cq read: %v", err)
		}
		for _, o := range others {
			o.ep.Progress()
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for a completion")
		}
		runtime.Gosched()
	}
}

func expectComp(t testing.TB, q *cq.CQ, ctx any, flags provider.Flags, others ...*node) provider.CQEntry {
	t.Helper()
	e, ee := waitCQ(t, q, others...)
	if ee != nil {
		t.Fatalf("want completion %v, got error %v (olen %d) flags %v ctx %v", flags, ee.Err, ee.Olen, ee.Flags, ee.OpContext)
	}
	if e.OpContext != ctx || e.Flags != flags {
		t.Fatalf("completion ctx %v flags %v, want %v %v", e.OpContext, e.Flags, ctx, flags)
	}
	return e
}

func expectErr(t testing.TB, q *cq.CQ, others ...*node) *provider.CQErrEntry {
	t.Helper()
	e, ee := waitCQ(t, q, others...)
	if ee == nil {
		t.Fatalf("want an error completion, got %+v", e)
	}
	return ee
}

// expectEmpty progresses the nodes for d and checks q stays empty.
func expectEmpty(t testing.TB, q *cq.CQ, d time.Duration, others ...*node) {
	t.Helper()
	deadline := time.Now().Add(d)
	var e [1]provider.CQEntry
	for time.Now().Before(deadline) {
		n, err := q.Read(e[:])
		if n > 0 || err != provider.EAGAIN {
			t.Fatalf("unexpected completion %+v (%v)", e[0], err)
		}
		for _, o := range others {
			o.ep.Progress()
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// pattern fills b with a pattern depending on k.
func pattern(b []byte, k int) []byte {
	for i := range b {
		b[i] = byte(i*7 + k*13 + 1)
	}
	return b
}
