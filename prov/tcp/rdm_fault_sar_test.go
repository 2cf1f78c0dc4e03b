package tcp

import (
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/wire/rxmwire"
)

// Peers killed in the middle of SAR messages (segmentation and
// reassembly, FI_OFI_RXM_ENABLE_DYN_RBUF=0: messages above the eager limit
// up to the SAR limit go as runs of segments).

func init() { testHelpers["sar"] = sarHelperMain }

// TestRDMPeerKilledSARSend: SAR messages towards a peer that reads
// nothing fill the socket and queue up (one of them partly written); the
// peer is killed: every send completes within 5 s, the unwritten and the
// partly written ones in error.
func TestRDMPeerKilledSARSend(t *testing.T) {
	leakCheck(t)
	t.Setenv(envRxmDynRbuf, "0")
	a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	if a.ep.dynRbuf || a.ep.sarLimit < 100<<10 {
		t.Fatalf("SAR not in use: dynRbuf %v, SAR limit %d", a.ep.dynRbuf, a.ep.sarLimit)
	}
	p := startPeer(t, "stall")
	dest := a.mustInsert(t, p.name)
	buf := make([]byte, 100<<10) // 7 segments
	const n = 300                // 30 MiB
	for i := 0; i < n; i++ {
		if err := a.send(dest, buf, false, 0, i); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	var comps []fltComp
	deadline := time.Now().Add(waitLimit)
	partial := false
	for q := a.queuedOn(); ; q = a.queuedOn() {
		comps = poll(a.tx, comps)
		time.Sleep(20 * time.Millisecond)
		if q > 0 && q == a.queuedOn() {
			a.ep.mu.Lock()
			for _, c := range a.ep.conns {
				if c != nil && c.tx.head() != nil && c.tx.head().off > 0 {
					partial = true
				}
			}
			a.ep.mu.Unlock()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sends never backed up (%d queued)", q)
		}
	}
	t.Logf("%d of %d sends done before the kill, a message partly written: %v", len(comps), n, partial)
	killSendsFail(t, p, a, other, comps, n)
}

// TestRDMPeerKilledSARRecv: the peer is killed after the first segment of
// a SAR message that matched our receive: the receive completes in error
// within 5 s (the peer is a raw rxm peer that stops after that segment).
func TestRDMPeerKilledSARRecv(t *testing.T) {
	leakCheck(t)
	a, other := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	rb := make([]byte, 100<<10)
	if err := a.recv(rb, false, 0, 0, "sar"); err != nil {
		t.Fatal(err)
	}
	p := startPeer(t, "rawsarsend", "TCP_TEST_HELPER=sar", "TCP_TEST_RDM_PEER="+hex.EncodeToString(a.name))
	a.mustInsert(t, p.name)
	p.expect("MIDWAY", waitLimit, a)
	deadline := time.Now().Add(waitLimit)
	for {
		a.ep.Progress()
		a.ep.mu.Lock()
		matched := false
		for _, c := range a.ep.conns {
			if c != nil {
				for _, s := range c.sar {
					matched = matched || (s.rd.e != nil && s.got > 0)
				}
			}
		}
		a.ep.mu.Unlock()
		if matched {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first segment did not match the receive within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	if c := poll(a.rx, nil); len(c) > 0 {
		t.Fatalf("receive completed before the peer died: %+v", c)
	}
	killOneFails(t, p, a, other, a.rx, "receive", "sar")
}

// sarHelperMain is the rawsarsend peer: it connects to TCP_TEST_RDM_PEER,
// sends the first segment of a 100 KiB SAR message, says MIDWAY and
// stalls until killed.
func sarHelperMain() int {
	err := func() error {
		c, _, err := rawHelperConnect()
		if err != nil {
			return err
		}
		seg := make([]byte, rxmwire.EagerLimit)
		f := rxmFrame(rxmwire.Header{Type: rxmwire.TypeSAR, SegSize: uint16(len(seg)), MsgID: 9,
			CtrlData: rxmwire.SegFirst, Op: rxmwire.OpMsg, Size: 100 << 10}, seg)
		if _, err := c.Write(f); err != nil {
			return err
		}
		keep(c)
		fmt.Println("MIDWAY")
		select {}
	}()
	fmt.Fprintf(os.Stderr, "sar helper: %v\n", err)
	return 1
}

// TestRDMUnexpectedSARBounded: unexpected SAR messages count against the
// unexpected-message bound by their whole length: a flood of them is held
// back (the sender backs up), and all arrive in order once receives come.
func TestRDMUnexpectedSARBounded(t *testing.T) {
	leakCheck(t)
	t.Setenv(envRxmDynRbuf, "0")
	a, b := newFlt(t, fltOpts{}), newFlt(t, fltOpts{})
	floodUnexpectedBounded(t, a, b, a.mustInsert(t, b.name))
}
