package main

import (
	"sync"
	"sync/atomic"
)

// The handle table maps the uint64_t h of a C object (gofab.h) to its Go
// object. C never holds a Go pointer: it holds h, and every entry point
// looks the object up here.
//
// A handle is gen<<32 | index. Lookups are lock-free (atomic loads of a
// chunk pointer and of the slot's entry) and allocation-free; writers (add,
// remove) take the mutex. Removing a slot bumps its generation, so a stale
// handle (a closed fid used again) or a forged one (calloc'd zero, random
// bits) finds no entry with its generation and the caller returns
// -FI_EINVAL. Generation 0 is never issued, so h == 0 is always invalid.

const (
	handleChunkBits = 10
	handleChunkSize = 1 << handleChunkBits
	handleMaxChunks = 1 << 12 // 4M live objects
)

type handleEntry struct {
	gen uint32
	obj any
}

type handleSlot struct {
	e   atomic.Pointer[handleEntry]
	gen uint32 // last generation issued; guarded by handleTable.mu
}

type handleTable struct {
	mu     sync.Mutex
	chunks [handleMaxChunks]atomic.Pointer[[handleChunkSize]handleSlot]
	next   uint32   // slots ever used
	free   []uint32 // released slot indexes
	live   atomic.Int64
}

// handles is the plugin's one table.
var handles handleTable

// add stores obj and returns its handle; ok is false when the table is
// full (the caller returns -FI_ENOMEM).
func (t *handleTable) add(obj any) (h uint64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var idx uint32
	if n := len(t.free); n > 0 {
		idx = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		if t.next >= handleMaxChunks*handleChunkSize {
			return 0, false
		}
		idx = t.next
		t.next++
		c := idx >> handleChunkBits
		if t.chunks[c].Load() == nil {
			t.chunks[c].Store(new([handleChunkSize]handleSlot))
		}
	}
	s := &t.chunks[idx>>handleChunkBits].Load()[idx&(handleChunkSize-1)]
	s.gen++
	if s.gen == 0 {
		s.gen = 1
	}
	s.e.Store(&handleEntry{gen: s.gen, obj: obj})
	t.live.Add(1)
	return uint64(s.gen)<<32 | uint64(idx), true
}

func (t *handleTable) slot(h uint64) *handleSlot {
	idx := uint32(h)
	c := idx >> handleChunkBits
	if c >= handleMaxChunks {
		return nil
	}
	chunk := t.chunks[c].Load()
	if chunk == nil {
		return nil
	}
	return &chunk[idx&(handleChunkSize-1)]
}

// get returns the object of h, or nil for a stale or forged handle.
func (t *handleTable) get(h uint64) any {
	s := t.slot(h)
	if s == nil {
		return nil
	}
	e := s.e.Load()
	if e == nil || e.gen != uint32(h>>32) {
		return nil
	}
	return e.obj
}

// remove drops h; false when h is not live.
func (t *handleTable) remove(h uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.slot(h)
	if s == nil {
		return false
	}
	e := s.e.Load()
	if e == nil || e.gen != uint32(h>>32) {
		return false
	}
	s.e.Store(nil)
	t.free = append(t.free, uint32(h))
	t.live.Add(-1)
	return true
}

// count returns the number of live handles (leak checks in tests).
func (t *handleTable) count() int { return int(t.live.Load()) }

// lookup returns the object of h as a T; false when h is stale, forged or
// names an object of another type.
func lookup[T any](h uint64) (T, bool) {
	v, ok := handles.get(h).(T)
	return v, ok
}
