//go:build linux

package sys

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

// pmtudisc returns c's IP_MTU_DISCOVER setting.
func pmtudisc(t *testing.T, c *Conn) int {
	t.Helper()
	v, err := unix.GetsockoptInt(c.fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUDPDontFragment: an IPv4 socket of OpenUDP sets Don't Fragment; an
// IPv6 one keeps the kernel's default.
func TestUDPDontFragment(t *testing.T) {
	c, _ := openLo(t)
	if got := pmtudisc(t, c); got != unix.IP_PMTUDISC_DO || !c.df.Load() {
		t.Fatalf("IPv4: IP_MTU_DISCOVER %d (df %v), want IP_PMTUDISC_DO", got, c.df.Load())
	}
	c6, err := OpenUDP(sa6([16]byte{15: 1}, 0))
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer c6.Close()
	if c6.df.Load() {
		t.Fatal("IPv6 socket marked Don't Fragment")
	}
}

// TestUDPFragmentFallback: a datagram larger than the path MTU (here the
// MTU of the loopback device of a network namespace of the test's own,
// 1280) fails with EMSGSIZE under Don't Fragment; SendTo and SendMsg then
// turn the option off and send it fragmented, and it arrives whole.
func TestUDPFragmentFallback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	err := InNetns("", func() error {
		if err := loopbackUp(1280); err != nil {
			return skipErr{err}
		}
		return fragmentFallback()
	})
	var skip skipErr
	if errors.As(err, &skip) {
		t.Skipf("no network namespace with a small-MTU loopback: %v", skip.err)
	}
	if errors.Is(err, ErrNetns) {
		t.Skipf("no network namespace: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

type skipErr struct{ err error }

func (s skipErr) Error() string { return s.err.Error() }

// loopbackUp sets the MTU of this namespace's lo and brings it up.
func loopbackUp(mtu uint32) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint32(mtu)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFMTU, ifr); err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// fragmentFallback runs in the namespace (on the goroutine of the locked
// thread, so it reports errors instead of calling t.Fatal): a 1000-byte
// datagram goes out with DF; a 1400-byte one through SendTo and another
// through SendMsg arrive whole, and the sockets no longer set DF.
func fragmentFallback() error {
	var conns [3]*Conn
	for i := range conns {
		c, err := OpenUDP(sa4(lo4, 0))
		if err != nil {
			return err
		}
		defer c.Close()
		conns[i] = c
	}
	a, b, c := conns[0], conns[1], conns[2]
	bname, err := b.Name()
	if err != nil {
		return err
	}
	buf := make([]byte, 2048)
	from := make([]byte, SizeofSockaddrMax)
	recv := func(want []byte, what string) error {
		deadline := time.Now().Add(2 * time.Second)
		for {
			n, _, e := b.RecvFrom(buf, from)
			if e == 0 {
				if n != len(want) || !bytes.Equal(buf[:n], want) {
					return fmt.Errorf("%s: received %d bytes, want %d", what, n, len(want))
				}
				return nil
			}
			if e != provider.EAGAIN {
				return fmt.Errorf("%s: RecvFrom: %w", what, e)
			}
			if err := b.WaitReadable(deadline); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	dfOff := func(c *Conn) bool {
		v, err := unix.GetsockoptInt(c.fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER)
		return err == nil && v == unix.IP_PMTUDISC_WANT && !c.df.Load()
	}
	small := bytes.Repeat([]byte{1}, 1000)
	if _, e := a.SendTo(small, bname); e != 0 {
		return fmt.Errorf("SendTo of 1000 bytes: %w", e)
	}
	if err := recv(small, "1000 bytes"); err != nil {
		return err
	}
	if dfOff(a) {
		return errors.New("a datagram below the MTU turned DF off")
	}
	big := bytes.Repeat([]byte{2}, 1400)
	if n, e := a.SendTo(big, bname); e != 0 || n != len(big) {
		return fmt.Errorf("SendTo of 1400 bytes over a 1280 MTU: %d, %v", n, e)
	}
	if err := recv(big, "SendTo, 1400 bytes"); err != nil {
		return err
	}
	if !dfOff(a) {
		return errors.New("SendTo's socket still sets DF")
	}
	half := len(big) / 2
	if n, e := c.SendMsg([][]byte{big[:half], big[half:]}, bname); e != 0 || n != len(big) {
		return fmt.Errorf("SendMsg of 1400 bytes over a 1280 MTU: %d, %v", n, e)
	}
	if err := recv(big, "SendMsg, 1400 bytes"); err != nil {
		return err
	}
	if !dfOff(c) {
		return errors.New("SendMsg's socket still sets DF")
	}
	return nil
}
