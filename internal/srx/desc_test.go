package srx

import (
	"testing"

	"github.com/gofabric/fabric/provider"
)

// descPeer records the descriptors of the entries it is started with.
type descPeer struct {
	q    *Queue
	seen [][]provider.MRDesc
}

func (p *descPeer) start(e *provider.RxEntry) error {
	p.seen = append(p.seen, append([]provider.MRDesc(nil), e.Desc...))
	p.q.FreeEntry(e)
	return nil
}
func (p *descPeer) StartMsg(e *provider.RxEntry) error   { return p.start(e) }
func (p *descPeer) StartTag(e *provider.RxEntry) error   { return p.start(e) }
func (p *descPeer) DiscardMsg(e *provider.RxEntry) error { p.q.FreeEntry(e); return nil }
func (p *descPeer) DiscardTag(e *provider.RxEntry) error { p.q.FreeEntry(e); return nil }

func sameDescs(a, b []provider.MRDesc) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The descriptors of a posted receive reach the peer provider in the
// entry (fi_peer_rx_entry.desc) on every path: expected, unexpected, and
// each piece of a multi-receive buffer. They are copied at Post, like the
// iovec.
func TestReceiveDescriptors(t *testing.T) {
	buf := make([]byte, 256)
	d1 := provider.NewMRRegion(1, provider.FlagRecv, 0, [][]byte{buf[:128]}, nil)
	d2 := provider.NewMRRegion(2, provider.FlagRecv, 0, [][]byte{buf[128:]}, nil)

	t.Run("expected", func(t *testing.T) {
		q := New(Config{})
		newPeer(q)
		m := provider.Msg{Buf: buf[:64], Desc: d1, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
		if err := q.Post(&m, false); err != nil {
			t.Fatal(err)
		}
		e, err := q.GetMsg(provider.AddrUnspec, 8)
		if err != nil {
			t.Fatal(err)
		}
		if !sameDescs(e.Desc, []provider.MRDesc{d1}) {
			t.Fatalf("desc %v, want [d1]", e.Desc)
		}
		q.FreeEntry(e)
	})

	t.Run("unexpected_then_posted_vector", func(t *testing.T) {
		q := New(Config{})
		newPeer(q)
		p := &descPeer{q: q}
		e, err := q.GetMsg(provider.AddrUnspec, 8)
		if err != provider.ENOENT {
			t.Fatalf("GetMsg on an empty queue: %v", err)
		}
		e.Peer = p
		if err := q.QueueMsg(e); err != nil {
			t.Fatal(err)
		}
		descs := []provider.MRDesc{d1, d2}
		m := provider.Msg{IOV: [][]byte{buf[:4], buf[128:132]}, Descs: descs, Addr: provider.AddrUnspec,
			Flags: provider.FlagCompletion}
		if err := q.Post(&m, false); err != nil {
			t.Fatal(err)
		}
		descs[0] = nil // the queue copied them
		if len(p.seen) != 1 || !sameDescs(p.seen[0], []provider.MRDesc{d1, d2}) {
			t.Fatalf("started with %v, want [d1 d2]", p.seen)
		}
	})

	t.Run("multi_recv_pieces", func(t *testing.T) {
		q := New(Config{MinMultiRecv: 16})
		newPeer(q)
		m := provider.Msg{Buf: buf[:128], Desc: d1, Addr: provider.AddrUnspec,
			Flags: provider.FlagCompletion | provider.FlagMultiRecv}
		if err := q.Post(&m, false); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			e, err := q.GetMsg(provider.AddrUnspec, 16)
			if err != nil {
				t.Fatal(err)
			}
			if !sameDescs(e.Desc, []provider.MRDesc{d1}) {
				t.Fatalf("piece %d: desc %v, want [d1]", i, e.Desc)
			}
			q.FreeEntry(e)
		}
	})

	t.Run("none", func(t *testing.T) {
		q := New(Config{})
		newPeer(q)
		m := provider.Msg{Buf: buf[:64], Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
		if err := q.Post(&m, false); err != nil {
			t.Fatal(err)
		}
		e, err := q.GetMsg(provider.AddrUnspec, 8)
		if err != nil {
			t.Fatal(err)
		}
		if e.Desc != nil {
			t.Fatalf("desc %v, want nil", e.Desc)
		}
		q.FreeEntry(e)
	})
}
