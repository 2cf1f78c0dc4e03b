package fabric

import "github.com/gofabric/fabric/provider"

// ready is the one state check of every data call, transmit or receive:
// it returns the endpoint that owns the provider object (the alias's parent,
// or ep) when ep is usable, else ErrInval (nil endpoint), ErrClosed (ep or
// its parent closed) or ErrOpBadState (not enabled). It returns bare Errno
// values (data path).
func (ep *Endpoint) ready() (*Endpoint, error) {
	if ep == nil {
		return nil, ErrInval
	}
	e := ep.root()
	if !e.enabled.Load() {
		if e.lc.isClosed() || ep.lc.isClosed() {
			return nil, ErrClosed
		}
		return nil, ErrOpBadState
	}
	if ep.parent != nil && ep.lc.isClosed() {
		return nil, ErrClosed
	}
	return e, nil
}

// readyFast is ready's common case, small enough to inline into the
// busiest data calls: ep itself when it is an enabled endpoint (not an
// alias). Otherwise it returns nil, and the caller asks ready.
func (ep *Endpoint) readyFast() *Endpoint {
	if ep != nil && ep.parent == nil && ep.enabled.Load() {
		return ep
	}
	return nil
}

// txFlags computes the effective flags of a transmit operation: the
// explicit flags of the *Msg calls, otherwise the default op flags plus
// flags (FI_REMOTE_CQ_DATA of the *Data calls); FlagCompletion is added
// unless the TX CQ binding is selective and the operation did not ask for
// it.
func (ep *Endpoint) txFlags(e *Endpoint, flags Flags, explicit bool) Flags {
	if !explicit {
		flags |= Flags(ep.txOpFlags.Load())
	}
	if !e.txSel {
		flags |= FlagCompletion
	}
	return flags
}

func (ep *Endpoint) rxFlags(e *Endpoint, flags Flags, explicit bool) Flags {
	if !explicit {
		flags |= Flags(ep.rxOpFlags.Load())
	}
	if !e.rxSel {
		flags |= FlagCompletion
	}
	return flags
}

// txCheck applies the transmit rules every family shares (messages, RMA,
// atomics) and returns the effective flags: explicit flags within allowed
// (ErrBadFlags), n bytes within the inject size for an inject (ErrInval),
// remote CQ data only where the domain carries it (ErrNoSys), and a
// completion only with a transmit CQ or the counter cntr bound (ErrNoCQ).
func (ep *Endpoint) txCheck(e *Endpoint, flags Flags, explicit bool, allowed Flags, n uint64, cntr int) (Flags, error) {
	if explicit && flags&^allowed != 0 {
		return 0, ErrBadFlags
	}
	f := ep.txFlags(e, flags, explicit)
	if f&FlagInject != 0 && n > e.injectSize {
		return 0, ErrInval
	}
	if f&FlagRemoteCQData != 0 && e.cqDataSize == 0 {
		return 0, ErrNoSys
	}
	if e.txCQ == nil && f&FlagCompletion != 0 && e.cntrs[cntr] == nil {
		return 0, ErrNoCQ
	}
	return f, nil
}

// injectCheck applies the rules of the inject calls, which skip txCheck
// (no completion, no default op flags): n bytes within the inject size
// (ErrInval) and remote CQ data only where the domain carries it (ErrNoSys).
func (e *Endpoint) injectCheck(n uint64, flags Flags) error {
	if n > e.injectSize {
		return ErrInval
	}
	if flags&FlagRemoteCQData != 0 && e.cqDataSize == 0 {
		return ErrNoSys
	}
	return nil
}

const sendMsgFlags = FlagRemoteCQData | FlagCompletion | FlagMore | FlagInject | FlagMulticast |
	FlagFence | FlagTransmitComplete | FlagDeliveryComplete | FlagInjectComplete | FlagCommitComplete |
	FlagMatchComplete | FlagTransmit

const recvMsgFlags = FlagCompletion | FlagMore | FlagMultiRecv | FlagPeek | FlagClaim | FlagDiscard | FlagRecv

