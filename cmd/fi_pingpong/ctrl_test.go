package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// recorder is a fake peer: it records every Write call separately and
// serves reads from a script of bytes.
type recorder struct {
	writes [][]byte
	in     io.Reader
}

func (r *recorder) Write(b []byte) (int, error) {
	r.writes = append(r.writes, append([]byte(nil), b...))
	return len(b), nil
}

func (r *recorder) Read(b []byte) (int, error) {
	if r.in == nil {
		return 0, io.EOF
	}
	return r.in.Read(b)
}

// oneByte returns a reader that yields one byte per Read, to show that the
// decoder reads exact lengths whatever the segmentation.
type oneByte struct{ b []byte }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(o.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = o.b[0]
	o.b = o.b[1:]
	return 1, nil
}

func wantCode(t *testing.T, err error, code int, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want exit %d %q", code, substr)
	}
	if got := exitCode(err); got != code {
		t.Fatalf("exit code %d (%v), want %d", got, err, code)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q does not mention %q", err, substr)
	}
}

var sockaddr127 = []byte{0x02, 0x00, 0xc2, 0x56, 0x7f, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0}

// TestSendNameWire checks the bytes of the udp capture: three separate
// writes, BE length, LE format, then the name.
func TestSendNameWire(t *testing.T) {
	r := &recorder{}
	c := &ctrl{rw: r}
	if err := c.sendName(2, sockaddr127); err != nil {
		t.Fatal(err)
	}
	want := [][]byte{{0, 0, 0, 0x10}, {0x02, 0, 0, 0}, sockaddr127}
	if len(r.writes) != 3 {
		t.Fatalf("%d writes, want 3 (one per item)", len(r.writes))
	}
	for i := range want {
		if !bytes.Equal(r.writes[i], want[i]) {
			t.Fatalf("write %d = % x, want % x", i, r.writes[i], want[i])
		}
	}
	if err := c.sendName(2, nil); exitCode(err) != exitEMSGSIZE {
		t.Fatalf("empty name: %v", err)
	}
	if err := c.sendName(2, make([]byte, maxNameLen+1)); exitCode(err) != exitEMSGSIZE {
		t.Fatalf("oversized name: %v", err)
	}
}

func TestRecvName(t *testing.T) {
	stream := append([]byte{0, 0, 0, 0x10, 0x02, 0, 0, 0}, sockaddr127...)
	for _, in := range []io.Reader{bytes.NewReader(stream), &oneByte{stream}} {
		c := &ctrl{rw: &recorder{in: in}}
		f, name, err := c.recvName()
		if err != nil || f != 2 || !bytes.Equal(name, sockaddr127) {
			t.Fatalf("recvName = %d % x %v", f, name, err)
		}
	}
	// IPv6: format 3 (LE), 28-byte name.
	name6 := make([]byte, 28)
	name6[0] = 10
	c := &ctrl{rw: &recorder{in: bytes.NewReader(append([]byte{0, 0, 0, 28, 3, 0, 0, 0}, name6...))}}
	if f, n, err := c.recvName(); err != nil || f != 3 || len(n) != 28 {
		t.Fatalf("ipv6 name: %d %d %v", f, len(n), err)
	}
	for _, bad := range []struct {
		name   string
		stream []byte
		code   int
		msg    string
	}{
		{"length zero", []byte{0, 0, 0, 0, 2, 0, 0, 0}, exitEMSGSIZE, "name length of 0"},
		{"length too big", []byte{0, 0, 4, 1}, exitEMSGSIZE, "1025"},
		{"length little-endian", []byte{0x10, 0, 0, 0}, exitEMSGSIZE, "268435456"},
		{"http", []byte("GET / HTTP/1.1\r\n"), exitEMSGSIZE, "not a fi_pingpong peer"},
		{"closed before length", nil, exitECONNABORT, "remote connection closed"},
		{"closed in length", []byte{0, 0}, exitECONNABORT, "name length"},
		{"closed before format", []byte{0, 0, 0, 16}, exitECONNABORT, "address format"},
		{"closed in name", []byte{0, 0, 0, 16, 2, 0, 0, 0, 2, 0}, exitECONNABORT, "the peer's name"},
	} {
		c := &ctrl{rw: &recorder{in: bytes.NewReader(bad.stream)}}
		_, _, err := c.recvName()
		t.Run(bad.name, func(t *testing.T) { wantCode(t, err, bad.code, bad.msg) })
	}
}

