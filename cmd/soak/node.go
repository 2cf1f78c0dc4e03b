package main

import (
	"errors"
	"fmt"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
)

// world is one fabric of a provider, possibly hooked by chaos, with one
// domain and one AV, and the endpoints opened in it.
type world struct {
	info    *fabric.Info
	hook    *chaos.Hook
	dom     *fabric.Domain
	av      *fabric.AV
	closers []func() error
}

// node is an enabled endpoint with its own transmit and receive CQs.
type node struct {
	ep         *fabric.Endpoint
	txcq, rxcq *fabric.CQ
	name       []byte
}

// openWorld opens prov's FI_EP_RDM fabric, through a chaos hook of
// configuration cfg when cfg is not nil.
func openWorld(prov string, cfg *chaos.Config) (*world, error) {
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg
	h.EPAttr.Type = fabric.EPRDM
	h.FabricAttr.ProvName = prov
	h.Mode = fabric.ModeContext | fabric.ModeContext2
	infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
	if err != nil {
		return nil, fmt.Errorf("GetInfo(%s): %w", prov, err)
	}
	w := &world{info: infos[0]}
	var fab *fabric.Fabric
	if cfg != nil {
		fab, w.hook, err = chaos.Open(w.info, cfg)
	} else {
		fab, err = fabric.Open(w.info)
	}
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, fab.Close)
	if w.dom, err = fab.OpenDomain(w.info); err != nil {
		w.Close()
		return nil, err
	}
	w.closers = append(w.closers, w.dom.Close)
	if w.av, err = w.dom.OpenAV(&fabric.AVAttr{Type: fabric.AVTable}); err != nil {
		w.Close()
		return nil, err
	}
	w.closers = append(w.closers, w.av.Close)
	return w, nil
}

// node opens an enabled endpoint of the world.
func (w *world) node() (*node, error) { return w.nodeOrder(true) }

// nodeOrder opens an enabled endpoint of the world; with sas false, its
// transmit msg_order lacks FI_ORDER_SAS (the application does not need
// its sends ordered, so the chaos hook may reorder them).
func (w *world) nodeOrder(sas bool) (*node, error) {
	n := &node{}
	var err error
	for _, q := range []**fabric.CQ{&n.txcq, &n.rxcq} {
		if *q, err = w.dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatMsg, Size: 4096}); err != nil {
			return nil, err
		}
		w.closers = append(w.closers, (*q).Close)
	}
	ei := w.info.Dup()
	ei.SrcAddr = nil
	if !sas && ei.TxAttr != nil {
		ei.TxAttr.MsgOrder &^= fabric.OrderSAS
	}
	if n.ep, err = w.dom.OpenEndpoint(ei); err != nil {
		return nil, err
	}
	w.closers = append(w.closers, n.ep.Close)
	for _, err := range []error{n.ep.BindCQ(n.txcq, fabric.FlagTransmit), n.ep.BindCQ(n.rxcq, fabric.FlagRecv), n.ep.BindAV(w.av), n.ep.Enable()} {
		if err != nil {
			return nil, err
		}
	}
	if n.name, err = n.ep.Name(); err != nil {
		return nil, err
	}
	return n, nil
}

// insert puts a peer's name in the AV.
func (w *world) insert(name []byte) (fabric.Addr, error) {
	fi := make([]fabric.Addr, 1)
	if _, err := w.av.Insert([][]byte{name}, fi, 0); err != nil {
		return 0, err
	}
	return fi[0], nil
}

// Close closes everything the world opened, newest first.
func (w *world) Close() error {
	var errs []error
	for i := len(w.closers) - 1; i >= 0; i-- {
		if err := w.closers[i](); err != nil && !errors.Is(err, fabric.ErrClosed) {
			errs = append(errs, err)
		}
	}
	w.closers = nil
	return errors.Join(errs...)
}

// completion is one entry read from a CQ: Err is nil for a success.
type completion struct {
	ctx any
	len uint64
	err error
	at  time.Time
}

// poll reads what q has (driving its endpoints' progress) and calls f for
// each entry, error entries included; it returns how many it found.
func poll(q *fabric.CQ, f func(completion)) (int, error) {
	var e [64]fabric.CQEntry
	found := 0
	for {
		n, err := q.Read(e[:])
		switch {
		case err == nil:
			now := time.Now()
			for i := range n {
				f(completion{ctx: e[i].OpContext, len: e[i].Len, at: now})
			}
			found += n
			if n < len(e) {
				return found, nil
			}
		case errors.Is(err, fabric.ErrAvail):
			var ee fabric.CQErrEntry
			if err := q.ReadErr(&ee); err != nil {
				return found, err
			}
			f(completion{ctx: ee.OpContext, len: ee.Len, err: ee.Err, at: time.Now()})
			found++
		case errors.Is(err, fabric.ErrAgain):
			return found, nil
		default:
			return found, err
		}
	}
}
