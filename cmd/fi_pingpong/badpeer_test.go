package main

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Bad input and misbehaving peers: a clear message and a non-zero exit,
// within the timeout, never a hang or a panic. The Go side runs as a real
// process (the re-executed test binary); the peer is a fake in this test.

// startServer starts our fi_pingpong with args as a server, its output
// going to out, waits (bounded by ctx) until it listens on port and
// connects to its control port, as a fake client would.
func startServer(t *testing.T, ctx context.Context, out *bytes.Buffer, port int, args ...string) (*exec.Cmd, net.Conn) {
	t.Helper()
	cmd := ourCommand(ctx, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for !listening(port) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	conn, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	return cmd, conn
}

// runOurs runs our fi_pingpong with args and returns its exit status and
// combined output; it fails the test if the process outlives limit.
func runOurs(t *testing.T, limit time.Duration, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var out bytes.Buffer
	cmd := ourCommand(ctx, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("fi_pingpong %v still running after %v (killed): %s", args, time.Since(start), out.String())
	}
	if strings.Contains(out.String(), "panic") || strings.Contains(out.String(), "goroutine ") {
		t.Fatalf("fi_pingpong %v panicked:\n%s", args, out.String())
	}
	if err == nil {
		return 0, out.String()
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("run: %v", err)
	}
	return ee.ExitCode(), out.String()
}

// fakeServer listens on a free port and runs behave on the first
// connection.
func fakeServer(t *testing.T, behave func(c net.Conn)) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		behave(c)
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestBadOptions(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-p", "nosuchprov"}, exitENODATA, `no provider named "nosuchprov"`},
		{[]string{"-p", "udp", "-e", "msg"}, exitENODATA, "does not support FI_EP_MSG"},
		{[]string{"-p", "udp", "-S", "1473"}, exitENODATA, "size 1473 exceeds the max_msg_size 1472"},
		{[]string{"-p", "udp", "-d", "nosuchdomain"}, exitENODATA, `no domain named "nosuchdomain"`},
		{[]string{"-p", "udp", "-m", "tagged"}, exitENODATA, "FI_TAGGED"},
		{[]string{"-e", "bogus"}, exitFailure, "Unknown endpoint : bogus"},
		{[]string{"-S", "x"}, exitFailure, `Error parsing "x"`},
		{[]string{"-h"}, exitFailure, "Usage:"},
	} {
		code, out := runOurs(t, 10*time.Second, c.args...)
		if code != c.code || !strings.Contains(out, c.msg) {
			t.Errorf("%v: exit %d, output %q; want exit %d and %q", c.args, code, out, c.code, c.msg)
		}
	}
}

