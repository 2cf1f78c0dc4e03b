package rxmwire

import (
	"encoding/binary"
	"errors"
)

// Atomics as rxm 1.17 carries them: a request is an rxm packet of type
// TypeAtomic whose op.op is OpAtomic, OpAtomicFetch or OpAtomicCompare and
// whose op.tag word holds, in its first three bytes, the datatype, the
// atomic operation (enum fi_op) and the number of remote targets. Its
// payload is an AtomicReqSize-byte table of MaxAtomicIOC remote targets
// {addr, count, key} (unused entries are zero), then the operand, then the
// compare operand (compare family), each count*datatype-size bytes. The
// answer is an rxm packet of type TypeAtomicResp with the request's op,
// datatype and operation (count 0) and msg_id, whose payload is a status
// (int32, 0 or a negative libfabric error, big-endian) and the length of
// the result (uint32, big-endian), then the result: the target's values
// before the operation (fetch and compare families only).

// Atomic operations (op.op of TypeAtomic and TypeAtomicResp packets).
const (
	OpAtomic        = 6
	OpAtomicFetch   = 7
	OpAtomicCompare = 8
)

const (
	// MaxAtomicIOC is the number of remote targets of an atomic request.
	MaxAtomicIOC = 4
	// AtomicReqSize is the size of the target table of a request.
	AtomicReqSize = MaxAtomicIOC * 24
	// AtomicRespSize is the size of the status words of a response.
	AtomicRespSize = 8
	// MaxAtomicData is the most operand bytes (operand plus compare
	// operand) one request carries: the rxm buffer size less the table.
	MaxAtomicData = EagerLimit - AtomicReqSize
)

// Errors of the atomic parsers.
var (
	ErrAtomicCount = errors.New("rxmwire: bad atomic target count")
	ErrAtomicOp    = errors.New("rxmwire: bad atomic op")
)

// AtomicTag returns the op.tag word of an atomic packet: datatype,
// operation and target count in its first three bytes.
func AtomicTag(datatype, op, count uint8) uint64 {
	return uint64(datatype) | uint64(op)<<8 | uint64(count)<<16
}

// SplitAtomicTag returns the datatype, operation and target count of an
// atomic packet's op.tag word.
func SplitAtomicTag(tag uint64) (datatype, op, count uint8) {
	return uint8(tag), uint8(tag >> 8), uint8(tag >> 16)
}

// AtomicIOC is one remote target of an atomic request, in elements.
type AtomicIOC struct {
	Addr, Count, Key uint64
}

// PutAtomicIOC encodes the target table (at most MaxAtomicIOC entries)
// into the first AtomicReqSize bytes of b; unused entries are zeroed.
func PutAtomicIOC(b []byte, ioc []AtomicIOC) {
	_ = b[AtomicReqSize-1]
	clear(b[:AtomicReqSize])
	for i, v := range ioc[:min(len(ioc), MaxAtomicIOC)] {
		binary.LittleEndian.PutUint64(b[i*24:], v.Addr)
		binary.LittleEndian.PutUint64(b[i*24+8:], v.Count)
		binary.LittleEndian.PutUint64(b[i*24+16:], v.Key)
	}
}

// ParseAtomicIOC decodes the first n entries (1..MaxAtomicIOC) of the
// target table at the start of b and returns the total element count.
func ParseAtomicIOC(b []byte, n int, ioc *[MaxAtomicIOC]AtomicIOC) (uint64, error) {
	if len(b) < AtomicReqSize {
		return 0, ErrShort
	}
	if n < 1 || n > MaxAtomicIOC {
		return 0, ErrAtomicCount
	}
	var total uint64
	for i := 0; i < n; i++ {
		v := AtomicIOC{Addr: binary.LittleEndian.Uint64(b[i*24:]), Count: binary.LittleEndian.Uint64(b[i*24+8:]),
			Key: binary.LittleEndian.Uint64(b[i*24+16:])}
		if total+v.Count < total || v.Count > MaxAtomicData {
			return 0, ErrAtomicCount
		}
		total += v.Count
		ioc[i] = v
	}
	return total, nil
}

// PutAtomicResp encodes a response's status and result length into the
// first AtomicRespSize bytes of b.
func PutAtomicResp(b []byte, status int32, resultLen uint32) {
	binary.BigEndian.PutUint32(b, uint32(status))
	binary.BigEndian.PutUint32(b[4:], resultLen)
}

// ParseAtomicResp decodes a response's status and result length and
// returns the result bytes that follow them; the result must be exactly
// resultLen bytes.
func ParseAtomicResp(b []byte) (status int32, result []byte, err error) {
	if len(b) < AtomicRespSize {
		return 0, nil, ErrShort
	}
	status = int32(binary.BigEndian.Uint32(b))
	n := binary.BigEndian.Uint32(b[4:])
	if uint64(n) != uint64(len(b)-AtomicRespSize) {
		return 0, nil, ErrShort
	}
	return status, b[AtomicRespSize:], nil
}
