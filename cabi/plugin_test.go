package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests build the plugin and drive it through the C libfabric: its
// fi_info tool and small C programs. They need gcc and the C libfabric
// (libfabric-dev, fi_info); like the interop tests of the library module
// (internal/testutil.InteropCheck, not importable from this module) they
// skip when a tool is missing, unless FABRIC_INTEROP=1 makes that a
// failure. A build failure with the tools present is always a failure.

const interopEnv = "FABRIC_INTEROP"

// interopCheck skips (or, with FABRIC_INTEROP=1, fails) when err says a
// tool is missing.
func interopCheck(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv(interopEnv) == "1" {
		t.Fatalf("%s=1 but %s is unusable: %v", interopEnv, what, err)
	}
	t.Skipf("%s unusable (%v); set %s=1 to make this a failure", what, err, interopEnv)
}

func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"gcc", "fi_info"} {
		_, err := exec.LookPath(tool)
		interopCheck(t, tool, err)
	}
	_, err := os.Stat("/usr/include/rdma/providers/fi_prov.h")
	interopCheck(t, "libfabric-dev", err)
}

var (
	pluginOnce sync.Once
	pluginDir  string
	pluginErr  error
	pluginOut  []byte
)

// plugin builds the plugin once (build.sh) and returns its directory.
func plugin(t *testing.T) string {
	t.Helper()
	needTools(t)
	pluginOnce.Do(func() {
		pluginDir, pluginErr = os.MkdirTemp("", "cabi-plugin-")
		if pluginErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		pluginOut, pluginErr = exec.CommandContext(ctx, "./build.sh", pluginDir).CombinedOutput()
	})
	if pluginErr != nil {
		t.Fatalf("build.sh: %v\n%s", pluginErr, pluginOut)
	}
	return pluginDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pluginDir != "" {
		os.RemoveAll(pluginDir)
	}
	os.Exit(code)
}

// env is the environment of the C tools: our plugin, loopback interfaces,
// no provider filter from the caller.
func env(dir string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FI_PROVIDER=") && !strings.HasPrefix(kv, "FI_PROVIDER_PATH=") {
			out = append(out, kv)
		}
	}
	return append(out, "FI_PROVIDER_PATH="+dir, "FI_TCP_IFACE=lo", "FI_UDP_IFACE=lo")
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env(dir)
	// A temporary working directory: libinfinipath (loaded by the C
	// library's psm provider) drops *.btr files into it when a process crashes.
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s%s", name, args, err, out, stderr.Bytes())
	}
	return string(out)
}

func TestFiInfoLists(t *testing.T) {
	dir := plugin(t)
	out := run(t, dir, "fi_info", "-l")
	for _, p := range []string{"gotcp:", "goudp:"} {
		if !slices.Contains(strings.Fields(out), p) {
			t.Errorf("fi_info -l lacks %s:\n%s", p, out)
		}
	}
}

// infoBlocks splits fi_info -v output into its fi_info blocks, dropping
// those a C utility provider layered over ours (prov_name "goX;ofi_rxm"),
// with goX renamed X.
func infoBlocks(out, cName, goName string) []string {
	var blocks []string
	for _, b := range strings.Split(out, "---\n") {
		if strings.TrimSpace(b) == "" {
			continue
		}
		if strings.Contains(b, "prov_name: "+cName+";") {
			continue
		}
		blocks = append(blocks, strings.ReplaceAll(b, "prov_name: "+cName+"\n", "prov_name: "+goName+"\n"))
	}
	return blocks
}

// TestFiInfoMatchesGo: the C fi_info shows through the plugin exactly the
// Infos our Go fi_info shows for the provider.
func TestFiInfoMatchesGo(t *testing.T) {
	dir := plugin(t)
	goBin := filepath.Join(dir, "go_fi_info")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", goBin,
		"github.com/gofabric/fabric/cmd/fi_info").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/fi_info: %v\n%s", err, out)
	}
	for _, p := range []string{"tcp", "udp"} {
		t.Run(p, func(t *testing.T) {
			c := infoBlocks(run(t, dir, "fi_info", "-p", "go"+p, "-v"), "go"+p, p)
			g := infoBlocks(run(t, dir, goBin, "-p", p, "-v"), p, p)
			for i := range g {
				// The plugin does not offer FI_BUFFERED_RECV to hints with
				// every mode bit set, as fi_info's (bufrecv.go), which the
				// Go providers show in mode to such hints.
				g[i] = strings.ReplaceAll(g[i], "mode: [ FI_BUFFERED_RECV ]", "mode: [  ]")
			}
			if len(g) == 0 {
				t.Fatal("Go fi_info printed nothing")
			}
			if len(c) != len(g) {
				t.Fatalf("C shows %d infos, Go %d:\n%s\n=== Go:\n%s", len(c), len(g),
					strings.Join(c, "---\n"), strings.Join(g, "---\n"))
			}
			for i := range c {
				if c[i] != g[i] {
					t.Errorf("info %d differs:\nC:\n%s\nGo:\n%s", i, c[i], g[i])
				}
			}
		})
	}
}

// TestCProgram opens and closes fabric and domain from C, with bad input
// and stale/forged fids, and checks that no handle leaks.
func TestCProgram(t *testing.T) {
	dir := plugin(t)
	bin := compileC(t, "basic.c")
	for _, p := range []string{"gotcp", "goudp"} {
		t.Run(p, func(t *testing.T) {
			if out := run(t, dir, bin, p, filepath.Join(dir, "libgofabric.so")); out != "ok\n" {
				t.Fatalf("output %q", out)
			}
		})
	}
}
