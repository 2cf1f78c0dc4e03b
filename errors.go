package fabric

import (
	"net"

	"github.com/gofabric/fabric/provider"
)

// Errno is a libfabric error number: the positive value of an FI_E* code
// (the Err* constants). Values below 256 are the Linux errno values
// libfabric reuses (ErrAgain is EAGAIN, 11); values from 256 are
// libfabric's own (ErrAvail 259, ErrTrunc 265 ...). Error returns
// fi_strerror's text. Under errors.Is an Errno below 256 also matches the
// syscall.Errno of the same value. Test errors with errors.Is, never ==:
// control-path calls wrap them in *OpError. Timeout reports ErrTimedOut
// and Temporary ErrAgain (the net.Error conventions); AsError converts an
// Errno to an error without allocating (nil for 0). Calls may also report
// Linux errno values that have no Err constant here (EPERM, EINTR, EBADF,
// EFAULT, E2BIG, EALREADY, EINPROGRESS, EMFILE, ENOBUFS, ENODEV, ENOSPC,
// EOVERFLOW, ENETDOWN, ENETUNREACH, EHOSTDOWN, EHOSTUNREACH, EREMOTEIO):
// match them with errors.Is against the syscall.Errno of that name.
type Errno = provider.Errno

// Sentinel errors, usable with errors.Is. Data-path calls return these
// values unwrapped; control-path calls wrap them in *OpError.
const (
	ErrAgain        = provider.EAGAIN        // FI_EAGAIN: Resource temporarily unavailable
	ErrAvail        = provider.EAVAIL        // FI_EAVAIL: Error available
	ErrTrunc        = provider.ETRUNC        // FI_ETRUNC: Truncation error
	ErrCanceled     = provider.ECANCELED     // FI_ECANCELED: Operation canceled
	ErrOpBadState   = provider.EOPBADSTATE   // FI_EOPBADSTATE: Operation not permitted in current state
	ErrNoCQ         = provider.ENOCQ         // FI_ENOCQ: Missing or unavailable completion queue
	ErrNoEQ         = provider.ENOEQ         // FI_ENOEQ: Missing or unavailable event queue
	ErrNoAV         = provider.ENOAV         // FI_ENOAV: Missing or unavailable address vector
	ErrDomain       = provider.EDOMAIN       // FI_EDOMAIN: Invalid resource domain
	ErrBusy         = provider.EBUSY         // FI_EBUSY: Device or resource busy
	ErrNoData       = provider.ENODATA       // FI_ENODATA: No data available
	ErrOpNotSupp    = provider.EOPNOTSUPP    // FI_EOPNOTSUPP: Operation not supported
	ErrNoSys        = provider.ENOSYS        // FI_ENOSYS: Function not implemented
	ErrBadFlags     = provider.EBADFLAGS     // FI_EBADFLAGS: Flags not supported
	ErrInval        = provider.EINVAL        // FI_EINVAL: Invalid argument
	ErrOverrun      = provider.EOVERRUN      // FI_EOVERRUN: Queue has been overrun
	ErrNoRX         = provider.ENORX         // FI_ENORX: Receiver not ready, no receive buffers available
	ErrTooSmall     = provider.ETOOSMALL     // FI_ETOOSMALL: Provided buffer is too small
	ErrOther        = provider.EOTHER        // FI_EOTHER: Unspecified error
	ErrNoEnt        = provider.ENOENT        // FI_ENOENT: No such file or directory
	ErrNoMsg        = provider.ENOMSG        // FI_ENOMSG: No message of desired type
	ErrNoKey        = provider.ENOKEY        // FI_ENOKEY: Required key not available
	ErrKeyRejected  = provider.EKEYREJECTED  // FI_EKEYREJECTED: Key was rejected by service
	ErrNoProtoOpt   = provider.ENOPROTOOPT   // FI_ENOPROTOOPT: Protocol not available
	ErrMsgSize      = provider.EMSGSIZE      // FI_EMSGSIZE: Message too long
	ErrAccess       = provider.EACCES        // FI_EACCES: Permission denied
	ErrAddrNotAvail = provider.EADDRNOTAVAIL // FI_EADDRNOTAVAIL: Cannot assign requested address
	ErrConnRefused  = provider.ECONNREFUSED  // FI_ECONNREFUSED: Connection refused
	ErrConnReset    = provider.ECONNRESET    // FI_ECONNRESET: Connection reset by peer
	ErrConnAborted  = provider.ECONNABORTED  // FI_ECONNABORTED: Software caused connection abort
	ErrTimedOut     = provider.ETIMEDOUT     // FI_ETIMEDOUT: Connection timed out
	ErrAddrInUse    = provider.EADDRINUSE    // FI_EADDRINUSE: Address already in use
	ErrNotConn      = provider.ENOTCONN      // FI_ENOTCONN: Transport endpoint is not connected
	ErrIsConn       = provider.EISCONN       // FI_EISCONN: Transport endpoint is already connected
	ErrShutdown     = provider.ESHUTDOWN     // FI_ESHUTDOWN: Cannot send after transport endpoint shutdown
	ErrIO           = provider.EIO           // FI_EIO: Input/output error
	ErrNoMem        = provider.ENOMEM        // FI_ENOMEM: Cannot allocate memory
	ErrCRC          = provider.ECRC          // FI_ECRC: CRC error
)

// StrError returns fi_strerror's text for errnum (positive or negative).
func StrError(errnum int) string { return provider.StrError(errnum) }

// ErrClosed is returned by any use of a closed object, and by a second
// Close. It matches net.ErrClosed under errors.Is.
var ErrClosed error = errClosed{}

type errClosed struct{}

func (errClosed) Error() string { return "use of closed fabric object" }

func (errClosed) Is(target error) bool { return target == net.ErrClosed }

// OpError is the error of a control-path call: the libfabric call that
// failed, the provider, and the cause (usually an Errno).
type OpError struct {
	Op       string // libfabric call name, e.g. "fi_ep_bind"
	Provider string
	Err      error
}

// Error returns "op (provider): cause".
func (e *OpError) Error() string {
	s := e.Op
	if e.Provider != "" {
		s += " (" + e.Provider + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

func opErr(op, prov string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*OpError); ok {
		return err
	}
	return &OpError{Op: op, Provider: prov, Err: err}
}
