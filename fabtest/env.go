package fabtest

import (
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// Target names the provider configuration under test.
type Target struct {
	Provider string        // provider name, e.g. "udp"
	EPType   fabric.EPType // endpoint type to test
	// Caps are extra capabilities to request (primary caps beyond FI_MSG).
	Caps fabric.Caps
	// Node is the local address used for FI_SOURCE (default 127.0.0.1).
	Node string
	// Progress selects the data progress model; zero uses the provider default.
	Progress fabric.Progress
	// Threading asks for a threading model (domain_attr.threading); zero
	// uses the provider default. The cases that use an object from
	// several goroutines at once need FI_THREAD_SAFE and skip otherwise.
	Threading fabric.Threading
	// Owner is the provider whose CQ, counter, shared receive context and
	// AV the fi_peer/owner_provider_* cases import into the target
	// (fi_peer(3): the owner, another provider's domain); nil uses a second
	// domain of the target itself. It must be connectionless.
	Owner *Target
	// InProcess says that the provider's fabric exists only inside one
	// process (the sim provider's simulated networks): the process/*
	// cases, which need a peer in another process, are skipped.
	InProcess bool
}

func (tg Target) node() string {
	if tg.Node == "" {
		return "127.0.0.1"
	}
	return tg.Node
}

// timescale stretches real-time bounds (FABTEST_TIMESCALE, default 1; the
// race detector doubles it).
func timescale() time.Duration {
	s := 1.0
	if v, err := strconv.ParseFloat(os.Getenv("FABTEST_TIMESCALE"), 64); err == nil && v > 0 {
		s = v
	}
	if raceEnabled {
		s *= 2
	}
	return time.Duration(s * 1000)
}

// scaled returns d stretched by the time scale.
func scaled(d time.Duration) time.Duration { return d * timescale() / 1000 }

// hints returns the GetInfo hints for the target with extra caps.
func (tg Target) hints(caps fabric.Caps) *fabric.Info {
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg | tg.Caps | caps
	h.EPAttr.Type = tg.EPType
	h.FabricAttr.ProvName = tg.Provider
	h.Mode = fabric.ModeContext | fabric.ModeContext2
	if tg.Progress != 0 {
		h.DomainAttr.DataProgress = tg.Progress
	}
	if tg.Threading != 0 {
		h.DomainAttr.Threading = tg.Threading
	}
	return h
}

// info returns the first Info for the target with caps, or skips the test
// if the provider does not claim them (ErrNoData).
func (tg Target) info(t testing.TB, caps fabric.Caps) *fabric.Info {
	t.Helper()
	return tg.infoMode(t, caps, 0)
}

// infoMode is info with extra mode bits in the hints (envOpts.mode).
func (tg Target) infoMode(t testing.TB, caps fabric.Caps, mode fabric.Mode) *fabric.Info {
	t.Helper()
	h := tg.hints(caps)
	h.Mode |= mode
	infos, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, h)
	if err != nil {
		if caps != 0 && errors.Is(err, fabric.ErrNoData) {
			t.Skipf("%s does not claim %v", tg.Provider, caps)
		}
		t.Fatalf("GetInfo(%s %v %v): %v", tg.Provider, tg.EPType, caps, err)
	}
	return infos[0]
}

// claims reports whether the target's provider returns an info with caps.
func (tg Target) claims(caps fabric.Caps) bool {
	_, err := fabric.GetInfo(fabric.APIVersion, tg.node(), "", fabric.FlagSource, tg.hints(caps))
	return err == nil
}

// env is one opened fabric/domain with an endpoint and its CQs.
type env struct {
	t    testing.TB
	info *fabric.Info
	eq   *fabric.EQ // connection-oriented endpoints
	fab  *fabric.Fabric
	dom  *fabric.Domain
	av   *fabric.AV
	txcq *fabric.CQ
	rxcq *fabric.CQ
	ep   *fabric.Endpoint
	addr []byte
	ws   *fabric.Wait // envOpts.waitSet: the wait set of txcq and rxcq
	// bufSends counts the sends of bufSend whose completions bufPair's
	// cleanup still waits for; epClosed says the test closed ep.
	bufSends int
	epClosed bool
}

