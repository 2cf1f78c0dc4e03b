package fabric

import (
	"sync"

	"github.com/gofabric/fabric/internal/av"
	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// FlagSymmetric is the fi_av_attr flag FI_SYMMETRIC (accepted, no effect).
const FlagSymmetric Flags = 1 << 59

const avAttrFlags = FlagSymmetric | FlagAVUserID | FlagPeer

// AVAttr is fi_av_attr.
type AVAttr struct {
	// Type is AVMap, AVTable or AVUnspec (default: the domain's
	// av_type, else AVTable). OpenAV writes the chosen type back.
	Type AVType
	// RxCtxBits is the number of high fi_addr bits that select a receive
	// context of a scalable endpoint (fi_rx_addr), 0..63. Default 0.
	RxCtxBits int
	// Count is the expected number of addresses; only a sizing hint.
	Count uint64
	// EPPerNode is the number of endpoints per node; a hint, ignored.
	EPPerNode uint64
	// Name names a shared AV. Not supported: OpenAV returns ErrNoSys.
	Name string
	// MapAddr is the base address of a shared FI_AV_MAP; ignored.
	MapAddr uint64
	// Flags: FlagSymmetric, FlagAVUserID (every insert carries user ids),
	// FlagPeer (import the owner's AV given in Peer). FI_EVENT
	// (asynchronous inserts) and FI_READ (shared AVs) are not supported
	// (ErrNoSys).
	Flags Flags
	// Peer, with FlagPeer, is the owner's AV (fi_peer(3) "PEER AV",
	// struct fi_peer_av_context): the opened AV uses the owner's fi_addr
	// values (see peer.AVContext). Its type and RxCtxBits are the owner's
	// (Type, if set, must match). FlagPeer without Peer or Peer.AV, or
	// Peer without FlagPeer, gives ErrInval. Default nil.
	Peer *peer.AVContext
}

// AV is an address vector (fi_av): it maps peer addresses to the Addr
// values used by data transfer calls. Both types return table indices
// starting at 0; a removed index is reused by the next insert. An AV is
// safe for concurrent use, including inserts while bound endpoints
// transfer data.
type AV struct {
	lc   lifecycle
	dom  *Domain
	attr AVAttr
	a    *av.AV
	imp  *avImport // FI_PEER import, nil otherwise
}

// avImport is the state of an AV that imports an owner's (FlagPeer).
type avImport struct {
	ctx    peer.AVContext
	owner  *AV    // ctx.AV when it is this package's AV (held open)
	cancel func() // stops following the owner's changes
	mu     sync.Mutex
}

// OpenAV opens an address vector (fi_av_open). attr may be nil for
// defaults. Errors (wrapped in *OpError): ErrNoSys for named (shared) AVs
// and FI_EVENT/FI_READ, ErrBadFlags for unknown flags, ErrInval for a bad
// type or RxCtxBits, ErrClosed for a closed domain.
func (d *Domain) OpenAV(attr *AVAttr) (*AV, error) {
	if d == nil {
		return nil, ErrInval
	}
	prov := d.prov.Name()
	var at AVAttr
	if attr != nil {
		at = *attr
	}
	if at.Name != "" || at.Flags&(provider.FlagEvent|FlagRead) != 0 {
		return nil, opErr("fi_av_open", prov, ErrNoSys)
	}
	if at.Flags&^avAttrFlags != 0 {
		return nil, opErr("fi_av_open", prov, ErrBadFlags)
	}
	if (at.Flags&FlagPeer != 0) != (at.Peer != nil) || at.Peer != nil && at.Peer.AV == nil {
		return nil, opErr("fi_av_open", prov, ErrInval)
	}
	if at.Peer != nil {
		return d.openPeerAV(at, attr)
	}
	if at.Type == AVUnspec && d.info.DomainAttr != nil {
		at.Type = d.info.DomainAttr.AVType
	}
	var h provider.AddrHandler
	h, _ = d.prov.(provider.AddrHandler)
	a, err := av.New(av.Config{Type: at.Type, Count: at.Count, RxCtxBits: at.RxCtxBits,
		Format: d.info.AddrFormat, Handler: h, UserID: at.Flags&FlagAVUserID != 0})
	if err != nil {
		return nil, opErr("fi_av_open", prov, err)
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr("fi_av_open", prov, err)
	}
	at.Type = a.Type()
	if attr != nil {
		attr.Type = at.Type
	}
	return &AV{dom: d, attr: at, a: a}, nil
}

func (a *AV) err(op string, err error) error {
	if err == provider.EBADF {
		err = ErrClosed
	}
	return opErr(op, a.dom.prov.Name(), err)
}

// Insert adds addresses (fi_av_insert) in the domain's address format and
// returns how many were inserted. fiAddrs may be nil; otherwise it needs
// an element per address and receives each one's Addr, or AddrNotAvail for
// an address that was not inserted (invalid for the provider). With
// FlagAVUserID, fiAddrs[i] is also an input: the user id reported as the
// source of completions instead of the Addr. flags: FlagMore,
// FlagAVUserID, FlagSyncErr (see InsertWithErrors). Errors (wrapped):
// ErrNoEQ for FI_EVENT, ErrBadFlags, ErrInval for a short fiAddrs,
// ErrClosed.
func (a *AV) Insert(addrs [][]byte, fiAddrs []Addr, flags Flags) (int, error) {
	if a == nil {
		return 0, ErrInval
	}
	if err := a.writable("fi_av_insert"); err != nil {
		return 0, err
	}
	n, err := a.a.Insert(addrs, fiAddrs, flags, nil)
	if err != nil {
		return 0, a.err("fi_av_insert", err)
	}
	return n, nil
}

// InsertWithErrors is Insert with FI_SYNC_ERR: errs (one element per
// address) receives nil for each inserted address and the error of each
// failed one.
func (a *AV) InsertWithErrors(addrs [][]byte, fiAddrs []Addr, errs []error, flags Flags) (int, error) {
	if a == nil {
		return 0, ErrInval
	}
	if err := a.writable("fi_av_insert"); err != nil {
		return 0, err
	}
	if errs == nil && len(addrs) > 0 {
		return 0, a.err("fi_av_insert", ErrInval)
	}
	n, err := a.a.Insert(addrs, fiAddrs, flags|FlagSyncErr, errs)
	if err != nil {
		return 0, a.err("fi_av_insert", err)
	}
	return n, nil
}

// InsertSvc resolves node and service as fi_getinfo does and inserts the
// address (fi_av_insertsvc). fiAddr may be nil. It returns 1, or 0 with
// *fiAddr = AddrNotAvail if the name does not resolve. ErrNoSys if the
// provider cannot resolve names.
func (a *AV) InsertSvc(node, service string, fiAddr *Addr, flags Flags) (int, error) {
	if a == nil {
		return 0, ErrInval
	}
	if err := a.writable("fi_av_insertsvc"); err != nil {
		return 0, err
	}
	n, err := a.a.InsertSvc(node, service, fiAddr, flags, nil)
	if err != nil {
		return 0, a.err("fi_av_insertsvc", err)
	}
	return n, nil
}

// InsertSym inserts nodecnt x svccnt addresses (fi_av_insertsym): nodes
// node..node+nodecnt-1 (numeric IP addresses are incremented; host names
// need a numeric suffix), each with services service..service+svccnt-1.
func (a *AV) InsertSym(node string, nodecnt int, service string, svccnt int, fiAddrs []Addr, flags Flags) (int, error) {
	if a == nil {
		return 0, ErrInval
	}
	if err := a.writable("fi_av_insertsym"); err != nil {
		return 0, err
	}
	n, err := a.a.InsertSym(node, nodecnt, service, svccnt, fiAddrs, flags, nil)
	if err != nil {
		return 0, a.err("fi_av_insertsym", err)
	}
	return n, nil
}

// Remove removes addresses (fi_av_remove). Nothing is removed, and
// ErrInval returned, if any Addr is out of range, not in the AV or
// repeated. flags must be 0 (ErrBadFlags).
func (a *AV) Remove(fiAddrs []Addr, flags Flags) error {
	if a == nil {
		return ErrInval
	}
	if err := a.writable("fi_av_remove"); err != nil {
		return err
	}
	if err := a.a.Remove(fiAddrs, flags); err != nil {
		return a.err("fi_av_remove", err)
	}
	return nil
}

// Lookup copies the address stored for fiAddr into buf (fi_av_lookup),
// truncated to len(buf), and returns the address's full length. ErrInval
// if fiAddr is not in the AV.
func (a *AV) Lookup(fiAddr Addr, buf []byte) (int, error) {
	if a == nil {
		return 0, ErrInval
	}
	if a.lc.isClosed() {
		return 0, a.err("fi_av_lookup", ErrClosed)
	}
	n, err := a.a.LookupCopy(fiAddr, buf)
	if err != nil {
		return 0, a.err("fi_av_lookup", err)
	}
	return n, nil
}

// StrAddr renders an address of the AV's format (fi_av_straddr), e.g.
// "fi_sockaddr_in://127.0.0.1:9228"; it need not be in the AV.
func (a *AV) StrAddr(addr []byte) string {
	if a == nil {
		return ""
	}
	return a.a.StrAddr(addr)
}

// Attr returns the AV's attributes (with the chosen type).
func (a *AV) Attr() AVAttr {
	if a == nil {
		return AVAttr{}
	}
	return a.attr
}

// Domain returns the AV's domain.
func (a *AV) Domain() *Domain {
	if a == nil {
		return nil
	}
	return a.dom
}

// Close closes the AV (fi_close). It returns ErrBusy while endpoints are
// bound to it.
func (a *AV) Close() error {
	if a == nil {
		return ErrInval
	}
	if err := a.lc.beginClose(); err != nil {
		return opErr("fi_close", a.dom.prov.Name(), err)
	}
	if a.imp != nil {
		a.imp.cancel()
		if a.imp.owner != nil {
			a.imp.owner.lc.release()
		}
	}
	_ = a.a.Close()
	a.dom.lc.release()
	return nil
}

// RxAddr returns the address of receive context rxIndex of the scalable
// endpoint at a (fi_rx_addr). rxCtxBits must match the AV's RxCtxBits.
// With rxCtxBits 0 (or out of 1..63) it returns a, which targets receive
// context 0. It returns AddrNotAvail, which every transfer refuses with
// ErrInval, for an rxIndex that rxCtxBits cannot hold (negative or at
// least 1<<rxCtxBits) or an a that overlaps the receive context bits.
func RxAddr(a Addr, rxIndex int, rxCtxBits int) Addr {
	if rxCtxBits <= 0 || rxCtxBits > 63 {
		return a
	}
	shift := 64 - uint(rxCtxBits)
	if rxIndex < 0 || uint64(rxIndex) >= 1<<uint(rxCtxBits) || a == AddrNotAvail || uint64(a)>>shift != 0 {
		return AddrNotAvail
	}
	return Addr(uint64(rxIndex)<<shift) | a
}

// ---- hooks for endpoints ----

// bindEndpoint registers an endpoint bound to the AV (Close then returns
// ErrBusy).
func (a *AV) bindEndpoint() error { return a.lc.hold() }

// unbindEndpoint drops an endpoint registered with bindEndpoint.
func (a *AV) unbindEndpoint() { a.lc.release() }

// view is the provider's view of the AV (provider.Resources.AV).
func (a *AV) view() provider.AVView { return a.a }

// domain returns the AV's domain.
func (a *AV) domain() *Domain { return a.dom }

// onInsert calls fn after each insert that added addresses (for example to
// run an SRX owner's ForeachUnspecAddr); the result unregisters it.
func (a *AV) onInsert(fn func()) (cancel func()) { return a.a.OnInsert(fn) }
