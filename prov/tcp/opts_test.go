package tcp

import (
	"testing"

	"github.com/gofabric/fabric/internal/eq"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// listenBacklogOf reads the backlog the kernel holds for p's listening
// socket.
func listenBacklogOf(t *testing.T, p *pep) uint32 {
	t.Helper()
	n, err := sys.ListenBacklog(p.conn)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(n)
}

// TestBacklogReachesListen checks that FI_BACKLOG is what listen(2) gets,
// before fi_listen and while listening, and that the default is Backlog
// (capped by net.core.somaxconn).
func TestBacklogReachesListen(t *testing.T) {
	info := loInfo(t, opts{})
	l := listen(t, info)
	if got := listenBacklogOf(t, l.p); got == 0 || got > Backlog {
		t.Fatalf("default backlog = %d; want 1..%d", got, Backlog)
	}
	if err := l.p.SetBacklog(7); err != nil {
		t.Fatal(err)
	}
	if got := listenBacklogOf(t, l.p); got != 7 {
		t.Fatalf("backlog after FI_BACKLOG 7 while listening = %d", got)
	}

	pe, err := (&fabric{}).PassiveEndpoint(info)
	if err != nil {
		t.Fatal(err)
	}
	p := pe.(*pep)
	defer p.Close()
	if err := p.SetBacklog(5); err != nil {
		t.Fatal(err)
	}
	q := must(eq.New(eq.Config{WaitObj: provider.WaitUnspec}))(t)
	defer q.Close()
	if err := q.AddSource(p); err != nil {
		t.Fatal(err)
	}
	if err := p.Listen(q); err != nil {
		t.Fatal(err)
	}
	if got := listenBacklogOf(t, p); got != 5 {
		t.Fatalf("backlog after FI_BACKLOG 5 before listen = %d", got)
	}
	if got := p.Backlog(); got != 5 {
		t.Fatalf("Backlog() = %d; want 5", got)
	}
	if err := p.SetBacklog(0); err == nil {
		t.Fatal("FI_BACKLOG 0 accepted")
	}
	p.Close()
	if err := p.SetBacklog(5); err == nil {
		t.Fatal("FI_BACKLOG on a closed passive endpoint accepted")
	}
}

// TestRDMSockBufReachesConnections checks that FI_OPT_RECV_BUF_SIZE /
// SEND_BUF_SIZE set on an RDM endpoint reach its listener (getopt reads
// it) and the sockets of connections made afterwards, and that the
// provider bounds FI_OPT_TX_SIZE (the root refuses it after enable).
func TestRDMSockBufReachesConnections(t *testing.T) {
	info := rdmBaseInfo(nil)
	info.SrcAddr = []byte{2, 0, 0, 0, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}
	info.AddrFormat = provider.SockAddrIn
	ep, err := newRDM(info)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	for _, c := range []struct {
		name int
		send bool
	}{{provider.OptRecvBufSize, false}, {provider.OptSendBufSize, true}} {
		if err := ep.SetOpt(c.name, 40<<10); err != nil {
			t.Fatal(err)
		}
		v, err := ep.GetOpt(c.name)
		if err != nil || v < 40<<10 || v > 80<<10 {
			t.Fatalf("getopt %d = %d, %v; want 40..80 KiB", c.name, v, err)
		}
		s, err := sys.TCPSocket(info.SrcAddr, false)
		if err != nil {
			t.Fatal(err)
		}
		ep.mu.Lock()
		ep.applySockBufs(s)
		ep.mu.Unlock()
		got, err := sys.SockBuf(s, c.send)
		s.Close()
		if err != nil || uint64(got) != v {
			t.Fatalf("new connection's buffer %d = %d, %v; want the listener's %d", c.name, got, err, v)
		}
		if err := ep.SetOpt(c.name, 0); err == nil {
			t.Fatalf("setopt %d = 0 accepted", c.name)
		}
	}
	if err := ep.SetOpt(provider.OptTxSize, maxQueueSize+1); err == nil {
		t.Fatal("FI_OPT_TX_SIZE beyond the maximum accepted")
	}
	if err := ep.SetOpt(provider.OptTxSize, 4); err != nil || ep.txSize != 4 {
		t.Fatalf("FI_OPT_TX_SIZE 4: %v, txSize %d", err, ep.txSize)
	}
}
