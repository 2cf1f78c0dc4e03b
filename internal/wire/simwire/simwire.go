// Package simwire encodes and decodes the datagrams that carry the sim
// provider's messages between processes (prov/sim's cross-process mode):
// a message (a send, an RMA or atomic request, an acknowledgement, an
// answer) is encoded by AppendMessage and cut into fragments of at most
// MaxChunk bytes, each sent as one unix datagram behind a FragHeader; the
// receiver's Reassembler puts the fragments of each source back together
// and ParseMessage decodes the result. Every field is little-endian.
//
// Everything read from another process is untrusted: every parser checks
// lengths and the fields a receiver relies on, and none panics on any
// input; the Reassembler bounds the memory it holds.
package simwire

import (
	"encoding/binary"
	"errors"
)

// Limits.
const (
	// MaxRMA is the most remote iovs a request carries.
	MaxRMA = 4
	// MaxPayload bounds a message's payload (the provider's max_msg_size
	// and the largest atomic operands).
	MaxPayload = 1 << 20
	// HeaderSize is the size of a message header without its remote
	// iovs.
	HeaderSize = 44
	// RMAIOVSize is the size of one remote iov.
	RMAIOVSize = 24
	// MaxMessage is the largest encoded message.
	MaxMessage = HeaderSize + MaxRMA*RMAIOVSize + MaxPayload
	// FragHeaderSize is the size of a fragment's header.
	FragHeaderSize = 20
	// MaxChunk is the most message bytes one fragment carries (a unix
	// datagram must fit the sender's socket buffer).
	MaxChunk = 60 << 10
	// MaxDatagram is the largest datagram a sender writes.
	MaxDatagram = FragHeaderSize + MaxChunk
	// Magic and Version open every fragment.
	Magic   = 0x53 // 'S'
	Version = 1
)

// Message kinds.
const (
	KindMsg    = 1 // a send (tagged or not)
	KindRMA    = 2 // an RMA or atomic request
	KindAck    = 3 // a reliable send reached the target's network
	KindAnswer = 4 // the answer to a request (status, read or fetched data)
)

// Message flags.
const (
	FlagTagged   = 1 << 0
	FlagCQData   = 1 << 1
	FlagRead     = 1 << 2 // an RMA read (else a write)
	FlagAtomic   = 1 << 3
	FlagReliable = 1 << 4 // FI_EP_RDM: the target acknowledges
	FlagFetch    = 1 << 5 // an answer whose data goes to the initiator's buffers
	FlagDelivery = 1 << 6 // a reliable send acknowledged once delivered (FI_DELIVERY_COMPLETE)
	flagsKnown   = 1<<7 - 1
)

// RMAIOV is one remote iov: address (or offset), length, key.
type RMAIOV struct{ Addr, Len, Key uint64 }

// Message is one decoded message. Payload aliases the parsed bytes.
type Message struct {
	Kind, Flags uint8
	Req         uint64 // the initiator's operation id (Ack, Answer and reliable requests echo it)
	Tag, Data   uint64
	Status      uint32 // Answer: 0 or a positive libfabric errno
	Size        uint32 // RMA: the bytes a read or atomic addresses
	AtomicKind  uint8
	AtomicOp    uint32
	Datatype    uint32
	NRMA        int
	RMA         [MaxRMA]RMAIOV
	Payload     []byte
}

var (
	errShort   = errors.New("simwire: short message")
	errKind    = errors.New("simwire: unknown kind or flags")
	errRMA     = errors.New("simwire: bad remote iovs")
	errPayload = errors.New("simwire: bad payload length")
	errFrag    = errors.New("simwire: bad fragment")
)

