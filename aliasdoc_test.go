package fabric

import (
	"go/ast"
	"go/constant"
	"go/doc"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string, mode parser.Mode) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, mode)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// packageDoc parses the non-test files of dir with their comments.
func packageDoc(t *testing.T, dir, path string) *doc.Package {
	t.Helper()
	fset, files := parseDir(t, dir, parser.ParseComments)
	p, err := doc.NewFromFiles(fset, files, path, doc.AllDecls)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// aliasInfo is an alias type declared in package fabric or peer, with
// the comment go doc shows for it.
type aliasInfo struct {
	pkg, name, doc string
	typ            types.Type // the aliased type
}

// rootConst is a constant of package fabric with its comment.
type rootConst struct {
	obj     *types.Const
	comment string // doc comment and trailing comment, joined
}

// aliasesAndConsts type-checks packages fabric and peer and returns their
// alias types and fabric's constants.
func aliasesAndConsts(t *testing.T) ([]aliasInfo, map[string]rootConst) {
	t.Helper()
	var aliases []aliasInfo
	consts := map[string]rootConst{}
	for _, pk := range []struct{ dir, path string }{
		{".", "github.com/gofabric/fabric"},
		{"peer", "github.com/gofabric/fabric/peer"},
	} {
		fset, files := parseDir(t, pk.dir, parser.ParseComments)
		conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
		tp, err := conf.Check(pk.path, fset, files, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, sp := range gd.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if !sp.Assign.IsValid() || !sp.Name.IsExported() {
							continue
						}
						doc := sp.Doc
						if doc == nil && len(gd.Specs) == 1 {
							doc = gd.Doc
						}
						aliases = append(aliases, aliasInfo{pkg: pk.dir, name: sp.Name.Name, doc: doc.Text(),
							typ: types.Unalias(tp.Scope().Lookup(sp.Name.Name).Type())})
					case *ast.ValueSpec:
						if gd.Tok != token.CONST || pk.dir != "." {
							continue
						}
						for _, n := range sp.Names {
							if c, ok := tp.Scope().Lookup(n.Name).(*types.Const); ok && n.IsExported() {
								comment := sp.Doc.Text() + sp.Comment.Text()
								if !gd.Lparen.IsValid() {
									comment += gd.Doc.Text() // const X = ...
								}
								consts[n.Name] = rootConst{obj: c, comment: comment}
							}
						}
					}
				}
			}
		}
	}
	return aliases, consts
}

// sameNamed reports whether t is the named type n (the packages are
// type-checked separately, so their types.Type values differ).
func sameNamed(t types.Type, n *types.Named) bool {
	tn, ok := types.Unalias(t).(*types.Named)
	return ok && tn.Obj().Name() == n.Obj().Name() && tn.Obj().Pkg().Path() == n.Obj().Pkg().Path()
}

// notReexported lists the constants of package provider that package
// fabric deliberately leaves out, and why.
var notReexported = map[string]string{
	"CompletionLevels":  "a mask of the Flag*Complete levels, for the root's checks",
	"ReportedCompFlags": "a mask of the flags completions report, for providers",
	"DomainCaps":        "a mask of the domain-level Cap* bits, for GetInfo's checks",
	"ModeAll":           "a mask of every Mode* bit, for GetInfo's checks",
	"ErrnoMax":          "the bound of the errno tables",
	"MRBasicMap":        "OFI_MR_BASIC_MAP, libfabric-internal (MRVirtAddr|MRAllocated|MRProvKey)",
	"EPSockStream":      "FI_EP_SOCK_STREAM, not offered by any provider here",
	"EPSockDgram":       "FI_EP_SOCK_DGRAM, not offered by any provider here",
	"SockAddrIB":        "FI_SOCKADDR_IB: InfiniBand, not offered here",
	"AddrPSMX":          "the address formats of fabrics with no provider here",
	"AddrGNI":           "", "AddrBGQ": "", "AddrMLX": "", "AddrIBUD": "", "AddrEFA": "",
	"AddrPSMX2": "", "AddrOPX": "", "AddrCXI": "", "AddrPSMX3": "",
}

