package sys

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// TestProcessVMSelf: reads and writes of this process's own memory, over
// several iovec entries on both sides, partial transfers and bad input.
func TestProcessVMSelf(t *testing.T) {
	pid := os.Getpid()
	src := make([]byte, 10000)
	for i := range src {
		src[i] = pattern(i)
	}
	a, b, c := make([]byte, 3000), make([]byte, 0), make([]byte, 7000)
	remote := []RemoteIOV{IOVOf(src[:4000]), IOVOf(src[4000:])}
	n, err := ProcessVMReadv(pid, [][]byte{a, b, c}, remote)
	if n != 10000 || err != nil {
		t.Fatalf("readv = %d, %v", n, err)
	}
	if !bytes.Equal(append(append([]byte{}, a...), c...), src) {
		t.Fatal("readv data differs")
	}
	dst := make([]byte, 5000)
	w := []byte("hello, cross-memory attach")
	n, err = ProcessVMWritev(pid, [][]byte{w, w}, []RemoteIOV{IOVOf(dst[100:110]), IOVOf(dst[200:])})
	if n != 2*len(w) || err != nil {
		t.Fatalf("writev = %d, %v", n, err)
	}
	if want := string(w) + string(w); string(dst[100:110])+string(dst[200:200+2*len(w)-10]) != want {
		t.Fatalf("writev data %q %q", dst[100:110], dst[200:200+2*len(w)-10])
	}
	// Partial: the second remote range is not mapped.
	bad := RemoteIOV{Base: 4096, Len: 100}
	n, err = ProcessVMReadv(pid, [][]byte{make([]byte, 200)}, []RemoteIOV{IOVOf(src[:50]), bad})
	if n != 50 || err != nil {
		t.Fatalf("partial readv = %d, %v; want 50, nil", n, err)
	}
	if n, err := ProcessVMReadv(pid, [][]byte{make([]byte, 200)}, []RemoteIOV{bad}); n != 0 || err != provider.EFAULT {
		t.Fatalf("readv of an unmapped range = %d, %v; want FI_EFAULT", n, err)
	}
	if n, err := ProcessVMReadv(pid, nil, remote); n != 0 || err != nil {
		t.Fatalf("empty local list = %d, %v", n, err)
	}
	if n, err := ProcessVMWritev(pid, [][]byte{a}, nil); n != 0 || err != nil {
		t.Fatalf("empty remote list = %d, %v", n, err)
	}
	for _, p := range []int{0, -1} {
		if _, err := ProcessVMReadv(p, [][]byte{a}, remote); err != provider.EINVAL {
			t.Fatalf("pid %d: %v", p, err)
		}
	}
	if _, err := ProcessVMReadv(pid, make([][]byte, IOVMax+1), remote); err != provider.EINVAL {
		t.Fatalf("too many local entries: %v", err)
	}
	if _, err := ProcessVMWritev(pid, [][]byte{a}, make([]RemoteIOV, IOVMax+1)); err != provider.EINVAL {
		t.Fatalf("too many remote entries: %v", err)
	}
	// More entries than the stack arrays hold.
	many := make([][]byte, 100)
	for i := range many {
		many[i] = make([]byte, 100)
	}
	if n, err := ProcessVMReadv(pid, many, []RemoteIOV{IOVOf(src)}); n != 10000 || err != nil {
		t.Fatalf("100-entry readv = %d, %v", n, err)
	}
	for i := range many {
		if !bytes.Equal(many[i], src[i*100:i*100+100]) {
			t.Fatalf("entry %d differs", i)
		}
	}
	if IOVOf(nil) != (RemoteIOV{}) {
		t.Fatal("IOVOf(nil) is not zero")
	}
	// No process: pid_max is never a process id.
	max, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	nopid, _ := strconv.Atoi(strings.TrimSpace(string(max)))
	if _, err := ProcessVMReadv(nopid, [][]byte{a}, remote); err != provider.ECONNRESET {
		t.Fatalf("readv of no process: %v, want FI_ECONNRESET", err)
	}
}

func TestProcessVMAllocs(t *testing.T) {
	pid := os.Getpid()
	src := make([]byte, 4096)
	local := [][]byte{make([]byte, 1024), make([]byte, 1024), make([]byte, 1024), make([]byte, 1024)}
	remote := []RemoteIOV{IOVOf(src[:2048]), IOVOf(src[2048:])}
	if n := testing.AllocsPerRun(100, func() {
		if n, err := ProcessVMReadv(pid, local, remote); n != 4096 || err != nil {
			t.Fatal(n, err)
		}
		ProcessVMWritev(pid, local, remote)
	}); n != 0 {
		t.Fatalf("%v allocs per readv+writev", n)
	}
}

