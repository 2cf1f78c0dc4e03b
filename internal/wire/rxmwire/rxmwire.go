// Package rxmwire encodes and decodes the wire formats of libfabric 1.17's
// rxm utility provider over tcp (tcp;ofi_rxm, FI_EP_RDM): the connection
// data carried by tcp connect requests, connect responses and rejects, the
// 64-byte rxm packet header that follows the 16-byte tcp frame header, and
// the rendezvous descriptor. Layouts are those of
// ../shared/spec/libfabric-1.17-wire.md §5. Every multi-byte field is
// little-endian (the only byte order a peer accepts: the connect data's
// endianness byte must match).
//
// Every parser checks the length of its input and the fields a receiver
// must trust; none panics on any input.
//
// Extensions between two peers of this implementation: a peer puts
// GoMarker in the padding of its connect and accept data (rxm zeroes that
// padding and never reads it), and only when both did do they use the
// control types rxm does not have: TypeGoRMAError (a refused RMA access
// answered instead of dropping the connection), TypeGoEager (a message
// above EagerLimit sent whole in one frame instead of by SAR or
// rendezvous), TypeGoCMAReq and TypeGoCMAChallenge (a rendezvous request
// that also gives the message's address in the sender's memory, for a
// receiver on the same host to copy it with process_vm_readv once it has
// proved the sender's pid; the ordinary read request stays the fallback),
// TypeGoSource (the address a transmit context of a scalable endpoint
// sends from, for the receiver's FI_SOURCE). Towards a peer without the marker (a C rxm) none of them is sent, and a
// receiver treats them as malformed from such a peer.
package rxmwire

import (
	"encoding/binary"
	"errors"
)

// Protocol constants.
const (
	// CMVersion is the version byte of connect, accept and reject data.
	CMVersion = 1
	// EndianLittle is the endianness byte of a little-endian sender.
	EndianLittle = 2
	// CtrlVersion is ctrl_version in connect data and ctrl.version in
	// packet headers.
	CtrlVersion = 4
	// OpVersionCM is op_version in connect data.
	OpVersionCM = 3
	// OpVersion is op.version in packet headers (not OpVersionCM).
	OpVersion = 2
	// FlowCtrlPeerOff is the flow_ctrl value of a sender without flow
	// control (tcp).
	FlowCtrlPeerOff = 2
	// EagerLimit is the eager limit over tcp; connect data must carry it.
	EagerLimit = 16384
	// RxSize is the rx_size announced in connect and accept data.
	RxSize = 4096

	// ConnectSize, AcceptSize and RejectSize are the connection data sizes.
	ConnectSize = 24
	AcceptSize  = 16
	RejectSize  = 2

	// HeaderSize is the size of the rxm packet header (ctrl + op).
	HeaderSize = 64
	// MaxRndvIOV is the number of regions of a rendezvous descriptor.
	MaxRndvIOV = 4
	// RndvSize is the size of the rendezvous descriptor.
	RndvSize = MaxRndvIOV*24 + 8

	// FlagRemoteCQData is op.flags when op.data is valid (FI_REMOTE_CQ_DATA).
	FlagRemoteCQData = 0x20000
	// KeyBase is the provider-specific bit rxm sets in its MR keys.
	KeyBase = 0x80000000
)

// Reject reasons.
const (
	RejectUnspec      = 0
	RejectConnRefused = 1 // validation failure
	RejectAlready     = 2 // simultaneous connect: already connected
	numRejectReasons  = 3
)

