package sys

import (
	"strconv"
	"strings"
)

// RemoteIOV is one range of another process's address space, as
// process_vm_readv(2) and process_vm_writev(2) take it (its layout is
// struct iovec's on 64-bit Linux). Build one for this process's memory with
// IOVOf and send it to the peer, which uses it to reach that memory.
type RemoteIOV struct {
	Base uint64 // address in the remote process
	Len  uint64 // length in bytes
}

// IOVMax is the most entries ProcessVMReadv and ProcessVMWritev take in
// either list (the kernel's IOV_MAX).
const IOVMax = 1024

// iovStack is the list length the CMA calls convert on the stack; longer
// lists allocate.
const iovStack = 16

// cmaProbe decides CMA availability from FI_SHM_DISABLE_CMA's value, the
// yama ptrace_scope file (content and read error: missing means no yama)
// and the result of a process_vm_readv of this process's own memory.
func cmaProbe(disable string, scope string, scopeErr error, scopeMissing bool, self error) (bool, string) {
	if v, ok := parseBool(disable); ok && v {
		return false, "disabled by FI_SHM_DISABLE_CMA"
	}
	if self != nil {
		return false, "process_vm_readv fails on own memory (seccomp or kernel): " + self.Error()
	}
	if scopeMissing {
		return true, "available (process_vm_readv works, no yama ptrace_scope)"
	}
	if scopeErr != nil {
		return true, "available (process_vm_readv works; yama ptrace_scope unreadable: " + scopeErr.Error() +
			"; falls back per peer on EPERM)"
	}
	n, err := strconv.Atoi(strings.TrimSpace(scope))
	switch {
	case err != nil:
		return true, "available (process_vm_readv works; yama ptrace_scope " + strconv.Quote(scope) +
			" not understood; falls back per peer on EPERM)"
	case n == 0:
		return true, "available (process_vm_readv works, yama ptrace_scope=0)"
	case n == 1:
		return true, "restricted (yama ptrace_scope=1: only descendants can be read; falls back per peer on EPERM)"
	default:
		return false, "unavailable (yama ptrace_scope=" + strconv.Itoa(n) + ": no attach between peers)"
	}
}

// parseBool reads a boolean environment value as libfabric's
// fi_param_get_bool does (1/on/yes/true, 0/off/no/false, any case);
// ok is false for anything else.
func parseBool(s string) (v, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "on", "yes", "true":
		return true, true
	case "0", "off", "no", "false":
		return false, true
	}
	return false, false
}
