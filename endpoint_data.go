package fabric

import "github.com/gofabric/fabric/provider"

// txState checks that the endpoint can transmit and returns the endpoint
// that owns the provider object. It returns bare Errno values (data path).
func (ep *Endpoint) txReady() (*Endpoint, error) {
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
	return e.caps&CapMsg != 0
}

// send validates a transmit and hands it to the provider. m is passed by
// value so that nothing escapes to the heap.
func (ep *Endpoint) send(m provider.Msg, flags Flags, explicit, tagged bool) error {
	e, err := ep.txReady()
	if err != nil {
		return err
	}
	if !e.msgCapable(tagged) {
		return ErrNoSys
	}
	if explicit && flags&^sendMsgFlags != 0 {
		return ErrBadFlags
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
	f := ep.txFlags(e, flags, explicit)
	if f&FlagInject != 0 && n > e.injectSize {
		return ErrInval
	}
	if f&FlagRemoteCQData != 0 && e.cqDataSize == 0 {
		return ErrNoSys
	}
	if e.txCQ == nil && f&FlagCompletion != 0 && e.cntrs[provider.CntrSend] == nil {
		return ErrNoCQ
	}
	m.Flags = f
	if tagged {
		return e.tagged.TSend(m)
	}
	return e.p.Send(m)
}

func (ep *Endpoint) inject(m provider.Msg, tagged bool) error {
	e, err := ep.txReady()
	if err != nil {
		return err
	}
	if !e.msgCapable(tagged) {
		return ErrNoSys
	}
	if uint64(len(m.Buf)) > e.injectSize {
		return ErrInval
	}
	if m.Flags&FlagRemoteCQData != 0 && e.cqDataSize == 0 {
		return ErrNoSys
	}
	m.Flags |= FlagInject
	if tagged {
		return e.tagged.TSend(m)
	}
	return e.p.Send(m)
}

// Send posts a message (fi_send). desc is the buffer's memory descriptor
// or nil; dest is the destination address (ignored on connected
// endpoints); ctx is reported in the completion.
func (ep *Endpoint) Send(buf []byte, desc any, dest Addr, ctx any) error {
	return ep.send(provider.Msg{Buf: buf, Addr: dest, Context: ctx}, 0, false, false)
}

// SendV posts a message gathered from iov (fi_sendv).
func (ep *Endpoint) SendV(iov [][]byte, desc []any, dest Addr, ctx any) error {
	if iov == nil {
		iov = [][]byte{}
	}
	return ep.send(provider.Msg{IOV: iov, Addr: dest, Context: ctx}, 0, false, false)
}

// SendMsg posts a message with explicit flags (fi_sendmsg): FI_REMOTE_CQ_DATA,
// FI_COMPLETION, FI_INJECT, FI_MORE, FI_FENCE and the completion levels.
func (ep *Endpoint) SendMsg(m *Msg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	iov := m.IOV
	if iov == nil {
		iov = [][]byte{}
	}
	return ep.send(provider.Msg{IOV: iov, Addr: m.Addr, Context: m.Context, Data: m.Data}, flags, true, false)
}

// SendData posts a message with remote CQ data (fi_senddata).
func (ep *Endpoint) SendData(buf []byte, desc any, data uint64, dest Addr, ctx any) error {
	return ep.send(provider.Msg{Buf: buf, Addr: dest, Context: ctx, Data: data}, FlagRemoteCQData, false, false)
}

// Inject sends a small message (at most the inject size) whose buffer may
// be reused as soon as the call returns; no completion is written
// (fi_inject).
func (ep *Endpoint) Inject(buf []byte, dest Addr) error {
	return ep.inject(provider.Msg{Buf: buf, Addr: dest}, false)
}

// InjectData is Inject with remote CQ data (fi_injectdata).
func (ep *Endpoint) InjectData(buf []byte, data uint64, dest Addr) error {
	return ep.inject(provider.Msg{Buf: buf, Addr: dest, Data: data, Flags: FlagRemoteCQData}, false)
}

// TSend posts a tagged message (fi_tsend).
func (ep *Endpoint) TSend(buf []byte, desc any, dest Addr, tag uint64, ctx any) error {
	return ep.send(provider.Msg{Buf: buf, Addr: dest, Context: ctx, Tag: tag}, 0, false, true)
}

// TSendV posts a tagged message gathered from iov (fi_tsendv).
func (ep *Endpoint) TSendV(iov [][]byte, desc []any, dest Addr, tag uint64, ctx any) error {
	if iov == nil {
		iov = [][]byte{}
	}
	return ep.send(provider.Msg{IOV: iov, Addr: dest, Context: ctx, Tag: tag}, 0, false, true)
}

// TSendMsg posts a tagged message with explicit flags (fi_tsendmsg).
func (ep *Endpoint) TSendMsg(m *Msg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	iov := m.IOV
	if iov == nil {
		iov = [][]byte{}
	}
	return ep.send(provider.Msg{IOV: iov, Addr: m.Addr, Context: m.Context, Data: m.Data, Tag: m.Tag},
		flags, true, true)
}

// TSendData posts a tagged message with remote CQ data (fi_tsenddata).
func (ep *Endpoint) TSendData(buf []byte, desc any, data uint64, dest Addr, tag uint64, ctx any) error {
	return ep.send(provider.Msg{Buf: buf, Addr: dest, Context: ctx, Data: data, Tag: tag}, FlagRemoteCQData, false, true)
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

func (ep *Endpoint) recv(m provider.Msg, flags Flags, explicit, tagged bool) error {
	e := ep.root()
	if !e.enabled.Load() {
		if e.lc.isClosed() || ep.lc.isClosed() {
			return ErrClosed
		}
		return ErrOpBadState
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
	f := ep.rxFlags(e, flags, explicit)
	if f&FlagMultiRecv != 0 && e.caps&CapMultiRecv == 0 {
		return ErrBadFlags
	}
	if m.Addr != AddrUnspec && e.caps&CapDirectedRecv == 0 {
		m.Addr = AddrUnspec
	}
	m.Flags = f
	return e.rq.Post(&m, tagged)
}

// Recv posts a receive buffer (fi_recv). src restricts the sender when the
// endpoint has FI_DIRECTED_RECV; AddrUnspec accepts any sender.
func (ep *Endpoint) Recv(buf []byte, desc any, src Addr, ctx any) error {
	return ep.recv(provider.Msg{Buf: buf, Addr: src, Context: ctx}, 0, false, false)
}

// RecvV posts a scatter receive (fi_recvv).
func (ep *Endpoint) RecvV(iov [][]byte, desc []any, src Addr, ctx any) error {
	if iov == nil {
		iov = [][]byte{}
	}
	return ep.recv(provider.Msg{IOV: iov, Addr: src, Context: ctx}, 0, false, false)
}

// RecvMsg posts a receive with explicit flags (fi_recvmsg): FI_COMPLETION,
// FI_MULTI_RECV, FI_MORE.
func (ep *Endpoint) RecvMsg(m *Msg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	iov := m.IOV
	if iov == nil {
		iov = [][]byte{}
	}
	return ep.recv(provider.Msg{IOV: iov, Addr: m.Addr, Context: m.Context}, flags, true, false)
}

// TRecv posts a tagged receive (fi_trecv): it matches messages whose tag
// equals tag in the bits not set in ignore.
func (ep *Endpoint) TRecv(buf []byte, desc any, src Addr, tag, ignore uint64, ctx any) error {
	return ep.recv(provider.Msg{Buf: buf, Addr: src, Context: ctx, Tag: tag, Ignore: ignore}, 0, false, true)
}

// TRecvV posts a tagged scatter receive (fi_trecvv).
func (ep *Endpoint) TRecvV(iov [][]byte, desc []any, src Addr, tag, ignore uint64, ctx any) error {
	if iov == nil {
		iov = [][]byte{}
	}
	return ep.recv(provider.Msg{IOV: iov, Addr: src, Context: ctx, Tag: tag, Ignore: ignore}, 0, false, true)
}

// TRecvMsg posts a tagged receive with explicit flags (fi_trecvmsg):
// FI_PEEK, FI_CLAIM, FI_DISCARD, FI_COMPLETION, FI_MULTI_RECV.
func (ep *Endpoint) TRecvMsg(m *Msg, flags Flags) error {
	if m == nil {
		return ErrInval
	}
	return ep.recv(provider.Msg{IOV: m.IOV, Addr: m.Addr, Context: m.Context, Tag: m.Tag, Ignore: m.Ignore},
		flags, true, true)
}

// ---- RMA ----

func (ep *Endpoint) rmaOp(m provider.Msg, flags Flags, explicit, write bool) error {
	e, err := ep.txReady()
	if err != nil {
		return err
	}
	if e.rma == nil || e.caps&CapRMA == 0 {
		return ErrNoSys
	}
	if explicit && flags&^sendMsgFlags != 0 {
		return ErrBadFlags
	}
	if m.IOV != nil && len(m.IOV) > e.txIOVLimit {
		return ErrInval
	}
	if m.RMA != nil && len(m.RMA) > e.rmaIOVLimit {
		return ErrInval
	}
	if uint64(m.Len()) > e.maxMsg {
		return ErrMsgSize
	}
	// The remote regions cover exactly the local buffers.
	if m.RMA == nil {
		if m.RMAOne.Len != uint64(m.Len()) {
			return ErrInval
		}
	} else {
		var rl uint64
		for _, r := range m.RMA {
			rl += r.Len
		}
		if rl != uint64(m.Len()) {
			return ErrInval
		}
	}
	f := ep.txFlags(e, flags, explicit)
	if m.Flags&FlagInject != 0 {
		// fi_inject_write(data): no completion, whatever the binding.
		f = (f | m.Flags) &^ FlagCompletion
	}
	if !write {
		// FI_INJECT applies to writes only (fi_rma(3)).
		if explicit && flags&FlagInject != 0 {
			return ErrBadFlags
		}
		f &^= FlagInject
	}
	if f&FlagInject != 0 && uint64(m.Len()) > e.injectSize {
		return ErrInval
	}
	if f&FlagRemoteCQData != 0 && e.cqDataSize == 0 {
		return ErrNoSys
	}
	m.Flags = f
	if write {
		return e.rma.Write(m)
	}
	return e.rma.Read(m)
}

// Read reads remote memory into buf (fi_read): addr and key name the remote
// region.
func (ep *Endpoint) Read(buf []byte, desc any, src Addr, addr, key uint64, ctx any) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Addr: src, Context: ctx,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, 0, false, false)
}

// ReadV reads remote memory into iov (fi_readv).
func (ep *Endpoint) ReadV(iov [][]byte, desc []any, src Addr, addr, key uint64, ctx any) error {
	if iov == nil {
		iov = [][]byte{}
	}
	return ep.rmaOp(provider.Msg{IOV: iov, Addr: src, Context: ctx,
		RMAOne: RMAIOV{Addr: addr, Len: iovLen(iov), Key: key}}, 0, false, false)
}

// ReadMsg is fi_readmsg.
func (ep *Endpoint) ReadMsg(m *Msg, flags Flags) error {
	if m == nil || len(m.RMA) == 0 {
		return ErrInval
	}
	return ep.rmaOp(provider.Msg{IOV: nonNil(m.IOV), Addr: m.Addr, Context: m.Context, RMA: m.RMA},
		flags, true, false)
}

// Write writes buf to remote memory (fi_write).
func (ep *Endpoint) Write(buf []byte, desc any, dest Addr, addr, key uint64, ctx any) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Addr: dest, Context: ctx,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, 0, false, true)
}

