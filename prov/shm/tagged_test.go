package shm_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/shm"
)

// Sizes around the protocol boundaries: inline (slot), one segment,
// several pipelined segments.
var boundarySizes = []int{0, 1, shm.SlotSize - 64 - 1, shm.SlotSize - 64, shm.SlotSize - 64 + 1, shm.InjectSize,
	shm.BufSize - 1, shm.BufSize, shm.BufSize + 1, 3*shm.BufSize + 17, 1 << 20}

// TestTaggedSizesReverseOrder: tagged messages of every protocol size,
// received by receives posted in reverse tag order, arrive intact with
// their tag and remote CQ data.
func TestTaggedSizesReverseOrder(t *testing.T) {
	a, b, ab, _ := pair(t, nodeOpts{})
	n := len(boundarySizes)
	bufs := make([][]byte, n)
	for i := n - 1; i >= 0; i-- {
		bufs[i] = make([]byte, boundarySizes[i]+8)
		if err := b.ep.TRecv(bufs[i], nil, fabric.AddrUnspec, uint64(1000+i), 0, i); err != nil {
			t.Fatal(err)
		}
	}
	for i, size := range boundarySizes {
		msg := pattern(size, i)
		retry(t, "tsenddata", func() error {
			return a.ep.TSendData(msg, nil, uint64(i), ab, uint64(1000+i), "s")
		}, a.txcq, b.rxcq)
		if got, ee := wait(t, a.txcq, b.rxcq); ee != nil || got.OpContext != "s" ||
			got.Flags != fabric.FlagSend|fabric.FlagTagged {
			t.Fatalf("size %d: send completion %+v %+v", size, got, ee)
		}
	}
	for range boundarySizes {
		got, ee := wait(t, b.rxcq, a.txcq)
		if ee != nil {
			t.Fatalf("receive error %+v", ee)
		}
		i := got.OpContext.(int)
		want := fabric.FlagRecv | fabric.FlagTagged | fabric.FlagRemoteCQData
		if got.Tag != uint64(1000+i) || got.Len != uint64(boundarySizes[i]) || got.Flags != want ||
			got.Data != uint64(i) || !bytes.Equal(bufs[i][:got.Len], pattern(boundarySizes[i], i)) {
			t.Fatalf("message %d (%d bytes): %+v", i, boundarySizes[i], got)
		}
	}
}

// TestUnexpectedEverySize: messages of every protocol size sent before
// any receive is posted are buffered and delivered intact, in order.
func TestUnexpectedEverySize(t *testing.T) {
	for _, tagged := range []bool{false, true} {
		t.Run(fmt.Sprint("tagged=", tagged), func(t *testing.T) {
			a, b, ab, _ := pair(t, nodeOpts{})
			for i, size := range boundarySizes {
				msg := pattern(size, i)
				retry(t, "send", func() error {
					if tagged {
						return a.ep.TSend(msg, nil, ab, 7, nil)
					}
					return a.ep.Send(msg, nil, ab, nil)
				}, a.txcq, b.rxcq)
			}
			for range boundarySizes {
				if _, ee := wait(t, a.txcq, b.rxcq); ee != nil {
					t.Fatal(ee)
				}
			}
			expectNone(t, b.rxcq, 20*time.Millisecond, a.txcq)
			for i, size := range boundarySizes {
				buf := make([]byte, size)
				var err error
				if tagged {
					err = b.ep.TRecv(buf, nil, fabric.AddrUnspec, 7, 0, i)
				} else {
					err = b.ep.Recv(buf, nil, fabric.AddrUnspec, i)
				}
				if err != nil {
					t.Fatal(err)
				}
				got, ee := wait(t, b.rxcq)
				if ee != nil || got.OpContext != i || got.Len != uint64(size) || !bytes.Equal(buf, pattern(size, i)) {
					t.Fatalf("unexpected message %d (%d bytes): %+v %+v", i, size, got, ee)
				}
			}
		})
	}
}