type envOpts struct {
	caps      fabric.Caps
	format    fabric.CQFormat
	cqSize    uint64
	txFlags   fabric.Flags // extra CQ bind flags (FlagSelectiveCompletion)
	rxFlags   fabric.Flags
	noEnable  bool
	mode      fabric.Mode // extra mode bits in the hints (FI_BUFFERED_RECV)
	modify    func(*fabric.Info)
	wait      fabric.WaitObj
	waitSet   bool         // open txcq and rxcq as members of a wait set (env.ws)
	connReq   *fabric.Info // MSG: open the endpoint from this FI_CONNREQ info
	deferConn bool         // MSG: leave the endpoint for Connect to enable
	// bind, if set, is called with the env once its endpoint is bound to
	// its CQs and AV and before it is enabled (to bind counters).
	bind func(e *env)
}

// open builds an env; everything is closed by t.Cleanup in reverse order.
func (tg Target) open(t testing.TB, o envOpts) *env {
	t.Helper()
	info := tg.infoMode(t, o.caps, o.mode)
	if o.modify != nil {
		o.modify(info)
	}
	e := &env{t: t, info: info}
	var err error
	if e.fab, err = fabric.Open(info); err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "fabric", e.fab.Close()) })
	if e.dom, err = e.fab.OpenDomain(info); err != nil {
		t.Fatalf("OpenDomain: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "domain", e.dom.Close()) })
	format := o.format
	if format == 0 {
		format = fabric.CQFormatTagged
	}
	if o.waitSet {
		if e.ws, err = e.fab.OpenWait(nil); err != nil {
			t.Fatalf("OpenWait: %v", err)
		}
		t.Cleanup(func() { closeOK(t, "wait set", e.ws.Close()) })
		o.wait = fabric.WaitSet
	}
	e.txcq = e.openCQ(&fabric.CQAttr{Format: format, Size: o.cqSize, WaitObj: o.wait, WaitSet: e.ws})
	e.rxcq = e.openCQ(&fabric.CQAttr{Format: format, Size: o.cqSize, WaitObj: o.wait, WaitSet: e.ws})
	if info.EPAttr.Type != fabric.EPMsg {
		if e.av, err = e.dom.OpenAV(&fabric.AVAttr{Type: info.DomainAttr.AVType}); err != nil {
			t.Fatalf("OpenAV: %v", err)
		}
		t.Cleanup(func() { closeOK(t, "av", e.av.Close()) })
	}
	if info.EPAttr.Type == fabric.EPMsg {
		if e.eq, err = e.fab.OpenEQ(&fabric.EQAttr{WaitObj: fabric.WaitUnspec}); err != nil {
			t.Fatalf("OpenEQ: %v", err)
		}
		t.Cleanup(func() { closeOK(t, "eq", e.eq.Close()) })
	}
	if o.connReq != nil {
		info = o.connReq
	}
	if e.ep, err = e.dom.OpenEndpoint(info); err != nil {
		t.Fatalf("OpenEndpoint: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "endpoint", e.ep.Close()) })
	if e.eq != nil {
		if err := e.ep.BindEQ(e.eq); err != nil {
			t.Fatalf("bind eq: %v", err)
		}
	}
	if err := e.ep.BindCQ(e.txcq, fabric.FlagTransmit|o.txFlags); err != nil {
		t.Fatalf("bind tx cq: %v", err)
	}
	if err := e.ep.BindCQ(e.rxcq, fabric.FlagRecv|o.rxFlags); err != nil {
		t.Fatalf("bind rx cq: %v", err)
	}
	if e.av != nil {
		if err := e.ep.BindAV(e.av); err != nil {
			t.Fatalf("bind av: %v", err)
		}
	}
	if o.bind != nil {
		o.bind(e)
	}
	if o.noEnable || o.connReq != nil || (info.EPAttr.Type == fabric.EPMsg && o.deferConn) {
		return e
	}
	if err := e.ep.Enable(); err != nil {
		t.Fatalf("Enable: %v", err)
	}
	if e.addr, err = e.ep.Name(); err != nil {
		t.Fatalf("Name: %v", err)
	}
	return e
}

func (e *env) openCQ(attr *fabric.CQAttr) *fabric.CQ {
	e.t.Helper()
	cq, err := e.dom.OpenCQ(attr)
	if err != nil {
		e.t.Fatalf("OpenCQ(%+v): %v", *attr, err)
	}
	e.t.Cleanup(func() { closeOK(e.t, "cq", cq.Close()) })
	return cq
}

func closeOK(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, fabric.ErrClosed) {
		t.Errorf("close %s: %v", what, err)
	}
}

// insert adds addr to e's AV and returns its fi_addr.
func (e *env) insert(addr []byte) fabric.Addr {
	e.t.Helper()
	if e.av == nil {
		e.t.Skip("needs connectionless addressing (an AV)")
	}
	fa := make([]fabric.Addr, 1)
	n, err := e.av.Insert([][]byte{addr}, fa, 0)
	if err != nil || n != 1 {
		e.t.Fatalf("AV insert: n=%d err=%v", n, err)
	}
	return fa[0]
}

// pair opens two connected envs: a can send to b at ab, b to a at ba. For
// connection-oriented endpoints a connects to a passive endpoint on b's
// fabric and the addresses are AddrUnspec.
func (tg Target) pair(t testing.TB, o envOpts) (a, b *env, ab, ba fabric.Addr) {
	t.Helper()
	if tg.EPType == fabric.EPMsg {
		a, b = tg.connect(t, o)
		return a, b, fabric.AddrUnspec, fabric.AddrUnspec
	}
	a = tg.open(t, o)
	b = tg.open(t, o)
	ab = a.insert(b.addr)
	ba = b.insert(a.addr)
	return a, b, ab, ba
}

// waitCQ reads cq until one entry arrives, driving progress of others
// meanwhile, and fails after the bound. It returns the entry; an error
// entry at the head is returned via errEntry with ok=false.
func waitCQ(t testing.TB, cq *fabric.CQ, others ...*fabric.CQ) (fabric.CQEntry, *fabric.CQErrEntry) {
	t.Helper()
	var ent [1]fabric.CQEntry
	deadline := time.Now().Add(scaled(5 * time.Second))
	for time.Now().Before(deadline) {
		n, err := cq.Read(ent[:])
		if n == 1 {
			return ent[0], nil
		}
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			if err := cq.ReadErr(&ee); err != nil {
				t.Fatalf("ReadErr after ErrAvail: %v", err)
			}
			return fabric.CQEntry{}, &ee
		}
		if err != nil && !errors.Is(err, fabric.ErrAgain) {
			t.Fatalf("cq.Read: %v", err)
		}
		for _, o := range others {
			o.Read(nil)
		}
	}
	t.Fatalf("no completion within %v", scaled(5*time.Second))
	return fabric.CQEntry{}, nil
}

// waitFrom reads one entry and its source address from cq (ReadFrom),
// driving progress of others meanwhile, and fails (saying what) on an
// error or after the bound. The source slot starts at an address no test
// expects, so a ReadFrom that leaves it alone is caught.
func waitFrom(t testing.TB, what string, cq *fabric.CQ, others ...*fabric.CQ) (fabric.CQEntry, fabric.Addr) {
	t.Helper()
	var ent [1]fabric.CQEntry
	src := []fabric.Addr{7}
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		n, err := cq.ReadFrom(ent[:], src)
		if n == 1 {
			return ent[0], src[0]
		}
		if err != nil && !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			t.Fatalf("%s: ReadFrom: %v", what, err)
		}
		for _, o := range others {
			o.Read(nil)
		}
	}
}

