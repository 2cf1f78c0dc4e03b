package tcp

import (
	"crypto/rand"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// Cross-memory attach between two of our endpoints on one host: an
// extension (rxmwire.GoMarker) for large messages.
//
// Over loopback a message crosses the kernel twice (into the socket, out
// of it) plus TCP's own work; for large messages that copy is most of the
// cost. When the peer is of this implementation and on this host (its
// address is a loopback address or ours), a message of at least the CMA
// threshold (FI_TCP_RDM_CMA_MIN, default rdmCMAMin) is announced with a
// rendezvous request of type rxmwire.TypeGoCMAReq: rxm's descriptor (so
// that the receiver may always fall back to a tcp read request, as with
// rxm) followed by the message's address in the sender's memory. The
// receiver copies it from there with process_vm_readv(2), once, and sends
// the read-done that completes the send.
//
// The receiver does so only after proving that the pid in the connection
// data is the sender's: on the first such request of a connection it
// falls back to the tcp read and sends the sender a random nonce
// (rxmwire.TypeGoCMAChallenge), which the sender keeps in its memory; its
// later requests name the nonce's address, and the receiver reads it from
// that pid: found there, the pid is the peer's (only the peer received the
// nonce). A failed check, a failed or short copy (another uid, ptrace
// restrictions, a pid namespace apart), or FI_TCP_RDM_CMA=0 mean tcp reads
// for that connection; nothing else changes on the wire.

const (
	envCMA    = "FI_TCP_RDM_CMA"
	envCMAMin = "FI_TCP_RDM_CMA_MIN"
	// rdmCMAMin is the default CMA threshold: below it a streamed message
	// is faster (process_vm_readv pins the pages it copies: on this
	// machine it moves about 8 GB/s where memmove moves 70).
	rdmCMAMin = 768 << 10
)

// States of a connection's CMA check (receiver side).
const (
	cmaNone  int8 = iota // no request seen yet
	cmaAsked             // challenge sent, waiting for a request that names the nonce
	cmaOK                // the pid is the peer's: copy
	cmaNo                // tcp reads on this connection
)

// rdmCMAConfig reads FI_TCP_RDM_CMA and FI_TCP_RDM_CMA_MIN: whether CMA is
// used (and works in this process) and its threshold.
func rdmCMAConfig() (on bool, minSize int) {
	minSize = int(min(max(envUint(envCMAMin, rdmCMAMin), rxmwire.EagerLimit+1), 1<<40))
	if !envBool(envCMA, true) {
		return false, minSize
	}
	ok, _ := sys.CMAAvailable()
	return ok, minSize
}

// sameHost reports whether the peer at addr is on this host, as far as
// its address tells: a loopback address, or the endpoint's own IP.
func sameHost(addr, ours []byte) bool {
	a, _, ok1 := decodeSockaddr(addr)
	b, _, ok2 := decodeSockaddr(ours)
	if !ok1 || !ok2 {
		return false
	}
	ip := a.AP.Addr().Unmap()
	return ip.IsLoopback() || ip == b.AP.Addr().Unmap()
}

// useCMA reports whether a message of n bytes to c goes by CMA.
func (ep *rdmEP) useCMA(c *rdmConn, n int) bool {
	return ep.cmaOn && c.ext && c.local && n >= ep.cmaMin
}

// cmaProofAddr is the address of the peer's nonce in our memory, 0 before
// the peer sent one.
func (c *rdmConn) cmaProofAddr() uint64 {
	if c.cmaProof == nil {
		return 0
	}
	return sys.IOVOf(c.cmaProof[:]).Base
}

// resetCMA forgets the CMA state of the old stream (a new socket).
func (c *rdmConn) resetCMA() {
	c.cmaState, c.cmaProof = cmaNone, nil
}

// cmaChallenge takes the peer's nonce: kept in our memory for the life of
// the connection, named by our later requests.
func (c *rdmConn) cmaChallenge(body []byte) {
	if len(body) != rxmwire.GoCMANonceSize {
		c.protoFail("bad CMA challenge")
		return
	}
	p := new([rxmwire.GoCMANonceSize]byte)
	copy(p[:], body)
	c.cmaProof = p
}

// startRndv starts the receive of a rendezvous message matched by e (nil:
// discarded): by CMA when g says where it is and the connection allows,
// else by a tcp read request. ep.mu is held.
func (c *rdmConn) startRndv(e *provider.RxEntry, rv *rxmwire.Rndv, msgID uint64, from []byte, g *rxmwire.GoCMA) {
	if g != nil && c.cmaRead(e, g, msgID, from) {
		return
	}
	c.startRead(e, rv, msgID, from)
}

// cmaRead copies a CMA request's message into e and sends the read-done;
// false when it must be read over tcp instead (the check is not done yet,
// or failed, or the copy failed).
func (c *rdmConn) cmaRead(e *provider.RxEntry, g *rxmwire.GoCMA, msgID uint64, from []byte) bool {
	ep := c.ep
	switch c.cmaState {
	case cmaNo:
		return false
	case cmaNone:
		c.cmaState = cmaNo
		if !ep.cmaOn || !c.local || c.remotePID == 0 {
			return false
		}
		if _, err := rand.Read(c.cmaNonce[:]); err != nil {
			return false
		}
		h := tcpwire.Header{Op: tcpwire.OpMsg}
		h.SetPayload(rxmwire.HeaderSize + rxmwire.GoCMANonceSize)
		c.ctrlFrame(&h, &rxmwire.Header{Type: rxmwire.TypeGoCMAChallenge}, c.cmaNonce[:])
		c.cmaState = cmaAsked
		return false
	case cmaAsked:
		if g.ProofAddr == 0 {
			return false // sent before our challenge arrived
		}
		var got [rxmwire.GoCMANonceSize]byte
		c.cmaRemote[0] = sys.RemoteIOV{Base: g.ProofAddr, Len: rxmwire.GoCMANonceSize}
		n, err := sys.ProcessVMReadv(int(c.remotePID), [][]byte{got[:]}, c.cmaRemote[:])
		if err != nil || n != len(got) || got != c.cmaNonce {
			logCM(provider.LevelInfo, "rdm: the peer's memory cannot be read (CMA), reading over tcp", c.addr)
			c.cmaState = cmaNo
			return false
		}
		c.cmaState = cmaOK
	}
	if e != nil {
		c.cmaRemote[0] = sys.RemoteIOV{Base: g.Base, Len: g.Len}
		var room uint64
		for _, b := range e.IOV {
			room += uint64(len(b))
		}
		want := min(room, g.Len)
		n, err := sys.ProcessVMReadv(int(c.remotePID), e.IOV, c.cmaRemote[:])
		if err != nil || uint64(n) != want {
			logCM(provider.LevelInfo, "rdm: a CMA copy failed, reading over tcp", c.addr)
			c.cmaState = cmaNo
			return false
		}
		ep.completeRx(e, n, g.Len-uint64(n), from)
		ep.rq.FreeEntry(e)
		ep.cmaCopies++
	}
	c.sendReadDone(msgID)
	return true
}

// sendReadDone queues the read-done of a rendezvous receive: it goes out
// with the next frame, or within rdmLazyDelay. ep.mu is held.
func (c *rdmConn) sendReadDone(msgID uint64) {
	h := tcpwire.Header{Op: tcpwire.OpMsg}
	h.SetPayload(rxmwire.HeaderSize)
	c.ctrlFrame(&h, &rxmwire.Header{Type: rxmwire.TypeRndvReadDone, MsgID: msgID})
	c.tx.lazy++
	if c.tx.lazy == 1 && !c.ep.auto {
		c.ep.armLazy()
	}
}
