package fabtest

import (
	"errors"
	"testing"

	fabric "github.com/gofabric/fabric"
)

func init() {
	register("fi_getinfo/no_hints_src_addr_and_version", func(t *testing.T, tg Target) {
		infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, nil)
		if err != nil || len(infos) == 0 {
			t.Fatalf("GetInfo(nil hints): %v", err)
		}
		found := false
		for _, in := range infos {
			if in.FabricAttr.ProvName != tg.Provider {
				continue
			}
			found = true
			if len(in.SrcAddr) == 0 {
				t.Errorf("info without src_addr: %+v", in)
			}
			if in.FabricAttr.APIVersion != fabric.APIVersion {
				t.Errorf("api_version %#x; want %#x", in.FabricAttr.APIVersion, fabric.APIVersion)
			}
		}
		if !found {
			t.Fatalf("provider %s absent from GetInfo(nil)", tg.Provider)
		}
	})
	register("fi_getinfo/node_service_dest_addr", func(t *testing.T, tg Target) {
		infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "9228", 0, tg.hints(0))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos {
			if len(in.DestAddr) == 0 || len(in.SrcAddr) == 0 {
				t.Fatalf("node+service without FI_SOURCE: src %x dest %x; want both", in.SrcAddr, in.DestAddr)
			}
		}
		infos, err = fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "9228", fabric.FlagSource, tg.hints(0))
		if err != nil {
			t.Fatal(err)
		}
		if len(infos[0].SrcAddr) == 0 || len(infos[0].DestAddr) != 0 {
			t.Fatalf("node+service with FI_SOURCE: src %x dest %x", infos[0].SrcAddr, infos[0].DestAddr)
		}
	})
	register("fi_getinfo/no_match_ENODATA", func(t *testing.T, tg Target) {
		h := tg.hints(0)
		h.DomainAttr.Name = "invalid_domain"
		_, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
		isErr(t, "unknown domain name", err, fabric.ErrNoData)
		h = tg.hints(0)
		h.FabricAttr.ProvName = "no-such-provider"
		_, err = fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
		isErr(t, "unknown provider", err, fabric.ErrNoData)
		_, err = fabric.GetInfo(fabric.APIVersion, "g00n13s.invalid", "9228", 0, tg.hints(0))
		isErr(t, "unresolvable node", err, fabric.ErrNoData)
	})
	register("fi_getinfo/caps_subsets_no_extra_primary", func(t *testing.T, tg Target) {
		prim := []fabric.Caps{fabric.CapMsg, fabric.CapTagged, fabric.CapRMA, fabric.CapAtomic,
			fabric.CapMulticast, fabric.CapDirectedRecv, fabric.CapNamedRxCtx}
		for mask := 1; mask < 1<<len(prim); mask++ {
			var want fabric.Caps
			for i, c := range prim {
				if mask&(1<<i) != 0 {
					want |= c
				}
			}
			h := fabric.AllocInfo()
			h.Caps = want
			h.EPAttr.Type = tg.EPType
			h.FabricAttr.ProvName = tg.Provider
			infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
			if errors.Is(err, fabric.ErrNoData) {
				continue
			}
			if err != nil {
				t.Fatalf("caps %v: %v", want, err)
			}
			for _, in := range infos {
				if in.Caps&want != want {
					t.Fatalf("caps %v: returned %v lacks requested caps", want, in.Caps)
				}
				if extra := in.Caps & fabric.PrimaryCaps &^ want; extra != 0 {
					t.Fatalf("caps %v: returned extra primary caps %v", want, extra)
				}
				if in.TxAttr.Caps&^in.Caps != 0 || in.RxAttr.Caps&^in.Caps != 0 {
					t.Fatalf("tx/rx caps not a subset of info caps: %v %v %v", in.TxAttr.Caps, in.RxAttr.Caps, in.Caps)
				}
			}
		}
	})
	register("fi_getinfo/progress_echo", func(t *testing.T, tg Target) {
		for _, p := range []fabric.Progress{fabric.ProgressManual, fabric.ProgressAuto} {
			h := tg.hints(0)
			h.DomainAttr.DataProgress = p
			h.DomainAttr.ControlProgress = p
			infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
			if errors.Is(err, fabric.ErrNoData) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := infos[0].DomainAttr; d.DataProgress != p || d.ControlProgress != p {
				t.Fatalf("progress %v returned data %v control %v", p, d.DataProgress, d.ControlProgress)
			}
		}
	})
	register("fi_getinfo/mode_zero_and_caps4_requery", func(t *testing.T, tg Target) {
		h := tg.hints(0)
		h.Mode = 0
		infos, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h)
		if err == nil {
			for _, in := range infos {
				if in.Mode != 0 {
					t.Fatalf("mode=0 hint returned an info needing %v", in.Mode)
				}
			}
		}
		base := tg.info(t, 0)
		h = fabric.AllocInfo()
		h.Caps = base.Caps
		h.Mode = fabric.ModeContext
		h.EPAttr.Type = tg.EPType
		h.DomainAttr.MRMode = fabric.MRLocal | fabric.MRAllocated | fabric.MRProvKey | fabric.MRVirtAddr
		h.FabricAttr.ProvName = tg.Provider
		if _, err := fabric.GetInfo(fabric.APIVersion, "", "", 0, h); err != nil {
			t.Fatalf("re-query with the caps of a result plus FI_CONTEXT and MR_BASIC_MAP: %v", err)
		}
	})
	register("fi_getinfo/dup_is_deep", func(t *testing.T, tg Target) {
		in := tg.info(t, 0)
		d := in.Dup()
		d.TxAttr.Size++
		d.SrcAddr[0] ^= 0xff
		d.DomainAttr.Name = "changed"
		if in.TxAttr.Size == d.TxAttr.Size || in.SrcAddr[0] == d.SrcAddr[0] || in.DomainAttr.Name == "changed" {
			t.Fatal("Dup shares memory with the original")
		}
	})
	register("fi_getinfo/version_too_new_ENOSYS", func(t *testing.T, tg Target) {
		_, err := fabric.GetInfo(fabric.Version(9, 0), "", "", 0, tg.hints(0))
		isErr(t, "future API version", err, fabric.ErrNoSys)
	})
}
