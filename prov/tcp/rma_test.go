package tcp

import (
	"bytes"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/cntr"
	"github.com/gofabric/fabric/provider"
)

const rmaAccess = provider.FlagRemoteRead | provider.FlagRemoteWrite

func TestRMAWriteReadWriteData(t *testing.T) {
	for _, o := range []opts{{}, {auto: true}} {
		cli, srv := pair(t, o)
		mem := make([]byte, 1<<20+64)
		copy(mem, "remote-memory-contents")
		// Both endpoints live in this process; their goroutines (auto
		// progress) are ordered through the kernel socket, which the race
		// detector cannot see. Taking the target's lock around the test's
		// own accesses to the target memory orders them for it.
		syncTarget := func() {
			srv.ep.mu.Lock()
			//lint:ignore SA2001 the lock orders the accesses for the race detector
			srv.ep.mu.Unlock()
		}
		reg, err := srv.mr.Register([][]byte{mem}, rmaAccess, 0, 0xc0de, true)
		if err != nil {
			t.Fatal(err)
		}
		mrCntr := must(cntr.New(cntr.Config{}))(t)
		defer mrCntr.Close()
		if err := reg.Bind(mrCntr, provider.FlagRemoteWrite); err != nil {
			t.Fatal(err)
		}
		// Read 16 bytes at offset 0.
		rb := make([]byte, 16)
		if err := cli.ep.Read(provider.Msg{Buf: rb, Context: "rd", Flags: provider.FlagCompletion,
			RMAOne: provider.RMAIOV{Addr: 0, Len: 16, Key: 0xc0de}}); err != nil {
			t.Fatal(err)
		}
		expectComp(t, cli.txCQ, "rd", provider.FlagRMA|provider.FlagRead, srv)
		if string(rb) != "remote-memory-co" {
			t.Fatalf("read %q", rb)
		}
		// Write 16 bytes at offset 64.
		if err := cli.ep.Write(provider.Msg{Buf: []byte("0123456789abcdef"), Context: "wr", Flags: provider.FlagCompletion,
			RMAOne: provider.RMAIOV{Addr: 64, Len: 16, Key: 0xc0de}}); err != nil {
			t.Fatal(err)
		}
		expectComp(t, cli.txCQ, "wr", provider.FlagRMA|provider.FlagWrite, srv)
		// writedata: target completion with the data.
		if err := cli.ep.Write(provider.Msg{Buf: []byte("01234567"), Context: "wd", Data: 0xaabbccdd,
			Flags: provider.FlagCompletion | provider.FlagRemoteCQData, RMAOne: provider.RMAIOV{Addr: 96, Len: 8, Key: 0xc0de}}); err != nil {
			t.Fatal(err)
		}
		expectComp(t, cli.txCQ, "wd", provider.FlagRMA|provider.FlagWrite, srv)
		e := expectComp(t, srv.rxCQ, nil, provider.FlagRMA|provider.FlagRemoteWrite|provider.FlagRemoteCQData, cli)
		if e.Data != 0xaabbccdd || e.Len != 8 {
			t.Fatalf("writedata target entry %+v", e)
		}
		syncTarget()
		if string(mem[64:80]) != "0123456789abcdef" || string(mem[96:104]) != "01234567" {
			t.Fatalf("target memory %q %q", mem[64:80], mem[96:104])
		}
		// writemsg over 2 remote regions from 3 local buffers, delivery
		// complete; then a big read of 1 MiB into 2 buffers.
		if err := cli.ep.Write(provider.Msg{IOV: [][]byte{[]byte("01"), []byte("2345"), []byte("67")}, Context: "w2",
			Flags: provider.FlagCompletion | provider.FlagDeliveryComplete,
			RMA:   []provider.RMAIOV{{Addr: 0x80, Len: 4, Key: 0xc0de}, {Addr: 0xa0, Len: 4, Key: 0xc0de}}}); err != nil {
			t.Fatal(err)
		}
		expectComp(t, cli.txCQ, "w2", provider.FlagRMA|provider.FlagWrite, srv)
		syncTarget()
		if string(mem[0x80:0x84]) != "0123" || string(mem[0xa0:0xa4]) != "4567" {
			t.Fatalf("2-iov write %q %q", mem[0x80:0x84], mem[0xa0:0xa4])
		}
		pattern(mem[64:], 5)
		syncTarget()
		big1, big2 := make([]byte, 1<<19), make([]byte, 1<<19)
		if err := cli.ep.Read(provider.Msg{IOV: [][]byte{big1, big2}, Context: "bigrd", Flags: provider.FlagCompletion,
			RMAOne: provider.RMAIOV{Addr: 64, Len: 1 << 20, Key: 0xc0de}}); err != nil {
			t.Fatal(err)
		}
		expectComp(t, cli.txCQ, "bigrd", provider.FlagRMA|provider.FlagRead, srv)
		if !bytes.Equal(append(big1, big2...), mem[64:64+1<<20]) {
			t.Fatal("big read differs")
		}
		syncTarget()
		// Inject write: buffer reusable on return, no completion.
		ib := []byte("inject")
		if err := cli.ep.Write(provider.Msg{Buf: ib, Flags: provider.FlagInject,
			RMAOne: provider.RMAIOV{Addr: 200, Len: 6, Key: 0xc0de}}); err != nil {
			t.Fatal(err)
		}
		copy(ib, "XXXXXX")
		// A delivery-complete write after it proves it landed.
		if err := cli.ep.Write(provider.Msg{Buf: []byte("!"), Context: "dc", Flags: provider.FlagCompletion | provider.FlagDeliveryComplete,
			RMAOne: provider.RMAIOV{Addr: 206, Len: 1, Key: 0xc0de}}); err != nil {
			t.Fatal(err)
		}
		expectComp(t, cli.txCQ, "dc", provider.FlagRMA|provider.FlagWrite, srv)
		syncTarget()
		if string(mem[200:207]) != "inject!" {
			t.Fatalf("inject write %q", mem[200:207])
		}
		// Counters: initiator read/write; target remote read/write, and the
		// counter bound to the MR for remote writes.
		if v, _ := cli.cntrs[provider.CntrRead].Read(); v != 2 {
			t.Fatalf("read counter %d", v)
		}
		if v, _ := cli.cntrs[provider.CntrWrite].Read(); v != 5 {
			t.Fatalf("write counter %d", v)
		}
		if v, _ := srv.cntrs[provider.CntrRemoteRead].Read(); v != 2 {
			t.Fatalf("remote read counter %d", v)
		}
		if v, _ := srv.cntrs[provider.CntrRemoteWrite].Read(); v != 5 {
			t.Fatalf("remote write counter %d", v)
		}
		if v, _ := mrCntr.Read(); v != 6 { // the 2-region write counts per region
			t.Fatalf("MR counter %d", v)
		}
	}
}

