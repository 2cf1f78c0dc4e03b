package lnx

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestRaceBothPaths: several goroutines on a local peer (shm) and on a
// remote one (tcp) send at once to one lnx endpoint, whose FI_ADDR_UNSPEC
// receives (untagged and tagged) both paths race for, while several
// goroutines read its CQ. Every message is received exactly once, every
// receive completes once, and per sender the messages match receives in
// posting order.
func TestRaceBothPaths(t *testing.T) {
	a := openNode(t, "")
	b := openNode(t, "")
	c := openNode(t, "remote-host")
	ba, ca := b.insert(a.addr), c.insert(a.addr)
	ab, ac := a.insert(b.addr), a.insert(c.addr)

	const senders = 3 // goroutines per peer
	per := 80         // total stays within rx_attr.size
	if testing.Short() {
		per = 30
	}
	total := 2 * senders * per // half untagged, half tagged (by parity)
	bufs := make([][]byte, total)
	for i := range bufs {
		bufs[i] = make([]byte, 8)
	}
	// Post every receive up front, alternately untagged and tagged, so
	// that exactly total/2 of each kind exist.
	for i := 0; i < total; i++ {
		var err error
		if i%2 == 0 {
			err = a.ep.Recv(bufs[i], nil, fabric.AddrUnspec, i)
		} else {
			err = a.ep.TRecv(bufs[i], nil, fabric.AddrUnspec, 3, 0, i)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var failed atomic.Bool
	for _, s := range []struct {
		n    *node
		dest fabric.Addr
		id   uint32
	}{{b, ba, 1}, {c, ca, 2}} {
		for g := 0; g < senders; g++ {
			wg.Add(1)
			go func(n *node, dest fabric.Addr, sender uint32) {
				defer wg.Done()
				msg := make([]byte, 8)
				deadline := time.Now().Add(30 * time.Second)
				for i := 0; i < per; i++ {
					binary.LittleEndian.PutUint32(msg, sender)
					binary.LittleEndian.PutUint32(msg[4:], uint32(i))
					for {
						var err error
						if i%2 == 0 {
							err = n.ep.Inject(msg, dest)
						} else {
							err = n.ep.TInject(msg, dest, 3)
						}
						if err == nil {
							break
						}
						if !errors.Is(err, fabric.ErrAgain) || time.Now().After(deadline) {
							t.Errorf("sender %d: %v", sender, err)
							failed.Store(true)
							return
						}
						n.txcq.Read(nil)
					}
				}
			}(s.n, s.dest, s.id*16+uint32(g))
		}
	}
	var mu sync.Mutex
	seenRecv := make([]bool, total)
	seenMsg := map[uint64]int{} // sender<<32|i -> receive index
	srcOf := map[uint32]fabric.Addr{}
	var count atomic.Int64
	var readers sync.WaitGroup
	for r := 0; r < 3; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			ent := make([]fabric.CQEntry, 8)
			src := make([]fabric.Addr, 8)
			deadline := time.Now().Add(60 * time.Second)
			for count.Load() < int64(total) && !failed.Load() {
				if time.Now().After(deadline) {
					t.Errorf("received %d of %d", count.Load(), total)
					failed.Store(true)
					return
				}
				n, err := a.rxcq.ReadFrom(ent, src)
				if errors.Is(err, fabric.ErrAvail) {
					var ee fabric.CQErrEntry
					if a.rxcq.ReadErr(&ee) == nil {
						t.Errorf("error completion %+v", ee)
						failed.Store(true)
						return
					}
				}
				mu.Lock()
				for i := 0; i < n; i++ {
					idx := ent[i].OpContext.(int)
					if seenRecv[idx] {
						t.Errorf("receive %d completed twice", idx)
					}
					seenRecv[idx] = true
					m := bufs[idx]
					sender, seq := binary.LittleEndian.Uint32(m), binary.LittleEndian.Uint32(m[4:])
					key := uint64(sender)<<32 | uint64(seq)
					if _, dup := seenMsg[key]; dup {
						t.Errorf("message %d/%d received twice", sender, seq)
					}
					seenMsg[key] = idx
					if (seq%2 == 0) != (ent[i].Flags&fabric.FlagTagged == 0) || (seq%2 == 0) != (idx%2 == 0) {
						t.Errorf("message %d/%d (flags %v) matched receive %d", sender, seq, ent[i].Flags, idx)
					}
					if prev, ok := srcOf[sender]; ok && prev != src[i] {
						t.Errorf("sender %d: sources %v and %v", sender, prev, src[i])
					}
					srcOf[sender] = src[i]
				}
				mu.Unlock()
				count.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	readers.Wait()
	if failed.Load() {
		t.FailNow()
	}
	if len(seenMsg) != total {
		t.Fatalf("%d distinct messages, want %d", len(seenMsg), total)
	}
	for sender, src := range srcOf {
		want := ab
		if sender>>4 == 2 {
			want = ac
		}
		if src != want {
			t.Errorf("sender %d: source %v, want %v", sender, src, want)
		}
	}
	// Per sender and kind, receives matched in posting order.
	for key, idx := range seenMsg {
		sender, seq := uint32(key>>32), uint32(key)
		if seq < 2 {
			continue
		}
		if prev := seenMsg[uint64(sender)<<32|uint64(seq-2)]; prev >= idx {
			t.Errorf("message %d/%d matched receive %d, after %d/%d matched %d", sender, seq, idx, sender, seq-2, prev)
		}
	}
}
