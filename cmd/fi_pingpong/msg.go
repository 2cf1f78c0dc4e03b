package main

import (
	"errors"
	"time"

	fabric "github.com/gofabric/fabric"
)

// cmProbe is how often a server waiting for a connection event checks
// that the client is still there.
const cmProbe = 200 * time.Millisecond

// initMsg sets up FI_EP_MSG as fi_pingpong 1.17 does: only the server
// sends a name (its passive endpoint's); the client connects to it, the
// server accepts the FI_CONNREQ, and both wait for FI_CONNECTED before the
// first sync.
func (p *pingpong) initMsg() error {
	if p.client {
		name, err := p.recvName()
		if err != nil {
			return err
		}
		info, err := p.getinfo(p.hints)
		if err != nil {
			return err
		}
		if err := p.openFabric(info); err != nil {
			return err
		}
		if err := p.allocActive(info); err != nil {
			return err
		}
		if err := p.initEP(); err != nil {
			return err
		}
		if err := p.ep.Connect(name, nil); err != nil {
			return failf(errnoOf(err), "fi_connect(): %v", err)
		}
		_, err = p.waitCM(fabric.EventConnected, "FI_CONNECTED")
		return err
	}
	info := p.info
	if err := p.openFabric(info); err != nil {
		return err
	}
	var err error
	if p.pep, err = p.fab.OpenPassiveEndpoint(info); err != nil {
		return failf(errnoOf(err), "fi_passive_ep(): %v", err)
	}
	if err := p.pep.Bind(p.eq, 0); err != nil {
		return failf(errnoOf(err), "fi_pep_bind(): %v", err)
	}
	if err := p.pep.Listen(); err != nil {
		return failf(errnoOf(err), "fi_listen(): %v", err)
	}
	if err := p.sendName(p.pep.Name()); err != nil {
		return err
	}
	ev, err := p.waitCM(fabric.EventConnReq, "FI_CONNREQ")
	if err != nil {
		return err
	}
	if ev.Info == nil {
		return failf(exitFailure, "FI_CONNREQ without an info")
	}
	reject := func(err error) error {
		p.pep.Reject(ev.Info.Handle, nil)
		return err
	}
	if err := p.allocActive(ev.Info); err != nil {
		return reject(err)
	}
	if err := p.initEP(); err != nil {
		return reject(err)
	}
	if err := p.ep.Accept(nil); err != nil {
		return reject(failf(errnoOf(err), "fi_accept(): %v", err))
	}
	_, err = p.waitCM(fabric.EventConnected, "FI_CONNECTED")
	return err
}

// waitCM waits (bounded by the timeout) for one connection event of the
// given type on the EQ. The server also watches the control connection
// meanwhile: a client that closed it (after a bad connect request, or
// without connecting at all) will never complete the connection, so the
// server ends within cmProbe of it rather than at the timeout.
func (p *pingpong) waitCM(want fabric.EventType, name string) (fabric.EQEntry, error) {
	var deadline time.Time
	if p.o.timeout > 0 {
		deadline = time.Now().Add(p.o.timeout)
	}
	var ev fabric.EQEntry
	var err error
	for {
		slice := cmProbe
		if !deadline.IsZero() {
			if left := time.Until(deadline); left < slice {
				slice = max(left, time.Millisecond)
			}
		}
		ev, err = p.eq.SRead(slice, 0)
		if !errors.Is(err, fabric.ErrAgain) || (!deadline.IsZero() && !time.Now().Before(deadline)) {
			break
		}
		if !p.client {
			if perr := p.ctrl.probe(name); perr != nil {
				return ev, perr
			}
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, fabric.ErrAvail):
		var ee fabric.EQErrEntry
		if rerr := p.eq.ReadErr(&ee); rerr != nil {
			return ev, failf(errnoOf(rerr), "fi_eq_readerr(): %v", rerr)
		}
		return ev, failf(int(ee.Err), "eq_readerr: waiting for %s: %s", name, fabric.StrError(int(ee.Err)))
	case errors.Is(err, fabric.ErrAgain):
		return ev, failf(exitETIMEDOUT, "fi_eq_sread(): no %s event within %v: peer gone?", name, p.o.timeout)
	default:
		return ev, failf(errnoOf(err), "fi_eq_sread(): %v", err)
	}
	if ev.Event != want {
		return ev, failf(exitFailure, "Unexpected CM event %v (want %s)", ev.Event, name)
	}
	return ev, nil
}