func iovLen(iov [][]byte) uint64 {
	var n uint64
	for _, b := range iov {
		n += uint64(len(b))
	}
	return n
}

// msgCapable reports whether e may post untagged or tagged messages.
func (e *Endpoint) msgCapable(tagged bool) bool {
	if tagged {
		return e.tagged != nil && e.caps&CapTagged != 0
	}
	return e.caps&CapMsg != 0 && !e.noTx
}

// descsOK checks the memory descriptors of m's local buffers: a vector of
// descriptors has one per buffer (or none), and under FI_MR_LOCAL every
// non-empty buffer has a descriptor of the domain covering it with access.
func (e *Endpoint) descsOK(m *provider.Msg, access Flags) bool {
	if len(m.Descs) == 0 && !e.dom.mrLocal {
		// The common case, inlined: no descriptor vector to match against
		// the buffers, and no FI_MR_LOCAL to check them against.
		return true
	}
	return e.dom.descsOK(m.Buf, m.IOV, m.Desc, m.Descs, access)
}

// send validates a transmit and hands it to the provider. m is passed by
// value, as the provider takes it: through a pointer the compiler would
// copy the large Msg twice for the interface call (into a temporary, then
// into the arguments) instead of once.
func (ep *Endpoint) send(m provider.Msg, flags Flags, explicit, tagged bool) error {
	var err error
	e := ep.readyFast()
	if e == nil {
		if e, err = ep.ready(); err != nil {
			return err
		}
	}
	if !e.msgCapable(tagged) {
		return ErrNoSys
	}
	var n uint64
	if m.IOV != nil {
		if len(m.IOV) > e.txIOVLimit {
			return ErrInval
		}
		n = iovLen(m.IOV)
	} else {
		n = uint64(len(m.Buf))
	}
	if n > e.maxMsg {
		return ErrMsgSize
	}
	if !e.descsOK(&m, FlagSend) {
		return ErrInval
	}
	if m.Flags, err = ep.txCheck(e, flags, explicit, sendMsgFlags, n, provider.CntrSend); err != nil {
		return err
	}
	if tagged {
		return e.tagged.TSend(m)
	}
	return e.p.Send(m)
}

// inject validates an inject call (buffer reusable on return, no
// completion) and hands it to the provider.
func (ep *Endpoint) inject(m provider.Msg, tagged bool) error {
	e, err := ep.ready()
	if err != nil {
		return err
	}
	if !e.msgCapable(tagged) {
		return ErrNoSys
	}
	if err = e.injectCheck(uint64(len(m.Buf)), m.Flags); err != nil {
		return err
	}
	// No descriptor check: the inject calls take none (the buffer is
	// copied before the call returns), even under FI_MR_LOCAL.
	m.Flags |= FlagInject
	if tagged {
		return e.tagged.TSend(m)
	}
	return e.p.Send(m)
}

// Send posts a message (fi_send). desc is the memory descriptor of buf
// (MR.Desc), or nil; it is required where the domain's MRMode has
// FI_MR_LOCAL. dest is the destination address (ignored on connected
// endpoints); ctx is reported in the completion. The caller owns buf again
// once the completion is read.
func (ep *Endpoint) Send(buf []byte, desc MRDesc, dest Addr, ctx any) error {
	if e := ep.readyFast(); e != nil && e.bsend != nil && desc == nil && e.msgCapable(false) &&
		!e.dom.mrLocal && uint64(len(buf)) <= e.maxMsg {
		// The provider's one-buffer path (provider.BufSender), after
		// send's checks: msgCapable, the size, descsOK (no descriptor,
		// no FI_MR_LOCAL) and txCheck.
		f, err := ep.txCheck(e, 0, false, sendMsgFlags, uint64(len(buf)), provider.CntrSend)
		if err != nil {
			return err
		}
		if f&(FlagInject|FlagRemoteCQData) == 0 {
			return e.bsend.SendBuf(buf, dest, ctx, f)
		}
	}
	return ep.send(provider.Msg{Buf: buf, Desc: desc, Addr: dest, Context: ctx}, 0, false, false)
}

