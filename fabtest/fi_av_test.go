package fabtest

import (
	"testing"

	fabric "github.com/gofabric/fabric"
)

// fi_av/user_id_reported_as_source skips only for a provider that does
// not claim FI_AV_USER_ID and refuses the flag as unsupported.
func TestAVUserIDUnsupported(t *testing.T) {
	for _, c := range []struct {
		claimed bool
		err     error
		skip    bool
	}{
		{false, fabric.ErrBadFlags, true},
		{false, fabric.ErrNoSys, true},
		{false, fabric.ErrInval, false},
		{false, nil, false},
		{true, fabric.ErrBadFlags, false},
		{true, fabric.ErrNoSys, false},
	} {
		if got := avUserIDUnsupported(c.claimed, c.err); got != c.skip {
			t.Errorf("claimed %v, %v: skip %v, want %v", c.claimed, c.err, got, c.skip)
		}
	}
}