func TestClientBadPeer(t *testing.T) {
	name := append([]byte{0, 0, 0, 16, 2, 0, 0, 0}, 2, 0, 0, 9, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0) // 127.0.0.1:9
	for _, c := range []struct {
		name   string
		behave func(net.Conn)
		code   int
		msg    string
	}{
		{"closes at once", func(c net.Conn) {}, exitECONNABORT, "no data or remote connection closed"},
		{"speaks HTTP", func(c net.Conn) { c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")) }, exitEMSGSIZE, "not a fi_pingpong peer"},
		{"silent", func(c net.Conn) { time.Sleep(3 * time.Second) }, exitETIMEDOUT, "timed out"},
		{"bad sync reply", func(c net.Conn) {
			c.Write(name)
			buf := make([]byte, 24+2) // the client's name, then "q\0"
			readFull(c, buf)
			c.Write([]byte("zz"))
		}, exitEBADMSG, "bad sync reply"},
		{"closes after names", func(c net.Conn) {
			c.Write(name)
			readFull(c, make([]byte, 24+2)) // the client's name and "q\0"
		}, exitECONNABORT, "sync reply"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			port := fakeServer(t, c.behave)
			start := time.Now()
			code, out := runOurs(t, 15*time.Second, "-p", "udp", "-S", "64", "-I", "10", "--timeout", "1",
				"-P", strconv.Itoa(port), "127.0.0.1")
			if code != c.code || !strings.Contains(out, c.msg) {
				t.Fatalf("exit %d, output %q; want exit %d and %q", code, out, c.code, c.msg)
			}
			if d := time.Since(start); d > 8*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}

func readFull(c net.Conn, b []byte) {
	for n := 0; n < len(b); {
		m, err := c.Read(b[n:])
		if err != nil {
			return
		}
		n += m
	}
}

// TestServerBadPeer: a client that vanishes or misbehaves after the name
// exchange, including in the middle of the timed loop (the data path then
// has no completion for --timeout).
func TestServerBadPeer(t *testing.T) {
	name := append([]byte{0, 0, 0, 16, 2, 0, 0, 0}, 2, 0, 0, 9, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0)
	for _, c := range []struct {
		name   string
		behave func(net.Conn)
		code   int
		msg    string
	}{
		{"garbage sync", func(c net.Conn) {
			readFull(c, make([]byte, 24))
			c.Write(name)
			c.Write([]byte("GET / HTTP/1.1\r\n"))
		}, exitEBADMSG, "bad sync request"},
		{"vanishes in the loop", func(c net.Conn) {
			readFull(c, make([]byte, 24))
			c.Write(name)
			c.Write(syncQ[:])
			readFull(c, make([]byte, 2))
			time.Sleep(3 * time.Second) // never sends a ping
		}, exitETIMEDOUT, "no receive completion within 1s"},
		{"malformed count", func(c net.Conn) {
			readFull(c, make([]byte, 24))
			c.Write(name)
			c.Write(syncQ[:])
			readFull(c, make([]byte, 2))
			c.Write([]byte("12ab\x00\x00\x00\x00\x00\x00"))
		}, exitEBADMSG, "malformed count"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			port := freePort(t)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			var out bytes.Buffer
			iters := "0" // the malformed-count peer sends its count right after the sync
			if c.name == "vanishes in the loop" {
				iters = "10"
			}
			cmd, conn := startServer(t, ctx, &out, port, "-p", "udp", "-S", "64", "-I", iters, "--timeout", "1", "-B", strconv.Itoa(port))
			go func() { defer conn.Close(); c.behave(conn) }()
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if ctx.Err() != nil || !ok || ee.ExitCode() != c.code || !strings.Contains(out.String(), c.msg) {
				t.Fatalf("exit %v, output %q; want exit %d and %q", err, out.String(), c.code, c.msg)
			}
		})
	}
}

// TestServerNoClient: a server nobody connects to gives up after --timeout.
func TestServerNoClient(t *testing.T) {
	code, out := runOurs(t, 10*time.Second, "-p", "udp", "--timeout", "0.5", "-B", strconv.Itoa(freePort(t)))
	if code != exitETIMEDOUT || !strings.Contains(out, "no client connected") {
		t.Fatalf("exit %d, output %q", code, out)
	}
}

// TestLocal runs the README's first command shape (both sides from one
// command) with -c over every provider/endpoint of the interop matrix.
func TestLocal(t *testing.T) {
	for _, ic := range interopCases {
		t.Run(ic.prov+"_"+ic.ep, func(t *testing.T) {
			code, out := runOurs(t, 60*time.Second, "--local", "-p", ic.prov, "-e", ic.ep, "-S", "all", "-I", "10", "-c", "--timeout", "20")
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			checkTable(t, "local", out, expectedRows(interopSizes(ic.prov, "all"), 10))
		})
	}
}

// TestLocalDetectsCorruption: a client with -c against a server without
// it (all-zero payload) reports the bad byte and fails.
func TestLocalDetectsCorruption(t *testing.T) {
	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := ourCommand(ctx, "-p", "udp", "-S", "64", "-I", "5", "--timeout", "2", "-B", strconv.Itoa(port))
	client := ourCommand(ctx, "-p", "udp", "-S", "64", "-I", "5", "-c", "--timeout", "2", "-P", strconv.Itoa(port), "127.0.0.1")
	r := runPair(t, ctx, port, server, client)
	if r.clientErr == nil || !strings.Contains(r.clientOut, "Error at iteration=1 size=64 byte=0") {
		t.Fatalf("client: %v\n%s%s", r.clientErr, r.clientOut, r.clientLog)
	}
	if r.serverErr == nil {
		t.Fatalf("server succeeded after the client failed:\n%s", r.serverOut)
	}
}

// TestMsgBadPeer: FI_EP_MSG setup against peers that do not follow up: a
// client that never connects to the advertised passive endpoint (the
// server gives up waiting for FI_CONNREQ), and a server whose advertised
// name has nobody listening (the client's connect is refused).
func TestMsgBadPeer(t *testing.T) {
	t.Run("client_never_connects", func(t *testing.T) {
		port := freePort(t)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		var out bytes.Buffer
		cmd, conn := startServer(t, ctx, &out, port, "-p", "tcp", "-e", "msg", "-S", "64", "-I", "5", "--timeout", "1", "-B", strconv.Itoa(port))
		defer conn.Close()
		readFull(conn, make([]byte, 24)) // the passive endpoint's name
		err := cmd.Wait()
		ee, ok := err.(*exec.ExitError)
		if ctx.Err() != nil || !ok || ee.ExitCode() != exitETIMEDOUT || !strings.Contains(out.String(), "FI_CONNREQ") {
			t.Fatalf("exit %v, output %q", err, out.String())
		}
	})
	t.Run("nobody_at_the_name", func(t *testing.T) {
		dead := freePort(t) // closed again: connecting there is refused
		name := append([]byte{0, 0, 0, 16, 2, 0, 0, 0}, 2, 0, byte(dead>>8), byte(dead), 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0)
		port := fakeServer(t, func(c net.Conn) {
			c.Write(name)
			time.Sleep(3 * time.Second)
		})
		code, out := runOurs(t, 15*time.Second, "-p", "tcp", "-e", "msg", "-S", "64", "-I", "5", "--timeout", "2",
			"-P", strconv.Itoa(port), "127.0.0.1")
		if code == 0 || !strings.Contains(out, "FI_CONNECTED") {
			t.Fatalf("exit %d, output %q", code, out)
		}
	})
}

// TestMsgServerClientLeaves: an FI_EP_MSG client that takes the server's
// name, then sends a bad connect request (malformed, wrong version, short)
// or none, and closes the control connection. The server must not wait
// for its --timeout (30 s here) or forever: it ends within seconds with a
// clear message and a non-zero exit.
func TestMsgServerClientLeaves(t *testing.T) {
	valid := make([]byte, 32) // a CM header: version 3, FI_CONNREQ, no data
	valid[0] = 3
	valid[24] = 1
	wrongVersion := append([]byte{9}, valid[1:]...)
	for _, c := range []struct {
		name string
		req  []byte // sent to the passive endpoint; nil: no connection
	}{
		{"no_connect", nil},
		{"garbage", []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")},
		{"wrong_version", wrongVersion},
		{"short", valid[:10]},
	} {
		t.Run(c.name, func(t *testing.T) {
			port := freePort(t)
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			var out bytes.Buffer
			cmd, ctl := startServer(t, ctx, &out, port, "-p", "tcp", "-e", "msg", "-S", "64", "-I", "5", "--timeout", "30",
				"-B", strconv.Itoa(port))
			name := make([]byte, 24) // length, format, sockaddr_in
			readFull(ctl, name)
			if c.req != nil {
				pep := "127.0.0.1:" + strconv.Itoa(int(name[10])<<8|int(name[11]))
				conn, err := net.Dial("tcp4", pep)
				if err != nil {
					t.Fatalf("connect to the advertised passive endpoint %s: %v", pep, err)
				}
				conn.Write(c.req)
				conn.Close()
			}
			start := time.Now()
			ctl.Close()
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if ctx.Err() != nil || !ok || ee.ExitCode() != exitECONNABORT ||
				!strings.Contains(out.String(), "closed the control connection") {
				t.Fatalf("exit %v, output %q; want exit %d, the control connection closed", err, out.String(), exitECONNABORT)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("server took %v to notice", d)
			}
		})
	}
}
