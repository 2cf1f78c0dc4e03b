package chaos

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/gofabric/fabric/provider"
)

// Trace mode (Config.Trace, FI_CHAOS_TRACE) logs, as libfabric's trace
// hook does, every transmit the application posts, every control call of
// an endpoint (enable, connect, accept, shutdown, cancel, close) and every completion the
// endpoint's CQs receive, through the library's logging (provider.Logger:
// slog, under FI_LOG_LEVEL, FI_LOG_PROV=chaos and FI_LOG_SUBSYS), at
// libfabric's trace level (FI_LOG_LEVEL=trace). Each record carries the
// endpoint's number (ep=, in order of opening under the hook) and the
// time it was logged (slog's time).

// traceOp logs a transmit as the application posted it, with what the
// call returned (err=, 0 for success) and how long it took (dur=).
func (st *state) traceOp(e *endpoint, o *op, err error) {
	if !log.Enabled(provider.LevelTrace, provider.SubsysEPData) {
		return
	}
	attrs := []slog.Attr{slog.Uint64("ep", e.id), slog.String("over", st.prov),
		slog.Uint64("dest", uint64(o.addr())), slog.String("flags", o.flags().String()),
		slog.Duration("dur", time.Since(o.start)), slog.Int("err", errnoInt(err))}
	if o.kind == opAtomic {
		attrs = append(attrs, slog.String("kind", o.a.Kind.String()), slog.String("op", o.a.Op.String()),
			slog.Uint64("count", o.a.Count))
	} else {
		attrs = append(attrs, slog.Int("len", o.m.Len()))
		if o.kind == opTSend {
			attrs = append(attrs, slog.Uint64("tag", o.m.Tag))
		}
	}
	if c := o.ctx(); c != nil {
		attrs = append(attrs, ctxAttr(c))
	}
	log.Trace(provider.SubsysEPData, opNames[o.kind], attrs...)
}

// traceEnd logs the completion the hook itself wrote for o (an injected
// error, a cut or dropped transmit; err 0 for success).
func (st *state) traceEnd(e *endpoint, o *op, err provider.Errno) {
	if !st.trace || !log.Enabled(provider.LevelTrace, provider.SubsysCQ) {
		return
	}
	attrs := []slog.Attr{slog.Uint64("ep", e.id), slog.String("op", opNames[o.kind]),
		slog.String("flags", o.compFlags().String()), slog.Bool("injected", true)}
	if err != 0 {
		attrs = append(attrs, slog.Int("err", int(err)), slog.String("error", err.Error()))
	}
	if !o.start.IsZero() {
		attrs = append(attrs, slog.Duration("elapsed", time.Since(o.start)))
	}
	if c := o.ctx(); c != nil {
		attrs = append(attrs, ctxAttr(c))
	}
	msg := "completion"
	if err != 0 {
		msg = "error completion"
	}
	log.Trace(provider.SubsysCQ, msg, attrs...)
}

// traceCall logs a control call of an endpoint.
func (st *state) traceCall(e *endpoint, call string, peer []byte, err error) {
	if !st.trace || !log.Enabled(provider.LevelTrace, provider.SubsysEPCtrl) {
		return
	}
	attrs := []slog.Attr{slog.Uint64("ep", e.id), slog.String("over", st.prov), slog.Int("err", errnoInt(err))}
	if peer != nil {
		attrs = append(attrs, slog.String("addr", hexAddr(peer)))
	}
	log.Trace(provider.SubsysEPCtrl, call, attrs...)
}

func hexAddr(b []byte) string { return hex.EncodeToString(b) }

// errnoInt is the libfabric error number of err (0 for nil, -1 for an
// error that is not an Errno).
func errnoInt(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := err.(provider.Errno); ok {
		return int(e)
	}
	return -1
}

// traceResources replaces the CQs of r by ones that log each completion
// written into them. (Receive completions then take the general path of
// the receive queue: the room reserved for them in the root's CQ is given
// back and the entry written beyond it, which a CQ with resource
// management keeps; tracing changes no result.)
func (st *state) traceResources(e *endpoint, r *provider.Resources) {
	if r.TxCQ != nil {
		r.TxCQ = wrapCQ(traceCQ{st: st, e: e, c: r.TxCQ, dir: "tx"})
	}
	if r.RxCQ != nil {
		r.RxCQ = wrapCQ(traceCQ{st: st, e: e, c: r.RxCQ, dir: "rx"})
	}
}

// traceCQ logs the completions written to c.
type traceCQ struct {
	st  *state
	e   *endpoint
	c   provider.CQOwner
	dir string
}