// TestRMAErrors: a bad key, access or range fails at the initiator (reads
// and delivery-complete writes complete in error), ends the connection,
// and leaves the target memory untouched.
func TestRMAErrors(t *testing.T) {
	cases := []struct {
		name  string
		read  bool
		key   uint64
		addr  uint64
		ln    uint64
		perr  provider.Errno
		flags provider.Flags
	}{
		{"read-badkey", true, 0xbad, 0, 8, provider.EKEYREJECTED, provider.FlagRMA | provider.FlagRemoteRead},
		{"read-noaccess", true, 0x1, 0, 8, provider.EACCES, provider.FlagRMA | provider.FlagRemoteRead},
		{"read-range", true, 0xc0de, 60, 8, provider.EINVAL, provider.FlagRMA | provider.FlagRemoteRead},
		{"write-badkey", false, 0xbad, 0, 8, provider.EKEYREJECTED, provider.FlagRMA | provider.FlagRemoteWrite},
		{"write-noaccess", false, 0x2, 0, 8, provider.EACCES, provider.FlagRMA | provider.FlagRemoteWrite},
		{"write-range", false, 0xc0de, 1 << 40, 8, provider.EINVAL, provider.FlagRMA | provider.FlagRemoteWrite},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cli, srv := pair(t, opts{})
			mem := pattern(make([]byte, 64), 1)
			orig := append([]byte(nil), mem...)
			if _, err := srv.mr.Register([][]byte{mem}, rmaAccess, 0, 0xc0de, true); err != nil {
				t.Fatal(err)
			}
			wonly := pattern(make([]byte, 64), 2)
			worig := append([]byte(nil), wonly...)
			if _, err := srv.mr.Register([][]byte{wonly}, provider.FlagRemoteWrite, 0, 0x1, true); err != nil {
				t.Fatal(err)
			}
			ronly := pattern(make([]byte, 64), 3)
			rorig := append([]byte(nil), ronly...)
			if _, err := srv.mr.Register([][]byte{ronly}, provider.FlagRemoteRead, 0, 0x2, true); err != nil {
				t.Fatal(err)
			}
			buf := []byte("XXXXXXXX")
			m := provider.Msg{Buf: buf, Context: tc.name, Flags: provider.FlagCompletion | provider.FlagDeliveryComplete,
				RMAOne: provider.RMAIOV{Addr: tc.addr, Len: tc.ln, Key: tc.key}}
			// A send posted after it fails too (the connection ends).
			var err error
			if tc.read {
				err = cli.ep.Read(m)
			} else {
				err = cli.ep.Write(m)
			}
			if err != nil {
				t.Fatal(err)
			}
			ee := expectErr(t, cli.txCQ, srv)
			if ee.OpContext != tc.name || ee.Err == 0 {
				t.Fatalf("initiator error %+v", ee)
			}
			// Target: an error completion with the access error, FI_SHUTDOWN.
			te := expectErr(t, srv.rxCQ, cli)
			if te.Err != tc.perr || te.Flags != tc.flags {
				t.Fatalf("target error %+v, want %v %v", te, tc.perr, tc.flags)
			}
			expectEvent(t, srv.eq, provider.EventShutdown)
			expectEvent(t, cli.eq, provider.EventShutdown)
			if !bytes.Equal(mem, orig) || !bytes.Equal(wonly, worig) || !bytes.Equal(ronly, rorig) {
				t.Fatal("target memory changed")
			}
		})
	}
}

