package tcp_test

import (
	"errors"
	"os"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/prov/tcp"
)

// TestQueueSizeHints: as libfabric 1.17's tcp, fi_getinfo reports the
// default queue sizes (256) when the hints name none, grants hints up to
// 1024 transmit and 65536 receive entries and refuses larger ones; an
// endpoint on a shared receive context gets 65536 receive entries by
// default. ofi_rxm layered over tcp asks for rx_ctx_cnt = FI_SHARED_CONTEXT
// with an rx size of 4096 (and 128 tx): that must match.
func TestQueueSizeHints(t *testing.T) {
	for _, v := range []string{"FI_TCP_TX_SIZE", "FI_TCP_RX_SIZE"} {
		t.Setenv(v, "") // restored at the end
		os.Unsetenv(v)
	}
	get := func(mod func(h *fabric.Info)) (*fabric.Info, error) {
		t.Helper()
		h := fabric.AllocInfo()
		h.EPAttr.Type = fabric.EPMsg
		mod(h)
		infos, err := fabric.GetInfoProvider(tcp.Name, fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
		if err != nil {
			return nil, err
		}
		return infos[0], nil
	}
	for _, tc := range []struct {
		name   string
		mod    func(h *fabric.Info)
		tx, rx uint64 // 0: ENODATA
	}{
		{"no sizes", func(h *fabric.Info) {}, tcp.DefaultQueueSize, tcp.DefaultQueueSize},
		{"rxm over tcp", func(h *fabric.Info) {
			h.EPAttr.RxCtxCnt = fabric.SharedContext
			h.TxAttr.Size, h.RxAttr.Size = 128, 4096
		}, 128, 4096},
		{"shared rx context, no sizes", func(h *fabric.Info) { h.EPAttr.RxCtxCnt = fabric.SharedContext },
			tcp.DefaultQueueSize, tcp.MaxRxSize},
		{"maximum sizes", func(h *fabric.Info) { h.TxAttr.Size, h.RxAttr.Size = tcp.MaxTxSize, tcp.MaxRxSize },
			tcp.MaxTxSize, tcp.MaxRxSize},
		{"tx size above the maximum", func(h *fabric.Info) { h.TxAttr.Size = tcp.MaxTxSize + 1 }, 0, 0},
		{"rx size above the maximum", func(h *fabric.Info) { h.RxAttr.Size = tcp.MaxRxSize + 1 }, 0, 0},
	} {
		in, err := get(tc.mod)
		if tc.tx == 0 {
			if !errors.Is(err, fabric.ErrNoData) {
				t.Errorf("%s: %v, want ENODATA", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if in.TxAttr.Size != tc.tx || in.RxAttr.Size != tc.rx {
			t.Errorf("%s: tx %d rx %d, want %d %d", tc.name, in.TxAttr.Size, in.RxAttr.Size, tc.tx, tc.rx)
		}
	}
	// A default above the maximum (FI_TCP_TX_SIZE) stays grantable.
	t.Setenv("FI_TCP_TX_SIZE", "2048")
	in, err := get(func(h *fabric.Info) { h.TxAttr.Size = 2048 })
	if err != nil || in.TxAttr.Size != 2048 {
		t.Errorf("FI_TCP_TX_SIZE=2048, hint 2048: %v %v", err, in)
	}
}
