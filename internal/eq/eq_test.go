package eq

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

func mustNew(t testing.TB, cfg Config) *EQ {
	t.Helper()
	q, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want error
	}{
		{Config{}, nil},
		{Config{Size: 1}, nil},
		{Config{Size: 65536, WaitObj: provider.WaitFD}, nil},
		{Config{Size: -1}, provider.EINVAL},
		{Config{WaitObj: provider.WaitPollFD}, nil},
		{Config{WaitObj: provider.WaitSet}, nil}, // joins a set with JoinSet
		{Config{WaitObj: 50}, provider.EINVAL},
	} {
		q, err := New(tc.cfg)
		if err != tc.want {
			t.Errorf("New(%+v) = %v, want %v", tc.cfg, err, tc.want)
		}
		if q != nil {
			q.Close()
		}
	}
}

func TestWriteReadPeek(t *testing.T) {
	q := mustNew(t, Config{AppWrite: true})
	if _, err := q.Read(0); err != provider.EAGAIN {
		t.Fatalf("empty read: %v", err)
	}
	var ee provider.EQErrEntry
	if err := q.ReadErr(&ee, 0); err != provider.EAGAIN {
		t.Fatalf("empty readerr: %v", err)
	}
	fid := new(int)
	for i := 0; i < 5; i++ {
		n, err := q.WriteUser(&provider.EQEntry{Event: provider.EventMRComplete, FID: fid, Context: i, Data: uint64(i * 10)})
		if n != entrySize || err != nil {
			t.Fatalf("write %d: %d %v", i, n, err)
		}
	}
	cm := []byte("private")
	n, err := q.WriteUser(&provider.EQEntry{Event: provider.EventConnected, FID: fid, CMData: cm})
	if n != cmEntrySize+7 || err != nil {
		t.Fatalf("cm write: %d %v", n, err)
	}
	cm[0] = 'X' // copied
	for i := 0; i < 5; i++ {
		p, err := q.Read(provider.FlagPeek)
		if err != nil || p.Context != i {
			t.Fatalf("peek %d: %+v %v", i, p, err)
		}
		e, err := q.Read(0)
		if err != nil || e.Event != provider.EventMRComplete || e.FID != fid || e.Context != i || e.Data != uint64(i*10) {
			t.Fatalf("read %d: %+v %v", i, e, err)
		}
	}
	e, err := q.Read(0)
	if err != nil || e.Event != provider.EventConnected || string(e.CMData) != "private" {
		t.Fatalf("cm read: %+v %v", e, err)
	}
	if _, err := q.Read(0); err != provider.EAGAIN {
		t.Fatalf("drained: %v", err)
	}
	if _, err := q.Read(provider.FlagSend); err != provider.EBADFLAGS {
		t.Fatalf("bad flags: %v", err)
	}
	if _, err := q.WriteUser(nil); err != provider.EINVAL {
		t.Fatalf("nil write: %v", err)
	}
	// Without FI_WRITE the application may not write.
	nw := mustNew(t, Config{})
	if _, err := nw.WriteUser(&provider.EQEntry{}); err != provider.EINVAL {
		t.Fatalf("fi_eq_write without FI_WRITE: %v", err)
	}
	// Providers still can.
	if err := nw.Write(&provider.EQEntry{Event: provider.EventShutdown}); err != nil {
		t.Fatal(err)
	}
}

func TestErrorEvents(t *testing.T) {
	q := mustNew(t, Config{})
	q.Write(&provider.EQEntry{Event: provider.EventConnected, Context: 1})
	rej := []byte("rejected-by-app")
	q.WriteErr(&provider.EQErrEntry{Context: 2, Err: provider.ECONNREFUSED, ProvErrno: -111, ErrData: rej, Data: 5})
	q.Write(&provider.EQEntry{Event: provider.EventShutdown, Context: 3})
	q.WriteErr(&provider.EQErrEntry{Context: 4, Err: -provider.ETIMEDOUT})
	q.WriteErr(&provider.EQErrEntry{Context: 5})

	var ee provider.EQErrEntry
	if err := q.ReadErr(&ee, 0); err != provider.EAGAIN {
		t.Fatalf("readerr with an event at head: %v", err)
	}
	if e, err := q.Read(0); err != nil || e.Context != 1 {
		t.Fatal(e, err)
	}
	if _, err := q.Read(0); err != provider.EAVAIL {
		t.Fatalf("error at head: %v", err)
	}
	if err := q.ReadErr(&ee, provider.FlagPeek); err != nil || ee.Context != 2 {
		t.Fatalf("peek err: %v %+v", err, ee)
	}
	buf := make([]byte, 64)
	ee = provider.EQErrEntry{ErrData: buf}
	if err := q.ReadErr(&ee, 0); err != nil {
		t.Fatal(err)
	}
	if ee.Err != provider.ECONNREFUSED || ee.ProvErrno != -111 || ee.Data != 5 || !bytes.Equal(ee.ErrData, rej) ||
		&ee.ErrData[0] != &buf[0] {
		t.Fatalf("error event %+v", ee)
	}
	if e, err := q.Read(0); err != nil || e.Context != 3 {
		t.Fatal(e, err)
	}
	ee = provider.EQErrEntry{}
	q.ReadErr(&ee, 0)
	if ee.Err != provider.ETIMEDOUT || ee.ErrData != nil {
		t.Fatalf("normalised err: %+v", ee)
	}
	q.ReadErr(&ee, 0)
	if ee.Err != provider.EOTHER {
		t.Fatalf("zero err: %+v", ee)
	}
	// EQ-owned err_data.
	q.WriteErr(&provider.EQErrEntry{Err: provider.EIO, ErrData: rej})
	ee = provider.EQErrEntry{}
	q.ReadErr(&ee, 0)
	if !bytes.Equal(ee.ErrData, rej) {
		t.Fatalf("owned err_data %q", ee.ErrData)
	}
	if err := q.ReadErr(nil, 0); err != provider.EINVAL {
		t.Fatal(err)
	}
	if err := q.Write(nil); err != provider.EINVAL {
		t.Fatal(err)
	}
	if err := q.WriteErr(nil); err != provider.EINVAL {
		t.Fatal(err)
	}
}

