package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

// The out-of-band control protocol of fi_pingpong (libfabric 1.17) over a
// plain TCP connection. Every item goes out in a single write, because the
// C tool reads each item with one recv of exactly its length; items are read
// here with exact-length reads. Multi-byte fields: the name length is
// big-endian, the address format little-endian (host order on x86-64).
const (
	defaultCtrlPort = 47592
	maxNameLen      = 1024 // the C receiver rejects longer names
	countLen        = 10   // the receive count: ASCII decimal, NUL padded
)

var (
	syncQ = [2]byte{'q', 0}
	syncA = [2]byte{'a', 0}
	cntOK = [7]byte{'c', 'n', 't', ' ', 'o', 'k', 0}
)

// Exit statuses: the C tool exits with the negated libfabric/errno code.
const (
	exitFailure     = 1
	exitEBADMSG     = int(syscall.EBADMSG)      // 74: malformed control message
	exitEMSGSIZE    = int(syscall.EMSGSIZE)     // 90
	exitECONNABORT  = int(syscall.ECONNABORTED) // 103: peer closed the control connection
	exitETIMEDOUT   = int(syscall.ETIMEDOUT)    // 110
	exitENODATA     = 61                        // FI_ENODATA from fi_getinfo
	exitECONNREFUSE = int(syscall.ECONNREFUSED) // 111
)

// exitError is a failure with the process exit status it maps to.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func failf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// exitCode returns the exit status for err (1 when it carries none).
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) && ee.code > 0 {
		// The C tool exits with the negated error; the shell sees it
		// modulo 256 (FI_ETRUNC 265 -> 9). Never report success.
		if c := ee.code & 0xff; c != 0 {
			return c
		}
	}
	return exitFailure
}

// appendNameHeader appends the two fixed items that precede a name: its
// length (u32 big-endian) and its address format (u32 little-endian).
func encodeNameLen(n int) [4]byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(n))
	return b
}

func encodeFormat(f uint32) [4]byte {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], f)
	return b
}

// decodeNameLen decodes and validates a received name length.
func decodeNameLen(b [4]byte) (int, error) {
	n := binary.BigEndian.Uint32(b[:])
	if n == 0 || n > maxNameLen {
		return 0, failf(exitEMSGSIZE, "ctrl: peer sent a name length of %d bytes (want 1..%d): not a fi_pingpong peer?", n, maxNameLen)
	}
	return int(n), nil
}

// decodeFormat decodes a received address format.
func decodeFormat(b [4]byte) uint32 { return binary.LittleEndian.Uint32(b[:]) }

// encodeCount encodes the client's receive count: decimal ASCII, NUL
// padded to 10 bytes (a negative count is sent as 0).
func encodeCount(n int64) ([countLen]byte, error) {
	var b [countLen]byte
	if n < 0 {
		n = 0
	}
	s := strconv.FormatInt(n, 10)
	if len(s) > countLen {
		return b, failf(exitFailure, "ctrl: count %d does not fit in %d digits", n, countLen)
	}
	copy(b[:], s)
	return b, nil
}

// parseCount decodes a received count as the C server does (strtol base
// 10 on the NUL-terminated string, the whole string must parse, negative
// values are rejected). Leading white space and a '+' sign are accepted
// like strtol does; an empty string is 0.
func parseCount(b [countLen]byte) (int64, error) {
	s := b[:]
	for i, c := range s {
		if c == 0 {
			s = s[:i]
			break
		}
	}
	t := s
	for len(t) > 0 && (t[0] == ' ' || (t[0] >= '\t' && t[0] <= '\r')) {
		t = t[1:]
	}
	if len(t) > 0 && t[0] == '+' {
		t = t[1:]
	}
	if len(t) == 0 && len(s) == 0 {
		return 0, nil
	}
	var n int64
	for _, c := range t {
		if c < '0' || c > '9' {
			return 0, failf(exitEBADMSG, "ctrl: peer sent a malformed count %q", string(s))
		}
		n = n*10 + int64(c-'0') // at most 10 digits: no overflow
	}
	if len(t) == 0 {
		return 0, failf(exitEBADMSG, "ctrl: peer sent a malformed count %q", string(s))
	}
	return n, nil
}

// ctrl is one end of the control connection.
type ctrl struct {
	rw      io.ReadWriter
	conn    net.Conn      // for deadlines; nil in tests that use a plain ReadWriter
	timeout time.Duration // bound on every read and write; 0 = none
	pending []byte        // bytes probe read ahead; recv returns them first
}

