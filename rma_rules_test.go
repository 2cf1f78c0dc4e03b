package fabric

import (
	"errors"
	"testing"
)

// The root package checks, for every provider, that the remote regions of
// an RMA call add up to its local length, that FI_INJECT is not asked of a
// read, and that the inject writes ask for no completion (provider package
// documentation, "What the root package guarantees").
func TestRMARules(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, 0)
	buf := make([]byte, 8)
	calls := v.p.calls
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"writemsg regions shorter than the buffer", v.ep.RMAWriteMsg(&Msg{IOV: [][]byte{buf},
			RMA: []RMAIOV{{Len: 4, Key: 1}}}, 0), ErrInval},
		{"readmsg regions longer than the buffers", v.ep.RMAReadMsg(&Msg{IOV: [][]byte{buf[:4], buf[4:]},
			RMA: []RMAIOV{{Len: 8, Key: 1}, {Len: 1, Key: 1}}}, 0), ErrInval},
		{"readmsg with FI_INJECT", v.ep.RMAReadMsg(&Msg{IOV: [][]byte{buf}, RMA: []RMAIOV{{Len: 8, Key: 1}}},
			FlagInject), ErrBadFlags},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if v.p.calls != calls {
		t.Fatalf("the provider was called %d times for refused operations", v.p.calls-calls)
	}
	if err := v.ep.RMAReadMsg(&Msg{IOV: [][]byte{buf[:4], buf[4:]}, RMA: []RMAIOV{{Len: 3, Key: 1}, {Len: 5, Key: 1}}},
		0); err != nil {
		t.Fatalf("readmsg with regions covering the buffers: %v", err)
	}
	if err := v.ep.RMAInjectWrite(buf, 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	if f := v.p.msg.Flags; f&FlagCompletion != 0 || f&FlagInject == 0 {
		t.Fatalf("fi_inject_write reached the provider with flags %v", f)
	}
}