// TestTaggedIgnoreAndDirected: ignore bits widen a tagged receive, and a
// directed tagged receive takes only its source's message.
func TestTaggedIgnoreAndDirected(t *testing.T) {
	o := nodeOpts{caps: fabric.CapDirectedRecv}
	a, b, ab, ba := pair(t, o)
	c := newNode(t, o)
	cb := c.insert(b.addr)
	bc := b.insert(c.addr)
	fromC := make([]byte, 16)
	if err := b.ep.TRecv(fromC, nil, bc, 0x50, 0x0f, "c"); err != nil {
		t.Fatal(err)
	}
	retry(t, "a", func() error { return a.ep.TSend([]byte("from a"), nil, ab, 0x55, nil) }, a.txcq)
	expectNone(t, b.rxcq, 20*time.Millisecond, a.txcq)
	retry(t, "c", func() error { return c.ep.TSend([]byte("from c"), nil, cb, 0x5a, nil) }, c.txcq)
	got, ee := wait(t, b.rxcq, c.txcq)
	if ee != nil || got.OpContext != "c" || got.Tag != 0x5a || string(fromC[:got.Len]) != "from c" {
		t.Fatalf("directed receive: %+v %+v", got, ee)
	}
	anyA := make([]byte, 16)
	if err := b.ep.TRecv(anyA, nil, ba, 0x55, 0, "a"); err != nil {
		t.Fatal(err)
	}
	got, ee = wait(t, b.rxcq, a.txcq)
	if ee != nil || got.OpContext != "a" || string(anyA[:got.Len]) != "from a" {
		t.Fatalf("receive directed at a: %+v %+v", got, ee)
	}
}

// TestTaggedPeekClaimDiscard: FI_PEEK finds (or not) a queued message,
// FI_CLAIM retrieves the claimed one, FI_DISCARD drops one.
func TestTaggedPeekClaimDiscard(t *testing.T) {
	a, b, ab, _ := pair(t, nodeOpts{})
	if err := b.ep.TRecvMsg(&fabric.Msg{Addr: fabric.AddrUnspec, Tag: 1, Context: "none"}, fabric.FlagPeek); err != nil {
		t.Fatal(err)
	}
	if _, ee := wait(t, b.rxcq); ee == nil || !errors.Is(ee.Err, fabric.ErrNoMsg) || ee.OpContext != "none" {
		t.Fatalf("peek with nothing queued: %+v; want FI_ENOMSG", ee)
	}
	for i, m := range []string{"claim me", "discard me"} {
		msg := []byte(m)
		retry(t, "tsend", func() error { return a.ep.TSend(msg, nil, ab, uint64(10+i), nil) }, a.txcq)
		wait(t, a.txcq)
	}
	// Let the messages arrive as unexpected.
	expectNone(t, b.rxcq, 20*time.Millisecond)
	if err := b.ep.TRecvMsg(&fabric.Msg{Addr: fabric.AddrUnspec, Tag: 10, Context: "peek"}, fabric.FlagPeek); err != nil {
		t.Fatal(err)
	}
	got, ee := wait(t, b.rxcq)
	if ee != nil || got.OpContext != "peek" || got.Len != 8 || got.Tag != 10 {
		t.Fatalf("peek: %+v %+v", got, ee)
	}
	ctx := new(int)
	if err := b.ep.TRecvMsg(&fabric.Msg{Addr: fabric.AddrUnspec, Tag: 10, Context: ctx}, fabric.FlagPeek|fabric.FlagClaim); err != nil {
		t.Fatal(err)
	}
	if got, ee := wait(t, b.rxcq); ee != nil || got.OpContext != ctx {
		t.Fatalf("peek|claim: %+v %+v", got, ee)
	}
	buf := make([]byte, 16)
	if err := b.ep.TRecvMsg(&fabric.Msg{IOV: [][]byte{buf}, Addr: fabric.AddrUnspec, Context: ctx}, fabric.FlagClaim); err != nil {
		t.Fatal(err)
	}
	if got, ee := wait(t, b.rxcq); ee != nil || string(buf[:got.Len]) != "claim me" || got.Flags&fabric.FlagClaim == 0 {
		t.Fatalf("claim: %+v %+v %q", got, ee, buf)
	}
	if err := b.ep.TRecvMsg(&fabric.Msg{Addr: fabric.AddrUnspec, Tag: 11, Context: "d"}, fabric.FlagPeek|fabric.FlagDiscard); err != nil {
		t.Fatal(err)
	}
	if got, ee := wait(t, b.rxcq); ee != nil || got.OpContext != "d" {
		t.Fatalf("peek|discard: %+v %+v", got, ee)
	}
	if err := b.ep.TRecvMsg(&fabric.Msg{Addr: fabric.AddrUnspec, Tag: 11, Context: "gone"}, fabric.FlagPeek); err != nil {
		t.Fatal(err)
	}
	if _, ee := wait(t, b.rxcq); ee == nil || !errors.Is(ee.Err, fabric.ErrNoMsg) {
		t.Fatalf("peek after discard: %+v; want FI_ENOMSG", ee)
	}
}
