package cq

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

func mustNew(t testing.TB, cfg Config) *CQ {
	t.Helper()
	q, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want error
	}{
		{Config{}, nil},
		{Config{Size: 1}, nil},
		{Config{Size: 65536, Format: provider.CQFormatTagged, WaitObj: provider.WaitFD}, nil},
		{Config{Size: -1}, provider.EINVAL},
		{Config{Size: MaxSize + 1}, provider.EINVAL},
		{Config{Format: 5}, provider.EINVAL},
		{Config{Format: -1}, provider.EINVAL},
		{Config{WaitObj: provider.WaitPollFD}, nil},
		{Config{WaitObj: provider.WaitSet}, nil}, // joins a set with JoinSet
		{Config{WaitObj: 99}, provider.EINVAL},
		{Config{WaitCond: 2}, provider.EINVAL},
		{Config{WaitCond: provider.CQCondThreshold, WaitObj: provider.WaitUnspec}, nil},
	} {
		q, err := New(tc.cfg)
		if err != tc.want {
			t.Errorf("New(%+v) = %v, want %v", tc.cfg, err, tc.want)
		}
		if q != nil {
			q.Close()
		}
	}
	q := mustNew(t, Config{})
	if c := q.Config(); c.Size != DefaultSize || c.Format != provider.CQFormatContext {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestReadEmpty(t *testing.T) {
	q := mustNew(t, Config{})
	ent := make([]provider.CQEntry, 4)
	if n, err := q.Read(ent); n != 0 || err != provider.EAGAIN {
		t.Fatalf("empty read = %d, %v", n, err)
	}
	var ee provider.CQErrEntry
	if err := q.ReadErr(&ee); err != provider.EAGAIN {
		t.Fatalf("empty readerr = %v", err)
	}
	if n, err := q.Read(nil); n != 0 || err != provider.EAGAIN {
		t.Fatalf("nil read of empty CQ = %d, %v", n, err)
	}
}

type progSrc struct {
	q     *CQ
	calls atomic.Int64
	emit  atomic.Int64 // completions to write on the next Progress
}

func (s *progSrc) Progress() {
	s.calls.Add(1)
	for s.emit.Load() > 0 {
		s.emit.Add(-1)
		s.q.Write("p", provider.FlagRecv|provider.FlagMsg, 1, nil, 0, 0, provider.AddrNotAvail)
	}
}

func TestReadDrivesProgress(t *testing.T) {
	q := mustNew(t, Config{})
	src := &progSrc{q: q}
	q.AddSource(src)
	src.emit.Store(2)
	ent := make([]provider.CQEntry, 4)
	n, err := q.Read(ent)
	if n != 2 || err != nil || ent[0].OpContext != "p" {
		t.Fatalf("read after progress = %d, %v, %+v", n, err, ent[0])
	}
	if src.calls.Load() != 1 {
		t.Fatalf("progress called %d times", src.calls.Load())
	}
	// A non-empty CQ is read without progress (libfabric util behaviour).
	q.Write("w", 0, 0, nil, 0, 0, 0)
	q.Read(ent)
	if src.calls.Load() != 1 {
		t.Fatalf("progress called on a non-empty read")
	}
	// An empty slice drives progress and reports the state.
	if n, err := q.Read(nil); n != 0 || err != provider.EAGAIN || src.calls.Load() != 2 {
		t.Fatalf("nil read: %d %v calls=%d", n, err, src.calls.Load())
	}
	src.emit.Store(1)
	if n, err := q.Read(nil); n != 0 || err != nil {
		t.Fatalf("nil read with an entry produced: %d %v", n, err)
	}
	if q.Len() != 1 {
		t.Fatalf("nil read consumed entries: Len=%d", q.Len())
	}
	q.RemoveSource(src)
	q.Read(nil)
	if src.calls.Load() != 3 {
		t.Fatalf("removed source still progressed: %d", src.calls.Load())
	}
}

func TestFormats(t *testing.T) {
	full := provider.CQEntry{OpContext: "ctx", Flags: provider.FlagRecv | provider.FlagTagged | provider.FlagRemoteCQData,
		Len: 7, Buf: []byte("buf"), Data: 0xda7a, Tag: 0x7a9}
	for _, tc := range []struct {
		f    provider.CQFormat
		want provider.CQEntry
	}{
		{provider.CQFormatUnspec, provider.CQEntry{OpContext: "ctx"}},
		{provider.CQFormatContext, provider.CQEntry{OpContext: "ctx"}},
		{provider.CQFormatMsg, provider.CQEntry{OpContext: "ctx", Flags: full.Flags, Len: 7}},
		{provider.CQFormatData, provider.CQEntry{OpContext: "ctx", Flags: full.Flags, Len: 7, Buf: full.Buf, Data: 0xda7a}},
		{provider.CQFormatTagged, full},
	} {
		q := mustNew(t, Config{Format: tc.f})
		if err := q.Write(full.OpContext, full.Flags|provider.FlagInject|provider.FlagCompletion, full.Len, full.Buf,
			full.Data, full.Tag, 3); err != nil {
			t.Fatal(err)
		}
		// Dirty destination: fields outside the format must be zeroed.
		ent := []provider.CQEntry{{Flags: 99, Len: 99, Buf: []byte("x"), Data: 99, Tag: 99}}
		n, err := q.Read(ent)
		if n != 1 || err != nil {
			t.Fatalf("%v: read %d %v", tc.f, n, err)
		}
		got := ent[0]
		if got.OpContext != tc.want.OpContext || got.Flags != tc.want.Flags || got.Len != tc.want.Len ||
			!bytes.Equal(got.Buf, tc.want.Buf) || (got.Buf == nil) != (tc.want.Buf == nil) ||
			got.Data != tc.want.Data || got.Tag != tc.want.Tag {
			t.Errorf("%v: got %+v, want %+v", tc.f, got, tc.want)
		}
	}
}

// TestWriteMsg: WriteMsg is Write with no buffer and no data: the same
// entry (flags masked, source kept) and the same overrun rule.
func TestWriteMsg(t *testing.T) {
	q := mustNew(t, Config{Format: provider.CQFormatTagged, Size: 1})
	if err := q.WriteMsg("ctx", provider.FlagRecv|provider.FlagMsg|provider.FlagCompletion, 9, 0x7a9, 5); err != nil {
		t.Fatal(err)
	}
	if err := q.WriteMsg("lost", provider.FlagRecv, 1, 0, 5); err != provider.EOVERRUN {
		t.Fatalf("WriteMsg to a full CQ: %v", err)
	}
	ent := []provider.CQEntry{{Buf: []byte("x"), Data: 99}}
	src := make([]provider.Addr, 1)
	n, err := q.ReadFrom(ent, src)
	want := provider.CQEntry{OpContext: "ctx", Flags: provider.FlagRecv | provider.FlagMsg, Len: 9, Tag: 0x7a9}
	if n != 1 || err != nil || ent[0].OpContext != want.OpContext || ent[0].Flags != want.Flags ||
		ent[0].Len != want.Len || ent[0].Buf != nil || ent[0].Data != 0 || ent[0].Tag != want.Tag || src[0] != 5 {
		t.Fatalf("ReadFrom = %d %v %+v src %v, want %+v src 5", n, err, ent[0], src[0], want)
	}
}

func TestFIFOAndBatches(t *testing.T) {
	q := mustNew(t, Config{Size: 1000, Format: provider.CQFormatTagged})
	for i := 0; i < 1000; i++ { // grows the ring past its initial capacity
		if err := q.Write(i, 0, 0, nil, 0, uint64(i), provider.Addr(i)); err != nil {
			t.Fatal(i, err)
		}
	}
	ent := make([]provider.CQEntry, 7)
	src := make([]provider.Addr, 7)
	next := 0
	for next < 1000 {
		n, err := q.ReadFrom(ent, src)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if ent[i].OpContext != next || ent[i].Tag != uint64(next) || src[i] != provider.Addr(next) {
				t.Fatalf("entry %d: %+v src %d", next, ent[i], src[i])
			}
			next++
		}
	}
	if _, err := q.Read(ent); err != provider.EAGAIN {
		t.Fatalf("drained read: %v", err)
	}
	if _, err := q.ReadFrom(ent, src[:3]); err != provider.EINVAL {
		t.Fatalf("short src slice: %v", err)
	}
}

