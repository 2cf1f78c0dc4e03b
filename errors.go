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
// control-path calls wrap them in *OpError.
type Errno = provider.Errno

// Sentinel errors, usable with errors.Is. Data-path calls return these
// values unwrapped; control-path calls wrap them in *OpError.
const (
	ErrAgain        = provider.EAGAIN
	ErrAvail        = provider.EAVAIL
	ErrTrunc        = provider.ETRUNC
	ErrCanceled     = provider.ECANCELED
	ErrOpBadState   = provider.EOPBADSTATE
	ErrNoCQ         = provider.ENOCQ
	ErrNoEQ         = provider.ENOEQ
	ErrNoAV         = provider.ENOAV
	ErrDomain       = provider.EDOMAIN
	ErrBusy         = provider.EBUSY
	ErrNoData       = provider.ENODATA
	ErrOpNotSupp    = provider.EOPNOTSUPP
	ErrNoSys        = provider.ENOSYS
	ErrBadFlags     = provider.EBADFLAGS
	ErrInval        = provider.EINVAL
	ErrOverrun      = provider.EOVERRUN
	ErrNoRX         = provider.ENORX
	ErrTooSmall     = provider.ETOOSMALL
	ErrOther        = provider.EOTHER
	ErrNoEnt        = provider.ENOENT
	ErrNoMsg        = provider.ENOMSG
	ErrNoKey        = provider.ENOKEY
	ErrKeyRejected  = provider.EKEYREJECTED
	ErrNoProtoOpt   = provider.ENOPROTOOPT
	ErrMsgSize      = provider.EMSGSIZE
	ErrAccess       = provider.EACCES
	ErrAddrNotAvail = provider.EADDRNOTAVAIL
	ErrConnRefused  = provider.ECONNREFUSED
	ErrConnReset    = provider.ECONNRESET
	ErrConnAborted  = provider.ECONNABORTED
	ErrTimedOut     = provider.ETIMEDOUT
	ErrAddrInUse    = provider.EADDRINUSE
	ErrNotConn      = provider.ENOTCONN
	ErrIsConn       = provider.EISCONN
	ErrShutdown     = provider.ESHUTDOWN
	ErrIO           = provider.EIO
	ErrNoMem        = provider.ENOMEM
	ErrCRC          = provider.ECRC
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
