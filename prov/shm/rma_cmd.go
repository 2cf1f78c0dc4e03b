package shm

import (
	"encoding/binary"

	"github.com/gofabric/fabric/internal/atomics"
	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/provider"
)

// RMA and atomic commands (in shmring's OpRMAFirst..OpRMALast range).
//
// Requests go into the target's queue; every answer is pushed into the
// initiator's own queue (each process only consumes its own queue). The
// shmring.Cmd fields are used as follows:
//
//	Src    the sender's endpoint id (requests and responses)
//	MsgID  the initiator's operation id, echoed in the response; 0 on an
//	       inject write, which wants no response
//	Data   remote CQ data (FlagCQData) on requests; the status (a
//	       provider.Errno, 0 for success) on responses
//	Tag    the byte offset of this command's data within the operation
//	       (write segments, read response pieces)
//	Aux    requests: bits 0-7 the number of remote iovs; atomics also
//	       bits 8-15 the operation, 16-23 the datatype, 24-25 the family
//	Size   the size of the operation's payload: the remote iov table
//	       plus the data (write), the table alone (read), the table and
//	       the operands (atomic); on responses the bytes answered
//	Len    the payload bytes of this command: in the slot (FlagInline) or
//	       in bounce buffer Buf of the receiver's region
//
// The first command of a request (FlagFirst) starts with its remote iov
// table, rmaIOVSize bytes per entry (address, length or element count,
// key; little-endian), followed by data; later commands of a write
// (segments) carry data only. FlagLast marks the last command of a write
// and the last piece of a read response.
const (
	opWrite      = shmring.OpRMAFirst + iota // RMA write request (first command, then segments)
	opRead                                   // RMA read request
	opAtomic                                 // atomic request
	opWriteAck                               // response: write status
	opReadResp                               // response: read data, status on the last piece
	opAtomicResp                             // response: atomic status and fetched values
)

// rmaIOVSize is the encoded size of one remote iov.
const rmaIOVSize = 24

// remoteIOV is one remote piece of an RMA or atomic request: Len is in
// bytes for RMA, in elements for atomics.
type remoteIOV struct {
	Addr, Len, Key uint64
}

// putRemote encodes iovs at the start of dst; it returns the bytes written.
func putRemote(dst []byte, iovs []remoteIOV) int {
	le := binary.LittleEndian
	for i, v := range iovs {
		b := dst[i*rmaIOVSize : (i+1)*rmaIOVSize]
		le.PutUint64(b, v.Addr)
		le.PutUint64(b[8:], v.Len)
		le.PutUint64(b[16:], v.Key)
	}
	return len(iovs) * rmaIOVSize
}

// parseRemote decodes the n remote iovs at the start of payload into
// iovs and returns the bytes after them. It fails (ok=false) when n is
// above RMAIOVLimit or the payload is too short: the command is invalid.
func parseRemote(payload []byte, n int, iovs *[RMAIOVLimit]remoteIOV) (rest []byte, ok bool) {
	if n < 1 || n > RMAIOVLimit || len(payload) < n*rmaIOVSize {
		return nil, false
	}
	le := binary.LittleEndian
	for i := range n {
		b := payload[i*rmaIOVSize : (i+1)*rmaIOVSize]
		iovs[i] = remoteIOV{le.Uint64(b), le.Uint64(b[8:]), le.Uint64(b[16:])}
	}
	return payload[n*rmaIOVSize:], true
}

// atomicAux packs an atomic request's description into Aux.
func atomicAux(n int, k provider.AtomicKind, op provider.AtomicOp, dt provider.Datatype) uint32 {
	return uint32(n) | uint32(op)<<8 | uint32(dt)<<16 | uint32(k)<<24
}

// atomicDesc is an atomic request's description, checked.
type atomicDesc struct {
	n    int // remote iovs
	kind provider.AtomicKind
	op   provider.AtomicOp
	dt   provider.Datatype
	size int // bytes per element
}

// parseAtomicAux unpacks and checks Aux: a valid operation of its family
// on a datatype internal/atomics computes on.
func parseAtomicAux(aux uint32) (atomicDesc, bool) {
	d := atomicDesc{n: int(aux & 0xff), op: provider.AtomicOp(aux >> 8 & 0xff),
		dt: provider.Datatype(aux >> 16 & 0xff), kind: provider.AtomicKind(aux >> 24)}
	d.size = atomics.Size(d.dt)
	return d, atomics.KindValid(d.kind, d.op, d.dt) && d.size > 0 && d.n >= 1 && d.n <= RMAIOVLimit
}

// operandBytes returns how many operand bytes an atomic request of count
// elements carries: the operand (none for FI_ATOMIC_READ) and, for the
// compare family, the compare operand.
func (d atomicDesc) operandBytes(count uint64) uint64 {
	n := count * uint64(d.size)
	switch {
	case d.op == provider.AtomicRead:
		return 0
	case d.kind == provider.AtomicCompare:
		return 2 * n
	}
	return n
}
