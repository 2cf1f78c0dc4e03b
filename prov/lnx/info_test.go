package lnx

import (
	"testing"

	fabric "github.com/gofabric/fabric"
)

// TestInfoTxOpFlags: default transmit flags that both linked providers
// take (fabtests' -U asks for FI_DELIVERY_COMPLETE, fi_msg_inject for
// FI_INJECT) are offered and echoed by lnx, as by shm and tcp RDM.
func TestInfoTxOpFlags(t *testing.T) {
	for _, f := range []fabric.Flags{fabric.FlagInject, fabric.FlagDeliveryComplete, fabric.FlagTransmitComplete,
		fabric.FlagInjectComplete, fabric.FlagCompletion} {
		h := fabric.AllocInfo()
		h.FabricAttr.ProvName = Name
		h.EPAttr.Type = fabric.EPRDM
		h.Caps = fabric.CapMsg | fabric.CapTagged
		h.TxAttr.OpFlags = f
		infos, err := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, h)
		if err != nil {
			t.Errorf("tx op_flags %v: %v", f, err)
			continue
		}
		for _, in := range infos {
			if in.TxAttr.OpFlags != f {
				t.Errorf("tx op_flags %v: returned %v", f, in.TxAttr.OpFlags)
			}
		}
	}
}