// WriteV writes iov to remote memory (fi_writev).
func (ep *Endpoint) WriteV(iov [][]byte, desc []any, dest Addr, addr, key uint64, ctx any) error {
	iov = nonNil(iov)
	return ep.rmaOp(provider.Msg{IOV: iov, Addr: dest, Context: ctx,
		RMAOne: RMAIOV{Addr: addr, Len: iovLen(iov), Key: key}}, 0, false, true)
}

// WriteMsg is fi_writemsg.
func (ep *Endpoint) WriteMsg(m *Msg, flags Flags) error {
	if m == nil || len(m.RMA) == 0 {
		return ErrInval
	}
	return ep.rmaOp(provider.Msg{IOV: nonNil(m.IOV), Addr: m.Addr, Context: m.Context, RMA: m.RMA, Data: m.Data},
		flags, true, true)
}

// WriteData writes buf to remote memory and delivers data to the target's
// CQ (fi_writedata).
func (ep *Endpoint) WriteData(buf []byte, desc any, data uint64, dest Addr, addr, key uint64, ctx any) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Addr: dest, Context: ctx, Data: data,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, FlagRemoteCQData, false, true)
}

// InjectWrite is fi_inject_write: buf may be reused on return; no completion.
func (ep *Endpoint) InjectWrite(buf []byte, dest Addr, addr, key uint64) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Addr: dest, Flags: FlagInject,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, 0, true, true)
}

// InjectWriteData is fi_inject_writedata.
func (ep *Endpoint) InjectWriteData(buf []byte, data uint64, dest Addr, addr, key uint64) error {
	return ep.rmaOp(provider.Msg{Buf: buf, Addr: dest, Data: data, Flags: FlagInject,
		RMAOne: RMAIOV{Addr: addr, Len: uint64(len(buf)), Key: key}}, FlagRemoteCQData, true, true)
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