// Control types (ctrl.type).
const (
	TypeEager        = 0
	TypeSAR          = 1
	TypeRndvReq      = 2
	TypeRndvReadDone = 3
	TypeAtomic       = 4
	TypeAtomicResp   = 5
	TypeCredit       = 6
	TypeRndvWrData   = 7
	TypeRndvWrDone   = 8
	// TypeGoRMAError is not rxm's: between two peers of this
	// implementation (GoMarker), it answers a refused RMA write (op.op 4,
	// in place of the ACK) or read (op.op 2, in place of the response),
	// with the libfabric error number in op.data.
	TypeGoRMAError = 0x47
	// TypeGoEager is not rxm's either: between two peers of this
	// implementation, a message above EagerLimit sent whole in one tcp
	// frame (op 0, no tcp tag), in place of rxm's SAR or rendezvous:
	// the header (op.op OpMsg or OpTagged, op.size the message's length,
	// op.tag, op.data with FlagRemoteCQData) is followed by the message
	// itself, so the frame's payload is HeaderSize + op.size bytes. The
	// receiver reads it straight into the matching receive, or buffers
	// it as an unexpected message (bounded: beyond its bound it stops
	// reading the connection, and the sender backs up). A frame with the
	// tcp delivery-complete flag is ACKed once the message is placed or
	// buffered.
	TypeGoEager = 0x48
	// TypeGoCMAReq is a rendezvous request between two peers of this
	// implementation on one host: the rendezvous descriptor (RndvSize
	// bytes, as for TypeRndvReq, whose read request remains the fallback)
	// is followed by a GoCMA, the message's address in the sender's
	// memory. A receiver that has checked the sender's identity (a
	// TypeGoCMAChallenge answered) copies the message out of the
	// sender's memory with process_vm_readv(2), then sends the usual
	// read-done; otherwise it reads it with a tcp read request.
	TypeGoCMAReq = 0x49
	// TypeGoCMAChallenge carries GoCMANonceSize random bytes from a
	// receiver of TypeGoCMAReq to the sender, which keeps them in its
	// memory and names their address in its later requests
	// (GoCMA.ProofAddr): finding them there proves to the receiver that
	// the pid of the connection data is the sender's.
	TypeGoCMAChallenge = 0x4a
	// TypeGoSource is the first frame a transmit context of a scalable
	// endpoint writes on each connection to a peer of this
	// implementation: a header alone (op.size 0) whose op.data is the
	// port of the scalable endpoint (on the IP address the connection
	// comes from). The transmit context's own listening port, which the
	// connect data names and which keeps connections of different
	// contexts apart, is in no peer's AV; the receiver reports the
	// scalable endpoint's address as the source of the messages that
	// follow on the connection instead (FI_SOURCE, directed receives).
	// See ParseGoSource.
	TypeGoSource = 0x4b
)

// Operations (op.op).
const (
	OpMsg    = 0
	OpTagged = 1
)

// SAR segment types (low 2 bits of ctrl.ctrl_data).
const (
	SegFirst  = 1
	SegMiddle = 2
	SegLast   = 3
)

// Errors returned by the parsers; a receiver treats each as fatal for the
// connection (or refuses the connection request).
var (
	ErrShort       = errors.New("rxmwire: truncated")
	ErrVersion     = errors.New("rxmwire: bad version")
	ErrEndian      = errors.New("rxmwire: byte order mismatch")
	ErrEagerLimit  = errors.New("rxmwire: eager limit mismatch")
	ErrType        = errors.New("rxmwire: bad control type")
	ErrRndvCount   = errors.New("rxmwire: bad rendezvous region count")
	ErrRndvLength  = errors.New("rxmwire: rendezvous regions do not add up to the message size")
	ErrRejectReasn = errors.New("rxmwire: bad reject reason")
	ErrGoSource    = errors.New("rxmwire: bad source announcement")
)

// ConnID builds a connection id: the sender's pid in the high 32 bits and
// the peer index it wants to see in packets in the low 32 bits.
func ConnID(pid uint32, index uint32) uint64 { return uint64(pid)<<32 | uint64(index) }

// ConnIndex returns the peer index of a connection id.
func ConnIndex(id uint64) uint32 { return uint32(id) }

// ConnPID returns the pid of a connection id.
func ConnPID(id uint64) uint32 { return uint32(id >> 32) }

// GoMarker is the padding byte by which two peers of this implementation
// recognise each other in connect and accept data (rxm zeroes, and never
// reads, that padding): between them, a refused RMA access is reported
// with a TypeGoRMAError packet instead of dropping the connection, and
// messages above EagerLimit may go whole as TypeGoEager frames. Towards a
// peer whose data lacks the marker (a C rxm) neither is ever sent.
const GoMarker = 'G'

// Connect is the connection data of a connect request.
type Connect struct {
	Port       uint16 // the sender's listening port
	FlowCtrl   uint8
	Pad        uint8 // padding: GoMarker from a peer of this implementation
	EagerLimit uint32
	RxSize     uint32
	ConnID     uint64 // client_conn_id
}

// AppendConnect appends the 24-byte encoding of c (version, endianness,
// ctrl and op versions as a little-endian rxm 1.17 sends them).
func AppendConnect(dst []byte, c *Connect) []byte {
	var b [ConnectSize]byte
	b[0] = CMVersion
	b[1] = EndianLittle
	b[2] = CtrlVersion
	b[3] = OpVersionCM
	binary.LittleEndian.PutUint16(b[4:], c.Port)
	b[6] = c.FlowCtrl
	b[7] = c.Pad
	binary.LittleEndian.PutUint32(b[8:], c.EagerLimit)
	binary.LittleEndian.PutUint32(b[12:], c.RxSize)
	binary.LittleEndian.PutUint64(b[16:], c.ConnID)
	return append(dst, b[:]...)
}

