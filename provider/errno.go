package provider

import "syscall"

// Errno is a libfabric error number: the positive value of an FI_E* code.
// Values below 256 are the Linux errno values libfabric reuses (FI_EAGAIN =
// EAGAIN); values from 256 are libfabric's own. Error returns fi_strerror's
// text. An Errno below 256 also matches the syscall.Errno of the same value
// under errors.Is.
type Errno int32

// libfabric 1.17 error numbers (rdma/fi_errno.h).
const (
	EPERM         Errno = 1
	ENOENT        Errno = 2
	EINTR         Errno = 4
	EIO           Errno = 5
	E2BIG         Errno = 7
	EBADF         Errno = 9
	EAGAIN        Errno = 11
	ENOMEM        Errno = 12
	EACCES        Errno = 13
	EFAULT        Errno = 14
	EBUSY         Errno = 16
	ENODEV        Errno = 19
	EINVAL        Errno = 22
	EMFILE        Errno = 24
	ENOSPC        Errno = 28
	ENOSYS        Errno = 38
	ENOMSG        Errno = 42
	ENODATA       Errno = 61
	EOVERFLOW     Errno = 75
	EMSGSIZE      Errno = 90
	ENOPROTOOPT   Errno = 92
	EOPNOTSUPP    Errno = 95
	EADDRINUSE    Errno = 98
	EADDRNOTAVAIL Errno = 99
	ENETDOWN      Errno = 100
	ENETUNREACH   Errno = 101
	ECONNABORTED  Errno = 103
	ECONNRESET    Errno = 104
	ENOBUFS       Errno = 105
	EISCONN       Errno = 106
	ENOTCONN      Errno = 107
	ESHUTDOWN     Errno = 108
	ETIMEDOUT     Errno = 110
	ECONNREFUSED  Errno = 111
	EHOSTDOWN     Errno = 112
	EHOSTUNREACH  Errno = 113
	EALREADY      Errno = 114
	EINPROGRESS   Errno = 115
	ECANCELED     Errno = 125
	EKEYREJECTED  Errno = 129

	EOTHER      Errno = 256
	ETOOSMALL   Errno = 257
	EOPBADSTATE Errno = 258
	EAVAIL      Errno = 259
	EBADFLAGS   Errno = 260
	ENOEQ       Errno = 261
	EDOMAIN     Errno = 262
	ENOCQ       Errno = 263
	ECRC        Errno = 264
	ETRUNC      Errno = 265
	ENOKEY      Errno = 266
	ENOAV       Errno = 267
	EOVERRUN    Errno = 268
	ENORX       Errno = 269

	// ErrnoMax is one past the largest libfabric error number (FI_ERRNO_MAX).
	ErrnoMax Errno = 270
)

var fiErrText = [...]string{
	EOTHER - 256:      "Unspecified error",
	ETOOSMALL - 256:   "Provided buffer is too small",
	EOPBADSTATE - 256: "Operation not permitted in current state",
	EAVAIL - 256:      "Error available",
	EBADFLAGS - 256:   "Flags not supported",
	ENOEQ - 256:       "Missing or unavailable event queue",
	EDOMAIN - 256:     "Invalid resource domain",
	ENOCQ - 256:       "Missing or unavailable completion queue",
	ECRC - 256:        "CRC error",
	ETRUNC - 256:      "Truncation error",
	ENOKEY - 256:      "Required key not available",
	ENOAV - 256:       "Missing or unavailable address vector",
	EOVERRUN - 256:    "Queue has been overrun",
	ENORX - 256:       "Receiver not ready, no receive buffers available",
}

// glibc strerror texts for the errnos libfabric commonly returns.
var sysErrText = map[Errno]string{
	0:             "Success",
	EPERM:         "Operation not permitted",
	ENOENT:        "No such file or directory",
	EINTR:         "Interrupted system call",
	EIO:           "Input/output error",
	E2BIG:         "Argument list too long",
	EBADF:         "Bad file descriptor",
	EAGAIN:        "Resource temporarily unavailable",
	ENOMEM:        "Cannot allocate memory",
	EACCES:        "Permission denied",
	EFAULT:        "Bad address",
	EBUSY:         "Device or resource busy",
	ENODEV:        "No such device",
	EINVAL:        "Invalid argument",
	EMFILE:        "Too many open files",
	ENOSPC:        "No space left on device",
	ENOSYS:        "Function not implemented",
	ENOMSG:        "No message of desired type",
	ENODATA:       "No data available",
	EOVERFLOW:     "Value too large for defined data type",
	EMSGSIZE:      "Message too long",
	ENOPROTOOPT:   "Protocol not available",
	EOPNOTSUPP:    "Operation not supported",
	EADDRINUSE:    "Address already in use",
	EADDRNOTAVAIL: "Cannot assign requested address",
	ENETDOWN:      "Network is down",
	ENETUNREACH:   "Network is unreachable",
	ECONNABORTED:  "Software caused connection abort",
	ECONNRESET:    "Connection reset by peer",
	ENOBUFS:       "No buffer space available",
	EISCONN:       "Transport endpoint is already connected",
	ENOTCONN:      "Transport endpoint is not connected",
	ESHUTDOWN:     "Cannot send after transport endpoint shutdown",
	ETIMEDOUT:     "Connection timed out",
	ECONNREFUSED:  "Connection refused",
	EHOSTDOWN:     "Host is down",
	EHOSTUNREACH:  "No route to host",
	EALREADY:      "Operation already in progress",
	EINPROGRESS:   "Operation now in progress",
	ECANCELED:     "Operation canceled",
	EKEYREJECTED:  "Key was rejected by service",
}

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
	if s, ok := sysErrText[e]; ok {
		return s
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
