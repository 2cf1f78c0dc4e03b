package tcp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gofabric/fabric/internal/eq"
	"github.com/gofabric/fabric/internal/wire/tcpwire"
	"github.com/gofabric/fabric/provider"
)

func TestGetInfoMirrorsLibfabric(t *testing.T) {
	t.Setenv(envIface, "lo")
	infos, err := tcpProvider{}.GetInfo(provider.APIVersion, "", "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) < 1 {
		t.Fatal("no info")
	}
	i := infos[0]
	// Values of `FI_TCP_IFACE=lo fi_info -p tcp -t FI_EP_MSG -v` (1.17).
	if got, want := i.Caps.String(), "FI_MSG|FI_RMA|FI_READ|FI_WRITE|FI_RECV|FI_SEND|FI_REMOTE_READ|FI_REMOTE_WRITE|FI_RMA_PMEM|FI_LOCAL_COMM|FI_RMA_EVENT"; got != want {
		t.Errorf("caps %s\nwant %s", got, want)
	}
	if got, want := i.TxAttr.Caps.String(), "FI_MSG|FI_RMA|FI_READ|FI_WRITE|FI_SEND|FI_RMA_PMEM"; got != want {
		t.Errorf("tx caps %s", got)
	}
	if got, want := i.RxAttr.Caps.String(), "FI_MSG|FI_RMA|FI_RECV|FI_REMOTE_READ|FI_REMOTE_WRITE|FI_RMA_PMEM|FI_RMA_EVENT"; got != want {
		t.Errorf("rx caps %s", got)
	}
	if i.AddrFormat != provider.SockAddrIn || len(i.SrcAddr) != 16 || formatSockaddr(i.SrcAddr) != "fi_sockaddr_in://127.0.0.1:0" {
		t.Errorf("addr %v %s", i.AddrFormat, formatSockaddr(i.SrcAddr))
	}
	if i.TxAttr.InjectSize != 128 || i.TxAttr.Size != 256 || i.TxAttr.IOVLimit != 4 || i.TxAttr.RMAIOVLimit != 4 ||
		i.RxAttr.Size != 256 || i.RxAttr.IOVLimit != 4 {
		t.Errorf("tx/rx attrs %+v %+v", i.TxAttr, i.RxAttr)
	}
	if i.TxAttr.CompOrder != provider.CompOrderStrict || i.TxAttr.MsgOrder.String() !=
		"FI_ORDER_RAR|FI_ORDER_RAW|FI_ORDER_RAS|FI_ORDER_WAW|FI_ORDER_WAS|FI_ORDER_SAW|FI_ORDER_SAS|FI_ORDER_RMA_RAR|FI_ORDER_RMA_RAW|FI_ORDER_RMA_WAW|FI_ORDER_ATOMIC_RAR|FI_ORDER_ATOMIC_RAW|FI_ORDER_ATOMIC_WAW" {
		t.Errorf("order %v %v", i.TxAttr.MsgOrder, i.TxAttr.CompOrder)
	}
	e := i.EPAttr
	if e.Type != provider.EPMsg || e.Protocol != provider.ProtoSockTCP || e.MaxMsgSize != provider.SizeMax ||
		e.MaxOrderRAWSize != provider.SizeMax || e.MaxOrderWARSize != 0 || e.MaxOrderWAWSize != provider.SizeMax ||
		e.TxCtxCnt != 1 || e.RxCtxCnt != 1 {
		t.Errorf("ep attr %+v", e)
	}
	d := i.DomainAttr
	if d.Name != "lo" || d.Threading != provider.ThreadSafe || d.ControlProgress != provider.ProgressAuto ||
		d.DataProgress != provider.ProgressManual || d.ResourceMgmt != provider.RMEnabled || d.MRMode != 0 ||
		d.MRKeySize != 8 || d.CQDataSize != 8 || d.CQCnt != 256 || d.EPCnt != 8192 || d.MaxEPSrxCtx != 8192 ||
		d.MRIOVLimit != 1 || d.Caps != provider.CapLocalComm|provider.CapRemoteComm {
		t.Errorf("domain attr %+v", d)
	}
	if f := i.FabricAttr; f.Name != "127.0.0.1/32" || f.ProvName != "tcp" || f.ProvVersion != provider.Version(117, 0) {
		t.Errorf("fabric attr %+v", f)
	}
	// Extra capabilities on request only.
	hints := &provider.Info{Caps: provider.CapTagged | provider.CapMultiRecv}
	infos, err = tcpProvider{}.GetInfo(provider.APIVersion, "", "", 0, hints)
	if err != nil || infos[0].Caps&(provider.CapTagged|provider.CapMultiRecv) != provider.CapTagged|provider.CapMultiRecv ||
		infos[0].RxAttr.Caps&provider.CapTagged == 0 || infos[0].TxAttr.Caps&provider.CapTagged == 0 {
		t.Errorf("tagged hints: %v %v", err, infos)
	}
	// FI_EP_RDM is offered (as libfabric offers tcp;ofi_rxm); datagram
	// endpoints are not.
	if _, err := (tcpProvider{}).GetInfo(provider.APIVersion, "", "", 0,
		&provider.Info{EPAttr: &provider.EPAttr{Type: provider.EPDgram}}); !errors.Is(err, provider.ENODATA) {
		t.Errorf("DGRAM: %v", err)
	}
	rdm, err := (tcpProvider{}).GetInfo(provider.APIVersion, "", "", 0,
		&provider.Info{EPAttr: &provider.EPAttr{Type: provider.EPRDM}})
	if err != nil || len(rdm) == 0 {
		t.Fatalf("RDM: %v", err)
	}
	// Values of `FI_TCP_IFACE=lo fi_info -p 'tcp;ofi_rxm' -t FI_EP_RDM -v`
	// (1.17) for what this provider implements so far.
	r := rdm[0]
	if r.EPAttr.Type != provider.EPRDM || r.EPAttr.Protocol != provider.ProtoRXM || r.EPAttr.ProtocolVersion != 1 ||
		r.EPAttr.MemTagFormat != RDMMemTagFormat || r.TxAttr.InjectSize != 64 || r.TxAttr.Size != 2048 ||
		r.RxAttr.Size != 2048 || r.Caps&(provider.CapMsg|provider.CapTagged) != provider.CapMsg|provider.CapTagged ||
		r.DomainAttr.ControlProgress != provider.ProgressAuto || r.DomainAttr.DataProgress != provider.ProgressManual {
		t.Errorf("RDM info %+v %+v %+v", r, r.EPAttr, r.TxAttr)
	}
	all, err := (tcpProvider{}).GetInfo(provider.APIVersion, "", "", 0, nil)
	if err != nil || all[0].EPAttr.Type != provider.EPMsg || all[len(all)-1].EPAttr.Type != provider.EPRDM {
		t.Errorf("no hints: MSG entries first, then RDM: %v", err)
	}
	// node/service: destination and a source to reach it.
	infos, err = tcpProvider{}.GetInfo(provider.APIVersion, "127.0.0.1", "4711", 0, nil)
	if err != nil || formatSockaddr(infos[0].DestAddr) != "fi_sockaddr_in://127.0.0.1:4711" || infos[0].SrcAddr == nil {
		t.Errorf("node/service: %v %+v", err, infos)
	}
	// FI_SOURCE: node/service name the source.
	infos, err = tcpProvider{}.GetInfo(provider.APIVersion, "127.0.0.1", "4712", provider.FlagSource, nil)
	if err != nil || formatSockaddr(infos[0].SrcAddr) != "fi_sockaddr_in://127.0.0.1:4712" || infos[0].DestAddr != nil {
		t.Errorf("FI_SOURCE: %v %+v", err, infos)
	}
	t.Setenv(envTxSize, "64")
	t.Setenv(envRxSize, "32")
	infos, _ = tcpProvider{}.GetInfo(provider.APIVersion, "", "", 0, nil)
	if infos[0].TxAttr.Size != 64 || infos[0].RxAttr.Size != 32 {
		t.Errorf("FI_TCP_TX/RX_SIZE: %d %d", infos[0].TxAttr.Size, infos[0].RxAttr.Size)
	}
}