func (t traceCQ) log(ctx any, flags provider.Flags, length uint64, tag uint64, src provider.Addr, err provider.Errno, reserved bool) {
	if !log.Enabled(provider.LevelTrace, provider.SubsysCQ) {
		return
	}
	attrs := []slog.Attr{slog.Uint64("ep", t.e.id), slog.String("cq", t.dir), slog.String("flags", flags.String()),
		slog.Uint64("len", length), slog.Bool("reserved", reserved)}
	if flags&provider.FlagTagged != 0 {
		attrs = append(attrs, slog.Uint64("tag", tag))
	}
	if src != provider.AddrNotAvail {
		attrs = append(attrs, slog.Uint64("src", uint64(src)))
	}
	if ctx != nil {
		attrs = append(attrs, ctxAttr(ctx))
	}
	msg := "completion"
	if err != 0 {
		msg = "error completion"
		attrs = append(attrs, slog.Int("err", int(err)), slog.String("error", err.Error()))
	}
	log.Trace(provider.SubsysCQ, msg, attrs...)
}

func (t traceCQ) Write(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, src provider.Addr) error {
	t.log(ctx, flags, length, tag, src, 0, false)
	return t.c.Write(ctx, flags, length, buf, data, tag, src)
}

func (t traceCQ) WriteErr(e *provider.CQErrEntry) error {
	t.log(e.OpContext, e.Flags, e.Len, e.Tag, e.Src, e.Err, false)
	return t.c.WriteErr(e)
}

// The optional CQOwner extensions the root and providers look for
// (CQReserver, UnknownSrcWriter, RoomNotifier), forwarded where the
// wrapped CQ has them.
type (
	resFwd  struct{ t traceCQ }
	srcFwd  struct{ t traceCQ }
	roomFwd struct{ r provider.RoomNotifier }
)

func (f resFwd) Reserve() bool { return f.t.c.(provider.CQReserver).Reserve() }
func (f resFwd) Unreserve()    { f.t.c.(provider.CQReserver).Unreserve() }
func (f resFwd) Full() bool    { return f.t.c.(provider.CQReserver).Full() }
func (f resFwd) WriteReserved(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, src provider.Addr) error {
	f.t.log(ctx, flags, length, tag, src, 0, true)
	return f.t.c.(provider.CQReserver).WriteReserved(ctx, flags, length, buf, data, tag, src)
}
func (f resFwd) WriteErrReserved(e *provider.CQErrEntry) error {
	f.t.log(e.OpContext, e.Flags, e.Len, e.Tag, e.Src, e.Err, true)
	return f.t.c.(provider.CQReserver).WriteErrReserved(e)
}
func (f srcFwd) WriteUnknownSrc(ctx any, flags provider.Flags, length uint64, buf []byte, data, tag uint64, raw []byte) error {
	f.t.log(ctx, flags, length, tag, provider.AddrNotAvail, provider.EADDRNOTAVAIL, false)
	return f.t.c.(provider.UnknownSrcWriter).WriteUnknownSrc(ctx, flags, length, buf, data, tag, raw)
}
func (f roomFwd) NotifyRoom(kick chan<- struct{}) bool { return f.r.NotifyRoom(kick) }

type (
	cqR struct {
		traceCQ
		resFwd
	}
	cqS struct {
		traceCQ
		srcFwd
	}
	cqN struct {
		traceCQ
		roomFwd
	}
	cqRS struct {
		traceCQ
		resFwd
		srcFwd
	}
	cqRN struct {
		traceCQ
		resFwd
		roomFwd
	}
	cqSN struct {
		traceCQ
		srcFwd
		roomFwd
	}
	cqRSN struct {
		traceCQ
		resFwd
		srcFwd
		roomFwd
	}
)

// wrapCQ returns t with exactly the optional extensions of t.c.
func wrapCQ(t traceCQ) provider.CQOwner {
	_, r := t.c.(provider.CQReserver)
	_, s := t.c.(provider.UnknownSrcWriter)
	n, nok := t.c.(provider.RoomNotifier)
	rf, sf, nf := resFwd{t}, srcFwd{t}, roomFwd{n}
	switch {
	case r && s && nok:
		return cqRSN{t, rf, sf, nf}
	case r && s:
		return cqRS{t, rf, sf}
	case r && nok:
		return cqRN{t, rf, nf}
	case s && nok:
		return cqSN{t, sf, nf}
	case r:
		return cqR{t, rf}
	case s:
		return cqS{t, sf}
	case nok:
		return cqN{t, nf}
	}
	return t
}

// ctxAttr is the context= attribute of a record: the value of a number or
// string, otherwise the context's type (and address, for a pointer). The
// application's objects are not formatted: it may be changing them.
func ctxAttr(c any) slog.Attr {
	switch v := c.(type) {
	case int:
		return slog.Int("context", v)
	case int64:
		return slog.Int64("context", v)
	case uint64:
		return slog.Uint64("context", v)
	case string:
		return slog.String("context", v)
	}
	if rv := reflect.ValueOf(c); rv.Kind() == reflect.Pointer || rv.Kind() == reflect.UnsafePointer {
		return slog.String("context", fmt.Sprintf("%T(%#x)", c, rv.Pointer()))
	}
	return slog.String("context", fmt.Sprintf("%T", c))
}
