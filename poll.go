package fabric

import "sync"

// PollAttr is fi_poll_attr: how a poll set is opened.
type PollAttr struct {
	// Flags must be 0 (ErrInval otherwise).
	Flags Flags
}

// Pollable is a member of a poll set: a *CQ or a *Cntr of the poll set's
// domain. The interface is sealed.
type Pollable interface {
	pollDomain() *Domain
	pollLC() *lifecycle
}

func (c *CQ) pollDomain() *Domain   { return c.dom }
func (c *CQ) pollLC() *lifecycle    { return &c.lc }
func (c *Cntr) pollDomain() *Domain { return c.dom }
func (c *Cntr) pollLC() *lifecycle  { return &c.lc }

// Poll is a poll set (fid_poll, fi_poll(3)): CQs and counters of one
// domain that the application checks together. Poll drives their
// progress and reports the members with work. All methods are safe for
// concurrent use; methods of a nil *Poll return ErrInval.
type Poll struct {
	lc  lifecycle
	dom *Domain

	mu      sync.Mutex
	members []pollMember // guarded by mu
}

type pollMember struct {
	obj  Pollable
	cq   *CQ
	cntr *Cntr
	last uint64 // counter value + error count when last reported
	mark uint64 // the counter's pollMark generation last seen
}

// pollMark records a counter's value at its last Set or Add: fi_poll(3)
// reports a counter whose values changed since the last fi_poll,
// fi_cntr_set or fi_cntr_add, so a poll set starts over from there.
type pollMark struct {
	mu  sync.Mutex
	gen uint64 // Set/Add calls so far
	sum uint64 // cntrSum after the last one
}

// after records a successful Set or Add of c and returns err (closedErr).
func (m *pollMark) after(c *Cntr, err error) error {
	if err != nil {
		return closedErr(err)
	}
	s := cntrSum(c)
	m.mu.Lock()
	m.gen++
	m.sum = s
	m.mu.Unlock()
	return nil
}

// get returns the generation and the value recorded.
func (m *pollMark) get() (gen, sum uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen, m.sum
}

// OpenPoll opens a poll set on the domain (fi_poll_open). attr may be nil.
// The domain cannot be closed while the set is open. Errors (wrapped):
// ErrInval for non-zero flags, ErrClosed for a closed domain.
func (d *Domain) OpenPoll(attr *PollAttr) (*Poll, error) {
	if d == nil {
		return nil, ErrInval
	}
	if attr != nil && attr.Flags != 0 {
		return nil, opErr("fi_poll_open", d.prov.Name(), ErrInval)
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr("fi_poll_open", d.prov.Name(), err)
	}
	return &Poll{dom: d}, nil
}

// Add adds a CQ or counter of the set's domain (fi_poll_add); flags must
// be 0. The member cannot be closed (ErrBusy) until Del. Errors (bare):
// ErrInval for nil, a member of another domain, an FI_PEER import, a
// member already in the set or non-zero flags; ErrClosed for a closed set
// or member.
func (p *Poll) Add(obj Pollable, flags Flags) error {
	if p == nil || obj == nil || flags != 0 {
		return ErrInval
	}
	m := pollMember{obj: obj}
	switch o := obj.(type) {
	case *CQ:
		if o == nil || o.q == nil {
			return ErrInval
		}
		m.cq = o
	case *Cntr:
		if o == nil || o.c == nil {
			return ErrInval
		}
		m.cntr = o
	}
	if obj.pollDomain() != p.dom {
		return ErrInval
	}
	if err := p.lc.hold(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, x := range p.members {
		if x.obj == obj {
			p.lc.release()
			return ErrInval
		}
	}
	if err := obj.pollLC().hold(); err != nil {
		p.lc.release()
		return err
	}
	if m.cntr != nil {
		m.last = cntrSum(m.cntr)
		m.mark, _ = m.cntr.mark.get()
	}
	p.members = append(p.members, m)
	return nil
}

// Del removes a member added with Add (fi_poll_del); flags must be 0.
// ErrInval if obj is not a member.
func (p *Poll) Del(obj Pollable, flags Flags) error {
	if p == nil || obj == nil || flags != 0 {
		return ErrInval
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.members {
		if x.obj == obj {
			p.members = append(p.members[:i], p.members[i+1:]...)
			obj.pollLC().release()
			p.lc.release()
			return nil
		}
	}
	return ErrInval
}

// Poll drives the progress of every member (fi_poll) and fills out with
// the members that have work: a CQ with completions (or an error
// completion, or an overrun) queued, a counter whose value or error count
// changed since Poll last reported it, or since its last Set or Add. It returns how many it wrote (at
// most len(out); 0 when none has work), or ErrClosed after Close. It does
// not allocate.
func (p *Poll) Poll(out []Pollable) (int, error) {
	if p == nil {
		return 0, ErrInval
	}
	if p.lc.isClosed() {
		return 0, ErrClosed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for i := range p.members {
		if n == len(out) {
			break
		}
		m := &p.members[i]
		if m.cq != nil {
			m.cq.q.Progress()
			if m.cq.q.Len() > 0 {
				out[n] = m.obj
				n++
			}
			continue
		}
		if gen, sum := m.cntr.mark.get(); gen != m.mark {
			m.mark, m.last = gen, sum
		}
		if v := cntrSum(m.cntr); v != m.last {
			m.last = v
			out[n] = m.obj
			n++
		}
	}
	return n, nil
}

// Close closes the poll set (fi_close): ErrBusy while it has members,
// ErrClosed on a second call (both wrapped).
func (p *Poll) Close() error {
	if p == nil {
		return ErrInval
	}
	if err := p.lc.beginClose(); err != nil {
		return opErr("fi_close", p.dom.prov.Name(), err)
	}
	p.dom.lc.release()
	return nil
}

// TryWaiter is what Fabric.TryWait accepts: a *CQ, *Cntr, *EQ or *Wait.
// The interface is sealed.
type TryWaiter interface {
	tryWaitOn() (*Fabric, func() error)
}

func (c *CQ) tryWaitOn() (*Fabric, func() error) {
	if c == nil {
		return nil, nil
	}
	return c.dom.fabric, c.TryWait
}

func (c *Cntr) tryWaitOn() (*Fabric, func() error) {
	if c == nil {
		return nil, nil
	}
	return c.dom.fabric, c.TryWait
}

func (e *EQ) tryWaitOn() (*Fabric, func() error) {
	if e == nil {
		return nil, nil
	}
	return e.fab, e.TryWait
}

func (w *Wait) tryWaitOn() (*Fabric, func() error) {
	if w == nil {
		return nil, nil
	}
	return w.fab, w.TryWait
}

// TryWait is fi_trywait: before an application blocks on the descriptors
// of several objects it asks whether that is safe. It calls TryWait on
// each object in turn and returns the first error: ErrAgain when one has
// work (read it, then ask again), nil when all may be waited on. A member
// of a wait set needs only the set itself passed. ErrInval for a nil
// object or one of another fabric.
func (f *Fabric) TryWait(objs ...TryWaiter) error {
	if f == nil {
		return ErrInval
	}
	for _, o := range objs {
		if o == nil {
			return ErrInval
		}
		fab, try := o.tryWaitOn()
		if fab != f {
			return ErrInval
		}
		if err := try(); err != nil {
			return err
		}
	}
	return nil
}

// cntrSum drives the counter's progress and returns its value plus its
// error count: a change of either is work for a poll set.
func cntrSum(c *Cntr) uint64 {
	v, _ := c.c.Read()
	e, _ := c.c.ReadErr()
	return v + e
}