func TestConnectAcceptData(t *testing.T) {
	for _, o := range []opts{{}, {manualCM: true}, {auto: true}} {
		info := loInfo(t, o)
		l := listen(t, info)
		cli, srv := pairWith(t, l, info, o, []byte("conn-req-data"), []byte("accept-data"))
		cn, _ := cli.ep.Name()
		sp, err := srv.ep.Peer()
		if err != nil || !bytes.Equal(cn, sp) {
			t.Fatalf("server peer %x %v, client name %x", sp, err, cn)
		}
		cp, err := cli.ep.Peer()
		if err != nil || !bytes.Equal(cp, l.name) {
			t.Fatalf("client peer %x %v, listener %x", cp, err, l.name)
		}
		if v, err := cli.ep.GetOpt(provider.OptCMDataSize); v != 256 || err != nil {
			t.Fatalf("cm data size %d %v", v, err)
		}
		if err := cli.ep.SetOpt(provider.OptCMDataSize, 10); err != provider.ENOPROTOOPT {
			t.Fatalf("setopt: %v", err)
		}
		if v, err := l.p.GetOpt(provider.OptCMDataSize); v != 256 || err != nil {
			t.Fatalf("pep cm data size %d %v", v, err)
		}
		if err := cli.ep.Connect(l.name, nil); err != provider.EISCONN {
			t.Fatalf("second connect: %v", err)
		}
		if err := srv.ep.Accept(nil); err != provider.EOPBADSTATE {
			t.Fatalf("second accept: %v", err)
		}
		// Data flows both ways.
		srv.post(make([]byte, 8), "r")
		cli.send([]byte("hi there"), "s", 0)
		expectComp(t, cli.txCQ, "s", provider.FlagSend|provider.FlagMsg)
		expectComp(t, srv.rxCQ, "r", provider.FlagRecv|provider.FlagMsg, cli)
	}
}

