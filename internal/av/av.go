package av

import (
	"net/netip"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gofabric/fabric/peer"
	"github.com/gofabric/fabric/provider"
)

// Config describes an address vector.
type Config struct {
	// Type is FI_AV_MAP or FI_AV_TABLE; FI_AV_UNSPEC selects FI_AV_TABLE.
	Type provider.AVType
	// Count is the expected number of addresses (a sizing hint only).
	Count uint64
	// RxCtxBits is the number of high fi_addr bits reserved for receive
	// context indices (scalable endpoints), 0..63.
	RxCtxBits int
	// Format is the address format of the domain.
	Format provider.AddrFormat
	// Handler validates, prints and resolves addresses; may be nil.
	Handler provider.AddrHandler
	// UserID applies FI_AV_USER_ID to every insert.
	UserID bool
}

type slot struct {
	addr    []byte
	user    provider.Addr
	hasUser bool
	valid   bool
}

// lookTable is the lock-free view of the slots' addresses: entry i is
// the address of slot i, nil when the slot is unused. Its length only
// grows, by doubling (a new table, the pointers copied), so that an insert
// costs amortized O(1).
type lookTable struct {
	addrs []atomic.Pointer[[]byte]
}

// AV is an address vector. It implements provider.AVView.
type AV struct {
	mu     sync.RWMutex
	cfg    Config
	mask   provider.Addr // index bits of an fi_addr
	slots  []slot
	free   []provider.Addr // unused indices below len(slots), ascending
	live   int
	rev    map[string]provider.Addr
	closed bool
	// gen counts the changes that can alter a Reverse answer (inserts,
	// removals, Close); written under mu, read without it by
	// ReverseCached.
	gen atomic.Uint64
	// look mirrors the valid slots' addresses for Lookup, which reads it
	// without a lock; written under mu (setLook).
	look atomic.Pointer[lookTable]

	lmu       sync.Mutex
	listeners map[int]func()
	changeL   map[int]func()                // OnChange: inserts and removals
	changeAt  map[int]func([]provider.Addr) // OnChangeAt: the same, with the fi_addrs changed
	nextL     int
}

var _ provider.AVView = (*AV)(nil)

// New returns an empty address vector. It returns EINVAL for an unknown
// type or RxCtxBits outside 0..63.
func New(cfg Config) (*AV, error) {
	switch cfg.Type {
	case provider.AVUnspec:
		cfg.Type = provider.AVTable
	case provider.AVMap, provider.AVTable:
	default:
		return nil, provider.EINVAL
	}
	if cfg.RxCtxBits < 0 || cfg.RxCtxBits > 63 {
		return nil, provider.EINVAL
	}
	hint := cfg.Count
	if hint > 1<<16 {
		hint = 1 << 16
	}
	a := &AV{cfg: cfg, mask: ^provider.Addr(0) >> uint(cfg.RxCtxBits),
		slots: make([]slot, 0, hint), rev: make(map[string]provider.Addr, hint)}
	return a, nil
}

// Type returns the AV type (FI_AV_TABLE for FI_AV_UNSPEC).
func (a *AV) Type() provider.AVType { return a.cfg.Type }

// Format returns the address format.
func (a *AV) Format() provider.AddrFormat { return a.cfg.Format }

// RxCtxBits returns the number of receive context bits.
func (a *AV) RxCtxBits() int { return a.cfg.RxCtxBits }

// Len returns the number of addresses currently in the AV.
func (a *AV) Len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.live
}

// Base strips the receive context bits from addr.
func (a *AV) Base(addr provider.Addr) provider.Addr { return addr & a.mask }

// RxIndex returns the receive context index encoded in addr (fi_rx_addr).
func (a *AV) RxIndex(addr provider.Addr) int {
	if a.cfg.RxCtxBits == 0 {
		return 0
	}
	return int(uint64(addr) >> uint(64-a.cfg.RxCtxBits))
}

// ValidAddr reports whether b is a valid address for this AV.
func (a *AV) ValidAddr(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if a.cfg.Handler != nil {
		return a.cfg.Handler.ValidAddr(a.cfg.Format, b)
	}
	return true
}

// Insert flags accepted.
const insertFlags = provider.FlagMore | provider.FlagSyncErr | provider.FlagAVUserID

