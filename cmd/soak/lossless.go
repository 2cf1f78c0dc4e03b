package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/chaos"
)

// lossResult is what one provider's run under chaos counted.
type lossResult struct {
	prov                                string
	sent, delivered, failed, lost, dup  int
	errors, delayed, reordered, bigSent uint64
	elapsed                             time.Duration
	names                               []string // the endpoints' names (shm regions to be gone)
}

// Message sizes of the lossless run: most are small, every 16th is larger
// than tcp RDM's eager limit (16 KiB) and than a shm bounce buffer.
const (
	smallMsg = 64
	bigMsg   = 256 << 10
	window   = 64 // sends in flight at most
	recvs    = 64 // receives posted at the receiver
)

// lossless sends numbered messages from one endpoint to another of prov's
// RDM fabric hooked by chaos (error completions, delays and, where the
// endpoint's ordering allows, reordering), for d, then waits for every
// send to complete and every message that was not reported failed to
// arrive. Each sequence number must be received exactly once or reported
// failed to its sender, never both, never neither.
func lossless(prov string, cfg chaos.Config, d time.Duration) (lossResult, error) {
	r := lossResult{prov: prov}
	w, err := openWorld(prov, &cfg)
	if err != nil {
		return r, err
	}
	defer w.Close()
	a, err := w.nodeOrder(false) // its sends may be reordered
	if err != nil {
		return r, err
	}
	b, err := w.node()
	if err != nil {
		return r, err
	}
	r.names = []string{string(a.name), string(b.name)}
	toB, err := w.insert(b.name)
	if err != nil {
		return r, err
	}
	bufs := make([][]byte, recvs)
	for i := range bufs {
		bufs[i] = make([]byte, bigMsg)
		if err := post(b.ep, bufs[i], i); err != nil {
			return r, err
		}
	}
	got := map[uint64]int{}     // sequence -> times received
	failed := map[uint64]bool{} // sequence -> reported failed to the sender
	inflight := 0
	var pollErr error
	slots := make(map[uint64]int, window) // sequence in flight -> its payload
	free := make([]int, 0, window)
	for i := range window {
		free = append(free, i)
	}
	onTx := func(c completion) {
		s := c.ctx.(uint64)
		inflight--
		free = append(free, slots[s])
		delete(slots, s)
		if c.err != nil {
			failed[s] = true
		}
	}
	onRx := func(c completion) {
		i := c.ctx.(int)
		if c.err != nil {
			pollErr = fmt.Errorf("receive error completion: %w", c.err)
			return
		}
		if c.len < 8 {
			pollErr = fmt.Errorf("short message: %d bytes", c.len)
			return
		}
		got[binary.LittleEndian.Uint64(bufs[i])]++
		if err := post(b.ep, bufs[i], i); err != nil {
			pollErr = err
		}
	}
	progress := func() error {
		if _, err := poll(a.txcq, onTx); err != nil {
			return err
		}
		if _, err := poll(b.rxcq, onRx); err != nil {
			return err
		}
		return pollErr
	}
	payload := make([][]byte, window) // a payload is the caller's until its send completes
	for i := range payload {
		payload[i] = make([]byte, bigMsg)
	}
	start := time.Now()
	var seq uint64
	for time.Since(start) < d {
		if err := progress(); err != nil {
			return r, err
		}
		if len(free) == 0 {
			continue
		}
		slot := free[len(free)-1]
		p := payload[slot][:smallMsg]
		if seq%16 == 15 {
			p = payload[slot][:bigMsg]
		}
		binary.LittleEndian.PutUint64(p, seq)
		err := a.ep.Send(p, nil, toB, seq)
		if errors.Is(err, fabric.ErrAgain) {
			continue
		}
		if err != nil {
			return r, fmt.Errorf("send %d: %w", seq, err)
		}
		if len(p) == bigMsg {
			r.bigSent++
		}
		free = free[:len(free)-1]
		slots[seq] = slot
		inflight++
		seq++
	}
	// Every send completes, and what was not reported failed arrives,
	// within a bound.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if err := progress(); err != nil {
			return r, err
		}
		if inflight == 0 && len(got)+len(failed) >= int(seq) {
			break
		}
	}
	// A little more progress, to see any duplicate arriving late.
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		if err := progress(); err != nil {
			return r, err
		}
	}
	r.elapsed = time.Since(start)
	if inflight != 0 {
		arrived := 0
		for s := range slots {
			if got[s] > 0 {
				arrived++
			}
		}
		st := w.hook.Stats()
		stallDiagnostics(os.Stdout, prov) // before the endpoints close
		return r, fmt.Errorf("%d sends (%d of them received) still without a completion 20s after the last post (%d posted; chaos: %+v)",
			inflight, arrived, seq, st)
	}
	r.sent = int(seq)
	for s := range seq {
		n := got[s]
		switch {
		case failed[s] && n > 0:
			r.dup++ // delivered and reported failed
		case failed[s]:
			r.failed++
		case n == 0:
			r.lost++
		default:
			r.delivered++
			r.dup += n - 1
		}
	}
	for s := range got {
		if s >= seq {
			r.dup++ // a sequence never sent
		}
	}
	st := w.hook.Stats()
	r.errors, r.delayed, r.reordered = st.Errors, st.Delayed, st.Reordered
	return r, w.Close()
}

func post(ep *fabric.Endpoint, buf []byte, i int) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := ep.Recv(buf, nil, fabric.AddrUnspec, i)
		if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
			return err
		}
	}
}
