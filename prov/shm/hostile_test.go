package shm_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/shm"
)

// attachRegion maps the region of the endpoint named addr, as a hostile
// process of the same user could.
func attachRegion(t *testing.T, addr []byte) region {
	t.Helper()
	r, done, err := shm.AttachForTest(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(done)
	return r
}

// region is what the tests use of a mapped region.
type region interface {
	Reserve() (uint64, []byte, bool)
	Publish(uint64)
	Bytes() []byte
	Pending() bool
}

// TestGarbageCommandsAreDropped: published commands full of random bytes
// in a live endpoint's queue are dropped (or, when they happen to decode,
// handled within bounds), never a panic; the endpoint then still receives
// a real message.
func TestGarbageCommandsAreDropped(t *testing.T) {
	a, b, ab, _ := pair(t, nodeOpts{})
	r := attachRegion(t, b.addr)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 20; round++ {
		for i := 0; i < 32; i++ {
			pos, cmd, ok := r.Reserve()
			if !ok {
				break
			}
			for j := range cmd {
				cmd[j] = byte(rng.Uint32())
			}
			switch i % 4 {
			case 1: // a plausible message header with garbage lengths
				cmd[0], cmd[1] = shm.OpMsg, shm.FlagFirst
			case 2:
				cmd[0], cmd[1] = shm.OpTagged, shm.FlagInline
			case 3:
				cmd[0], cmd[1] = shm.OpMsg, shm.FlagLast
			}
			r.Publish(pos)
		}
		b.rxcq.Read(nil)
	}
	// Drain whatever the garbage produced (matched nothing: no receive
	// was posted; unexpected messages may have been queued).
	for i := 0; i < 100; i++ {
		b.rxcq.Read(nil)
	}
	buf := make([]byte, 64)
	tagBuf := make([]byte, 64)
	if err := b.ep.TRecv(tagBuf, nil, fabric.AddrUnspec, 0x77, 0, "t"); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.TSend([]byte("real"), nil, ab, 0x77, nil) }, a.txcq)
	for {
		got, ee := wait(t, b.rxcq, a.txcq)
		if ee != nil {
			continue // an error completion caused by the garbage
		}
		if got.OpContext == "t" {
			if string(tagBuf[:got.Len]) != "real" {
				t.Fatalf("real message: %q", tagBuf[:got.Len])
			}
			break
		}
	}
	_ = buf
}

// TestGarbageOverRegion: random bytes sprayed over a live endpoint's
// whole region (header, control words, queue, pool) while it progresses
// cause no panic and no access outside the mapping.
func TestGarbageOverRegion(t *testing.T) {
	a, b, ab, _ := pair(t, nodeOpts{})
	r := attachRegion(t, b.addr)
	mem := r.Bytes()
	rng := rand.New(rand.NewPCG(3, 4))
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		for i := 0; i < 256; i++ {
			mem[rng.IntN(len(mem))] = byte(rng.Uint32())
		}
		_ = a.ep.Send([]byte("x"), nil, ab, nil)
		_ = b.ep.Recv(make([]byte, 8), nil, fabric.AddrUnspec, nil)
		a.txcq.Read(nil)
		b.rxcq.Read(nil)
	}
}

// TestDamagedPeerHeaderEIO: a peer whose header is invalid cannot be
// written: the send completes in error and nothing is written.
func TestDamagedPeerHeaderEIO(t *testing.T) {
	a, b := newNode(t, nodeOpts{}), newNode(t, nodeOpts{})
	r := attachRegion(t, b.addr)
	r.Bytes()[0] = 'X' // the magic
	ab := a.insert(b.addr)
	err := a.ep.Send([]byte("x"), nil, ab, nil)
	if err == nil {
		_, ee := wait(t, a.txcq)
		if ee == nil || !errors.Is(ee.Err, fabric.ErrIO) {
			t.Fatalf("send to a damaged region: %+v; want FI_EIO", ee)
		}
	} else if !errors.Is(err, fabric.ErrIO) {
		t.Fatalf("send to a damaged region: %v; want FI_EIO", err)
	}
	if r.Pending() {
		t.Fatal("a command was written into the damaged region")
	}
}

// TestAuthKeyMismatch: endpoints of domains with different auth keys
// exchange nothing: the send completes with FI_EACCES and the target's
// queue stays empty.
func TestAuthKeyMismatch(t *testing.T) {
	a := newNode(t, nodeOpts{authKey: []byte("one")})
	b := newNode(t, nodeOpts{authKey: []byte("two")})
	c := newNode(t, nodeOpts{authKey: []byte("one")})
	r := attachRegion(t, b.addr)
	ab, ac := a.insert(b.addr), a.insert(c.addr)
	if err := a.ep.Send([]byte("secret"), nil, ab, "s"); err != nil {
		t.Fatal(err)
	}
	_, ee := wait(t, a.txcq)
	if ee == nil || !errors.Is(ee.Err, fabric.ErrAccess) || ee.OpContext != "s" {
		t.Fatalf("send across auth keys: %+v; want FI_EACCES", ee)
	}
	if err := a.ep.Inject([]byte("secret"), ab); !errors.Is(err, fabric.ErrAccess) {
		t.Fatalf("inject across auth keys: %v; want FI_EACCES", err)
	}
	if r.Pending() {
		t.Fatal("a command was written across auth keys")
	}
	// The same key works.
	buf := make([]byte, 8)
	if err := c.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
		t.Fatal(err)
	}
	retry(t, "send", func() error { return a.ep.Send([]byte("ok"), nil, ac, nil) }, a.txcq)
	if got, ee := wait(t, c.rxcq, a.txcq); ee != nil || string(buf[:got.Len]) != "ok" {
		t.Fatalf("same key: %+v %+v", got, ee)
	}
}
