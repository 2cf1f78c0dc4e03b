package udp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/srx"
	"github.com/gofabric/fabric/provider"
)

func TestNameLayout(t *testing.T) {
	a := openEP(t, epOpts{})
	if len(a.name) != 16 {
		t.Fatalf("name is %d bytes, want 16", len(a.name))
	}
	if a.name[0] != 2 || a.name[1] != 0 {
		t.Errorf("family % x, want 02 00 (AF_INET little-endian)", a.name[:2])
	}
	if binary.BigEndian.Uint16(a.name[2:]) == 0 {
		t.Error("port 0: not bound to an ephemeral port")
	}
	if !bytes.Equal(a.name[4:8], []byte{127, 0, 0, 1}) || !bytes.Equal(a.name[8:], make([]byte, 8)) {
		t.Errorf("name % x", a.name)
	}
	if got := formatSockaddr(a.name); got != "fi_sockaddr_in://127.0.0.1:"+itoa(binary.BigEndian.Uint16(a.name[2:])) {
		t.Errorf("name prints as %q", got)
	}
}

func itoa(p uint16) string { return netip.AddrPortFrom(netip.IPv4Unspecified(), p).String()[8:] }

func TestSendRecvBothDirections(t *testing.T) {
	bothQueues(t, epOpts{}, func(t *testing.T, o epOpts) {
		a, b := pair(t, o)
		for _, dir := range []struct{ from, to *tep }{{a, b}, {b, a}} {
			msg := []byte("ping from " + formatSockaddr(dir.from.name))
			buf := make([]byte, 256)
			rctx, sctx := new(int), new(int)
			dir.to.post(t, buf, rctx)
			dir.from.send(t, dir.to, msg, sctx)
			dir.to.waitRx(t, 1)
			ents, _, errs := dir.to.rxCQ.snapshot()
			if len(errs) != 0 || len(ents) != 1 {
				t.Fatalf("rx completions %v errors %v", ents, errs)
			}
			e := ents[0]
			if e.OpContext != rctx || e.Flags != provider.FlagRecv|provider.FlagMsg || e.Len != uint64(len(msg)) {
				t.Fatalf("rx completion %+v", e)
			}
			if !bytes.Equal(buf[:len(msg)], msg) {
				t.Fatalf("received %q", buf[:len(msg)])
			}
			if bounced := !bytes.Equal(dir.to.ep.bounce[:len(msg)], make([]byte, len(msg))); bounced != o.sharedRQ {
				t.Fatalf("shared queue %v, datagram went through the bounce buffer: %v", o.sharedRQ, bounced)
			}
			txe, _, txerr := dir.from.txCQ.snapshot()
			if len(txerr) != 0 || len(txe) != 1 || txe[0].OpContext != sctx ||
				txe[0].Flags != provider.FlagSend|provider.FlagMsg {
				t.Fatalf("tx completions %+v errors %+v", txe, txerr)
			}
			if v, _ := dir.from.tx.get(); v != 1 {
				t.Errorf("send counter %d", v)
			}
			if v, _ := dir.to.rx.get(); v != 1 {
				t.Errorf("recv counter %d", v)
			}
		}
	})
}

func TestIPv6SendRecv(t *testing.T) {
	a, b := pair(t, epOpts{ipv6: true})
	if len(a.name) != 28 || a.name[0] != 10 || a.name[1] != 0 {
		t.Fatalf("IPv6 name % x", a.name)
	}
	buf := make([]byte, 64)
	b.post(t, buf, nil)
	a.send(t, b, []byte("six"), nil)
	b.waitRx(t, 1)
	if string(buf[:3]) != "six" {
		t.Fatalf("got %q", buf[:3])
	}
}

