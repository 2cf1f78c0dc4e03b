package lnx

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	_ "github.com/gofabric/fabric/prov/shm"
	_ "github.com/gofabric/fabric/prov/tcp"
	"github.com/gofabric/fabric/provider"
)

// node is one lnx endpoint with its objects.
type node struct {
	t    testing.TB
	ep   *fabric.Endpoint
	txcq *fabric.CQ
	rxcq *fabric.CQ
	av   *fabric.AV
	addr []byte
	dom  *fabric.Domain
	cntr *fabric.Cntr // openNodeCaps with RMA: bound for FI_READ and FI_WRITE
	eq   *fabric.EQ   // openNodeEQ
}

// openNode opens an lnx endpoint with FI_SOURCE and FI_DIRECTED_RECV.
// hostID, when set, is its host identity (FI_LNX_HOST_ID).
func openNode(t *testing.T, hostID string) *node {
	t.Helper()
	return openNodeCaps(t, hostID, 0)
}

// openNodeCaps is openNode with extra capabilities; with FI_RMA or
// FI_ATOMIC a counter is bound for FI_READ and FI_WRITE.
func openNodeCaps(t *testing.T, hostID string, caps fabric.Caps) *node {
	t.Helper()
	return openNodeEQ(t, hostID, caps, false)
}

// openNodeEQ is openNodeCaps that also binds an EQ (node.eq) when withEQ.
func openNodeEQ(t *testing.T, hostID string, caps fabric.Caps, withEQ bool) *node {
	t.Helper()
	return openNodeService(t, hostID, "", caps, withEQ)
}

// openNodeService is openNodeEQ whose tcp endpoint binds 127.0.0.1:service.
func openNodeService(t *testing.T, hostID, service string, caps fabric.Caps, withEQ bool) *node {
	t.Helper()
	return openNodeOn(t, "127.0.0.1", service, hostID, caps, withEQ)
}

// openNodeOn is openNodeService whose tcp endpoint binds nodeName:service.
func openNodeOn(t *testing.T, nodeName, service, hostID string, caps fabric.Caps, withEQ bool) *node {
	t.Helper()
	if hostID != "" {
		t.Setenv(EnvHostID, hostID)
	}
	h := fabric.AllocInfo()
	h.FabricAttr.ProvName = Name
	h.EPAttr.Type = fabric.EPRDM
	h.Caps = fabric.CapMsg | fabric.CapTagged | fabric.CapSource | fabric.CapDirectedRecv | caps
	infos, err := fabric.GetInfo(fabric.APIVersion, nodeName, service, fabric.FlagSource, h)
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	info := infos[0]
	n := &node{t: t}
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, fab.Close()) })
	dom, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, dom.Close()) })
	n.dom = dom
	if n.txcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged, Size: 4096}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, n.txcq.Close()) })
	if n.rxcq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged, Size: 4096}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, n.rxcq.Close()) })
	if n.av, err = dom.OpenAV(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, n.av.Close()) })
	if caps&(fabric.CapRMA|fabric.CapAtomic) != 0 {
		if n.cntr, err = dom.OpenCntr(nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOK(t, n.cntr.Close()) })
	}
	if withEQ {
		if n.eq, err = fab.OpenEQ(nil); err != nil {
			t.Fatal(err)
		}
		// Registered before the endpoint's: closed after it.
		t.Cleanup(func() { closeOK(t, n.eq.Close()) })
	}
	if n.ep, err = dom.OpenEndpoint(info); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, n.ep.Close()) })
	if n.eq != nil {
		if err := n.ep.BindEQ(n.eq); err != nil {
			t.Fatal(err)
		}
	}
	if n.cntr != nil {
		if err := n.ep.BindCntr(n.cntr, fabric.FlagRead|fabric.FlagWrite); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range []error{n.ep.BindCQ(n.txcq, fabric.FlagTransmit), n.ep.BindCQ(n.rxcq, fabric.FlagRecv),
		n.ep.BindAV(n.av), n.ep.Enable()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n.addr, err = n.ep.Name(); err != nil {
		t.Fatal(err)
	}
	return n
}

func closeOK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("close: %v", err)
	}
}

func (n *node) insert(addr []byte) fabric.Addr {
	n.t.Helper()
	fa := make([]fabric.Addr, 1)
	if c, err := n.av.Insert([][]byte{addr}, fa, 0); c != 1 || err != nil {
		n.t.Fatalf("insert: %d %v", c, err)
	}
	return fa[0]
}

