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
