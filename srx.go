package fabric

import (
	"sync/atomic"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// RecvMsg describes a receive for the RecvMsg/TRecvMsg calls (struct
// fi_msg / fi_msg_tagged for receives).
type RecvMsg = Msg

// PeerSRX is the fi_peer_srx_context of an FI_PEER import: the owner's
// receive queue that a peer provider's endpoints deliver into.
type PeerSRX struct {
	Owner peer.SRXOwner
}

// srxRecvFlags are the flags accepted by RecvMsg/TRecvMsg.
const srxRecvFlags = FlagCompletion | FlagMultiRecv | FlagMore | FlagPeek | FlagClaim | FlagDiscard |
	FlagRemoteCQData | provider.CompletionLevels

// SRX is a shared receive context (fi_srx_context): one receive queue
// serving every endpoint bound to it. Receives posted on it match messages
// arriving on any of those endpoints; completions go to the receive CQ of
// the endpoint that received the message.
type SRX struct {
	lc        lifecycle
	dom       *Domain
	attr      RxAttr
	caps      Caps
	q         *srx.Queue // nil for an FI_PEER import
	own       provider.SRXOwner
	iovLimit  int
	selective atomic.Bool
}

// OpenSRX opens a shared receive context (fi_srx_context). attr may be nil
// for the domain's receive attributes. With FlagPeer in attr.OpFlags the
// context imports peer.Owner (fi_peer(3) PEER SRX): endpoints bound to it
// deliver into the owner's queue and the posting calls of this SRX return
// ErrNoSys. Errors (wrapped): ErrInval for FlagPeer without an owner or an
// owner without FlagPeer; ErrClosed for a closed domain.
func (d *Domain) OpenSRX(attr *RxAttr, peer *PeerSRX) (*SRX, error) {
	if d == nil {
		return nil, ErrInval
	}
	prov := d.prov.Name()
	var at RxAttr
	if attr != nil {
		at = *attr
	} else if d.info.RxAttr != nil {
		at = *d.info.RxAttr
	}
	isPeer := at.OpFlags&FlagPeer != 0
	if isPeer != (peer != nil) || isPeer && peer.Owner == nil {
		return nil, opErr("fi_srx_context", prov, ErrInval)
	}
	caps := at.Caps
	if caps == 0 && d.info.RxAttr != nil {
		caps = d.info.RxAttr.Caps
	}
	if caps == 0 {
		caps = d.info.Caps
	}
	s := &SRX{dom: d, attr: at, caps: caps, iovLimit: int(min(at.IOVLimit, 1<<20))}
	if s.iovLimit == 0 {
		s.iovLimit = 1 << 20
	}
	if isPeer {
		s.own = peer.Owner
	} else {
		s.q = srx.New(srx.Config{
			Size:     int(min(at.Size, 1<<20)),
			Directed: caps&CapDirectedRecv != 0,
			Tagged:   caps == 0 || caps&CapTagged != 0,
			// FI_RM_ENABLED: receives reserve room in the receive CQ.
			ResourceMgmt: d.rmEnabled(),
		})
		s.own = s.q
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr("fi_srx_context", prov, err)
	}
	return s, nil
}

// Attr returns the receive attributes the SRX was opened with.
func (s *SRX) Attr() RxAttr {
	if s == nil {
		return RxAttr{}
	}
	return s.attr
}

// Domain returns the SRX's domain.
func (s *SRX) Domain() *Domain {
	if s == nil {
		return nil
	}
	return s.dom
}

func (s *SRX) post(m provider.Msg, flags Flags, explicit, tagged bool) error {
	if s == nil {
		return ErrInval
	}
	if s.lc.isClosed() {
		return ErrClosed
	}
	if s.q == nil {
		return ErrNoSys
	}
	if s.caps != 0 {
		if tagged && s.caps&CapTagged == 0 || !tagged && s.caps&CapMsg == 0 {
			return ErrNoSys
		}
	}
	if explicit {
		if flags&^srxRecvFlags != 0 {
			return ErrBadFlags
		}
	} else {
		flags = s.attr.OpFlags & (FlagMultiRecv | FlagCompletion)
	}
	if flags&FlagMultiRecv != 0 && s.caps != 0 && s.caps&CapMultiRecv == 0 {
		return ErrBadFlags
	}
	if m.IOV != nil && len(m.IOV) > s.iovLimit {
		return ErrInval
	}
	if !s.dom.descsOK(m.Buf, m.IOV, m.Desc, m.Descs, FlagRecv) {
		return ErrInval
	}
	if !s.selective.Load() {
		flags |= FlagCompletion
	}
	m.Flags = flags & (FlagCompletion | FlagMultiRecv | FlagPeek | FlagClaim | FlagDiscard)
	return closedErr(s.q.Post(&m, tagged))
}

// Recv posts a receive buffer (fi_recv). src restricts the sender with
// FI_DIRECTED_RECV; AddrUnspec accepts any sender. The caller owns buf
// until the completion.
func (s *SRX) Recv(buf []byte, desc MRDesc, src Addr, ctx any) error {
	return s.post(provider.Msg{Buf: buf, Desc: desc, Addr: src, Context: ctx}, 0, false, false)
}

// RecvV posts a scatter receive (fi_recvv).
func (s *SRX) RecvV(iov [][]byte, desc []MRDesc, src Addr, ctx any) error {
	return s.post(provider.Msg{IOV: nonNil(iov), Descs: desc, Addr: src, Context: ctx}, 0, false, false)
}

// RecvMsg posts a receive with explicit flags (fi_recvmsg): FlagCompletion,
// FlagMultiRecv, FlagMore, FlagClaim, FlagDiscard.
func (s *SRX) RecvMsg(m *RecvMsg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	return s.post(provider.Msg{IOV: nonNil(m.IOV), Descs: m.Desc, Addr: m.Addr, Context: m.Context}, flags, true, false)
}

// TRecv posts a tagged receive (fi_trecv): it matches messages whose tag
// equals tag in the bits not set in ignore.
func (s *SRX) TRecv(buf []byte, desc MRDesc, src Addr, tag, ignore uint64, ctx any) error {
	return s.post(provider.Msg{Buf: buf, Desc: desc, Addr: src, Context: ctx, Tag: tag, Ignore: ignore}, 0, false, true)
}

// TRecvV posts a tagged scatter receive (fi_trecvv).
func (s *SRX) TRecvV(iov [][]byte, desc []MRDesc, src Addr, tag, ignore uint64, ctx any) error {
	return s.post(provider.Msg{IOV: nonNil(iov), Descs: desc, Addr: src, Context: ctx, Tag: tag, Ignore: ignore}, 0, false, true)
}

// TRecvMsg posts a tagged receive with explicit flags (fi_trecvmsg):
// FlagPeek, FlagClaim, FlagDiscard, FlagCompletion, FlagMultiRecv.
func (s *SRX) TRecvMsg(m *RecvMsg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	iov := m.IOV
	if iov == nil && flags&(FlagPeek|FlagDiscard) == 0 {
		iov = [][]byte{}
	}
	return s.post(provider.Msg{IOV: iov, Descs: m.Desc, Addr: m.Addr, Context: m.Context, Tag: m.Tag, Ignore: m.Ignore},
		flags, true, true)
}

// Cancel cancels the pending receive posted with ctx (fi_cancel): one
// FI_ECANCELED error completion is written. ErrNoEnt if none is pending.
func (s *SRX) Cancel(ctx any) error {
	if s == nil {
		return ErrInval
	}
	if s.lc.isClosed() {
		return ErrClosed
	}
	if s.q == nil {
		return ErrNoSys
	}
	return s.q.Cancel(ctx)
}

// GetOpt reads an option (fi_getopt): OptMinMultiRecv at level
// OptEndpoint. Others give ErrNoProtoOpt.
func (s *SRX) GetOpt(level, name int) (uint64, error) {
	if s == nil {
		return 0, ErrInval
	}
	if s.lc.isClosed() {
		return 0, ErrClosed
	}
	if level != OptEndpoint || name != OptMinMultiRecv {
		return 0, ErrNoProtoOpt
	}
	if s.q == nil {
		return 0, ErrNoSys
	}
	return s.q.MinMultiRecv(), nil
}

// SetOpt sets an option (fi_setopt): OptMinMultiRecv at level
// OptEndpoint, for buffers posted afterwards.
func (s *SRX) SetOpt(level, name int, v uint64) error {
	if s == nil {
		return ErrInval
	}
	if s.lc.isClosed() {
		return ErrClosed
	}
	if level != OptEndpoint || name != OptMinMultiRecv {
		return ErrNoProtoOpt
	}
	if s.q == nil {
		return ErrNoSys
	}
	s.q.SetMinMultiRecv(v)
	return nil
}

// Close closes the SRX (fi_close). It returns ErrBusy while endpoints are
// bound to it. Pending receives complete with FI_ECANCELED.
func (s *SRX) Close() error {
	if s == nil {
		return ErrInval
	}
	if err := s.lc.beginClose(); err != nil {
		return opErr("fi_close", s.dom.prov.Name(), err)
	}
	if s.q != nil {
		_ = s.q.Close()
	}
	s.dom.lc.release()
	return nil
}

// ---- hooks for endpoints ----

// bindEndpoint registers an endpoint bound to the SRX.
func (s *SRX) bindEndpoint() error { return s.lc.hold() }

// unbindEndpoint drops an endpoint registered with bindEndpoint.
func (s *SRX) unbindEndpoint() { s.lc.release() }

// owner is where bound endpoints match incoming messages
// (provider.Resources.SRX): the SRX's own queue, or the imported owner.
func (s *SRX) owner() provider.SRXOwner { return s.own }

// queue is the SRX's own queue, nil for an FI_PEER import.
func (s *SRX) queue() *srx.Queue { return s.q }

// domain returns the SRX's domain.
func (s *SRX) domain() *Domain { return s.dom }

// setCompletion tells the SRX where its own completions go (FI_PEEK
// results, cancellations, multi-receive releases) and whether the receive
// CQ binding uses FI_SELECTIVE_COMPLETION; endpoints call it when they
// enable with the SRX bound.
func (s *SRX) setCompletion(cq provider.CQOwner, cntr provider.CntrOwner, selective bool) {
	s.selective.Store(selective)
	if s.q != nil {
		s.q.SetCompletion(cq, cntr)
	}
}
