package tcp

import (
	"bytes"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cq"
	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/internal/wire/rxmwire"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

// readRsp encodes a tcp read response carrying p.
func readRsp(p []byte) []byte {
	h := tcpwire.Header{Op: tcpwire.OpReadRsp}
	h.SetPayload(uint64(len(p)))
	return append(tcpwire.AppendHeader(nil, &h, false), p...)
}

// nextEntry reads one completion (or error completion) of q within 5 s.
func nextEntry(t *testing.T, q *cq.CQ) (provider.CQEntry, *provider.CQErrEntry) {
	t.Helper()
	var e [1]provider.CQEntry
	for deadline := time.Now().Add(waitLimit); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		k, err := q.Read(e[:])
		if k == 1 {
			return e[0], nil
		}
		if err == provider.EAVAIL {
			var ee provider.CQErrEntry
			if q.ReadErr(&ee) == nil {
				return provider.CQEntry{}, &ee
			}
		}
	}
	t.Fatal("no completion within 5 s")
	return provider.CQEntry{}, nil
}

// TestRDMBufferedRendezvousFromRawPeer: a rendezvous request from a C-like
// peer, unexpected under FI_BUFFERED_RECV, is queued and its first
// FI_OPT_BUFFERED_MIN bytes read with a read request of that range; only
// then is it reported (FI_MORE, those bytes). The claim reads the rest
// with one more read request and sends the read-done. When the peer
// closes before answering the first read, the message is reported with
// nothing shown, and its claim completes with FI_ECONNABORTED.
func TestRDMBufferedRendezvousFromRawPeer(t *testing.T) {
	leakCheck(t)
	const min, size = 100, 300000
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	for _, dies := range []bool{false, true} {
		a := newFlt(t, fltOpts{bufMin: min})
		r := newRawRDM(t, a)
		rv := rxmwire.Rndv{Count: 2}
		rv.IOV[0] = rxmwire.RndvIOV{Addr: 0x1000, Len: 60, Key: rxmwire.KeyBase | 1}
		rv.IOV[1] = rxmwire.RndvIOV{Addr: 0x9000, Len: size - 60, Key: rxmwire.KeyBase | 2}
		body := make([]byte, rxmwire.RndvSize)
		rv.Put(body)
		if _, err := r.c.Write(rxmFrame(rxmwire.Header{Type: rxmwire.TypeRndvReq, Op: rxmwire.OpMsg, Size: size,
			MsgID: 5}, body)); err != nil {
			t.Fatal(err)
		}
		// The first read asks for the first min bytes, across both regions.
		readAsk := func(want ...tcpwire.RMAIOV) {
			t.Helper()
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { // manual progress while the peer reads
				defer close(done)
				for {
					select {
					case <-stop:
						return
					default:
						a.ep.Progress()
						time.Sleep(50 * time.Microsecond)
					}
				}
			}()
			h, _ := r.readFrame()
			close(stop)
			<-done
			if h.Op != tcpwire.OpReadReq || int(h.RMACount) != len(want) {
				t.Fatalf("frame %+v, want a read request of %v", h, want)
			}
			for i, w := range want {
				if h.RMA[i] != w {
					t.Fatalf("read request region %d: %+v, want %+v", i, h.RMA[i], w)
				}
			}
		}
		readAsk(tcpwire.RMAIOV{Addr: 0x1000, Len: 60, Key: rxmwire.KeyBase | 1},
			tcpwire.RMAIOV{Addr: 0x9000, Len: min - 60, Key: rxmwire.KeyBase | 2})
		if c := poll(a.rx, nil); len(c) != 0 {
			t.Fatalf("reported before its first bytes arrived: %+v", c)
		}
		if dies {
			r.c.Close()
		} else if _, err := r.c.Write(readRsp(msg[:min])); err != nil {
			t.Fatal(err)
		}
		rep, ee := nextEntry(t, a.rx)
		if ee != nil {
			t.Fatalf("report: %+v", *ee)
		}
		shown := min
		if dies {
			shown = 0
		}
		if rep.Len != size || rep.Flags&provider.FlagMore == 0 || len(rep.Buf) != shown ||
			!bytes.Equal(rep.Buf, msg[:shown]) {
			t.Fatalf("report len %d flags %v, %d bytes shown; want %d, FI_MORE, %d", rep.Len, rep.Flags, len(rep.Buf),
				size, shown)
		}
		ref, ok := rep.OpContext.(srx.BufRef)
		if !ok {
			t.Fatalf("report context %T", rep.OpContext)
		}
		buf := make([]byte, size)
		if err := a.rq.ClaimBuffered(ref, &provider.Msg{Buf: buf, Context: "claim", Flags: provider.FlagCompletion},
			false, false); err != nil {
			t.Fatalf("claim: %v", err)
		}
		if dies {
			_, ee := nextEntry(t, a.rx)
			if ee == nil || ee.Err != provider.ECONNABORTED || ee.OpContext != "claim" {
				t.Fatalf("claim of a message whose sender went away: %+v, want FI_ECONNABORTED", ee)
			}
			continue
		}
		readAsk(tcpwire.RMAIOV{Addr: 0x9000 + min - 60, Len: size - min, Key: rxmwire.KeyBase | 2})
		if _, err := r.c.Write(readRsp(msg[min:])); err != nil {
			t.Fatal(err)
		}
		c, ee := nextEntry(t, a.rx)
		if ee != nil || c.OpContext != "claim" || c.Len != size || c.Flags&provider.FlagClaim == 0 || !bytes.Equal(buf, msg) {
			t.Fatalf("claim completion %+v %+v (data ok %v)", c, ee, bytes.Equal(buf, msg))
		}
		h, p := r.readFrame()
		var rh rxmwire.Header
		if h.Op != tcpwire.OpMsg || rh.Parse(p) != nil || rh.Type != rxmwire.TypeRndvReadDone || rh.MsgID != 5 {
			t.Fatalf("after the claim: frame %+v %+v, want the read-done of message 5", h, rh)
		}
	}
}
