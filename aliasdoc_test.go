package fabric

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
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

// A user reads an aliased vocabulary type with `go doc fabric X`, which
// shows only the alias's own comment: that comment names every value,
// field and user-facing method, so that nobody needs package provider.
func TestAliasDocsAreComplete(t *testing.T) {
	root := packageDoc(t, ".", "github.com/gofabric/fabric")
	prov := packageDoc(t, "provider", "github.com/gofabric/fabric/provider")
	aliasDoc := func(name string) string {
		for _, ty := range root.Types {
			if ty.Name == name {
				if ts, ok := ty.Decl.Specs[0].(*ast.TypeSpec); !ok || !ts.Assign.IsValid() {
					t.Fatalf("%s is not an alias", name)
				}
				return ty.Doc
			}
		}
		t.Fatalf("type %s not found in the root package", name)
		return ""
	}
	constsOf := func(name string) []string {
		var out []string
		for _, ty := range prov.Types {
			if ty.Name == name {
				for _, v := range ty.Consts {
					out = append(out, v.Names...)
				}
			}
		}
		if len(out) == 0 {
			t.Fatalf("provider.%s has no constants", name)
		}
		return out
	}
	want := map[string][]string{
		"AtomicOp": append(constsOf("AtomicOp"), "String", "Valid"),
		"Datatype": append(constsOf("Datatype"), "Size", "String", "Valid"),
	}
	for _, f := range reflect.VisibleFields(reflect.TypeOf(RMAIOC{})) {
		want["RMAIOC"] = append(want["RMAIOC"], f.Name)
	}
	mt := reflect.TypeOf(MRDesc(nil))
	for i := range mt.NumMethod() {
		if m := mt.Method(i).Name; m != "Registration" {
			want["MRDesc"] = append(want["MRDesc"], m+"(")
		}
	}
	for alias, names := range want {
		d := aliasDoc(alias)
		for _, n := range names {
			if !strings.Contains(d, n) {
				t.Errorf("the doc of %s does not mention %s", alias, n)
			}
		}
	}
	if !strings.Contains(root.Doc, "MRDesc is deliberately a pointer") {
		t.Error(`doc.go's API decisions do not say that an MRDesc is deliberately a pointer`)
	}
}
