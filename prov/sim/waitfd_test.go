package sim_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/sim"
)

// TestWaitFDBindWhileProgressing: binding endpoints to an FI_WAIT_FD CQ
// (the root asks for the network's descriptor under the wait object's
// lock) while another goroutine's progress writes completions into that
// CQ (which signals the wait object under the network's lock) does not
// deadlock.
func TestWaitFDBindWhileProgressing(t *testing.T) {
	nw := newNetwork(t, sim.Config{})
	c := openCluster(t, nw, clusterOpts{epType: fabric.EPRDM, n: 1})
	fdcq, err := c.dom.OpenCQ(&fabric.CQAttr{Size: 64, WaitObj: fabric.WaitFD})
	if err != nil {
		t.Fatal(err)
	}
	defer fdcq.Close()
	open := func() *fabric.Endpoint {
		ep, err := c.dom.OpenEndpoint(c.info)
		if err != nil {
			t.Error(err)
			return nil
		}
		if err := ep.BindCQ(fdcq, fabric.FlagTransmit|fabric.FlagRecv); err != nil {
			t.Error(err)
		}
		if err := ep.BindAV(c.av); err != nil {
			t.Error(err)
		}
		if err := ep.Enable(); err != nil {
			t.Error(err)
		}
		return ep
	}
	x := open()
	defer x.Close()

	stop := time.Now().Add(time.Second) // the old lock order deadlocked within it 3 times in 3
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // x sends to endpoint 0; reading fdcq steps the network, whose completions signal fdcq's descriptor
		defer wg.Done()
		ents := make([]fabric.CQEntry, 16)
		for time.Now().Before(stop) {
			if err := x.Send([]byte("m"), nil, c.addrs[0], nil); err != nil && !errors.Is(err, fabric.ErrAgain) {
				t.Error(err)
				return
			}
			fdcq.Read(ents)
			fdcq.TryWait() // resets the descriptor: the next completion signals it again
		}
	}()
	go func() { // endpoints bound to fdcq and closed, over and over
		defer wg.Done()
		for time.Now().Before(stop) {
			if ep := open(); ep != nil {
				ep.Close()
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("deadlock: binding to an FI_WAIT_FD CQ while progress writes into it")
	}
}
