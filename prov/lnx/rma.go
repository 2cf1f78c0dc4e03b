package lnx

import (
	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/provider"
)

// RMA and atomics. A remote access arrives at one of the target's linked
// endpoints, which checks the key against its own domain's registrations.
// The lnx domain shares its registration table with the tcp domain
// (provider.MRSharer), which the shm domain imports as a peer domain: a
// region registered through the lnx domain is one registration of all
// three, its key valid on both paths and its descriptor accepted by both
// linked endpoints. Operations are posted on the linked endpoint of the
// destination's path through the root package's *Msg calls with the
// effective flags lnx was given; completions, counters (FI_READ,
// FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE) and remote CQ data reach the
// lnx objects through the peer imports, as for messages.

var (
	_ provider.RMA          = (*endpoint)(nil)
	_ provider.Atomic       = (*endpoint)(nil)
	_ provider.AtomicDomain = (*domain)(nil)
	_ provider.MRSharer     = (*domain)(nil)
)

// MRDomain is provider.MRSharer: the lnx domain's registrations are the
// tcp domain's (and so the shm domain's, which imports it).
func (d *domain) MRDomain() any { return d.tcpDom }

// rmaMsg is m as the root's RMA *Msg calls take it.
func rmaMsg(m *provider.Msg) *fabric.Msg {
	fm := &fabric.Msg{IOV: m.IOV, Desc: m.Descs, Addr: m.Addr, Context: m.Context, Data: m.Data, RMA: m.RMA}
	if m.IOV == nil {
		fm.IOV = [][]byte{m.Buf}
		if m.Desc != nil {
			fm.Desc = []fabric.MRDesc{m.Desc}
		}
	}
	if m.RMA == nil {
		fm.RMA = []fabric.RMAIOV{m.RMAOne}
	}
	return fm
}

// Read is fi_read and its forms, posted on the path of m.Addr.
func (e *endpoint) Read(m provider.Msg) error {
	return e.route(m.Addr).RMAReadMsg(rmaMsg(&m), m.Flags)
}

// Write is fi_write and its forms (writedata, inject_write ...), posted
// on the path of m.Addr.
func (e *endpoint) Write(m provider.Msg) error {
	return e.route(m.Addr).RMAWriteMsg(rmaMsg(&m), m.Flags)
}

// bufs returns b as a vector with its descriptors.
func bufs(b *provider.AtomicBufs) ([][]byte, []fabric.MRDesc) {
	if b.IOV != nil {
		return b.IOV, b.Descs
	}
	if b.Buf == nil {
		return nil, nil
	}
	var d []fabric.MRDesc
	if b.Desc != nil {
		d = []fabric.MRDesc{b.Desc}
	}
	return [][]byte{b.Buf}, d
}

// Atomic is every fi_atomic(3) call, posted on the path of m.Addr.
func (e *endpoint) Atomic(m provider.AtomicMsg) error {
	ep := e.route(m.Addr)
	iov, desc := bufs(&m.Operand)
	fm := &fabric.MsgAtomic{IOV: iov, Desc: desc, Addr: m.Addr, RMA: m.RMA, Datatype: m.Datatype, Op: m.Op,
		Context: m.Context, Data: m.Data}
	if m.RMA == nil {
		fm.RMA = []fabric.RMAIOC{m.RMAOne}
	}
	switch m.Kind {
	case provider.AtomicFetch:
		rv, rd := bufs(&m.Result)
		return ep.FetchAtomicMsg(fm, rv, rd, m.Flags)
	case provider.AtomicCompare:
		cv, cd := bufs(&m.Compare)
		rv, rd := bufs(&m.Result)
		return ep.CompareAtomicMsg(fm, cv, cd, rv, rd, m.Flags)
	}
	return ep.AtomicMsg(fm, m.Flags)
}

// atomicTable is what both linked domains support: for each family and
// operation, the attributes per datatype (Count 0: not supported).
type atomicTable [3][provider.AtomicOpLast][]provider.AtomicAttr

// queryBoth fills t with the intersection of the linked domains' answers
// (untagged; atomics on tagged receive buffers are not offered).
func (d *domain) queryBoth() *atomicTable {
	t := new(atomicTable)
	flags := [3]fabric.Flags{provider.AtomicBase: 0, provider.AtomicFetch: fabric.FlagFetchAtomic,
		provider.AtomicCompare: fabric.FlagCompareAtomic}
	for k := range t {
		for op := range t[k] {
			if !provider.AtomicKind(k).Allows(provider.AtomicOp(op)) {
				continue
			}
			var row []provider.AtomicAttr
			for dt := provider.Datatype(0); dt.Valid(); dt++ {
				a, err1 := d.shmDom.QueryAtomic(dt, provider.AtomicOp(op), flags[k])
				b, err2 := d.tcpDom.QueryAtomic(dt, provider.AtomicOp(op), flags[k])
				var at provider.AtomicAttr
				if err1 == nil && err2 == nil && a.Size == b.Size && a.Count > 0 && b.Count > 0 {
					at = provider.AtomicAttr{Count: uint64(min(a.Count, b.Count)), Size: uint64(a.Size)}
				}
				row = append(row, at)
			}
			t[k][op] = row
		}
	}
	return t
}

// QueryAtomic is provider.AtomicDomain: what both linked domains offer
// (a table built at the first query).
func (d *domain) QueryAtomic(k provider.AtomicKind, dt provider.Datatype, op provider.AtomicOp,
	tagged bool) (provider.AtomicAttr, error) {
	if tagged {
		return provider.AtomicAttr{}, provider.ENOSYS
	}
	d.atomicsOnce.Do(func() { d.atomics = d.queryBoth() })
	if int(k) < 0 || int(k) >= len(d.atomics) || !op.Valid() {
		return provider.AtomicAttr{}, provider.EOPNOTSUPP
	}
	row := d.atomics[k][op]
	if int(dt) < 0 || int(dt) >= len(row) || row[dt].Count == 0 {
		return provider.AtomicAttr{}, provider.EOPNOTSUPP
	}
	return row[dt], nil
}