// Insert adds addrs (fi_av_insert). fiAddrs may be nil; otherwise it needs
// one element per address and receives each address's fi_addr, or
// AddrNotAvail for an address that was not inserted. With FlagAVUserID (or
// Config.UserID) fiAddrs is also the input: fiAddrs[i] is the user id
// reported instead of the fi_addr by Reverse. With FlagSyncErr and non-nil
// errs, errs[i] receives nil or the insertion error of address i. The
// result is the number of addresses inserted. Errors: EBADFLAGS for unknown
// flags, ENOEQ for FI_EVENT (asynchronous inserts need an EQ; none can be
// bound), EINVAL for short fiAddrs/errs or user ids without fiAddrs, EBADF
// after Close.
func (a *AV) Insert(addrs [][]byte, fiAddrs []provider.Addr, flags provider.Flags, errs []error) (int, error) {
	if flags&provider.FlagEvent != 0 {
		return 0, provider.ENOEQ
	}
	if flags&^insertFlags != 0 {
		return 0, provider.EBADFLAGS
	}
	userID := a.cfg.UserID || flags&provider.FlagAVUserID != 0
	if fiAddrs != nil && len(fiAddrs) < len(addrs) || userID && fiAddrs == nil && len(addrs) > 0 {
		return 0, provider.EINVAL
	}
	if flags&provider.FlagSyncErr == 0 {
		errs = nil
	}
	if errs != nil && len(errs) < len(addrs) {
		return 0, provider.EINVAL
	}
	n := 0
	var changed []provider.Addr // for OnChangeAt
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return 0, provider.EBADF
	}
	for i, b := range addrs {
		if !a.ValidAddr(b) {
			if fiAddrs != nil {
				fiAddrs[i] = provider.AddrNotAvail
			}
			if errs != nil {
				errs[i] = provider.EINVAL
			}
			continue
		}
		s := slot{addr: append([]byte(nil), b...), valid: true}
		if userID {
			s.user, s.hasUser = fiAddrs[i], true
		}
		var idx provider.Addr
		if len(a.free) > 0 {
			idx = a.free[0]
			a.free = a.free[1:]
			a.slots[idx] = s
		} else {
			idx = provider.Addr(len(a.slots))
			a.slots = append(a.slots, s)
		}
		a.live++
		a.setLook(idx, &s.addr)
		a.rev[string(s.addr)] = idx
		changed = append(changed, idx)
		if fiAddrs != nil {
			fiAddrs[i] = idx
		}
		if errs != nil {
			errs[i] = nil
		}
		n++
	}
	if n > 0 {
		a.gen.Add(1)
	}
	a.mu.Unlock()
	if n > 0 {
		a.notify()
		a.notifyAt(changed)
	}
	return n, nil
}

// InsertSvc resolves node and service through the provider's
// AddrHandler.ResolveService and inserts the result (fi_av_insertsvc).
// fiAddr may be nil. Without a handler it returns ENOSYS. A resolution
// failure is a failed insert: the result is 0, *fiAddr is AddrNotAvail and
// errs[0] (with FlagSyncErr) holds the error.
func (a *AV) InsertSvc(node, service string, fiAddr *provider.Addr, flags provider.Flags, errs []error) (int, error) {
	var one [1]provider.Addr
	var fa []provider.Addr
	if fiAddr != nil {
		one[0] = *fiAddr
		fa = one[:]
	}
	n, err := a.insertResolved([]string{node}, []string{service}, fa, flags, errs)
	if fiAddr != nil && err == nil {
		*fiAddr = one[0]
	}
	return n, err
}

// InsertSym inserts nodecnt x svccnt addresses (fi_av_insertsym): for each
// node from node to node+nodecnt-1 (a numeric IP address is incremented; a
// host name must end in a number when nodecnt > 1), the services service to
// service+svccnt-1. fiAddrs (may be nil) and errs are as for Insert.
func (a *AV) InsertSym(node string, nodecnt int, service string, svccnt int, fiAddrs []provider.Addr,
	flags provider.Flags, errs []error) (int, error) {
	if nodecnt <= 0 || svccnt <= 0 {
		return 0, provider.EINVAL
	}
	nodes, err := symNodes(node, nodecnt)
	if err != nil {
		return 0, err
	}
	svcs, err := symServices(service, svccnt)
	if err != nil {
		return 0, err
	}
	var ns, ss []string
	for _, n := range nodes {
		for _, s := range svcs {
			ns = append(ns, n)
			ss = append(ss, s)
		}
	}
	return a.insertResolved(ns, ss, fiAddrs, flags, errs)
}

