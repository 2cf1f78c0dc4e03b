package progress

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/provider"
)

// Set is a goroutine-safe, copy-on-write set of progress sources. Run reads
// an immutable snapshot through an atomic pointer: it takes no lock and
// does not allocate. Add and Remove (bind and unbind, rare) copy the
// snapshot under a mutex. A source added n times is progressed once per Run
// and stays until removed n times.
type Set struct {
	mu   sync.Mutex
	refs map[provider.Progresser]int // guarded by mu
	snap atomic.Pointer[[]provider.Progresser]
}

// Add adds p to the set (or counts one more reference to it). A nil p is
// ignored. p must be comparable (pointers are); otherwise Add returns
// EINVAL.
func (s *Set) Add(p provider.Progresser) error {
	if p == nil {
		return nil
	}
	if !reflect.TypeOf(p).Comparable() {
		return provider.EINVAL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs == nil {
		s.refs = make(map[provider.Progresser]int)
	}
	s.refs[p]++
	if s.refs[p] == 1 {
		old := s.load()
		n := make([]provider.Progresser, len(old), len(old)+1)
		copy(n, old)
		n = append(n, p)
		s.snap.Store(&n)
	}
	return nil
}

// Remove drops one reference to p and removes it from the set when none
// remain. It reports whether p was in the set.
func (s *Set) Remove(p provider.Progresser) bool {
	if p == nil || !reflect.TypeOf(p).Comparable() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.refs[p]
	if !ok {
		return false
	}
	if c > 1 {
		s.refs[p] = c - 1
		return true
	}
	delete(s.refs, p)
	old := s.load()
	n := make([]provider.Progresser, 0, len(old))
	for _, x := range old {
		if x != p {
			n = append(n, x)
		}
	}
	s.snap.Store(&n)
	return true
}

func (s *Set) load() []provider.Progresser {
	if p := s.snap.Load(); p != nil {
		return *p
	}
	return nil
}

// Run calls Progress on every source, in the order they were added. It is
// lock-free and allocation-free, and safe to call concurrently with Add,
// Remove and other Runs (sources must tolerate concurrent Progress calls,
// as provider.Progresser requires).
func (s *Set) Run() {
	p := s.snap.Load()
	if p == nil {
		return
	}
	if len(*p) == 1 {
		// The common case (a CQ bound to one endpoint), without the
		// loop's spills around the call.
		(*p)[0].Progress()
		return
	}
	for _, x := range *p {
		x.Progress()
	}
}

// Len returns the number of distinct sources.
func (s *Set) Len() int { return len(s.load()) }

// Sources returns the current snapshot. The caller must not modify it.
func (s *Set) Sources() []provider.Progresser { return s.load() }

// Contains reports whether p is in the set.
func (s *Set) Contains(p provider.Progresser) bool {
	for _, x := range s.load() {
		if x == p {
			return true
		}
	}
	return false
}