// waitAvail reads cq, driving progress of others meanwhile, until a read
// reports ErrAvail (an error entry at the head, left there for the
// caller's ReadErr); it fails (saying what) on anything else but ErrAgain
// or after the bound.
func waitAvail(t testing.TB, what string, cq *fabric.CQ, others ...*fabric.CQ) {
	t.Helper()
	var ent [1]fabric.CQEntry
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		_, err := cq.Read(ent[:])
		if errors.Is(err, fabric.ErrAvail) {
			return
		}
		if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		for _, o := range others {
			o.Read(nil)
		}
	}
}

// expectEmpty drives progress for a while and fails if cq produces anything.
func expectEmpty(t testing.TB, cq *fabric.CQ, d time.Duration, others ...*fabric.CQ) {
	t.Helper()
	var ent [1]fabric.CQEntry
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		n, err := cq.Read(ent[:])
		if n != 0 || (err != nil && !errors.Is(err, fabric.ErrAgain)) {
			t.Fatalf("unexpected completion: n=%d entry=%+v err=%v", n, ent[0], err)
		}
		for _, o := range others {
			o.Read(nil)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// retry calls post until it returns something other than ErrAgain, driving
// progress through cqs (the fabtests FT_POST pattern).
func retry(t testing.TB, what string, post func() error, cqs ...*fabric.CQ) {
	t.Helper()
	deadline := time.Now().Add(scaled(5 * time.Second))
	for {
		err := post()
		if err == nil {
			return
		}
		if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		for _, c := range cqs {
			c.Read(nil)
		}
	}
}

// isErr fails unless errors.Is(err, want).
func isErr(t testing.TB, what string, err error, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

// pattern fills b with the fi_pingpong alphabet pattern for message k.
func pattern(b []byte, k int) []byte {
	const a = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for i := range b {
		b[i] = a[(7*k+i)%len(a)]
	}
	return b
}

// waitEvent reads eq until an event arrives (or an error entry), bounded.
func waitEvent(t testing.TB, eq *fabric.EQ) (fabric.EQEntry, *fabric.EQErrEntry) {
	t.Helper()
	ev, err := eq.SRead(scaled(5*time.Second), 0)
	if err == nil {
		return ev, nil
	}
	if errors.Is(err, fabric.ErrAvail) {
		var ee fabric.EQErrEntry
		if err := eq.ReadErr(&ee); err != nil {
			t.Fatalf("EQ ReadErr: %v", err)
		}
		return fabric.EQEntry{}, &ee
	}
	t.Fatalf("EQ SRead: %v", err)
	return fabric.EQEntry{}, nil
}

// listener is a passive endpoint with its own fabric and EQ.
type listener struct {
	info *fabric.Info
	fab  *fabric.Fabric
	eq   *fabric.EQ
	pep  *fabric.PassiveEndpoint
	name []byte
}

func (tg Target) listen(t testing.TB, o envOpts) *listener {
	t.Helper()
	l := &listener{info: tg.infoMode(t, o.caps, o.mode)}
	var err error
	if l.fab, err = fabric.Open(l.info); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "fabric", l.fab.Close()) })
	if l.eq, err = l.fab.OpenEQ(&fabric.EQAttr{WaitObj: fabric.WaitUnspec}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "eq", l.eq.Close()) })
	if l.pep, err = l.fab.OpenPassiveEndpoint(l.info); err != nil {
		t.Fatalf("fi_passive_ep: %v", err)
	}
	t.Cleanup(func() { closeOK(t, "pep", l.pep.Close()) })
	if err := l.pep.Bind(l.eq, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.pep.Listen(); err != nil {
		t.Fatalf("fi_listen: %v", err)
	}
	if l.name, err = l.pep.Name(); err != nil {
		t.Fatal(err)
	}
	return l
}

