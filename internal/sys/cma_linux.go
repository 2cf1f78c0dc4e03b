package sys

import (
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

// remoteIsIovec: RemoteIOV has struct iovec's layout (64-bit pointers), so a
// []RemoteIOV is passed to the kernel as it is.
const remoteIsIovec = unsafe.Sizeof(uintptr(0)) == 8

// ProcessVMReadv copies from the ranges remote of process pid into the
// local buffers (process_vm_readv(2), cross-memory attach) and returns the
// bytes moved. A partial transfer (a remote range that is only partly
// mapped) returns the count moved so far with a nil error; the caller
// continues or gives up. Empty lists move nothing.
//
// Errors: FI_EPERM (ptrace access denied: yama, another uid, seccomp),
// FI_ENOSYS (no such system call), FI_ECONNRESET (no process pid: ESRCH),
// FI_EFAULT (the first remote range is not mapped, or a local buffer is
// bad), FI_EINVAL (pid <= 0, more than IOVMax entries, or a range whose
// address does not fit this platform), FI_ENOMEM.
//
// Lists up to 16 entries are converted on the stack: no allocation. It
// enters the kernel through syscall.Syscall6 (a large copy may take tens of
// µs; the runtime hands the thread's P on meanwhile).
func ProcessVMReadv(pid int, local [][]byte, remote []RemoteIOV) (int, error) {
	return processVM(unix.SYS_PROCESS_VM_READV, pid, local, remote)
}

// ProcessVMWritev copies the local buffers into the ranges remote of
// process pid (process_vm_writev(2)) and returns the bytes moved, with the
// same partial-transfer rule and errors as ProcessVMReadv.
func ProcessVMWritev(pid int, local [][]byte, remote []RemoteIOV) (int, error) {
	return processVM(unix.SYS_PROCESS_VM_WRITEV, pid, local, remote)
}

func cmaErrno(e syscall.Errno) error {
	if e == unix.ESRCH {
		return provider.ECONNRESET
	}
	return TranslateErrno(e).AsError()
}

func processVM(trap uintptr, pid int, local [][]byte, remote []RemoteIOV) (int, error) {
	if pid <= 0 || len(local) > IOVMax || len(remote) > IOVMax {
		return 0, provider.EINVAL
	}
	if len(local) == 0 || len(remote) == 0 {
		return 0, nil
	}
	var lstack [iovStack]unix.Iovec
	liov := lstack[:0]
	if len(local) > iovStack {
		liov = make([]unix.Iovec, 0, len(local))
	}
	for _, b := range local {
		var v unix.Iovec
		if len(b) > 0 {
			v.Base = &b[0]
			v.SetLen(len(b))
		}
		liov = append(liov, v)
	}
	var rp unsafe.Pointer
	if remoteIsIovec {
		rp = unsafe.Pointer(&remote[0])
	} else {
		var rstack [iovStack]remoteIovec32
		riov := rstack[:0]
		if len(remote) > iovStack {
			riov = make([]remoteIovec32, 0, len(remote))
		}
		for _, r := range remote {
			if r.Base > uint64(^uintptr(0)) || r.Len > uint64(^uintptr(0)) {
				return 0, provider.EINVAL
			}
			riov = append(riov, remoteIovec32{uintptr(r.Base), uintptr(r.Len)})
		}
		rp = unsafe.Pointer(&riov[0])
	}
	n, _, e := syscall.Syscall6(trap, uintptr(pid), uintptr(unsafe.Pointer(&liov[0])), uintptr(len(liov)),
		uintptr(rp), uintptr(len(remote)), 0)
	runtime.KeepAlive(local)
	runtime.KeepAlive(remote)
	runtime.KeepAlive(liov)
	if e != 0 {
		return 0, cmaErrno(e)
	}
	return int(n), nil
}

// remoteIovec32 is struct iovec where pointers are 32 bits.
type remoteIovec32 struct{ base, len uintptr }

var cma struct {
	once sync.Once
	ok   bool
	why  string
}

// CMAAvailable reports, once per process (the first call probes, later
// calls return the same answer), whether cross-memory attach
// (process_vm_readv/writev between peer processes) may be used, and why:
//
//   - FI_SHM_DISABLE_CMA set true (1, yes, on, true) turns it off;
//   - a process_vm_readv of this process's own memory must work (a seccomp
//     filter, as in default container profiles, or an old kernel fails it);
//   - yama's /proc/sys/kernel/yama/ptrace_scope: absent or 0, available; 1,
//     available but "restricted" (only descendants can be read, so most
//     peers will answer EPERM); 2 or 3, unavailable.
//
// Peers of another uid or in another user namespace still fail with
// FI_EPERM: the provider falls back to segments per peer in that case.
func CMAAvailable() (bool, string) {
	cma.once.Do(func() {
		scope, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
		missing := err != nil && os.IsNotExist(err)
		if missing {
			err = nil
		}
		cma.ok, cma.why = cmaProbe(os.Getenv("FI_SHM_DISABLE_CMA"), string(scope), err, missing, selfRead())
	})
	return cma.ok, cma.why
}

// selfRead copies 8 bytes of this process's memory with process_vm_readv.
func selfRead() error {
	src := []byte("gofabric")
	dst := make([]byte, len(src))
	n, err := ProcessVMReadv(os.Getpid(), [][]byte{dst}, []RemoteIOV{IOVOf(src)})
	if err != nil {
		return err
	}
	if n != len(src) || string(dst) != string(src) {
		return provider.EIO
	}
	return nil
}