// ParseConnect decodes and validates connect data as rxm's receiver does:
// versions, endianness and the eager limit must match. Extra bytes are
// ignored.
func ParseConnect(b []byte) (Connect, error) {
	if len(b) < ConnectSize {
		return Connect{}, ErrShort
	}
	if b[0] != CMVersion || b[2] != CtrlVersion || b[3] != OpVersionCM {
		return Connect{}, ErrVersion
	}
	if b[1] != EndianLittle {
		return Connect{}, ErrEndian
	}
	c := Connect{Port: binary.LittleEndian.Uint16(b[4:]), FlowCtrl: b[6], Pad: b[7],
		EagerLimit: binary.LittleEndian.Uint32(b[8:]), RxSize: binary.LittleEndian.Uint32(b[12:]),
		ConnID: binary.LittleEndian.Uint64(b[16:])}
	if c.EagerLimit != EagerLimit {
		return Connect{}, ErrEagerLimit
	}
	return c, nil
}

// Accept is the connection data of a connect response.
type Accept struct {
	ConnID   uint64 // server_conn_id
	RxSize   uint32
	FlowCtrl uint8
	Pad      uint8 // first padding byte: GoMarker from a peer of this implementation
}

// AppendAccept appends the 16-byte encoding of a.
func AppendAccept(dst []byte, a *Accept) []byte {
	var b [AcceptSize]byte
	binary.LittleEndian.PutUint64(b[0:], a.ConnID)
	binary.LittleEndian.PutUint32(b[8:], a.RxSize)
	b[12] = a.FlowCtrl
	b[13] = a.Pad
	return append(dst, b[:]...)
}

// ParseAccept decodes accept data.
func ParseAccept(b []byte) (Accept, error) {
	if len(b) < AcceptSize {
		return Accept{}, ErrShort
	}
	return Accept{ConnID: binary.LittleEndian.Uint64(b), RxSize: binary.LittleEndian.Uint32(b[8:]), FlowCtrl: b[12],
		Pad: b[13]}, nil
}

// AppendReject appends the 2-byte reject data with reason.
func AppendReject(dst []byte, reason uint8) []byte { return append(dst, CMVersion, reason) }

// ParseReject decodes reject data. Data that is short or of another
// version reads as RejectConnRefused, as rxm reads it.
func ParseReject(b []byte) uint8 {
	if len(b) < RejectSize || b[0] != CMVersion || b[1] >= numRejectReasons {
		return RejectConnRefused
	}
	return b[1]
}

// Header is a decoded rxm packet header.
type Header struct {
	// ctrl
	Type     uint8
	SegSize  uint16
	SegNo    uint32
	ConnID   uint64 // the receiver-announced peer index (ctrl.conn_id)
	MsgID    uint64
	CtrlData uint64
	// op
	RxIndex uint8
	Op      uint8
	OpData  uint8
	Flags   uint32
	Size    uint64
	Data    uint64
	Tag     uint64
}

// Put encodes h into the first HeaderSize bytes of b (which must be that
// long) with the versions an rxm 1.17 sender writes.
func (h *Header) Put(b []byte) {
	_ = b[HeaderSize-1]
	b[0] = CtrlVersion
	b[1] = h.Type
	binary.LittleEndian.PutUint16(b[2:], h.SegSize)
	binary.LittleEndian.PutUint32(b[4:], h.SegNo)
	binary.LittleEndian.PutUint64(b[8:], h.ConnID)
	binary.LittleEndian.PutUint64(b[16:], h.MsgID)
	binary.LittleEndian.PutUint64(b[24:], h.CtrlData)
	b[32] = OpVersion
	b[33] = h.RxIndex
	b[34] = h.Op
	b[35] = h.OpData
	binary.LittleEndian.PutUint32(b[36:], h.Flags)
	binary.LittleEndian.PutUint64(b[40:], h.Size)
	binary.LittleEndian.PutUint64(b[48:], h.Data)
	binary.LittleEndian.PutUint64(b[56:], h.Tag)
}