// SendV posts a message gathered from iov (fi_sendv); desc is nil or holds
// one descriptor per buffer.
func (ep *Endpoint) SendV(iov [][]byte, desc []MRDesc, dest Addr, ctx any) error {
	return ep.send(provider.Msg{IOV: nonNil(iov), Descs: desc, Addr: dest, Context: ctx}, 0, false, false)
}

// SendMsg posts a message with explicit flags (fi_sendmsg): FI_REMOTE_CQ_DATA,
// FI_COMPLETION, FI_INJECT, FI_MORE, FI_FENCE and the completion levels.
func (ep *Endpoint) SendMsg(m *Msg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	return ep.send(provider.Msg{IOV: nonNil(m.IOV), Descs: m.Desc, Addr: m.Addr, Context: m.Context, Data: m.Data},
		flags, true, false)
}

// SendData posts a message with remote CQ data (fi_senddata).
func (ep *Endpoint) SendData(buf []byte, desc MRDesc, data uint64, dest Addr, ctx any) error {
	return ep.send(provider.Msg{Buf: buf, Desc: desc, Addr: dest, Context: ctx, Data: data}, FlagRemoteCQData, false, false)
}

// Inject sends a small message (at most the inject size) whose buffer may
// be reused as soon as the call returns; no completion is written
// (fi_inject).
func (ep *Endpoint) Inject(buf []byte, dest Addr) error {
	e := ep.readyFast()
	if e == nil {
		var err error
		if e, err = ep.ready(); err != nil {
			return err
		}
	}
	if e.inj != nil && e.msgCapable(false) && uint64(len(buf)) <= e.injectSize {
		// The provider's plain-inject path (provider.Injector), after
		// inject's checks; anything else takes inject, which reports it.
		return e.inj.Inject(buf, dest)
	}
	return ep.inject(provider.Msg{Buf: buf, Addr: dest}, false)
}

// InjectData is Inject with remote CQ data (fi_injectdata).
func (ep *Endpoint) InjectData(buf []byte, data uint64, dest Addr) error {
	return ep.inject(provider.Msg{Buf: buf, Addr: dest, Data: data, Flags: FlagRemoteCQData}, false)
}

// TSend posts a tagged message (fi_tsend).
func (ep *Endpoint) TSend(buf []byte, desc MRDesc, dest Addr, tag uint64, ctx any) error {
	return ep.send(provider.Msg{Buf: buf, Desc: desc, Addr: dest, Context: ctx, Tag: tag}, 0, false, true)
}

// TSendV posts a tagged message gathered from iov (fi_tsendv).
func (ep *Endpoint) TSendV(iov [][]byte, desc []MRDesc, dest Addr, tag uint64, ctx any) error {
	return ep.send(provider.Msg{IOV: nonNil(iov), Descs: desc, Addr: dest, Context: ctx, Tag: tag}, 0, false, true)
}

// TSendMsg posts a tagged message with explicit flags (fi_tsendmsg).
func (ep *Endpoint) TSendMsg(m *Msg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	return ep.send(provider.Msg{IOV: nonNil(m.IOV), Descs: m.Desc, Addr: m.Addr, Context: m.Context, Data: m.Data,
		Tag: m.Tag}, flags, true, true)
}

// TSendData posts a tagged message with remote CQ data (fi_tsenddata).
func (ep *Endpoint) TSendData(buf []byte, desc MRDesc, data uint64, dest Addr, tag uint64, ctx any) error {
	return ep.send(provider.Msg{Buf: buf, Desc: desc, Addr: dest, Context: ctx, Data: data, Tag: tag},
		FlagRemoteCQData, false, true)
}

// TInject is Inject for a tagged message (fi_tinject).
func (ep *Endpoint) TInject(buf []byte, dest Addr, tag uint64) error {
	return ep.inject(provider.Msg{Buf: buf, Addr: dest, Tag: tag}, true)
}

// TInjectData is TInject with remote CQ data (fi_tinjectdata).
func (ep *Endpoint) TInjectData(buf []byte, data uint64, dest Addr, tag uint64) error {
	return ep.inject(provider.Msg{Buf: buf, Addr: dest, Tag: tag, Data: data, Flags: FlagRemoteCQData}, true)
}

