// Package sys is the only package of the module that imports
// golang.org/x/sys/unix and unsafe (besides internal/shmring, the shm
// provider's shared-memory rings). It wraps the
// few system interfaces the providers need, with no allocation and no
// blocking on the hot path:
//
//   - Conn: a socket descriptor used with raw, non-blocking system calls
//     (sendto, sendmsg, recvfrom, recvmsg, read, write, writev) through
//     unix.RawSyscall, which costs 1.5-3 µs less per hop than the
//     syscall.Syscall path because the descriptor is O_NONBLOCK and never
//     blocks. Addresses are raw sockaddr bytes in libfabric's layout
//     (sockaddr_in/sockaddr_in6 as the kernel stores them on little-endian
//     Linux: family little-endian, port and address big-endian), so no
//     unix.Sockaddr interface value is built per call. Waiting is done in
//     the Go runtime's network poller (WaitReadable, WaitWritable), never
//     in a private epoll loop or a sleep loop.
//   - TranslateErrno: the one table that maps kernel errno values to
//     libfabric error numbers (provider.Errno).
//   - ListAddrs: the local interface addresses in the order libfabric's
//     ofi_get_list_of_addr produces them (FI_<PROV>_IFACE filtering,
//     loopback last).
//   - Shared memory for the shm provider (shm_linux.go, futex_linux.go,
//     cma_linux.go): ShmFile, region files of ShmDir (/dev/shm) created mode
//     0600 with an exclusive flock held for the owner's lifetime (the
//     owner's liveness: OwnerAlive, CleanStale), opened only by the same
//     euid; FutexWait/FutexWake on shared (not FUTEX_PRIVATE) words of such
//     mappings, so that a process sleeps until another wakes it; and
//     cross-memory attach (ProcessVMReadv, ProcessVMWritev with RemoteIOV
//     ranges from IOVOf, CMAAvailable's once-per-process probe).
//
// Non-Linux builds compile stubs that return provider.ENOSYS.
package sys
