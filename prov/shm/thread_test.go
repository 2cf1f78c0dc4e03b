package shm_test

import (
	"testing"

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