// ---- receives ----

// recv validates a receive and posts it. m points to the caller's
// composite literal, which stays on the stack (the queue copies what it
// keeps): the queue takes a pointer, so passing one saves a copy of the
// large Msg.
func (ep *Endpoint) recv(m *provider.Msg, flags Flags, explicit, tagged bool) error {
	e := ep.readyFast()
	if e == nil {
		var err error
		if e, err = ep.ready(); err != nil {
			return err
		}
	}
	if tagged {
		if e.caps&CapTagged == 0 {
			return ErrNoSys
		}
	} else if e.caps&CapMsg == 0 {
		return ErrNoSys
	}
	if e.peerRX {
		return ErrNoSys
	}
	if explicit && flags&^recvMsgFlags != 0 {
		return ErrBadFlags
	}
	if m.IOV != nil && len(m.IOV) > e.rxIOVLimit {
		return ErrInval
	}
	if !e.descsOK(m, FlagRecv) {
		return ErrInval
	}
	f := ep.rxFlags(e, flags, explicit)
	if f&(FlagClaim|FlagDiscard) != 0 && f&FlagPeek == 0 {
		if rc, ok := m.Context.(*RecvContext); ok {
			return e.claimBuffered(rc, m, f, tagged) // bufrecv.go
		}
	}
	if f&FlagMultiRecv != 0 && e.caps&CapMultiRecv == 0 {
		return ErrBadFlags
	}
	if m.Addr != AddrUnspec && e.caps&CapDirectedRecv == 0 {
		m.Addr = AddrUnspec
	}
	m.Flags = f
	return e.rq.Post(m, tagged)
}

// Recv posts a receive buffer (fi_recv). desc is buf's memory descriptor
// or nil (required under FI_MR_LOCAL). src restricts the sender when the
// endpoint has FI_DIRECTED_RECV; AddrUnspec accepts any sender. The caller
// owns buf again once the completion is read.
func (ep *Endpoint) Recv(buf []byte, desc MRDesc, src Addr, ctx any) error {
	if e := ep.readyFast(); e != nil && desc == nil && e.caps&CapMsg != 0 && !e.peerRX && !e.dom.mrLocal {
		// recv's checks for one buffer without a descriptor (descsOK
		// holds without FI_MR_LOCAL), and the queue's path that needs
		// no Msg; default op flags that make the receive more than a
		// plain one (FI_MULTI_RECV, FI_PEEK, ...) take recv.
		if f := ep.rxFlags(e, 0, false); f&(FlagMultiRecv|FlagPeek|FlagClaim|FlagDiscard) == 0 {
			if e.caps&CapDirectedRecv == 0 {
				src = AddrUnspec
			}
			return e.rq.PostBuf(buf, src, ctx, f)
		}
	}
	return ep.recv(&provider.Msg{Buf: buf, Desc: desc, Addr: src, Context: ctx}, 0, false, false)
}

// RecvV posts a scatter receive (fi_recvv).
func (ep *Endpoint) RecvV(iov [][]byte, desc []MRDesc, src Addr, ctx any) error {
	return ep.recv(&provider.Msg{IOV: nonNil(iov), Descs: desc, Addr: src, Context: ctx}, 0, false, false)
}

// RecvMsg posts a receive with explicit flags (fi_recvmsg): FI_COMPLETION,
// FI_MULTI_RECV, FI_MORE.
func (ep *Endpoint) RecvMsg(m *Msg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	return ep.recv(&provider.Msg{IOV: nonNil(m.IOV), Descs: m.Desc, Addr: m.Addr, Context: m.Context}, flags, true, false)
}

// TRecv posts a tagged receive (fi_trecv): it matches messages whose tag
// equals tag in the bits not set in ignore.
func (ep *Endpoint) TRecv(buf []byte, desc MRDesc, src Addr, tag, ignore uint64, ctx any) error {
	return ep.recv(&provider.Msg{Buf: buf, Desc: desc, Addr: src, Context: ctx, Tag: tag, Ignore: ignore}, 0, false, true)
}

