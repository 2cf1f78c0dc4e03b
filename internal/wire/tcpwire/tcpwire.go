package tcpwire

import (
	"encoding/binary"
	"errors"
)

// Protocol constants of libfabric 1.17's tcp provider.
const (
	// Version is the version byte of CM messages and data frames.
	Version = 3

	// CMHeaderSize is the size of the CM message header.
	CMHeaderSize = 32
	// MaxCMData is the largest connection data (FI_OPT_CM_DATA_SIZE).
	MaxCMData = 256
	// MaxCMSize is the largest CM message (header plus data).
	MaxCMSize = CMHeaderSize + MaxCMData

	// BaseHeaderSize is the size of the fixed part of a data frame header.
	BaseHeaderSize = 16
	// MaxHeaderSize is the largest hdr_size a receiver accepts.
	MaxHeaderSize = 120
	// MaxRMAIOV is the largest number of RMA iovs in a frame.
	MaxRMAIOV = 4
	// RMAIOVSize is the encoded size of one RMA iov {addr, len, key}.
	RMAIOVSize = 24
	// ACKSize is the size of an ACK frame (header only).
	ACKSize = BaseHeaderSize
)

// CM message types.
const (
	CMConnReq  = 0 // connect request (client to server)
	CMConnResp = 1 // connect response: the server accepted
	CMReject   = 6 // reject (nack)
)

// Data frame ops.
const (
	OpMsg     = 0 // message (op_data 2: ACK)
	OpTagged  = 1 // tagged message (tag word always present)
	OpReadReq = 2 // RMA read request
	OpReadRsp = 3 // RMA read response
	OpWrite   = 4 // RMA write
	numOps    = 5
)

// Data frame flags.
const (
	FlagCQData           = 0x0001 // remote CQ data word present
	FlagDeliveryComplete = 0x0004 // receiver ACKs after placing the data
	FlagCommitComplete   = 0x0008 // receiver ACKs (RMA writes)
	FlagTagged           = 0x0080 // tag word present on an op 0 frame
)

// OpDataACK is the op_data value of an ACK frame (op OpMsg).
const OpDataACK = 2

// Errors returned by the parsers. A receiver treats each as fatal for the
// connection.
var (
	ErrShort    = errors.New("tcpwire: truncated header")
	ErrVersion  = errors.New("tcpwire: bad version")
	ErrCMType   = errors.New("tcpwire: bad CM message type")
	ErrCMData   = errors.New("tcpwire: CM data too long")
	ErrOp       = errors.New("tcpwire: bad op")
	ErrHdrSize  = errors.New("tcpwire: bad hdr_size")
	ErrSize     = errors.New("tcpwire: frame size smaller than its header")
	ErrRMACount = errors.New("tcpwire: bad rma_iov_cnt")
	ErrACK      = errors.New("tcpwire: bad ACK frame")
)

// ---- CM messages ----

// CM is a decoded CM message.
type CM struct {
	Type uint8
	// ConnData is the endianness probe: 1 in the sender's byte order (read
	// here as little-endian), 0 in a reject.
	ConnData uint64
	// Data is the connection data (aliases the parsed buffer).
	Data []byte
}

// Swapped reports whether the probe of a connect request or response says
// the peer's byte order differs from little-endian (the receiver then swaps
// data-frame fields). A reject carries no probe.
func (m *CM) Swapped() bool { return m.Type != CMReject && m.ConnData != 1 }

// AppendCM appends a CM message of type typ with connection data data to
// dst: the 32-byte header (conn_data 1, or 0 for a reject) and the data. It
// returns ErrCMData if data is longer than MaxCMData and ErrCMType for an
// unknown type; dst is then returned unchanged.
func AppendCM(dst []byte, typ uint8, data []byte) ([]byte, error) {
	if len(data) > MaxCMData {
		return dst, ErrCMData
	}
	if typ != CMConnReq && typ != CMConnResp && typ != CMReject {
		return dst, ErrCMType
	}
	var h [CMHeaderSize]byte
	h[0] = Version
	h[1] = typ
	binary.BigEndian.PutUint16(h[2:], uint16(len(data)))
	if typ != CMReject {
		binary.LittleEndian.PutUint64(h[24:], 1)
	}
	dst = append(dst, h[:]...)
	return append(dst, data...), nil
}

