package sepctx

import (
	"encoding/binary"
	"sync"

	"github.com/gofabric/fabric/internal/ipaddr"
	"github.com/gofabric/fabric/provider"
)

// Named is what a scalable endpoint opens at consecutive addresses: a
// provider endpoint, or a socket.
type Named interface {
	Name() ([]byte, error)
	Close() error
}

// Ctx is the provider endpoint type of a provider's receive contexts.
type Ctx interface {
	comparable
	provider.Endpoint
}

// Ops is what differs from provider to provider in a scalable endpoint:
// how the address of a context is derived and how the provider endpoint
// of a context is opened.
type Ops[E Ctx] struct {
	// Derive is the address of receive context i of the scalable
	// endpoint at base. Receive context i is opened at Derive(name, i)
	// (i > 0, and every i when it is opened again).
	Derive Derive

	// OpenRx opens the provider endpoint of receive context index with
	// ci, the scalable endpoint's info with the context's address as
	// ci.SrcAddr and the context's attributes (CtxInfo).
	OpenRx func(index int, ci *provider.Info) (E, error)

	// OpenTx opens the provider endpoint of transmit context index with
	// ci, as OpenRx does (OpenRx itself if OpenTx is nil); ci.SrcAddr is
	// TxAddr(name, index), or the scalable endpoint's source address if
	// TxAddr is nil.
	OpenTx func(index int, ci *provider.Info) (provider.Endpoint, error)

	// TxAddr, if not nil, is the source address of transmit context
	// index of the scalable endpoint at name.
	TxAddr func(name []byte, index int) []byte

	// TxProgress is NewTx's progress: false when a transmit context
	// shares its socket with a receive context, which receives.
	TxProgress bool

	// Close, if not nil, releases what the provider holds beyond the
	// receive contexts, once, when the scalable endpoint is closed.
	Close func()
}

// Sep is a scalable endpoint (provider.ScalableEndpoint) whose contexts
// are provider endpoints of type E opened through Ops. It holds the
// receive contexts opened with it (Open) until RxContext hands them out;
// a receive context not opened in advance, closed and opened again, or
// asked for with receive attributes of its own, is opened anew at its
// address (the one opened in advance, if any, gives way). Transmit
// contexts are opened when asked for.
type Sep[E Ctx] struct {
	info *provider.Info
	name []byte
	ops  Ops[E]

	mu     sync.Mutex
	closed bool
	rx     []E // receive contexts opened in advance and not yet handed out
}

var _ provider.ScalableEndpoint = (*Sep[provider.Endpoint])(nil)

// DerivePort is the Derive of the providers on IP sockets (udp, tcp):
// receive context idx of the scalable endpoint at the sockaddr base is
// at the port base+idx of the same IP address (nil beyond 65535).
func DerivePort(base []byte, idx int) []byte {
	if len(base) < 4 {
		return nil
	}
	p := int(binary.BigEndian.Uint16(base[2:])) + idx
	if p > 0xffff {
		return nil
	}
	return ipaddr.WithPort(base, uint16(p))
}

// IPSource returns the source address of a scalable endpoint on IP
// sockets (udp, tcp): info.SrcAddr, or def(info) if info has none; fixed
// if it gives a port. EINVAL if it is not a sockaddr of info's format.
func IPSource(info *provider.Info, def func(*provider.Info) []byte) (src []byte, fixed bool, err error) {
	src = info.SrcAddr
	if src == nil {
		src = def(info)
	}
	sa, f, ok := ipaddr.Decode(src)
	if !ok || !ipaddr.FormatOK(info.AddrFormat, f) {
		return nil, false, provider.EINVAL
	}
	return src, sa.AP.Port() != 0, nil
}

// RxCount returns the number of receive contexts info (with EPAttr) asks
// for, at least 1; EINVAL if it asks for more than maxCtx transmit or
// receive contexts.
func RxCount(info *provider.Info, maxCtx int) (int, error) {
	n := int(max(info.EPAttr.RxCtxCnt, 1))
	if info.EPAttr.TxCtxCnt > uint64(maxCtx) || n > maxCtx {
		return 0, provider.EINVAL
	}
	return n, nil
}

// Retry calls open until it succeeds, at most tries times, while it fails
// with EADDRINUSE; once only if fixed (the address was given, not
// picked). It returns open's last error.
func Retry(tries int, fixed bool, open func() error) error {
	var err error
	for try := 0; try < tries; try++ {
		if err = open(); err == nil || fixed || err != provider.EADDRINUSE {
			break
		}
	}
	return err
}

