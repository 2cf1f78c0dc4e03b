// Package archtest checks the module's layering rules (STYLE.md §1) on every
// Go file of every package, test files included:
//
//   - the root package never imports a provider (prov/*); its external test
//     package (package fabric_test, the runnable examples) may, being a user;
//   - provider imports nothing else from the module, and peer only provider;
//   - a provider never imports another provider (prov/all, which gathers
//     them, excepted), nor the root package or fabtest; its external test
//     package may import those, to run the conformance suite as a user would;
//     the layered providers (Layered: prov/lnx, the composite, and
//     prov/chaos, the hook) may import the root package (lnx opens the
//     providers it links, shm and tcp, through the public API by name and
//     joins them with fi_peer(3); chaos installs itself through
//     fabric.OpenHooked and wraps any provider through the SPI), but
//     neither fabtest nor another provider nor an internal package; their
//     tests may import the providers they layer over (a user linking lnx
//     links them too);
//   - internal/* never imports prov/*, the root package or fabtest;
//   - cmd/*, the layered providers, and the external test packages of the
//     root package and of the providers import only public packages;
//   - fabtest, run by out-of-tree providers too, never imports prov/*;
//   - internal/testutil is imported by test files only (and then by any);
//   - unsafe and golang.org/x/sys/... are imported only by internal/sys and
//     internal/shmring, and there only in files named *_unsafe.go or
//     *_linux.go (or their _test.go forms);
//   - the system-call entry points of package syscall (Syscall, RawSyscall,
//     Select ...: RawSyscalls) are used only by internal/sys and
//     internal/shmring, in those same files. The rest of package syscall
//     (Errno and its constants, types) stays usable everywhere;
//   - prov/sim, the simulated fabric, stays in the process's memory and
//     draws randomness only from its seeded generator: its library files
//     import no transport (net, os/exec, internal/shmring,
//     internal/ipaddr) and no unseeded randomness (crypto/rand,
//     math/rand; math/rand/v2 with a source it seeds is allowed), so that
//     a run depends only on its seed and the order of the application's
//     calls; the one exception is net in the files of its cross-process
//     mode (xproc*.go: unix datagram sockets between processes, used only
//     when that mode is selected, and documented as not deterministic);
//   - no package imports "C" (cgo) or anything under cabi/, the C plugin:
//     a module of its own, the only place cgo is allowed, which depends on
//     the library and never the other way round.
//
// internal/shmring does not exist yet: the path is reserved for the
// shared-memory rings of the shm provider (STYLE.md §1), and the rules
// name it now so that it lands under them.
//
// Paths are compared element by element: prov/tcp may import
// prov/tcp/internal/x but not prov/tcpx.
//
// Check applies the rules to a package list; Load builds that list for the
// module with go list and go/parser. The tests run Check on the module and on
// synthetic lists that break each rule.
package archtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Layered lists the providers that layer over others through the public
// API and the provider SPI (see the package doc).
var Layered = map[string]bool{"prov/lnx": true, "prov/chaos": true}

func layered(pkg string) bool { return Layered[pkg] }

// Module is the module path the rules speak about.
const Module = "github.com/gofabric/fabric"

// Kind says which build a Go file belongs to.
type Kind int

// File kinds.
const (
	Lib   Kind = iota // the package itself
	Test              // a _test.go file of the package (internal test)
	XTest             // a _test.go file of package p_test (external test)
)

// File is one Go file and its imports.
type File struct {
	Name    string   // base name, e.g. "socket_linux.go"
	Kind    Kind     // Lib, Test or XTest
	Imports []string // import paths as written
	// Syscalls are the RawSyscalls names the file refers to (syscall.X).
	Syscalls []string
}

// RawSyscalls are the functions of package syscall that enter the kernel
// directly or multiplex descriptors; outside internal/sys they would
// bypass its errno translation, its 32/64-bit care and its stubs for
// other systems.
var RawSyscalls = map[string]bool{
	"Syscall": true, "Syscall6": true, "Syscall9": true, "RawSyscall": true, "RawSyscall6": true,
	"RawSyscallNoError": true, "Select": true, "EpollCreate": true, "EpollCreate1": true, "EpollCtl": true,
	"EpollWait": true, "Mmap": true, "Munmap": true,
}

// Package is one package of the module.
type Package struct {
	Path  string // import path relative to Module: "" (root), "provider", "prov/tcp" ...
	Files []File
}