func TestErrorOrdering(t *testing.T) {
	q := mustNew(t, Config{Format: provider.CQFormatMsg})
	q.Write("s1", provider.FlagSend, 0, nil, 0, 0, provider.AddrNotAvail)
	q.Write("s2", provider.FlagSend, 0, nil, 0, 0, provider.AddrNotAvail)
	q.WriteErr(&provider.CQErrEntry{OpContext: "e1", Flags: provider.FlagRecv | provider.FlagMsg, Len: 3, Olen: 5,
		Err: provider.ETRUNC, ProvErrno: -265, Tag: 9, Data: 8})
	q.Write("s3", provider.FlagSend, 0, nil, 0, 0, provider.AddrNotAvail)
	q.WriteErr(&provider.CQErrEntry{OpContext: "e2", Err: -provider.ECANCELED})
	q.WriteErr(&provider.CQErrEntry{OpContext: "e3"})

	ent := make([]provider.CQEntry, 8)
	var ee provider.CQErrEntry
	if err := q.ReadErr(&ee); err != provider.EAGAIN {
		t.Fatalf("readerr with a success at the head: %v", err)
	}
	n, err := q.Read(ent)
	if n != 2 || err != nil || ent[0].OpContext != "s1" || ent[1].OpContext != "s2" {
		t.Fatalf("first read %d %v %+v", n, err, ent[:2])
	}
	if n, err := q.Read(ent); n != 0 || err != provider.EAVAIL {
		t.Fatalf("read with error at head = %d, %v", n, err)
	}
	if n, err := q.Read(nil); n != 0 || err != provider.EAVAIL {
		t.Fatalf("nil read with error at head = %d, %v", n, err)
	}
	if err := q.ReadErr(&ee); err != nil {
		t.Fatal(err)
	}
	if ee.OpContext != "e1" || ee.Err != provider.ETRUNC || ee.Olen != 5 || ee.Len != 3 || ee.ProvErrno != -265 ||
		ee.Tag != 9 || ee.Data != 8 || ee.Flags != provider.FlagRecv|provider.FlagMsg {
		t.Fatalf("error entry %+v", ee)
	}
	if err := q.ReadErr(&ee); err != provider.EAGAIN {
		t.Fatalf("readerr with success at head: %v", err)
	}
	if n, err := q.Read(ent); n != 1 || err != nil || ent[0].OpContext != "s3" {
		t.Fatalf("success after error: %d %v", n, err)
	}
	q.ReadErr(&ee)
	if ee.OpContext != "e2" || ee.Err != provider.ECANCELED {
		t.Fatalf("negative Err normalised: %+v", ee)
	}
	q.ReadErr(&ee)
	if ee.OpContext != "e3" || ee.Err != provider.EOTHER {
		t.Fatalf("zero Err normalised: %+v", ee)
	}
	if err := q.ReadErr(&ee); err != provider.EAGAIN {
		t.Fatalf("after last error: %v", err)
	}
	if err := q.WriteErr(nil); err != provider.EINVAL {
		t.Fatalf("WriteErr(nil) = %v", err)
	}
	if err := q.ReadErr(nil); err != provider.EINVAL {
		t.Fatalf("ReadErr(nil) = %v", err)
	}
}

