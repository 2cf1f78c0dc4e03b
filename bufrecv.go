package fabric

import (
	"math"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

// RecvContext is struct fi_recv_context: the operation context of a
// buffered receive's completion, and the context of the receive that
// claims or discards it (FI_CLAIM, FI_DISCARD): buffered receives,
// fi_msg(3) "Buffered Receives" and fi_tagged(3) "Buffered Tagged
// Receives".
//
// An application that can process messages in the provider's own buffers
// sets ModeBufferedRecv in the hints' Mode; the providers that can expose
// their receive buffers (udp, shm, tcp FI_EP_MSG and FI_EP_RDM) then return it in the
// Info's Mode, and an endpoint opened from that Info works in the mode:
//
//   - A message that no posted receive takes is reported at once: the
//     completion's OpContext is a *RecvContext (EP is the endpoint,
//     Context nil), Buf is the start of the message in the provider's
//     buffer (at most FI_OPT_BUFFERED_LIMIT bytes), Len the message's
//     size, and Flags has FI_MORE when Buf is not the whole message
//     (then Buf holds at least FI_OPT_BUFFERED_MIN bytes).
//   - The application claims the message with a receive (Recv, RecvV,
//     RecvMsg) whose flags have FI_CLAIM (RecvMsg, or default op flags)
//     and whose context is that *RecvContext: the whole message is copied
//     to its buffers, and the completion has FI_CLAIM and the
//     RecvContext's Context (which the application may change before it
//     claims). Or it discards the message with FI_DISCARD (buffers
//     ignored, no completion). Either way Buf and the RecvContext must not
//     be used afterwards.
//   - Tagged receives (TRecv ...) post only the tag: a message matching it
//     is reported the same way, with a *RecvContext whose EP is nil and
//     whose Context is the receive's, and claimed or discarded with
//     TRecvMsg and FI_CLAIM or FI_DISCARD.
//
// Claiming or discarding a message twice, or with a RecvContext that is
// not this endpoint's, returns ErrInval; doing so on an endpoint without
// the mode returns ErrBadFlags. Messages not claimed when the endpoint
// closes are released. Until claimed or discarded a message holds the
// provider's memory, and, for the stream of tcp, holds back the messages
// behind it on its connection: claim or discard promptly. A receive
// counter counts messages claimed, not reports. Each report allocates its
// RecvContext.
//
// FI_OPT_BUFFERED_MIN and FI_OPT_BUFFERED_LIMIT (GetOpt, SetOpt; only on
// an endpoint in the mode, ErrNoProtoOpt otherwise) are set before Enable
// (ErrOpBadState after): the minimum at most the limit and the limit at
// least the minimum (ErrInval), the limit at most the provider's maximum
// (ErrMsgSize; math.MaxUint64, C's SIZE_MAX, sets the maximum). The mode
// applies to the endpoint's own receive queue: Enable with a shared
// receive context bound returns ErrNoSys. rx_attr.total_buffered_recv is
// the memory the provider buffers unexpected messages in, whatever the
// hint (the provider's value is returned; a larger hint matches nothing).
type RecvContext struct {
	// EP is the receiving endpoint of an untagged message; nil for a
	// tagged one (fi_tagged(3)).
	EP *Endpoint
	// Context is nil for an untagged message and the tagged receive's
	// context for a tagged one. The completion of the claim reports it;
	// the application may change it before claiming.
	Context any

	ref srx.BufRef
}

// bufRecv is an endpoint's FI_BUFFERED_RECV state: the options, set
// before Enable.
type bufRecv struct {
	min, limit, max uint64
}

// newBufRecv returns the buffered-receive state of an endpoint opened
// from ci, or nil when ci's Mode does not ask for it. It returns
// ErrNoSys when it does and the provider's endpoint cannot expose its
// buffers.
func newBufRecv(ci *Info, pe provider.Endpoint) (*bufRecv, error) {
	if ci.Mode&ModeBufferedRecv == 0 {
		return nil, nil
	}
	be, ok := pe.(provider.BufferedEndpoint)
	if !ok {
		return nil, ErrNoSys
	}
	mn, lim, mx := be.BufferedDefaults()
	return &bufRecv{min: mn, limit: lim, max: mx}, nil
}

// bufRecvMode adds ModeBufferedRecv to info, a match of provider p for
// hints, when the hints support the mode and p offers it for info.
func bufRecvMode(p provider.Provider, info, hints *Info) {
	if hints == nil || hints.Mode&ModeBufferedRecv == 0 {
		return
	}
	if o, ok := p.(provider.BufferedRecvOffer); ok && o.BufferedRecv(info) {
		info.Mode |= ModeBufferedRecv
	}
}

// getBufOpt is GetOpt(OptBufferedMin / OptBufferedLimit).
func (e *Endpoint) getBufOpt(name int) (uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bufRecv == nil {
		return 0, ErrNoProtoOpt
	}
	if name == OptBufferedMin {
		return e.bufRecv.min, nil
	}
	return e.bufRecv.limit, nil
}

// setBufOpt is SetOpt(OptBufferedMin / OptBufferedLimit): before Enable
// (ErrOpBadState after), the minimum at most the limit (ErrInval), the
// limit at least the minimum (ErrInval) and at most the provider's
// maximum (ErrMsgSize; math.MaxUint64, C's SIZE_MAX, sets the maximum).
func (e *Endpoint) setBufOpt(name int, v uint64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.bufRecv
	if b == nil {
		return ErrNoProtoOpt
	}
	if e.enabled.Load() {
		return ErrOpBadState
	}
	if name == OptBufferedMin {
		if v > b.limit {
			return ErrInval
		}
		b.min = v
		return nil
	}
	if v == math.MaxUint64 {
		v = b.max
	}
	if v > b.max {
		return ErrMsgSize
	}
	if v < b.min {
		return ErrInval
	}
	b.limit = v
	return nil
}

// enableBufRecv turns buffered receives on in the endpoint's own receive
// queue at Enable. A shared receive context is not put in the mode
// (ErrNoSys). e.mu is held.
func (e *Endpoint) enableBufRecv() error {
	if e.srxObj != nil || !e.ownRQ {
		return ErrNoSys
	}
	e.rq.SetBuffered(&srx.BufConfig{Min: e.bufRecv.min, Limit: e.bufRecv.limit,
		Context: func(ref srx.BufRef, ctx any, tagged bool) any {
			rc := &RecvContext{Context: ctx, ref: ref}
			if !tagged {
				rc.EP = e
			}
			return rc
		}})
	return nil
}

// claimBuffered is the receive of recv whose flags f claim or discard a
// buffered receive: m's context is the *RecvContext of its completion.
func (e *Endpoint) claimBuffered(rc *RecvContext, m *provider.Msg, f Flags, tagged bool) error {
	if e.bufRecv == nil {
		return ErrBadFlags
	}
	if rc == nil {
		return ErrInval
	}
	m.Context = rc.Context
	m.Flags = f
	return e.rq.ClaimBuffered(rc.ref, m, tagged, f&FlagDiscard != 0)
}