func TestCMDataLimits(t *testing.T) {
	info := loInfo(t, opts{})
	l := listen(t, info)
	long := make([]byte, CMDataSize+1)
	cli := newNode(t, info, opts{})
	if err := cli.ep.Connect(l.name, long); err != provider.EINVAL {
		t.Fatalf("connect with %d bytes: %v", len(long), err)
	}
	max := pattern(make([]byte, CMDataSize), 3)
	if err := cli.ep.Connect(l.name, max); err != nil {
		t.Fatal(err)
	}
	ev := expectEvent(t, l.eq, provider.EventConnReq)
	if !bytes.Equal(ev.CMData, max) {
		t.Fatal("256-byte cm data differs")
	}
	if err := l.p.Reject(ev.Info.Handle, long); err != provider.EINVAL {
		t.Fatalf("reject with %d bytes: %v", len(long), err)
	}
	srv := newNode(t, ev.Info, opts{})
	if err := srv.ep.Accept(long); err != provider.EINVAL {
		t.Fatalf("accept with %d bytes: %v", len(long), err)
	}
	if err := srv.ep.Accept(max); err != nil {
		t.Fatal(err)
	}
	ev = expectEvent(t, cli.eq, provider.EventConnected)
	if !bytes.Equal(ev.CMData, max) {
		t.Fatal("256-byte accept data differs")
	}
	// The handle was used: a second endpoint or a reject fails.
	if _, err := (&domain{}).Endpoint(ev.Info); err == nil && ev.Info != nil {
		t.Fatal("endpoint from a used request")
	}
}

func TestRejectWithData(t *testing.T) {
	info := loInfo(t, opts{})
	l := listen(t, info)
	cli := newNode(t, info, opts{})
	if err := cli.ep.Connect(l.name, []byte("conn-req-data")); err != nil {
		t.Fatal(err)
	}
	ev := expectEvent(t, l.eq, provider.EventConnReq)
	if err := l.p.Reject(ev.Info.Handle, []byte("go-away")); err != nil {
		t.Fatal(err)
	}
	if err := l.p.Reject(ev.Info.Handle, nil); err != provider.EINVAL {
		t.Fatalf("second reject: %v", err)
	}
	_, ee := readEQ(t, cli.eq)
	if ee == nil || ee.Err != provider.ECONNREFUSED || string(ee.ErrData) != "go-away" || ee.FID != any(cli.ep) {
		t.Fatalf("reject: %+v", ee)
	}
	expectNoEvent(t, cli.eq, 50*time.Millisecond)
	// Posts on the refused endpoint fail; a new endpoint can connect.
	if err := cli.ep.Send(provider.Msg{Buf: []byte("x")}); err != provider.ENOTCONN {
		t.Fatalf("send after reject: %v", err)
	}
	if err := cli.ep.Connect(l.name, nil); err != provider.EOPBADSTATE {
		t.Fatalf("connect after reject: %v", err)
	}
	pairWith(t, l, info, opts{}, nil, nil)
}