// AppendMessage appends the encoding of m to dst.
func AppendMessage(dst []byte, m *Message) []byte {
	var h [HeaderSize]byte
	h[0], h[1], h[2], h[3] = m.Kind, m.Flags, uint8(m.NRMA), m.AtomicKind
	binary.LittleEndian.PutUint64(h[4:], m.Req)
	binary.LittleEndian.PutUint64(h[12:], m.Tag)
	binary.LittleEndian.PutUint64(h[20:], m.Data)
	binary.LittleEndian.PutUint32(h[28:], m.Status)
	binary.LittleEndian.PutUint32(h[32:], m.Size)
	binary.LittleEndian.PutUint32(h[36:], m.AtomicOp)
	binary.LittleEndian.PutUint32(h[40:], m.Datatype)
	dst = append(dst, h[:]...)
	for _, v := range m.RMA[:m.NRMA] {
		dst = binary.LittleEndian.AppendUint64(dst, v.Addr)
		dst = binary.LittleEndian.AppendUint64(dst, v.Len)
		dst = binary.LittleEndian.AppendUint64(dst, v.Key)
	}
	return append(dst, m.Payload...)
}

// ParseMessage decodes b into m. It checks what a receiver relies on: a
// known kind and flags; a send carries no remote iovs; a request carries
// 1 to MaxRMA of them, and an RMA read or write addresses exactly Size
// bytes in them (a write's payload being those bytes, a read's empty);
// an acknowledgement has no payload; no payload exceeds MaxPayload.
func ParseMessage(b []byte, m *Message) error {
	if len(b) < HeaderSize {
		return errShort
	}
	*m = Message{
		Kind: b[0], Flags: b[1], NRMA: int(b[2]), AtomicKind: b[3],
		Req:      binary.LittleEndian.Uint64(b[4:]),
		Tag:      binary.LittleEndian.Uint64(b[12:]),
		Data:     binary.LittleEndian.Uint64(b[20:]),
		Status:   binary.LittleEndian.Uint32(b[28:]),
		Size:     binary.LittleEndian.Uint32(b[32:]),
		AtomicOp: binary.LittleEndian.Uint32(b[36:]),
		Datatype: binary.LittleEndian.Uint32(b[40:]),
	}
	if m.Kind < KindMsg || m.Kind > KindAnswer || m.Flags&^flagsKnown != 0 {
		return errKind
	}
	if m.NRMA > MaxRMA || len(b) < HeaderSize+m.NRMA*RMAIOVSize {
		return errRMA
	}
	off := HeaderSize
	var total uint64
	for i := range m.NRMA {
		v := RMAIOV{
			Addr: binary.LittleEndian.Uint64(b[off:]),
			Len:  binary.LittleEndian.Uint64(b[off+8:]),
			Key:  binary.LittleEndian.Uint64(b[off+16:]),
		}
		if v.Len > MaxPayload {
			return errRMA
		}
		total += v.Len
		m.RMA[i] = v
		off += RMAIOVSize
	}
	m.Payload = b[off:len(b):len(b)]
	if len(m.Payload) > MaxPayload || m.Size > MaxPayload {
		return errPayload
	}
	switch m.Kind {
	case KindMsg:
		if m.NRMA != 0 {
			return errRMA
		}
	case KindRMA:
		if m.NRMA == 0 || total > MaxPayload || total != uint64(m.Size) {
			return errRMA
		}
		if m.Flags&FlagAtomic == 0 {
			want := int(m.Size)
			if m.Flags&FlagRead != 0 {
				want = 0
			}
			if len(m.Payload) != want {
				return errPayload
			}
		}
	case KindAck:
		if m.NRMA != 0 || len(m.Payload) != 0 {
			return errPayload
		}
	case KindAnswer:
		if m.NRMA != 0 {
			return errRMA
		}
	}
	return nil
}

// FragHeader opens every datagram: the sending endpoint's id, the total
// length of the message the fragment belongs to and the fragment's
// offset in it.
type FragHeader struct {
	Src    uint64
	Total  uint32
	Offset uint32
}

// AppendFrag appends the fragment header h and chunk to dst.
func AppendFrag(dst []byte, h FragHeader, chunk []byte) []byte {
	dst = append(dst, Magic, Version, 0, 0)
	dst = binary.LittleEndian.AppendUint64(dst, h.Src)
	dst = binary.LittleEndian.AppendUint32(dst, h.Total)
	dst = binary.LittleEndian.AppendUint32(dst, h.Offset)
	return append(dst, chunk...)
}

