package fabric

import (
	"errors"
	"testing"
)

const dataTestCaps = CapMsg | CapTagged | CapRMA | CapAtomic

// Under FI_MR_LOCAL every non-empty buffer of a data call needs the
// descriptor of a live region of the domain that covers it with the
// access the call makes; the descriptors reach the provider unchanged.
func TestMRLocalDescriptors(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, MRLocal)
	buf := make([]byte, 256)
	all := FlagSend | FlagRecv | FlagRead | FlagWrite
	mr := v.reg(t, buf, all)
	d := mr.Desc()
	other := make([]byte, 64)
	recvOnly := make([]byte, 64)
	mrRecv := v.reg(t, recvOnly, FlagRecv)

	closedBuf := make([]byte, 32)
	closedMR, err := v.dom.RegMR(closedBuf, all, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	closedDesc := closedMR.Desc()
	if err := closedMR.Close(); err != nil {
		t.Fatal(err)
	}
	// A region of another domain.
	v2 := dataTestOpen(t, dataTestCaps, MRLocal)
	foreign := make([]byte, 64)
	foreignDesc := v2.reg(t, foreign, all).Desc()

	ep := v.ep
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"send_no_desc", func() error { return ep.Send(buf, nil, 0, nil) }, ErrInval},
		{"send_desc", func() error { return ep.Send(buf, d, 0, nil) }, nil},
		{"send_inner_slice", func() error { return ep.Send(buf[10:20], d, 0, nil) }, nil},
		{"send_tail_slice", func() error { return ep.Send(buf[200:], d, 0, nil) }, nil},
		{"send_outside_region", func() error { return ep.Send(other, d, 0, nil) }, ErrInval},
		{"send_beyond_region", func() error { return ep.Send(buf[200:256:256], mrRecv.Desc(), 0, nil) }, ErrInval},
		{"send_empty_needs_none", func() error { return ep.Send(nil, nil, 0, nil) }, nil},
		{"send_closed_mr", func() error { return ep.Send(closedBuf, closedDesc, 0, nil) }, ErrInval},
		{"send_foreign_domain", func() error { return ep.Send(foreign, foreignDesc, 0, nil) }, ErrInval},
		{"send_without_send_access", func() error { return ep.Send(recvOnly, mrRecv.Desc(), 0, nil) }, ErrInval},
		{"recv_with_recv_access", func() error { return ep.Recv(recvOnly, mrRecv.Desc(), AddrUnspec, nil) }, nil},
		{"recv_no_desc", func() error { return ep.Recv(other, nil, AddrUnspec, nil) }, ErrInval},
		{"tsend_desc", func() error { return ep.TSend(buf, d, 0, 7, nil) }, nil},
		{"senddata_no_desc", func() error { return ep.SendData(buf, nil, 1, 0, nil) }, ErrInval},
		{"inject_takes_no_desc", func() error { return ep.Inject(other[:8], 0) }, nil},
		{"rma_inject_takes_no_desc", func() error { return ep.RMAInjectWrite(other[:8], 0, 0, 1) }, nil},
		{"atomic_inject_takes_no_desc", func() error {
			return ep.AtomicInject(other[:8], 0, 0, 1, DatatypeUint64, AtomicSum)
		}, nil},
		{"sendmsg_inject_checks_descs", func() error {
			return ep.SendMsg(&Msg{IOV: [][]byte{other[:8]}}, FlagInject)
		}, ErrInval},
		{"sendv_descs", func() error {
			return ep.SendV([][]byte{buf[:8], buf[8:16]}, []MRDesc{d, d}, 0, nil)
		}, nil},
		{"sendv_one_missing", func() error {
			return ep.SendV([][]byte{buf[:8], other[:8]}, []MRDesc{d, nil}, 0, nil)
		}, ErrInval},
		{"sendv_empty_buffer_no_desc", func() error {
			return ep.SendV([][]byte{buf[:8], {}}, []MRDesc{d, nil}, 0, nil)
		}, nil},
		{"sendmsg_desc_count_mismatch", func() error {
			return ep.SendMsg(&Msg{IOV: [][]byte{buf[:8], buf[8:16]}, Desc: []MRDesc{d}}, 0)
		}, ErrInval},
		{"rma_read_desc", func() error { return ep.RMARead(buf, d, 0, 0, 1, nil) }, nil},
		{"rma_read_no_read_access", func() error { return ep.RMARead(recvOnly, mrRecv.Desc(), 0, 0, 1, nil) }, ErrInval},
		{"rma_write_no_desc", func() error { return ep.RMAWrite(other, nil, 0, 0, 1, nil) }, ErrInval},
		{"rma_writev_desc", func() error { return ep.RMAWriteV([][]byte{buf[:4]}, []MRDesc{d}, 0, 0, 1, nil) }, nil},
		{"atomic_desc", func() error {
			return ep.Atomic(buf[:8], d, 0, 0, 1, DatatypeUint64, AtomicSum, nil)
		}, nil},
		{"atomic_no_desc", func() error {
			return ep.Atomic(other[:8], nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil)
		}, ErrInval},
		{"fetch_result_no_desc", func() error {
			return ep.FetchAtomic(buf[:8], d, other[:8], nil, 0, 0, 1, DatatypeUint64, AtomicSum, nil)
		}, ErrInval},
		{"fetch_result_desc", func() error {
			return ep.FetchAtomic(buf[:8], d, buf[8:16], d, 0, 0, 1, DatatypeUint64, AtomicSum, nil)
		}, nil},
		{"compare_no_compare_desc", func() error {
			return ep.CompareAtomic(buf[:8], d, other[:8], nil, buf[8:16], d, 0, 0, 1, DatatypeUint64, AtomicCSwap, nil)
		}, ErrInval},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := v.p.calls
			err := c.call()
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if c.want != nil && v.p.calls != n {
				t.Fatalf("a refused call reached the provider")
			}
		})
	}

	// The descriptor reaches the provider unchanged, for single buffers
	// and vectors.
	if err := ep.Send(buf[:8], d, 0, nil); err != nil {
		t.Fatal(err)
	}
	if v.p.msg.Desc != d || d.Registration() == nil || !d.Contains(buf[:8]) {
		t.Fatalf("provider saw desc %p, want %p", v.p.msg.Desc, d)
	}
	descs := []MRDesc{d, d}
	if err := ep.SendV([][]byte{buf[:8], buf[8:16]}, descs, 0, nil); err != nil {
		t.Fatal(err)
	}
	if len(v.p.msg.Descs) != 2 || &v.p.msg.Descs[0] != &descs[0] {
		t.Fatalf("provider saw descs %v, want the caller's vector", v.p.msg.Descs)
	}
	if err := ep.FetchAtomic(buf[:8], d, buf[8:16], d, 0, 0, 1, DatatypeUint64, AtomicSum, nil); err != nil {
		t.Fatal(err)
	}
	if v.p.atomic.Operand.Desc != d || v.p.atomic.Result.Desc != d {
		t.Fatalf("atomic descriptors not carried: %+v", v.p.atomic)
	}

	// Posted receives carry their descriptors to the provider through the
	// receive queue (fi_peer_rx_entry.desc).
	rbuf := buf[64:128]
	if err := ep.Recv(rbuf, d, AddrUnspec, "r"); err != nil {
		t.Fatal(err)
	}
	got := 0
	for {
		e, err := v.p.res.SRX.GetMsg(AddrUnspec, 8)
		if err != nil {
			if e != nil {
				v.p.res.SRX.FreeEntry(e)
			}
			break
		}
		if e.Context == "r" {
			if len(e.Desc) != 1 || e.Desc[0] != d {
				t.Fatalf("rx entry desc %v, want [%p]", e.Desc, d)
			}
			got++
		}
		v.p.res.SRX.FreeEntry(e)
	}
	if got != 1 {
		t.Fatalf("found %d receives with context r, want 1", got)
	}
}