func TestShutdownOnce(t *testing.T) {
	cli, srv := pair(t, opts{})
	cli.post(make([]byte, 16), "pending-recv")
	if err := cli.ep.Shutdown(0); err != nil {
		t.Fatal(err)
	}
	if ev := expectEvent(t, cli.eq, provider.EventShutdown); ev.FID != any(cli.ep) {
		t.Fatalf("fid %v", ev.FID)
	}
	if ev := expectEvent(t, srv.eq, provider.EventShutdown); ev.FID != any(srv.ep) {
		t.Fatalf("fid %v", ev.FID)
	}
	if err := cli.ep.Shutdown(0); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
	expectNoEvent(t, cli.eq, 50*time.Millisecond)
	expectNoEvent(t, srv.eq, 50*time.Millisecond)
	for _, n := range []*node{cli, srv} {
		if err := n.ep.Send(provider.Msg{Buf: []byte("x"), Flags: provider.FlagCompletion}); err != provider.ENOTCONN {
			t.Fatalf("send after shutdown: %v", err)
		}
		if err := n.ep.Read(provider.Msg{Buf: make([]byte, 1), RMAOne: provider.RMAIOV{Len: 1}}); err != provider.ENOTCONN {
			t.Fatalf("read after shutdown: %v", err)
		}
	}
}

