package archtest

import (
	"go/parser"
	"go/token"
	"strings"
	"sync"
	"testing"
)

var module struct {
	once sync.Once
	pkgs []Package
	err  error
}

// loadModule runs Load once for all the tests; they must not modify the
// list it returns (withViolation copies what it changes).
func loadModule(t *testing.T) []Package {
	t.Helper()
	module.once.Do(func() { module.pkgs, module.err = Load(".") })
	if module.err != nil {
		t.Fatal(module.err)
	}
	return module.pkgs
}

func TestModule(t *testing.T) {
	pkgs := loadModule(t)
	seen := map[string]bool{}
	files := 0
	for _, p := range pkgs {
		seen[p.Path] = true
		files += len(p.Files)
	}
	// The rules must have met the packages and file kinds they speak about.
	for _, p := range []string{"", "provider", "peer", "prov/tcp", "prov/udp", "prov/lnx", "prov/chaos", "prov/sim", "prov/all", "internal/sys", "internal/testutil", "cmd/fi_info", "fabtest"} {
		if !seen[p] {
			t.Errorf("go list did not report package %q", p)
		}
	}
	if files < 50 {
		t.Fatalf("only %d files parsed", files)
	}
	for _, v := range Check(pkgs) {
		t.Error(v)
	}
}

func TestModuleKinds(t *testing.T) {
	pkgs := loadModule(t)
	kinds := map[Kind]bool{}
	ignored := false
	for _, p := range pkgs {
		for _, f := range p.Files {
			kinds[f.Kind] = true
			if strings.HasSuffix(f.Name, "_other.go") {
				ignored = true // excluded on linux by a build constraint, parsed anyway
			}
		}
	}
	if !kinds[Lib] || !kinds[Test] || !kinds[XTest] {
		t.Errorf("file kinds seen: %v, want Lib, Test and XTest", kinds)
	}
	if !ignored {
		t.Error("files excluded by build constraints were not parsed")
	}
}

const m = Module + "/"

func lib(name string, imports ...string) File  { return File{Name: name, Kind: Lib, Imports: imports} }
func test(name string, imports ...string) File { return File{Name: name, Kind: Test, Imports: imports} }
func xtest(name string, imports ...string) File {
	return File{Name: name, Kind: XTest, Imports: imports}
}

// TestRulesBite gives Check one synthetic package list per rule, each with
// one forbidden import, and requires exactly that violation.
// TestSimXProcMayImportNet: prov/sim's cross-process files (xproc*.go)
// may import net, and only they.
func TestSimXProcMayImportNet(t *testing.T) {
	for _, name := range []string{"xproc.go", "xproc_linux.go"} {
		if v := Check([]Package{{"prov/sim", []File{lib(name, "net")}}}); len(v) != 0 {
			t.Errorf("%s importing net: %v", name, v)
		}
	}
	for _, name := range []string{"network.go", "xprocs.go", "my_xproc.go"} {
		if v := Check([]Package{{"prov/sim", []File{lib(name, "net")}}}); len(v) != 1 || v[0].Rule != RuleSimInMemory {
			t.Errorf("%s importing net: %v", name, v)
		}
	}
}