func TestOverrun(t *testing.T) {
	q := mustNew(t, Config{Size: 3, AppWrite: true})
	for i := 0; i < 3; i++ {
		if _, err := q.WriteUser(&provider.EQEntry{Context: i}); err != nil {
			t.Fatalf("write %d of 3: %v", i, err)
		}
	}
	if _, err := q.WriteUser(&provider.EQEntry{Context: 3}); err != provider.EOVERRUN {
		t.Fatalf("write beyond size: %v", err)
	}
	for i := 0; i < 3; i++ {
		if e, err := q.Read(0); err != nil || e.Context != i {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if _, err := q.WriteUser(&provider.EQEntry{}); err != provider.EOVERRUN {
		t.Fatalf("write to an overrun EQ: %v", err)
	}
	if _, err := q.Read(0); err != provider.EOVERRUN {
		t.Fatalf("drained overrun EQ: %v", err)
	}
}

type src struct {
	q     *EQ
	calls atomic.Int64
	emit  atomic.Bool
}

func (s *src) Progress() {
	s.calls.Add(1)
	if s.emit.Swap(false) {
		s.q.Write(&provider.EQEntry{Event: provider.EventConnReq})
	}
}

func TestProgressAndSRead(t *testing.T) {
	q := mustNew(t, Config{WaitObj: provider.WaitUnspec})
	s := &src{q: q}
	q.AddSource(s)
	s.emit.Store(true)
	if e, err := q.Read(0); err != nil || e.Event != provider.EventConnReq {
		t.Fatalf("read through progress: %+v %v", e, err)
	}
	// Timeout: EAGAIN after about the timeout.
	start := time.Now()
	if _, err := q.SRead(0, start.Add(200*time.Millisecond), nil); err != provider.EAGAIN {
		t.Fatalf("sread timeout: %v", err)
	}
	if el := time.Since(start); el < 190*time.Millisecond || el > 1500*time.Millisecond {
		t.Fatalf("sread(200ms) took %v", el)
	}
	// Immediate with an event queued; FI_PEEK honoured.
	q.Write(&provider.EQEntry{Event: provider.EventShutdown})
	start = time.Now()
	if e, err := q.SRead(provider.FlagPeek, time.Now().Add(2*time.Second), nil); err != nil || e.Event != provider.EventShutdown {
		t.Fatalf("sread peek: %v", err)
	}
	if time.Since(start) > 50*time.Millisecond {
		t.Fatalf("sread with a queued event took %v", time.Since(start))
	}
	if q.Len() != 1 {
		t.Fatal("peek consumed the event")
	}
	q.Read(0)
	// Woken by a write.
	res := make(chan error, 1)
	go func() {
		_, err := q.SRead(0, time.Time{}, nil)
		res <- err
	}()
	time.Sleep(10 * time.Millisecond)
	q.WriteErr(&provider.EQErrEntry{Err: provider.ECONNREFUSED})
	select {
	case err := <-res:
		if err != provider.EAVAIL {
			t.Fatalf("sread woken by an error event: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sread not woken")
	}
}

func TestSReadWaitNoneAndClose(t *testing.T) {
	n := mustNew(t, Config{WaitObj: provider.WaitNone})
	if _, err := n.SRead(0, time.Time{}, nil); err != provider.ENOSYS {
		t.Fatalf("sread FI_WAIT_NONE: %v", err)
	}
	if _, err := n.SRead(provider.FlagRecv, time.Time{}, nil); err != provider.EBADFLAGS {
		t.Fatalf("sread bad flags: %v", err)
	}
	q, _ := New(Config{WaitObj: provider.WaitMutexCond})
	res := make(chan error, 1)
	go func() {
		_, err := q.SRead(0, time.Time{}, nil)
		res <- err
	}()
	time.Sleep(10 * time.Millisecond)
	q.Close()
	select {
	case err := <-res:
		if err != provider.EBADF {
			t.Fatalf("sread on close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close did not unblock sread")
	}
	if err := q.Close(); err != provider.EBADF {
		t.Fatal(err)
	}
	if _, err := q.Read(0); err != provider.EBADF {
		t.Fatal(err)
	}
	if err := q.Write(&provider.EQEntry{}); err != provider.EBADF {
		t.Fatal(err)
	}
}

func TestWaitFD(t *testing.T) {
	q := mustNew(t, Config{WaitObj: provider.WaitFD})
	fd, err := q.WaitFD()
	if err != nil {
		t.Fatal(err)
	}
	if err := q.TryWait(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("readable when empty")
	}
	q.Write(&provider.EQEntry{Event: provider.EventConnected})
	if ok, _ := sys.PollReadable(fd, 1000); !ok {
		t.Fatal("not readable after an event")
	}
	if err := q.TryWait(); err != provider.EAGAIN {
		t.Fatalf("trywait with an event: %v", err)
	}
	q.Read(0)
	if err := q.TryWait(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("readable after trywait on empty EQ")
	}
	if s := q.StrError(-int(provider.ECONNREFUSED), nil); s != "Connection refused" {
		t.Fatal(s)
	}
}