func (a *AV) insertResolved(nodes, services []string, fiAddrs []provider.Addr, flags provider.Flags, errs []error) (int, error) {
	h := a.cfg.Handler
	if h == nil {
		return 0, provider.ENOSYS
	}
	if flags&provider.FlagEvent != 0 {
		return 0, provider.ENOEQ
	}
	if flags&^insertFlags != 0 {
		return 0, provider.EBADFLAGS
	}
	if fiAddrs != nil && len(fiAddrs) < len(nodes) {
		return 0, provider.EINVAL
	}
	if flags&provider.FlagSyncErr == 0 {
		errs = nil
	}
	if errs != nil && len(errs) < len(nodes) {
		return 0, provider.EINVAL
	}
	addrs := make([][]byte, len(nodes))
	rerr := make([]error, len(nodes))
	for i := range nodes {
		b, err := h.ResolveService(a.cfg.Format, nodes[i], services[i])
		if err != nil {
			rerr[i] = err
			continue
		}
		if len(b) == 0 {
			rerr[i] = provider.EINVAL
			continue
		}
		addrs[i] = b
	}
	ierr := make([]error, len(nodes))
	n, err := a.Insert(addrs, fiAddrs, flags|provider.FlagSyncErr, ierr)
	if err != nil {
		return 0, err
	}
	for i := range nodes {
		e := ierr[i]
		if rerr[i] != nil {
			e = rerr[i]
		}
		if errs != nil {
			errs[i] = e
		}
	}
	return n, nil
}

func symNodes(node string, cnt int) ([]string, error) {
	if cnt == 1 {
		return []string{node}, nil
	}
	if ip, err := netip.ParseAddr(node); err == nil {
		out := make([]string, cnt)
		for i := range out {
			if !ip.IsValid() {
				return nil, provider.EINVAL
			}
			out[i] = ip.String()
			ip = ip.Next()
		}
		return out, nil
	}
	j := len(node)
	for j > 0 && node[j-1] >= '0' && node[j-1] <= '9' {
		j--
	}
	if j == len(node) {
		return nil, provider.EINVAL
	}
	width := len(node) - j
	v, err := strconv.ParseUint(node[j:], 10, 64)
	if err != nil {
		return nil, provider.EINVAL
	}
	out := make([]string, cnt)
	for i := range out {
		s := strconv.FormatUint(v+uint64(i), 10)
		for len(s) < width {
			s = "0" + s
		}
		out[i] = node[:j] + s
	}
	return out, nil
}

func symServices(service string, cnt int) ([]string, error) {
	if cnt == 1 {
		return []string{service}, nil
	}
	v, err := strconv.ParseUint(service, 10, 16)
	if err != nil || v+uint64(cnt)-1 > 65535 {
		return nil, provider.EINVAL
	}
	out := make([]string, cnt)
	for i := range out {
		out[i] = strconv.FormatUint(v+uint64(i), 10)
	}
	return out, nil
}

// Remove removes addresses (fi_av_remove). It removes nothing and returns
// EINVAL if any fi_addr is out of range, not in the AV (never inserted or
// already removed) or repeated; EBADFLAGS for non-zero flags.
func (a *AV) Remove(fiAddrs []provider.Addr, flags provider.Flags) error {
	if flags != 0 {
		return provider.EBADFLAGS
	}
	a.mu.Lock()
	err := a.removeLocked(fiAddrs)
	a.mu.Unlock()
	if err == nil && len(fiAddrs) > 0 {
		a.notifyChange()
		a.notifyAt(fiAddrs)
	}
	return err
}

func (a *AV) removeLocked(fiAddrs []provider.Addr) error {
	if a.closed {
		return provider.EBADF
	}
	for i, fa := range fiAddrs {
		if fa == provider.AddrNotAvail || fa&^a.mask != 0 || uint64(fa) >= uint64(len(a.slots)) ||
			!a.slots[fa].valid {
			return provider.EINVAL
		}
		for _, prev := range fiAddrs[:i] {
			if prev == fa {
				return provider.EINVAL
			}
		}
	}
	a.gen.Add(1)
	for _, fa := range fiAddrs {
		a.clearSlot(fa)
	}
	a.trim()
	return nil
}