// ParseCMHeader decodes the 32-byte CM header at the start of b and returns
// the message type, the length of the connection data that follows and the
// endianness probe.
func ParseCMHeader(b []byte) (typ uint8, dataLen int, connData uint64, err error) {
	if len(b) < CMHeaderSize {
		return 0, 0, 0, ErrShort
	}
	if b[0] != Version {
		return 0, 0, 0, ErrVersion
	}
	typ = b[1]
	if typ != CMConnReq && typ != CMConnResp && typ != CMReject {
		return 0, 0, 0, ErrCMType
	}
	dataLen = int(binary.BigEndian.Uint16(b[2:]))
	if dataLen > MaxCMData {
		return 0, 0, 0, ErrCMData
	}
	return typ, dataLen, binary.LittleEndian.Uint64(b[24:]), nil
}

// ParseCM decodes a whole CM message at the start of b. Data aliases b.
// rest is what follows the message.
func ParseCM(b []byte) (m CM, rest []byte, err error) {
	typ, n, probe, err := ParseCMHeader(b)
	if err != nil {
		return CM{}, b, err
	}
	if len(b) < CMHeaderSize+n {
		return CM{}, b, ErrShort
	}
	return CM{Type: typ, ConnData: probe, Data: b[CMHeaderSize : CMHeaderSize+n : CMHeaderSize+n]},
		b[CMHeaderSize+n:], nil
}

// ---- data frames ----

// RMAIOV is one remote region of an RMA frame.
type RMAIOV struct {
	Addr, Len, Key uint64
}

// Header is a decoded data frame header.
type Header struct {
	Op     uint8
	Flags  uint16
	OpData uint8
	// RMACount is rma_iov_cnt as sent. It is meaningful for OpReadReq and
	// OpWrite only; other ops may carry a stale value, kept for round trips.
	RMACount uint8
	// HdrSize is the total header length. PutHeader computes it; ParseHeader
	// reports the received value (which may exceed Need()).
	HdrSize uint8
	ID      uint8
	// Size is the whole frame length: header plus payload.
	Size   uint64
	CQData uint64 // with FlagCQData
	Tag    uint64 // for OpTagged, or OpMsg with FlagTagged
	RMA    [MaxRMAIOV]RMAIOV
}

// HasCQData reports whether the cq_data word is present.
func (h *Header) HasCQData() bool { return h.Flags&FlagCQData != 0 }

// HasTag reports whether the tag word is present.
func (h *Header) HasTag() bool { return h.Op == OpTagged || (h.Op == OpMsg && h.Flags&FlagTagged != 0) }

// HasRMA reports whether the frame carries rma_iov entries.
func (h *Header) HasRMA() bool { return h.Op == OpReadReq || h.Op == OpWrite }

// IsACK reports whether h is an ACK frame header.
func (h *Header) IsACK() bool { return h.Op == OpMsg && h.OpData == OpDataACK }

// NumRMA returns the number of RMA iovs the frame carries (0 unless HasRMA).
func (h *Header) NumRMA() int {
	if !h.HasRMA() {
		return 0
	}
	return int(h.RMACount)
}

// Need returns the header length the op, flags and rma_iov_cnt require.
func (h *Header) Need() int {
	n := BaseHeaderSize
	if h.HasCQData() {
		n += 8
	}
	if h.HasTag() {
		n += 8
	}
	return n + RMAIOVSize*h.NumRMA()
}

// PayloadLen returns Size - HdrSize (0 if Size < HdrSize).
func (h *Header) PayloadLen() uint64 {
	if h.Size < uint64(h.HdrSize) {
		return 0
	}
	return h.Size - uint64(h.HdrSize)
}

// ACK returns the header of an ACK frame.
func ACK() Header { return Header{Op: OpMsg, OpData: OpDataACK, HdrSize: ACKSize, Size: ACKSize} }

func put64(b []byte, v uint64, swap bool) {
	if swap {
		binary.BigEndian.PutUint64(b, v)
	} else {
		binary.LittleEndian.PutUint64(b, v)
	}
}

