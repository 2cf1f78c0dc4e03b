package testutil

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestCheckFindsGoroutineLeak(t *testing.T) {
	b := Snapshot()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { <-stop; close(done) }()
	var stacks strings.Builder
	err := b.Check(50*time.Millisecond, &stacks)
	close(stop)
	<-done
	if err == nil || !strings.Contains(err.Error(), "goroutines") {
		t.Fatalf("Check = %v, want a goroutine leak", err)
	}
	if !strings.Contains(stacks.String(), "TestCheckFindsGoroutineLeak") {
		t.Errorf("stacks do not show the leaked goroutine:\n%s", stacks.String())
	}
	if err := b.Check(time.Second, nil); err != nil {
		t.Errorf("after the goroutine ended: %v", err)
	}
}

func TestCheckFindsFDLeak(t *testing.T) {
	b := Snapshot()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Check(50*time.Millisecond, nil)
	f.Close()
	if err == nil || !strings.Contains(err.Error(), "file descriptors") {
		t.Fatalf("Check = %v, want a descriptor leak", err)
	}
	if err := b.Check(time.Second, nil); err != nil {
		t.Errorf("after closing: %v", err)
	}
}
