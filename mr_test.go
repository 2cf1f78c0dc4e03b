package fabric

import (
	"errors"
	"testing"

	"github.com/gofabric/fabric/provider"
)

const mrTestRW = FlagRemoteRead | FlagRemoteWrite

func mrTestMode(m MRMode) func(*Info)                 { return func(i *Info) { i.DomainAttr.MRMode = m } }
func mrTestReg(t *testing.T, d *Domain, b []byte) *MR { return mrTestRegKey(t, d, b, 0) }

func mrTestRegKey(t *testing.T, d *Domain, b []byte, key uint64) *MR {
	t.Helper()
	m, err := d.RegMR(b, mrTestRW, 0, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestMRRequestedKeys(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	buf := make([]byte, 64)
	m := mrTestRegKey(t, d, buf, 0xC0DE)
	if m.Key() != 0xC0DE || m.Address() != 0 || m.Len() != 64 || m.Desc() == nil || m.Desc().Key() != m.Key() || m.Desc().Access() != m.Access() || m.Access() != mrTestRW {
		t.Fatalf("key %#x addr %#x len %d", m.Key(), m.Address(), m.Len())
	}
	_, err := d.RegMR(buf, mrTestRW, 0, 0xC0DE, 0)
	var oe *OpError
	if !errors.Is(err, ErrNoKey) || !errors.As(err, &oe) || oe.Op != "fi_mr_regattr" {
		t.Fatalf("duplicate key: %v", err)
	}
	small := avTestOpenDomain(t, func(i *Info) { i.DomainAttr.MRKeySize = 2 })
	if _, err := small.RegMR(buf, mrTestRW, 0, 1<<20, 0); !errors.Is(err, ErrKeyRejected) {
		t.Fatalf("key out of range: %v", err)
	}
	// Remote access through the domain's key table: offset addressing.
	b, err := d.mrKeys().Access(0xC0DE, 8, 8, FlagRemoteWrite)
	if err != nil || &b[0] != &buf[8] {
		t.Fatalf("access: %v", err)
	}
	if _, err := d.mrKeys().Access(0xC0DE, 60, 8, FlagRemoteWrite); err != provider.EINVAL {
		t.Fatalf("out of range: %v", err)
	}
	m.Close()
	if _, err := d.mrKeys().Access(0xC0DE, 0, 1, FlagRemoteRead); err != provider.EKEYREJECTED {
		t.Fatalf("access after close: %v", err)
	}
	if err := m.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
}

func TestMRProvKeyVirtAddr(t *testing.T) {
	d := avTestOpenDomain(t, mrTestMode(MRProvKey|MRVirtAddr|MRAllocated|MRLocal))
	buf := make([]byte, 128)
	keys := map[uint64]bool{}
	for i := 0; i < 10; i++ {
		m := mrTestRegKey(t, d, buf, 0xFFFF) // requested key ignored
		if keys[m.Key()] {
			t.Fatalf("key %d reused", m.Key())
		}
		keys[m.Key()] = true
		if m.Address() == 0 {
			t.Fatal("FI_MR_VIRT_ADDR region has address 0")
		}
	}
	m := mrTestReg(t, d, buf)
	if _, err := d.mrKeys().Access(m.Key(), m.Address()+100, 28, FlagRemoteRead); err != nil {
		t.Fatalf("VA access: %v", err)
	}
	// Legacy FI_MR_BASIC behaves as VIRT_ADDR|PROV_KEY.
	basic := avTestOpenDomain(t, mrTestMode(MRBasic))
	mb := mrTestRegKey(t, basic, buf, 0)
	mb2 := mrTestRegKey(t, basic, buf, 0)
	if mb.Address() == 0 || mb.Key() == mb2.Key() {
		t.Fatalf("FI_MR_BASIC: addr %#x keys %d %d", mb.Address(), mb.Key(), mb2.Key())
	}
}

func TestMRArgs(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	buf := make([]byte, 8)
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"access", func() error { _, err := d.RegMR(buf, FlagInject, 0, 1, 0); return err }(), ErrInval},
		{"flags", func() error { _, err := d.RegMR(buf, mrTestRW, 0, 2, FlagInject); return err }(), ErrBadFlags},
		{"iov limit", func() error {
			_, err := d.RegMRv([][]byte{buf, buf, buf, buf, buf}, mrTestRW, 0, 3, 0)
			return err
		}(), ErrInval},
		{"nil attr", func() error { _, err := d.RegMRAttr(nil, 0); return err }(), ErrInval},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	// Every subset of the access bits, and accepted flags.
	for acc := Flags(0); acc <= MRAccessFlags; acc++ {
		if acc&^MRAccessFlags != 0 {
			continue
		}
		m, err := d.RegMR(buf, acc, 0, uint64(acc)+100, FlagRMAPmem)
		if err != nil {
			t.Fatalf("access %v: %v", acc, err)
		}
		m.Close()
	}
}

func TestMRRegv(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	big := make([]byte, 8<<20)
	for n := 1; n <= 4; n++ {
		iov := make([][]byte, n)
		step := len(big) / n
		for i := range iov {
			iov[i] = big[i*step : (i+1)*step]
		}
		m, err := d.RegMRv(iov, mrTestRW, 0, uint64(n), 0)
		if err != nil {
			t.Fatalf("%d iovecs: %v", n, err)
		}
		if m.Len() != uint64(n*step) {
			t.Fatalf("len %d", m.Len())
		}
		// 8 bytes across the boundary between the last two iovecs (n > 1).
		if _, err := d.mrKeys().Access(m.Key(), uint64(n*step-step)-4, 8, FlagRemoteRead); n > 1 && err != nil {
			t.Fatalf("access across the iovecs of one buffer: %v", err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
	m, err := d.RegMRAttr(&MRAttr{IOV: [][]byte{big}, Access: mrTestRW, RequestedKey: 9, Context: "ctx"}, 0)
	if err != nil || m.Context() != "ctx" || m.Domain() != d {
		t.Fatal(err)
	}
	m.Close()
}

func TestMRBindEvents(t *testing.T) {
	d := avTestOpenDomain(t, mrTestMode(MRRMAEvent))
	buf := make([]byte, 16)
	m, err := d.RegMR(buf, mrTestRW, 0, 5, FlagRMAEvent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.mrKeys().Access(5, 0, 1, FlagRemoteWrite); err != provider.EKEYREJECTED {
		t.Fatalf("access before fi_mr_enable: %v", err)
	}
	c, err := d.OpenCntr(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := m.Bind(c, FlagRemoteWrite); err != nil {
		t.Fatal(err)
	}
	if err := m.Bind(c, FlagSend); !errors.Is(err, ErrBadFlags) {
		t.Fatalf("bad bind flags: %v", err)
	}
	if err := m.Bind(nil, FlagRemoteWrite); !errors.Is(err, ErrInval) {
		t.Fatalf("nil counter: %v", err)
	}
	other := avTestOpenDomain(t, nil)
	oc, err := other.OpenCntr(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	if err := m.Bind(oc, FlagRemoteWrite); !errors.Is(err, ErrDomain) {
		t.Fatalf("counter of another domain: %v", err)
	}
	if err := c.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("closing a counter bound to an MR: %v", err)
	}
	if err := m.Enable(); err != nil {
		t.Fatal(err)
	}
	if err := m.Bind(c, FlagRemoteWrite); !errors.Is(err, ErrOpBadState) {
		t.Fatalf("bind after enable: %v", err)
	}
	if _, err := d.mrKeys().Access(5, 0, 1, FlagRemoteWrite); err != nil {
		t.Fatal(err)
	}
	d.mrKeys().Event(5, FlagRemoteWrite)
	d.mrKeys().Event(5, FlagRemoteRead)
	if v, _ := c.Read(); v != 1 {
		t.Fatalf("counter %d", v)
	}
	// Without FlagRMAEvent the region starts enabled.
	m2 := mrTestRegKey(t, d, buf, 6)
	if _, err := d.mrKeys().Access(m2.Key(), 0, 1, FlagRemoteRead); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("counter close after the MR closed: %v", err)
	}
	if err := m.Enable(); !errors.Is(err, ErrClosed) {
		t.Fatalf("enable after close: %v", err)
	}
	if err := m.Bind(oc, FlagRemoteWrite); !errors.Is(err, ErrClosed) {
		t.Fatalf("bind after close: %v", err)
	}
	// FI_MR_ENDPOINT regions start disabled too.
	de := avTestOpenDomain(t, mrTestMode(MREndpoint))
	me := mrTestRegKey(t, de, buf, 1)
	if _, err := de.mrKeys().Access(1, 0, 1, FlagRemoteRead); err != provider.EKEYREJECTED {
		t.Fatalf("FI_MR_ENDPOINT before enable: %v", err)
	}
	me.Enable()
	if _, err := de.mrKeys().Access(1, 0, 1, FlagRemoteRead); err != nil {
		t.Fatal(err)
	}
}

func TestMRDomainBusy(t *testing.T) {
	fab, err := OpenFabric(&FabricAttr{ProvName: fakeProvName})
	if err != nil {
		t.Fatal(err)
	}
	defer fab.Close()
	d, err := fab.OpenDomain(&Info{DomainAttr: &DomainAttr{}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.RegMR(make([]byte, 4), mrTestRW, 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("domain close with an MR: %v", err)
	}
	m.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.RegMR(make([]byte, 4), mrTestRW, 0, 1, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("reg on closed domain: %v", err)
	}
}

// TestMRBoundCntrProgressesDomain: reads of a counter bound to a region
// drive the progress of the domain's endpoints (those opened before and
// after the bind, not another domain's), until the last region bound to
// it closes; an endpoint also bound to the counter directly stays
// progressed.
func TestMRBoundCntrProgressesDomain(t *testing.T) {
	d := avTestOpenDomain(t, nil)
	open := func(d *Domain) (*Endpoint, *fakeEP) {
		t.Helper()
		ep, err := d.OpenEndpoint(&Info{EPAttr: &EPAttr{Type: EPRDM}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ep.Close() })
		return ep, ep.p.(*fakeEP)
	}
	_, before := open(d)
	c, err := d.OpenCntr(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// progressed reports whether a counter read progressed each endpoint.
	progressed := func(eps ...*fakeEP) []bool {
		n := make([]int64, len(eps))
		for i, e := range eps {
			n[i] = e.progress.Load()
		}
		if _, err := c.Read(); err != nil {
			t.Fatal(err)
		}
		r := make([]bool, len(eps))
		for i, e := range eps {
			r[i] = e.progress.Load() > n[i]
		}
		return r
	}
	if got := progressed(before); got[0] {
		t.Fatal("an unbound counter progressed the domain's endpoint")
	}
	m1 := mrTestRegKey(t, d, make([]byte, 16), 1)
	m2 := mrTestRegKey(t, d, make([]byte, 16), 2)
	for _, m := range []*MR{m1, m2} {
		if err := m.Bind(c, FlagRemoteWrite); err != nil {
			t.Fatal(err)
		}
	}
	directEP, direct := open(d)
	if err := directEP.Bind(c, FlagSend); err != nil {
		t.Fatal(err)
	}
	closing, closed := open(d)
	_, foreign := open(avTestOpenDomain(t, nil))
	if got := progressed(before, direct, closed, foreign); !got[0] || !got[1] || !got[2] || got[3] {
		t.Fatalf("bound to regions: progressed before/direct/after/other domain = %v, want true true true false", got)
	}
	if err := closing.Close(); err != nil {
		t.Fatal(err)
	}
	if got := progressed(closed); got[0] {
		t.Fatal("a closed endpoint is still progressed")
	}
	if err := m1.Close(); err != nil {
		t.Fatal(err)
	}
	if got := progressed(before); !got[0] {
		t.Fatal("one of two regions closed: the domain is no longer progressed")
	}
	if err := m2.Close(); err != nil {
		t.Fatal(err)
	}
	if got := progressed(before, direct); got[0] || !got[1] {
		t.Fatalf("no region bound: progressed domain endpoint/directly bound = %v, want false true", got)
	}
	// The same for an FI_PEER import bound to a region.
	pc, err := d.OpenCntr(&CntrAttr{Flags: FlagPeer, Peer: c.Owner()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	m3 := mrTestRegKey(t, d, make([]byte, 16), 3)
	if err := m3.Bind(pc, FlagRemoteWrite); err != nil {
		t.Fatal(err)
	}
	n := before.progress.Load()
	if _, err := pc.Read(); err != nil || before.progress.Load() == n {
		t.Fatalf("peer import bound to a region: read %v, progressed %v", err, before.progress.Load() > n)
	}
	if err := m3.Close(); err != nil {
		t.Fatal(err)
	}
}
