package shmring

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"sync/atomic"
)

// Layout constants of version 2.
const (
	// Magic starts every region.
	Magic = "GOFABSHM"
	// Version is the layout version this package writes and accepts.
	Version = 2
	// HeaderSize is the size of the header page.
	HeaderSize = 4096
	// MaxAuthKey is the largest auth key stored in a header.
	MaxAuthKey = 64
	// CmdHeaderSize is the part of a slot before an inline payload: the
	// slot's sequence number and the command header.
	CmdHeaderSize = 64
	// poolCellSize is the size of one free-list cell (the next index).
	poolCellSize = 8

	// Limits on the parameters a header may hold (Attach refuses others).
	MinSlotSize = 128
	MaxSlotSize = 8192
	MaxSlots    = 1 << 16
	MinBufSize  = 4096
	MaxBufSize  = 1 << 20
	MaxBufs     = 1 << 12
	// MaxRegionSize bounds the total size of a region.
	MaxRegionSize = 1 << 32
)

// Header field offsets.
const (
	offMagic    = 0
	offVersion  = 8
	offHdrSize  = 12
	offTotal    = 16
	offRingOff  = 24
	offSlots    = 32
	offSlotSize = 36
	offPoolOff  = 40
	offBufCount = 48
	offBufSize  = 52
	offBufOff   = 56
	offPid      = 64
	offAuthLen  = 68
	offID       = 72
	offAuth     = 80
	offClosing  = 256
	offSeq      = 320
	offSleepers = 324
	offRingTail = 384
	offPoolHead = 448
	offConsHead = 512
)

// Errors of Attach and Init. They are plain values: the provider maps them
// to libfabric errors (a damaged peer region fails the operations towards
// that peer).
var (
	ErrBadMagic   = errors.New("shmring: not a region (bad magic)")
	ErrBadVersion = errors.New("shmring: unsupported region version")
	ErrBadLayout  = errors.New("shmring: invalid region layout")
	ErrTooSmall   = errors.New("shmring: mapping too small for the region")
	ErrAuthKey    = errors.New("shmring: auth key too long")
	ErrMisaligned = errors.New("shmring: mapping not aligned")
)

// Params are the sizes of a region.
type Params struct {
	Slots    uint32 // command slots, a power of two in [2, MaxSlots]
	SlotSize uint32 // bytes per slot, a power of two in [MinSlotSize, MaxSlotSize]
	Bufs     uint32 // bounce buffers, a power of two in [1, MaxBufs]
	BufSize  uint32 // bytes per buffer, a power of two in [MinBufSize, MaxBufSize]
}

// Header is the validated, copied content of a region header.
type Header struct {
	Params
	Total   uint64 // total size
	RingOff uint64
	PoolOff uint64
	BufOff  uint64
	Pid     uint32
	ID      uint64
	AuthLen int
	Auth    [MaxAuthKey]byte
}

// AuthKey returns the header's auth key.
func (h *Header) AuthKey() []byte { return h.Auth[:h.AuthLen] }

func pow2(v uint32) bool { return v != 0 && v&(v-1) == 0 }

func (p Params) valid() bool {
	return pow2(p.Slots) && p.Slots >= 2 && p.Slots <= MaxSlots &&
		pow2(p.SlotSize) && p.SlotSize >= MinSlotSize && p.SlotSize <= MaxSlotSize &&
		pow2(p.Bufs) && p.Bufs <= MaxBufs &&
		pow2(p.BufSize) && p.BufSize >= MinBufSize && p.BufSize <= MaxBufSize
}

// Size returns the total size of a region with parameters p, and false if
// p is invalid.
func (p Params) Size() (uint64, bool) {
	if !p.valid() {
		return 0, false
	}
	_, _, _, total := p.layout()
	return total, total <= MaxRegionSize
}

