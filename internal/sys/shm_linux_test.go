package sys

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/gofabric/fabric/provider"
	"golang.org/x/sys/unix"
)

func TestShmCreateOpenUnlink(t *testing.T) {
	name := testPrefix(t) + "a"
	f, err := CreateShm(name, 10000)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := os.Stat(filepath.Join(ShmDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode() != 0o600 || st.Size() != 10000 {
		t.Fatalf("file mode %v size %d, want -rw------- 10000", st.Mode(), st.Size())
	}
	if !f.Owner() || f.Name() != name || len(f.Bytes()) != 10000 {
		t.Fatalf("owner %v name %q len %d", f.Owner(), f.Name(), len(f.Bytes()))
	}
	if _, err := CreateShm(name, 4096); err != provider.EADDRINUSE {
		t.Fatalf("creating an existing name: %v, want FI_EADDRINUSE", err)
	}
	g, err := OpenShm(name)
	if err != nil {
		t.Fatal(err)
	}
	if g.Owner() || len(g.Bytes()) != 10000 {
		t.Fatalf("opener: owner %v len %d", g.Owner(), len(g.Bytes()))
	}
	f.Bytes()[9999] = 0xa5
	g.Bytes()[0] = 0x5a
	if g.Bytes()[9999] != 0xa5 || f.Bytes()[0] != 0x5a {
		t.Fatal("the two mappings do not share memory")
	}
	if alive, err := OwnerAlive(name); !alive || err != nil {
		t.Fatalf("OwnerAlive with the owner open = %v, %v", alive, err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if g.Bytes() != nil {
		t.Fatal("Bytes after Close is not nil")
	}
	if alive, _ := OwnerAlive(name); !alive {
		t.Fatal("an opener's Close ended the owner's liveness")
	}
	if err := f.Unlink(); err != nil {
		t.Fatal(err)
	}
	if err := f.Unlink(); err != provider.ENOENT {
		t.Fatalf("second Unlink: %v, want FI_ENOENT", err)
	}
	f.Bytes()[1] = 1 // still mapped until Close
	if _, err := OpenShm(name); err != provider.ENOENT {
		t.Fatalf("OpenShm after Unlink: %v, want FI_ENOENT", err)
	}
	if alive, err := OwnerAlive(name); alive || err != nil {
		t.Fatalf("OwnerAlive of a removed file = %v, %v; want false, nil", alive, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if left := leftFiles(testPrefix(t)); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}

func TestShmBadInput(t *testing.T) {
	p := testPrefix(t)
	for _, name := range []string{"", ".", "..", "a/b", "/abs", "x\x00y", string(make([]byte, 256))} {
		if _, err := CreateShm(name, 4096); err != provider.EINVAL {
			t.Errorf("CreateShm(%q) = %v, want FI_EINVAL", name, err)
		}
		if _, err := OpenShm(name); err != provider.EINVAL {
			t.Errorf("OpenShm(%q) = %v, want FI_EINVAL", name, err)
		}
		if _, err := OwnerAlive(name); err != provider.EINVAL {
			t.Errorf("OwnerAlive(%q) = %v, want FI_EINVAL", name, err)
		}
		if _, err := CleanStale(name); err != provider.EINVAL {
			t.Errorf("CleanStale(%q) = %v, want FI_EINVAL", name, err)
		}
	}
	for _, size := range []int{0, -1} {
		if _, err := CreateShm(p+"size", size); err != provider.EINVAL {
			t.Errorf("CreateShm size %d = %v, want FI_EINVAL", size, err)
		}
	}
	if left := leftFiles(p); len(left) != 0 {
		t.Fatalf("failed creates left files: %v", left)
	}
	dir, fifo, link, empty := p+"dir", p+"fifo", p+"link", p+"empty"
	if err := os.Mkdir(filepath.Join(ShmDir, dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(ShmDir, fifo), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ShmDir, empty), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	real, err := CreateShm(p+"real", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	if err := os.Symlink(filepath.Join(ShmDir, real.Name()), filepath.Join(ShmDir, link)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{dir, fifo, link, empty} {
		if f, err := OpenShm(name); err != provider.EINVAL {
			t.Errorf("OpenShm(%s) = %v, want FI_EINVAL", name, err)
			if f != nil {
				f.Close()
			}
		}
	}
	// None of these is a dead region: CleanStale keeps them (the empty file
	// is younger than the grace period).
	if n, err := CleanStale(p); n != 0 || err != nil {
		t.Fatalf("CleanStale = %d, %v; want 0, nil", n, err)
	}
	for _, name := range []string{dir, fifo, link, empty} {
		if _, err := os.Lstat(filepath.Join(ShmDir, name)); err != nil {
			t.Errorf("CleanStale removed %s: %v", name, err)
		}
	}
	os.Remove(filepath.Join(ShmDir, dir))
	real.Unlink()
}

func TestCleanStaleInProcess(t *testing.T) {
	p := testPrefix(t)
	live, err := CreateShm(p+"live", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { live.Unlink(); live.Close() }()
	dead, err := CreateShm(p+"dead", 4096)
	if err != nil {
		t.Fatal(err)
	}
	dead.Close() // no Unlink: stale
	if alive, err := OwnerAlive(dead.Name()); alive || err != nil {
		t.Fatalf("OwnerAlive of a closed owner = %v, %v", alive, err)
	}
	if err := os.WriteFile(filepath.Join(ShmDir, p+"plain"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := CleanStale(p + "nomatch"); n != 0 || err != nil {
		t.Fatalf("CleanStale of an unused prefix = %d, %v", n, err)
	}
	if ok, err := RemoveStale(live.Name()); ok || err != nil {
		t.Fatalf("RemoveStale of a live region = %v, %v", ok, err)
	}
	if ok, err := RemoveStale(dead.Name()); !ok || err != nil {
		t.Fatalf("RemoveStale of a dead region = %v, %v", ok, err)
	}
	if _, err := RemoveStale("a/b"); err != provider.EINVAL {
		t.Fatalf("RemoveStale of a bad name: %v", err)
	}
	if n, err := CleanStale(p); n != 1 || err != nil {
		t.Fatalf("CleanStale = %d, %v; want 1 (plain)", n, err)
	}
	left := leftFiles(p)
	if len(left) != 1 || filepath.Base(left[0]) != live.Name() {
		t.Fatalf("left after CleanStale: %v, want only %s", left, live.Name())
	}
	if alive, _ := OwnerAlive(live.Name()); !alive {
		t.Fatal("live owner reported dead")
	}
}

// TestShmOwnerKilled: a child process creates a region and is killed with
// SIGKILL; the kernel drops its lock, so OwnerAlive turns false and
// CleanStale removes the file, while our mapping stays readable.
func TestShmOwnerKilled(t *testing.T) {
	p := testPrefix(t)
	name := p + "child"
	c := startChild(t, nil, "own", name, "65536")
	if l := c.line(t); l != "ready" {
		t.Fatalf("child: %q", l)
	}
	f, err := OpenShm(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := f.Bytes()
	if len(b) != 65536 || b[1000] != pattern(1000) || b[65535] != pattern(65535) {
		t.Fatal("the child's region does not hold its pattern")
	}
	if alive, err := OwnerAlive(name); !alive || err != nil {
		t.Fatalf("OwnerAlive of the running child = %v, %v", alive, err)
	}
	if n, err := CleanStale(p); n != 0 || err != nil {
		t.Fatalf("CleanStale with the owner alive = %d, %v", n, err)
	}
	c.kill(t)
	if alive, err := OwnerAlive(name); alive || err != nil {
		t.Fatalf("OwnerAlive of the killed child = %v, %v", alive, err)
	}
	if b[4242] != pattern(4242) {
		t.Fatal("mapping changed after the owner died")
	}
	if n, err := CleanStale(p); n != 1 || err != nil {
		t.Fatalf("CleanStale after the kill = %d, %v; want 1", n, err)
	}
	if ok, err := RemoveStale(name); ok || err != nil {
		t.Fatalf("RemoveStale of a removed file = %v, %v", ok, err)
	}
	if left := leftFiles(p); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}

// TestShmOwnerExits: a child that unlinks and closes at exit leaves
// nothing behind.
func TestShmOwnerExits(t *testing.T) {
	p := testPrefix(t)
	c := startChild(t, nil, "own", p+"child", "4096")
	if l := c.line(t); l != "ready" {
		t.Fatalf("child: %q", l)
	}
	if code := c.wait(t); code != 0 {
		t.Fatalf("child exit %d", code)
	}
	if left := leftFiles(p); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}

// TestShmOtherUID: a process of another uid (65534, nobody) cannot attach
// to our 0600 region (the kernel refuses: EACCES), and we, as root, refuse
// to attach to its region (the euid check: root could open it otherwise);
// CleanStale leaves its files alone. Running a child as another uid needs
// root: the test is skipped otherwise.
func TestShmOtherUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a child process as uid 65534")
	}
	cred := &syscall.Credential{Uid: 65534, Gid: 65534}
	p := testPrefix(t)
	mine, err := CreateShm(p+"root", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { mine.Unlink(); mine.Close() }()
	c := startChild(t, cred, "open", mine.Name())
	if l := c.line(t); l != strconv.Itoa(int(provider.EACCES)) {
		t.Fatalf("OpenShm of root's region as uid 65534 answered errno %q, want %d (EACCES)", l, provider.EACCES)
	}
	c.wait(t)

	theirs := p + "nobody"
	c = startChild(t, cred, "leave", theirs, "4096")
	if l := c.line(t); l != "ready" {
		t.Fatalf("child: %q", l)
	}
	st, err := os.Stat(filepath.Join(ShmDir, theirs))
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Sys().(*syscall.Stat_t); s.Uid != 65534 || st.Mode() != 0o600 {
		t.Fatalf("child's file uid %d mode %v", s.Uid, st.Mode())
	}
	if f, err := OpenShm(theirs); err != provider.EACCES {
		if f != nil {
			f.Close()
		}
		t.Fatalf("OpenShm of uid 65534's region as root = %v, want FI_EACCES", err)
	}
	if code := c.wait(t); code != 0 { // closes without unlinking: stale, but not ours
		t.Fatalf("child exit %d", code)
	}
	if n, err := CleanStale(p); n != 0 || err != nil {
		t.Fatalf("CleanStale = %d, %v; want 0 (the stale file is another user's)", n, err)
	}
	if _, err := os.Stat(filepath.Join(ShmDir, theirs)); err != nil {
		t.Fatalf("CleanStale removed another user's file: %v", err)
	}
}

func TestShmErrnoTranslation(t *testing.T) {
	for e, want := range map[syscall.Errno]provider.Errno{
		unix.EEXIST: provider.EADDRINUSE, unix.ELOOP: provider.EINVAL, unix.EISDIR: provider.EINVAL,
		unix.EACCES: provider.EACCES, unix.ENOSPC: provider.ENOSPC, unix.ENOENT: provider.ENOENT,
	} {
		if got := shmErrno(e); !errors.Is(got, want) || got != want {
			t.Errorf("shmErrno(%v) = %v, want %v", e, got, want)
		}
	}
	if shmErrno(nil) != nil {
		t.Error("shmErrno(nil) != nil")
	}
}

// TestShmCreateFallback: the O_CREAT|O_EXCL path (no O_TMPFILE) gives the
// same file, locked, sized and mode 0600.
func TestShmCreateFallback(t *testing.T) {
	forceExcl = true
	defer func() { forceExcl = false }()
	p := testPrefix(t)
	f, err := CreateShm(p+"excl", 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { f.Unlink(); f.Close() }()
	st, err := os.Stat(filepath.Join(ShmDir, f.Name()))
	if err != nil || st.Mode() != 0o600 || st.Size() != 8192 || len(f.Bytes()) != 8192 {
		t.Fatalf("stat %v %v, mapping %d", st, err, len(f.Bytes()))
	}
	if alive, err := OwnerAlive(f.Name()); !alive || err != nil {
		t.Fatalf("OwnerAlive = %v, %v", alive, err)
	}
	if _, err := CreateShm(p+"excl", 8192); err != provider.EADDRINUSE {
		t.Fatalf("duplicate create: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ShmDir, f.Name())); err != nil {
		t.Fatal("a failed duplicate create removed the owner's file")
	}
}

// TestCleanStaleOldEmpty: an empty unlocked file is left alone during the
// grace period (CreateShm's fallback may be between create and lock) and
// removed after it.
func TestCleanStaleOldEmpty(t *testing.T) {
	p := testPrefix(t)
	if err := os.WriteFile(filepath.Join(ShmDir, p+"empty"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := CleanStale(p); n != 0 || err != nil {
		t.Fatalf("CleanStale in the grace period = %d, %v", n, err)
	}
	old := staleGraceSec
	staleGraceSec = -1 // every file is older than this
	defer func() { staleGraceSec = old }()
	if n, err := CleanStale(p); n != 1 || err != nil {
		t.Fatalf("CleanStale after the grace period = %d, %v", n, err)
	}
}

// TestShmCreateRace: of goroutines creating one name at once, exactly one
// gets it.
func TestShmCreateRace(t *testing.T) {
	name := testPrefix(t) + "race"
	const n = 8
	res := make(chan *ShmFile, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			f, err := CreateShm(name, 4096)
			if err != nil {
				errs <- err
				return
			}
			res <- f
		}()
	}
	won := 0
	for i := 0; i < n; i++ {
		select {
		case f := <-res:
			won++
			defer func() { f.Unlink(); f.Close() }()
		case err := <-errs:
			if err != provider.EADDRINUSE {
				t.Errorf("loser: %v, want FI_EADDRINUSE", err)
			}
		}
	}
	if won != 1 {
		t.Fatalf("%d creators won", won)
	}
}

// TestShmCreateTooBig: a size the tmpfs cannot hold fails at create time
// (fallocate), not later with SIGBUS, and leaves no file.
func TestShmCreateTooBig(t *testing.T) {
	p := testPrefix(t)
	var fs unix.Statfs_t
	if err := unix.Statfs(ShmDir, &fs); err != nil {
		t.Fatal(err)
	}
	total := int64(fs.Blocks) * int64(fs.Bsize)
	size := total + 1<<30 // more than the whole tmpfs
	if uint64(size) > math.MaxInt {
		t.Skipf("a %d-byte tmpfs is larger than this platform's int", total)
	}
	f, err := CreateShm(p+"big", int(size))
	if err == nil {
		f.Unlink()
		f.Close()
		t.Fatalf("CreateShm of %d bytes on a %d-byte tmpfs succeeded", size, total)
	}
	if err != provider.ENOSPC && err != provider.ENOMEM {
		t.Fatalf("CreateShm too big: %v, want FI_ENOSPC", err)
	}
	if left := leftFiles(p); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}

// BenchmarkOwnerAlive: the liveness check the provider runs every 100 ms
// per peer with pending operations.
func BenchmarkOwnerAlive(b *testing.B) {
	name := fmt.Sprintf("gofabric-systest-%d-bench", os.Getpid())
	f, err := CreateShm(name, 4096)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { f.Unlink(); f.Close() }()
	for i := 0; i < b.N; i++ {
		if alive, err := OwnerAlive(name); !alive || err != nil {
			b.Fatal(alive, err)
		}
	}
}