// clearSlot empties the valid slot fa; a.mu is held.
func (a *AV) clearSlot(fa provider.Addr) {
	s := &a.slots[fa]
	key := string(s.addr)
	*s = slot{}
	a.setLook(fa, nil)
	a.live--
	j := sort.Search(len(a.free), func(k int) bool { return a.free[k] >= fa })
	a.free = append(a.free, 0)
	copy(a.free[j+1:], a.free[j:])
	a.free[j] = fa
	if cur, ok := a.rev[key]; ok && cur == fa {
		delete(a.rev, key)
		for k := len(a.slots) - 1; k >= 0; k-- {
			if a.slots[k].valid && string(a.slots[k].addr) == key {
				a.rev[key] = provider.Addr(k)
				break
			}
		}
	}
}

// trim drops trailing unused slots, so that fresh tables keep growing
// densely; a.mu is held.
func (a *AV) trim() {
	for len(a.slots) > 0 && !a.slots[len(a.slots)-1].valid {
		last := provider.Addr(len(a.slots) - 1)
		a.slots = a.slots[:last]
		if n := len(a.free); n > 0 && a.free[n-1] == last {
			a.free = a.free[:n-1]
		}
	}
}

// Lookup implements provider.AVView: the address stored for fi_addr addr
// (receive context bits ignored), or nil. The result must not be modified.
func (a *AV) Lookup(addr provider.Addr) []byte {
	// No lock: every send looks its destination up, and a read lock is
	// two atomic read-modify-writes. The table is only replaced (grown)
	// or its entries stored under mu; an entry is an address that was
	// valid when stored, and its bytes are never modified.
	t := a.look.Load()
	if addr == provider.AddrNotAvail || t == nil {
		return nil
	}
	idx := uint64(addr & a.mask)
	if idx >= uint64(len(t.addrs)) {
		return nil
	}
	if p := t.addrs[idx].Load(); p != nil {
		return *p
	}
	return nil
}

// setLook sets Lookup's entry for slot idx (nil: unused); a.mu is held.
// b points to the slot's address slice header, copied here.
func (a *AV) setLook(idx provider.Addr, b *[]byte) {
	var p *[]byte
	if b != nil {
		c := *b
		p = &c
	}
	t := a.look.Load()
	if t == nil || uint64(idx) >= uint64(len(t.addrs)) {
		if p == nil {
			return
		}
		n := 8
		if t != nil {
			n = 2 * len(t.addrs)
		}
		for uint64(n) <= uint64(idx) {
			n *= 2
		}
		nt := &lookTable{addrs: make([]atomic.Pointer[[]byte], n)}
		if t != nil {
			for i := range t.addrs {
				nt.addrs[i].Store(t.addrs[i].Load())
			}
		}
		a.look.Store(nt)
		t = nt
	}
	t.addrs[idx].Store(p)
}

// LookupCopy copies the address stored for addr into buf (fi_av_lookup),
// truncating if buf is short, and returns the full address length. It
// returns EINVAL for an fi_addr that is not in the AV.
func (a *AV) LookupCopy(addr provider.Addr, buf []byte) (int, error) {
	b := a.Lookup(addr)
	if b == nil {
		return 0, provider.EINVAL
	}
	copy(buf, b)
	return len(b), nil
}

// Reverse implements provider.AVView: the fi_addr of the address bytes b
// (its user id if one was given at insert), or AddrNotAvail. It does not
// allocate.
func (a *AV) Reverse(b []byte) provider.Addr {
	a.mu.RLock()
	idx, ok := a.rev[string(b)]
	r := provider.AddrNotAvail
	if ok {
		r = idx
		if s := &a.slots[idx]; s.hasUser {
			r = s.user
		}
	}
	a.mu.RUnlock()
	return r
}

// ReverseCache holds the last answer of ReverseCached for one caller. It
// is not goroutine-safe: its user serializes the calls (a provider's
// receive path under its own lock). The zero value is empty.
type ReverseCache struct {
	gen  uint64 // the AV's gen when addr was looked up, plus one (0: empty)
	n    int
	key  [maxCachedAddr]byte
	addr provider.Addr
}

// maxCachedAddr is the longest address ReverseCached remembers (a
// sockaddr_in6).
const maxCachedAddr = 28

