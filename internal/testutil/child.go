package testutil

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// StartChild starts the test binary again as a helper process: run is its
// -test.run pattern ("^$" for none, when its TestMain acts on env), env is
// added to this process's environment, and its stderr is ours. It returns
// the process and the first line the child writes to stdout (trimmed),
// failing t if none comes within d. The child is killed and reaped at t's
// cleanup, if the test has not ended it by then.
func StartChild(t testing.TB, run string, d time.Duration, env ...string) (*exec.Cmd, string) {
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
