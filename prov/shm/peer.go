package shm

import (
	"crypto/subtle"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// peer is a mapped region of another endpoint (or this one).
type peer struct {
	id   uint64
	name string // the AV's address bytes for it
	file *sys.ShmFile
	r    *shmring.Region
	// inline is the largest payload carried in a command slot.
	inline int
	// err is set when the peer cannot be written (wrong auth key):
	// every operation towards it fails with it.
	err provider.Errno
}

// peerTable maps fi_addr values to mapped peers: a lock-free read side
// (one atomic load per lookup; flat in the number of peers), written
// under mu. A peer whose AV entry changed is replaced, and the old one
// kept mapped until the endpoint closes (a send may still be using it).
type peerTable struct {
	mu      sync.Mutex
	tab     atomic.Pointer[[]atomic.Pointer[peer]]
	retired []*peer
	byName  map[string]*peer // peers beyond MaxPeers
	byID    map[uint64]*peer // peers answered (acks), by endpoint id
}

// peerByID returns the mapped region of endpoint id, to answer it (acks),
// or nil if it cannot be written (gone, damaged, another auth key).
func (ep *endpoint) peerByID(id uint64) *peer {
	t := &ep.peers
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.byID[id]; ok {
		if p == nil || p.err != 0 {
			return nil
		}
		return p
	}
	if t.byID == nil {
		t.byID = map[uint64]*peer{}
	}
	p, _ := ep.openPeer(id)
	if p != nil && p.err != 0 {
		p.file.Close()
		p = nil
	}
	t.byID[id] = p
	return p
}

// lookup returns the cached peer for addr whose AV bytes are b.
func (t *peerTable) lookup(addr provider.Addr, b []byte) *peer {
	tab := t.tab.Load()
	if tab == nil || uint64(addr) >= uint64(len(*tab)) {
		return nil
	}
	if p := (*tab)[addr].Load(); p != nil && p.name == string(b) {
		return p
	}
	return nil
}

// peerFor returns the peer at fi_addr addr, mapping its region at the
// first use. EINVAL: addr is not in the AV.
func (ep *endpoint) peerFor(addr provider.Addr) (*peer, provider.Errno) {
	b := ep.av.Lookup(addr)
	if b == nil {
		return nil, provider.EINVAL
	}
	if p := ep.peers.lookup(addr, b); p != nil {
		return p, p.err
	}
	return ep.mapPeer(addr, b)
}

func (ep *endpoint) mapPeer(addr provider.Addr, b []byte) (*peer, provider.Errno) {
	t := &ep.peers
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.lookup(addr, b); p != nil {
		return p, p.err
	}
	if uint64(addr) >= MaxPeers {
		if p := t.byName[string(b)]; p != nil {
			return p, p.err
		}
	}
	id, ok := parseName(b)
	if !ok || id == 0 {
		return nil, provider.EINVAL
	}
	p, e := ep.openPeer(id)
	if p == nil {
		return nil, e
	}
	p.name = string(b)
	if uint64(addr) >= MaxPeers {
		if t.byName == nil {
			t.byName = map[string]*peer{}
		}
		t.byName[p.name] = p
		return p, p.err
	}
	tab := t.tab.Load()
	if tab == nil || uint64(addr) >= uint64(len(*tab)) {
		n := 64
		if tab != nil {
			n = 2 * len(*tab)
		}
		for uint64(n) <= uint64(addr) {
			n *= 2
		}
		nt := make([]atomic.Pointer[peer], n)
		if tab != nil {
			for i := range *tab {
				nt[i].Store((*tab)[i].Load())
			}
		}
		t.tab.Store(&nt)
		tab = &nt
	}
	if old := (*tab)[addr].Swap(p); old != nil {
		t.retired = append(t.retired, old)
	}
	return p, p.err
}

// openPeer maps the region of endpoint id and validates it. A region that
// does not exist (the peer closed or never was) is ECONNREFUSED; a damaged
// one EIO; another auth key gives a peer whose operations fail with
// EACCES, and nothing is written into its region.
func (ep *endpoint) openPeer(id uint64) (*peer, provider.Errno) {
	f, err := sys.OpenShm(fileName(id))
	if err != nil {
		e := errnoOf(err)
		if e == provider.ENOENT {
			e = provider.ECONNREFUSED
		}
		return nil, e
	}
	h, err := shmring.Attach(f.Bytes())
	if err != nil || h.ID != id {
		log.Warn(provider.SubsysEPData, "peer region is damaged", slog.String("name", fileName(id)), slog.Any("err", err))
		f.Close()
		return nil, provider.EIO
	}
	p := &peer{id: id, file: f, r: shmring.NewRegion(f.Bytes(), h)}
	p.inline = p.r.InlineMax()
	if len(ep.authKey) != h.AuthLen || subtle.ConstantTimeCompare(ep.authKey, h.AuthKey()) != 1 {
		p.err = provider.EACCES
	}
	return p, 0
}

// closeAll unmaps every peer (the endpoint is closed: no call is using
// them).
func (t *peerTable) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tab := t.tab.Load(); tab != nil {
		for i := range *tab {
			if p := (*tab)[i].Swap(nil); p != nil {
				p.file.Close()
			}
		}
	}
	for _, p := range t.retired {
		p.file.Close()
	}
	for _, p := range t.byName {
		p.file.Close()
	}
	for _, p := range t.byID {
		if p != nil {
			p.file.Close()
		}
	}
	t.retired, t.byName, t.byID = nil, nil, nil
}