func TestRulesBite(t *testing.T) {
	cases := []struct {
		name string
		pkg  Package
		rule string
	}{
		{"root imports provider", Package{"", []File{lib("fabric.go", m+"prov/udp")}}, RuleRootImportsProvider},
		{"root internal test imports provider", Package{"", []File{test("cq_test.go", m+"prov/tcp")}}, RuleRootImportsProvider},
		{"root example imports internal", Package{"", []File{xtest("example_test.go", m+"internal/cq")}}, RulePublicOnly},
		{"provider imports peer", Package{"provider", []File{lib("spi.go", m+"peer")}}, RuleProviderLeaf},
		{"provider test imports root", Package{"provider", []File{xtest("x_test.go", Module)}}, RuleProviderLeaf},
		{"peer imports internal", Package{"peer", []File{lib("peer.go", m+"internal/cq")}}, RulePeerOnlyProvider},
		{"provider imports provider", Package{"prov/tcp", []File{lib("ep.go", m+"prov/udp")}}, RuleProviderCross},
		{"provider imports provider with its name as prefix", Package{"prov/tcp", []File{lib("ep.go", m+"prov/tcpx")}}, RuleProviderCross},
		{"provider test imports provider", Package{"prov/udp", []File{xtest("x_test.go", m+"prov/tcp")}}, RuleProviderCross},
		{"provider imports root", Package{"prov/udp", []File{lib("ep.go", Module)}}, RuleProviderImportsRoot},
		{"provider internal test imports root", Package{"prov/udp", []File{test("ep_test.go", Module)}}, RuleProviderImportsRoot},
		{"provider imports fabtest", Package{"prov/tcp", []File{lib("ep.go", m+"fabtest")}}, RuleProviderImportsRoot},
		{"provider external test imports internal", Package{"prov/tcp", []File{xtest("x_test.go", m+"internal/cq")}}, RulePublicOnly},
		{"lnx imports internal", Package{"prov/lnx", []File{lib("lnx.go", m+"internal/srx")}}, RulePublicOnly},
		{"lnx imports shm", Package{"prov/lnx", []File{lib("lnx.go", m+"prov/shm")}}, RuleProviderCross},
		{"lnx imports tcp", Package{"prov/lnx", []File{lib("lnx.go", m+"prov/tcp")}}, RuleProviderCross},
		{"lnx imports fabtest", Package{"prov/lnx", []File{lib("lnx.go", m+"fabtest")}}, RuleProviderImportsRoot},
		{"lnx internal test imports internal", Package{"prov/lnx", []File{test("lnx_test.go", m+"internal/av")}}, RulePublicOnly},
		{"chaos imports internal", Package{"prov/chaos", []File{lib("chaos.go", m+"internal/cq")}}, RulePublicOnly},
		{"chaos imports udp", Package{"prov/chaos", []File{lib("chaos.go", m+"prov/udp")}}, RuleProviderCross},
		{"chaos imports fabtest", Package{"prov/chaos", []File{lib("chaos.go", m+"fabtest")}}, RuleProviderImportsRoot},
		{"chaos external test imports internal", Package{"prov/chaos", []File{xtest("x_test.go", m+"internal/srx")}}, RulePublicOnly},
		{"other provider imports root", Package{"prov/shm", []File{lib("ep.go", Module)}}, RuleProviderImportsRoot},
		{"internal imports provider", Package{"internal/cq", []File{lib("cq.go", m+"prov/udp")}}, RuleInternalImportsUp},
		{"internal test imports root", Package{"internal/eq", []File{test("eq_test.go", Module)}}, RuleInternalImportsUp},
		{"internal external test imports fabtest", Package{"internal/eq", []File{xtest("x_test.go", m+"fabtest")}}, RuleInternalImportsUp},
		{"cmd imports internal", Package{"cmd/fi_info", []File{lib("main.go", m+"internal/hints")}}, RulePublicOnly},
		{"cmd test imports internal", Package{"cmd/fi_pingpong", []File{test("main_test.go", m+"internal/sys")}}, RulePublicOnly},
		{"fabtest imports provider", Package{"fabtest", []File{lib("suite.go", m+"prov/all")}}, RuleFabtestImportsProv},
		{"testutil in a non-test file", Package{"internal/cq", []File{lib("cq.go", m+"internal/testutil")}}, RuleTestutilInTestsOnly},
		{"unsafe outside internal/sys", Package{"internal/cq", []File{lib("ring_unsafe.go", "unsafe")}}, RuleUnsafePackage},
		{"x/sys/unix in a provider", Package{"prov/udp", []File{lib("sock_linux.go", "golang.org/x/sys/unix")}}, RuleUnsafePackage},
		{"unsafe in a test of root", Package{"", []File{test("mr_test.go", "unsafe")}}, RuleUnsafePackage},
		{"unsafe in a plain file of internal/sys", Package{"internal/sys", []File{lib("socket.go", "unsafe")}}, RuleUnsafeFileName},
		{"x/sys/unix in an _other file", Package{"internal/sys", []File{lib("wait_other.go", "golang.org/x/sys/unix")}}, RuleUnsafeFileName},
		{"unsafe in a plain test of internal/shmring", Package{"internal/shmring", []File{test("ring_test.go", "unsafe")}}, RuleUnsafeFileName},
		{"cgo in the root", Package{"", []File{lib("fabric.go", "C")}}, RuleCgo},
		{"cgo in internal/sys", Package{"internal/sys", []File{lib("socket_linux.go", "C")}}, RuleCgo},
		{"root imports the plugin", Package{"", []File{lib("fabric.go", m+"cabi")}}, RuleCgo},
		{"test imports a plugin package", Package{"prov/tcp", []File{xtest("x_test.go", m+"cabi/sub")}}, RuleCgo},
		{"cmd imports the plugin", Package{"cmd/fi_info", []File{lib("main.go", m+"cabi")}}, RuleCgo},
		{"sim imports net", Package{"prov/sim", []File{lib("network.go", "net")}}, RuleSimInMemory},
		{"sim's cross-process file imports shmring", Package{"prov/sim", []File{lib("xproc.go", m+"internal/shmring")}}, RuleSimInMemory},
		{"sim imports shmring", Package{"prov/sim", []File{lib("endpoint.go", m+"internal/shmring")}}, RuleSimInMemory},
		{"sim draws unseeded randomness", Package{"prov/sim", []File{lib("network.go", "math/rand")}}, RuleSimInMemory},
		{"sim imports another provider", Package{"prov/sim", []File{lib("network.go", m+"prov/udp")}}, RuleProviderCross},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := Check([]Package{c.pkg})
			if len(vs) != 1 || vs[0].Rule != c.rule {
				t.Fatalf("Check = %v, want one violation of %q", vs, c.rule)
			}
			if v := vs[0]; v.Package != c.pkg.Path || v.File != c.pkg.Files[0].Name || v.Import != c.pkg.Files[0].Imports[0] {
				t.Errorf("violation %+v does not name the package, file and import", v)
			}
		})
	}
}

