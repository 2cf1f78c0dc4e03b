package testutil

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Spawn starts the test binary again as a helper process: run is its
// -test.run pattern ("^$" for none, when its TestMain acts on env), env is
// added to this process's environment, and its stderr is ours. It returns
// the process and its stdout. The child is killed and reaped at t's
// cleanup, if the test has not ended it by then.
func Spawn(t testing.TB, run string, env ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, out
}

// StartChild is Spawn that also returns the first line the child writes
// to stdout (trimmed), failing t if none comes within d.
func StartChild(t testing.TB, run string, d time.Duration, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, out := Spawn(t, run, env...)
	lines := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		lines <- strings.TrimSpace(s)
	}()
	select {
	case s := <-lines:
		return cmd, s
	case <-time.After(d):
		t.Fatalf("no line from the child process within %v", d)
		return nil, ""
	}
}
