package shm_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestDeliveryCompleteWaitsForTheReceive: a send with
// FI_DELIVERY_COMPLETE completes only once the message is in a receive
// buffer: not while it waits, unexpected, at the target. Inline and
// segmented, expected and unexpected.
func TestDeliveryCompleteWaitsForTheReceive(t *testing.T) {
	a, b, ab, _ := pair(t, nodeOpts{})
	for _, size := range []int{8, 4096, 100000} {
		for _, inject := range []bool{false, true} {
			if inject && size > 4096 {
				continue
			}
			t.Run(fmt.Sprintf("size=%d/inject=%v", size, inject), func(t *testing.T) {
				msg := pattern(size, size)
				flags := fabric.FlagDeliveryComplete | fabric.FlagCompletion
				if inject {
					flags |= fabric.FlagInject
				}
				retry(t, "sendmsg", func() error {
					return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{msg}, Addr: ab, Context: "dc"}, flags)
				}, a.txcq, b.rxcq)
				expectNone(t, a.txcq, 30*time.Millisecond, b.rxcq)
				buf := make([]byte, size)
				if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
					t.Fatal(err)
				}
				if got, ee := wait(t, a.txcq, b.rxcq); ee != nil || got.OpContext != "dc" {
					t.Fatalf("delivery complete: %+v %+v", got, ee)
				}
				if got, ee := wait(t, b.rxcq); ee != nil || !bytes.Equal(buf[:got.Len], msg) {
					t.Fatalf("receive: %+v %+v", got, ee)
				}
				// Expected: posted first, completes after delivery.
				if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
					t.Fatal(err)
				}
				retry(t, "sendmsg", func() error {
					return a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{msg}, Addr: ab, Context: "dc2"}, flags)
				}, a.txcq, b.rxcq)
				if got, ee := wait(t, a.txcq, b.rxcq); ee != nil || got.OpContext != "dc2" {
					t.Fatalf("delivery complete (expected): %+v %+v", got, ee)
				}
				if _, ee := wait(t, b.rxcq); ee != nil {
					t.Fatal(ee)
				}
			})
		}
	}
}

// TestFenceWaitsForEarlierOperations: an FI_FENCE send is not started
// while an earlier delivery-complete send waits for its receive.
func TestFenceWaitsForEarlierOperations(t *testing.T) {
	a, b, ab, _ := pair(t, nodeOpts{})
	if err := a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{[]byte("first")}, Addr: ab, Context: 1},
		fabric.FlagDeliveryComplete|fabric.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	if err := a.ep.TSendMsg(&fabric.Msg{IOV: [][]byte{[]byte("fenced")}, Addr: ab, Tag: 9, Context: 2},
		fabric.FlagFence|fabric.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	tb := make([]byte, 16)
	if err := b.ep.TRecv(tb, nil, fabric.AddrUnspec, 9, 0, "t"); err != nil {
		t.Fatal(err)
	}
	// The fenced message must not arrive while "first" is unreceived.
	expectNone(t, b.rxcq, 30*time.Millisecond, a.txcq)
	expectNone(t, a.txcq, time.Millisecond, b.rxcq)
	mb := make([]byte, 16)
	if err := b.ep.Recv(mb, nil, fabric.AddrUnspec, "m"); err != nil {
		t.Fatal(err)
	}
	seen := map[any]bool{}
	for len(seen) < 4 {
		var got fabric.CQEntry
		var ee *fabric.CQErrEntry
		if len(seen)%2 == 0 {
			got, ee = wait(t, b.rxcq, a.txcq)
		} else {
			got, ee = wait(t, a.txcq, b.rxcq)
		}
		if ee != nil {
			t.Fatal(ee)
		}
		seen[got.OpContext] = true
	}
	if string(mb[:5]) != "first" || string(tb[:6]) != "fenced" {
		t.Fatalf("payloads %q %q", mb, tb)
	}
}

// TestDeliveryCompleteReceiverCloses: a delivery-complete send whose
// receiver closes without receiving completes with FI_ECONNRESET.
func TestDeliveryCompleteReceiverCloses(t *testing.T) {
	a, b, ab, _ := pair(t, nodeOpts{})
	if err := a.ep.SendMsg(&fabric.Msg{IOV: [][]byte{[]byte("lost")}, Addr: ab, Context: "dc"},
		fabric.FlagDeliveryComplete|fabric.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	expectNone(t, a.txcq, 10*time.Millisecond, b.rxcq)
	if err := b.ep.Close(); err != nil {
		t.Fatal(err)
	}
	_, ee := wait(t, a.txcq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrConnReset) || ee.OpContext != "dc" {
		t.Fatalf("%+v; want FI_ECONNRESET", ee)
	}
}
