package sys

import (
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

// shmErrno translates the errors of the shm file calls: EEXIST (the name is
// taken) is FI_EADDRINUSE, a symbolic link (ELOOP with O_NOFOLLOW), a
// directory (EISDIR) or a device without a reader (ENXIO) is FI_EINVAL,
// the rest as TranslateErrno.
func shmErrno(err error) error {
	if err == nil {
		return nil
	}
	e, ok := err.(syscall.Errno)
	if !ok {
		return provider.EOTHER
	}
	switch e {
	case unix.EEXIST:
		return provider.EADDRINUSE
	case unix.ELOOP, unix.EISDIR, unix.ENXIO:
		return provider.EINVAL
	}
	return TranslateErrno(e).AsError()
}

// CreateShm creates the region file ShmDir/name of size bytes, mode 0600,
// takes an exclusive flock on it (held until Close: the owner's liveness)
// and maps it shared. The file appears under its name already sized and
// locked: it is made as an unnamed O_TMPFILE and linked into place, so
// CleanStale in another process never sees it half made (where O_TMPFILE
// is unsupported it falls back to O_CREAT|O_EXCL, locking at once). The
// file's memory is allocated at once (fallocate), so a full tmpfs fails
// here with FI_ENOSPC instead of faulting later.
//
// Errors: FI_EINVAL for a bad name (empty, with '/', "." or "..") or a
// size <= 0; FI_EADDRINUSE when the name exists; FI_ENOSPC, FI_EACCES ...
// from the kernel.
func CreateShm(name string, size int) (*ShmFile, error) {
	if !validShmName(name) || size <= 0 {
		return nil, provider.EINVAL
	}
	path := shmPath(name)
	fd, err := -1, error(errNoTmpfile)
	if !forceExcl {
		fd, err = createTmp(path, size)
	}
	if err != nil {
		if err != errNoTmpfile {
			return nil, err
		}
		if fd, err = createExcl(path, size); err != nil {
			return nil, err
		}
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Unlink(path)
		unix.Close(fd)
		return nil, shmErrno(err)
	}
	return &ShmFile{name: name, fd: fd, mem: mem, owner: true}, nil
}

// forceExcl makes CreateShm take the O_CREAT|O_EXCL path (tests).
var forceExcl bool

// errNoTmpfile says that O_TMPFILE or the /proc link is unavailable.
var errNoTmpfile = provider.EOPNOTSUPP

// sizeAndLock makes a new descriptor mode 0600, locks it exclusively and
// gives it size bytes of allocated memory.
func sizeAndLock(fd, size int) error {
	if err := unix.Fchmod(fd, ShmMode); err != nil {
		return err
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return err
	}
	for {
		err := unix.Fallocate(fd, 0, 0, int64(size))
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EOPNOTSUPP:
			return unix.Ftruncate(fd, int64(size))
		}
		return err
	}
}

// createTmp makes the file with O_TMPFILE in ShmDir, locks and sizes it and
// links it at path (linkat fails with EEXIST if the name is taken).
func createTmp(path string, size int) (int, error) {
	fd, err := unix.Open(ShmDir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, ShmMode)
	if err != nil {
		switch err {
		case unix.EOPNOTSUPP, unix.EISDIR, unix.EINVAL:
			return -1, errNoTmpfile
		}
		return -1, shmErrno(err)
	}
	if err := sizeAndLock(fd, size); err != nil {
		unix.Close(fd)
		return -1, shmErrno(err)
	}
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		unix.Close(fd)
		if err == unix.ENOENT { // no /proc
			return -1, errNoTmpfile
		}
		return -1, shmErrno(err)
	}
	return fd, nil
}

// createExcl is the fallback: O_CREAT|O_EXCL, then lock and size at once.
func createExcl(path string, size int) (int, error) {
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, ShmMode)
	if err != nil {
		return -1, shmErrno(err)
	}
	if err := sizeAndLock(fd, size); err != nil {
		unix.Unlink(path)
		unix.Close(fd)
		return -1, shmErrno(err)
	}
	return fd, nil
}

// OpenShm attaches to the region file ShmDir/name that another process (or
// this one) created, mapping all of it shared read-write. It refuses, with
// FI_EACCES, a file not owned by the effective uid (root could otherwise
// open another user's region), and with FI_EINVAL a name that is not a
// plain name, a symbolic link, anything but a regular file, or an empty
// file. A missing file is FI_ENOENT.
//
// The mapping covers the file's size when opened: a process of the same uid
// that truncates the file afterwards can make accesses beyond the new end
// fault (SIGBUS). Same-uid processes can also ptrace each other, so this is
// not a boundary the library defends.
func OpenShm(name string) (*ShmFile, error) {
	if !validShmName(name) {
		return nil, provider.EINVAL
	}
	fd, err := unix.Open(shmPath(name), unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, shmErrno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, shmErrno(err)
	}
	switch {
	case st.Uid != uint32(unix.Geteuid()):
		err = provider.EACCES
	case st.Mode&unix.S_IFMT != unix.S_IFREG, st.Size <= 0, uint64(st.Size) > math.MaxInt:
		err = provider.EINVAL
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	mem, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, shmErrno(err)
	}
	return &ShmFile{name: name, fd: fd, mem: mem}, nil
}

