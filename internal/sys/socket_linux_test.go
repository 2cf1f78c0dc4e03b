//go:build linux

package sys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/testutil"
	"github.com/gofabric/fabric/provider"
)

// TestMain runs the tests, or one of the child processes of the shm, futex
// and CMA tests when SYS_TEST_HELPER names one (helperMain).
func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	testutil.Main(m)
}

func sa4(a [4]byte, port uint16) []byte {
	b := make([]byte, SizeofSockaddrIn)
	binary.LittleEndian.PutUint16(b, AFInet)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[4:], a[:])
	return b
}

func sa6(a [16]byte, port uint16) []byte {
	b := make([]byte, SizeofSockaddrIn6)
	binary.LittleEndian.PutUint16(b, AFInet6)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[8:], a[:])
	return b
}

var lo4 = [4]byte{127, 0, 0, 1}

func openLo(t testing.TB) (*Conn, []byte) {
	t.Helper()
	c, err := OpenUDP(sa4(lo4, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	name, err := c.Name()
	if err != nil {
		t.Fatal(err)
	}
	return c, name
}

// recvWait receives one datagram, waiting up to 2 s.
func recvWait(t testing.TB, c *Conn, b, from []byte) (int, int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		n, fl, e := c.RecvFrom(b, from)
		if e == 0 {
			return n, fl
		}
		if e != provider.EAGAIN {
			t.Fatalf("RecvFrom: %v", e)
		}
		if err := c.WaitReadable(deadline); err != nil {
			t.Fatalf("WaitReadable: %v", err)
		}
	}
}

func TestNameLayout(t *testing.T) {
	_, name := openLo(t)
	if len(name) != 16 {
		t.Fatalf("name is %d bytes, want 16", len(name))
	}
	if name[0] != 2 || name[1] != 0 {
		t.Errorf("family bytes % x, want 02 00", name[:2])
	}
	if port := binary.BigEndian.Uint16(name[2:]); port == 0 {
		t.Errorf("port 0 after binding port 0")
	}
	if !bytes.Equal(name[4:8], lo4[:]) {
		t.Errorf("address % x, want 7f 00 00 01", name[4:8])
	}
	if !bytes.Equal(name[8:], make([]byte, 8)) {
		t.Errorf("sin_zero % x", name[8:])
	}
}

func TestOpenUDPBadAddr(t *testing.T) {
	for _, b := range [][]byte{nil, {2}, {2, 0, 1, 2}, {9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		sa6(netip.IPv6Loopback().As16(), 0)[:27]} {
		if c, err := OpenUDP(b); !errors.Is(err, provider.EINVAL) {
			if c != nil {
				c.Close()
			}
			t.Errorf("OpenUDP(% x) = %v, want EINVAL", b, err)
		}
	}
	// An address that is not local cannot be bound.
	if c, err := OpenUDP(sa4([4]byte{192, 0, 2, 254}, 0)); !errors.Is(err, provider.EADDRNOTAVAIL) {
		if c != nil {
			c.Close()
		}
		t.Errorf("bind to a foreign address: %v, want EADDRNOTAVAIL", err)
	}
	// A port in use.
	_, name := openLo(t)
	if c, err := OpenUDP(name); !errors.Is(err, provider.EADDRINUSE) {
		if c != nil {
			c.Close()
		}
		t.Errorf("bind to a used port: %v, want EADDRINUSE", err)
	}
}

func TestSendRecv(t *testing.T) {
	a, aname := openLo(t)
	b, bname := openLo(t)
	msg := []byte("hello fabric")
	if n, e := a.SendTo(msg, bname); e != 0 || n != len(msg) {
		t.Fatalf("SendTo = %d, %v", n, e)
	}
	buf := make([]byte, 64)
	from := make([]byte, SizeofSockaddrMax)
	n, fl := recvWait(t, b, buf, from)
	if n != len(msg) || !bytes.Equal(buf[:n], msg) {
		t.Fatalf("received %q", buf[:n])
	}
	if !bytes.Equal(from[:fl], aname) {
		t.Fatalf("source % x, want % x", from[:fl], aname)
	}
	// Nothing more: EAGAIN.
	if _, _, e := b.RecvFrom(buf, from); e != provider.EAGAIN {
		t.Fatalf("empty socket: %v, want EAGAIN", e)
	}
	if _, _, e := b.RecvFromOwned(buf, from); e != provider.EAGAIN {
		t.Fatalf("empty socket, owned: %v, want EAGAIN", e)
	}
	// RecvFromOwned receives as RecvFrom does.
	if _, e := a.SendTo([]byte("owned"), bname); e != 0 {
		t.Fatal(e)
	}
	if err := b.WaitReadable(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	clear(from)
	if n, fl, e := b.RecvFromOwned(buf, from); e != 0 || string(buf[:n]) != "owned" || !bytes.Equal(from[:fl], aname) {
		t.Fatalf("RecvFromOwned = %q from % x, %v", buf[:n], from[:fl], e)
	}
	// Zero-length datagram.
	if n, e := a.SendTo(nil, bname); e != 0 || n != 0 {
		t.Fatalf("empty SendTo = %d, %v", n, e)
	}
	if n, _ := recvWait(t, b, buf, from); n != 0 {
		t.Fatalf("empty datagram received as %d bytes", n)
	}
}

func TestRecvTruncReportsRealLength(t *testing.T) {
	a, _ := openLo(t)
	b, bname := openLo(t)
	msg := bytes.Repeat([]byte("x"), 1000)
	if _, e := a.SendTo(msg, bname); e != 0 {
		t.Fatal(e)
	}
	buf := make([]byte, 100)
	n, _ := recvWait(t, b, buf, make([]byte, 32))
	if n != 1000 {
		t.Fatalf("real length %d, want 1000", n)
	}
	// Vector receive too.
	if _, e := a.SendTo(msg, bname); e != 0 {
		t.Fatal(e)
	}
	if err := b.WaitReadable(time.Now().Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	p1, p2 := make([]byte, 10), make([]byte, 20)
	n, _, e := b.RecvMsg([][]byte{p1, p2}, nil)
	if e != 0 || n != 1000 {
		t.Fatalf("RecvMsg = %d, %v; want 1000", n, e)
	}
}

func TestSendMsgRecvMsg(t *testing.T) {
	a, aname := openLo(t)
	b, bname := openLo(t)
	iov := [][]byte{[]byte("ab"), nil, []byte("cde"), []byte("f")}
	if n, e := a.SendMsg(iov, bname); e != 0 || n != 6 {
		t.Fatalf("SendMsg = %d, %v", n, e)
	}
	if err := b.WaitReadable(time.Now().Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	p1, p2 := make([]byte, 4), make([]byte, 4)
	from := make([]byte, 64)
	n, fl, e := b.RecvMsg([][]byte{p1, p2}, from)
	if e != 0 || n != 6 || string(p1)+string(p2[:2]) != "abcdef" {
		t.Fatalf("RecvMsg = %d, %v, %q %q", n, e, p1, p2)
	}
	if !bytes.Equal(from[:fl], aname) {
		t.Fatalf("source % x, want % x", from[:fl], aname)
	}
	if _, e := a.SendMsg(make([][]byte, MaxIOV+1), bname); e != provider.EINVAL {
		t.Fatalf("too long iov: %v", e)
	}
}

func TestIPv6(t *testing.T) {
	c, err := OpenUDP(sa6(netip.IPv6Loopback().As16(), 0))
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err) // only when the kernel has IPv6 disabled
	}
	defer c.Close()
	name, err := c.Name()
	if err != nil {
		t.Fatal(err)
	}
	if len(name) != 28 || name[0] != 10 || name[1] != 0 {
		t.Fatalf("IPv6 name % x", name)
	}
	if _, e := c.SendTo([]byte("six"), name); e != 0 {
		t.Fatal(e)
	}
	buf := make([]byte, 8)
	from := make([]byte, 64)
	n, fl := recvWait(t, c, buf, from)
	if string(buf[:n]) != "six" || !bytes.Equal(from[:fl], name) {
		t.Fatalf("got %q from % x", buf[:n], from[:fl])
	}
}

// A plain net.UDPConn and a Conn exchange datagrams in both directions.
func TestInteropNetUDPConn(t *testing.T) {
	c, cname := openLo(t)
	u, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	up := u.LocalAddr().(*net.UDPAddr).AddrPort()
	if _, e := c.SendTo([]byte("to net"), sa4(up.Addr().As4(), up.Port())); e != 0 {
		t.Fatal(e)
	}
	u.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64)
	n, from, err := u.ReadFromUDPAddrPort(buf)
	if err != nil || string(buf[:n]) != "to net" {
		t.Fatalf("net side got %q, %v", buf[:n], err)
	}
	if from.Port() != binary.BigEndian.Uint16(cname[2:]) {
		t.Fatalf("net side saw port %d", from.Port())
	}
	if _, err := u.WriteToUDPAddrPort([]byte("from net"), from); err != nil {
		t.Fatal(err)
	}
	sa := make([]byte, 64)
	n, fl := recvWait(t, c, buf, sa)
	if string(buf[:n]) != "from net" || !bytes.Equal(sa[:fl], sa4(lo4, up.Port())) {
		t.Fatalf("Conn got %q from % x", buf[:n], sa[:fl])
	}
}

func TestWaitReadableTimeout(t *testing.T) {
	c, _ := openLo(t)
	start := time.Now()
	err := c.WaitReadable(start.Add(50 * time.Millisecond))
	if err != ErrTimeout {
		t.Fatalf("WaitReadable = %v, want ErrTimeout", err)
	}
	if el := time.Since(start); el < 45*time.Millisecond || el > 2*time.Second {
		t.Fatalf("timed out after %v", el)
	}
	// A deadline already past returns at once.
	if err := c.WaitReadable(time.Now().Add(-time.Second)); err != ErrTimeout {
		t.Fatalf("past deadline: %v", err)
	}
}

func TestWaitReadableWakesOnArrival(t *testing.T) {
	a, _ := openLo(t)
	b, bname := openLo(t)
	go func() {
		time.Sleep(20 * time.Millisecond)
		a.SendTo([]byte("wake"), bname)
	}()
	start := time.Now()
	if err := b.WaitReadable(start.Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("woke after %v", el)
	}
	// Readable now: returns at once, even with a past deadline.
	if err := b.WaitReadable(time.Now().Add(-time.Second)); err != nil {
		t.Fatalf("readable socket: %v", err)
	}
}

// Concurrent waiters keep their own deadlines and all wake on arrival.
func TestWaitReadableConcurrent(t *testing.T) {
	a, _ := openLo(t)
	b, bname := openLo(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	start := time.Now()
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := time.Time{}
			if i == 0 {
				d = start.Add(30 * time.Millisecond)
			}
			errs[i] = b.WaitReadable(d)
		}()
	}
	time.Sleep(100 * time.Millisecond)
	a.SendTo([]byte("x"), bname)
	wg.Wait()
	if errs[0] != ErrTimeout {
		t.Errorf("waiter with deadline: %v, want ErrTimeout", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("waiter %d: %v", i+1, err)
		}
	}
}

func TestCloseWakesWaiterAndFailsCalls(t *testing.T) {
	c, err := OpenUDP(sa4(lo4, 0))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.WaitReadable(time.Time{}) }()
	time.Sleep(20 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != ErrClosed {
			t.Fatalf("parked waiter got %v, want ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not wake the waiter")
	}
	if err := c.Close(); err != ErrClosed {
		t.Fatalf("second Close = %v", err)
	}
	if c.FD() != -1 {
		t.Fatal("FD after close")
	}
	if _, e := c.SendTo([]byte("x"), sa4(lo4, 9)); e != ErrClosed {
		t.Fatalf("SendTo after close: %v", e)
	}
	if _, _, e := c.RecvFrom(make([]byte, 4), nil); e != ErrClosed {
		t.Fatalf("RecvFrom after close: %v", e)
	}
	if _, _, e := c.RecvFromOwned(make([]byte, 4), nil); e != ErrClosed {
		t.Fatalf("RecvFromOwned after close: %v", e)
	}
	if err := c.WaitReadable(time.Time{}); err != ErrClosed {
		t.Fatalf("WaitReadable after close: %v", err)
	}
	if _, err := c.Name(); err != ErrClosed {
		t.Fatalf("Name after close: %v", err)
	}
}

// Close while other goroutines hammer the Conn: no call reaches a closed
// (possibly reused) descriptor, nothing panics.
func TestCloseWhileBusy(t *testing.T) {
	for range 20 {
		c, err := OpenUDP(sa4(lo4, 0))
		if err != nil {
			t.Fatal(err)
		}
		name, _ := c.Name()
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 16)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, e := c.SendTo(buf, name); e == ErrClosed {
						return
					}
					if _, _, e := c.RecvFrom(buf, nil); e == ErrClosed {
						return
					}
				}
			}()
		}
		time.Sleep(time.Millisecond)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
	}
}