func TestIOVSendAndRecv(t *testing.T) {
	bothQueues(t, epOpts{}, func(t *testing.T, o epOpts) {
		a, b := pair(t, o)
		p1, p2 := make([]byte, 5), make([]byte, 20)
		m := provider.Msg{IOV: [][]byte{p1, p2}, Addr: provider.AddrUnspec, Flags: provider.FlagCompletion}
		if err := b.rq.Post(&m, false); err != nil {
			t.Fatal(err)
		}
		iov := [][]byte{[]byte("hello"), []byte(", "), nil, []byte("vectored world")}
		if err := a.ep.Send(provider.Msg{IOV: iov, Addr: a.peers[b], Flags: provider.FlagCompletion}); err != nil {
			t.Fatal(err)
		}
		b.waitRx(t, 1)
		ents, _, _ := b.rxCQ.snapshot()
		if len(ents) != 1 || ents[0].Len != 21 {
			t.Fatalf("completions %+v", ents)
		}
		if got := string(p1) + string(p2[:16]); got != "hello, vectored world" {
			t.Fatalf("received %q", got)
		}
		// A one-element vector takes the sendto path.
		b.post(t, p2, nil)
		if err := a.ep.Send(provider.Msg{IOV: [][]byte{[]byte("one")}, Addr: a.peers[b]}); err != nil {
			t.Fatal(err)
		}
		b.waitRx(t, 2)
		if string(p2[:3]) != "one" {
			t.Fatalf("got %q", p2[:3])
		}
		if n, _ := a.txCQ.count(); n != 1 {
			t.Fatalf("%d tx completions; the second send asked for none", n)
		}
	})
}

// waitQueued progresses x until its receive queue holds n unexpected
// messages.
func waitQueued(t testing.TB, x *tep, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		x.ep.Progress()
		if _, u := x.rq.Counts(); u >= n {
			return
		}
		if time.Now().After(deadline) {
			_, u := x.rq.Counts()
			t.Fatalf("%d unexpected messages queued, want %d", u, n)
		}
		x.ep.WaitReady(time.Now().Add(10 * time.Millisecond))
	}
}

func TestUnexpectedThenPost(t *testing.T) {
	a, b := pair(t, epOpts{source: true})
	for i := range 3 {
		a.send(t, b, []byte{'m', byte('0' + i)}, nil)
	}
	waitQueued(t, b, 3)
	if n, ne := b.rxCQ.count(); n+ne != 0 {
		t.Fatal("completion without a posted receive")
	}
	for i := range 3 {
		buf := make([]byte, 16)
		ctx := new(int)
		b.post(t, buf, ctx) // matched at once: the peer's StartMsg completes it
		ents, srcs, _ := b.rxCQ.snapshot()
		if len(ents) != i+1 || ents[i].OpContext != ctx || ents[i].Len != 2 {
			t.Fatalf("after post %d: %+v", i, ents)
		}
		if string(buf[:2]) != "m"+string(rune('0'+i)) {
			t.Fatalf("message %d is %q: not in arrival order", i, buf[:2])
		}
		if srcs[i] != b.peers[a] {
			t.Fatalf("FI_SOURCE address %d, want %d", srcs[i], b.peers[a])
		}
	}
	if _, u := b.rq.Counts(); u != 0 {
		t.Fatalf("%d unexpected left", u)
	}
	b.ep.poolMu.Lock()
	live := b.ep.live
	b.ep.poolMu.Unlock()
	if live != 0 {
		t.Fatalf("%d unexpected buffers still held", live)
	}
}