// Close unmaps the region and closes the descriptor, which for the owner
// releases the liveness lock (so close after Unlink, or CleanStale of
// another process will remove the file). Closing twice is a no-op.
func (f *ShmFile) Close() error {
	if f == nil || f.fd < 0 {
		return nil
	}
	var err error
	if f.mem != nil {
		err = unix.Munmap(f.mem)
		f.mem = nil
	}
	if e := unix.Close(f.fd); err == nil {
		err = e
	}
	f.fd = -1
	return shmErrno(err)
}

// Unlink removes the file's name from ShmDir; the mapping stays valid until
// Close. An owner unlinks before it closes. A name already gone is
// FI_ENOENT.
func (f *ShmFile) Unlink() error {
	if f == nil || !validShmName(f.name) {
		return provider.EINVAL
	}
	return shmErrno(unix.Unlink(shmPath(f.name)))
}

// OwnerAlive reports whether the owner of ShmDir/name still holds its
// liveness lock: it opens the file and tries a shared lock without
// blocking; EWOULDBLOCK means the owner's exclusive lock is held. A missing
// file reports false with no error (an owner removes its file only at
// close). It costs an open, a flock and a close (a few µs): call it on a
// timer, not per operation.
func OwnerAlive(name string) (bool, error) {
	if !validShmName(name) {
		return false, provider.EINVAL
	}
	fd, err := unix.Open(shmPath(name), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err == unix.ENOENT {
		return false, nil
	}
	if err != nil {
		return false, shmErrno(err)
	}
	defer unix.Close(fd)
	switch err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); err {
	case unix.EWOULDBLOCK:
		return true, nil
	case nil:
		return false, nil
	default:
		return false, shmErrno(err)
	}
}

// CleanStale removes the files ShmDir/<prefix>* of the effective uid whose
// owner is dead (no process holds the liveness lock) and returns how many it
// removed. Files of other users, files that are not regular, live files and
// empty files younger than 10 s (possibly being created by the O_CREAT
// fallback) are left alone. The prefix must be a non-empty plain name
// (FI_EINVAL otherwise). It returns the first unexpected error after trying
// every file; a missing ShmDir is not an error.
func CleanStale(prefix string) (int, error) {
	if !validShmName(prefix) {
		return 0, provider.EINVAL
	}
	ents, err := os.ReadDir(ShmDir)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		if pe, ok := err.(*os.PathError); ok {
			return 0, shmErrno(pe.Err)
		}
		return 0, provider.EOTHER
	}
	removed := 0
	var first error
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		ok, err := removeIfStale(e.Name())
		if ok {
			removed++
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return removed, first
}

// RemoveStale removes the one file ShmDir/name if it is stale, as
// CleanStale would (a regular file of the effective uid whose owner holds
// no lock), and reports whether it did. A missing file, a live owner, a
// file of another user or not regular are false with no error. The shm
// provider calls it when it finds a peer dead, so the region of a killed
// process is reclaimed at once.
func RemoveStale(name string) (bool, error) {
	if !validShmName(name) {
		return false, provider.EINVAL
	}
	return removeIfStale(name)
}

// removeIfStale unlinks ShmDir/name if it is a regular file of our euid that
// no owner locks, holding a shared lock on it meanwhile and checking that
// the name still names the file it locked.
func removeIfStale(name string) (bool, error) {
	path := shmPath(name)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	switch err {
	case nil:
	case unix.ENOENT, unix.ELOOP, unix.EACCES, unix.ENXIO:
		return false, nil // gone, a link, or not ours
	default:
		return false, shmErrno(err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, shmErrno(err)
	}
	if st.Uid != uint32(unix.Geteuid()) || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, nil
	}
	switch err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); err {
	case nil:
	case unix.EWOULDBLOCK:
		return false, nil // alive
	default:
		return false, shmErrno(err)
	}
	if st.Size == 0 {
		var now unix.Timespec
		if unix.ClockGettime(unix.CLOCK_REALTIME, &now) == nil && int64(now.Sec)-int64(st.Ctim.Sec) < staleGraceSec {
			return false, nil
		}
	}
	var cur unix.Stat_t
	if err := unix.Lstat(path, &cur); err != nil || cur.Ino != st.Ino || cur.Dev != st.Dev {
		return false, nil // replaced meanwhile
	}
	switch err := unix.Unlink(path); err {
	case nil:
		return true, nil
	case unix.ENOENT:
		return false, nil // another cleaner was first
	default:
		return false, shmErrno(err)
	}
}
