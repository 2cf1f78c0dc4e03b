package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Helpers of the tests that run processes: the C tools over the plugin, our
// Go cmd/fi_pingpong, C programs of testdata/. Every process is bounded by
// a context and by t.Cleanup, which ends it (that PID only) if the test
// leaves it running.

// proc is a started process whose output is collected.
type proc struct {
	name      string
	cmd       *exec.Cmd
	mu        sync.Mutex // guards out and errb
	out, errb bytes.Buffer
	done      chan struct{}
	err       error // valid after done is closed
}

// lockedWriter serialises the writes of the process's copying goroutine
// against the test's reads of the buffer.
type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// start starts name args with environment envv, killed when ctx ends, and
// registers a cleanup that kills it (by its PID) and waits for it.
func start(t *testing.T, ctx context.Context, envv []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: filepath.Base(name) + " " + strings.Join(args, " "), done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, name, args...)
	p.cmd.Env = envv
	// A temporary working directory: libinfinipath (loaded by the C
	// library's psm provider) writes a *.btr file there when a process
	// crashes.
	p.cmd.Dir = t.TempDir()
	p.cmd.Stdout = lockedWriter{&p.mu, &p.out}
	p.cmd.Stderr = lockedWriter{&p.mu, &p.errb}
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill() // this PID only
			<-p.done
		}
	})
	return p
}

// wait waits for the process to exit (or ctx to end: then it is killed)
// and returns its error.
func (p *proc) wait(ctx context.Context) error {
	select {
	case <-p.done:
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return p.err
}

// stdout and stderr return what the process printed so far.
func (p *proc) stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errb.String()
}

func (p *proc) String() string {
	return fmt.Sprintf("%s: %v\n--- stdout:\n%s--- stderr:\n%s", p.name, p.err, p.stdout(), p.stderr())
}

// freePort returns a TCP port that was free a moment ago (never the
// tools' default control port 47592: the kernel picks an ephemeral one).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// listening reports whether a socket listens on TCP port, from
// /proc/net/tcp*: connecting to find out would take the server's only
// accept.
func listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 3 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// waitListening waits until p listens on port; an error if p exits first
// or ctx ends.
func waitListening(ctx context.Context, p *proc, port int) error {
	for !listening(port) {
		select {
		case <-p.done:
			return fmt.Errorf("server exited before listening on %d: %v", port, p)
		case <-ctx.Done():
			return fmt.Errorf("server did not listen on %d within the time limit: %v", port, p)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

var (
	goPPOnce sync.Once
	goPPPath string
	goPPErr  error
	goPPOut  []byte
)

// goPingpong builds our cmd/fi_pingpong from the root module into the
// plugin's directory (removed by TestMain) once, and returns its path.
func goPingpong(t *testing.T) string {
	t.Helper()
	dir := plugin(t)
	goPPOnce.Do(func() {
		goPPPath = filepath.Join(dir, "fi_pingpong-go")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", goPPPath, "./cmd/fi_pingpong")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "GOWORK=off")
		goPPOut, goPPErr = cmd.CombinedOutput()
	})
	if goPPErr != nil {
		t.Fatalf("go build ./cmd/fi_pingpong: %v\n%s", goPPErr, goPPOut)
	}
	return goPPPath
}

// cPingpong returns the path of libfabric's fi_pingpong, skipping (or
// failing with FABRIC_INTEROP=1) when it is missing.
func cPingpong(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("fi_pingpong")
	if err == nil {
		out, _ := exec.Command(path, "-h").CombinedOutput()
		if !bytes.Contains(out, []byte("Ping pong client and server")) {
			err = fmt.Errorf("%s is not libfabric's fi_pingpong", path)
		}
	}
	interopCheck(t, "the C fi_pingpong (libfabric-bin)", err)
	return path
}

// compileC compiles testdata/src with gcc against the C libfabric (and
// gofab.h), and the extra libraries libs (such as "-lpthread"), into a
// temporary directory and returns the binary.
func compileC(t *testing.T, src string, libs ...string) string {
	t.Helper()
	needTools(t)
	bin := filepath.Join(t.TempDir(), strings.TrimSuffix(src, ".c"))
	abs, _ := filepath.Abs(filepath.Join("testdata", src))
	inc, _ := filepath.Abs(".")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"-Wall", "-Werror", "-O1", "-g", "-I" + inc, "-o", bin, abs, "-lfabric", "-ldl"}, libs...)
	if out, err := exec.CommandContext(ctx, "gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, out)
	}
	return bin
}

// pingpongRows checks fi_pingpong output (who: for messages): the result
// header, then only result rows, each with iters messages sent and acked.
// It returns the rows' first column (the size as the tools print it).
func pingpongRows(t *testing.T, who, out string, iters int) []string {
	t.Helper()
	var sizes []string
	header := false
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case f[0] == "bytes" && strings.Join(f, " ") == "bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec":
			if header {
				t.Fatalf("%s: two headers:\n%s", who, out)
			}
			header = true
		case header && len(f) == 8 && f[0][0] >= '0' && f[0][0] <= '9':
			n := strconv.Itoa(iters)
			if f[1] != n || f[2] != "="+n {
				t.Fatalf("%s: row %q: want %s sent and =%s acked", who, l, n, n)
			}
			for _, v := range f[4:] {
				if strings.Contains(v, "nan") || strings.Contains(v, "inf") {
					t.Fatalf("%s: row %q", who, l)
				}
			}
			sizes = append(sizes, f[0])
		default:
			t.Fatalf("%s: unexpected line %q in:\n%s", who, l, out)
		}
	}
	if !header || len(sizes) == 0 {
		t.Fatalf("%s printed no result table:\n%s", who, out)
	}
	return sizes
}

// sizeStr renders n as fi_pingpong's first column does (1k, 64k, 1m).
func sizeStr(n int) string {
	for _, u := range []struct {
		base int
		c    string
	}{{1 << 30, "g"}, {1 << 20, "m"}, {1 << 10, "k"}} {
		if n >= u.base {
			if frac := (n % u.base) * 10 / u.base; frac != 0 {
				return fmt.Sprintf("%d.%d%s", n/u.base, frac, u.c)
			}
			return fmt.Sprintf("%d%s", n/u.base, u.c)
		}
	}
	return strconv.Itoa(n)
}
