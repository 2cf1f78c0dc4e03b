//go:build !linux

package sys

import "github.com/gofabric/fabric/provider"

// EventFDOpen is not supported on this platform.
func EventFDOpen() (int, error) { return -1, provider.ENOSYS }

// EventFDSignal is not supported on this platform.
func EventFDSignal(fd int) error { return provider.ENOSYS }

// EventFDDrain is not supported on this platform.
func EventFDDrain(fd int) error { return provider.ENOSYS }

// EventFDClose is not supported on this platform.
func EventFDClose(fd int) error { return provider.ENOSYS }

// EpollCreate is not supported on this platform.
func EpollCreate() (int, error) { return -1, provider.ENOSYS }

// EpollAdd is not supported on this platform.
func EpollAdd(epfd, fd int) error { return provider.ENOSYS }

// EpollDel is not supported on this platform.
func EpollDel(epfd, fd int) error { return provider.ENOSYS }

// EpollWait is not supported on this platform.
func EpollWait(epfd int, timeoutMs int) (int, error) { return 0, provider.ENOSYS }

// EpollReady is not supported on this platform.
func EpollReady(epfd int, fds []int32) (int, error) { return 0, provider.ENOSYS }

// EpollClose is not supported on this platform.
func EpollClose(epfd int) error { return provider.ENOSYS }

// PollReadable is not supported on this platform.
func PollReadable(fd int, timeoutMs int) (bool, error) { return false, provider.ENOSYS }