// TRecvV posts a tagged scatter receive (fi_trecvv).
func (ep *Endpoint) TRecvV(iov [][]byte, desc []MRDesc, src Addr, tag, ignore uint64, ctx any) error {
	return ep.recv(&provider.Msg{IOV: nonNil(iov), Descs: desc, Addr: src, Context: ctx, Tag: tag, Ignore: ignore},
		0, false, true)
}

// TRecvMsg posts a tagged receive with explicit flags (fi_trecvmsg):
// FI_PEEK, FI_CLAIM, FI_DISCARD, FI_COMPLETION, FI_MULTI_RECV.
func (ep *Endpoint) TRecvMsg(m *Msg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	return ep.recv(&provider.Msg{IOV: m.IOV, Descs: m.Desc, Addr: m.Addr, Context: m.Context, Tag: m.Tag,
		Ignore: m.Ignore}, flags, true, true)
}

// ---- RMA (fi_rma(3)) ----

// rmaOp validates an RMA read or write and hands it to the provider.
// flags are the explicit flags of the *Msg calls (explicit) or the call's
// own flags added to the default op flags. The inject calls pass
// FlagInject and inject: no completion is written.
func (ep *Endpoint) rmaOp(m provider.Msg, flags Flags, explicit, write, inject bool) error {
	e, err := ep.ready()
	if err != nil {
		return err
	}
	if e.rma == nil || e.caps&CapRMA == 0 {
		return ErrNoSys
	}
	if m.IOV != nil && len(m.IOV) > e.txIOVLimit {
		return ErrInval
	}
	if m.RMA != nil && len(m.RMA) > e.rmaIOVLimit {
		return ErrInval
	}
	n := uint64(m.Len())
	if n > e.maxMsg {
		return ErrMsgSize
	}
	// The remote regions cover exactly the local buffers.
	if !rmaCovers(&m, n) {
		return ErrInval
	}
	if !write && explicit && flags&FlagInject != 0 {
		return ErrBadFlags // FI_INJECT applies to writes only (fi_rma(3))
	}
	access, cntr := FlagRead, provider.CntrRead
	if write {
		access, cntr = FlagWrite, provider.CntrWrite
	}
	if !inject && !e.descsOK(&m, access) { // the inject calls take no descriptor
		return ErrInval
	}
	if inject {
		if err = e.injectCheck(n, flags); err != nil {
			return err
		}
		m.Flags = flags
	} else if m.Flags, err = ep.txCheck(e, flags, explicit, sendMsgFlags, n, cntr); err != nil {
		return err
	}
	if write {
		return e.rma.Write(m)
	}
	m.Flags &^= FlagInject // a default op flag; reads have nothing to inject
	return e.rma.Read(m)
}

// RMARead reads remote memory into buf (fi_read): addr and key name the
// remote region (MR.Address and MR.Key at the peer). desc is buf's memory
// descriptor or nil (required under FI_MR_LOCAL).
func (ep *Endpoint) RMARead(buf []byte, desc MRDesc, src Addr, addr, key uint64, ctx any) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Desc: desc, Addr: src, Context: ctx,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, 0, false, false, false)
}

// RMAReadV reads remote memory into iov (fi_readv).
func (ep *Endpoint) RMAReadV(iov [][]byte, desc []MRDesc, src Addr, addr, key uint64, ctx any) error {
	iov = nonNil(iov)
	return ep.rmaOp(provider.Msg{IOV: iov, Descs: desc, Addr: src, Context: ctx,
		RMAOne: RMAIOV{Addr: addr, Len: iovLen(iov), Key: key}}, 0, false, false, false)
}

// RMAReadMsg reads remote memory with explicit flags (fi_readmsg); m.RMA
// names the remote regions.
func (ep *Endpoint) RMAReadMsg(m *Msg, flags Flags) error {
	if m == nil || len(m.RMA) == 0 {
		return ErrInval
	}
	return ep.rmaOp(provider.Msg{IOV: nonNil(m.IOV), Descs: m.Desc, Addr: m.Addr, Context: m.Context, RMA: m.RMA},
		flags, true, false, false)
}

