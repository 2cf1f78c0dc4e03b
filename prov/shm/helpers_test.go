package shm_test

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/testutil"
)

// TestMain checks for leaked goroutines and descriptors, and that this
// process left no region file in /dev/shm (files of other processes,
// such as tests running elsewhere at the same time, are not ours).
func TestMain(m *testing.M) {
	code := testutil.Run(m)
	for _, f := range ownRegionFiles() {
		println("region file left behind:", f)
		code = 1
	}
	os.Exit(code)
}

// ownRegionFiles lists the region files whose owner pid (header offset
// 64) is this process.
func ownRegionFiles() []string {
	var out []string
	ents, _ := os.ReadDir("/dev/shm")
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "gofabric-shm-") {
			continue
		}
		f, err := os.Open("/dev/shm/" + e.Name())
		if err != nil {
			continue
		}
		var hdr [68]byte
		n, _ := f.ReadAt(hdr[:], 0)
		f.Close()
		if n == len(hdr) && int(binary.LittleEndian.Uint32(hdr[64:])) == os.Getpid() {
			out = append(out, e.Name())
		}
	}
	return out
}

// node is one shm endpoint with its objects, closed at cleanup.
type node struct {
	t    testing.TB
	info *fabric.Info
	dom  *fabric.Domain
	av   *fabric.AV
	txcq *fabric.CQ
	rxcq *fabric.CQ
	ep   *fabric.Endpoint
	addr []byte
}

type nodeOpts struct {
	caps    fabric.Caps
	authKey []byte
	auto    bool
	// threading asks for a threading model (zero: the default).
	threading fabric.Threading
}

func hints(o nodeOpts) *fabric.Info {
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg | fabric.CapTagged | o.caps
	h.EPAttr.Type = fabric.EPRDM
	h.FabricAttr.ProvName = "shm"
	if o.auto {
		h.DomainAttr.DataProgress = fabric.ProgressAuto
	}
	h.DomainAttr.Threading = o.threading
	return h
}

func closeOK(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, fabric.ErrClosed) {
		t.Errorf("close %s: %v", what, err)
	}
}

func newNode(t testing.TB, o nodeOpts) *node {
	t.Helper()
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, hints(o))
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	info := infos[0]
	if o.authKey != nil {
		info.DomainAttr.AuthKey = o.authKey
	}
	n := &node{t: t, info: info}
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "fabric", fab.Close()) })
	if n.dom, err = fab.OpenDomain(info); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "domain", n.dom.Close()) })
	for _, c := range []**fabric.CQ{&n.txcq, &n.rxcq} {
		if *c, err = n.dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged, Size: 256}); err != nil {
			t.Fatal(err)
		}
		cq := *c
		t.Cleanup(func() { closeOK(t, "cq", cq.Close()) })
	}
	if n.av, err = n.dom.OpenAV(&fabric.AVAttr{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "av", n.av.Close()) })
	if n.ep, err = n.dom.OpenEndpoint(info); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOK(t, "endpoint", n.ep.Close()) })
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

func (n *node) insert(addr []byte) fabric.Addr {
	n.t.Helper()
	fa := []fabric.Addr{0}
	if c, err := n.av.Insert([][]byte{addr}, fa, 0); c != 1 || err != nil {
		n.t.Fatalf("AV insert: %d %v", c, err)
	}
	return fa[0]
}

func pair(t testing.TB, o nodeOpts) (a, b *node, ab, ba fabric.Addr) {
	a, b = newNode(t, o), newNode(t, o)
	return a, b, a.insert(b.addr), b.insert(a.addr)
}

// wait reads cq until an entry (or an error entry) arrives, driving the
// progress of others, and fails after 5 s.
func wait(t testing.TB, cq *fabric.CQ, others ...*fabric.CQ) (fabric.CQEntry, *fabric.CQErrEntry) {
	t.Helper()
	var ent [1]fabric.CQEntry
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n, err := cq.Read(ent[:])
		if n == 1 {
			return ent[0], nil
		}
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			if err := cq.ReadErr(&ee); err != nil {
				t.Fatal(err)
			}
			return fabric.CQEntry{}, &ee
		}
		for _, o := range others {
			o.Read(nil)
		}
	}
	t.Fatal("no completion within 5s")
	return fabric.CQEntry{}, nil
}

// expectNone drives progress for d and fails on any entry.
func expectNone(t testing.TB, cq *fabric.CQ, d time.Duration, others ...*fabric.CQ) {
	t.Helper()
	var ent [1]fabric.CQEntry
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		if n, err := cq.Read(ent[:]); n != 0 || (err != nil && !errors.Is(err, fabric.ErrAgain)) {
			t.Fatalf("unexpected completion %+v %v", ent[0], err)
		}
		for _, o := range others {
			o.Read(nil)
		}
	}
}

// retry posts until it does not return ErrAgain, driving progress.
func retry(t testing.TB, what string, post func() error, cqs ...*fabric.CQ) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
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

func pattern(n, k int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + k*13 + i>>8)
	}
	return b
}