// TestPeerGoneMidTransfer: the peer closes while a large message is half
// received and while sends wait for ACKs: pending operations complete in
// error, FI_SHUTDOWN is reported once, later posts fail.
func TestPeerGoneMidTransfer(t *testing.T) {
	cli, srv := pair(t, opts{})
	// The server receives part of a 16 MiB message, then the client goes
	// away (Close: no shutdown handshake, like a crash).
	big := make([]byte, 16<<20)
	got := make([]byte, 16<<20)
	srv.post(got, "big-recv")
	cli.send(big, "big-send", 0)
	// Server's pending delivery-complete send to the client, never ACKed.
	srv.send([]byte("needs-ack"), "dc", provider.FlagDeliveryComplete)
	deadline := time.Now().Add(waitLimit)
	for srv.ep.rx.placed == 0 && time.Now().Before(deadline) {
		srv.ep.Progress()
		cli.ep.Progress()
	}
	cli.close()
	ee := expectErr(t, srv.rxCQ)
	if ee.OpContext != "big-recv" || ee.Err == 0 {
		t.Fatalf("receive error %+v", ee)
	}
	ee = expectErr(t, srv.txCQ)
	if ee.OpContext != "dc" || ee.Err == 0 {
		t.Fatalf("send error %+v", ee)
	}
	expectEvent(t, srv.eq, provider.EventShutdown)
	expectNoEvent(t, srv.eq, 30*time.Millisecond)
	if err := srv.ep.Send(provider.Msg{Buf: []byte("late")}); err != provider.ENOTCONN {
		t.Fatalf("send after peer loss: %v", err)
	}
	if err := srv.ep.Shutdown(0); err != nil {
		t.Fatalf("shutdown after peer loss: %v", err)
	}
	expectNoEvent(t, srv.eq, 10*time.Millisecond)
}

// TestMutualReads: both sides read each other's memory with many large
// reads outstanding (more than the preallocated control frames): no side
// stops reading while its responses wait, so neither waits forever.
func TestMutualReads(t *testing.T) {
	cli, srv := pair(t, opts{})
	const n, size = 200, 64 << 10
	for _, x := range []*node{cli, srv} {
		mem := pattern(make([]byte, size), 9)
		if _, err := x.mr.Register([][]byte{mem}, rmaAccess, 0, 0xc0de, true); err != nil {
			t.Fatal(err)
		}
	}
	bufs := [2][][]byte{}
	for side, x := range []*node{cli, srv} {
		for i := 0; i < n; i++ {
			b := make([]byte, size)
			bufs[side] = append(bufs[side], b)
			if err := x.ep.Read(provider.Msg{Buf: b, Context: i, Flags: provider.FlagCompletion,
				RMAOne: provider.RMAIOV{Len: size, Key: 0xc0de}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := pattern(make([]byte, size), 9)
	for i := 0; i < n; i++ {
		expectComp(t, cli.txCQ, i, provider.FlagRMA|provider.FlagRead, srv)
		expectComp(t, srv.txCQ, i, provider.FlagRMA|provider.FlagRead, cli)
		if !bytes.Equal(bufs[0][i], want) || !bytes.Equal(bufs[1][i], want) {
			t.Fatalf("read %d differs", i)
		}
	}
}
