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
