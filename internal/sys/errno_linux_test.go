//go:build linux

package sys

import (
	"strings"
	"syscall"
	"testing"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

func TestTranslateErrno(t *testing.T) {
	cases := []struct {
		in   syscall.Errno
		want provider.Errno
	}{
		{0, 0},
		{unix.EAGAIN, provider.EAGAIN},
		{unix.EWOULDBLOCK, provider.EAGAIN},
		{unix.EINTR, provider.EINTR},
		{unix.EBADF, provider.EBADF},
		{unix.ENOTSOCK, provider.EBADF},
		{unix.EINVAL, provider.EINVAL},
		{unix.EAFNOSUPPORT, provider.EINVAL},
		{unix.EMSGSIZE, provider.EMSGSIZE},
		{unix.ENOBUFS, provider.ENOBUFS},
		{unix.ECONNREFUSED, provider.ECONNREFUSED},
		{unix.ECONNRESET, provider.ECONNRESET},
		{unix.ENETRESET, provider.ECONNRESET},
		{unix.EPIPE, provider.ESHUTDOWN},
		{unix.ETIMEDOUT, provider.ETIMEDOUT},
		{unix.EADDRINUSE, provider.EADDRINUSE},
		{unix.EADDRNOTAVAIL, provider.EADDRNOTAVAIL},
		{unix.ENETUNREACH, provider.ENETUNREACH},
		{unix.EHOSTUNREACH, provider.EHOSTUNREACH},
		{unix.EOPNOTSUPP, provider.EOPNOTSUPP},
		{unix.ENOTSUP, provider.EOPNOTSUPP},
		{unix.EPROTONOSUPPORT, provider.EOPNOTSUPP},
		{unix.ENOTCONN, provider.ENOTCONN},
		{unix.EISCONN, provider.EISCONN},
		{unix.EINPROGRESS, provider.EINPROGRESS},
		{unix.EALREADY, provider.EALREADY},
		{unix.ECANCELED, provider.ECANCELED},
		{unix.ENOMEM, provider.ENOMEM},
		{unix.EMFILE, provider.EMFILE},
		{unix.ENFILE, provider.EMFILE},
		{unix.EACCES, provider.EACCES},
		{unix.EPERM, provider.EPERM},
		{unix.ENOSYS, provider.ENOSYS},
		// Not in the table: libfabric has no meaning for them.
		{unix.ECHILD, provider.EOTHER},
		{unix.ESRCH, provider.EOTHER},
		{unix.EXDEV, provider.EOTHER},
		{syscall.Errno(4000), provider.EOTHER},
	}
	for _, c := range cases {
		if got := TranslateErrno(c.in); got != c.want {
			t.Errorf("TranslateErrno(%d %v) = %d %v, want %d %v", int(c.in), c.in, got, got, c.want, c.want)
		}
	}
}

// Every translated value is a libfabric error number with real fi_strerror
// text, and the dense table agrees with the map.
func TestTranslateErrnoTableConsistent(t *testing.T) {
	for k, v := range errnoTable {
		if v <= 0 || v >= provider.ErrnoMax {
			t.Errorf("%v maps to out-of-range %d", k, v)
		}
		if strings.HasPrefix(v.Error(), "Unknown error") {
			t.Errorf("%v maps to %d with no fi_strerror text", k, v)
		}
		if got := TranslateErrno(k); got != v {
			t.Errorf("TranslateErrno(%v) = %v, table says %v", k, got, v)
		}
	}
	for e := syscall.Errno(1); e < 256; e++ {
		if _, ok := errnoTable[e]; !ok && TranslateErrno(e) != provider.EOTHER {
			t.Errorf("unlisted errno %d translated to %v", int(e), TranslateErrno(e))
		}
	}
}

func TestTranslateErrnoAllocs(t *testing.T) {
	var sink error
	n := testing.AllocsPerRun(100, func() {
		sink = TranslateErrno(unix.EAGAIN).AsError()
		sink = TranslateErrno(unix.EMSGSIZE)
		sink = TranslateErrno(syscall.Errno(4000)).AsError()
	})
	_ = sink
	if n != 0 {
		t.Fatalf("TranslateErrno allocates: %v", n)
	}
}