// TestRulesAllow lists imports the rules must let through.
func TestRulesAllow(t *testing.T) {
	pkgs := []Package{
		{"", []File{
			lib("cq.go", m+"internal/cq", m+"provider", m+"peer", "sync"),
			test("cq_test.go", m+"internal/sys", m+"internal/testutil"),
			xtest("example_test.go", Module, m+"prov/udp", m+"prov/tcp", m+"internal/testutil"),
		}},
		{"provider", []File{lib("spi.go", "syscall"), test("names_test.go", "os")}},
		{"peer", []File{lib("peer.go", m+"provider")}},
		{"prov/tcp", []File{
			lib("ep.go", m+"internal/sys", m+"internal/wire/tcpwire", m+"provider", m+"prov/tcp/internal/x"),
			test("helpers_test.go", m+"internal/cq", m+"internal/testutil"),
			xtest("suite_test.go", Module, m+"fabtest", m+"prov/tcp", m+"prov/tcp/internal/x"),
		}},
		{"prov/all", []File{lib("all.go", m+"prov/tcp", m+"prov/udp")}},
		{"prov/sim", []File{lib("network.go", "math/rand/v2", "time", m+"internal/srx", m+"internal/sys", m+"provider"),
			test("scale_test.go", "net", "crypto/rand"),
			xtest("conformance_test.go", Module, m+"fabtest", m+"prov/sim")}},
		{"prov/lnx", []File{lib("lnx.go", Module, m+"peer", m+"provider", m+"prov/lnx/internal/x"),
			test("route_test.go", Module, m+"prov/shm", m+"prov/tcp", m+"internal/testutil"),
			xtest("conformance_test.go", Module, m+"fabtest", m+"prov/all", m+"prov/lnx")}},
		{"prov/chaos", []File{lib("chaos.go", Module, m+"peer", m+"provider"),
			xtest("conformance_test.go", Module, m+"fabtest", m+"prov/udp", m+"prov/tcp", m+"prov/shm", m+"prov/chaos")}},
		{"internal/sys", []File{
			lib("socket_linux.go", "golang.org/x/sys/unix", "unsafe"),
			lib("ring_unsafe.go", "unsafe"),
			test("errno_linux_test.go", "golang.org/x/sys/unix"),
		}},
		{"internal/cq", []File{lib("cq.go", m+"internal/progress"), xtest("x_test.go", m+"internal/cq", m+"internal/sys")}},
		{"internal/cmd/genfi", []File{lib("main.go", "go/parser")}},
		{"cmd/fi_info", []File{lib("main.go", Module, m+"prov/all", m+"provider"), test("main_test.go", m+"internal/testutil")}},
		{"fabtest", []File{lib("suite.go", Module, m+"peer"), xtest("x_test.go", m+"prov/udp")}},
		// Not the module: a path that merely starts with the module path.
		{"internal/cq", []File{lib("x.go", Module+"x/prov/udp")}},
		// Not the plugin: a sibling path that merely starts with "cabi".
		{"internal/cq", []File{lib("y.go", m+"cabix")}},
	}
	for _, v := range Check(pkgs) {
		t.Error(v)
	}
}

