package tcp_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// rdmEnv is one RDM endpoint on loopback with its CQs and AV.
type rdmEnv struct {
	t    testing.TB
	ep   *fabric.Endpoint
	av   *fabric.AV
	tx   *fabric.CQ
	rx   *fabric.CQ
	name []byte
}

func openRDM(t testing.TB) *rdmEnv { t.Helper(); return openRDMAt(t, "127.0.0.1") }

// openRDMAt is openRDM with the endpoint on node (an IP of lo).
func openRDMAt(t testing.TB, node string) *rdmEnv {
	t.Helper()
	t.Setenv("FI_TCP_IFACE", "lo")
	h := fabric.AllocInfo()
	h.Caps = fabric.CapMsg | fabric.CapTagged
	h.EPAttr.Type = fabric.EPRDM
	h.FabricAttr.ProvName = "tcp"
	infos, err := fabric.GetInfo(fabric.APIVersion, node, "", fabric.FlagSource, h)
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fab.Close() })
	dom, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dom.Close() })
	e := &rdmEnv{t: t}
	for _, cq := range []**fabric.CQ{&e.tx, &e.rx} {
		if *cq, err = dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged}); err != nil {
			t.Fatal(err)
		}
		c := *cq
		t.Cleanup(func() { c.Close() })
	}
	if e.av, err = dom.OpenAV(&fabric.AVAttr{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.av.Close() })
	if e.ep, err = dom.OpenEndpoint(info); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.ep.Close() })
	if err := e.ep.BindCQ(e.tx, fabric.FlagTransmit); err != nil {
		t.Fatal(err)
	}
	if err := e.ep.BindCQ(e.rx, fabric.FlagRecv); err != nil {
		t.Fatal(err)
	}
	if err := e.ep.BindAV(e.av); err != nil {
		t.Fatal(err)
	}
	if err := e.ep.Enable(); err != nil {
		t.Fatal(err)
	}
	if e.name, err = e.ep.Name(); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *rdmEnv) insert(name []byte) fabric.Addr {
	e.t.Helper()
	fa := make([]fabric.Addr, 1)
	if n, err := e.av.Insert([][]byte{name}, fa, 0); err != nil || n != 1 {
		e.t.Fatalf("AV insert: %d %v", n, err)
	}
	return fa[0]
}

// drain reads up to want completions from cq within 5 s, progressing the
// other CQs meanwhile; error entries fail the test.
func drain(t *testing.T, cq *fabric.CQ, want int, others ...*fabric.CQ) []fabric.CQEntry {
	t.Helper()
	var got []fabric.CQEntry
	ent := make([]fabric.CQEntry, 16)
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < want {
		n, err := cq.Read(ent)
		got = append(got, ent[:max(n, 0)]...)
		if errors.Is(err, fabric.ErrAvail) {
			var ee fabric.CQErrEntry
			cq.ReadErr(&ee)
			t.Fatalf("error completion: %+v", ee)
		}
		for _, o := range others {
			o.Read(nil)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d completions within 5 s", len(got), want)
		}
	}
	return got
}

// TestRDMFirstSendsQueued: sends to a peer without a connection are queued
// (never EAGAIN for the connection setup) and complete, eager and
// rendezvous, each matched to the receive posted in the same position
// (completion order may differ: comp_order FI_ORDER_NONE, as in rxm, where
// a rendezvous receive completes after the read of its data).
func TestRDMFirstSendsQueued(t *testing.T) {
	a, b := openRDM(t), openRDM(t)
	ab := a.insert(b.name)
	sizes := []int{0, 1, 64, 16384, 16385, 200000, 5}
	rbufs := make([][]byte, len(sizes))
	for i, n := range sizes {
		rbufs[i] = make([]byte, n+8)
		if err := b.ep.Recv(rbufs[i], nil, fabric.AddrUnspec, i); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range sizes {
		msg := bytes.Repeat([]byte{byte('a' + i)}, n)
		if err := a.ep.Send(msg, nil, ab, i); err != nil {
			t.Fatalf("send %d (%d bytes) before the connection exists: %v", i, n, err)
		}
	}
	done := drain(t, b.rx, len(sizes), a.tx)
	seen := map[int]bool{}
	for k, e := range done {
		i := e.OpContext.(int)
		if seen[i] {
			t.Fatalf("receive %d completed twice", i)
		}
		seen[i] = true
		if int(e.Len) != sizes[i] ||
			!bytes.Equal(rbufs[i][:e.Len], bytes.Repeat([]byte{byte('a' + i)}, sizes[i])) {
			t.Fatalf("receive %d: %+v", k, e)
		}
	}
	drain(t, a.tx, len(sizes), b.rx)
}

// listenPort returns the port of a sockaddr_in name.
func listenPort(name []byte) int { return int(binary.BigEndian.Uint16(name[2:4])) }

// established counts ESTABLISHED IPv4 TCP sockets whose remote port is
// one of ports (connections towards those listeners).
func established(t *testing.T, ports ...int) int {
	t.Helper()
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 4 || fl[3] != "01" {
			continue
		}
		i := strings.LastIndexByte(fl[2], ':')
		p, err := strconv.ParseUint(fl[2][i+1:], 16, 16)
		if err != nil {
			continue
		}
		for _, want := range ports {
			if int(p) == want {
				n++
			}
		}
	}
	return n
}