// Unexpected datagrams beyond MaxUnexpected are dropped; nothing breaks.
func TestUnexpectedBound(t *testing.T) {
	a, b := pair(t, epOpts{})
	sent := 0
	for sent < MaxUnexpected+20 {
		for range min(16, MaxUnexpected+20-sent) {
			a.send(t, b, []byte("u"), nil)
			sent++
		}
		waitQueued(t, b, min(sent, MaxUnexpected))
	}
	deadline := time.Now().Add(2 * time.Second)
	for b.ep.drops.Load() < 20 && time.Now().Before(deadline) {
		b.ep.Progress()
		b.ep.WaitReady(time.Now().Add(10 * time.Millisecond))
	}
	if _, u := b.rq.Counts(); u != MaxUnexpected {
		t.Fatalf("%d queued, want %d", u, MaxUnexpected)
	}
	if d := b.ep.drops.Load(); d != 20 {
		t.Fatalf("%d dropped, want 20", d)
	}
	// Draining the queue frees the buffers; new datagrams are queued again.
	for range MaxUnexpected {
		b.post(t, make([]byte, 4), nil)
	}
	a.send(t, b, []byte("after"), nil)
	waitQueued(t, b, 1)
}

// The receive queue's own bound (EAGAIN from GetMsg) drops too.
func TestQueueBoundDrops(t *testing.T) {
	a, b := pair(t, epOpts{maxUnexp: 2})
	for range 3 {
		a.send(t, b, []byte("x"), nil)
	}
	deadline := time.Now().Add(2 * time.Second)
	for b.ep.drops.Load() < 1 && time.Now().Before(deadline) {
		b.ep.Progress()
		b.ep.WaitReady(time.Now().Add(10 * time.Millisecond))
	}
	if _, u := b.rq.Counts(); u != 2 || b.ep.drops.Load() != 1 {
		t.Fatalf("queued %d, dropped %d", u, b.ep.drops.Load())
	}
}

func mustAddrPort(t testing.TB, b []byte) netip.AddrPort {
	t.Helper()
	a, _, ok := decodeSockaddr(b)
	if !ok {
		t.Fatalf("bad sockaddr % x", b)
	}
	return a.AP
}

func TestInjectAndSizes(t *testing.T) {
	a, b := pair(t, epOpts{})
	big := make([]byte, MaxMsgSize)
	for i := range big {
		big[i] = byte(i)
	}
	buf := make([]byte, 2048)
	b.post(t, buf, nil)
	if err := a.ep.Send(provider.Msg{Buf: big, Addr: a.peers[b], Flags: provider.FlagInject}); err != nil {
		t.Fatal(err)
	}
	big[0] = 0xff // the buffer is reusable at once
	b.waitRx(t, 1)
	if buf[0] != 0 || !bytes.Equal(buf[1:MaxMsgSize], big[1:]) {
		t.Fatal("inject data corrupted")
	}
	if n, ne := a.txCQ.count(); n+ne != 0 {
		t.Fatal("inject wrote a completion")
	}
	if v, _ := a.tx.get(); v != 1 {
		t.Fatalf("send counter after inject %d", v)
	}
	// Sizes, vector lengths and FI_REMOTE_CQ_DATA are the root package's
	// checks (fabtest fi_msg/max_msg_size_EMSGSIZE ...); the address is
	// the provider's.
	if err := a.ep.Send(provider.Msg{Buf: []byte("x"), Addr: 99, Flags: provider.FlagCompletion}); err != provider.EINVAL {
		t.Fatalf("send to an address not in the AV: %v", err)
	}
	if n, ne := a.txCQ.count(); n+ne != 0 {
		t.Fatal("rejected sends wrote completions")
	}
	// A zero-length message.
	b.post(t, buf, "zero")
	a.send(t, b, nil, nil)
	b.waitRx(t, 2)
	if ents, _, _ := b.rxCQ.snapshot(); ents[1].OpContext != "zero" || ents[1].Len != 0 {
		t.Fatalf("zero-length: %+v", ents[1])
	}
}