// TestModuleWithViolation adds one forbidden import, or one raw system
// call (fabtest's old select(2) probe), to a real file of the loaded module
// and requires Check to report it.
func TestModuleWithViolation(t *testing.T) {
	for _, c := range []struct {
		pkg, imp, call, rule string
	}{
		{"prov/tcp", m + "prov/udp", "", RuleProviderCross},
		{"fabtest", "syscall", "Select", RuleRawSyscall},
		{"", "C", "", RuleCgo},
		{"internal/sys", m + "cabi", "", RuleCgo},
	} {
		pkgs, name := withViolation(t, loadModule(t), c.pkg, c.imp, c.call)
		vs := Check(pkgs)
		if len(vs) != 1 || vs[0].Rule != c.rule || vs[0].File != name {
			t.Errorf("Check = %v, want one %q violation in %s/%s", vs, c.rule, c.pkg, name)
		}
	}
}

// withViolation returns a copy of pkgs in which the first file of package
// path also imports imp and, if call is set, calls syscall.call; pkgs is
// left as it was.
func withViolation(t *testing.T, pkgs []Package, path, imp, call string) ([]Package, string) {
	t.Helper()
	out := append([]Package(nil), pkgs...)
	for i := range out {
		if out[i].Path != path {
			continue
		}
		files := append([]File(nil), out[i].Files...)
		f := &files[0]
		f.Imports = append(append([]string(nil), f.Imports...), imp)
		if call != "" {
			f.Syscalls = append(append([]string(nil), f.Syscalls...), call)
		}
		out[i].Files = files
		return out, f.Name
	}
	t.Fatalf("%s not found", path)
	return nil, ""
}

// The system-call entry points of package syscall stay in internal/sys
// (and internal/shmring), in *_linux.go or *_unsafe.go files; the rest of
// package syscall is usable anywhere.
func TestRawSyscallRule(t *testing.T) {
	sc := func(name, call string) File {
		return File{Name: name, Kind: Lib, Imports: []string{"syscall"}, Syscalls: []string{call}}
	}
	for _, c := range []struct {
		pkg  string
		file File
		bad  bool
	}{
		{"fabtest", sc("fdreadable_linux.go", "Select"), true},
		{"prov/udp", sc("sock_linux.go", "RawSyscall"), true},
		{"", sc("cq.go", "Syscall6"), true},
		{"internal/sys", sc("wait.go", "Syscall"), true},
		{"internal/sys", sc("wait_linux.go", "Select"), false},
		{"internal/shmring", sc("ring_unsafe.go", "Mmap"), false},
		{"provider", sc("errno.go", "Errno"), false},
	} {
		vs := Check([]Package{{c.pkg, []File{c.file}}})
		if !c.bad {
			if len(vs) != 0 {
				t.Errorf("%s/%s: %v", c.pkg, c.file.Name, vs)
			}
			continue
		}
		if len(vs) != 1 || vs[0].Rule != RuleRawSyscall || vs[0].Import != "syscall."+c.file.Syscalls[0] {
			t.Errorf("%s/%s using syscall.%s: Check = %v, want one %q violation", c.pkg, c.file.Name,
				c.file.Syscalls[0], vs, RuleRawSyscall)
		}
	}
}

// syscallUses finds the entry points under the import's local name only.
func TestSyscallUses(t *testing.T) {
	src := `package p
import sc "syscall"
var syscall struct{ Select int }
func f() { sc.Select(0, nil, nil, nil, nil); _ = sc.Errno(1); _ = syscall.Select; sc.RawSyscall(0, 0, 0, 0) }
`
	af, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if got := syscallUses(af, "sc"); strings.Join(got, ",") != "Select,RawSyscall" {
		t.Fatalf("syscallUses = %v, want [Select RawSyscall]", got)
	}
}