// Parse decodes the header at the start of b. It checks the length and
// the control type; the versions are not checked (rxm only asserts them in
// debug builds).
func (h *Header) Parse(b []byte) error {
	if len(b) < HeaderSize {
		return ErrShort
	}
	if b[1] > TypeRndvWrDone && (b[1] < TypeGoRMAError || b[1] > TypeGoSource) {
		return ErrType
	}
	*h = Header{
		Type: b[1], SegSize: binary.LittleEndian.Uint16(b[2:]), SegNo: binary.LittleEndian.Uint32(b[4:]),
		ConnID: binary.LittleEndian.Uint64(b[8:]), MsgID: binary.LittleEndian.Uint64(b[16:]),
		CtrlData: binary.LittleEndian.Uint64(b[24:]),
		RxIndex:  b[33], Op: b[34], OpData: b[35], Flags: binary.LittleEndian.Uint32(b[36:]),
		Size: binary.LittleEndian.Uint64(b[40:]), Data: binary.LittleEndian.Uint64(b[48:]),
		Tag: binary.LittleEndian.Uint64(b[56:]),
	}
	return nil
}

// RndvIOV is one region of a rendezvous descriptor.
type RndvIOV struct {
	Addr, Len, Key uint64
}

// Rndv is a rendezvous descriptor: the regions the receiver reads.
type Rndv struct {
	Count uint8
	IOV   [MaxRndvIOV]RndvIOV
}

// Put encodes r into the first RndvSize bytes of b.
func (r *Rndv) Put(b []byte) {
	_ = b[RndvSize-1]
	for i := 0; i < MaxRndvIOV; i++ {
		v := r.IOV[i]
		binary.LittleEndian.PutUint64(b[i*24:], v.Addr)
		binary.LittleEndian.PutUint64(b[i*24+8:], v.Len)
		binary.LittleEndian.PutUint64(b[i*24+16:], v.Key)
	}
	b[MaxRndvIOV*24] = r.Count
	clear(b[MaxRndvIOV*24+1 : RndvSize])
}

// ParseRndv decodes a rendezvous descriptor and checks that its count is
// 1..MaxRndvIOV and that its regions add up to size bytes.
func ParseRndv(b []byte, size uint64) (Rndv, error) {
	if len(b) < RndvSize {
		return Rndv{}, ErrShort
	}
	var r Rndv
	r.Count = b[MaxRndvIOV*24]
	if r.Count == 0 || r.Count > MaxRndvIOV {
		return Rndv{}, ErrRndvCount
	}
	var total uint64
	for i := 0; i < int(r.Count); i++ {
		v := RndvIOV{Addr: binary.LittleEndian.Uint64(b[i*24:]), Len: binary.LittleEndian.Uint64(b[i*24+8:]),
			Key: binary.LittleEndian.Uint64(b[i*24+16:])}
		if total+v.Len < total {
			return Rndv{}, ErrRndvLength
		}
		total += v.Len
		r.IOV[i] = v
	}
	if total != size {
		return Rndv{}, ErrRndvLength
	}
	return r, nil
}

// GoCMANonceSize is the length of a TypeGoCMAChallenge nonce.
const GoCMANonceSize = 16

// GoCMASize is the size of a GoCMA.
const GoCMASize = 24

// GoCMA is the extension of a TypeGoCMAReq: where the message is in the
// sender's memory, and where the sender keeps the receiver's nonce (0
// before it has one).
type GoCMA struct {
	ProofAddr uint64
	Base, Len uint64
}

// Put encodes g into the first GoCMASize bytes of b.
func (g *GoCMA) Put(b []byte) {
	_ = b[GoCMASize-1]
	binary.LittleEndian.PutUint64(b[0:], g.ProofAddr)
	binary.LittleEndian.PutUint64(b[8:], g.Base)
	binary.LittleEndian.PutUint64(b[16:], g.Len)
}

// ParseGoCMA decodes a GoCMA and checks that it covers size bytes.
func ParseGoCMA(b []byte, size uint64) (GoCMA, error) {
	if len(b) < GoCMASize {
		return GoCMA{}, ErrShort
	}
	g := GoCMA{ProofAddr: binary.LittleEndian.Uint64(b), Base: binary.LittleEndian.Uint64(b[8:]),
		Len: binary.LittleEndian.Uint64(b[16:])}
	if g.Len != size {
		return GoCMA{}, ErrRndvLength
	}
	return g, nil
}

// GoSource returns the header of a TypeGoSource frame announcing port.
func GoSource(port uint16) Header { return Header{Type: TypeGoSource, Data: uint64(port)} }

// ParseGoSource checks a TypeGoSource frame (header h, then body, which
// must be empty) and returns the port it announces: ErrGoSource unless
// op.size is 0 and op.data a port from 1 to 65535.
func ParseGoSource(h *Header, body []byte) (uint16, error) {
	if h.Type != TypeGoSource || h.Size != 0 || len(body) != 0 || h.Data == 0 || h.Data > 0xffff {
		return 0, ErrGoSource
	}
	return uint16(h.Data), nil
}