// TestRDMSimultaneousConnect: two endpoints that send to each other before
// either has a connection end with one connection between them (the
// request from the higher address wins, as in rxm), and every message is
// delivered once.
func TestRDMSimultaneousConnect(t *testing.T) {
	for round := 0; round < 5; round++ {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			a, b := openRDM(t), openRDM(t)
			ab, ba := a.insert(b.name), b.insert(a.name)
			const n = 20
			bufA, bufB := make([][]byte, n), make([][]byte, n)
			for i := 0; i < n; i++ {
				bufA[i], bufB[i] = make([]byte, 8), make([]byte, 8)
				if err := a.ep.Recv(bufA[i], nil, fabric.AddrUnspec, i); err != nil {
					t.Fatal(err)
				}
				if err := b.ep.Recv(bufB[i], nil, fabric.AddrUnspec, i); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < n; i++ {
				if err := a.ep.Send([]byte{'a', byte(i)}, nil, ab, i); err != nil {
					t.Fatal(err)
				}
				if err := b.ep.Send([]byte{'b', byte(i)}, nil, ba, i); err != nil {
					t.Fatal(err)
				}
			}
			ga := drain(t, a.rx, n, b.rx, a.tx, b.tx)
			gb := drain(t, b.rx, n, a.rx, a.tx, b.tx)
			for i := 0; i < n; i++ {
				if ga[i].Len != 2 || bufA[i][0] != 'b' || bufA[i][1] != byte(i) ||
					gb[i].Len != 2 || bufB[i][0] != 'a' || bufB[i][1] != byte(i) {
					t.Fatalf("message %d: %q %q", i, bufA[i][:2], bufB[i][:2])
				}
			}
			drain(t, a.tx, n, b.rx)
			drain(t, b.tx, n, a.rx)
			deadline := time.Now().Add(2 * time.Second)
			for {
				a.rx.Read(nil)
				b.rx.Read(nil)
				c := established(t, listenPort(a.name), listenPort(b.name))
				if c == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d connections between the two endpoints, want 1", c)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// TestRDMHostilePeer: a raw peer that connects with valid rxm connect data
// and then sends a malformed rxm header loses its connection; the endpoint
// keeps serving its other peers.
func TestRDMHostilePeer(t *testing.T) {
	b := openRDM(t)
	a := openRDM(t)
	ab := a.insert(b.name)
	port := listenPort(b.name)
	raw, err := net.DialTimeout("tcp4", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// A tcp connect request (version 3, type 0, 24 bytes of data, BE
	// length, endianness probe 1) with rxm connect data (version 1, little
	// endian, ctrl 4, op 3, port 1, eager limit 16384, rx size 4096,
	// conn id pid 1 / index 0), written by hand as a hostile peer would.
	req := make([]byte, 32+24)
	req[0], req[1] = 3, 0
	binary.BigEndian.PutUint16(req[2:], 24)
	binary.LittleEndian.PutUint64(req[24:], 1)
	cd := req[32:]
	cd[0], cd[1], cd[2], cd[3] = 1, 2, 4, 3
	binary.LittleEndian.PutUint16(cd[4:], 1)
	cd[6] = 2
	binary.LittleEndian.PutUint32(cd[8:], 16384)
	binary.LittleEndian.PutUint32(cd[12:], 4096)
	binary.LittleEndian.PutUint64(cd[16:], 1<<32)
	if _, err := raw.Write(req); err != nil {
		t.Fatal(err)
	}
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	resp := make([]byte, 32+16)
	if _, err := io.ReadFull(raw, resp); err != nil {
		t.Fatalf("accept: %v", err)
	}
	if resp[0] != 3 || resp[1] != 1 || binary.BigEndian.Uint16(resp[2:]) != 16 {
		t.Fatalf("accept header %x", resp)
	}
	// An 80-byte frame (tcp op 0, hdr_size 16) whose rxm header has
	// control type 9.
	frame := make([]byte, 16+64)
	frame[0], frame[6] = 3, 16
	binary.LittleEndian.PutUint64(frame[8:], 80)
	frame[16], frame[17], frame[48] = 4, 9, 2
	if _, err := raw.Write(frame); err != nil {
		t.Fatal(err)
	}
	rbuf := make([]byte, 16)
	if err := b.ep.Recv(rbuf, nil, fabric.AddrUnspec, "good"); err != nil {
		t.Fatal(err)
	}
	// The hostile connection is closed by b.
	closed := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(raw)
		closed <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for done := false; !done; {
		b.rx.Read(nil)
		select {
		case <-closed:
			done = true
		default:
			if time.Now().After(deadline) {
				t.Fatal("hostile connection still open after 5 s")
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := a.ep.Send([]byte("still here"), nil, ab, nil); err != nil {
		t.Fatal(err)
	}
	got := drain(t, b.rx, 1, a.tx)
	if got[0].OpContext != "good" || string(rbuf[:got[0].Len]) != "still here" {
		t.Fatalf("completion %+v %q", got[0], rbuf)
	}
}