// reexported reports whether package fabric has a constant of type n with
// c's value.
func reexported(consts map[string]rootConst, c *types.Const, n *types.Named) bool {
	for _, rc := range consts {
		if sameNamed(rc.obj.Type(), n) && constant.Compare(rc.obj.Val(), token.EQL, c.Val()) {
			return true
		}
	}
	return false
}

var wordRE = map[string]*regexp.Regexp{}

// mentions reports whether text names name as a whole word.
func mentions(text, name string) bool {
	re, ok := wordRE[name]
	if !ok {
		re = regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
		wordRE[name] = re
	}
	return re.MatchString(text)
}

// A user reads an aliased vocabulary type with `go doc fabric X` (or
// `go doc peer X`), which shows only the alias's own comment. So that
// nobody needs package provider, the comment of every alias of a type of
// another package names each exported field and method of the type, and
// each exported constant of the type that package fabric re-exports,
// unless that constant has a comment of its own. An alias in package peer
// may instead send the reader to package fabric's alias of the same type
// ("fabric.CQEntry"), which this test holds to the same rule.
func TestAliasDocsAreComplete(t *testing.T) {
	aliases, consts := aliasesAndConsts(t)
	rootAlias := map[string]aliasInfo{}
	for _, a := range aliases {
		if a.pkg == "." {
			rootAlias[a.name] = a
		}
	}
	checked := 0
	for _, a := range aliases {
		named, ok := a.typ.(*types.Named)
		if !ok || named.Obj().Pkg() == nil || !strings.HasSuffix(named.Obj().Pkg().Path(), "/provider") {
			continue // an alias within the package (RecvMsg = Msg) documents itself
		}
		where := a.name
		if a.pkg != "." {
			where = a.pkg + "." + a.name
			if ra, ok := rootAlias[named.Obj().Name()]; ok && mentions(a.doc, "fabric."+ra.name) && sameNamed(ra.typ, named) {
				continue // delegated to fabric's alias, checked on its own
			}
		}
		checked++
		var want []string
		if st, ok := named.Underlying().(*types.Struct); ok {
			for i := range st.NumFields() {
				if f := st.Field(i); f.Exported() {
					want = append(want, f.Name())
				}
			}
		}
		ms := types.NewMethodSet(types.NewPointer(named))
		if types.IsInterface(named) {
			ms = types.NewMethodSet(named)
		}
		for i := range ms.Len() {
			if m := ms.At(i).Obj(); m.Exported() && !(a.name == "MRDesc" && m.Name() == "Registration") {
				want = append(want, m.Name())
			}
		}
		for _, n := range want {
			if !mentions(a.doc, n) {
				t.Errorf("the doc of %s does not mention %s", where, n)
			}
		}
		// The exported constants of the type in its own package reach the
		// user only through a constant of package fabric or the alias doc.
		if a.pkg == "." {
			for _, n := range named.Obj().Pkg().Scope().Names() {
				c, ok := named.Obj().Pkg().Scope().Lookup(n).(*types.Const)
				if !ok || !c.Exported() || !sameNamed(c.Type(), named) || mentions(a.doc, n) {
					continue
				}
				if _, ok := notReexported[n]; !ok && !reexported(consts, c, named) {
					t.Errorf("%s.%s (%s) has no constant in package fabric and the doc of %s does not mention it",
						named.Obj().Pkg().Name(), n, named.Obj().Name(), where)
				}
			}
		}
		for name, c := range consts {
			if sameNamed(c.obj.Type(), named) && !mentions(a.doc, name) && strings.TrimSpace(c.comment) == "" {
				t.Errorf("constant %s (%s) has no comment and the doc of %s does not mention it", name, named.Obj().Name(), where)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("checked only %d aliases", checked)
	}
	root := packageDoc(t, ".", "github.com/gofabric/fabric")
	if !strings.Contains(root.Doc, "MRDesc is deliberately a pointer") {
		t.Error(`doc.go's API decisions do not say that an MRDesc is deliberately a pointer`)
	}
}

// Every exported constant of package fabric has a comment (its own, a
// trailing one, or its block's): go doc shows the constant's line, and
// "= provider.FlagAffinity" alone tells a user nothing.
func TestRootConstantsDocumented(t *testing.T) {
	_, consts := aliasesAndConsts(t)
	for name, c := range consts {
		if strings.TrimSpace(c.comment) == "" {
			t.Errorf("constant %s has no comment of its own", name)
		}
	}
}
