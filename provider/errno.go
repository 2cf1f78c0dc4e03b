package provider

import "syscall"

// Errno is a libfabric error number: the positive value of an FI_E* code.
// Values below 256 are the Linux errno values libfabric reuses (FI_EAGAIN =
// EAGAIN); values from 256 are libfabric's own. Error returns fi_strerror's
// text. An Errno below 256 also matches the syscall.Errno of the same value
// under errors.Is.
type Errno int32

// libfabric 1.17 error numbers (rdma/fi_errno.h). The line comment is the
// text Error returns: the C library's strerror text below 256 (fi_strerror
// defers to strerror there), fi_strerror's own text from 256.
const (
	EPERM         Errno = 1   // Operation not permitted
	ENOENT        Errno = 2   // No such file or directory
	EINTR         Errno = 4   // Interrupted system call
	EIO           Errno = 5   // Input/output error
	E2BIG         Errno = 7   // Argument list too long
	EBADF         Errno = 9   // Bad file descriptor
	EAGAIN        Errno = 11  // Resource temporarily unavailable
	ENOMEM        Errno = 12  // Cannot allocate memory
	EACCES        Errno = 13  // Permission denied
	EFAULT        Errno = 14  // Bad address
	EBUSY         Errno = 16  // Device or resource busy
	ENODEV        Errno = 19  // No such device
	EINVAL        Errno = 22  // Invalid argument
	EMFILE        Errno = 24  // Too many open files
	ENOSPC        Errno = 28  // No space left on device
	ENOSYS        Errno = 38  // Function not implemented
	ENOMSG        Errno = 42  // No message of desired type
	ENODATA       Errno = 61  // No data available
	EOVERFLOW     Errno = 75  // Value too large for defined data type
	EMSGSIZE      Errno = 90  // Message too long
	ENOPROTOOPT   Errno = 92  // Protocol not available
	EOPNOTSUPP    Errno = 95  // Operation not supported
	EADDRINUSE    Errno = 98  // Address already in use
	EADDRNOTAVAIL Errno = 99  // Cannot assign requested address
	ENETDOWN      Errno = 100 // Network is down
	ENETUNREACH   Errno = 101 // Network is unreachable
	ECONNABORTED  Errno = 103 // Software caused connection abort
	ECONNRESET    Errno = 104 // Connection reset by peer
	ENOBUFS       Errno = 105 // No buffer space available
	EISCONN       Errno = 106 // Transport endpoint is already connected
	ENOTCONN      Errno = 107 // Transport endpoint is not connected
	ESHUTDOWN     Errno = 108 // Cannot send after transport endpoint shutdown
	ETIMEDOUT     Errno = 110 // Connection timed out
	ECONNREFUSED  Errno = 111 // Connection refused
	EHOSTDOWN     Errno = 112 // Host is down
	EHOSTUNREACH  Errno = 113 // No route to host
	EALREADY      Errno = 114 // Operation already in progress
	EINPROGRESS   Errno = 115 // Operation now in progress
	EREMOTEIO     Errno = 121 // Remote I/O error
	ECANCELED     Errno = 125 // Operation canceled
	EKEYREJECTED  Errno = 129 // Key was rejected by service

	EOTHER      Errno = 256 // Unspecified error
	ETOOSMALL   Errno = 257 // Provided buffer is too small
	EOPBADSTATE Errno = 258 // Operation not permitted in current state
	EAVAIL      Errno = 259 // Error available
	EBADFLAGS   Errno = 260 // Flags not supported
	ENOEQ       Errno = 261 // Missing or unavailable event queue
	EDOMAIN     Errno = 262 // Invalid resource domain
	ENOCQ       Errno = 263 // Missing or unavailable completion queue
	ECRC        Errno = 264 // CRC error
	ETRUNC      Errno = 265 // Truncation error
	ENOKEY      Errno = 266 // Required key not available
	ENOAV       Errno = 267 // Missing or unavailable address vector
	EOVERRUN    Errno = 268 // Queue has been overrun
	ENORX       Errno = 269 // Receiver not ready, no receive buffers available

	// ErrnoMax is one past the largest libfabric error number (FI_ERRNO_MAX).
	ErrnoMax Errno = 270
)

// StrError returns fi_strerror's text for a libfabric error number. Negative
// numbers (the C return convention) are accepted.
func StrError(errnum int) string {
	if errnum < 0 {
		errnum = -errnum
	}
	e := Errno(errnum)
	if e >= 256 {
		if e < ErrnoMax {
			return fiErrText[e-256]
		}
		return "Unknown error " + itoa(errnum)
	}
	if e == 0 {
		return "Success"
	}
	if int(e) < len(sysErrText) && sysErrText[e] != "" {
		return sysErrText[e]
	}
	s := syscall.Errno(e).Error()
	if s == "" || (len(s) > 6 && s[:6] == "errno ") {
		return "Unknown error " + itoa(errnum)
	}
	if s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Error returns fi_strerror's text.
func (e Errno) Error() string { return StrError(int(e)) }

// Is reports whether e matches target: the same Errno, or (below 256) the
// syscall.Errno of the same value.
func (e Errno) Is(target error) bool {
	switch t := target.(type) {
	case Errno:
		return t == e
	case syscall.Errno:
		return e < 256 && int(t) == int(e)
	}
	return false
}

// Timeout reports whether e is a timeout (FI_ETIMEDOUT).
func (e Errno) Timeout() bool { return e == ETIMEDOUT }

// Temporary reports whether retrying may succeed (FI_EAGAIN).
func (e Errno) Temporary() bool { return e == EAGAIN }

var errnoErrs = func() (t [ErrnoMax]error) {
	for i := range t {
		t[i] = Errno(i)
	}
	return t
}()

// AsError converts an Errno to an error value without allocating: 0 is nil,
// other values come from a table of pre-boxed errors.
func (e Errno) AsError() error {
	if e == 0 {
		return nil
	}
	if e > 0 && e < ErrnoMax {
		return errnoErrs[e]
	}
	return e
}

// ErrnoOf extracts the libfabric error number from err: an Errno, a
// syscall.Errno, or anything wrapping one. Unknown errors give EOTHER;
// nil gives 0.
func ErrnoOf(err error) Errno {
	if err == nil {
		return 0
	}
	for e := err; e != nil; {
		switch v := e.(type) {
		case Errno:
			return v
		case syscall.Errno:
			return Errno(v)
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return EOTHER
}