// OpenConsecutive opens n objects at consecutive addresses: the first at
// src (which may leave a part, a port, for the system to pick), object i
// at derive(name, i), where name is the first object's address, which it
// returns. EADDRINUSE if derive has no address for i. On error it closes
// what it opened.
func OpenConsecutive[T Named](src []byte, n int, derive Derive, open func(i int, src []byte) (T, error)) ([]T, []byte, error) {
	first, err := open(0, src)
	if err != nil {
		return nil, nil, err
	}
	all := []T{first}
	name, err := first.Name()
	if err != nil {
		closeAll(all)
		return nil, nil, err
	}
	for i := 1; i < n; i++ {
		a := derive(name, i)
		if a == nil {
			closeAll(all)
			return nil, nil, provider.EADDRINUSE
		}
		o, err := open(i, a)
		if err != nil {
			closeAll(all)
			return nil, nil, err
		}
		all = append(all, o)
	}
	return all, name, nil
}

func closeAll[T Named](all []T) {
	for _, o := range all {
		o.Close()
	}
}

// CtxInfo returns the info of a context of the scalable endpoint whose
// info is info: a copy with source address src (if not nil), the
// context's own attributes ta and ra (where not nil) and one context of
// each kind.
func CtxInfo(info *provider.Info, src []byte, ta *provider.TxAttr, ra *provider.RxAttr) *provider.Info {
	ci := info.Dup()
	if src != nil {
		ci.SrcAddr = src
	}
	if ta != nil {
		t := *ta
		ci.TxAttr = &t
	}
	if ra != nil {
		r := *ra
		ci.RxAttr = &r
	}
	ci.EPAttr.TxCtxCnt, ci.EPAttr.RxCtxCnt = 1, 1
	return ci
}

// New returns a scalable endpoint with info (with EPAttr) at address
// name, with no receive context opened in advance: RxContext opens them.
// It keeps a copy of info and name.
func New[E Ctx](info *provider.Info, name []byte, ops Ops[E]) *Sep[E] {
	n := int(max(info.EPAttr.RxCtxCnt, 1))
	return &Sep[E]{info: info.Dup(), name: append([]byte(nil), name...), ops: ops, rx: make([]E, n)}
}

// Open returns a scalable endpoint with info (with EPAttr) whose n
// receive contexts are opened now, at consecutive addresses from src
// (OpenConsecutive), so that what is sent to them waits until they are
// handed out. Its address is receive context 0's.
func Open[E Ctx](info *provider.Info, src []byte, n int, ops Ops[E]) (*Sep[E], error) {
	rx, name, err := OpenConsecutive(src, n, ops.Derive, func(i int, a []byte) (E, error) {
		return ops.OpenRx(i, CtxInfo(info, a, nil, nil))
	})
	if err != nil {
		return nil, err
	}
	s := New(info, name, ops)
	copy(s.rx, rx)
	return s, nil
}

// TxContext opens transmit context index (Ops.OpenTx), wrapped by NewTx.
func (s *Sep[E]) TxContext(index int, attr *provider.TxAttr) (provider.Endpoint, error) {
	if index < 0 || uint64(index) >= max(s.info.EPAttr.TxCtxCnt, 1) {
		return nil, provider.EINVAL
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, provider.EBADF
	}
	var src []byte
	if s.ops.TxAddr != nil {
		src = s.ops.TxAddr(s.name, index)
	}
	ci := CtxInfo(s.info, src, attr, nil)
	var ep provider.Endpoint
	var err error
	if s.ops.OpenTx != nil {
		ep, err = s.ops.OpenTx(index, ci)
	} else {
		ep, err = s.ops.OpenRx(index, ci)
	}
	if err != nil {
		return nil, err
	}
	return NewTx(ep, s.ops.Derive, s.name, s.ops.TxProgress), nil
}

// RxContext hands out receive context index, the one opened in advance
// or one opened anew (Ops.OpenRx), wrapped by NewRx.
func (s *Sep[E]) RxContext(index int, attr *provider.RxAttr) (provider.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, provider.EBADF
	}
	if index < 0 || index >= len(s.rx) {
		return nil, provider.EINVAL
	}
	var none E
	ep := s.rx[index]
	if ep == none || attr != nil && s.info.RxAttr != nil && *attr != *s.info.RxAttr {
		if ep != none {
			ep.Close()
			s.rx[index] = none
		}
		var err error
		if ep, err = s.ops.OpenRx(index, CtxInfo(s.info, s.ops.Derive(s.name, index), nil, attr)); err != nil {
			return nil, err
		}
	}
	s.rx[index] = none
	return NewRx(ep, s.name, nil), nil
}

// Name returns the scalable endpoint's address (receive context 0's).
func (s *Sep[E]) Name() ([]byte, error) { return append([]byte(nil), s.name...), nil }

// Enable has nothing to start: the contexts are enabled one by one.
func (s *Sep[E]) Enable(provider.AVView) error { return nil }

// Close closes the receive contexts never handed out, then calls
// Ops.Close (the root package closed every context); EBADF the second
// time.
func (s *Sep[E]) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return provider.EBADF
	}
	s.closed = true
	var none E
	for i, ep := range s.rx {
		if ep != none {
			ep.Close()
			s.rx[i] = none
		}
	}
	if s.ops.Close != nil {
		s.ops.Close()
	}
	return nil
}