// A kernel send error completes the operation in error (or is returned by
// an inject without completion).
func TestSendKernelError(t *testing.T) {
	a := openEP(t, epOpts{})
	six := a.av.insert(appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("[::1]:9")}))
	err := a.ep.Send(provider.Msg{Buf: []byte("x"), Addr: six, Context: "ctx", Flags: provider.FlagCompletion})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	_, _, errs := a.txCQ.snapshot()
	if len(errs) != 1 || errs[0].OpContext != "ctx" || errs[0].Err == 0 ||
		errs[0].Flags != provider.FlagSend|provider.FlagMsg {
		t.Fatalf("error completions %+v", errs)
	}
	if err := a.ep.Send(provider.Msg{Buf: []byte("x"), Addr: six, Flags: provider.FlagInject}); err == nil {
		t.Fatal("inject to an IPv6 address from an IPv4 socket succeeded")
	}
	// Under selective completion a failed send still completes in error.
	if err := a.ep.Send(provider.Msg{Buf: []byte("x"), Addr: six, Context: "sel"}); err != nil {
		t.Fatalf("send: %v", err)
	}
	_, _, errs = a.txCQ.snapshot()
	if len(errs) != 2 || errs[1].OpContext != "sel" {
		t.Fatalf("error completions %+v", errs)
	}
	if _, ne := a.tx.get(); ne != 3 {
		t.Fatalf("send counter errors %d", ne)
	}
}

// A plain net.UDPConn exchanges datagrams with an endpoint both ways: the
// datagram is the payload, with no header.
func TestInteropNetUDPConn(t *testing.T) {
	bothQueues(t, epOpts{source: true}, func(t *testing.T, o epOpts) {
		x := openEP(t, o)
		u, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer u.Close()
		uap := u.LocalAddr().(*net.UDPAddr).AddrPort()
		ua := x.av.insert(appendSockaddr(nil, sockaddr{AP: uap}))

		if err := x.ep.Send(provider.Msg{Buf: []byte("to berkeley"), Addr: ua, Flags: provider.FlagCompletion}); err != nil {
			t.Fatal(err)
		}
		u.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 64)
		n, from, err := u.ReadFromUDPAddrPort(buf)
		if err != nil || string(buf[:n]) != "to berkeley" {
			t.Fatalf("net side: %q, %v", buf[:n], err)
		}
		if from != mustAddrPort(t, x.name) {
			t.Fatalf("datagram from %v, endpoint name %v", from, mustAddrPort(t, x.name))
		}
		rbuf := make([]byte, 64)
		x.post(t, rbuf, "r")
		if _, err := u.WriteToUDPAddrPort([]byte("from berkeley"), from); err != nil {
			t.Fatal(err)
		}
		x.waitRx(t, 1)
		ents, srcs, _ := x.rxCQ.snapshot()
		if string(rbuf[:ents[0].Len]) != "from berkeley" || srcs[0] != ua {
			t.Fatalf("endpoint got %q from %d", rbuf[:ents[0].Len], srcs[0])
		}
	})
}

func TestAutoProgress(t *testing.T) {
	a, b := pair(t, epOpts{auto: true})
	if !b.ep.auto {
		t.Fatal("FI_PROGRESS_AUTO hint did not select auto progress")
	}
	buf := make([]byte, 32)
	b.post(t, buf, "auto")
	a.send(t, b, []byte("no cq read needed"), nil)
	deadline := time.Now().Add(2 * time.Second)
	for {
		if n, _ := b.rxCQ.count(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("auto progress did not deliver")
		}
		time.Sleep(time.Millisecond) // no Progress call: the endpoint's goroutine delivers
	}
	if string(buf[:17]) != "no cq read needed" {
		t.Fatalf("got %q", buf)
	}
}

