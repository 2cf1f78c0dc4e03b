package fabtest

import (
	"os"
	"runtime"
	"testing"
)

func TestFDReadable(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, ok := fdReadable(0); ok {
			t.Fatal("fdReadable claims a check on a system without poll support")
		}
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fd := int(r.Fd())
	if rd, ok := fdReadable(fd); !ok || rd {
		t.Fatalf("empty pipe: readable %v ok %v", rd, ok)
	}
	if _, err := w.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if rd, ok := fdReadable(fd); !ok || !rd {
		t.Fatalf("pipe with a byte: readable %v ok %v", rd, ok)
	}
	if _, ok := fdReadable(-1); ok {
		t.Fatal("fdReadable(-1) claims a check")
	}
}
