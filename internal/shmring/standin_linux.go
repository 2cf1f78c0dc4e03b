package shmring

// A stand-in for internal/sys's shared-memory files (helper shmsys), used
// until they land: the smallest create/open/map/lock the provider needs.
// It is replaced by sys.CreateShm/OpenShm and then deleted.

import (
	"os"
	"syscall"
)

// StandinDir is where region files are created.
var StandinDir = "/dev/shm"

// StandinFile is a mapped region file.
type StandinFile struct {
	fd   int
	b    []byte
	name string
}

// StandinCreate creates name (O_EXCL, mode 0600) of size bytes, locks it
// (flock LOCK_EX, held while open: the owner is alive) and maps it.
func StandinCreate(name string, size int) (*StandinFile, error) {
	path := StandinDir + "/" + name
	fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_EXCL|syscall.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*StandinFile, error) {
		syscall.Close(fd)
		syscall.Unlink(path)
		return nil, err
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fail(err)
	}
	if err := syscall.Ftruncate(fd, int64(size)); err != nil {
		return fail(err)
	}
	b, err := syscall.Mmap(fd, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fail(err)
	}
	return &StandinFile{fd: fd, b: b, name: name}, nil
}

// StandinOpen opens and maps an existing region file of our user.
func StandinOpen(name string) (*StandinFile, error) {
	fd, err := syscall.Open(StandinDir+"/"+name, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if st.Uid != uint32(os.Geteuid()) {
		syscall.Close(fd)
		return nil, syscall.EACCES
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size < HeaderSize || st.Size > MaxRegionSize {
		syscall.Close(fd)
		return nil, syscall.EINVAL
	}
	b, err := syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &StandinFile{fd: fd, b: b, name: name}, nil
}

// Bytes returns the mapping.
func (f *StandinFile) Bytes() []byte { return f.b }

// Close unmaps and closes the file (releasing the owner's lock).
func (f *StandinFile) Close() error {
	if f.b == nil {
		return syscall.EBADF
	}
	err := syscall.Munmap(f.b)
	f.b = nil
	if e := syscall.Close(f.fd); err == nil {
		err = e
	}
	return err
}

// Unlink removes the file's name.
func (f *StandinFile) Unlink() error { return syscall.Unlink(StandinDir + "/" + f.name) }