func TestStreamReadWrite(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	nc, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	peer := <-acc
	if peer == nil {
		t.Fatal("accept failed")
	}
	defer peer.Close()
	c, err := Adopt(nc.(*net.TCPConn))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Family() != AFInet {
		t.Errorf("family %d", c.Family())
	}
	if err := c.WaitWritable(time.Now().Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, e := c.Writev([][]byte{[]byte("he"), []byte("llo")}); e != 0 || n != 5 {
		t.Fatalf("Writev = %d, %v", n, e)
	}
	got := make([]byte, 5)
	peer.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := readFull(peer, got); err != nil || string(got) != "hello" {
		t.Fatalf("peer read %q, %v", got, err)
	}
	buf := make([]byte, 8)
	if _, e := c.Read(buf); e != provider.EAGAIN {
		t.Fatalf("empty stream: %v", e)
	}
	peer.Write([]byte("back"))
	if err := c.WaitReadable(time.Now().Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, e := c.Read(buf); e != 0 || string(buf[:n]) != "back" {
		t.Fatalf("Read = %q, %v", buf[:n], e)
	}
	peer.Close()
	if err := c.WaitReadable(time.Now().Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, e := c.Read(buf); e != 0 || n != 0 {
		t.Fatalf("EOF read = %d, %v", n, e)
	}
	// Writing to a closed peer fails with an error, never SIGPIPE.
	var e provider.Errno
	for range 100 {
		if _, e = c.Write([]byte("x")); e != 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if e != provider.ESHUTDOWN && e != provider.ECONNRESET {
		t.Fatalf("write to closed peer: %v", e)
	}
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func TestDataPathAllocs(t *testing.T) {
	a, _ := openLo(t)
	b, bname := openLo(t)
	msg := make([]byte, 64)
	buf := make([]byte, 128)
	from := make([]byte, SizeofSockaddrMax)
	iov := [][]byte{msg[:32], msg[32:]}
	riov := [][]byte{buf[:64], buf[64:]}
	deadline := time.Now().Add(10 * time.Second)
	n := testing.AllocsPerRun(200, func() {
		a.SendTo(msg, bname)
		b.WaitReadable(deadline)
		b.RecvFrom(buf, from)
		a.SendMsg(iov, bname)
		b.WaitReadable(deadline)
		b.RecvMsg(riov, from)
		b.RecvFrom(buf, from)      // EAGAIN
		b.RecvFromOwned(buf, from) // EAGAIN
	})
	if n != 0 {
		t.Fatalf("data path allocates %v times per run", n)
	}
}

// A wait that parks in the poller leaves no poller registration behind
// (an idle registration would wake a runtime thread on every datagram).
func TestWaitLeavesNoRegistration(t *testing.T) {
	c, _ := openLo(t)
	for i := 0; i < 3; i++ {
		if err := c.WaitReadable(time.Now().Add(time.Millisecond)); err != ErrTimeout {
			t.Fatalf("wait: %v", err)
		}
	}
	c.wmu.Lock()
	n := len(c.all) + len(c.free)
	c.wmu.Unlock()
	if n != 0 {
		t.Fatalf("%d waiter descriptors left registered after the waits returned", n)
	}
}

func TestListAddrs(t *testing.T) {
	all, err := ListAddrs("")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 {
		t.Fatalf("ListAddrs returned %d entries", len(all))
	}
	tail := all[len(all)-2:]
	if tail[0].NetName != "127.0.0.1/32" || tail[1].NetName != "::1/128" || tail[0].Iface != "lo" ||
		!tail[0].Loopback || !tail[1].Loopback {
		t.Fatalf("loopback entries not last: %+v", tail)
	}
	for _, e := range all[:len(all)-2] {
		if e.Loopback || e.Addr.IsLoopback() {
			t.Errorf("loopback interface listed: %+v", e)
		}
		if e.Net.Addr() != e.Net.Masked().Addr() || e.NetName != e.Net.String() || !e.Net.Contains(e.Addr) {
			t.Errorf("bad network for %+v", e)
		}
	}
	lo, _ := ListAddrs("lo")
	if len(lo) != 2 {
		t.Fatalf("FI_UDP_IFACE=lo lists %d entries, want the 2 loopback ones", len(lo))
	}
	unknown, _ := ListAddrs("no-such-iface0")
	if len(unknown) != len(all) {
		t.Fatalf("unknown interface filtered: %d vs %d", len(unknown), len(all))
	}
}

// The insertion order reproduces libfabric's: speed first, IPv4 before
// IPv6, and within a family each new address goes before the others (the
// C output on this machine lists 192.0.2.0/24, fe80::/64, fd00::/64 for
// getifaddrs order 192.0.2.2, fd00::2, fe80::fc:ff:fe00:1).
func TestInsertAddrOrder(t *testing.T) {
	mk := func(s string, speed int64) IfaceAddr {
		return IfaceAddr{Addr: netip.MustParseAddr(s), Speed: speed}
	}
	var l []IfaceAddr
	for _, e := range []IfaceAddr{mk("fd00::2", 0), mk("192.0.2.2", 0), mk("fe80::1", 0), mk("10.0.0.1", 0),
		mk("10.9.9.9", 100)} {
		l = insertAddr(l, e)
	}
	want := []string{"10.9.9.9", "10.0.0.1", "192.0.2.2", "fe80::1", "fd00::2"}
	for i, e := range l {
		if e.Addr.String() != want[i] {
			t.Fatalf("order %v, want %v", l, want)
		}
	}
}

// A Conn dropped without Close does not leak its descriptor.
func TestDroppedConnClosesFD(t *testing.T) {
	before := testutil.CountFDs()
	func() {
		c, err := OpenUDP(sa4(lo4, 0))
		if err != nil {
			t.Fatal(err)
		}
		_ = c.FD()
	}()
	deadline := time.Now().Add(2 * time.Second)
	for testutil.CountFDs() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := testutil.CountFDs(); n > before {
		t.Fatalf("%d descriptors, %d before: dropped Conn leaked its socket", n, before)
	}
}

func TestAdoptUDP(t *testing.T) {
	u, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Adopt(u)
	u.Close() // the Conn owns a duplicate
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	name, err := c.Name()
	if err != nil || len(name) != 16 {
		t.Fatalf("Name = % x, %v", name, err)
	}
	if _, e := c.SendTo([]byte("self"), name); e != 0 {
		t.Fatal(e)
	}
	buf := make([]byte, 8)
	if n, _ := recvWait(t, c, buf, nil); string(buf[:n]) != "self" {
		t.Fatalf("got %q", buf[:n])
	}
}