// retry posts until the call stops answering ErrAgain, driving cqs.
func retry(t testing.TB, post func() error, cqs ...*fabric.CQ) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := post()
		if !errors.Is(err, fabric.ErrAgain) {
			if err != nil {
				t.Fatalf("post: %v", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("post: ErrAgain for 10 s")
		}
		for _, c := range cqs {
			c.Read(nil)
		}
	}
}

// routes records the path lnx picks for each (endpoint, fi_addr).
type routes struct {
	mu sync.Mutex
	m  map[*endpoint]map[provider.Addr]uint8
}

func watchRoutes(t *testing.T) *routes {
	r := &routes{m: map[*endpoint]map[provider.Addr]uint8{}}
	testHookRoute = func(e *endpoint, dest provider.Addr, path uint8) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.m[e] == nil {
			r.m[e] = map[provider.Addr]uint8{}
		}
		r.m[e][dest] = path
	}
	t.Cleanup(func() { testHookRoute = nil })
	return r
}

// TestLocalAndRemotePeers: one lnx endpoint a talks to a local peer b
// (shm) and a remote peer c (tcp: another host identity). Untagged and
// tagged messages from both land in a's one receive queue, each matched
// once, with the sender's fi_addr as source; directed receives take only
// their sender's messages; a's replies reach both.
func TestLocalAndRemotePeers(t *testing.T) {
	rt := watchRoutes(t)
	a := openNode(t, "")
	b := openNode(t, "")
	c := openNode(t, "other-host")
	ab, ac := a.insert(b.addr), a.insert(c.addr)
	ba := b.insert(a.addr)
	ca := c.insert(a.addr)
	if ab == ac {
		t.Fatalf("b and c share fi_addr %v", ab)
	}

	const per = 20
	// Directed tagged receives first (posting order): tag 7 from c only.
	dir := make([][]byte, per)
	for i := range dir {
		dir[i] = make([]byte, 16)
		if err := a.ep.TRecv(dir[i], nil, ac, 7, 0, fmt.Sprintf("dir%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Then FI_ADDR_UNSPEC receives for every untagged message and every
	// tag-7 message of b.
	unspec := make([][]byte, 2*per)
	for i := range unspec {
		unspec[i] = make([]byte, 16)
		if err := a.ep.Recv(unspec[i], nil, fabric.AddrUnspec, fmt.Sprintf("msg%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	anyT := make([][]byte, per)
	for i := range anyT {
		anyT[i] = make([]byte, 16)
		if err := a.ep.TRecv(anyT[i], nil, fabric.AddrUnspec, 7, 0, fmt.Sprintf("tag%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < per; i++ {
		bm := []byte(fmt.Sprintf("b-msg-%d", i))
		cm := []byte(fmt.Sprintf("c-msg-%d", i))
		retry(t, func() error { return b.ep.Send(bm, nil, ba, nil) }, b.txcq)
		retry(t, func() error { return c.ep.Send(cm, nil, ca, nil) }, c.txcq)
		bt := []byte(fmt.Sprintf("b-tag-%d", i))
		ct := []byte(fmt.Sprintf("c-tag-%d", i))
		retry(t, func() error { return b.ep.TSend(bt, nil, ba, 7, nil) }, b.txcq)
		retry(t, func() error { return c.ep.TSendData(ct, nil, uint64(i), ca, 7, nil) }, c.txcq)
	}
	got := map[string]fabric.Addr{}
	slot := map[string]int{} // message -> index of the receive it matched
	ctxs := map[string]bool{}
	ent := make([]fabric.CQEntry, 16)
	src := make([]fabric.Addr, 16)
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < 4*per {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d messages", len(got), 4*per)
		}
		b.txcq.Read(nil)
		c.txcq.Read(nil)
		n, err := a.rxcq.ReadFrom(ent, src)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			a.rxcq.ReadErr(&ee)
			t.Fatalf("error completion: %+v", ee)
		}
		for i := 0; i < n; i++ {
			e := ent[i]
			ctx := e.OpContext.(string)
			if ctxs[ctx] {
				t.Fatalf("receive %s completed twice", ctx)
			}
			ctxs[ctx] = true
			var buf []byte
			switch {
			case ctx[:3] == "dir":
				buf = dir[atoi(ctx[3:])]
			case ctx[:3] == "msg":
				buf = unspec[atoi(ctx[3:])]
			default:
				buf = anyT[atoi(ctx[3:])]
			}
			m := string(buf[:e.Len])
			if _, dup := got[m]; dup {
				t.Fatalf("message %q received twice", m)
			}
			got[m] = src[i]
			slot[m] = atoi(ctx[3:])
			wantSrc := ab
			if m[0] == 'c' {
				wantSrc = ac
			}
			if src[i] != wantSrc {
				t.Errorf("%q: source %v, want %v", m, src[i], wantSrc)
			}
			switch {
			case ctx[:3] == "dir" && m[:5] != "c-tag":
				t.Errorf("directed receive from c got %q", m)
			case ctx[:3] == "tag" && m[:5] != "b-tag":
				t.Errorf("FI_ADDR_UNSPEC tagged receive got %q (c's were directed first)", m)
			case ctx[:3] == "msg" && m[2:5] != "msg":
				t.Errorf("untagged receive got %q", m)
			}
			if m[:5] == "c-tag" && (e.Flags&fabric.FlagRemoteCQData == 0 || e.Data != uint64(atoi(m[6:]))) {
				t.Errorf("%q: flags %v data %d", m, e.Flags, e.Data)
			}
		}
	}
	// In order per source and kind: each message matched a receive
	// posted after the one its predecessor matched.
	for _, k := range []string{"b-msg", "c-msg", "b-tag", "c-tag"} {
		for i := 1; i < per; i++ {
			prev, cur := fmt.Sprintf("%s-%d", k, i-1), fmt.Sprintf("%s-%d", k, i)
			if slot[cur] <= slot[prev] {
				t.Errorf("%s matched receive %d, after %s matched %d", cur, slot[cur], prev, slot[prev])
			}
		}
	}
	// Paths: a reaches b over shm and c over tcp; b reaches a over shm
	// and c reaches a over tcp.
	if p := rt.routeOf(b, ba); p != pathSHM {
		t.Errorf("b -> a path %d, want shm", p)
	}
	if p := rt.routeOf(c, ca); p != pathTCP {
		t.Errorf("c -> a path %d, want tcp", p)
	}
	// Replies from a to both.
	for _, p := range []struct {
		to   *node
		dest fabric.Addr
	}{{b, ab}, {c, ac}} {
		buf := make([]byte, 8)
		if err := p.to.ep.Recv(buf, nil, fabric.AddrUnspec, "reply"); err != nil {
			t.Fatal(err)
		}
		retry(t, func() error { return a.ep.Send([]byte("reply"), nil, p.dest, nil) }, a.txcq)
		waitOne(t, p.to.rxcq, a.txcq)
		if string(buf[:5]) != "reply" {
			t.Errorf("reply %q", buf)
		}
	}
	if p := rt.routeOf(a, ab); p != pathSHM {
		t.Errorf("a -> b path %d, want shm", p)
	}
	if p := rt.routeOf(a, ac); p != pathTCP {
		t.Errorf("a -> c path %d, want tcp", p)
	}
}

// routeOf returns the path n's lnx endpoint took to dest (pathUnknown if
// it never sent there).
func (r *routes) routeOf(n *node, dest fabric.Addr) uint8 {
	r.mu.Lock()
	defer r.mu.Unlock()
	for e, m := range r.m {
		if name, err := e.Name(); err == nil && bytes.Equal(name, n.addr) {
			return m[dest]
		}
	}
	return pathUnknown
}

func waitOne(t *testing.T, cq *fabric.CQ, drive ...*fabric.CQ) fabric.CQEntry {
	t.Helper()
	ent := make([]fabric.CQEntry, 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := cq.Read(ent)
		if n == 1 {
			return ent[0]
		}
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			cq.ReadErr(&ee)
			t.Fatalf("error completion %+v", ee)
		}
		if time.Now().After(deadline) {
			t.Fatal("no completion in 10 s")
		}
		for _, d := range drive {
			d.Read(nil)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// TestMultiRecvBothPaths: one FI_MULTI_RECV buffer of a takes messages
// from a local peer b (shm) and a remote one c (tcp): each lands once, in
// its own part of the buffer, with its source.
func TestMultiRecvBothPaths(t *testing.T) {
	a := openNodeCaps(t, "", fabric.CapMultiRecv)
	b := openNode(t, "")
	c := openNode(t, "other-host")
	ab, ac := a.insert(b.addr), a.insert(c.addr)
	ba, ca := b.insert(a.addr), c.insert(a.addr)
	big := make([]byte, 4096)
	if err := a.ep.SetOpt(fabric.OptEndpoint, fabric.OptMinMultiRecv, 4); err != nil {
		t.Fatal(err)
	}
	if err := a.ep.RecvMsg(&fabric.Msg{IOV: [][]byte{big}, Addr: fabric.AddrUnspec, Context: "multi"},
		fabric.FlagMultiRecv|fabric.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	const per = 5
	for i := 0; i < per; i++ {
		bm, cm := []byte(fmt.Sprintf("b-%02d", i)), []byte(fmt.Sprintf("c-%02d", i))
		retry(t, func() error { return b.ep.Send(bm, nil, ba, nil) }, b.txcq)
		retry(t, func() error { return c.ep.Send(cm, nil, ca, nil) }, c.txcq)
	}
	got := map[string]fabric.Addr{}
	ent := make([]fabric.CQEntry, 1)
	src := make([]fabric.Addr, 1)
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 2*per {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d", len(got), 2*per)
		}
		n, err := a.rxcq.ReadFrom(ent, src)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			a.rxcq.ReadErr(&ee)
			t.Fatalf("error completion %+v", ee)
		}
		if n == 0 {
			b.txcq.Read(nil)
			c.txcq.Read(nil)
			continue
		}
		e := ent[0]
		if e.OpContext != "multi" || e.Flags&fabric.FlagRecv == 0 || e.Flags&fabric.FlagMultiRecv != 0 || e.Len != 4 {
			t.Fatalf("completion %+v", e)
		}
		if len(e.Buf) < 4 || !sameArray(e.Buf, big) {
			t.Fatalf("completion buffer outside the multi-receive buffer: %+v", e)
		}
		m := string(e.Buf[:4])
		if _, dup := got[m]; dup {
			t.Fatalf("%q twice", m)
		}
		got[m] = src[0]
	}
	for m, s := range got {
		want := ab
		if m[0] == 'c' {
			want = ac
		}
		if s != want {
			t.Errorf("%q from %v, want %v", m, s, want)
		}
	}
}

// sameArray reports whether b lies within buf.
func sameArray(b, buf []byte) bool {
	for i := 0; i+len(b) <= len(buf); i++ {
		if &buf[i] == &b[0] {
			return true
		}
	}
	return false
}

// TestPeerEQ: an lnx endpoint bound to an EQ imports it into both linked
// domains (peer EQs): it enables, talks over both paths and closes
// cleanly, with nothing spurious in the EQ; and what a linked endpoint
// reports about itself reaches the EQ as about the lnx endpoint.
func TestPeerEQ(t *testing.T) {
	a := openNodeEQ(t, "", 0, true)
	b := openNode(t, "")
	c := openNode(t, "other-host")
	ab, ac := a.insert(b.addr), a.insert(c.addr)
	b.insert(a.addr)
	c.insert(a.addr)
	for _, p := range []struct {
		n    *node
		dest fabric.Addr
	}{{b, ab}, {c, ac}} {
		buf := make([]byte, 8)
		if err := p.n.ep.Recv(buf, nil, fabric.AddrUnspec, "r"); err != nil {
			t.Fatal(err)
		}
		retry(t, func() error { return a.ep.Send([]byte("via-eq"), nil, p.dest, "s") }, a.txcq)
		waitOne(t, a.txcq, p.n.rxcq)
		if e := waitOne(t, p.n.rxcq, a.txcq); string(buf[:e.Len]) != "via-eq" {
			t.Fatalf("received %q", buf[:e.Len])
		}
	}
	if _, err := a.eq.Read(0); !errors.Is(err, fabric.ErrAgain) {
		t.Fatalf("EQ read: %v, want ErrAgain", err)
	}

	// The owner side of the peer EQ rewrites the linked endpoint's events.
	rec := &recEQ{}
	e := &endpoint{}
	linked := &fabric.Endpoint{}
	q := eqAs{w: rec, from: linked, to: e}
	other := "other"
	for _, f := range []any{linked, other} {
		if err := q.Write(&provider.EQEntry{FID: f, Data: 1}); err != nil {
			t.Fatal(err)
		}
		if err := q.WriteErr(&provider.EQErrEntry{FID: f, Err: provider.ECONNRESET}); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.fids) != 4 || rec.fids[0] != any(e) || rec.fids[1] != any(e) || rec.fids[2] != any(other) ||
		rec.fids[3] != any(other) {
		t.Fatalf("fids %v", rec.fids)
	}
}

type recEQ struct{ fids []any }

func (r *recEQ) Write(e *provider.EQEntry) error       { r.fids = append(r.fids, e.FID); return nil }
func (r *recEQ) WriteErr(e *provider.EQErrEntry) error { r.fids = append(r.fids, e.FID); return nil }