// layout computes the offsets of a valid p (no overflow: every factor is
// bounded by the Max constants).
func (p Params) layout() (ringOff, poolOff, bufOff, total uint64) {
	ringOff = HeaderSize
	poolOff = ringOff + uint64(p.Slots)*uint64(p.SlotSize)
	bufOff = alignUp(poolOff+uint64(p.Bufs)*poolCellSize, 4096)
	total = bufOff + uint64(p.Bufs)*uint64(p.BufSize)
	return
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

// Init writes a fresh region header, an empty command queue and a full
// full free list into b, which must be zeroed (a new file) and at least
// p.Size() bytes. It returns the header as Attach would read it.
func Init(b []byte, p Params, pid uint32, id uint64, authKey []byte) (*Header, error) {
	total, ok := p.Size()
	if !ok {
		return nil, ErrBadLayout
	}
	if uint64(len(b)) < total {
		return nil, ErrTooSmall
	}
	if len(authKey) > MaxAuthKey {
		return nil, ErrAuthKey
	}
	if !aligned(b) {
		return nil, ErrMisaligned
	}
	ringOff, poolOff, bufOff, _ := p.layout()
	le := binary.LittleEndian
	le.PutUint32(b[offVersion:], Version)
	le.PutUint32(b[offHdrSize:], HeaderSize)
	le.PutUint64(b[offTotal:], total)
	le.PutUint64(b[offRingOff:], ringOff)
	le.PutUint32(b[offSlots:], p.Slots)
	le.PutUint32(b[offSlotSize:], p.SlotSize)
	le.PutUint64(b[offPoolOff:], poolOff)
	le.PutUint32(b[offBufCount:], p.Bufs)
	le.PutUint32(b[offBufSize:], p.BufSize)
	le.PutUint64(b[offBufOff:], bufOff)
	le.PutUint32(b[offPid:], pid)
	le.PutUint32(b[offAuthLen:], uint32(len(authKey)))
	le.PutUint64(b[offID:], id)
	copy(b[offAuth:offAuth+MaxAuthKey], authKey)
	// Every slot's sequence number is 0: no position's (pos+1 >= 1).
	for i := uint64(0); i < uint64(p.Slots); i++ {
		u64At(b, ringOff+i*uint64(p.SlotSize)).Store(0)
	}
	u64At(b, offConsHead).Store(0)
	// The free list holds every buffer: 0 on top, then 1, 2 ...
	for i := uint64(0); i < uint64(p.Bufs); i++ {
		next := i + 2
		if next > uint64(p.Bufs) {
			next = 0
		}
		u64At(b, poolOff+i*poolCellSize).Store(next)
	}
	u64At(b, offPoolHead).Store(1)
	u64At(b, offRingTail).Store(0)
	// The magic goes last: a region is valid only once it is complete.
	copy(b[offMagic:offMagic+8], Magic)
	h, err := Attach(b)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Attach validates the header of the region mapped at b and returns a copy
// of it. Every size and offset is checked against b and the limits: a
// header that passes describes a ring, a pool and buffers that lie inside
// b without overlapping each other or the header.
func Attach(b []byte) (*Header, error) {
	if len(b) < HeaderSize {
		return nil, ErrTooSmall
	}
	if string(b[offMagic:offMagic+8]) != Magic {
		return nil, ErrBadMagic
	}
	le := binary.LittleEndian
	if le.Uint32(b[offVersion:]) != Version || le.Uint32(b[offHdrSize:]) != HeaderSize {
		return nil, ErrBadVersion
	}
	h := &Header{}
	h.Slots = le.Uint32(b[offSlots:])
	h.SlotSize = le.Uint32(b[offSlotSize:])
	h.Bufs = le.Uint32(b[offBufCount:])
	h.BufSize = le.Uint32(b[offBufSize:])
	h.Total = le.Uint64(b[offTotal:])
	h.RingOff = le.Uint64(b[offRingOff:])
	h.PoolOff = le.Uint64(b[offPoolOff:])
	h.BufOff = le.Uint64(b[offBufOff:])
	h.Pid = le.Uint32(b[offPid:])
	h.ID = le.Uint64(b[offID:])
	al := le.Uint32(b[offAuthLen:])
	if !h.Params.valid() {
		return nil, ErrBadLayout
	}
	// Version 2 fixes the layout as a function of the parameters: the
	// offsets must be exactly those.
	ringOff, poolOff, bufOff, total := h.Params.layout()
	if h.RingOff != ringOff || h.PoolOff != poolOff || h.BufOff != bufOff || h.Total != total ||
		total > MaxRegionSize || al > MaxAuthKey {
		return nil, ErrBadLayout
	}
	if uint64(len(b)) < total {
		return nil, ErrTooSmall
	}
	if !aligned(b) {
		return nil, ErrMisaligned
	}
	h.AuthLen = int(al)
	copy(h.Auth[:], b[offAuth:offAuth+MaxAuthKey])
	return h, nil
}

// Region is an attached region: its command queue, its pool and its
// control words. Its methods are safe for concurrent use by producers;
// the consumer side (Peek, Release) is for the owner only, one goroutine
// at a time.
type Region struct {
	Header
	b        []byte
	ring     []byte // the slots
	mask     uint64 // Slots-1
	shift    uint   // log2(SlotSize)
	tail     *atomic.Uint64
	head     atomic.Uint64  // consumer position (process-local; written by the owner's consumer only)
	cons     *atomic.Uint64 // the consumer position, published for producers (shared)
	consSeen atomic.Uint64  // producers: the last value read from cons (process-local)
	cells    []byte
	phead    *atomic.Uint64
	bufs     []byte
	bshift   uint
	closing  *atomic.Uint32
	seq      *atomic.Uint32
	sleepers *atomic.Uint32
}

// NewRegion returns the Region of mapping b, whose header h was returned
// by Attach or Init for b.
func NewRegion(b []byte, h *Header) *Region {
	r := &Region{Header: *h, b: b}
	r.ring = b[h.RingOff : h.RingOff+uint64(h.Slots)*uint64(h.SlotSize)]
	r.mask = uint64(h.Slots) - 1
	r.shift = uint(bits.TrailingZeros32(h.SlotSize))
	r.tail = u64At(b, offRingTail)
	r.cons = u64At(b, offConsHead)
	r.cells = b[h.PoolOff : h.PoolOff+uint64(h.Bufs)*poolCellSize]
	r.phead = u64At(b, offPoolHead)
	r.bufs = b[h.BufOff : h.BufOff+uint64(h.Bufs)*uint64(h.BufSize)]
	r.bshift = uint(bits.TrailingZeros32(h.BufSize))
	r.closing = u32At(b, offClosing)
	r.seq = u32At(b, offSeq)
	r.sleepers = u32At(b, offSleepers)
	return r
}

// Bytes returns the mapping.
func (r *Region) Bytes() []byte { return r.b }

// InlineMax is the largest payload that fits in a slot with its command.
func (r *Region) InlineMax() int { return int(r.SlotSize) - CmdHeaderSize }

// SetClosing marks the region as shutting down (its owner closes).
func (r *Region) SetClosing() { r.closing.Store(1) }

// Closing reports whether the owner marked the region as shutting down.
func (r *Region) Closing() bool { return r.closing.Load() != 0 }

// Seq is the futex word producers bump to wake a sleeping owner.
func (r *Region) Seq() *atomic.Uint32 { return r.seq }

// Sleepers is the count of the owner's sleeping waiters.
func (r *Region) Sleepers() *atomic.Uint32 { return r.sleepers }

// maxSpin bounds the compare-and-swap retries of a producer or pool user:
// a region whose words keep changing under it (contention, or a hostile
// process) makes the call report failure rather than spin forever.
const maxSpin = 1 << 12

// Reserve claims the next command slot. It returns the slot's position
// (for Publish) and the command bytes (the slot after its sequence
// number, SlotSize-8 bytes), or ok=false when the queue is full.
//
// A position is free once the consumer has released the one a lap
// before it: pos < cons + Slots. Producers check against the consumer
// position they last read (consSeen) and read the shared word again only
// when that says full, about once a lap: the consumer's line moves to a
// producer once per lap, not per command, and the slots' lines are
// written by producers only.
func (r *Region) Reserve() (pos uint64, cmd []byte, ok bool) {
	slots := r.mask + 1
	for i := 0; i < maxSpin; i++ {
		pos = r.tail.Load()
		if pos-r.consSeen.Load() >= slots {
			c := r.cons.Load()
			if pos-c >= slots {
				// Full (or a damaged consumer word, which looks full
				// or empty: an owner that damages its own region
				// only loses its own commands).
				return 0, nil, false
			}
			r.consSeen.Store(c)
		}
		if r.tail.CompareAndSwap(pos, pos+1) {
			off := (pos & r.mask) << r.shift
			return pos, r.ring[off+8 : off+uint64(r.SlotSize)], true
		}
		// Another producer took pos; reload the tail.
	}
	return 0, nil, false
}

// Publish makes the command written into the slot of pos visible to the
// consumer.
func (r *Region) Publish(pos uint64) {
	u64At(r.ring, (pos&r.mask)<<r.shift).Store(pos + 1)
}

// Peek returns the command at the consumer's head if one is published
// (the slot after its sequence number), else nil.
func (r *Region) Peek() []byte {
	head := r.head.Load()
	off := (head & r.mask) << r.shift
	if u64At(r.ring, off).Load() != head+1 {
		return nil
	}
	return r.ring[off+8 : off+uint64(r.SlotSize)]
}

// Release frees the slot at the consumer's head (after Peek returned it)
// and advances the head, publishing it to producers.
func (r *Region) Release() {
	head := r.head.Load() + 1
	r.head.Store(head)
	r.cons.Store(head)
}

// Pending reports whether a command is published at the consumer's head.
// Unlike Peek and Release it may be called from any goroutine.
func (r *Region) Pending() bool {
	head := r.head.Load()
	off := (head & r.mask) << r.shift
	return u64At(r.ring, off).Load() == head+1
}

// Head returns the consumer's position: the number of commands consumed.
// It may be called from any goroutine.
func (r *Region) Head() uint64 { return r.head.Load() }

// Wake bumps the wake word when the owner has sleepers: the caller then
// wakes them (futex) and Wake reports true. With nobody asleep it costs
// one atomic load.
func (r *Region) Wake() bool {
	if r.sleepers.Load() == 0 {
		return false
	}
	r.seq.Add(1)
	return true
}

// GetBuf takes a bounce buffer from the free list: its index, or
// ok=false when none is free (or the list is damaged). The list is a
// stack (most recently returned first, so that the buffers in use stay in
// the caches): the head word holds the top index+1 in its low 32 bits and
// a counter in its high 32 bits, bumped by every change (no ABA), and
// each buffer's cell holds the index+1 of the one below it (0: none).
func (r *Region) GetBuf() (idx uint32, ok bool) {
	for i := 0; i < maxSpin; i++ {
		old := r.phead.Load()
		top := uint32(old)
		if top == 0 || top > r.Bufs {
			return 0, false // empty (or damaged)
		}
		next := u64At(r.cells, uint64(top-1)*poolCellSize).Load()
		if next > uint64(r.Bufs) {
			next = 0 // a damaged cell: the rest of the list is lost
		}
		if r.phead.CompareAndSwap(old, (old>>32+1)<<32|next) {
			return top - 1, true
		}
	}
	return 0, false
}

// PutBuf returns buffer idx to the free list. It reports false if idx is
// out of range (or the list keeps changing under it).
func (r *Region) PutBuf(idx uint32) bool {
	if idx >= r.Bufs {
		return false
	}
	cell := u64At(r.cells, uint64(idx)*poolCellSize)
	for i := 0; i < maxSpin; i++ {
		old := r.phead.Load()
		cell.Store(uint64(uint32(old)))
		if r.phead.CompareAndSwap(old, (old>>32+1)<<32|uint64(idx+1)) {
			return true
		}
	}
	return false
}

// Buf returns bounce buffer idx, or nil if idx is out of range.
func (r *Region) Buf(idx uint32) []byte {
	if idx >= r.Bufs {
		return nil
	}
	off := uint64(idx) << r.bshift
	return r.bufs[off : off+uint64(r.BufSize) : off+uint64(r.BufSize)]
}
