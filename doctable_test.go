package fabric

import (
	"go/ast"
	"go/importer"
	"go/types"
	"os"
	"regexp"
	"strings"
	"testing"
)

// typeCheckRoot type-checks the non-test files of the root package.
func typeCheckRoot(t *testing.T) *types.Package {
	t.Helper()
	fset, files := parseDir(t, ".", 0)
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("github.com/gofabric/fabric", fset, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// mappingTable returns the lines of doc.go's "Mapping from libfabric
// calls" table, without the comment marker and the tab.
func mappingTable(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	in := false
	for _, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(l, "// # Mapping from libfabric calls") {
			in = true
			continue
		}
		if in && strings.HasPrefix(l, "//\t") {
			rows = append(rows, strings.TrimPrefix(l, "//\t"))
		}
	}
	if len(rows) < 40 {
		t.Fatalf("found only %d lines of the mapping table in doc.go", len(rows))
	}
	return rows
}

var (
	columnGap = regexp.MustCompile(`\S {2,}\S`)
	goName    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?`)
)

// Every Go name the mapping table of doc.go gives exists: a qualified
// X.Y is a field or method of the package's X; a bare name is a
// package-level name, or a field or method of the type last named in the
// same row (or, with no type named yet, of some type of the package). A
// rename therefore breaks this test, not the table.
func TestMappingTableNamesExist(t *testing.T) {
	pkg := typeCheckRoot(t)
	scope := pkg.Scope()
	member := func(typ types.Type, name string) bool {
		obj, _, _ := types.LookupFieldOrMethod(typ, true, pkg, name)
		return obj != nil
	}
	anyMember := func(name string) bool {
		for _, n := range scope.Names() {
			if tn, ok := scope.Lookup(n).(*types.TypeName); ok && member(tn.Type(), name) {
				return true
			}
		}
		return false
	}
	var ctx types.Type
	checked := 0
	for _, row := range mappingTable(t) {
		goCol := row
		if !strings.HasPrefix(row, " ") {
			ctx = nil // a new row
			loc := columnGap.FindStringIndex(row)
			if loc == nil {
				continue // the C names only; the Go names follow
			}
			goCol = row[loc[0]+1:]
		}
		for _, tok := range goName.FindAllString(goCol, -1) {
			if strings.Contains(tok, "_") || !ast.IsExported(tok) {
				continue // C names (FI_*), prose
			}
			checked++
			if typName, field, ok := strings.Cut(tok, "."); ok {
				tn, isType := scope.Lookup(typName).(*types.TypeName)
				if !isType {
					t.Errorf("mapping table: %s: %s is not a type of the package", tok, typName)
					continue
				}
				ctx = tn.Type()
				if !member(ctx, field) {
					t.Errorf("mapping table: %s has no field or method %s", typName, field)
				}
				continue
			}
			switch {
			case ctx != nil && member(ctx, tok):
			case scope.Lookup(tok) != nil:
			case ctx == nil && anyMember(tok):
			default:
				t.Errorf("mapping table: %q (in %q) names nothing in the package", tok, strings.TrimSpace(goCol))
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d names", checked)
	}
}