// ParseFrag decodes one datagram: its header and chunk (aliasing b). The
// chunk must lie inside the message: Offset+len(chunk) <= Total <=
// MaxMessage, and only a message's last fragment may be shorter than
// MaxChunk.
func ParseFrag(b []byte) (FragHeader, []byte, error) {
	if len(b) < FragHeaderSize || b[0] != Magic || b[1] != Version || b[2] != 0 || b[3] != 0 {
		return FragHeader{}, nil, errFrag
	}
	h := FragHeader{
		Src:    binary.LittleEndian.Uint64(b[4:]),
		Total:  binary.LittleEndian.Uint32(b[12:]),
		Offset: binary.LittleEndian.Uint32(b[16:]),
	}
	chunk := b[FragHeaderSize:len(b):len(b)]
	end := uint64(h.Offset) + uint64(len(chunk))
	if h.Src == 0 || h.Total > MaxMessage || len(chunk) > MaxChunk || end > uint64(h.Total) ||
		(end < uint64(h.Total) && len(chunk) != MaxChunk) || (len(chunk) == 0 && h.Total != 0) {
		return FragHeader{}, nil, errFrag
	}
	return h, chunk, nil
}

// AppendFrags cuts msg into fragments from src and calls emit with each
// datagram (reusing scratch); emit's error stops it.
func AppendFrags(scratch []byte, src uint64, msg []byte, emit func([]byte) error) error {
	off := 0
	for {
		k := min(len(msg)-off, MaxChunk)
		scratch = AppendFrag(scratch[:0], FragHeader{Src: src, Total: uint32(len(msg)), Offset: uint32(off)}, msg[off:off+k])
		if err := emit(scratch); err != nil {
			return err
		}
		off += k
		if off >= len(msg) {
			return nil
		}
	}
}

// MaxPartial is the most sources whose messages a Reassembler holds
// unfinished at once; beyond it the oldest is dropped.
const MaxPartial = 64

// Reassembler puts the fragments of each source's messages back
// together. A source's fragments must come in order (a unix datagram
// socket keeps each sender's order); a fragment out of order drops the
// source's unfinished message. It is not safe for concurrent use.
type Reassembler struct {
	partial map[uint64][]byte
	order   []uint64
}

// Add takes one datagram. It returns the source and the complete message
// when the datagram completes one (the message is the caller's until the
// next Add), or an error for a malformed datagram.
func (r *Reassembler) Add(dgram []byte) (uint64, []byte, bool, error) {
	h, chunk, err := ParseFrag(dgram)
	if err != nil {
		return 0, nil, false, err
	}
	if h.Offset == 0 && len(chunk) == int(h.Total) {
		r.drop(h.Src) // a whole message replaces anything unfinished
		return h.Src, chunk, true, nil
	}
	buf, ok := r.partial[h.Src]
	switch {
	case h.Offset == 0:
		if r.partial == nil {
			r.partial = map[uint64][]byte{}
		}
		if !ok {
			if len(r.order) >= MaxPartial {
				r.drop(r.order[0])
			}
			r.order = append(r.order, h.Src)
		}
		r.partial[h.Src] = append(make([]byte, 0, h.Total), chunk...)
		return h.Src, nil, false, nil
	case !ok || uint32(len(buf)) != h.Offset || uint32(cap(buf)) != h.Total:
		r.drop(h.Src)
		return 0, nil, false, errFrag
	}
	buf = append(buf, chunk...)
	if len(buf) < int(h.Total) {
		r.partial[h.Src] = buf
		return h.Src, nil, false, nil
	}
	r.drop(h.Src)
	return h.Src, buf, true, nil
}

// Pending returns the number of unfinished messages held.
func (r *Reassembler) Pending() int { return len(r.partial) }

func (r *Reassembler) drop(src uint64) {
	if _, ok := r.partial[src]; !ok {
		return
	}
	delete(r.partial, src)
	for i, s := range r.order {
		if s == src {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
}