func TestWaitReady(t *testing.T) {
	a, b := pair(t, epOpts{})
	start := time.Now()
	if err := b.ep.WaitReady(start.Add(50 * time.Millisecond)); !errors.Is(err, provider.ETIMEDOUT) {
		t.Fatalf("WaitReady on an idle socket: %v", err)
	}
	if el := time.Since(start); el < 45*time.Millisecond || el > 2*time.Second {
		t.Fatalf("deadline honoured after %v", el)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		a.ep.Send(provider.Msg{Buf: []byte("wake"), Addr: a.peers[b]})
	}()
	start = time.Now()
	if err := b.ep.WaitReady(start.Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("woke after %v", el)
	}
	if fd := b.ep.WaitFD(); fd < 0 {
		t.Fatalf("WaitFD = %d", fd)
	}
	// A parked WaitReady returns when the endpoint closes.
	done := make(chan error, 1)
	go func() { done <- a.ep.WaitReady(time.Time{}) }()
	time.Sleep(20 * time.Millisecond)
	a.ep.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("WaitReady returned nil after close")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not wake WaitReady")
	}
	if a.ep.WaitFD() != -1 {
		t.Fatal("WaitFD after close")
	}
}

func TestCloseWhileReceivesPending(t *testing.T) {
	for _, auto := range []bool{false, true} {
		a, b := pair(t, epOpts{auto: auto})
		for range 4 {
			b.post(t, make([]byte, 16), nil)
		}
		a.send(t, b, []byte("one"), nil)
		b.waitRx(t, 1)
		done := make(chan error, 1)
		go func() { done <- b.ep.Close() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("Close hung")
		}
		// Nothing completes after Close, whatever arrives.
		a.send(t, b, []byte("late"), nil)
		time.Sleep(20 * time.Millisecond)
		b.ep.Progress()
		if n, ne := b.rxCQ.count(); n != 1 || ne != 0 {
			t.Fatalf("auto=%v: %d completions and %d errors after close", auto, n, ne)
		}
		if err := b.ep.Send(provider.Msg{Buf: []byte("x"), Addr: b.peers[a]}); err != provider.EBADF {
			t.Fatalf("send after close: %v", err)
		}
		if err := b.ep.Close(); err != provider.EBADF {
			t.Fatalf("second close: %v", err)
		}
		if _, err := b.ep.Name(); err == nil {
			t.Fatal("Name after close")
		}
		if err := b.ep.Enable(&provider.Resources{}); err != provider.EBADF {
			t.Fatalf("enable after close: %v", err)
		}
	}
}

