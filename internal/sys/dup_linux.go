package sys

import "golang.org/x/sys/unix"

// Dup returns a Conn on a duplicate of c's descriptor: the same socket
// (same bound address, same receive queue), closed independently of c.
// Scalable endpoints give their contexts duplicates of the sockets they
// own.
func (c *Conn) Dup() (*Conn, error) {
	if !c.acquire() {
		return nil, ErrClosed
	}
	defer c.release()
	nfd, err := unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, errnoOf(err)
	}
	return newConn(nfd, c.family), nil
}
