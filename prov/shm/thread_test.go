package shm_test

import (
	"errors"
	"testing"
	"time"

	fabric "github.com/gofabric/fabric"
)

// TestGetInfoThreading: no threading hint gets FI_THREAD_SAFE; a hint for
// a less parallel model gets it back.
func TestGetInfoThreading(t *testing.T) {
	for _, th := range []fabric.Threading{fabric.ThreadUnspec, fabric.ThreadSafe, fabric.ThreadFID,
		fabric.ThreadEndpoint, fabric.ThreadCompletion, fabric.ThreadDomain} {
		infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, hints(nodeOpts{threading: th}))
		if err != nil {
			t.Fatalf("%v: %v", th, err)
		}
		want := th
		if th == fabric.ThreadUnspec {
			want = fabric.ThreadSafe
		}
		for _, in := range infos {
			if in.DomainAttr.Threading != want {
				t.Errorf("hint %v: threading %v, want %v", th, in.DomainAttr.Threading, want)
			}
		}
	}
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range infos {
		if in.FabricAttr.ProvName == "shm" {
			n++
			if in.DomainAttr.Threading != fabric.ThreadSafe {
				t.Errorf("no hints: threading %v", in.DomainAttr.Threading)
			}
		}
	}
	if n == 0 {
		t.Error("no hints: no shm info")
	}
}

// TestThreadDomainPingPong: endpoints of FI_THREAD_DOMAIN domains (no
// locks) exchange every protocol's sizes, tagged and not, send and inject.
func TestThreadDomainPingPong(t *testing.T) {
	for _, th := range []fabric.Threading{fabric.ThreadDomain, fabric.ThreadCompletion} {
		for _, size := range []int{0, 64, 4096, 65536, 1 << 20} {
			for _, tagged := range []bool{false, true} {
				inject := size <= 4096
				rt := roundTripOpts(t, nodeOpts{threading: th}, size, tagged, inject)
				for range 3 {
					rt()
				}
			}
		}
	}
}

// TestThreadDomainBlockingWaitThenClose reproduces the pattern that made
// the serial (FI_THREAD_DOMAIN) endpoint path fault: a blocking read
// whose watcher (internal/progress) calls the endpoint's Progress from its
// own goroutine, then the application's own calls and Close right after
// the read returns. A sender in another domain keeps commands arriving so
// that the watcher's progress is busy when the read times out. Under
// -race any progress call overlapping the application's calls is
// reported; without the watchers' serialisation Close could unmap the
// region under a watcher (SIGSEGV).
func TestThreadDomainBlockingWaitThenClose(t *testing.T) {
	iters := 150
	if testing.Short() {
		iters = 30
	}
	for _, th := range []fabric.Threading{fabric.ThreadDomain, fabric.ThreadCompletion} {
		t.Run(th.String(), func(t *testing.T) {
			blockingWaitThenClose(t, th, iters)
		})
	}
}

func blockingWaitThenClose(t *testing.T, th fabric.Threading, iters int) {
	h := hints(nodeOpts{threading: th})
	infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
	if err != nil {
		t.Fatal(err)
	}
	info := infos[0]
	fab, err := fabric.Open(info)
	if err != nil {
		t.Fatal(err)
	}
	defer fab.Close()
	dom, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Close()
	cq, err := dom.OpenCQ(&fabric.CQAttr{Format: fabric.CQFormatTagged, Size: 1024,
		WaitObj: fabric.WaitUnspec, WaitCond: fabric.CQCondThreshold})
	if err != nil {
		t.Fatal(err)
	}
	defer cq.Close()
	av, err := dom.OpenAV(&fabric.AVAttr{})
	if err != nil {
		t.Fatal(err)
	}
	defer av.Close()
	// The sender: a thread-safe endpoint of its own domain, driven by its
	// own goroutine.
	snd := newNode(t, nodeOpts{})
	ents := make([]fabric.CQEntry, 64)
	bufs := make([][]byte, 64)
	for i := range bufs {
		bufs[i] = make([]byte, 64)
	}
	msg := make([]byte, 32)
	for it := 0; it < iters; it++ {
		ep, err := dom.OpenEndpoint(info)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range []error{ep.BindCQ(cq, fabric.FlagTransmit|fabric.FlagRecv), ep.BindAV(av), ep.Enable()} {
			if err != nil {
				t.Fatal(err)
			}
		}
		name, err := ep.Name()
		if err != nil {
			t.Fatal(err)
		}
		dst := snd.insert(name)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if snd.ep.Inject(msg, dst) != nil {
					snd.txcq.Read(nil)
					time.Sleep(20 * time.Microsecond)
				}
			}
		}()
		for _, b := range bufs {
			if err := ep.Recv(b, nil, fabric.AddrUnspec, nil); err != nil {
				t.Fatal(err)
			}
		}
		// More entries than can arrive before the deadline, usually: the
		// read parks, its watcher progresses, the deadline ends it at
		// some point of the watcher's work.
		to := time.Duration(200+it%7*150) * time.Microsecond
		for k := 0; k < 3; k++ {
			if _, err := cq.SRead(ents, len(ents), to); err != nil && !errors.Is(err, fabric.ErrAgain) {
				t.Fatalf("sread: %v", err)
			}
			// The application's own calls right after the read.
			ep.Recv(bufs[0], nil, fabric.AddrUnspec, nil)
			cq.Read(ents)
		}
		if err := ep.Close(); err != nil {
			t.Fatal(err)
		}
		close(stop)
		<-done
		if err := snd.av.Remove([]fabric.Addr{dst}, 0); err != nil {
			t.Fatal(err)
		}
		// Drain the canceled receives' completions.
		for {
			n, err := cq.Read(ents)
			if errors.Is(err, fabric.ErrAvail) {
				var ee fabric.CQErrEntry
				cq.ReadErr(&ee)
				continue
			}
			if n == 0 {
				break
			}
		}
	}
}
