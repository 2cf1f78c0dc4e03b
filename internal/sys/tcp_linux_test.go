//go:build linux

package sys

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gofabric/fabric/provider"
)

func tcpPair(t *testing.T) (ln, cli, srv *Conn) {
	t.Helper()
	lo := sa4([4]byte{127, 0, 0, 1}, 0)
	ln, err := TCPSocket(lo, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := TCPBind(ln, lo); err != nil {
		t.Fatal(err)
	}
	if err := TCPListen(ln, 16); err != nil {
		t.Fatal(err)
	}
	if _, _, e := TCPAccept(ln); e != provider.EAGAIN {
		t.Fatalf("accept with nothing pending: %v", e)
	}
	name, err := ln.Name()
	if err != nil || binary.BigEndian.Uint16(name[2:]) == 0 {
		t.Fatalf("listen name %x %v", name, err)
	}
	cli, err = TCPSocket(name, true)
	if err != nil {
		t.Fatal(err)
	}
	if e := TCPConnect(cli, name); e != 0 && e != provider.EINPROGRESS {
		t.Fatalf("connect: %v", e)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		done, e := TCPConnectDone(cli)
		if e != 0 {
			t.Fatalf("connect done: %v", e)
		}
		if done {
			break
		}
		if err := cli.WaitWritable(deadline); err != nil {
			t.Fatal(err)
		}
	}
	if err := ln.WaitReadable(deadline); err != nil {
		t.Fatal(err)
	}
	srv, peer, e := TCPAccept(ln)
	if e != 0 {
		t.Fatalf("accept: %v", e)
	}
	cname, _ := cli.Name()
	if !bytes.Equal(peer, cname) {
		t.Fatalf("accept peer %x, client name %x", peer, cname)
	}
	if p, err := TCPPeerName(cli); err != nil || !bytes.Equal(p, name) {
		t.Fatalf("peer name %x %v want %x", p, err, name)
	}
	return ln, cli, srv
}

func TestTCPConnectAcceptShutdown(t *testing.T) {
	ln, cli, srv := tcpPair(t)
	defer ln.Close()
	defer cli.Close()
	defer srv.Close()
	for _, c := range []*Conn{cli, srv} {
		if err := TCPSetNoDelay(c, true); err != nil {
			t.Fatal(err)
		}
	}
	if n, e := cli.Write([]byte("hello")); n != 5 || e != 0 {
		t.Fatalf("write %d %v", n, e)
	}
	if err := srv.WaitReadable(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var b [16]byte
	if n, e := srv.Read(b[:]); n != 5 || e != 0 || string(b[:5]) != "hello" {
		t.Fatalf("read %d %v %q", n, e, b[:n])
	}
	if err := TCPShutdown(cli); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitReadable(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, e := srv.Read(b[:]); n != 0 || e != 0 {
		t.Fatalf("after shutdown: %d %v, want end of stream", n, e)
	}
}

func TestTCPConnectRefused(t *testing.T) {
	lo := sa4([4]byte{127, 0, 0, 1}, 0)
	// Find a port nobody listens on: bind, read the port, close.
	s, err := TCPSocket(lo, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := TCPBind(s, lo); err != nil {
		t.Fatal(err)
	}
	name, _ := s.Name()
	s.Close()
	c, err := TCPSocket(name, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e := TCPConnect(c, name)
	if e == provider.EINPROGRESS {
		deadline := time.Now().Add(5 * time.Second)
		for {
			var done bool
			done, e = TCPConnectDone(c)
			if done {
				break
			}
			if err := c.WaitWritable(deadline); err != nil {
				t.Fatal(err)
			}
		}
	}
	if e != provider.ECONNREFUSED {
		t.Fatalf("connect to a closed port: %v", e)
	}
}

func TestTCPBadArgs(t *testing.T) {
	if _, err := TCPSocket([]byte{1}, true); err != provider.EINVAL {
		t.Fatalf("socket: %v", err)
	}
	lo := sa4([4]byte{127, 0, 0, 1}, 0)
	c, err := TCPSocket(lo, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := TCPBind(c, []byte{2, 0}); err != provider.EINVAL {
		t.Fatalf("bind: %v", err)
	}
	if e := TCPConnect(c, nil); e != provider.EINVAL {
		t.Fatalf("connect: %v", e)
	}
	c.Close()
	if err := TCPBind(c, lo); err != ErrClosed {
		t.Fatalf("bind closed: %v", err)
	}
	if _, _, e := TCPAccept(c); e != ErrClosed {
		t.Fatalf("accept closed: %v", e)
	}
	if err := TCPSetNoDelay(c, true); err != ErrClosed {
		t.Fatalf("nodelay closed: %v", err)
	}
}

func TestTCPRebind(t *testing.T) {
	lo := sa4([4]byte{127, 0, 0, 1}, 0)
	c, err := TCPSocket(lo, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := TCPBind(c, lo); err != nil {
		t.Fatal(err)
	}
	fd := c.FD()
	n1, _ := c.Name()
	if err := TCPRebind(c, lo, true); err != nil {
		t.Fatal(err)
	}
	n2, _ := c.Name()
	if c.FD() != fd || bytes.Equal(n1, n2) {
		t.Fatalf("rebind: fd %d->%d name %x->%x", fd, c.FD(), n1, n2)
	}
	// The rebound socket listens and accepts; waits work on it.
	if err := TCPListen(c, 4); err != nil {
		t.Fatal(err)
	}
	d, err := TCPSocket(n2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	TCPConnect(d, n2)
	if err := c.WaitReadable(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	a, _, e := TCPAccept(c)
	if e != 0 {
		t.Fatal(e)
	}
	a.Close()
	// Rebinding to an address in use fails and leaves c alone.
	if err := TCPRebind(c, n2, true); err != provider.EADDRINUSE {
		t.Fatalf("rebind in use: %v", err)
	}
}

func TestTCPReleaseWaiters(t *testing.T) {
	ln, cli, srv := tcpPair(t)
	defer ln.Close()
	defer cli.Close()
	defer srv.Close()
	// A wait that times out leaves no poller registration behind, and
	// releasing waiters on an idle socket is harmless.
	if err := srv.WaitReadable(time.Now().Add(time.Millisecond)); err != ErrTimeout {
		t.Fatalf("wait: %v", err)
	}
	TCPReleaseWaiters(srv)
	srv.wmu.Lock()
	n := len(srv.all) + len(srv.free)
	srv.wmu.Unlock()
	if n != 0 {
		t.Fatalf("%d waiters after release", n)
	}
	cli.Write([]byte("x"))
	// A later wait registers again and sees the data.
	if err := srv.WaitReadable(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
}