// Rules, as reported in Violation.Rule.
const (
	RuleRootImportsProvider = "the root package imports a provider"
	RuleProviderLeaf        = "provider imports the module"
	RulePeerOnlyProvider    = "peer imports more than provider"
	RuleProviderCross       = "a provider imports another provider"
	RuleProviderImportsRoot = "a provider imports the root package or fabtest"
	RuleInternalImportsUp   = "an internal package imports a provider, the root package or fabtest"
	RulePublicOnly          = "a user package imports an internal package"
	RuleFabtestImportsProv  = "fabtest imports a provider"
	RuleTestutilInTestsOnly = "internal/testutil imported outside tests"
	RuleUnsafePackage       = "unsafe or x/sys imported outside internal/sys and internal/shmring"
	RuleUnsafeFileName      = "unsafe or x/sys imported in a file not named *_unsafe.go or *_linux.go"
	RuleRawSyscall          = "a raw system call of package syscall used outside internal/sys and internal/shmring"
	RuleCgo                 = "the library imports the C plugin (cabi) or uses cgo (import \"C\")"
	RuleSimInMemory         = "prov/sim imports a transport or unseeded randomness"
)

// simForbidden lists what prov/sim's library files may not import.
var simForbidden = map[string]bool{
	"net": true, "os/exec": true, "crypto/rand": true, "math/rand": true,
	Module + "/internal/shmring": true, Module + "/internal/ipaddr": true,
}

// simXProcFile reports whether name is a library file of prov/sim's
// cross-process mode (xproc.go, xproc_*.go), which may import net.
func simXProcFile(name string) bool {
	base := strings.TrimSuffix(filepath.Base(name), ".go")
	return base == "xproc" || strings.HasPrefix(base, "xproc_")
}

// Violation is one import that breaks a rule.
type Violation struct {
	Package, File, Import, Rule string
}

func (v Violation) String() string {
	p := v.Package
	if p == "" {
		p = "(root)"
	}
	return fmt.Sprintf("%s/%s imports %s: %s", p, v.File, v.Import, v.Rule)
}

// Check applies the rules to pkgs and returns every violation.
func Check(pkgs []Package) []Violation {
	var out []Violation
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, imp := range f.Imports {
				if rule := checkImport(p.Path, f, imp); rule != "" {
					out = append(out, Violation{Package: p.Path, File: f.Name, Import: imp, Rule: rule})
				}
			}
			for _, name := range f.Syscalls {
				if !RawSyscalls[name] {
					continue
				}
				if p.Path != "internal/sys" && p.Path != "internal/shmring" || !unsafeFileName(f.Name) {
					out = append(out, Violation{Package: p.Path, File: f.Name, Import: "syscall." + name,
						Rule: RuleRawSyscall})
				}
			}
		}
	}
	return out
}

// rel returns imp relative to Module, and whether imp is in the module.
func rel(imp string) (string, bool) {
	if imp == Module {
		return "", true
	}
	if r, ok := strings.CutPrefix(imp, Module+"/"); ok {
		return r, true
	}
	return "", false
}

// under reports whether path p is dir or inside it, element by element.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// provider returns "prov/X" for a path under prov/X, or "".
func provider(p string) string {
	rest, ok := strings.CutPrefix(p, "prov/")
	if !ok || rest == "" {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return "prov/" + name
}

// internal reports whether p has an "internal" element (Go's visibility rule).
func internal(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}

func isUnsafe(imp string) bool {
	return imp == "unsafe" || under(imp, "golang.org/x/sys")
}

func unsafeFileName(name string) bool {
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".go"), "_test")
	return strings.HasSuffix(base, "_unsafe") || strings.HasSuffix(base, "_linux")
}

