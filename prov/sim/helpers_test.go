package sim_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

var netSeq atomic.Uint64

// newNetwork registers a network of its own for the test, unregistered
// at cleanup.
func newNetwork(t testing.TB, cfg sim.Config) *sim.Network {
	t.Helper()
	nw, err := sim.NewNetwork(fmt.Sprintf("test-%d", netSeq.Add(1)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nw.Close() })
	return nw
}

// cluster is a domain of n endpoints on one network: one AV holding
// every endpoint's name (addrs[i] is endpoint i's fi_addr), and CQs each
// bound to a group of endpoints (endpoint i uses cqs[i%len(cqs)] for
// both directions).
type cluster struct {
	t     testing.TB
	nw    *sim.Network
	info  *fabric.Info
	fab   *fabric.Fabric
	dom   *fabric.Domain
	av    *fabric.AV
	cqs   []*fabric.CQ
	eps   []*fabric.Endpoint
	addrs []fabric.Addr
}

type clusterOpts struct {
	epType  fabric.EPType
	n       int
	groups  int    // CQs (default n: one per endpoint)
	cqSize  uint64 // default 1024
	rxSize  uint64 // rx_attr.size (default 16)
	txSize  uint64 // tx_attr.size (default 64)
	caps    fabric.Caps
	modInfo func(*fabric.Info)
}

func openCluster(t testing.TB, nw *sim.Network, o clusterOpts) *cluster {
	t.Helper()
	if o.groups == 0 {
		o.groups = o.n
	}
	if o.cqSize == 0 {
		o.cqSize = 1024
	}
	if o.rxSize == 0 {
		o.rxSize = 16
	}
	if o.txSize == 0 {
		o.txSize = 64
	}
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg | fabric.CapTagged | o.caps
	h.EPAttr.Type = o.epType
	h.FabricAttr.ProvName = "sim"
	h.FabricAttr.Name = nw.Name()
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, nw: nw, info: infos[0]}
	c.info.RxAttr.Size, c.info.TxAttr.Size = o.rxSize, o.txSize
	if o.modInfo != nil {
		o.modInfo(c.info)
	}
	if c.fab, err = fabric.Open(c.info); err != nil {
		t.Fatal(err)
	}
	if c.dom, err = c.fab.OpenDomain(c.info); err != nil {
		t.Fatal(err)
	}
	if c.av, err = c.dom.OpenAV(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	c.cqs = make([]*fabric.CQ, o.groups)
	for g := range c.cqs {
		if c.cqs[g], err = c.dom.OpenCQ(&fabric.CQAttr{Size: o.cqSize, Format: fabric.CQFormatTagged}); err != nil {
			t.Fatal(err)
		}
	}
	names := make([][]byte, o.n)
	c.eps = make([]*fabric.Endpoint, o.n)
	for i := range c.eps {
		ep, err := c.dom.OpenEndpoint(c.info)
		if err != nil {
			t.Fatalf("endpoint %d: %v", i, err)
		}
		c.eps[i] = ep
		if err := ep.BindCQ(c.cqs[i%o.groups], fabric.FlagTransmit|fabric.FlagRecv); err != nil {
			t.Fatal(err)
		}
		if err := ep.BindAV(c.av); err != nil {
			t.Fatal(err)
		}
		if err := ep.Enable(); err != nil {
			t.Fatal(err)
		}
		if names[i], err = ep.Name(); err != nil {
			t.Fatal(err)
		}
	}
	c.addrs = make([]fabric.Addr, o.n)
	if k, err := c.av.Insert(names, c.addrs, 0); k != o.n || err != nil {
		t.Fatalf("av insert: %d of %d, %v", k, o.n, err)
	}
	return c
}

func (c *cluster) close() {
	for _, ep := range c.eps {
		if ep != nil {
			if err := ep.Close(); err != nil {
				c.t.Errorf("close endpoint: %v", err)
			}
		}
	}
	c.eps = nil
	for _, q := range c.cqs {
		if q != nil {
			q.Close()
		}
	}
	c.cqs = nil
	if c.av != nil {
		c.av.Close()
		c.av = nil
	}
	if c.dom != nil {
		c.dom.Close()
		c.dom = nil
	}
	if c.fab != nil {
		c.fab.Close()
		c.fab = nil
	}
}

// record is one completion as the test saw it: which CQ, when (the
// network's virtual time after the read that returned it), and what.
type record struct {
	CQ    int
	At    time.Duration
	Ctx   any
	Flags fabric.Flags
	Len   uint64
	Tag   uint64
	Data  uint64
	Err   error
}

// drain reads every CQ in turn, recording what they return, until
// done(records) holds; it fails after a wall-clock bound.
func (c *cluster) drain(bound time.Duration, done func([]record) bool) []record {
	c.t.Helper()
	var recs []record
	ents := make([]fabric.CQEntry, 64)
	deadline := time.Now().Add(bound)
	for !done(recs) {
		if time.Now().After(deadline) {
			c.t.Fatalf("%d completions after %v (network at %v, %d pending)", len(recs), bound, c.nw.Now(), c.nw.Pending())
		}
		for g, q := range c.cqs {
			n, err := q.Read(ents)
			at := c.nw.Now()
			for _, e := range ents[:max(n, 0)] {
				recs = append(recs, record{CQ: g, At: at, Ctx: e.OpContext, Flags: e.Flags, Len: e.Len, Tag: e.Tag, Data: e.Data})
			}
			if errors.Is(err, fabric.ErrAvail) {
				var ee fabric.CQErrEntry
				if err := q.ReadErr(&ee); err != nil {
					c.t.Fatal(err)
				}
				recs = append(recs, record{CQ: g, At: at, Ctx: ee.OpContext, Flags: ee.Flags, Len: ee.Len, Tag: ee.Tag, Err: ee.Err})
			}
		}
	}
	return recs
}

// count returns how many records have all of flags.
func count(recs []record, flags fabric.Flags) int {
	n := 0
	for _, r := range recs {
		if r.Flags&flags == flags && r.Err == nil {
			n++
		}
	}
	return n
}

// payload writes the message of sender i, index j into b.
func payload(b []byte, i, j int) []byte {
	binary.LittleEndian.PutUint32(b[0:], uint32(i))
	binary.LittleEndian.PutUint32(b[4:], uint32(j))
	for k := 8; k < len(b); k++ {
		b[k] = byte(i + j + k)
	}
	return b
}
