package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	fabric "github.com/gofabric/fabric"
)

// localIfaceEnv are the variables that pin the udp and tcp providers to
// loopback; --local sets them (for both sides) unless already set.
var localIfaceEnv = []string{"FI_UDP_IFACE", "FI_TCP_IFACE"}

// serverArgs rebuilds the command line of the server side from o.
func serverArgs(o *options) []string {
	a := []string{"-I", strconv.Itoa(o.iters), "-e", epTypeName(o.epType)}
	if o.prov != "" {
		a = append(a, "-p", o.prov)
	}
	if o.domain != "" {
		a = append(a, "-d", o.domain)
	}
	switch o.sizeMode {
	case sizesAll:
		a = append(a, "-S", "all")
	case sizesOne:
		a = append(a, "-S", strconv.Itoa(o.size))
	}
	if o.check {
		a = append(a, "-c")
	}
	if o.tagged {
		a = append(a, "-m", "tagged")
	}
	if o.verbose {
		a = append(a, "-v")
	}
	if o.ipv6 {
		a = append(a, "-6")
	}
	a = append(a, "--timeout", strconv.FormatFloat(o.timeout.Seconds(), 'f', -1, 64))
	return a
}

func epTypeName(t fabric.EPType) string {
	switch t {
	case fabric.EPMsg:
		return "msg"
	case fabric.EPRDM:
		return "rdm"
	}
	return "dgram"
}

// runLocal runs both sides on one machine: the server as a child process
// of this executable, on a loopback control listener this process opens
// (on a free port) and hands over as file descriptor 3, and the client in
// this process. It prints the client's table; the server's output is shown
// with -v or when the server fails.
func runLocal(o *options, stdout, stderr io.Writer) int {
	prog := "fi_pingpong"
	for _, k := range localIfaceEnv {
		if _, ok := os.LookupEnv(k); !ok {
			os.Setenv(k, "lo")
		}
	}
	// Bad options fail once, here, rather than in both processes.
	v := &pingpong{o: o, stdout: stdout, stderr: stderr}
	v.hints = v.makeHints()
	info, err := v.getinfo(v.hints)
	if err == nil {
		v.info = info
		err = v.checkSize()
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return exitCode(err)
	}
	network, host := "tcp4", "127.0.0.1"
	if o.ipv6 {
		network, host = "tcp6", "::1"
	}
	ln, err := net.Listen(network, net.JoinHostPort(host, "0"))
	if err != nil {
		fmt.Fprintf(stderr, "%s: --local: control listener: %v\n", prog, err)
		return exitFailure
	}
	port := ln.Addr().(*net.TCPAddr).Port
	lf, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		fmt.Fprintf(stderr, "%s: --local: %v\n", prog, err)
		return exitFailure
	}
	exe, err := os.Executable()
	if err != nil {
		lf.Close()
		fmt.Fprintf(stderr, "%s: --local: %v\n", prog, err)
		return exitFailure
	}
	var srvOut, srvErr bytes.Buffer
	cmd := exec.Command(exe, append(serverArgs(o), "--serve-fd", "3")...)
	cmd.ExtraFiles = []*os.File{lf}
	cmd.Stdout, cmd.Stderr = &srvOut, &srvErr
	if err := cmd.Start(); err != nil {
		lf.Close()
		fmt.Fprintf(stderr, "%s: --local: starting the server: %v\n", prog, err)
		return exitFailure
	}
	lf.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	co := *o
	co.local = false
	co.dstAddr = host
	co.dstPort = port
	cerr := runPingpong(&co, stdout, stderr)

	// The server finishes right after the client (fin exchange); if the
	// client failed, give the server its own timeout to notice, then stop
	// it: it is our child, stopped by its own process handle.
	grace := 5 * time.Second
	if cerr != nil && o.timeout > 0 {
		grace = o.timeout + grace
	}
	var serr error
	select {
	case serr = <-done:
	case <-time.After(grace):
		cmd.Process.Kill()
		serr = <-done
		fmt.Fprintf(stderr, "%s: --local: server still running after %v: killed\n", prog, grace)
	}
	if o.verbose || serr != nil {
		dump(stderr, "server: ", srvOut.String())
	}
	if o.verbose || serr != nil || cerr != nil {
		dump(stderr, "server: ", srvErr.String())
	}
	if cerr != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, cerr)
		return exitCode(cerr)
	}
	if serr != nil {
		fmt.Fprintf(stderr, "%s: --local: server: %v\n", prog, serr)
		if ee, ok := serr.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			return ee.ExitCode()
		}
		return exitFailure
	}
	return 0
}

// dump writes text to w with every line prefixed.
func dump(w io.Writer, prefix, text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	for _, l := range strings.Split(text, "\n") {
		fmt.Fprintf(w, "%s%s\n", prefix, l)
	}
}