func get64(b []byte, swap bool) uint64 {
	if swap {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// PutHeader encodes h into b and returns the header length, which it also
// stores in h.HdrSize. b must hold MaxHeaderSize bytes. h.Size must already
// be the whole frame length (SetPayload computes it). It returns 0, and
// writes nothing, when b is too short or h is not encodable: an op outside
// 0..4, or an RMA op without 1..MaxRMAIOV iovs. swap selects the
// byte-swapped encoding.
func PutHeader(b []byte, h *Header, swap bool) int {
	if len(b) < MaxHeaderSize || h.Op >= numOps {
		return 0
	}
	if h.HasRMA() && (h.RMACount == 0 || h.RMACount > MaxRMAIOV) {
		return 0
	}
	n := h.Need()
	h.HdrSize = uint8(n)
	b[0] = Version
	b[1] = h.Op
	if swap {
		binary.BigEndian.PutUint16(b[2:], h.Flags)
	} else {
		binary.LittleEndian.PutUint16(b[2:], h.Flags)
	}
	b[4] = h.OpData
	b[5] = h.RMACount
	b[6] = uint8(n)
	b[7] = h.ID
	put64(b[8:], h.Size, swap)
	off := BaseHeaderSize
	if h.HasCQData() {
		put64(b[off:], h.CQData, swap)
		off += 8
	}
	if h.HasTag() {
		put64(b[off:], h.Tag, swap)
		off += 8
	}
	for i := 0; i < h.NumRMA(); i++ {
		put64(b[off:], h.RMA[i].Addr, swap)
		put64(b[off+8:], h.RMA[i].Len, swap)
		put64(b[off+16:], h.RMA[i].Key, swap)
		off += RMAIOVSize
	}
	return n
}

// SetPayload sets h.Size to the header length h needs plus payloadLen.
func (h *Header) SetPayload(payloadLen uint64) { h.Size = uint64(h.Need()) + payloadLen }

// AppendHeader appends the encoding of h to dst (see PutHeader). An
// unencodable header appends nothing.
func AppendHeader(dst []byte, h *Header, swap bool) []byte {
	var b [MaxHeaderSize]byte
	n := PutHeader(b[:], h, swap)
	return append(dst, b[:n]...)
}

// PeekHeaderSize validates the 16-byte base header at the start of b and
// returns its hdr_size, the number of header bytes to collect before
// ParseHeader.
func PeekHeaderSize(b []byte) (int, error) {
	if len(b) < BaseHeaderSize {
		return 0, ErrShort
	}
	if b[0] != Version {
		return 0, ErrVersion
	}
	if b[1] >= numOps {
		return 0, ErrOp
	}
	hs := int(b[6])
	if hs < BaseHeaderSize || hs > MaxHeaderSize {
		return 0, ErrHdrSize
	}
	return hs, nil
}

// ParseHeader decodes a whole frame header from b (at least hdr_size
// bytes; see PeekHeaderSize) into h. It checks the version, op, hdr_size
// (16..120, at least what the op and flags need), size >= hdr_size,
// rma_iov_cnt (1..4) for RMA ops, and the ACK frame shape. Words beyond
// what the header needs are ignored.
func ParseHeader(b []byte, h *Header, swap bool) error {
	hs, err := PeekHeaderSize(b)
	if err != nil {
		return err
	}
	if len(b) < hs {
		return ErrShort
	}
	*h = Header{Op: b[1], OpData: b[4], RMACount: b[5], HdrSize: b[6], ID: b[7]}
	if swap {
		h.Flags = binary.BigEndian.Uint16(b[2:])
	} else {
		h.Flags = binary.LittleEndian.Uint16(b[2:])
	}
	h.Size = get64(b[8:], swap)
	if h.HasRMA() && (h.RMACount == 0 || h.RMACount > MaxRMAIOV) {
		return ErrRMACount
	}
	if h.Need() > hs {
		return ErrHdrSize
	}
	if h.Size < uint64(hs) {
		return ErrSize
	}
	if h.Op == OpMsg && h.OpData == OpDataACK && (hs != ACKSize || h.Size != ACKSize) {
		return ErrACK
	}
	off := BaseHeaderSize
	if h.HasCQData() {
		h.CQData = get64(b[off:], swap)
		off += 8
	}
	if h.HasTag() {
		h.Tag = get64(b[off:], swap)
		off += 8
	}
	for i := 0; i < h.NumRMA(); i++ {
		h.RMA[i] = RMAIOV{Addr: get64(b[off:], swap), Len: get64(b[off+8:], swap), Key: get64(b[off+16:], swap)}
		off += RMAIOVSize
	}
	return nil
}