func TestEnableAndStateErrors(t *testing.T) {
	info := loInfo(t, epOpts{})
	pe, err := (&domain{}).Endpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	ep := pe.(*endpoint)
	defer ep.Close()
	if err := ep.Send(provider.Msg{Buf: []byte("x")}); err != provider.EOPBADSTATE {
		t.Fatalf("send before enable: %v", err)
	}
	ep.Progress() // no-op before enable
	cq, av, q := newTestCQ(), &testAV{}, srx.New(srx.Config{})
	defer q.Close()
	for _, c := range []struct {
		r    *provider.Resources
		want error
	}{
		{nil, provider.EINVAL},
		{&provider.Resources{RxCQ: cq, AV: av, SRX: q}, provider.ENOCQ},
		{&provider.Resources{TxCQ: cq, AV: av, SRX: q}, provider.ENOCQ},
		{&provider.Resources{TxCQ: cq, RxCQ: cq, SRX: q}, provider.ENOAV},
		{&provider.Resources{TxCQ: cq, RxCQ: cq, AV: av}, provider.EINVAL},
	} {
		if err := ep.Enable(c.r); err != c.want {
			t.Errorf("Enable(%+v) = %v, want %v", c.r, err, c.want)
		}
	}
	// fi_setname before enable rebinds.
	old, _ := ep.Name()
	want := withPort(old, 0)
	if err := ep.SetName(want); err != nil {
		t.Fatal(err)
	}
	now, _ := ep.Name()
	if bytes.Equal(now, old) || !sameIP(now, old) {
		t.Fatalf("SetName: %s -> %s", formatSockaddr(old), formatSockaddr(now))
	}
	if err := ep.SetName([]byte{1, 2, 3}); err != provider.EINVAL {
		t.Fatalf("SetName(garbage) = %v", err)
	}
	if err := ep.SetName(appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("[::1]:0")})); err != provider.EINVAL {
		t.Fatalf("SetName(IPv6) on an IPv4 endpoint = %v", err)
	}
	if err := ep.Enable(&provider.Resources{TxCQ: cq, RxCQ: cq, AV: av, SRX: q}); err != nil {
		t.Fatal(err)
	}
	if err := ep.SetName(want); err != provider.EOPBADSTATE {
		t.Fatalf("SetName after enable = %v", err)
	}
	if err := ep.Cancel("anything"); err != provider.ENOENT {
		t.Fatalf("Cancel = %v", err)
	}
	// Bad infos.
	if _, err := newEndpoint(nil); err != provider.EINVAL {
		t.Fatalf("nil info: %v", err)
	}
	bad := info.Dup()
	bad.EPAttr.Type = provider.EPRDM
	if _, err := newEndpoint(bad); err != provider.EINVAL {
		t.Fatalf("RDM info: %v", err)
	}
	bad = info.Dup()
	bad.SrcAddr = []byte{2, 0}
	if _, err := newEndpoint(bad); err != provider.EINVAL {
		t.Fatalf("bad src_addr: %v", err)
	}
	// Limits above the provider's: the root package would enforce them.
	for name, raise := range map[string]func(*provider.Info){
		"max_msg_size": func(in *provider.Info) { in.EPAttr.MaxMsgSize = MaxMsgSize + 1 },
		"inject_size":  func(in *provider.Info) { in.TxAttr.InjectSize = InjectSize + 1 },
		"tx iov_limit": func(in *provider.Info) { in.TxAttr.IOVLimit = IOVLimit + 1 },
		"rx iov_limit": func(in *provider.Info) { in.RxAttr.IOVLimit = IOVLimit + 1 },
		"cq_data_size": func(in *provider.Info) { in.DomainAttr.CQDataSize = 4 },
	} {
		bad = info.Dup()
		raise(bad)
		if ep, err := newEndpoint(bad); err != provider.EINVAL {
			if ep != nil {
				ep.Close()
			}
			t.Errorf("%s above the provider's: %v, want EINVAL", name, err)
		}
	}
}

// An endpoint opened without src_addr binds a usable local address.
func TestDefaultSource(t *testing.T) {
	info := loInfo(t, epOpts{})
	info.SrcAddr = nil
	ep, err := newEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	name, _ := ep.Name()
	a := mustAddrPort(t, name)
	if a.Addr() != netip.MustParseAddr("127.0.0.1") || a.Port() == 0 {
		t.Fatalf("default source %v with FI_UDP_IFACE=lo", a)
	}
	info.DestAddr = appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("127.0.0.1:7")})
	ep2, err := newEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	defer ep2.Close()
	name, _ = ep2.Name()
	if mustAddrPort(t, name).Addr() != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("source towards 127.0.0.1: %s", formatSockaddr(name))
	}
}

// Concurrent progress callers and senders: every datagram completes exactly
// once.
func TestConcurrentProgress(t *testing.T) {
	a, b := pair(t, epOpts{})
	const n = 200
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, 8)
		b.post(t, bufs[i], i)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				b.ep.Progress()
			}
		}()
	}
	var swg sync.WaitGroup
	for g := range 2 {
		swg.Add(1)
		go func() {
			defer swg.Done()
			for i := g; i < n; i += 2 {
				for {
					err := a.ep.Send(provider.Msg{Buf: []byte{byte(i), byte(i >> 8)}, Addr: a.peers[b]})
					if err == nil {
						break
					}
					if err != provider.EAGAIN {
						t.Error(err)
						return
					}
				}
				if i%16 == 0 {
					time.Sleep(time.Millisecond) // stay under the socket buffer
				}
			}
		}()
	}
	swg.Wait()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if c, _ := b.rxCQ.count(); c >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	ents, _, errs := b.rxCQ.snapshot()
	if len(errs) != 0 {
		t.Fatalf("errors %+v", errs)
	}
	seen := map[int]bool{}
	for _, e := range ents {
		i := e.OpContext.(int)
		if seen[i] {
			t.Fatalf("receive %d completed twice", i)
		}
		seen[i] = true
	}
	got := map[int]bool{}
	for i := range seen {
		v := int(bufs[i][0]) | int(bufs[i][1])<<8
		if got[v] {
			t.Fatalf("message %d delivered twice", v)
		}
		got[v] = true
	}
	if len(ents) != n {
		t.Logf("%d of %d datagrams arrived (loopback may drop under load)", len(ents), n)
		if len(ents) < n*9/10 {
			t.Fatalf("only %d of %d delivered", len(ents), n)
		}
	}
}

