package hints

import (
	"testing"

	"github.com/gofabric/fabric/provider"
)

// The fi_tostr tables choose and order bits as libfabric's fi_tostr does;
// their names must still be the provider package's (generated) names.
func TestTostrTablesAgreeWithProvider(t *testing.T) {
	tables := []struct {
		name  string
		table []bitName
		str   func(uint64) string
	}{
		{"caps", tostrCaps, func(v uint64) string { return provider.Caps(v).String() }},
		{"mode", tostrMode, func(v uint64) string { return provider.Mode(v).String() }},
		{"op_flags", tostrOpFlags, func(v uint64) string { return provider.Flags(v).String() }},
		{"msg_order", tostrMsgOrder, func(v uint64) string { return provider.Order(v).String() }},
		{"mr_mode", tostrMRMode, func(v uint64) string { return provider.MRMode(v).String() }},
	}
	for _, tc := range tables {
		for _, bn := range tc.table {
			if got := tc.str(bn.bit); got != bn.name {
				t.Errorf("%s: bit %#x is %s here, %s in package provider", tc.name, bn.bit, bn.name, got)
			}
		}
	}
}
