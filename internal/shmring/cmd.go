package shmring

import (
	"encoding/binary"
	"errors"
)

// Command operations. The provider defines what each means; the codec
// only checks that the operation is one it knows and that the sizes are
// consistent.
const (
	OpMsg    uint8 = 1 // untagged message (inline or one segment)
	OpTagged uint8 = 2 // tagged message (inline or one segment)
	OpAck    uint8 = 3 // response: an operation of the receiver of this ack completed (MsgID, status in Data)
	// OpRMAFirst..OpRMALast are reserved for RMA and atomic commands.
	OpRMAFirst uint8 = 16
	OpRMALast  uint8 = 63
)

// Command flags.
const (
	FlagInline   uint8 = 1 << 0 // the payload is in the slot (Payload)
	FlagFirst    uint8 = 1 << 1 // first segment of a message (with Size, Tag, Data)
	FlagLast     uint8 = 1 << 2 // last segment of a message
	FlagCQData   uint8 = 1 << 3 // Data is remote CQ data
	FlagDeliver  uint8 = 1 << 4 // the sender wants an OpAck once the message is delivered
	FlagSrcValid uint8 = 1 << 5 // reserved
	FlagCMA      uint8 = 1 << 6 // a cross-memory-attach request: the payload names the sender's buffers (prov/shm cma.go)
)

// Command header offsets within the command bytes (the slot after its
// 8-byte sequence number).
const (
	cOp    = 0
	cFlags = 1
	cLen   = 4
	cSrc   = 8
	cTag   = 16
	cData  = 24
	cMsgID = 32
	cSize  = 40
	cBuf   = 48
	cAux   = 52
	// CmdPayload is the offset of an inline payload in the command bytes.
	CmdPayload = CmdHeaderSize - 8
)

// Cmd is a decoded command. Payload aliases the slot: it must be copied
// out before the slot is released, and its bytes may change under the
// reader (another process writes the region).
type Cmd struct {
	Op    uint8
	Flags uint8
	Len   uint32 // payload bytes: inline in the slot, or in bounce buffer Buf
	Src   uint64 // sender's endpoint id
	Tag   uint64
	Data  uint64
	MsgID uint64
	Size  uint64 // total size of the message
	Buf   uint32 // bounce buffer index (segments)
	Aux   uint32 // operation-specific

	Payload []byte // inline payload (FlagInline)
}

// Decode errors.
var (
	ErrBadOp     = errors.New("shmring: unknown command")
	ErrBadLength = errors.New("shmring: command length out of range")
	ErrBadBuffer = errors.New("shmring: command names an invalid bounce buffer")
)

// Decode reads the command in cmd (the bytes Peek returned) into c, reading
// every field once, and validates it against the region's limits: a known
// operation, an inline length that fits the slot, a segment that fits a
// bounce buffer of the region, Len <= Size. It never panics; on error c
// is partially filled and the command is to be dropped.
func (r *Region) Decode(cmd []byte, c *Cmd) error {
	return decode(cmd, c, r.Bufs, r.BufSize)
}

func decode(cmd []byte, c *Cmd, bufs, bufSize uint32) error {
	if len(cmd) < CmdPayload {
		return ErrBadLength
	}
	le := binary.LittleEndian
	c.Op = cmd[cOp]
	c.Flags = cmd[cFlags]
	c.Len = le.Uint32(cmd[cLen:])
	c.Src = le.Uint64(cmd[cSrc:])
	c.Tag = le.Uint64(cmd[cTag:])
	c.Data = le.Uint64(cmd[cData:])
	c.MsgID = le.Uint64(cmd[cMsgID:])
	c.Size = le.Uint64(cmd[cSize:])
	c.Buf = le.Uint32(cmd[cBuf:])
	c.Aux = le.Uint32(cmd[cAux:])
	c.Payload = nil
	switch {
	case c.Op == OpMsg || c.Op == OpTagged:
	case c.Op == OpAck:
		return nil
	case c.Op >= OpRMAFirst && c.Op <= OpRMALast:
	default:
		return ErrBadOp
	}
	if uint64(c.Len) > c.Size {
		return ErrBadLength
	}
	if c.Flags&FlagInline != 0 {
		if c.Len > uint32(len(cmd)-CmdPayload) {
			return ErrBadLength
		}
		c.Payload = cmd[CmdPayload : CmdPayload+int(c.Len)]
		return nil
	}
	if c.Buf >= bufs && c.Len > 0 {
		return ErrBadBuffer
	}
	if c.Len > bufSize {
		return ErrBadLength
	}
	return nil
}

// Encode writes c's header into cmd (the bytes Reserve returned) and, for
// an inline command, copies payload after it; it returns false if the
// payload does not fit. Len is set from payload for inline commands.
func Encode(cmd []byte, c *Cmd, payload []byte) bool {
	if len(cmd) < CmdPayload {
		return false
	}
	if c.Flags&FlagInline != 0 {
		if len(payload) > len(cmd)-CmdPayload {
			return false
		}
		c.Len = uint32(copy(cmd[CmdPayload:], payload))
	}
	PutHeader(cmd, c)
	return true
}

// PutHeader writes c's header fields into cmd (at least CmdPayload bytes).
func PutHeader(cmd []byte, c *Cmd) {
	le := binary.LittleEndian
	_ = cmd[CmdPayload-1]
	cmd[cOp] = c.Op
	cmd[cFlags] = c.Flags
	cmd[2], cmd[3] = 0, 0
	le.PutUint32(cmd[cLen:], c.Len)
	le.PutUint64(cmd[cSrc:], c.Src)
	le.PutUint64(cmd[cTag:], c.Tag)
	le.PutUint64(cmd[cData:], c.Data)
	le.PutUint64(cmd[cMsgID:], c.MsgID)
	le.PutUint64(cmd[cSize:], c.Size)
	le.PutUint32(cmd[cBuf:], c.Buf)
	le.PutUint32(cmd[cAux:], c.Aux)
}