// ReverseCached is Reverse that first asks c: a receive path that sees
// the same source message after message (a ping-pong, a stream from one
// peer) skips the read lock (two atomic read-modify-writes) and the map
// lookup. The answer is the one Reverse gives: c is used only while the
// AV has not changed since c was filled (an insert, a removal or Close
// makes it stale).
func (a *AV) ReverseCached(c *ReverseCache, b []byte) provider.Addr {
	// The common sockaddr_in length compares as one 16-byte array (no
	// memequal call); other lengths compare in reverseFill.
	if len(b) == 16 && c.n == 16 && c.gen == a.gen.Load()+1 && [16]byte(b) == [16]byte(c.key[:16]) {
		return c.addr
	}
	return a.reverseFill(c, b)
}

func (a *AV) reverseFill(c *ReverseCache, b []byte) provider.Addr {
	g := a.gen.Load() + 1
	if c.gen == g && len(b) == c.n && string(b) == string(c.key[:c.n]) {
		return c.addr
	}
	// A change between the load above and this lookup leaves c with an
	// answer newer than g says: the next call sees a newer gen and looks
	// up again.
	r := a.Reverse(b)
	if len(b) <= len(c.key) {
		c.gen, c.n, c.addr = g, copy(c.key[:], b), r
	}
	return r
}

// Gen returns a number that changes whenever an answer of Reverse may
// have changed (an insert, a removal, Close): a provider that caches
// Reverse answers keyed by something of its own (shm: the sender's id)
// uses them only while Gen is unchanged.
func (a *AV) Gen() uint64 { return a.gen.Load() }

// ReverseIndex is Reverse without the user id substitution: the fi_addr
// itself.
func (a *AV) ReverseIndex(b []byte) provider.Addr {
	a.mu.RLock()
	idx, ok := a.rev[string(b)]
	a.mu.RUnlock()
	if !ok {
		return provider.AddrNotAvail
	}
	return idx
}

// UserID returns the user id stored for addr with FI_AV_USER_ID.
func (a *AV) UserID(addr provider.Addr) (provider.Addr, bool) {
	idx := uint64(addr & a.mask)
	a.mu.RLock()
	defer a.mu.RUnlock()
	if addr == provider.AddrNotAvail || idx >= uint64(len(a.slots)) || !a.slots[idx].valid {
		return provider.AddrNotAvail, false
	}
	s := &a.slots[idx]
	return s.user, s.hasUser
}