func TestErrData(t *testing.T) {
	q := mustNew(t, Config{})
	data := []byte("provider-specific error data")
	src := append([]byte(nil), data...)
	for i := 0; i < 4; i++ {
		q.WriteErr(&provider.CQErrEntry{Err: provider.EIO, ErrData: src})
	}
	src[0] = 'X' // the CQ copied it
	// User buffer: copy up to its length.
	small := make([]byte, 8)
	ee := provider.CQErrEntry{ErrData: small}
	if err := q.ReadErr(&ee); err != nil {
		t.Fatal(err)
	}
	if string(ee.ErrData) != string(data[:8]) || &ee.ErrData[0] != &small[0] {
		t.Fatalf("copy into user buffer: %q", ee.ErrData)
	}
	big := make([]byte, 100)
	ee = provider.CQErrEntry{ErrData: big}
	q.ReadErr(&ee)
	if string(ee.ErrData) != string(data) || &ee.ErrData[0] != &big[0] {
		t.Fatalf("copy into big user buffer: %q", ee.ErrData)
	}
	// No buffer: CQ-owned buffer.
	ee = provider.CQErrEntry{}
	q.ReadErr(&ee)
	if string(ee.ErrData) != string(data) {
		t.Fatalf("CQ-owned err_data: %q", ee.ErrData)
	}
	owned := ee.ErrData
	// Reusing the entry (ErrData now points at the CQ's buffer) asks again for
	// a CQ-owned buffer, with full data.
	q.WriteErr(&provider.CQErrEntry{Err: provider.EIO, ErrData: []byte("a much longer error data string than before")})
	q.ReadErr(&ee) // the 4th entry
	q.ReadErr(&ee)
	if string(ee.ErrData) != "a much longer error data string than before" {
		t.Fatalf("reused entry: %q", ee.ErrData)
	}
	_ = owned
	// Legacy API: always CQ-owned.
	lq := mustNew(t, Config{LegacyErrData: true})
	lq.WriteErr(&provider.CQErrEntry{Err: provider.EIO, ErrData: data})
	user := make([]byte, 4)
	ee = provider.CQErrEntry{ErrData: user}
	lq.ReadErr(&ee)
	if string(ee.ErrData) != string(data) {
		t.Fatalf("legacy err_data: %q", ee.ErrData)
	}
	// No data at all.
	lq.WriteErr(&provider.CQErrEntry{Err: provider.EIO})
	lq.ReadErr(&ee)
	if ee.ErrData != nil {
		t.Fatalf("empty err_data: %q", ee.ErrData)
	}
}