// Without FI_MR_LOCAL descriptors are optional and passed through; a
// descriptor vector of the wrong length is still refused.
func TestDescriptorsOptionalWithoutMRLocal(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, 0)
	buf := make([]byte, 64)
	if err := v.ep.Send(buf, nil, 0, nil); err != nil {
		t.Fatalf("send without desc: %v", err)
	}
	d := v.reg(t, buf, FlagRecv).Desc()
	other := make([]byte, 8)
	if err := v.ep.Send(other, d, 0, nil); err != nil {
		t.Fatalf("send with an unrelated desc: %v", err)
	}
	if v.p.msg.Desc != d {
		t.Fatal("descriptor not passed through")
	}
	if err := v.ep.SendV([][]byte{buf, buf}, []MRDesc{nil}, 0, nil); !errors.Is(err, ErrInval) {
		t.Fatalf("SendV with 1 desc for 2 buffers: %v, want ErrInval", err)
	}
}

// The descriptor check allocates nothing.
func TestMRLocalAllocs(t *testing.T) {
	v := dataTestOpen(t, dataTestCaps, MRLocal)
	buf := make([]byte, 256)
	d := v.reg(t, buf, FlagSend|FlagRecv|FlagRead|FlagWrite).Desc()
	iov := [][]byte{buf[:8], buf[8:16]}
	descs := []MRDesc{d, d}
	res := make([]byte, 8)
	dr := v.reg(t, res, FlagRead).Desc()
	var ctx int
	for name, f := range map[string]func() error{
		"send":      func() error { return v.ep.Send(buf[:32], d, 0, &ctx) },
		"sendv":     func() error { return v.ep.SendV(iov, descs, 0, &ctx) },
		"rma_write": func() error { return v.ep.RMAWrite(buf[:32], d, 0, 0, 1, &ctx) },
		"fetch_atomic": func() error {
			return v.ep.FetchAtomic(buf[:8], d, res, dr, 0, 0, 1, DatatypeUint64, AtomicSum, &ctx)
		},
	} {
		if n := testing.AllocsPerRun(100, func() {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocs/op, want 0", name, n)
		}
	}
}

func TestMRDescNil(t *testing.T) {
	var d MRDesc
	if d.Key() != 0 || d.Access() != 0 || d.Segments() != nil || d.Registration() != nil || d.Base() != 0 {
		t.Fatal("nil descriptor methods must return zero values")
	}
	if d.Contains([]byte{1}) || !d.Contains(nil) {
		t.Fatal("nil descriptor covers only empty buffers")
	}
	if (*MR)(nil).Desc() != nil {
		t.Fatal("nil MR has a descriptor")
	}
}

// BenchmarkRootSend measures the root's checks of a send (the provider
// does nothing), without and with FI_MR_LOCAL descriptor checking.
func BenchmarkRootSend(b *testing.B) {
	for _, mode := range []MRMode{0, MRLocal} {
		b.Run(mode.String(), func(b *testing.B) {
			v := dataTestOpen(b, dataTestCaps, mode)
			buf := make([]byte, 64)
			d := v.reg(b, buf, FlagSend).Desc()
			var ctx int
			b.ReportAllocs()
			for b.Loop() {
				if err := v.ep.Send(buf, d, 0, &ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