// StrAddr renders an address of the AV's format (fi_av_straddr); the
// address need not be in the AV.
func (a *AV) StrAddr(b []byte) string {
	if a.cfg.Handler != nil {
		return a.cfg.Handler.AddrString(a.cfg.Format, b)
	}
	if a.cfg.Format == provider.AddrStr {
		for len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		return string(b)
	}
	const digits = "0123456789abcdef"
	out := make([]byte, 2, 2+2*len(b))
	out[0], out[1] = '0', 'x'
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// OnInsert registers fn to be called (without locks held) after every
// insert that added at least one address, for example to let a peer SRX
// resolve unknown sources (fi_peer(3) foreach_unspec_addr). The returned
// function unregisters it.
func (a *AV) OnInsert(fn func()) (cancel func()) {
	a.lmu.Lock()
	defer a.lmu.Unlock()
	if a.listeners == nil {
		a.listeners = make(map[int]func())
	}
	id := a.nextL
	a.nextL++
	a.listeners[id] = fn
	return func() {
		a.lmu.Lock()
		delete(a.listeners, id)
		a.lmu.Unlock()
	}
}

func (a *AV) notify() {
	a.lmu.Lock()
	if len(a.listeners)+len(a.changeL) == 0 {
		a.lmu.Unlock()
		return
	}
	fns := make([]func(), 0, len(a.listeners)+len(a.changeL))
	for _, fn := range a.changeL {
		fns = append(fns, fn)
	}
	for _, fn := range a.listeners {
		fns = append(fns, fn)
	}
	a.lmu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// OnChange registers fn to be called (without locks held) after every
// insert that added an address and every removal, for example to let a
// peer AV follow this one (fi_peer(3) "PEER AV"). The returned function
// unregisters it.
func (a *AV) OnChange(fn func()) (cancel func()) {
	a.lmu.Lock()
	defer a.lmu.Unlock()
	if a.changeL == nil {
		a.changeL = make(map[int]func())
	}
	id := a.nextL
	a.nextL++
	a.changeL[id] = fn
	return func() {
		a.lmu.Lock()
		delete(a.changeL, id)
		a.lmu.Unlock()
	}
}

// OnChangeAt is OnChange whose fn is told the fi_addrs (indices) whose
// entries the change inserted or removed (fn must not keep the slice), so
// that a peer AV can follow one address at a time (peer.AVAddrChanges).
func (a *AV) OnChangeAt(fn func(changed []provider.Addr)) (cancel func()) {
	a.lmu.Lock()
	defer a.lmu.Unlock()
	if a.changeAt == nil {
		a.changeAt = make(map[int]func([]provider.Addr))
	}
	id := a.nextL
	a.nextL++
	a.changeAt[id] = fn
	return func() {
		a.lmu.Lock()
		delete(a.changeAt, id)
		a.lmu.Unlock()
	}
}

func (a *AV) notifyAt(changed []provider.Addr) {
	a.lmu.Lock()
	if len(a.changeAt) == 0 {
		a.lmu.Unlock()
		return
	}
	fns := make([]func([]provider.Addr), 0, len(a.changeAt))
	for _, fn := range a.changeAt {
		fns = append(fns, fn)
	}
	a.lmu.Unlock()
	for _, fn := range fns {
		fn(changed)
	}
}

// AddrAt calls fn with the address at index idx (receive context bits
// ignored) as inserted, not to be kept or modified, and its user id
// (hasUser false without one), with the read lock held, and reports
// whether there is one. fn must not call into the AV.
func (a *AV) AddrAt(idx provider.Addr, fn func(addr []byte, user provider.Addr, hasUser bool)) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	i := uint64(idx & a.mask)
	if idx == provider.AddrNotAvail || i >= uint64(len(a.slots)) || !a.slots[i].valid {
		return false
	}
	s := &a.slots[i]
	fn(s.addr, s.user, s.hasUser)
	return true
}

func (a *AV) notifyChange() {
	a.lmu.Lock()
	fns := make([]func(), 0, len(a.changeL))
	for _, fn := range a.changeL {
		fns = append(fns, fn)
	}
	a.lmu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Foreach calls fn for every address in the AV, in fi_addr order, with
// the read lock held: the address (not to be kept or modified) and the
// user id given at insert (hasUser false without one). fn must not call
// into the AV.
func (a *AV) Foreach(fn func(idx provider.Addr, addr []byte, user provider.Addr, hasUser bool)) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	for i := range a.slots {
		if s := &a.slots[i]; s.valid {
			fn(provider.Addr(i), s.addr, s.user, s.hasUser)
		}
	}
}

// Entry is one address of Mirror.
type Entry struct {
	Index   provider.Addr // the fi_addr (index) it takes
	Addr    []byte        // copied
	User    provider.Addr // user id, when HasUser
	HasUser bool
}

// Mirror replaces the AV's contents with entries, each at its own index
// (a peer AV following its owner's, fi_peer(3) "PEER AV"); indices not
// listed are unused. Entries with an index beyond the receive context
// bits, an invalid address or a repeated index are left out. It returns
// EBADF after Close.
func (a *AV) Mirror(entries []Entry) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return provider.EBADF
	}
	var n provider.Addr
	for _, e := range entries {
		if e.Index&^a.mask == 0 && e.Index != provider.AddrNotAvail && e.Index >= n {
			n = e.Index + 1
		}
	}
	// Every index used before or after: OnChangeAt listeners (an AV
	// following this one) look each up again.
	var changed []provider.Addr
	for i := range a.slots {
		if a.slots[i].valid {
			changed = append(changed, provider.Addr(i))
		}
	}
	slots := make([]slot, n)
	for _, e := range entries {
		if e.Index&^a.mask != 0 || e.Index >= n || slots[e.Index].valid || !a.ValidAddr(e.Addr) {
			continue
		}
		slots[e.Index] = slot{addr: append([]byte(nil), e.Addr...), user: e.User, hasUser: e.HasUser, valid: true}
	}
	a.gen.Add(1)
	for i := range a.slots {
		if i >= len(slots) || !slots[i].valid {
			a.setLook(provider.Addr(i), nil)
		}
	}
	for len(slots) > 0 && !slots[len(slots)-1].valid {
		slots = slots[:len(slots)-1]
	}
	a.slots, a.free, a.live = slots, nil, 0
	a.rev = make(map[string]provider.Addr, len(slots))
	for i := range slots {
		s := &slots[i]
		if !s.valid {
			a.free = append(a.free, provider.Addr(i))
			continue
		}
		a.live++
		a.setLook(provider.Addr(i), &s.addr)
		a.rev[string(s.addr)] = provider.Addr(i) // the highest index wins, as after inserts
		changed = append(changed, provider.Addr(i))
	}
	a.mu.Unlock()
	a.notify()
	a.notifyAt(changed)
	return nil
}