// Steady-state send and receive do not allocate: inject, send with
// completion, progress into a posted receive, and the unexpected path.
func TestDataPathAllocs(t *testing.T) {
	a, b := pair(t, epOpts{source: true, directed: true})
	msg := make([]byte, 64)
	buf := make([]byte, 128)
	ctx := new(int)
	dest := a.peers[b]
	run := func() {
		rm := provider.Msg{Buf: buf, Addr: provider.AddrUnspec, Context: ctx, Flags: provider.FlagCompletion}
		b.rq.Post(&rm, false)
		a.ep.Send(provider.Msg{Buf: msg, Addr: dest, Flags: provider.FlagInject})
		for n, _ := b.rxCQ.count(); n == 0; n, _ = b.rxCQ.count() {
			b.ep.Progress()
		}
		a.ep.Send(provider.Msg{Buf: msg, Addr: dest, Context: ctx, Flags: provider.FlagCompletion})
		// Unexpected: arrives before the receive is posted.
		for _, u := b.rq.Counts(); u == 0; _, u = b.rq.Counts() {
			b.ep.Progress()
		}
		b.rq.Post(&rm, false)
		b.ep.Progress() // empty socket: EAGAIN path
		a.txCQ.reset()
		b.rxCQ.reset()
	}
	run()
	if n := testing.AllocsPerRun(200, run); n != 0 {
		t.Fatalf("data path allocates %v times per round", n)
	}
}

// Close while other goroutines progress the endpoint and datagrams keep
// arriving: Close waits for a receive in flight, and nothing completes
// after it returns.
func TestCloseDuringProgress(t *testing.T) {
	bothQueues(t, epOpts{}, func(t *testing.T, o epOpts) {
		a, b := pair(t, o)
		for i := 0; i < 512; i++ {
			b.post(t, make([]byte, 16), i)
		}
		var stop atomic.Bool
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					b.ep.Progress()
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				a.ep.Send(provider.Msg{Buf: []byte("data"), Addr: a.peers[b], Flags: provider.FlagInject})
				runtime.Gosched()
			}
		}()
		deadline := time.Now().Add(5 * time.Second)
		for n, _ := b.rxCQ.count(); n < 20 && time.Now().Before(deadline); n, _ = b.rxCQ.count() {
			time.Sleep(time.Millisecond)
		}
		if err := b.ep.Close(); err != nil {
			t.Fatal(err)
		}
		n1, e1 := b.rxCQ.count()
		time.Sleep(20 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		if n2, e2 := b.rxCQ.count(); n2 != n1 || e2 != e1 || n1 < 20 {
			t.Fatalf("%d completions when Close returned, %d later (errors %d, %d)", n1, n2, e1, e2)
		}
	})
}

