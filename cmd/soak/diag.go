package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/gofabric/fabric/prov/tcp"
)

// stallDiagnostics writes what tells a stall's cause apart, when sends
// stay without a completion: the provider's own state (tcp RDM: every
// connection and its queues), the kernel's queues of this process's TCP
// sockets (bytes not yet acknowledged, bytes not yet read, retransmissions:
// data the sender wrote that the receiving socket never got is the
// kernel's, not the library's), the host's processes under a real-time
// scheduling policy (busy-polling SCHED_FIFO benchmarks on a shared
// machine leave everything else, the loopback's packet processing
// included, 5% of the CPU), the host's TCP retransmission counters, and
// every goroutine's stack (a lock that is never released, a goroutine
// waiting for another).
func stallDiagnostics(w io.Writer, prov string) {
	fmt.Fprintf(w, "-- stall diagnostics (%s)\n", prov)
	if prov == "tcp" {
		tcp.WriteRDMState(w)
	}
	writeSockets(w)
	writeRealtime(w)
	writeTCPCounters(w)
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	fmt.Fprintf(w, "-- goroutines\n%s\n-- end of stall diagnostics\n", buf[:n])
}

// writeSockets lists this process's TCP sockets from /proc/net/tcp and
// tcp6: addresses, state, send and receive queues, timer and
// retransmissions.
func writeSockets(w io.Writer) {
	ours := map[string]bool{} // socket inodes of our descriptors
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			ours[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	fmt.Fprintln(w, "-- our TCP sockets (/proc/net/tcp: st 01 established, 0A listen; tx_queue:rx_queue in hex bytes; tr timer, retrnsmt)")
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for first := true; sc.Scan(); first = false {
			fs := strings.Fields(sc.Text())
			if first || len(fs) < 10 || !ours[fs[9]] {
				continue
			}
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			fmt.Fprintf(w, "  %s -> %s st %s queues %s timer %s retrnsmt %s\n", hexAddr(fs[1]), hexAddr(fs[2]), fs[3], fs[4], fs[5], fs[6])
		}
	}
}

// hexAddr turns /proc/net/tcp's IPv4 "0100007F:1F90" into 127.0.0.1:8080
// (other forms are left as they are).
func hexAddr(s string) string {
	ip, port, ok := strings.Cut(s, ":")
	p, err1 := strconv.ParseUint(port, 16, 16)
	a, err2 := strconv.ParseUint(ip, 16, 32)
	if !ok || len(ip) != 8 || err1 != nil || err2 != nil {
		return s
	}
	return fmt.Sprintf("%d.%d.%d.%d:%d", a&0xff, a>>8&0xff, a>>16&0xff, a>>24, p)
}

// writeRealtime lists the user processes of the host that run under a
// real-time policy (SCHED_FIFO 1, SCHED_RR 2).
func writeRealtime(w io.Writer) {
	fmt.Fprintln(w, "-- user processes under a real-time policy")
	procs, _ := os.ReadDir("/proc")
	found := 0
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command (which may hold spaces) start at ") ".
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fs := strings.Fields(string(stat[i+1:]))
		// fs[0] is field 3 (state): rt_priority is field 40, policy 41.
		if len(fs) < 39 || fs[38] == "0" {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if len(cmd) == 0 {
			continue // a kernel thread
		}
		found++
		fmt.Fprintf(w, "  pid %s policy %s rtprio %s: %s\n", p.Name(), fs[38], fs[37], strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	if found == 0 {
		fmt.Fprintln(w, "  none")
	}
}

// writeTCPCounters prints the host's TCP retransmission and timeout
// counters and the packets the kernel's input backlog dropped.
func writeTCPCounters(w io.Writer) {
	fmt.Fprint(w, "-- host counters:")
	want := map[string]bool{"RetransSegs": true, "TCPTimeouts": true, "TCPLossProbes": true, "TCPBacklogDrop": true}
	for _, f := range []string{"/proc/net/snmp", "/proc/net/netstat"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			names, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
			for k := 1; k < len(names) && k < len(vals); k++ {
				if want[names[k]] {
					fmt.Fprintf(w, " %s %s", names[k], vals[k])
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/net/softnet_stat"); err == nil {
		var dropped uint64
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if fs := strings.Fields(l); len(fs) > 1 {
				d, _ := strconv.ParseUint(fs[1], 16, 64)
				dropped += d
			}
		}
		fmt.Fprintf(w, " softnet-dropped %d", dropped)
	}
	fmt.Fprintln(w)
}