func TestSetNameAndPortRange(t *testing.T) {
	info := loInfo(t, opts{})
	// FI_TCP_PORT_LOW/HIGH_RANGE pins the passive endpoint's port.
	base := 47600 + uint16(time.Now().UnixNano()%200)
	t.Setenv(envPortLow, itoa(int(base)))
	t.Setenv(envPortHigh, itoa(int(base+20)))
	l := listen(t, info)
	port := binary.BigEndian.Uint16(l.name[2:])
	if port < base || port > base+20 {
		t.Fatalf("port %d outside [%d, %d]", port, base, base+20)
	}
	t.Setenv(envPortLow, "")
	// fi_setname on a passive endpoint before listen, and on an endpoint
	// before connect.
	pe, err := newPEP(info)
	if err != nil {
		t.Fatal(err)
	}
	defer pe.Close()
	before, _ := pe.Name()
	if err := pe.SetName(info.SrcAddr); err != nil {
		t.Fatal(err)
	}
	after, _ := pe.Name()
	if bytes.Equal(before, after) || binary.BigEndian.Uint16(after[2:]) == 0 {
		t.Fatalf("setname: %x -> %x", before, after)
	}
	if err := pe.SetName(l.name); err != provider.EADDRINUSE {
		t.Fatalf("setname to a listening address: %v", err)
	}
	q := must(eq.New(eq.Config{WaitObj: provider.WaitUnspec}))(t)
	defer q.Close()
	if err := q.AddSource(pe); err != nil {
		t.Fatal(err)
	}
	if err := pe.Listen(q); err != nil {
		t.Fatal(err)
	}
	if err := pe.SetName(info.SrcAddr); err != provider.EOPBADSTATE {
		t.Fatalf("setname after listen: %v", err)
	}
	// An active endpoint: ephemeral port, an address in use, after enable.
	ep, err := newEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if err := ep.SetName(withPort(info.SrcAddr, 0)); err != nil {
		t.Fatal(err)
	}
	name, _ := ep.Name()
	if binary.BigEndian.Uint16(name[2:]) == 0 {
		t.Fatalf("setname port 0: %x", name)
	}
	other := newNode(t, info, opts{})
	oname, _ := other.ep.Name()
	if err := ep.SetName(oname); err != provider.EADDRINUSE {
		t.Fatalf("setname to an address in use: %v", err)
	}
	if err := ep.SetName(l.name); err != provider.EADDRINUSE {
		t.Fatalf("setname to a listening address: %v", err)
	}
	if err := other.ep.SetName(info.SrcAddr); err != provider.EOPBADSTATE {
		t.Fatalf("setname after enable: %v", err)
	}
	// The endpoint connects from the address it was given.
	cli := newNode(t, info, opts{})
	if err := cli.ep.Connect(after, []byte("x")); err != nil {
		t.Fatal(err)
	}
	ev := expectEvent(t, q, provider.EventConnReq)
	cname, _ := cli.ep.Name()
	if !bytes.Equal(ev.Info.DestAddr, cname) {
		t.Fatalf("connreq dest_addr %x, client name %x", ev.Info.DestAddr, cname)
	}
	if err := pe.Reject(ev.Info.Handle, nil); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n > 0 || i == len(b) {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// TestSlowConnectRequest: a client whose connect request arrives in pieces,
// well after its TCP connection, is still reported, with automatic control
// progress (a goroutine reads it) and with manual control progress (EQ
// reads do).
func TestSlowConnectRequest(t *testing.T) {
	for _, o := range []opts{{}, {manualCM: true}} {
		info := loInfo(t, o)
		l := listen(t, info)
		a, _, _ := decodeSockaddr(l.name)
		c, err := net.Dial("tcp4", a.AP.String())
		if err != nil {
			t.Fatal(err)
		}
		req, _ := tcpwire.AppendCM(nil, tcpwire.CMConnReq, []byte("slow-request"))
		time.Sleep(20 * time.Millisecond)
		l.p.Progress() // accepts; the request is not there yet
		c.Write(req[:10])
		time.Sleep(20 * time.Millisecond)
		l.p.Progress()
		c.Write(req[10:40])
		time.Sleep(10 * time.Millisecond)
		c.Write(req[40:])
		ev := expectEvent(t, l.eq, provider.EventConnReq)
		if string(ev.CMData) != "slow-request" {
			t.Fatalf("%+v: connreq data %q", o, ev.CMData)
		}
		// A connection that never sends a valid request is dropped
		// without an event.
		bad, err := net.Dial("tcp4", a.AP.String())
		if err != nil {
			t.Fatal(err)
		}
		bad.Write([]byte("GET / HTTP/1.0\r\n\r\n0123456789abcdef"))
		expectNoEvent(t, l.eq, 30*time.Millisecond)
		bad.SetReadDeadline(time.Now().Add(waitLimit))
		if _, err := bad.Read(make([]byte, 1)); err == nil {
			t.Fatalf("%+v: the bad connection was answered", o)
		}
		bad.Close()
		c.Close()
		// The request's connection is gone; closing the listener with the
		// request unclaimed must release it.
	}
}

// TestSourcePortReuse: as with libfabric's tcp (SO_REUSEADDR), an active
// endpoint can be opened on a fixed source port whose previous connection
// it closed first (the port is in TIME_WAIT), and a passive endpoint on a
// port whose accepted connection it closed first.
func TestSourcePortReuse(t *testing.T) {
	info := loInfo(t, opts{})
	l := listen(t, info)
	lport := binary.BigEndian.Uint16(l.name[2:])
	probe := newNode(t, info, opts{}) // an ephemeral port, free once closed
	pname, _ := probe.ep.Name()
	probe.close()
	cinfo := *info
	cinfo.SrcAddr = withPort(info.SrcAddr, binary.BigEndian.Uint16(pname[2:]))
	// closeFirst shuts a down, waits for the peer's FIN_WAIT/CLOSE_WAIT
	// dance to start, then shuts b down: a's port ends in TIME_WAIT.
	closeFirst := func(a, b *node) {
		t.Helper()
		if err := a.ep.Shutdown(0); err != nil {
			t.Fatal(err)
		}
		expectEvent(t, b.eq, provider.EventShutdown)
		if err := b.ep.Shutdown(0); err != nil {
			t.Fatal(err)
		}
		a.close()
		b.close()
	}
	cli, srv := pairWith(t, l, &cinfo, opts{}, nil, nil)
	closeFirst(cli, srv)
	ep, err := newEndpoint(&cinfo)
	if err != nil {
		t.Fatalf("active endpoint on a source port in TIME_WAIT: %v", err)
	}
	ep.Close()
	cli, srv = pairWith(t, l, info, opts{}, nil, nil)
	closeFirst(srv, cli)
	l.p.Close()
	pinfo := *info
	pinfo.SrcAddr = withPort(info.SrcAddr, lport)
	pe, err := newPEP(&pinfo)
	if err != nil {
		t.Fatalf("passive endpoint on a port in TIME_WAIT: %v", err)
	}
	pe.Close()
}