// Inject (provider.Injector, the root package's plain fi_inject path) does
// what Send of an FI_INJECT message does: the datagram leaves before it
// returns, no completion, the send counter counts it; an unknown address
// is EINVAL; a kernel error is returned and counted; the state checks
// answer EOPBADSTATE before Enable and EBADF after Close.
func TestInjectFastPath(t *testing.T) {
	info := loInfo(t, epOpts{})
	pe, err := (&domain{}).Endpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := pe.(provider.Injector).Inject([]byte("x"), 0); err != provider.EOPBADSTATE {
		t.Fatalf("inject before enable: %v", err)
	}
	pe.Close()

	a, b := pair(t, epOpts{})
	buf := make([]byte, 64)
	b.post(t, buf, "rx")
	msg := []byte("hello")
	if err := a.ep.Inject(msg, a.peers[b]); err != nil {
		t.Fatal(err)
	}
	msg[0] = 'j' // reusable at once
	b.waitRx(t, 1)
	if ents, _, _ := b.rxCQ.snapshot(); ents[0].OpContext != "rx" || ents[0].Len != 5 || string(buf[:5]) != "hello" {
		t.Fatalf("received %+v %q", ents[0], buf[:5])
	}
	if n, ne := a.txCQ.count(); n+ne != 0 {
		t.Fatal("inject wrote a completion")
	}
	if v, ve := a.tx.get(); v != 1 || ve != 0 {
		t.Fatalf("send counter %d, errors %d", v, ve)
	}
	if err := a.ep.Inject(msg, 99); err != provider.EINVAL {
		t.Fatalf("inject to an address not in the AV: %v", err)
	}
	six := a.av.insert(appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("[::1]:9")}))
	err = a.ep.Inject(msg, six)
	if errno, ok := err.(provider.Errno); !ok || errno == 0 || errno == provider.EAGAIN {
		t.Fatalf("inject to an IPv6 address from an IPv4 socket: %v", err)
	}
	if _, ve := a.tx.get(); ve != 1 {
		t.Fatalf("send counter errors %d", ve)
	}
	a.ep.Close()
	if err := a.ep.Inject(msg, a.peers[b]); err != provider.EBADF {
		t.Fatalf("inject after close: %v", err)
	}
}

// SendBuf (provider.BufSender, the root package's one-buffer fi_send path)
// does what Send of the same message does: a completion with the context
// when asked for, none under selective completion, an error completion for
// a kernel error whatever the flags, EINVAL for an address not in the AV.
func TestSendBufFastPath(t *testing.T) {
	a, b := pair(t, epOpts{})
	buf := make([]byte, 64)
	b.post(t, buf, "rx")
	if err := a.ep.SendBuf([]byte("hello"), a.peers[b], "tx", provider.FlagCompletion); err != nil {
		t.Fatal(err)
	}
	b.waitRx(t, 1)
	if string(buf[:5]) != "hello" {
		t.Fatalf("received %q", buf[:5])
	}
	ents, _, _ := a.txCQ.snapshot()
	if len(ents) != 1 || ents[0].OpContext != "tx" || ents[0].Flags != provider.FlagSend|provider.FlagMsg {
		t.Fatalf("send completions %+v", ents)
	}
	b.post(t, buf, "rx2")
	if err := a.ep.SendBuf([]byte("quiet"), a.peers[b], "sel", 0); err != nil {
		t.Fatal(err)
	}
	b.waitRx(t, 2)
	if n, ne := a.txCQ.count(); n != 1 || ne != 0 {
		t.Fatalf("selective send wrote a completion: %d, %d errors", n, ne)
	}
	if v, _ := a.tx.get(); v != 2 {
		t.Fatalf("send counter %d", v)
	}
	if err := a.ep.SendBuf([]byte("x"), 99, "bad", provider.FlagCompletion); err != provider.EINVAL {
		t.Fatalf("send to an address not in the AV: %v", err)
	}
	six := a.av.insert(appendSockaddr(nil, sockaddr{AP: netip.MustParseAddrPort("[::1]:9")}))
	if err := a.ep.SendBuf([]byte("x"), six, "err", 0); err != nil {
		t.Fatalf("send: %v", err)
	}
	if _, _, errs := a.txCQ.snapshot(); len(errs) != 1 || errs[0].OpContext != "err" || errs[0].Err == 0 {
		t.Fatalf("error completions %+v", errs)
	}
}
