package sys

import "unsafe"

// IOVOf returns the address and length of b in this process, to be sent to
// a peer that reads or writes it with process_vm_readv/writev. The Go heap
// does not move, but b must stay referenced (and, if it could live on a
// goroutine stack, escape to the heap) for as long as the peer may use the
// address. An empty b gives the zero RemoteIOV.
func IOVOf(b []byte) RemoteIOV {
	if len(b) == 0 {
		return RemoteIOV{}
	}
	return RemoteIOV{Base: uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), Len: uint64(len(b))}
}