// TestProcessVMChild reads a child process's buffer and writes into
// another one, which the child checks.
func TestProcessVMChild(t *testing.T) {
	c := startChild(t, nil, "cma")
	var s, d RemoteIOV
	l := c.line(t)
	if _, err := fmt.Sscanf(l, "%x %x %x %x", &s.Base, &s.Len, &d.Base, &d.Len); err != nil {
		t.Fatalf("child: %q: %v", l, err)
	}
	if s.Len != 1<<20 || d.Len != 64<<10 {
		t.Fatalf("child buffers %+v %+v", s, d)
	}
	pid := c.cmd.Process.Pid
	got := make([]byte, 1<<20)
	// Three local pieces against the remote buffer split in two.
	half := RemoteIOV{Base: s.Base, Len: s.Len / 2}
	rest := RemoteIOV{Base: s.Base + s.Len/2, Len: s.Len / 2}
	n, err := ProcessVMReadv(pid, [][]byte{got[:1000], got[1000:600000], got[600000:]}, []RemoteIOV{half, rest})
	if n != 1<<20 || err != nil {
		t.Fatalf("readv of the child = %d, %v", n, err)
	}
	for i := range got {
		if got[i] != pattern(i) {
			t.Fatalf("byte %d = %d, want %d", i, got[i], pattern(i))
		}
	}
	put := make([]byte, 64<<10)
	for i := range put {
		put[i] = pattern2(i)
	}
	if n, err := ProcessVMWritev(pid, [][]byte{put}, []RemoteIOV{d}); n != len(put) || err != nil {
		t.Fatalf("writev to the child = %d, %v", n, err)
	}
	c.in.Write([]byte("check\n"))
	if l := c.line(t); l != "ok" {
		t.Fatalf("child found %q in its buffer", l)
	}
	if code := c.wait(t); code != 0 {
		t.Fatalf("child exit %d", code)
	}
	if _, err := ProcessVMReadv(pid, [][]byte{got}, []RemoteIOV{half}); err != provider.ECONNRESET {
		t.Fatalf("readv of the exited child: %v, want FI_ECONNRESET", err)
	}
}

// TestCMAProbeChild: CMAAvailable answers once per process; a child
// started with FI_SHM_DISABLE_CMA=1 reports it off, and this process (no
// variable set) answers what its own probe inputs say.
func TestCMAProbeChild(t *testing.T) {
	ok, why := CMAAvailable()
	if ok2, why2 := CMAAvailable(); ok2 != ok || why2 != why || why == "" {
		t.Fatalf("CMAAvailable changed: %v %q then %v %q", ok, why, ok2, why2)
	}
	if v, set := parseBool(os.Getenv("FI_SHM_DISABLE_CMA")); !set || !v {
		_, err := os.Stat("/proc/sys/kernel/yama/ptrace_scope")
		if os.IsNotExist(err) && ok != (selfRead() == nil) {
			t.Fatalf("CMAAvailable = %v (%s) with self read %v and no yama", ok, why, selfRead())
		}
	}
	t.Setenv("FI_SHM_DISABLE_CMA", "1")
	c := startChild(t, nil, "cmaprobe")
	if l := c.line(t); l != "false disabled by FI_SHM_DISABLE_CMA" {
		t.Fatalf("child with FI_SHM_DISABLE_CMA=1: %q", l)
	}
	c.wait(t)
}

// TestProcessVMOtherUID: a process of another uid (65534) cannot read ours:
// FI_EPERM, the error on which the shm provider falls back to segments.
// Running a child as another uid needs root: skipped otherwise.
func TestProcessVMOtherUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a child process as uid 65534")
	}
	secret := []byte("not for uid 65534")
	r := IOVOf(secret)
	c := startChild(t, &syscall.Credential{Uid: 65534, Gid: 65534}, "cmaread",
		strconv.Itoa(os.Getpid()), fmt.Sprintf("%x", r.Base), fmt.Sprintf("%x", r.Len))
	if l := c.line(t); l != strconv.Itoa(int(provider.EPERM)) {
		t.Fatalf("uid 65534 reading our memory answered errno %q, want %d (EPERM)", l, provider.EPERM)
	}
	c.wait(t)
	runtime.KeepAlive(secret)
}

// BenchmarkProcessVMReadv: a single-copy read of our own memory, the cost
// the shm provider's CMA path pays per large message (compare with
// BenchmarkCopy: one memmove of the same size).
func BenchmarkProcessVMReadv(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		src, dst := make([]byte, size), make([]byte, size)
		local, remote := [][]byte{dst}, []RemoteIOV{IOVOf(src)}
		pid := os.Getpid()
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if n, err := ProcessVMReadv(pid, local, remote); n != size || err != nil {
					b.Fatal(n, err)
				}
			}
		})
		b.Run("copy-"+strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				copy(dst, src)
			}
		})
	}
}
