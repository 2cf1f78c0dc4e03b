package sys

import (
	"syscall"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

// errnoTable maps kernel errno values to libfabric error numbers. libfabric
// reuses the Linux values below 256, so most entries are the identity; the
// table exists so that the mapping is stated (and tested) in one place and
// so that aliases (EWOULDBLOCK, ENOTSUP) and kernel-only values
// (EPIPE, EAFNOSUPPORT, ...) get a deliberate libfabric meaning.
var errnoTable = map[syscall.Errno]provider.Errno{
	unix.EPERM:           provider.EPERM,
	unix.ENOENT:          provider.ENOENT,
	unix.EINTR:           provider.EINTR,
	unix.EIO:             provider.EIO,
	unix.E2BIG:           provider.E2BIG,
	unix.EBADF:           provider.EBADF,
	unix.EAGAIN:          provider.EAGAIN, // == EWOULDBLOCK on Linux
	unix.ENOMEM:          provider.ENOMEM,
	unix.EACCES:          provider.EACCES,
	unix.EFAULT:          provider.EFAULT,
	unix.EBUSY:           provider.EBUSY,
	unix.ENODEV:          provider.ENODEV,
	unix.EINVAL:          provider.EINVAL,
	unix.EMFILE:          provider.EMFILE,
	unix.ENFILE:          provider.EMFILE,
	unix.ENOSPC:          provider.ENOSPC,
	unix.EPIPE:           provider.ESHUTDOWN,
	unix.ENOSYS:          provider.ENOSYS,
	unix.ENOMSG:          provider.ENOMSG,
	unix.ENODATA:         provider.ENODATA,
	unix.EOVERFLOW:       provider.EOVERFLOW,
	unix.EMSGSIZE:        provider.EMSGSIZE,
	unix.ENOPROTOOPT:     provider.ENOPROTOOPT,
	unix.EOPNOTSUPP:      provider.EOPNOTSUPP, // == ENOTSUP on Linux
	unix.EAFNOSUPPORT:    provider.EINVAL,
	unix.EPROTONOSUPPORT: provider.EOPNOTSUPP,
	unix.EADDRINUSE:      provider.EADDRINUSE,
	unix.EADDRNOTAVAIL:   provider.EADDRNOTAVAIL,
	unix.ENETDOWN:        provider.ENETDOWN,
	unix.ENETUNREACH:     provider.ENETUNREACH,
	unix.ENETRESET:       provider.ECONNRESET,
	unix.ECONNABORTED:    provider.ECONNABORTED,
	unix.ECONNRESET:      provider.ECONNRESET,
	unix.ENOBUFS:         provider.ENOBUFS,
	unix.EISCONN:         provider.EISCONN,
	unix.ENOTCONN:        provider.ENOTCONN,
	unix.ESHUTDOWN:       provider.ESHUTDOWN,
	unix.ETIMEDOUT:       provider.ETIMEDOUT,
	unix.ECONNREFUSED:    provider.ECONNREFUSED,
	unix.EHOSTDOWN:       provider.EHOSTDOWN,
	unix.EHOSTUNREACH:    provider.EHOSTUNREACH,
	unix.EALREADY:        provider.EALREADY,
	unix.EINPROGRESS:     provider.EINPROGRESS,
	unix.ECANCELED:       provider.ECANCELED,
	unix.EKEYREJECTED:    provider.EKEYREJECTED,
	unix.ENOTSOCK:        provider.EBADF,
	unix.EDESTADDRREQ:    provider.ENOTCONN,
}

// errnoDense is errnoTable as an array, so the translation on data paths is
// an index, not a map lookup.
var errnoDense = func() (t [256]provider.Errno) {
	for k, v := range errnoTable {
		if k < 256 {
			t[k] = v
		}
	}
	return t
}()

// TranslateErrno returns the libfabric error number for a kernel errno: 0
// for 0, the table's value for known errnos, and provider.EOTHER for
// anything else. It does not allocate.
func TranslateErrno(e syscall.Errno) provider.Errno {
	if e == 0 {
		return 0
	}
	if e < 256 {
		if v := errnoDense[e]; v != 0 {
			return v
		}
	}
	return provider.EOTHER
}
