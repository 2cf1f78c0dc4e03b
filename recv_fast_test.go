package fabric

import (
	"errors"
	"testing"
)

// Recv's path without a Msg (srx.Queue.PostBuf) applies recv's rules: the
// default op flags (FI_MULTI_RECV makes the buffer a multi-receive one),
// the source filter only with FI_DIRECTED_RECV, and FI_MR_LOCAL's
// descriptor check through recv.
func TestRecvFastPathRules(t *testing.T) {
	t.Run("default_op_flags_multi_recv", func(t *testing.T) {
		info := dataTestInfo(CapMsg|CapMultiRecv, 0)
		info.RxAttr.OpFlags = FlagMultiRecv
		v := dataTestOpenInfo(t, info)
		buf := make([]byte, 64)
		if err := v.ep.SetOpt(OptEndpoint, OptMinMultiRecv, 8); err != nil {
			t.Fatal(err)
		}
		if err := v.ep.Recv(buf, nil, AddrUnspec, "multi"); err != nil {
			t.Fatal(err)
		}
		// Two messages land in the one buffer, one after the other.
		for i := 0; i < 2; i++ {
			e, err := v.ep.rq.GetMsg(AddrUnspec, 8)
			if err != nil {
				t.Fatalf("message %d: %v (not a multi-receive buffer)", i, err)
			}
			if len(e.IOV) != 1 || &e.IOV[0][0] != &buf[8*i] {
				t.Fatalf("message %d placed at %p, want %p", i, &e.IOV[0][0], &buf[8*i])
			}
			v.ep.rq.FreeEntry(e)
		}
	})
	t.Run("default_op_flags_peek", func(t *testing.T) {
		v := dataTestOpen(t, CapMsg, 0)
		if err := v.ep.SetOpsFlags(FlagRecv | FlagPeek | FlagCompletion); err != nil {
			t.Fatal(err)
		}
		if err := v.ep.Recv(make([]byte, 8), nil, AddrUnspec, "peek"); err != nil {
			t.Fatal(err)
		}
		if posted, _ := v.ep.rq.Counts(); posted != 0 {
			t.Fatalf("a Recv with FI_PEEK in the default op flags posted a receive")
		}
	})
	t.Run("source_filter_needs_directed_recv", func(t *testing.T) {
		v := dataTestOpen(t, CapMsg, 0)
		if err := v.ep.Recv(make([]byte, 8), nil, 5, "any"); err != nil {
			t.Fatal(err)
		}
		e, err := v.ep.rq.GetMsg(7, 1)
		if err != nil {
			t.Fatalf("a receive posted with a source but no FI_DIRECTED_RECV filtered: %v", err)
		}
		if e.Context != "any" {
			t.Fatalf("matched %v", e.Context)
		}
		v.ep.rq.FreeEntry(e)
	})
	t.Run("mr_local_descriptor_checked", func(t *testing.T) {
		v := dataTestOpen(t, CapMsg, MRLocal)
		if err := v.ep.Recv(make([]byte, 8), nil, AddrUnspec, nil); !errors.Is(err, ErrInval) {
			t.Fatalf("Recv without a descriptor under FI_MR_LOCAL: %v", err)
		}
	})
}

// dataTestOpenInfo is dataTestOpen with a given info.
func dataTestOpenInfo(t testing.TB, info *Info) *dataTestEnv {
	t.Helper()
	fab, err := Open(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fab.Close() })
	dom, err := fab.OpenDomain(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dom.Close() })
	cq, err := dom.OpenCQ(&CQAttr{Format: CQFormatMsg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cq.Close() })
	av, err := dom.OpenAV(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { av.Close() })
	ep, err := dom.OpenEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	for _, err := range []error{ep.BindCQ(cq, FlagTransmit|FlagRecv), ep.BindAV(av), ep.Enable()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return &dataTestEnv{dom: dom, ep: ep, p: ep.p.(*fakeEP), cq: cq}
}