func TestSync(t *testing.T) {
	// Client: sends "q\0", expects "a\0".
	r := &recorder{in: bytes.NewReader([]byte("a\x00"))}
	if err := (&ctrl{rw: r}).sync(true); err != nil {
		t.Fatal(err)
	}
	if len(r.writes) != 1 || string(r.writes[0]) != "q\x00" {
		t.Fatalf("client sync wrote %q", r.writes)
	}
	// Server: expects "q\0", answers "a\0".
	r = &recorder{in: bytes.NewReader([]byte("q\x00"))}
	if err := (&ctrl{rw: r}).sync(false); err != nil {
		t.Fatal(err)
	}
	if len(r.writes) != 1 || string(r.writes[0]) != "a\x00" {
		t.Fatalf("server sync wrote %q", r.writes)
	}
	for _, c := range []struct {
		client bool
		in     string
		code   int
		msg    string
	}{
		{true, "x\x00", exitEBADMSG, "bad sync reply"},
		{true, "aa", exitEBADMSG, "bad sync reply"},
		{true, "a", exitECONNABORT, "sync reply"},
		{true, "", exitECONNABORT, "remote connection closed"},
		{false, "a\x00", exitEBADMSG, "bad sync request"},
		{false, "q", exitECONNABORT, "sync request"},
	} {
		r := &recorder{in: strings.NewReader(c.in)}
		err := (&ctrl{rw: r}).sync(c.client)
		wantCode(t, err, c.code, c.msg)
		if !c.client && len(r.writes) != 0 {
			t.Fatalf("server answered garbage %q with %q", c.in, r.writes)
		}
	}
}

func TestCountExchange(t *testing.T) {
	r := &recorder{in: bytes.NewReader(cntOK[:])}
	n, err := (&ctrl{rw: r}).exchangeCount(true, 3)
	if err != nil || n != 3 {
		t.Fatalf("client count: %d %v", n, err)
	}
	if len(r.writes) != 1 || !bytes.Equal(r.writes[0], []byte{'3', 0, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("client count wrote % x", r.writes)
	}
	r = &recorder{in: bytes.NewReader([]byte("2147483647"))}
	n, err = (&ctrl{rw: r}).exchangeCount(false, 0)
	if err != nil || n != 2147483647 {
		t.Fatalf("server count: %d %v", n, err)
	}
	if len(r.writes) != 1 || string(r.writes[0]) != "cnt ok\x00" {
		t.Fatalf("server ack wrote %q", r.writes)
	}
	for _, c := range []struct {
		client bool
		in     string
		code   int
		msg    string
	}{
		{true, "cnt no\x00", exitEBADMSG, "bad count acknowledgement"},
		{true, "cnt", exitECONNABORT, "count acknowledgement"},
		{false, "abc\x00\x00\x00\x00\x00\x00\x00", exitEBADMSG, "malformed count"},
		{false, "-5\x00\x00\x00\x00\x00\x00\x00\x00", exitEBADMSG, "malformed count"},
		{false, "12", exitECONNABORT, "count"},
	} {
		r := &recorder{in: strings.NewReader(c.in)}
		_, err := (&ctrl{rw: r}).exchangeCount(c.client, 7)
		wantCode(t, err, c.code, c.msg)
	}
}

func TestParseCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"3", 3, true}, {"0", 0, true}, {"", 0, true}, {"10000", 10000, true}, {"9999999999", 9999999999, true},
		{" 42", 42, true}, {"+7", 7, true}, {"12\x00garbage", 12, true},
		{"x", 0, false}, {"1x", 0, false}, {"-1", 0, false}, {" ", 0, false}, {"+", 0, false}, {"1 2", 0, false},
	} {
		var b [countLen]byte
		copy(b[:], c.in)
		n, err := parseCount(b)
		if (err == nil) != c.ok || (c.ok && n != c.want) {
			t.Errorf("parseCount(%q) = %d, %v; want %d ok=%v", c.in, n, err, c.want, c.ok)
		}
	}
	if _, err := encodeCount(12345678901); err == nil {
		t.Error("11-digit count encoded")
	}
}