// probe checks, without waiting, whether the peer has closed the control
// connection (or reset it): while the server waits for connection events,
// a client that gave up must end the wait, not leave it to the timeout.
// Bytes that did arrive are kept for the next recv.
func (c *ctrl) probe(what string) error {
	if c.conn == nil {
		return nil
	}
	c.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [64]byte
	n, err := c.conn.Read(b[:])
	c.pending = append(c.pending, b[:n]...)
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return nil
	case errors.Is(err, io.EOF):
		return failf(exitECONNABORT, "ctrl: the peer closed the control connection while the server waited for %s", what)
	}
	return c.ioErr("read", what, err)
}

func (c *ctrl) deadline() {
	if c.conn == nil {
		return
	}
	var t time.Time
	if c.timeout > 0 {
		t = time.Now().Add(c.timeout)
	}
	c.conn.SetDeadline(t)
}

// ioErr maps a control-channel I/O error to a clear message and the exit
// status the C tool would use.
func (c *ctrl) ioErr(op, what string, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return failf(exitECONNABORT, "ctrl/%s: no data or remote connection closed (waiting for %s)", op, what)
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return failf(exitETIMEDOUT, "ctrl/%s: timed out after %v (waiting for %s): peer gone?", op, c.timeout, what)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return failf(int(errno), "ctrl/%s: %s (%s)", op, errno.Error(), what)
	}
	return failf(exitECONNABORT, "ctrl/%s: %v (%s)", op, err, what)
}

// send writes one item in a single write.
func (c *ctrl) send(what string, b []byte) error {
	c.deadline()
	n, err := c.rw.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return c.ioErr("send", what, err)
	}
	return nil
}

// recv reads exactly len(b) bytes.
func (c *ctrl) recv(what string, b []byte) error {
	n := copy(b, c.pending)
	c.pending = c.pending[n:]
	if n == len(b) {
		return nil
	}
	c.deadline()
	if _, err := io.ReadFull(c.rw, b[n:]); err != nil {
		return c.ioErr("read", what, err)
	}
	return nil
}

// sendName sends an endpoint name: length, format, bytes (three writes).
func (c *ctrl) sendName(format uint32, name []byte) error {
	if len(name) == 0 || len(name) > maxNameLen {
		return failf(exitEMSGSIZE, "ctrl: local name of %d bytes cannot be sent", len(name))
	}
	l := encodeNameLen(len(name))
	if err := c.send("name length", l[:]); err != nil {
		return err
	}
	f := encodeFormat(format)
	if err := c.send("address format", f[:]); err != nil {
		return err
	}
	return c.send("name", name)
}

// recvName reads the peer's endpoint name.
func (c *ctrl) recvName() (format uint32, name []byte, err error) {
	var l, f [4]byte
	if err := c.recv("the peer's name length", l[:]); err != nil {
		return 0, nil, err
	}
	n, err := decodeNameLen(l)
	if err != nil {
		return 0, nil, err
	}
	if err := c.recv("the peer's address format", f[:]); err != nil {
		return 0, nil, err
	}
	name = make([]byte, n)
	if err := c.recv("the peer's name", name); err != nil {
		return 0, nil, err
	}
	return decodeFormat(f), name, nil
}

// sync runs the per-size synchronisation: the client sends "q\0" and
// waits for "a\0"; the server waits for "q\0" and answers "a\0".
func (c *ctrl) sync(client bool) error {
	var got [2]byte
	if client {
		if err := c.send("sync request", syncQ[:]); err != nil {
			return err
		}
		if err := c.recv("sync reply", got[:]); err != nil {
			return err
		}
		if got != syncA {
			return failf(exitEBADMSG, "ctrl: bad sync reply %q from peer (want %q)", got[:], syncA[:])
		}
		return nil
	}
	if err := c.recv("sync request", got[:]); err != nil {
		return err
	}
	if got != syncQ {
		return failf(exitEBADMSG, "ctrl: bad sync request %q from peer (want %q)", got[:], syncQ[:])
	}
	return c.send("sync reply", syncA[:])
}

// exchangeCount runs the count exchange after each size: the client sends
// its receive count and waits for "cnt ok\0"; the server reads the count,
// answers "cnt ok\0" and returns the client's count.
func (c *ctrl) exchangeCount(client bool, count int64) (int64, error) {
	if client {
		b, err := encodeCount(count)
		if err != nil {
			return 0, err
		}
		if err := c.send("count", b[:]); err != nil {
			return 0, err
		}
		var got [len(cntOK)]byte
		if err := c.recv("count acknowledgement", got[:]); err != nil {
			return 0, err
		}
		if got != cntOK {
			return 0, failf(exitEBADMSG, "ctrl: bad count acknowledgement %q from peer (want %q)", got[:], cntOK[:])
		}
		return count, nil
	}
	var b [countLen]byte
	if err := c.recv("count", b[:]); err != nil {
		return 0, err
	}
	n, err := parseCount(b)
	if err != nil {
		return 0, err
	}
	if err := c.send("count acknowledgement", cntOK[:]); err != nil {
		return 0, err
	}
	return n, nil
}
