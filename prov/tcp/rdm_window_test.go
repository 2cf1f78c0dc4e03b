package tcp_test

import (
	"bytes"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestRDMRendezvousWindowUnexpected: a window of rendezvous sends that
// all arrive before their receives are posted (fabtests' fi_bw -T 1) is
// read back to back once the receives come: the sender queues a read
// response per message, and after a partial write (1 MiB each) what is
// queued is more slices than one sendmsg takes (it failed with EINVAL and
// dropped the connection); every message arrives intact and every send
// completes.
func TestRDMRendezvousWindowUnexpected(t *testing.T) {
	t.Setenv("FI_TCP_RDM_STREAM_LIMIT", "0") // rendezvous, not streamed messages
	t.Setenv("FI_TCP_RDM_CMA", "0")
	a, b := openRDM(t), openRDM(t)
	ab := a.insert(b.name)
	const win, size = 16, 1 << 20
	msgs := make([][]byte, win)
	for i := range msgs {
		msgs[i] = bytes.Repeat([]byte{byte(i + 1)}, size)
		if err := a.ep.Send(msgs[i], nil, ab, i); err != nil {
			t.Fatal(err)
		}
	}
	// Let every rendezvous request reach b before it posts a receive.
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
		a.tx.Read(nil)
		b.rx.Read(nil)
		time.Sleep(time.Millisecond)
	}
	rbufs := make([][]byte, win)
	for i := range rbufs {
		rbufs[i] = make([]byte, size)
		if err := b.ep.Recv(rbufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range drain(t, b.rx, win, a.tx) {
		i := e.OpContext.(int)
		if int(e.Len) != size || !bytes.Equal(rbufs[i], msgs[i]) {
			t.Fatalf("receive %d: %d bytes, data equal %v", i, e.Len, bytes.Equal(rbufs[i], msgs[i]))
		}
	}
	drain(t, a.tx, win, b.rx)
}

// TestRDMReadDoneWithoutProgress: the read-done of a rendezvous receive
// waits for the receiver's next write or progress call (it then goes out
// with the reply in a ping-pong), but not for ever: a receiver that stops
// calling into the endpoint once its receive completed still lets the
// sender's send complete (the control goroutine writes it).
func TestRDMReadDoneWithoutProgress(t *testing.T) {
	t.Setenv("FI_TCP_RDM_STREAM_LIMIT", "0") // rendezvous, not streamed messages
	t.Setenv("FI_TCP_RDM_CMA", "0")
	a, b := openRDM(t), openRDM(t)
	ab := a.insert(b.name)
	msg := bytes.Repeat([]byte{7}, 64<<10)
	rbuf := make([]byte, len(msg))
	if err := b.ep.Recv(rbuf, nil, fabric.AddrUnspec, "rx"); err != nil {
		t.Fatal(err)
	}
	if err := a.ep.Send(msg, nil, ab, "tx"); err != nil {
		t.Fatal(err)
	}
	ent := make([]fabric.CQEntry, 1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, _ := b.rx.Read(ent); n == 1 {
			break
		}
		a.tx.Read(nil)
		if time.Now().After(deadline) {
			t.Fatal("no receive completion within 5 s")
		}
	}
	if !bytes.Equal(rbuf, msg) {
		t.Fatal("data differs")
	}
	// b is not called again.
	for {
		n, _ := a.tx.Read(ent)
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the send did not complete within 5 s while the receiver made no calls")
		}
		time.Sleep(time.Millisecond)
	}
}
