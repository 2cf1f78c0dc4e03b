package fabric

import "github.com/gofabric/fabric/provider"

// ScalableEndpoint is a scalable endpoint (fi_scalable_ep): one transport
// address with several transmit and receive contexts, each an *Endpoint
// bound to its own CQs. Providers that cannot honour scalable endpoints do
// not report tx/rx_ctx_cnt > 1 in GetInfo, and OpenScalableEndpoint
// returns ErrNoSys for them.
type ScalableEndpoint struct {
	lc   lifecycle
	dom  *Domain
	info *Info
	p    provider.ScalableEndpoint
	av   *AV
}

// OpenScalableEndpoint opens a scalable endpoint (fi_scalable_ep).
func (d *Domain) OpenScalableEndpoint(info *Info) (*ScalableEndpoint, error) {
	if d == nil {
		return nil, ErrInval
	}
	const op = "fi_scalable_ep"
	if info == nil || info.EPAttr == nil {
		return nil, opErr(op, d.prov.Name(), ErrInval)
	}
	sd, ok := d.d.(provider.ScalableDomain)
	if !ok {
		return nil, opErr(op, d.prov.Name(), ErrNoSys)
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr(op, d.prov.Name(), err)
	}
	ci := info.Dup()
	p, err := sd.ScalableEndpoint(ci)
	if err != nil {
		d.lc.release()
		return nil, opErr(op, d.prov.Name(), err)
	}
	return &ScalableEndpoint{dom: d, info: ci, p: p}, nil
}

// Bind binds the scalable endpoint to an address vector (fi_scalable_ep_bind);
// the AV is implicitly bound to every context.
func (s *ScalableEndpoint) Bind(av *AV, flags Flags) error {
	if s == nil {
		return ErrInval
	}
	const op = "fi_scalable_ep_bind"
	if av == nil || flags != 0 {
		return opErr(op, s.dom.prov.Name(), ErrInval)
	}
	if av.domain() != s.dom {
		return opErr(op, s.dom.prov.Name(), ErrDomain)
	}
	if s.av != nil {
		return opErr(op, s.dom.prov.Name(), ErrInval)
	}
	if err := av.bindEndpoint(); err != nil {
		return opErr(op, s.dom.prov.Name(), err)
	}
	s.av = av
	return nil
}

// TxContext opens transmit context index (fi_tx_context).
func (s *ScalableEndpoint) TxContext(index int, attr *TxAttr) (*Endpoint, error) {
	if s == nil {
		return nil, ErrInval
	}
	return s.context(index, true, attr, nil)
}

// RxContext opens receive context index (fi_rx_context).
func (s *ScalableEndpoint) RxContext(index int, attr *RxAttr) (*Endpoint, error) {
	if s == nil {
		return nil, ErrInval
	}
	return s.context(index, false, nil, attr)
}

func (s *ScalableEndpoint) context(index int, tx bool, ta *TxAttr, ra *RxAttr) (*Endpoint, error) {
	op := "fi_rx_context"
	max := s.info.EPAttr.RxCtxCnt
	if tx {
		op, max = "fi_tx_context", s.info.EPAttr.TxCtxCnt
	}
	if index < 0 || uint64(index) >= max {
		return nil, opErr(op, s.dom.prov.Name(), ErrInval)
	}
	if err := s.lc.hold(); err != nil {
		return nil, opErr(op, s.dom.prov.Name(), err)
	}
	var p provider.Endpoint
	var err error
	if tx {
		p, err = s.p.TxContext(index, ta)
	} else {
		p, err = s.p.RxContext(index, ra)
	}
	if err != nil {
		s.lc.release()
		return nil, opErr(op, s.dom.prov.Name(), err)
	}
	if err := s.dom.lc.hold(); err != nil {
		p.Close()
		s.lc.release()
		return nil, opErr(op, s.dom.prov.Name(), err)
	}
	ep := newEndpoint(s.dom, s.info, p)
	ep.sep = s
	if s.av != nil {
		if err := ep.Bind(s.av, 0); err != nil {
			ep.Close()
			return nil, err
		}
	}
	return ep, nil
}

// Enable enables the scalable endpoint (fi_enable).
func (s *ScalableEndpoint) Enable() error {
	if s == nil {
		return ErrInval
	}
	var v provider.AVView
	if s.av != nil {
		v = s.av.view()
	}
	return opErr("fi_enable", s.dom.prov.Name(), s.p.Enable(v))
}

// Name returns the scalable endpoint's address (fi_getname).
func (s *ScalableEndpoint) Name() ([]byte, error) {
	if s == nil {
		return nil, ErrInval
	}
	b, err := s.p.Name()
	return b, opErr("fi_getname", s.dom.prov.Name(), err)
}

// Close closes the scalable endpoint; it returns ErrBusy while transmit or
// receive contexts are open.
func (s *ScalableEndpoint) Close() error {
	if s == nil {
		return ErrInval
	}
	if err := s.lc.beginClose(); err != nil {
		return opErr("fi_close", s.dom.prov.Name(), err)
	}
	err := s.p.Close()
	if s.av != nil {
		s.av.unbindEndpoint()
	}
	s.dom.lc.release()
	return opErr("fi_close", s.dom.prov.Name(), err)
}

// STX is a shared transmit context (fi_stx_context).
type STX struct {
	lc  lifecycle
	dom *Domain
	p   provider.SharedTx
}

// OpenSTX opens a shared transmit context (fi_stx_context). Providers that
// cannot share transmit contexts return ErrNoSys.
func (d *Domain) OpenSTX(attr *TxAttr) (*STX, error) {
	if d == nil {
		return nil, ErrInval
	}
	sd, ok := d.d.(provider.SharedTxDomain)
	if !ok {
		return nil, opErr("fi_stx_context", d.prov.Name(), ErrNoSys)
	}
	if err := d.lc.hold(); err != nil {
		return nil, opErr("fi_stx_context", d.prov.Name(), err)
	}
	p, err := sd.SharedTx(d.stxAttr(attr))
	if err != nil {
		d.lc.release()
		return nil, opErr("fi_stx_context", d.prov.Name(), err)
	}
	return &STX{dom: d, p: p}, nil
}

// Close closes the shared transmit context; ErrBusy while endpoints use it.
func (x *STX) Close() error {
	if x == nil {
		return ErrInval
	}
	if err := x.lc.beginClose(); err != nil {
		return opErr("fi_close", x.dom.prov.Name(), err)
	}
	err := x.p.Close()
	x.dom.lc.release()
	return opErr("fi_close", x.dom.prov.Name(), err)
}
