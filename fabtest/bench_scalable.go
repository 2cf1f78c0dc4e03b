package fabtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// scalableWindow is the number of messages each context pair of
// BenchScalable keeps in flight (and receives posted).
const scalableWindow = 64

// BenchScalable measures the message rate of a scalable endpoint's
// contexts used in parallel, with 1, 2 and 4 transmit/receive context
// pairs (sub-benchmarks ctx=1, ctx=2, ctx=4): scalable endpoint A's
// transmit context i sends size-byte messages to receive context i of
// scalable endpoint B (fi_rx_addr), each pair driven by one goroutine
// that keeps scalableWindow messages in flight, posting receives and
// reading both CQs. It reports msgs/s over all pairs; with no lock
// shared between contexts it grows with the pairs up to the number of
// CPUs (GOMAXPROCS). bench/scalable.sh runs it for every provider under
// SCHED_FIFO and prints the table (on a shared machine, other processes'
// load otherwise takes the second CPU and hides the scaling).
func BenchScalable(b *testing.B, tg Target, size int) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("ctx=%d", n), func(b *testing.B) { benchScalable(b, tg, n, size) })
	}
}

func benchScalable(b *testing.B, tg Target, n, size int) {
	a := tg.openSEP(b, n, n, false)
	r := tg.openSEP(b, n, n, false)
	dest := a.insertSEP(r.addr)
	per := (b.N + n - 1) / n
	errs := make(chan error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := benchPair(a.tx[i], a.txcq[i], r.rx[i], r.rxcq[i], fabric.RxAddr(dest, i, a.bits), per, size); err != nil {
				errs <- fmt.Errorf("pair %d: %w", i, err)
			}
		}()
	}
	b.ResetTimer()
	t0 := time.Now()
	close(start)
	wg.Wait()
	el := time.Since(t0)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(per*n)/el.Seconds(), "msgs/s")
	b.SetBytes(int64(size))
}

// benchPair sends count messages from tx to rx (at dest), with at most
// scalableWindow in flight, and reads every completion.
func benchPair(tx *fabric.Endpoint, txcq *fabric.CQ, rx *fabric.Endpoint, rxcq *fabric.CQ, dest fabric.Addr, count, size int) error {
	bufs := make([][]byte, scalableWindow)
	for k := range bufs {
		bufs[k] = make([]byte, max(size, 1))
		if err := rx.Recv(bufs[k], nil, fabric.AddrUnspec, k); err != nil {
			return err
		}
	}
	msg := make([]byte, size)
	ents := make([]fabric.CQEntry, 16)
	sent, done, recvd := 0, 0, 0
	deadline := time.Now().Add(scaled(60 * time.Second))
	for it := 0; recvd < count || done < sent; it++ {
		for sent < count && sent-recvd < scalableWindow {
			err := tx.Send(msg, nil, dest, nil)
			if errors.Is(err, fabric.ErrAgain) {
				break
			}
			if err != nil {
				return err
			}
			sent++
		}
		m, err := txcq.Read(ents)
		if err != nil && !errors.Is(err, fabric.ErrAgain) {
			return fmt.Errorf("tx cq: %w", err)
		}
		done += m
		m, err = rxcq.Read(ents)
		if err != nil && !errors.Is(err, fabric.ErrAgain) {
			return fmt.Errorf("rx cq: %w", err)
		}
		for _, e := range ents[:m] {
			k := e.OpContext.(int)
			if err := rx.Recv(bufs[k], nil, fabric.AddrUnspec, k); err != nil {
				return err
			}
			recvd++
		}
		if it%4096 == 4095 && time.Now().After(deadline) {
			return fmt.Errorf("stalled: sent %d, completed %d, received %d of %d", sent, done, recvd, count)
		}
	}
	return nil
}
