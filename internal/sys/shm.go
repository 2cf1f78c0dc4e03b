package sys

import "strings"

// ShmDir is the directory that holds the shared-memory region files: the
// tmpfs mount where shm_open(3) puts its objects. It is a variable so that a
// program can point it at another tmpfs (set it before any Shm call; it is
// not synchronised).
var ShmDir = "/dev/shm"

// ShmMode is the permission of every region file: the creating user only,
// so that another user's process cannot attach.
const ShmMode = 0o600

// staleGraceSec is how many seconds CleanStale leaves alone an empty file
// that nobody locks: one that CreateShm's fallback path (no O_TMPFILE) may
// have created and not locked yet. A variable for the tests.
var staleGraceSec int64 = 10

// ShmFile is one shared-memory region: a file of ShmDir mapped MAP_SHARED
// read-write, so that every process that maps it sees the same bytes.
//
// The process that created it (CreateShm) is its owner and holds an
// exclusive flock on its descriptor until Close: the lock is the owner's
// liveness, which the kernel drops when the owner exits or is killed
// (OwnerAlive, CleanStale). Other processes attach with OpenShm.
//
// A ShmFile is not safe for concurrent Close/Unlink calls; Bytes may be
// read concurrently until Close.
type ShmFile struct {
	name  string
	fd    int
	mem   []byte
	owner bool
}

// Name returns the file's name in ShmDir.
func (f *ShmFile) Name() string { return f.name }

// Owner reports whether this process created the file (CreateShm) and so
// holds its liveness lock.
func (f *ShmFile) Owner() bool { return f.owner }

// Bytes returns the shared mapping of the whole file, or nil after Close.
// The slice must not be used after Close: the memory is unmapped.
func (f *ShmFile) Bytes() []byte { return f.mem }

// validShmName reports whether name is a plain file name in ShmDir: not
// empty, no slash, not "." or "..", at most 255 bytes, no NUL.
func validShmName(name string) bool {
	return name != "" && len(name) <= 255 && name != "." && name != ".." &&
		!strings.ContainsAny(name, "/\x00")
}

// shmPath returns the file's path in ShmDir.
func shmPath(name string) string { return ShmDir + "/" + name }
