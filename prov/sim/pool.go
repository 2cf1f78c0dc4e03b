package sim

import "math/bits"

// Pools. Payloads are copied at send time into buffers of power-of-two
// size classes, kept by the network for reuse, as are events, send
// operations and unexpected-message holders: a steady stream of messages
// allocates nothing. Buffers and unexpected-message holders are returned
// outside the network's lock (the receive queue starts and discards
// unexpected messages from the application's calls), so they have their
// own lock, poolMu.

const (
	minBufShift = 6 // 64 bytes
	numClasses  = 21 - minBufShift + 1
	// maxPooled bounds the buffers kept per class.
	maxPooled = 4096
)

func bufClass(n int) int {
	if n <= 1<<minBufShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minBufShift
}

// getBuf returns a buffer of n bytes.
func (n *Network) getBuf(size int) []byte {
	if size == 0 {
		return nil
	}
	c := bufClass(size)
	if c >= numClasses {
		return make([]byte, size)
	}
	n.poolMu.Lock()
	if k := len(n.bufs[c]); k > 0 {
		b := n.bufs[c][k-1]
		n.bufs[c][k-1] = nil
		n.bufs[c] = n.bufs[c][:k-1]
		n.poolMu.Unlock()
		return b[:size]
	}
	n.poolMu.Unlock()
	return make([]byte, size, 1<<(c+minBufShift))
}

// putBuf returns a buffer from getBuf.
func (n *Network) putBuf(b []byte) {
	if cap(b) == 0 {
		return
	}
	c := bufClass(cap(b))
	if c >= numClasses || cap(b) != 1<<(c+minBufShift) {
		return
	}
	n.poolMu.Lock()
	if len(n.bufs[c]) < maxPooled {
		n.bufs[c] = append(n.bufs[c], b[:0])
	}
	n.poolMu.Unlock()
}

func (n *Network) newUbuf(buf, src []byte) *ubuf {
	n.poolMu.Lock()
	var u *ubuf
	if k := len(n.ubufs); k > 0 {
		u = n.ubufs[k-1]
		n.ubufs[k-1] = nil
		n.ubufs = n.ubufs[:k-1]
	}
	n.poolMu.Unlock()
	if u == nil {
		u = &ubuf{}
	}
	u.buf, u.src = buf, src
	return u
}

// freeUbuf returns u and its payload buffer.
func (n *Network) freeUbuf(u *ubuf) {
	n.putBuf(u.buf)
	*u = ubuf{}
	n.poolMu.Lock()
	if len(n.ubufs) < maxPooled {
		n.ubufs = append(n.ubufs, u)
	}
	n.poolMu.Unlock()
}

// newOp returns a zeroed send operation; n.mu is held.
func (n *Network) newOp() *txOp {
	if k := len(n.ops); k > 0 {
		op := n.ops[k-1]
		n.ops[k-1] = nil
		n.ops = n.ops[:k-1]
		return op
	}
	return &txOp{}
}

// freeOp returns op; n.mu is held.
func (n *Network) freeOp(op *txOp) {
	*op = txOp{}
	if len(n.ops) < maxPooled {
		n.ops = append(n.ops, op)
	}
}