// RMAWrite writes buf to remote memory (fi_write).
func (ep *Endpoint) RMAWrite(buf []byte, desc MRDesc, dest Addr, addr, key uint64, ctx any) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Desc: desc, Addr: dest, Context: ctx,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, 0, false, true, false)
}

// RMAWriteV writes iov to remote memory (fi_writev).
func (ep *Endpoint) RMAWriteV(iov [][]byte, desc []MRDesc, dest Addr, addr, key uint64, ctx any) error {
	iov = nonNil(iov)
	return ep.rmaOp(provider.Msg{IOV: iov, Descs: desc, Addr: dest, Context: ctx,
		RMAOne: RMAIOV{Addr: addr, Len: iovLen(iov), Key: key}}, 0, false, true, false)
}

// RMAWriteMsg writes remote memory with explicit flags (fi_writemsg).
func (ep *Endpoint) RMAWriteMsg(m *Msg, flags Flags) error {
	if m == nil || len(m.RMA) == 0 {
		return ErrInval
	}
	return ep.rmaOp(provider.Msg{IOV: nonNil(m.IOV), Descs: m.Desc, Addr: m.Addr, Context: m.Context, RMA: m.RMA,
		Data: m.Data}, flags, true, true, false)
}

// RMAWriteData writes buf to remote memory and delivers data to the
// target's CQ (fi_writedata).
func (ep *Endpoint) RMAWriteData(buf []byte, desc MRDesc, data uint64, dest Addr, addr, key uint64, ctx any) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Desc: desc, Addr: dest, Context: ctx, Data: data,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, FlagRemoteCQData, false, true, false)
}

// RMAInjectWrite is fi_inject_write: buf may be reused on return; no
// completion.
func (ep *Endpoint) RMAInjectWrite(buf []byte, dest Addr, addr, key uint64) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Addr: dest,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, FlagInject, true, true, true)
}

// RMAInjectWriteData is fi_inject_writedata: RMAInjectWrite with remote CQ
// data.
func (ep *Endpoint) RMAInjectWriteData(buf []byte, data uint64, dest Addr, addr, key uint64) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Addr: dest, Data: data,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, FlagInject|FlagRemoteCQData, true, true, true)
}

// rmaCovers reports whether m's remote regions (m.RMA, or m.RMAOne when
// it is nil) add up to exactly n, the length of its local buffers.
func rmaCovers(m *provider.Msg, n uint64) bool {
	if m.RMA == nil {
		return m.RMAOne.Len == n
	}
	var rl uint64
	for _, r := range m.RMA {
		rl += r.Len
	}
	return rl == n
}

func nonNil(iov [][]byte) [][]byte {
	if iov == nil {
		return [][]byte{}
	}
	return iov
}

// TxSizeLeft returns a lower bound on the number of transmit operations that
// may be posted without ErrAgain (fi_tx_size_left).
func (ep *Endpoint) TxSizeLeft() (int, error) {
	if ep == nil {
		return 0, ErrInval
	}
	e := ep.root()
	if !e.enabled.Load() {
		return 0, ErrOpBadState
	}
	if s, ok := e.p.(interface{ TxSizeLeft() int }); ok {
		return s.TxSizeLeft(), nil
	}
	if e.info.TxAttr != nil {
		return int(min(e.info.TxAttr.Size, 1<<30)), nil
	}
	return 0, nil
}

// RxSizeLeft returns a lower bound on the number of receives that may be
// posted without ErrAgain (fi_rx_size_left).
func (ep *Endpoint) RxSizeLeft() (int, error) {
	if ep == nil {
		return 0, ErrInval
	}
	e := ep.root()
	if !e.enabled.Load() {
		return 0, ErrOpBadState
	}
	if e.rq == nil {
		return 0, nil
	}
	if s, ok := any(e.rq).(interface{ SizeLeft() int }); ok {
		return s.SizeLeft(), nil
	}
	if e.info.RxAttr != nil {
		return int(min(e.info.RxAttr.Size, 1<<30)), nil
	}
	return 0, nil
}