// accept reads one FI_CONNREQ from l and returns an accepted env (not yet
// FI_CONNECTED: the caller waits for that event on env.eq).
func (tg Target) accept(t testing.TB, l *listener, o envOpts, data []byte) *env {
	t.Helper()
	ev, ee := waitEvent(t, l.eq)
	if ee != nil || ev.Event != fabric.EventConnReq || ev.Info == nil {
		t.Fatalf("want FI_CONNREQ, got %+v %+v", ev, ee)
	}
	o.connReq = ev.Info
	b := tg.open(t, o)
	if err := b.ep.Accept(data); err != nil {
		t.Fatalf("fi_accept: %v", err)
	}
	return b
}

// connect sets up a connected pair: a is the connecting side, b the
// accepting one.
func (tg Target) connect(t testing.TB, o envOpts) (a, b *env) {
	t.Helper()
	l := tg.listen(t, o)
	o.deferConn = true
	a = tg.open(t, o)
	if err := a.ep.Connect(l.name, nil); err != nil {
		t.Fatalf("fi_connect: %v", err)
	}
	b = tg.accept(t, l, o, nil)
	for _, e := range []*env{a, b} {
		ev, ee := waitEvent(t, e.eq)
		if ee != nil || ev.Event != fabric.EventConnected || ev.FID != e.ep {
			t.Fatalf("want FI_CONNECTED for %p, got %+v %+v", e.ep, ev, ee)
		}
	}
	return a, b
}
