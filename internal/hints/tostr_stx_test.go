package hints

import (
	"strings"
	"testing"

	"github.com/gofabric/fabric/provider"
)

// fi_tostr prints an ep_attr context count of FI_SHARED_CONTEXT by name
// (as C fi_info shows tcp's shared-receive info), other counts as numbers.
func TestFormatSharedContextCounts(t *testing.T) {
	info := &provider.Info{EPAttr: &provider.EPAttr{TxCtxCnt: provider.SharedContext, RxCtxCnt: 3}}
	out := Format(info)
	for _, want := range []string{
		"\n        tx_ctx_cnt: FI_SHARED_CONTEXT\n",
		"\n        rx_ctx_cnt: 3\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Format lacks %q:\n%s", want, out)
		}
	}
	info.EPAttr.TxCtxCnt, info.EPAttr.RxCtxCnt = 1, provider.SharedContext
	out = Format(info)
	if !strings.Contains(out, "\n        tx_ctx_cnt: 1\n") || !strings.Contains(out, "\n        rx_ctx_cnt: FI_SHARED_CONTEXT\n") {
		t.Errorf("Format:\n%s", out)
	}
}
