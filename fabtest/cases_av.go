package fabtest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	fabric "github.com/gofabric/fabric"
)

func init() {
	register("fi_av/insert_lookup_remove_table", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("no AV for FI_EP_MSG")
		}
		a, b, _, _ := tg.pair(t, envOpts{})
		av, err := a.dom.OpenAV(&fabric.AVAttr{Type: fabric.AVTable, Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer av.Close()
		n, err := av.Insert([][]byte{a.addr, b.addr}, nil, 0)
		if n != 2 || err != nil {
			t.Fatalf("insert with nil fi_addr = %d, %v", n, err)
		}
		fa := make([]fabric.Addr, 1)
		if n, err := av.Insert([][]byte{b.addr}, fa, 0); n != 1 || err != nil || fa[0] != 2 {
			t.Fatalf("third insert (count hint 1) = %d, %v, addr %v; want index 2", n, err, fa[0])
		}
		buf := make([]byte, 64)
		l, err := av.Lookup(1, buf)
		if err != nil || !bytes.Equal(buf[:l], b.addr) {
			t.Fatalf("lookup = % x, %v; want % x", buf[:l], err, b.addr)
		}
		l, err = av.Lookup(1, buf[:2])
		if l != len(b.addr) {
			t.Fatalf("truncated lookup returned %d (%v); want the full length %d", l, err, len(b.addr))
		}
		if err := av.Remove([]fabric.Addr{1}, 0); err != nil {
			t.Fatalf("remove: %v", err)
		}
		_, err = av.Lookup(1, buf)
		isErr(t, "lookup removed", err, fabric.ErrInval)
		isErr(t, "remove twice", av.Remove([]fabric.Addr{1}, 0), fabric.ErrInval)
		isErr(t, "remove out of range", av.Remove([]fabric.Addr{99}, 0), fabric.ErrInval)
		_, err = av.Lookup(fabric.AddrNotAvail, buf)
		isErr(t, "lookup UINT64_MAX", err, fabric.ErrInval)
	})
	register("fi_av/bad_address_NOTAVAIL", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("no AV for FI_EP_MSG")
		}
		a := tg.open(t, envOpts{})
		bad := make([]byte, len(a.addr))
		fa := []fabric.Addr{7, 7}
		n, err := a.av.Insert([][]byte{a.addr, bad}, fa, 0)
		if n != 1 || fa[0] == fabric.AddrNotAvail || fa[1] != fabric.AddrNotAvail {
			t.Fatalf("good+bad insert = %d, %v, %v", n, err, fa)
		}
		errs := make([]error, 2)
		n, _ = a.av.InsertWithErrors([][]byte{a.addr, bad}, fa, errs, 0)
		if n != 1 || errs[0] != nil || errs[1] == nil {
			t.Fatalf("FI_SYNC_ERR insert = %d, %v", n, errs)
		}
	})
	register("fi_av/straddr", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("no AV for FI_EP_MSG")
		}
		a := tg.open(t, envOpts{})
		s := a.av.StrAddr(a.addr)
		switch a.info.AddrFormat {
		case fabric.SockAddrIn:
			if !strings.HasPrefix(s, "fi_sockaddr_in://127.0.0.1:") {
				t.Fatalf("straddr = %q", s)
			}
		default:
			if s == "" {
				t.Fatal("empty straddr")
			}
		}
	})
	register("fi_av/remove_reinsert_live_peer", func(t *testing.T, tg Target) {
		if tg.EPType == fabric.EPMsg {
			t.Skip("no AV for FI_EP_MSG")
		}
		a, b, ab, _ := tg.pair(t, envOpts{})
		send := func(dst fabric.Addr, want string) {
			buf := make([]byte, 16)
			if err := b.ep.Recv(buf, nil, fabric.AddrUnspec, nil); err != nil {
				t.Fatal(err)
			}
			retry(t, "send", func() error { return a.ep.Send([]byte(want), nil, dst, nil) }, a.txcq)
			got, ee := waitCQ(t, b.rxcq, a.txcq)
			if ee != nil || string(buf[:got.Len]) != want {
				t.Fatalf("got %q %+v", buf[:got.Len], ee)
			}
			waitCQ(t, a.txcq)
		}
		send(ab, "one")
		if err := a.av.Remove([]fabric.Addr{ab}, 0); err != nil {
			t.Fatal(err)
		}
		isErr(t, "send to removed address", a.ep.Send([]byte("x"), nil, ab, nil), fabric.ErrInval)
		ab2 := a.insert(b.addr)
		send(ab2, "two")
	})
	register("fi_cntr/set_add_err_wait", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		c, err := e.dom.OpenCntr(&fabric.CntrAttr{WaitObj: fabric.WaitUnspec})
		if errors.Is(err, fabric.ErrNoSys) {
			t.Skip("provider has no counters")
		}
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Set(5); err != nil {
			t.Fatal(err)
		}
		c.SetErr(10)
		c.Add(5)
		c.AddErr(5)
		v, err1 := c.Read()
		ve, err2 := c.ReadErr()
		if v != 10 || ve != 15 || err1 != nil || err2 != nil {
			t.Fatalf("counter = %d/%d (%v %v); want 10/15", v, ve, err1, err2)
		}
		if err := c.Wait(10, 100); err != nil {
			t.Fatalf("wait for reached threshold: %v", err)
		}
		err = c.Wait(11, 50)
		if err == nil {
			t.Fatal("wait for unreached threshold returned nil")
		}
	})
	register("fi_eq/write_read_peek_readerr", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		eq, err := e.fab.OpenEQ(&fabric.EQAttr{Size: 8, WaitObj: fabric.WaitUnspec})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { eq.Close() }()
		if err := eq.Write(&fabric.EQEntry{Event: fabric.EventNotify}); err == nil {
			t.Fatal("fi_eq_write accepted on an EQ opened without FI_WRITE")
		}
		eq.Close()
		eq, err = e.fab.OpenEQ(&fabric.EQAttr{Size: 8, WaitObj: fabric.WaitUnspec, Flags: fabric.FlagWrite})
		if err != nil {
			t.Fatal(err)
		}
		ctx := new(int)
		for i := 0; i < 3; i++ {
			if err := eq.Write(&fabric.EQEntry{Event: fabric.EventNotify, Context: ctx, Data: uint64(i)}); err != nil {
				t.Fatalf("eq write: %v", err)
			}
		}
		p, err := eq.Read(fabric.FlagPeek)
		if err != nil || p.Data != 0 {
			t.Fatalf("peek: %+v %v", p, err)
		}
		for i := 0; i < 3; i++ {
			ev, err := eq.Read(0)
			if err != nil || ev.Event != fabric.EventNotify || ev.Context != ctx || ev.Data != uint64(i) {
				t.Fatalf("eq read %d: %+v %v", i, ev, err)
			}
		}
		_, err = eq.Read(0)
		isErr(t, "empty eq", err, fabric.ErrAgain)
		err = eq.ReadErr(&fabric.EQErrEntry{})
		isErr(t, "empty eq readerr", err, fabric.ErrAgain)
	})
	register("fi_mr/reg_keys_access", func(t *testing.T, tg Target) {
		e := tg.open(t, envOpts{noEnable: true})
		buf := make([]byte, 4096)
		access := fabric.FlagRemoteRead | fabric.FlagRemoteWrite
		mr, err := e.dom.RegMR(buf, access, 0, 0xC0DE, 0)
		if err != nil {
			t.Fatalf("reg: %v", err)
		}
		if e.info.DomainAttr.MRMode&fabric.MRProvKey == 0 && mr.Key() != 0xC0DE {
			t.Fatalf("requested key not honoured: %#x", mr.Key())
		}
		if e.info.DomainAttr.MRMode&fabric.MRProvKey == 0 {
			_, err = e.dom.RegMR(buf, access, 0, 0xC0DE, 0)
			isErr(t, "duplicate key", err, fabric.ErrNoKey)
		}
		_, err = e.dom.RegMR(buf, 1<<40, 0, 0xC0DF, 0)
		if err == nil {
			t.Fatal("bad access bits accepted")
		}
		isErr(t, "domain close with MR", e.dom.Close(), fabric.ErrBusy)
		if err := mr.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
