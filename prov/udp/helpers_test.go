package udp

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// testCQ is a CQOwner that records completions. Its slices keep their
// capacity across reset, so steady-state writes do not allocate.
type testCQ struct {
	mu   sync.Mutex
	ents []provider.CQEntry
	srcs []provider.Addr
	errs []provider.CQErrEntry
}

func newTestCQ() *testCQ {
	return &testCQ{ents: make([]provider.CQEntry, 0, 4096), srcs: make([]provider.Addr, 0, 4096)}
}

func (c *testCQ) Write(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64,
	src provider.Addr) error {
	c.mu.Lock()
	c.ents = append(c.ents, provider.CQEntry{OpContext: ctx, Flags: flags, Len: length, Buf: buf, Data: data, Tag: tag})
	c.srcs = append(c.srcs, src)
	c.mu.Unlock()
	return nil
}

func (c *testCQ) WriteErr(e *provider.CQErrEntry) error {
	c.mu.Lock()
	c.errs = append(c.errs, *e)
	c.mu.Unlock()
	return nil
}

func (c *testCQ) count() (n, nerr int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ents), len(c.errs)
}

func (c *testCQ) reset() {
	c.mu.Lock()
	c.ents, c.srcs, c.errs = c.ents[:0], c.srcs[:0], c.errs[:0]
	c.mu.Unlock()
}

func (c *testCQ) snapshot() ([]provider.CQEntry, []provider.Addr, []provider.CQErrEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]provider.CQEntry(nil), c.ents...), append([]provider.Addr(nil), c.srcs...),
		append([]provider.CQErrEntry(nil), c.errs...)
}

// testCntr is a CntrOwner.
type testCntr struct {
	mu       sync.Mutex
	val, err int
}

func (c *testCntr) Inc()    { c.mu.Lock(); c.val++; c.mu.Unlock() }
func (c *testCntr) IncErr() { c.mu.Lock(); c.err++; c.mu.Unlock() }
func (c *testCntr) get() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.val, c.err
}

// testAV is an AVView over a table of sockaddrs.
type testAV struct {
	mu    sync.RWMutex
	addrs [][]byte
}

func (a *testAV) insert(b []byte) provider.Addr {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.addrs = append(a.addrs, append([]byte(nil), b...))
	return provider.Addr(len(a.addrs) - 1)
}

func (a *testAV) Lookup(x provider.Addr) []byte {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if uint64(x) >= uint64(len(a.addrs)) {
		return nil
	}
	return a.addrs[x]
}

func (a *testAV) Reverse(b []byte) provider.Addr {
	a.mu.RLock()
	defer a.mu.RUnlock()
	for i, v := range a.addrs {
		if bytes.Equal(v, b) {
			return provider.Addr(i)
		}
	}
	return provider.AddrNotAvail
}

// tep is an endpoint with its test resources.
type tep struct {
	ep    *endpoint
	name  []byte
	txCQ  *testCQ
	rxCQ  *testCQ
	av    *testAV
	rq    *srx.Queue
	tx    *testCntr
	rx    *testCntr
	peers map[*tep]provider.Addr
}

type epOpts struct {
	auto     bool
	source   bool
	directed bool
	maxUnexp int
	ipv6     bool
	// sharedRQ hands the receive queue over as a shared one
	// (Resources.OwnSRX false): no direct receive into posted buffers.
	sharedRQ bool
}

// bothQueues runs f with the endpoint owning its receive queue (datagrams
// land straight in posted buffers) and with a shared queue (a bounce
// buffer and GetMsg).
func bothQueues(t *testing.T, o epOpts, f func(t *testing.T, o epOpts)) {
	for _, shared := range []bool{false, true} {
		name := "rq=own"
		if shared {
			name = "rq=shared"
		}
		t.Run(name, func(t *testing.T) {
			o.sharedRQ = shared
			f(t, o)
		})
	}
}

func loInfo(t testing.TB, o epOpts) *provider.Info {
	t.Helper()
	t.Setenv(envIface, "lo")
	hints := &provider.Info{AddrFormat: provider.SockAddrIn, DomainAttr: &provider.DomainAttr{}}
	if o.ipv6 {
		hints.AddrFormat = provider.SockAddrIn6
	}
	if o.auto {
		hints.DomainAttr.DataProgress = provider.ProgressAuto
	}
	infos, err := udpProvider{}.GetInfo(provider.APIVersion, "", "", 0, hints)
	if err != nil {
		t.Fatal(err)
	}
	return infos[0]
}

func openEP(t testing.TB, o epOpts) *tep {
	t.Helper()
	info := loInfo(t, o)
	f, err := udpProvider{}.Fabric(info.FabricAttr)
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Domain(info)
	if err != nil {
		t.Fatal(err)
	}
	pe, err := d.Endpoint(info)
	if err != nil {
		if o.ipv6 {
			t.Skipf("no IPv6 loopback: %v", err) // kernels with IPv6 disabled only
		}
		t.Fatal(err)
	}
	ep := pe.(*endpoint)
	x := &tep{ep: ep, txCQ: newTestCQ(), rxCQ: newTestCQ(), av: &testAV{}, tx: &testCntr{}, rx: &testCntr{},
		peers: map[*tep]provider.Addr{}}
	x.rq = srx.New(srx.Config{Directed: o.directed, MaxUnexpected: o.maxUnexp})
	x.name, err = ep.Name()
	if err != nil {
		t.Fatal(err)
	}
	r := &provider.Resources{TxCQ: x.txCQ, RxCQ: x.rxCQ, AV: x.av, SRX: x.rq, Source: o.source, OwnSRX: !o.sharedRQ}
	r.Cntrs[provider.CntrSend] = x.tx
	r.Cntrs[provider.CntrRecv] = x.rx
	if err := ep.Enable(r); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ep.Close()
		x.rq.Close()
		d.Close()
		f.Close()
	})
	return x
}

// connect inserts each endpoint's name into the other's AV.
func connect(a, b *tep) {
	a.peers[b] = a.av.insert(b.name)
	b.peers[a] = b.av.insert(a.name)
}

func pair(t testing.TB, o epOpts) (*tep, *tep) {
	a, b := openEP(t, o), openEP(t, o)
	connect(a, b)
	return a, b
}

func (x *tep) post(t testing.TB, buf []byte, ctx any) {
	t.Helper()
	m := provider.Msg{Buf: buf, Context: ctx, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
	if err := x.rq.Post(&m, false); err != nil {
		t.Fatalf("post: %v", err)
	}
}

func (x *tep) send(t testing.TB, to *tep, buf []byte, ctx any) {
	t.Helper()
	if err := x.ep.Send(provider.Msg{Buf: buf, Addr: x.peers[to], Context: ctx,
		Flags: provider.FlagCompletion}); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// waitRx progresses x (unless progress is automatic) until its receive CQ
// holds n entries or errors in total, for at most 2 seconds.
func (x *tep) waitRx(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if !x.ep.auto {
			x.ep.Progress()
		}
		a, b := x.rxCQ.count()
		if a+b >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %d+%d receive completions, want %d", a, b, n)
		}
		if x.ep.auto {
			time.Sleep(time.Millisecond)
		} else {
			x.ep.WaitReady(time.Now().Add(10 * time.Millisecond))
		}
	}
}