// MirrorAt is Mirror for a part of the AV: each of set takes its index
// (replacing what was there), each index of gone becomes unused (if it
// was not); other indices are left as they are. It costs what the
// changes cost, where Mirror rebuilds the whole AV. Entries with an index
// beyond the receive context bits or an invalid address leave their
// index unused. It returns EBADF after Close.
func (a *AV) MirrorAt(set []Entry, gone []provider.Addr) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return provider.EBADF
	}
	a.gen.Add(1)
	for _, fa := range gone {
		if fa&^a.mask == 0 && uint64(fa) < uint64(len(a.slots)) && a.slots[fa].valid {
			a.clearSlot(fa)
		}
	}
	for _, e := range set {
		fa := e.Index
		if fa == provider.AddrNotAvail || fa&^a.mask != 0 {
			continue
		}
		if uint64(fa) < uint64(len(a.slots)) && a.slots[fa].valid {
			if s := &a.slots[fa]; string(s.addr) == string(e.Addr) && s.user == e.User && s.hasUser == e.HasUser {
				continue
			}
			a.clearSlot(fa)
		}
		if !a.ValidAddr(e.Addr) {
			continue
		}
		for provider.Addr(len(a.slots)) <= fa {
			a.free = append(a.free, provider.Addr(len(a.slots)))
			a.slots = append(a.slots, slot{})
		}
		if j := sort.Search(len(a.free), func(k int) bool { return a.free[k] >= fa }); j < len(a.free) && a.free[j] == fa {
			a.free = append(a.free[:j], a.free[j+1:]...)
		}
		s := &a.slots[fa]
		*s = slot{addr: append([]byte(nil), e.Addr...), user: e.User, hasUser: e.HasUser, valid: true}
		a.live++
		a.setLook(fa, &s.addr)
		if cur, ok := a.rev[string(s.addr)]; !ok || cur < fa {
			a.rev[string(s.addr)] = fa // the highest index wins, as in Mirror
		}
	}
	a.trim()
	a.mu.Unlock()
	a.notify()
	changed := append([]provider.Addr(nil), gone...)
	for _, e := range set {
		changed = append(changed, e.Index)
	}
	a.notifyAt(changed)
	return nil
}

// Close releases the addresses. Later inserts and removals return EBADF;
// lookups find nothing.
func (a *AV) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return provider.EBADF
	}
	a.closed = true
	a.gen.Add(1)
	a.look.Store(nil)
	a.slots = nil
	a.free = nil
	a.rev = map[string]provider.Addr{}
	a.live = 0
	return nil
}

// The AV is an fi_peer(3) AV owner too (peer.AVAddrOwner), so that a
// provider given it as its endpoint's AV (provider.Resources.AV) can have
// another provider's AV import it (a composite such as lnx).
var _ peer.AVAddrChanges = (*AV)(nil)

// Query implements peer.AVOwner (fi_ops_av_owner.query): the type, the
// number of addresses, the receive context bits and FI_AV_USER_ID when
// every insert carries user ids. EBADF after Close.
func (a *AV) Query() (peer.AVAttr, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return peer.AVAttr{}, provider.EBADF
	}
	var f provider.Flags
	if a.cfg.UserID {
		f = provider.FlagAVUserID
	}
	return peer.AVAttr{Type: a.cfg.Type, Count: uint64(a.live), RxCtxBits: a.cfg.RxCtxBits, Flags: f}, nil
}

// EPAddr implements peer.AVOwner (fi_ops_av_owner.ep_addr): the fi_addr
// of ep's address, or AddrNotAvail.
func (a *AV) EPAddr(ep peer.Named) provider.Addr {
	if ep == nil {
		return provider.AddrNotAvail
	}
	name, err := ep.Name()
	if err != nil {
		return provider.AddrNotAvail
	}
	return a.ReverseIndex(name)
}

// ForeachAddr implements peer.AVAddrOwner: Foreach.
func (a *AV) ForeachAddr(fn func(fiAddr provider.Addr, addr []byte, userID provider.Addr, hasUserID bool)) {
	a.Foreach(fn)
}