func TestOverrun(t *testing.T) {
	q := mustNew(t, Config{Size: 2})
	if err := q.Write(1, 0, 0, nil, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	q.Write(2, 0, 0, nil, 0, 0, 0)
	if err := q.Write(3, 0, 0, nil, 0, 0, 0); err != provider.EOVERRUN {
		t.Fatalf("write to a full CQ: %v", err)
	}
	if err := q.WriteErr(&provider.CQErrEntry{Err: provider.EIO}); err != provider.EOVERRUN {
		t.Fatalf("writeerr to a full CQ: %v", err)
	}
	ent := make([]provider.CQEntry, 1)
	if n, err := q.Read(ent); n != 1 || err != nil || ent[0].OpContext != 1 {
		t.Fatalf("read 1: %d %v", n, err)
	}
	// Overrun is fatal: space freed by reading is not reused.
	if err := q.Write(4, 0, 0, nil, 0, 0, 0); err != provider.EOVERRUN {
		t.Fatalf("write after overrun: %v", err)
	}
	if n, err := q.Read(ent); n != 1 || err != nil || ent[0].OpContext != 2 {
		t.Fatalf("read 2: %d %v", n, err)
	}
	for i := 0; i < 2; i++ {
		if n, err := q.Read(ent); n != 0 || err != provider.EOVERRUN {
			t.Fatalf("drained overrun CQ: %d %v", n, err)
		}
	}
	if n, err := q.Read(nil); n != 0 || err != provider.EOVERRUN {
		t.Fatalf("nil read of overrun CQ: %d %v", n, err)
	}
	if ov, dropped := q.Overrun(); !ov || dropped != 3 {
		t.Fatalf("Overrun() = %v %d", ov, dropped)
	}
	var ee provider.CQErrEntry
	if err := q.ReadErr(&ee); err != provider.EAGAIN {
		t.Fatalf("readerr on overrun CQ: %v", err)
	}
}

func TestSourceAddresses(t *testing.T) {
	q := mustNew(t, Config{})
	q.Write("a", 0, 0, nil, 0, 0, 5)
	q.WriteUnknownSrc("b", provider.FlagRecv, 1, nil, 0, 0, []byte{1, 2, 3})
	ent := make([]provider.CQEntry, 2)
	src := []provider.Addr{77, 77}
	if n, err := q.ReadFrom(ent, src); n != 2 || err != nil || src[0] != 5 || src[1] != provider.AddrNotAvail {
		t.Fatalf("readfrom = %d %v %v", n, err, src)
	}

	se := mustNew(t, Config{SourceErr: true, Format: provider.CQFormatMsg})
	se.Write("a", provider.FlagRecv, 1, nil, 0, 0, 5)
	se.WriteUnknownSrc("b", provider.FlagRecv|provider.FlagMsg, 4, nil, 0, 0, []byte{10, 0, 0, 1})
	n, err := se.ReadFrom(ent, src)
	if n != 1 || err != nil || src[0] != 5 {
		t.Fatalf("FI_SOURCE_ERR first read: %d %v", n, err)
	}
	if _, err := se.ReadFrom(ent, src); err != provider.EAVAIL {
		t.Fatalf("unknown source with FI_SOURCE_ERR: %v, want EAVAIL", err)
	}
	var ee provider.CQErrEntry
	if err := se.ReadErr(&ee); err != nil {
		t.Fatal(err)
	}
	if ee.Err != provider.EADDRNOTAVAIL || !bytes.Equal(ee.ErrData, []byte{10, 0, 0, 1}) || ee.OpContext != "b" ||
		ee.Len != 4 || ee.Flags != provider.FlagRecv|provider.FlagMsg {
		t.Fatalf("FI_EADDRNOTAVAIL entry %+v", ee)
	}
}

func TestSReadTimeout(t *testing.T) {
	q := mustNew(t, Config{WaitObj: provider.WaitUnspec})
	ent := make([]provider.CQEntry, 1)
	start := time.Now()
	n, err := q.SRead(ent, nil, 0, start.Add(200*time.Millisecond), nil)
	el := time.Since(start)
	if n != 0 || err != provider.EAGAIN {
		t.Fatalf("sread timeout = %d, %v", n, err)
	}
	if el < 190*time.Millisecond || el > 1500*time.Millisecond {
		t.Fatalf("sread(200ms) took %v", el)
	}
}

func TestSReadWaitNone(t *testing.T) {
	q := mustNew(t, Config{WaitObj: provider.WaitNone})
	start := time.Now()
	if _, err := q.SRead(make([]provider.CQEntry, 1), nil, 0, time.Time{}, nil); err != provider.ENOSYS {
		t.Fatalf("sread on FI_WAIT_NONE: %v", err)
	}
	if time.Since(start) > 100*time.Millisecond {
		t.Fatal("sread on FI_WAIT_NONE blocked")
	}
	if err := q.Signal(); err != provider.ENOSYS {
		t.Fatalf("signal on FI_WAIT_NONE: %v", err)
	}
	if err := q.TryWait(); err != provider.EINVAL {
		t.Fatalf("trywait on FI_WAIT_NONE: %v", err)
	}
	if _, err := q.WaitFD(); err != provider.ENODATA {
		t.Fatalf("getwait on FI_WAIT_NONE: %v", err)
	}
}

func TestSReadArgs(t *testing.T) {
	q := mustNew(t, Config{WaitObj: provider.WaitUnspec})
	if _, err := q.SRead(nil, nil, 0, time.Time{}, nil); err != provider.EINVAL {
		t.Fatalf("sread(nil) = %v", err)
	}
	if _, err := q.SRead(make([]provider.CQEntry, 2), make([]provider.Addr, 1), 0, time.Time{}, nil); err != provider.EINVAL {
		t.Fatalf("sread short src = %v", err)
	}
}

func TestSReadWakesOnWrite(t *testing.T) {
	for _, w := range []provider.WaitObj{provider.WaitUnspec, provider.WaitFD, provider.WaitMutexCond, provider.WaitYield} {
		q := mustNew(t, Config{WaitObj: w})
		res := make(chan error, 1)
		ent := make([]provider.CQEntry, 4)
		go func() {
			n, err := q.SRead(ent, nil, 0, time.Now().Add(5*time.Second), nil)
			if err == nil && (n != 1 || ent[0].OpContext != "late") {
				err = errors.New("wrong entry")
			}
			res <- err
		}()
		time.Sleep(10 * time.Millisecond)
		start := time.Now()
		q.Write("late", 0, 0, nil, 0, 0, 0)
		select {
		case err := <-res:
			if err != nil {
				t.Fatalf("%v: %v", w, err)
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("%v: woke after %v", w, d)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: sread not woken by a write", w)
		}
	}
}

func TestSReadThreshold(t *testing.T) {
	q := mustNew(t, Config{WaitObj: provider.WaitUnspec, WaitCond: provider.CQCondThreshold})
	ent := make([]provider.CQEntry, 8)
	res := make(chan int, 1)
	go func() {
		n, _ := q.SRead(ent, nil, 3, time.Now().Add(5*time.Second), nil)
		res <- n
	}()
	for i := 0; i < 2; i++ {
		time.Sleep(5 * time.Millisecond)
		q.Write(i, 0, 0, nil, 0, 0, 0)
	}
	select {
	case n := <-res:
		t.Fatalf("sread returned %d entries before the threshold of 3", n)
	case <-time.After(30 * time.Millisecond):
	}
	q.Write(2, 0, 0, nil, 0, 0, 0)
	select {
	case n := <-res:
		if n != 3 {
			t.Fatalf("sread returned %d, want 3", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("threshold reached but sread still blocked")
	}
	// On timeout, entries below the threshold are returned.
	q.Write(9, 0, 0, nil, 0, 0, 0)
	n, err := q.SRead(ent, nil, 5, time.Now().Add(20*time.Millisecond), nil)
	if n != 1 || err != nil {
		t.Fatalf("timeout below threshold: %d %v", n, err)
	}
	// Threshold larger than the slice is capped by it.
	q.Write(1, 0, 0, nil, 0, 0, 0)
	n, err = q.SRead(ent[:1], nil, 100, time.Now().Add(5*time.Second), nil)
	if n != 1 || err != nil {
		t.Fatalf("capped threshold: %d %v", n, err)
	}
	// An error entry satisfies the wait.
	q.WriteErr(&provider.CQErrEntry{Err: provider.EIO})
	if _, err := q.SRead(ent, nil, 5, time.Now().Add(5*time.Second), nil); err != provider.EAVAIL {
		t.Fatalf("error entry under threshold: %v", err)
	}
}

func TestSignal(t *testing.T) {
	q := mustNew(t, Config{WaitObj: provider.WaitUnspec, Size: 1})
	// Signal before sread: sticky.
	if err := q.Signal(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n, err := q.SRead(make([]provider.CQEntry, 1), nil, 0, time.Now().Add(2*time.Second), nil)
	if n != 0 || err != provider.EAGAIN || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("signalled sread = %d %v after %v", n, err, time.Since(start))
	}
	// Consumed: the next sread waits for its timeout.
	start = time.Now()
	q.SRead(make([]provider.CQEntry, 1), nil, 0, time.Now().Add(30*time.Millisecond), nil)
	if time.Since(start) < 25*time.Millisecond {
		t.Fatal("signal was not consumed")
	}
	// Signal wakes a blocked reader.
	res := make(chan error, 1)
	go func() {
		_, err := q.SRead(make([]provider.CQEntry, 1), nil, 0, time.Time{}, nil)
		res <- err
	}()
	time.Sleep(10 * time.Millisecond)
	q.Signal()
	select {
	case err := <-res:
		if err != provider.EAGAIN {
			t.Fatalf("signal wake: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("signal did not wake sread")
	}
}

func TestCloseUnblocksSRead(t *testing.T) {
	q, _ := New(Config{WaitObj: provider.WaitUnspec})
	res := make(chan error, 1)
	go func() {
		_, err := q.SRead(make([]provider.CQEntry, 1), nil, 0, time.Time{}, nil)
		res <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if err != provider.EBADF {
			t.Fatalf("sread on close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close did not unblock sread")
	}
	if err := q.Close(); err != provider.EBADF {
		t.Fatalf("second close: %v", err)
	}
	if _, err := q.Read(make([]provider.CQEntry, 1)); err != provider.EBADF {
		t.Fatalf("read after close: %v", err)
	}
	if err := q.Write(1, 0, 0, nil, 0, 0, 0); err != provider.EBADF {
		t.Fatalf("write after close: %v", err)
	}
	if err := q.AddSource(&progSrc{}); err != provider.EBADF {
		t.Fatalf("AddSource after close: %v", err)
	}
}

func TestSReadDone(t *testing.T) {
	q := mustNew(t, Config{WaitObj: provider.WaitUnspec})
	done := make(chan struct{})
	res := make(chan error, 1)
	go func() {
		_, err := q.SRead(make([]provider.CQEntry, 1), nil, 0, time.Time{}, done)
		res <- err
	}()
	time.Sleep(5 * time.Millisecond)
	close(done)
	select {
	case err := <-res:
		if err == nil || err == provider.EAGAIN {
			t.Fatalf("done: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("done did not unblock sread")
	}
}

func TestWaitFDPollable(t *testing.T) {
	q := mustNew(t, Config{WaitObj: provider.WaitFD})
	fd, err := q.WaitFD()
	if err != nil || fd < 0 {
		t.Fatalf("WaitFD = %d, %v", fd, err)
	}
	if err := q.TryWait(); err != nil {
		t.Fatalf("trywait on an empty CQ: %v", err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("fd readable on an empty CQ")
	}
	q.Write("x", 0, 0, nil, 0, 0, 0)
	if ok, err := sys.PollReadable(fd, 1000); !ok || err != nil {
		t.Fatalf("fd not readable after a write: %v", err)
	}
	if err := q.TryWait(); err != provider.EAGAIN {
		t.Fatalf("trywait with an entry: %v", err)
	}
	q.Read(make([]provider.CQEntry, 1))
	if err := q.TryWait(); err != nil {
		t.Fatalf("trywait after draining: %v", err)
	}
	if ok, _ := sys.PollReadable(fd, 0); ok {
		t.Fatal("fd still readable after trywait on an empty CQ")
	}
	// A write after trywait makes it readable again.
	q.Write("y", 0, 0, nil, 0, 0, 0)
	if ok, _ := sys.PollReadable(fd, 1000); !ok {
		t.Fatal("fd not readable after the second write")
	}
	// Signal makes it readable too.
	q.Read(make([]provider.CQEntry, 1))
	q.TryWait()
	q.Signal()
	if ok, _ := sys.PollReadable(fd, 1000); !ok {
		t.Fatal("fd not readable after signal")
	}
	for _, w := range []provider.WaitObj{provider.WaitUnspec, provider.WaitMutexCond, provider.WaitYield} {
		o := mustNew(t, Config{WaitObj: w})
		if _, err := o.WaitFD(); err != provider.ENOSYS {
			t.Fatalf("%v: WaitFD = %v", w, err)
		}
		if err := o.TryWait(); err != nil {
			t.Fatalf("%v: TryWait = %v", w, err)
		}
	}
}

func TestConcurrentWritersReaders(t *testing.T) {
	q := mustNew(t, Config{Size: 1 << 16, WaitObj: provider.WaitUnspec, Format: provider.CQFormatTagged})
	const writers, per = 4, 2000
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if i%100 == 99 {
					q.WriteErr(&provider.CQErrEntry{Err: provider.EIO, Tag: uint64(w)})
				} else {
					q.Write(w, 0, 0, nil, 0, uint64(i), 0)
				}
			}
		}(w)
	}
	last := make([]int, writers)
	for i := range last {
		last[i] = -1
	}
	got, errs := 0, 0
	ent := make([]provider.CQEntry, 16)
	deadline := time.Now().Add(20 * time.Second)
	for got+errs < writers*per && time.Now().Before(deadline) {
		n, err := q.SRead(ent, nil, 0, time.Now().Add(time.Second), nil)
		if err == provider.EAVAIL {
			var ee provider.CQErrEntry
			if q.ReadErr(&ee) == nil {
				errs++
			}
			continue
		}
		for _, e := range ent[:n] {
			w := e.OpContext.(int)
			if int(e.Tag) <= last[w] {
				t.Fatalf("writer %d: tag %d after %d", w, e.Tag, last[w])
			}
			last[w] = int(e.Tag)
		}
		got += n
	}
	wg.Wait()
	if got != writers*(per-per/100) || errs != writers*per/100 {
		t.Fatalf("got %d successes and %d errors", got, errs)
	}
}

func TestAllocs(t *testing.T) {
	q := mustNew(t, Config{Format: provider.CQFormatTagged, WaitObj: provider.WaitFD})
	src := &progSrc{q: q}
	q.AddSource(src)
	ent := make([]provider.CQEntry, 4)
	addrs := make([]provider.Addr, 4)
	ctx := new(int)
	buf := make([]byte, 8)
	round := func() {
		q.Write(ctx, provider.FlagRecv, 8, buf, 1, 2, 3)
		q.ReadFrom(ent, addrs)
	}
	round()
	if n := testing.AllocsPerRun(1000, round); n != 0 {
		t.Fatalf("Write+Read allocates %v", n)
	}
	if n := testing.AllocsPerRun(1000, func() { q.Read(ent) }); n != 0 {
		t.Fatalf("empty Read allocates %v", n)
	}
	if n := testing.AllocsPerRun(1000, func() { q.Read(nil) }); n != 0 {
		t.Fatalf("nil Read allocates %v", n)
	}
	e := provider.CQErrEntry{Err: provider.EIO, ErrData: []byte("data")}
	var out provider.CQErrEntry
	errRound := func() {
		q.WriteErr(&e)
		out.ErrData = nil
		q.ReadErr(&out)
	}
	errRound()
	if n := testing.AllocsPerRun(1000, errRound); n != 0 {
		t.Fatalf("WriteErr+ReadErr allocates %v", n)
	}
}

func TestStrError(t *testing.T) {
	q := mustNew(t, Config{})
	if s := q.StrError(-int(provider.ETRUNC), nil); s != "Truncation error" {
		t.Fatalf("StrError = %q", s)
	}
}

func BenchmarkWriteRead(b *testing.B) {
	q, _ := New(Config{Format: provider.CQFormatTagged})
	defer q.Close()
	ent := make([]provider.CQEntry, 1)
	ctx := new(int)
	b.ReportAllocs()
	for b.Loop() {
		q.Write(ctx, provider.FlagSend, 0, nil, 0, 0, 0)
		q.Read(ent)
	}
}

func BenchmarkReadEmpty(b *testing.B) {
	q, _ := New(Config{})
	defer q.Close()
	ent := make([]provider.CQEntry, 1)
	b.ReportAllocs()
	for b.Loop() {
		q.Read(ent)
	}
}

func TestManyBlockedReaders(t *testing.T) {
	q, _ := New(Config{WaitObj: provider.WaitUnspec})
	const readers = 8
	got := make(chan int, readers)
	for r := 0; r < readers; r++ {
		go func() {
			total := 0
			ent := make([]provider.CQEntry, 2)
			for {
				n, err := q.SRead(ent, nil, 0, time.Time{}, nil)
				if err == provider.EBADF {
					got <- total
					return
				}
				total += n
			}
		}()
	}
	time.Sleep(10 * time.Millisecond)
	for i := 0; i < 1000; i++ {
		q.Write(i, 0, 0, nil, 0, 0, 0)
		if i%100 == 0 {
			q.Signal()
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for q.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if q.Len() != 0 {
		t.Fatalf("%d entries left unread by %d blocked readers", q.Len(), readers)
	}
	q.Close()
	total := 0
	for r := 0; r < readers; r++ {
		select {
		case n := <-got:
			total += n
		case <-time.After(5 * time.Second):
			t.Fatal("a reader stayed blocked after Close")
		}
	}
	if total != 1000 {
		t.Fatalf("readers got %d entries, want 1000", total)
	}
}

// Reserve holds room for a later write: unreserved writes cannot take it,
// reserved writes always find it, and a full CQ refuses reservations
// instead of overrunning (FI_RM_ENABLED providers answer FI_EAGAIN).
func TestReserve(t *testing.T) {
	q := mustNew(t, Config{Size: 2})
	if !q.Reserve() {
		t.Fatal("reserve on an empty CQ")
	}
	if err := q.Write(1, 0, 0, nil, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if !q.Full() || q.Reserve() {
		t.Fatal("one entry plus one reservation must fill a size-2 CQ")
	}
	if err := q.Write(2, 0, 0, nil, 0, 0, 0); err != provider.EOVERRUN {
		t.Fatalf("unreserved write into reserved room: %v", err)
	}
	q = mustNew(t, Config{Size: 2})
	q.Reserve()
	q.Reserve()
	if err := q.WriteReserved(1, 0, 0, nil, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := q.WriteErrReserved(&provider.CQErrEntry{OpContext: 2, Err: provider.EIO}); err != nil {
		t.Fatal(err)
	}
	if q.Reserve() || !q.Full() {
		t.Fatal("full CQ accepted a reservation")
	}
	ent := make([]provider.CQEntry, 2)
	if n, err := q.Read(ent); n != 1 || err != nil || ent[0].OpContext != 1 {
		t.Fatalf("read: %d %v", n, err)
	}
	if !q.Reserve() {
		t.Fatal("reserve after a read freed a slot")
	}
	q.Unreserve()
	if q.Full() {
		t.Fatal("unreserve did not give the slot back")
	}
	if ov, _ := q.Overrun(); ov {
		t.Fatal("reservations overran the CQ")
	}
	if err := q.WriteErrReserved(nil); err != provider.EINVAL {
		t.Fatalf("nil reserved error entry: %v", err)
	}
	q.Close()
	if q.Reserve() || !q.Full() {
		t.Fatal("closed CQ accepted a reservation")
	}
}

func TestReserveAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	q := mustNew(t, Config{Size: 4})
	ent := make([]provider.CQEntry, 1)
	ctx := new(int)
	n := testing.AllocsPerRun(100, func() {
		if q.Reserve() {
			q.WriteReserved(ctx, provider.FlagSend, 0, nil, 0, 0, provider.AddrNotAvail)
		}
		q.Read(ent)
	})
	if n != 0 {
		t.Fatalf("reserve+write+read allocates %v times", n)
	}
}

// The lock-free checks (an empty Read, Full) agree with the locked state
// through every kind of change: writes, reads, reservations, overrun,
// error entries and Close.
func TestLockFreeChecks(t *testing.T) {
	q := mustNew(t, Config{Size: 2})
	src := &progSrc{q: q}
	q.AddSource(src)
	ent := make([]provider.CQEntry, 2)
	read := func() (int, error) { return q.Read(ent) }
	if n, err := read(); n != 0 || err != provider.EAGAIN || q.Full() {
		t.Fatalf("empty: %d %v full=%v", n, err, q.Full())
	}
	// Reservations alone leave the CQ empty: reads still drive progress.
	if !q.Reserve() {
		t.Fatal("reserve")
	}
	calls := src.calls.Load()
	src.emit.Store(1)
	if n, err := read(); n != 1 || err != nil || src.calls.Load() != calls+1 {
		t.Fatalf("read with a reservation held: %d %v, progress calls %d -> %d", n, err, calls, src.calls.Load())
	}
	q.Write(1, 0, 0, nil, 0, 0, 0)
	if !q.Full() {
		t.Fatal("an entry plus a reservation fill a size-2 CQ")
	}
	q.Unreserve()
	if q.Full() {
		t.Fatal("full after Unreserve")
	}
	if n, _ := read(); n != 1 {
		t.Fatalf("read %d", n)
	}
	q.WriteErr(&provider.CQErrEntry{Err: provider.EIO})
	if n, err := read(); n != 0 || err != provider.EAVAIL {
		t.Fatalf("error at the head: %d %v", n, err)
	}
	var ee provider.CQErrEntry
	if q.ReadErr(&ee) != nil {
		t.Fatal("ReadErr")
	}
	if n, err := read(); n != 0 || err != provider.EAGAIN || q.Full() {
		t.Fatalf("after ReadErr: %d %v full=%v", n, err, q.Full())
	}
	// Overrun: drained entries first, then EOVERRUN, and Full.
	for i := 0; i < 3; i++ {
		q.Write(i, 0, 0, nil, 0, 0, 0)
	}
	if !q.Full() {
		t.Fatal("overrun CQ not full")
	}
	if n, err := read(); n != 2 || err != nil {
		t.Fatalf("before the overrun: %d %v", n, err)
	}
	if n, err := read(); n != 0 || err != provider.EOVERRUN || !q.Full() {
		t.Fatalf("overrun: %d %v full=%v", n, err, q.Full())
	}
	q2 := mustNew(t, Config{})
	q2.Close()
	if n, err := q2.Read(ent); n != 0 || err != provider.EBADF || !q2.Full() {
		t.Fatalf("closed: %d %v full=%v", n, err, q2.Full())
	}
}

// Writers and a busy-polling reader (the lock-free empty path): every
// entry is read once, and Full never reports room that is not there.
func TestLockFreeReadConcurrent(t *testing.T) {
	const writers, per, size = 2, 3000, 64
	q := mustNew(t, Config{Size: size})
	var wg sync.WaitGroup
	var lost atomic.Int64
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				for !q.Reserve() {
					runtime.Gosched()
				}
				if q.WriteReserved(i, 0, 0, nil, 0, 0, 0) != nil {
					lost.Add(1)
				}
			}
		}()
	}
	ent := make([]provider.CQEntry, 8)
	got := 0
	deadline := time.Now().Add(20 * time.Second)
	for got < writers*per && time.Now().Before(deadline) {
		n, err := q.Read(ent)
		if err != nil && err != provider.EAGAIN {
			t.Fatal(err)
		}
		got += n
		if q.Len() > size {
			t.Fatalf("%d entries in a size-%d CQ", q.Len(), size)
		}
	}
	wg.Wait()
	if got != writers*per || lost.Load() != 0 {
		t.Fatalf("read %d of %d, %d reserved writes failed", got, writers*per, lost.Load())
	}
	if ov, _ := q.Overrun(); ov {
		t.Fatal("overrun")
	}
}

// With ResourceMgmt (FI_RM_ENABLED) the CQ never overruns: an unreserved
// write that finds it full keeps its entry beyond Size (libfabric's util CQ
// overflow list), and reservations are refused until the reader has
// brought it back under Size.
func TestResourceMgmtOverflow(t *testing.T) {
	q, err := New(Config{Size: 2, Format: provider.CQFormatContext, ResourceMgmt: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if !q.Reserve() {
		t.Fatal("reserve in an empty CQ")
	}
	for i := 1; i <= 3; i++ {
		if err := q.Write(i, 0, 0, nil, 0, 0, 0); err != nil {
			t.Fatalf("unreserved write %d beyond the size: %v", i, err)
		}
	}
	if err := q.WriteErr(&provider.CQErrEntry{OpContext: 4, Err: provider.EIO}); err != nil {
		t.Fatalf("unreserved error write beyond the size: %v", err)
	}
	if err := q.WriteReserved(0, 0, 0, nil, 0, 0, 0); err != nil {
		t.Fatalf("reserved write: %v", err)
	}
	if q.Reserve() || !q.Full() {
		t.Fatal("reservation granted in a CQ holding more than its size")
	}
	if ov, dropped := q.Overrun(); ov || dropped != 0 {
		t.Fatalf("overrun %v, %d dropped", ov, dropped)
	}
	ents := make([]provider.CQEntry, 8)
	n, err := q.Read(ents)
	if n != 3 || err != nil || ents[0].OpContext != 1 || ents[2].OpContext != 3 {
		t.Fatalf("read = %d, %v, %+v; want the 3 entries before the error", n, err, ents[:n])
	}
	var ee provider.CQErrEntry
	if err := q.ReadErr(&ee); err != nil || ee.OpContext != 4 {
		t.Fatalf("readerr = %v, %+v", err, ee)
	}
	if q.Full() {
		t.Fatal("full with one entry left of two")
	}
	if n, err := q.Read(ents); n != 1 || err != nil || ents[0].OpContext != 0 {
		t.Fatalf("read of the reserved entry = %d, %v", n, err)
	}
	if _, err := q.Read(ents); err != provider.EAGAIN {
		t.Fatalf("read of the drained CQ = %v, want EAGAIN (never EOVERRUN)", err)
	}
}

// BenchmarkReserveWriteRead is BenchmarkWriteRead with a reservation
// first (FI_RM_ENABLED): the difference is what the reservation costs on
// the hot path.
func BenchmarkReserveWriteRead(b *testing.B) {
	q, _ := New(Config{Format: provider.CQFormatTagged, ResourceMgmt: true})
	defer q.Close()
	ent := make([]provider.CQEntry, 1)
	ctx := new(int)
	b.ReportAllocs()
	for b.Loop() {
		if !q.Reserve() {
			b.Fatal("no room")
		}
		q.WriteReserved(ctx, provider.FlagSend, 0, nil, 0, 0, 0)
		q.Read(ent)
	}
}

// msgSrc is a progress source that writes with WriteMsg, as the udp direct
// receive path does: ctxs[i] for the i-th completion of the next Progress.
type msgSrc struct {
	q     *CQ
	first any // written with Write before ctxs, if not nil
	ctxs  []any
}

func (s *msgSrc) Progress() {
	if s.first != nil {
		s.q.Write(s.first, provider.FlagRecv, 0, nil, 0, 0, 0)
		s.first = nil
	}
	for _, c := range s.ctxs {
		s.q.WriteMsg(c, provider.FlagRecv|provider.FlagMsg, 3, 0, 7)
	}
	s.ctxs = nil
}

// TestReadHandOff: a completion WriteMsg writes while the reader drives
// progress into an empty CQ reaches the reader directly; it is read once,
// in order with the completions the ring holds, with its format and source.
func TestReadHandOff(t *testing.T) {
	q := mustNew(t, Config{Format: provider.CQFormatMsg})
	s := &msgSrc{q: q}
	q.AddSource(s)
	ent := make([]provider.CQEntry, 4)
	src := make([]provider.Addr, 4)

	s.ctxs = []any{"a"}
	n, err := q.ReadFrom(ent, src)
	want := provider.CQEntry{OpContext: "a", Flags: provider.FlagRecv | provider.FlagMsg, Len: 3}
	if n != 1 || err != nil || ent[0].OpContext != want.OpContext || ent[0].Flags != want.Flags || ent[0].Len != 3 ||
		src[0] != 7 {
		t.Fatalf("handed-off read = %d %v %+v src %v, want %+v src 7", n, err, ent[0], src[0], want)
	}
	if n, err := q.Read(ent); n != 0 || err != provider.EAGAIN || q.Len() != 0 {
		t.Fatalf("read after the hand-off = %d %v (Len %d), want EAGAIN", n, err, q.Len())
	}

	// Several completions in one progress call: the first is handed
	// over, the rest queue behind it and come in the same read.
	s.ctxs = []any{"b", "c", "d"}
	n, err = q.ReadFrom(ent[:2], src[:2])
	if n != 2 || err != nil || ent[0].OpContext != "b" || ent[1].OpContext != "c" || src[1] != 7 {
		t.Fatalf("read of three = %d %v %v %v", n, err, ent[0].OpContext, ent[1].OpContext)
	}
	if n, err := q.Read(ent); n != 1 || err != nil || ent[0].OpContext != "d" {
		t.Fatalf("third = %d %v %v", n, err, ent[0].OpContext)
	}

	// A CQ that is no longer empty takes no hand-off: the entry the
	// ring took first (here in the same progress call) comes first.
	s.first, s.ctxs = "queued", []any{"late"}
	if n, err := q.Read(ent[:1]); n != 1 || err != nil || ent[0].OpContext != "queued" {
		t.Fatalf("read = %d %v %v, want queued", n, err, ent[0].OpContext)
	}
	if n, err := q.Read(ent[:1]); n != 1 || err != nil || ent[0].OpContext != "late" {
		t.Fatalf("read = %d %v %v, want late", n, err, ent[0].OpContext)
	}
	q.Write("queued", provider.FlagSend, 0, nil, 0, 0, 0)
	s.ctxs = []any{"late"}
	q.Progress()
	for _, w := range []any{"queued", "late"} {
		if n, err := q.Read(ent[:1]); n != 1 || err != nil || ent[0].OpContext != w {
			t.Fatalf("read = %d %v %v, want %v", n, err, ent[0].OpContext, w)
		}
	}
	// An error at the ring's head after a hand-off waits for the next read.
	s.ctxs = []any{"e"}
	q.Progress() // nobody armed: "e" goes to the ring
	q.WriteErr(&provider.CQErrEntry{OpContext: "err", Err: provider.EIO})
	if n, err := q.Read(ent); n != 1 || err != nil || ent[0].OpContext != "e" {
		t.Fatalf("read before the error = %d %v", n, err)
	}
	if n, err := q.Read(ent); n != 0 || err != provider.EAVAIL {
		t.Fatalf("read at the error = %d %v, want EAVAIL", n, err)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		s.ctxs = nil
		q.Read(ent)
	}); allocs != 0 {
		t.Fatalf("%v allocs per empty read", allocs)
	}
}

// TestHandOffConcurrent: readers that drive progress and writers using
// WriteMsg and Write from other goroutines: every completion is read
// exactly once (run with -race).
func TestHandOffConcurrent(t *testing.T) {
	q := mustNew(t, Config{Size: 1 << 16})
	const writers, per, readers = 3, 3000, 3
	var got sync.Map
	var total atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				c := w*per + i
				if i%3 == 0 {
					q.Write(c, provider.FlagRecv, 0, nil, 0, 0, 0)
				} else {
					q.WriteMsg(c, provider.FlagRecv, 0, 0, 0)
				}
			}
		}(w)
	}
	// A source that writes from inside the readers' progress calls.
	var next atomic.Int64
	if err := q.AddSource(&progressFunc{func() {
		if c := next.Add(1) - 1; c < per {
			q.WriteMsg(writers*per+int(c), provider.FlagRecv, 0, 0, 0)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	const want = (writers + 1) * per
	deadline := time.Now().Add(20 * time.Second)
	var rg sync.WaitGroup
	for r := 0; r < readers; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			ent := make([]provider.CQEntry, 1+r)
			for total.Load() < want && time.Now().Before(deadline) {
				n, _ := q.Read(ent)
				for _, e := range ent[:n] {
					if _, dup := got.LoadOrStore(e.OpContext, true); dup {
						t.Errorf("completion %v read twice", e.OpContext)
					}
				}
				total.Add(int64(n))
			}
		}()
	}
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		rg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatalf("readers or writers stuck after 30s (%d of %d read)", total.Load(), want)
	}
	if total.Load() != want {
		t.Fatalf("read %d completions, want %d", total.Load(), want)
	}
}

type progressFunc struct{ f func() }

func (p *progressFunc) Progress() { p.f() }
