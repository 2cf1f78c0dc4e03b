package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Interoperability through the plugin: libfabric's C fi_pingpong runs over
// gotcp/goudp against itself, against our Go cmd/fi_pingpong (which uses
// the Go API directly, without the plugin), and against the C library's
// own tcp provider (same wire). Every pair runs with -c (payload checks)
// on loopback and a free control port; both must exit 0 and print the
// same result table.

// side is one end of a pair: the C tool over a provider (the plugin's goX
// or a C provider), or our Go tool over a Go provider.
type side struct {
	goTool bool
	prov   string
}

func (s side) String() string {
	if s.goTool {
		return "Go-" + s.prov
	}
	return "C-" + s.prov
}

// pair runs server and client fi_pingpong with endpoint type ep, -S size,
// -I iters, and checks both tables. It returns the client's rows.
func pair(t *testing.T, server, client side, ep, size string, iters int) []string {
	t.Helper()
	return pairArgs(t, server, client, ep, size, iters, nil)
}

// pairArgs is pair with extra arguments for both tools.
func pairArgs(t *testing.T, server, client side, ep, size string, iters int, extraArgs []string) []string {
	t.Helper()
	dir := plugin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"-e", ep, "-S", size, "-I", strconv.Itoa(iters), "-c"}, extraArgs...)
	cmd := func(s side, extra ...string) (string, []string) {
		a := append([]string{"-p", s.prov}, args...)
		if s.goTool {
			return goPingpong(t), append(append([]string{"--timeout", "30"}, a...), extra...)
		}
		return cPingpong(t), append(a, extra...)
	}
	envv := env(dir)
	var srv *proc
	var port int
	for attempt := 1; ; attempt++ {
		port = freePort(t)
		sbin, sargs := cmd(server, "-B", strconv.Itoa(port))
		srv = start(t, ctx, envv, sbin, sargs...)
		err := waitListening(ctx, srv, port)
		if err == nil {
			break
		}
		// freePort's port is an ephemeral one: another socket of the
		// machine can take it before the server binds it. Another port.
		if attempt < 3 && strings.Contains(srv.stderr(), "Address already in use") {
			continue
		}
		t.Fatal(err)
	}
	cbin, cargs := cmd(client, "-P", strconv.Itoa(port), "127.0.0.1")
	cli := start(t, ctx, envv, cbin, cargs...)
	cerr := cli.wait(ctx)
	serr := srv.wait(ctx)
	if cerr != nil || serr != nil || ctx.Err() != nil {
		t.Fatalf("%s server / %s client failed (%v):\nserver %v\nclient %v", server, client, ctx.Err(), srv, cli)
	}
	crows := pingpongRows(t, "client "+client.String(), cli.stdout(), iters)
	srows := pingpongRows(t, "server "+server.String(), srv.stdout(), iters)
	if !slices.Equal(crows, srows) {
		t.Fatalf("server printed sizes %v, client %v", srows, crows)
	}
	if size != "all" {
		n, _ := strconv.Atoi(size)
		if want := []string{sizeStr(n)}; !slices.Equal(crows, want) {
			t.Fatalf("sizes %v, want %v", crows, want)
		}
	}
	return crows
}

// TestPingpongCC: the C fi_pingpong against itself over the plugin, and
// over the C library's ofi_rxm layered on gotcp (-e rdm).
func TestPingpongCC(t *testing.T) {
	for _, c := range []struct {
		prov, ep string
		sizes    []string
		iters    int
	}{
		{"gotcp", "msg", []string{"1", "64", "1024", "65536", "1048576", "all"}, 10},
		{"goudp", "dgram", []string{"1", "1024", "1472", "all"}, 20},
		{"gotcp", "rdm", []string{"64", "all"}, 10},
	} {
		for _, size := range c.sizes {
			t.Run(fmt.Sprintf("%s_%s/S=%s", c.prov, c.ep, size), func(t *testing.T) {
				rows := pair(t, side{prov: c.prov}, side{prov: c.prov}, c.ep, size, c.iters)
				if size == "all" && len(rows) < 10 {
					t.Fatalf("-S all ran only sizes %v", rows)
				}
			})
		}
	}
}

// TestPingpongCGo: the C fi_pingpong over the plugin against our Go
// fi_pingpong over the Go API, both roles, and -S all lists the same
// sizes on both (the same max_msg_size seen through C and Go).
func TestPingpongCGo(t *testing.T) {
	for _, c := range []struct {
		prov, ep string
		sizes    []string
		iters    int
	}{
		{"tcp", "msg", []string{"64", "65536", "all"}, 10},
		{"udp", "dgram", []string{"64", "1472", "all"}, 20},
	} {
		cs, gs := side{prov: "go" + c.prov}, side{goTool: true, prov: c.prov}
		for _, size := range c.sizes {
			for _, roles := range [][2]side{{cs, gs}, {gs, cs}} {
				t.Run(fmt.Sprintf("%s/S=%s/%v-server_%v-client", c.prov, size, roles[0], roles[1]), func(t *testing.T) {
					pair(t, roles[0], roles[1], c.ep, size, c.iters)
				})
			}
		}
	}
}

// TestPingpongPluginVsC: the C fi_pingpong over gotcp/goudp against the
// C fi_pingpong over the C library's own tcp/udp provider (the wire is the
// same), both roles; and ofi_rxm over gotcp against ofi_rxm over tcp.
func TestPingpongPluginVsC(t *testing.T) {
	for _, c := range []struct {
		prov, ep string
		sizes    []string
		iters    int
	}{
		{"tcp", "msg", []string{"64", "1048576"}, 10},
		{"udp", "dgram", []string{"64", "1472"}, 20},
		{"tcp", "rdm", []string{"64", "1048576"}, 10},
	} {
		ours, theirs := side{prov: "go" + c.prov}, side{prov: c.prov}
		for _, size := range c.sizes {
			for _, roles := range [][2]side{{ours, theirs}, {theirs, ours}} {
				t.Run(fmt.Sprintf("%s_%s/S=%s/%v-server_%v-client", c.prov, c.ep, size, roles[0], roles[1]), func(t *testing.T) {
					pair(t, roles[0], roles[1], c.ep, size, c.iters)
				})
			}
		}
	}
}

// TestPingpongTagged: -m tagged (fi_tsend/fi_trecv) through the plugin:
// C against C over gotcp (msg, and rdm over ofi_rxm), and C over gotcp
// against our Go tool over tcp, both roles.
func TestPingpongTagged(t *testing.T) {
	tagged := []string{"-m", "tagged"}
	t.Run("gotcp_msg/C-C", func(t *testing.T) {
		pairArgs(t, side{prov: "gotcp"}, side{prov: "gotcp"}, "msg", "all", 10, tagged)
	})
	t.Run("gotcp_rdm/C-C", func(t *testing.T) {
		pairArgs(t, side{prov: "gotcp"}, side{prov: "gotcp"}, "rdm", "1024", 10, tagged)
	})
	cs, gs := side{prov: "gotcp"}, side{goTool: true, prov: "tcp"}
	for _, roles := range [][2]side{{cs, gs}, {gs, cs}} {
		t.Run(fmt.Sprintf("tcp_msg/%v-server_%v-client", roles[0], roles[1]), func(t *testing.T) {
			pairArgs(t, roles[0], roles[1], "msg", "65536", 10, tagged)
		})
	}
}
