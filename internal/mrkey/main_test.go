package mrkey

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMain fails the run if a test leaves goroutines behind.
func TestMain(m *testing.M) {
	base := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base {
			buf := make([]byte, 1<<16)
			os.Stderr.Write(buf[:runtime.Stack(buf, true)])
			os.Stderr.WriteString("leaked goroutines\n")
			code = 1
		}
	}
	os.Exit(code)
}