// TestCtrlTimeoutAndClose runs the protocol over real loopback TCP: a
// silent peer times out (110), a peer that closes aborts (103).
func TestCtrlTimeoutAndClose(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	conn, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	c := &ctrl{rw: conn, conn: conn, timeout: 100 * time.Millisecond}
	start := time.Now()
	err = c.sync(true)
	wantCode(t, err, exitETIMEDOUT, "timed out")
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	peer.Close()
	_, _, err = c.recvName()
	var ee *exitError
	if !errors.As(err, &ee) || (ee.code != exitECONNABORT && ee.code != 104) {
		t.Fatalf("closed peer: %v", err)
	}
}

// FuzzControlCount: parseCount never panics, and every accepted count
// re-encodes to a value that parses back the same.
func FuzzControlCount(f *testing.F) {
	for _, s := range []string{"3", "0", "", "2147483647", "9999999999", " 1", "+1", "-1", "abc", "1\x00x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var b [countLen]byte
		copy(b[:], in)
		n, err := parseCount(b)
		if err != nil {
			if exitCode(err) != exitEBADMSG {
				t.Fatalf("parseCount(%q) error %v has exit %d", in, err, exitCode(err))
			}
			return
		}
		if n < 0 || n > 9999999999 {
			t.Fatalf("parseCount(%q) = %d", in, n)
		}
		enc, err := encodeCount(n)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := parseCount(enc); err != nil || m != n {
			t.Fatalf("round trip %d -> %q -> %d %v", n, enc, m, err)
		}
	})
}

// FuzzControlStream feeds arbitrary bytes as the client's side of a whole
// server session (name, then sync and count pairs). The decoder must never
// panic or hang, must fail with a control-protocol exit status, and every
// reply it writes must be a well-formed one.
func FuzzControlStream(f *testing.F) {
	good := append([]byte{0, 0, 0, 0x10, 0x02, 0, 0, 0}, sockaddr127...)
	good = append(good, "q\x00"...)
	good = append(good, '3', 0, 0, 0, 0, 0, 0, 0, 0, 0)
	good = append(good, "q\x00"...)
	f.Add(good)
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add(append([]byte{0, 0, 0, 1, 2, 0, 0, 0, 9}, "q\x00x"...))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := &recorder{in: bytes.NewReader(in)}
		c := &ctrl{rw: r}
		_, name, err := c.recvName()
		rounds := 0
		for err == nil && rounds < 1000 {
			if err = c.sync(false); err != nil {
				break
			}
			var n int64
			if n, err = c.exchangeCount(false, 0); err == nil && (n < 0 || n > 9999999999) {
				t.Fatalf("count %d", n)
			}
			rounds++
		}
		switch exitCode(err) {
		case exitEBADMSG, exitEMSGSIZE, exitECONNABORT:
		default:
			t.Fatalf("session over %q ended with %v (exit %d)", in, err, exitCode(err))
		}
		if name != nil && (len(name) == 0 || len(name) > maxNameLen) {
			t.Fatalf("accepted a %d-byte name", len(name))
		}
		for _, w := range r.writes {
			if string(w) != "a\x00" && string(w) != "cnt ok\x00" {
				t.Fatalf("server wrote %q", w)
			}
		}
	})
}

// newPipeCtrl returns the two ends of a control connection over loopback
// TCP.
func newPipeCtrl(t testing.TB) (*ctrl, *ctrl) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		ch <- c
	}()
	a, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-ch
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return &ctrl{rw: a, conn: a, timeout: 5 * time.Second}, &ctrl{rw: b, conn: b, timeout: 5 * time.Second}
}
