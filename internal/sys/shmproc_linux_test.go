package sys

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/gofabric/fabric/provider"
)

// The child processes of the shm, futex and CMA tests are this test binary
// re-executed with SYS_TEST_HELPER=<mode> and SYS_TEST_ARGS=<space-separated
// arguments>; TestMain hands them to helperMain. Each talks to the test by
// lines on stdout and stdin, and ends when its stdin closes.
const (
	helperEnv     = "SYS_TEST_HELPER"
	helperArgsEnv = "SYS_TEST_ARGS"
	// helperWait bounds every wait of a test on a child, and of a child.
	helperWait = 10 * time.Second
)

// helperMain runs the child mode and returns its exit code:
//
//   - own NAME SIZE: CreateShm, fill with pattern(i), say "ready", wait for
//     stdin to close, Unlink and Close;
//   - leave NAME SIZE: the same, but Close without Unlink;
//   - open NAME: OpenShm and print the libfabric error number (0: opened);
//   - futex NAME OFF: OpenShm, say "waiting", FutexWait on the word at OFF
//     while it is 0 (re-waiting after every return) and say "done" when it
//     is 1, or exit 2 after helperWait;
//   - cma: print the addresses of a 1 MiB buffer holding pattern(i) and of
//     a zeroed 64 KiB buffer, wait for a line, say "ok" if the second
//     buffer then holds pattern2(i), else "bad";
//   - cmaread PID BASE LEN: ProcessVMReadv of LEN bytes at BASE (hex) of
//     process PID, print the libfabric error number (0: read);
//   - cmaprobe: print CMAAvailable's answer.
func helperMain(mode string) int {
	args := strings.Fields(os.Getenv(helperArgsEnv))
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "helper %s: %s: %v\n", mode, what, err)
		return 1
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch mode {
	case "own", "leave":
		size, _ := strconv.Atoi(arg(1))
		f, err := CreateShm(arg(0), size)
		if err != nil {
			return fail("create", err)
		}
		b := f.Bytes()
		for i := range b {
			b[i] = pattern(i)
		}
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		if mode == "own" {
			f.Unlink()
		}
		f.Close()
		return 0
	case "open":
		f, err := OpenShm(arg(0))
		var e provider.Errno
		if err != nil && !errors.As(err, &e) {
			return fail("open", err)
		}
		fmt.Println(int(e))
		if f != nil {
			f.Close()
		}
		return 0
	case "futex":
		off, _ := strconv.Atoi(arg(1))
		f, err := OpenShm(arg(0))
		if err != nil {
			return fail("open", err)
		}
		defer f.Close()
		w := (*uint32)(unsafe.Pointer(&f.Bytes()[off]))
		fmt.Println("waiting")
		deadline := time.Now().Add(helperWait)
		for atomic.LoadUint32(w) == 0 {
			left := time.Until(deadline)
			if left <= 0 {
				return 2
			}
			if err := FutexWait(w, 0, left); err != nil && err != provider.ETIMEDOUT {
				return fail("wait", err)
			}
		}
		fmt.Println("done")
		return 0
	case "cma":
		src := make([]byte, 1<<20)
		for i := range src {
			src[i] = pattern(i)
		}
		dst := make([]byte, 64<<10)
		s, d := IOVOf(src), IOVOf(dst)
		fmt.Printf("%x %x %x %x\n", s.Base, s.Len, d.Base, d.Len)
		bufio.NewReader(os.Stdin).ReadString('\n')
		for i := range dst {
			if dst[i] != pattern2(i) {
				fmt.Println("bad")
				return 0
			}
		}
		fmt.Println("ok")
		return 0
	case "cmaread":
		pid, _ := strconv.Atoi(arg(0))
		base, _ := strconv.ParseUint(arg(1), 16, 64)
		n, _ := strconv.ParseUint(arg(2), 16, 64)
		_, err := ProcessVMReadv(pid, [][]byte{make([]byte, n)}, []RemoteIOV{{Base: base, Len: n}})
		var e provider.Errno
		if err != nil && !errors.As(err, &e) {
			return fail("readv", err)
		}
		fmt.Println(int(e))
		return 0
	case "cmaprobe":
		ok, why := CMAAvailable()
		fmt.Println(ok, why)
		return 0
	}
	return fail("mode", errors.New("unknown"))
}

func pattern(i int) byte  { return byte(i % 251) }
func pattern2(i int) byte { return byte(i*7 + 3) }

// child is a running helper process.
type child struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

// startChild runs the helper mode with args, as the user cred if not nil
// (then from a copy of the test binary that the user can execute), and
// kills it (if still running) and waits for it at the test's end.
func startChild(t *testing.T, cred *syscall.Credential, mode string, args ...string) *child {
	t.Helper()
	bin := os.Args[0]
	cmd := exec.Command(bin, "-test.run=^$")
	if cred != nil {
		dir, err := os.MkdirTemp("", "systest-uid")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		cbin := filepath.Join(dir, "sys.test")
		if err := os.WriteFile(cbin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(cbin, "-test.run=^$")
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperArgsEnv+"="+strings.Join(args, " "))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		r := bufio.NewReader(out)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				close(c.lines)
				return
			}
			c.lines <- strings.TrimSpace(l)
		}
	}()
	t.Cleanup(func() {
		in.Close()
		c.cmd.Process.Kill()
		c.cmd.Wait()
	})
	return c
}

// line returns the child's next line of output, failing the test after
// helperWait or when the child's output ends.
func (c *child) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatal("child ended its output")
		}
		return l
	case <-time.After(helperWait):
		t.Fatal("child said nothing in time")
	}
	return ""
}

// wait closes the child's stdin and waits (bounded) for it to exit,
// returning its exit code.
func (c *child) wait(t *testing.T) int {
	t.Helper()
	c.in.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(helperWait):
		c.cmd.Process.Kill()
		<-done
		t.Fatal("child did not exit in time")
	}
	return c.cmd.ProcessState.ExitCode()
}

// kill sends SIGKILL and waits for the child to be gone.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	c.wait(t)
}

// testPrefix returns a file-name prefix unique to the test and process
// and removes every file of ShmDir that starts with it when the test ends.
func testPrefix(t *testing.T) string {
	p := fmt.Sprintf("gofabric-systest-%d-%s-", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "."))
	t.Cleanup(func() {
		m, _ := filepath.Glob(filepath.Join(ShmDir, p+"*"))
		for _, f := range m {
			os.Remove(f)
		}
	})
	return p
}

// leftFiles lists the files of ShmDir that start with prefix.
func leftFiles(prefix string) []string {
	m, _ := filepath.Glob(filepath.Join(ShmDir, prefix+"*"))
	return m
}
