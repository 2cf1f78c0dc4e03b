// Package sys is the only package of the module that imports
// golang.org/x/sys/unix and unsafe (besides internal/shmring, reserved for
// the shm provider's shared-memory rings and not written yet). It wraps the
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
//
// Non-Linux builds compile stubs that return provider.ENOSYS.
package sys