func checkImport(pkg string, f File, imp string) string {
	if imp == "C" {
		return RuleCgo
	}
	if r, ok := rel(imp); ok && under(r, "cabi") {
		return RuleCgo
	}
	if pkg == "prov/sim" && f.Kind == Lib && simForbidden[imp] && !(imp == "net" && simXProcFile(f.Name)) {
		return RuleSimInMemory
	}
	if isUnsafe(imp) {
		switch {
		case pkg != "internal/sys" && pkg != "internal/shmring":
			return RuleUnsafePackage
		case !unsafeFileName(f.Name):
			return RuleUnsafeFileName
		}
		return ""
	}
	r, ok := rel(imp)
	if !ok {
		return ""
	}
	if r == "internal/testutil" {
		if f.Kind == Lib && pkg != "internal/testutil" {
			return RuleTestutilInTestsOnly
		}
		return "" // any test may use the shared test helpers
	}
	if f.Kind == XTest && r == pkg {
		return "" // an external test imports the package it tests
	}
	rootLike := r == "" || under(r, "fabtest")
	prov := provider(pkg)
	switch {
	case pkg == "":
		if f.Kind == XTest {
			if internal(r) {
				return RulePublicOnly
			}
			return ""
		}
		if provider(r) != "" {
			return RuleRootImportsProvider
		}
	case pkg == "provider":
		return RuleProviderLeaf
	case pkg == "peer":
		if r != "provider" {
			return RulePeerOnlyProvider
		}
	case prov != "":
		if o := provider(r); o != "" && o != prov && pkg != "prov/all" && !(layered(pkg) && f.Kind != Lib) {
			return RuleProviderCross
		}
		if f.Kind == XTest || layered(pkg) {
			if internal(r) && !under(r, prov) {
				return RulePublicOnly
			}
		}
		if rootLike && f.Kind != XTest && !(layered(pkg) && r == "") {
			// A layered provider reaches the providers below through
			// the root package's public API (lnx: and fi_peer(3);
			// chaos: fabric.OpenHooked).
			return RuleProviderImportsRoot
		}
	case internal(pkg):
		if provider(r) != "" || rootLike {
			return RuleInternalImportsUp
		}
	case under(pkg, "cmd"):
		if internal(r) {
			return RulePublicOnly
		}
	case under(pkg, "fabtest"):
		if provider(r) != "" && f.Kind != XTest {
			return RuleFabtestImportsProv
		}
	}
	return ""
}

// syscallUses returns the RawSyscalls names that af refers to as local.X,
// local being the name it imports package syscall under.
func syscallUses(af *ast.File, local string) []string {
	var out []string
	ast.Inspect(af, func(n ast.Node) bool {
		if se, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := se.X.(*ast.Ident); ok && id.Name == local && RawSyscalls[se.Sel.Name] {
				out = append(out, se.Sel.Name)
			}
		}
		return true
	})
	return out
}

type listed struct {
	ImportPath, Dir                                              string
	GoFiles, CgoFiles, IgnoredGoFiles, TestGoFiles, XTestGoFiles []string
}

// Load lists the module's packages with go list (run in dir, any directory
// of the module) and parses the imports of every Go file, those excluded by
// build constraints on this platform included.
func Load(dir string) ([]Package, error) {
	cmd := exec.Command("go", "list", "-json", Module+"/...")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var pkgs []Package
	var perr error
	dec := json.NewDecoder(out)
	for perr == nil {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			perr = err
			break
		}
		p, err := parsePackage(l)
		if err != nil {
			perr = err
			break
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.String())
	}
	return pkgs, perr
}

func parsePackage(l listed) (Package, error) {
	r, ok := rel(l.ImportPath)
	if !ok {
		return Package{}, fmt.Errorf("go list: %s is outside %s", l.ImportPath, Module)
	}
	p := Package{Path: r}
	fset := token.NewFileSet()
	for _, names := range [][]string{l.GoFiles, l.CgoFiles, l.IgnoredGoFiles, l.TestGoFiles, l.XTestGoFiles} {
		for _, name := range names {
			af, err := parser.ParseFile(fset, filepath.Join(l.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return Package{}, err
			}
			f := File{Name: name}
			switch {
			case !strings.HasSuffix(name, "_test.go"):
				f.Kind = Lib
			case strings.HasSuffix(af.Name.Name, "_test"):
				f.Kind = XTest
			default:
				f.Kind = Test
			}
			for _, is := range af.Imports {
				path, err := strconv.Unquote(is.Path.Value)
				if err != nil {
					return Package{}, err
				}
				f.Imports = append(f.Imports, path)
				if path == "syscall" {
					local := "syscall"
					if is.Name != nil {
						local = is.Name.Name
					}
					f.Syscalls = append(f.Syscalls, syscallUses(af, local)...)
				}
			}
			p.Files = append(p.Files, f)
		}
	}
	return p, nil
}
