// Package archtest checks the module's layering rules (STYLE.md §1): the
// root package never imports providers, providers never import each other,
// and only internal/sys (and internal/shmring) import unsafe or x/sys/unix.
package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/gofabric/fabric"

type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
	Module     *struct{ Path string }
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", mod+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(out)
	var pkgs []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 3 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func TestLayering(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, mod), "/")
		for _, imp := range p.Imports {
			if imp == "unsafe" || strings.HasPrefix(imp, "golang.org/x/sys/unix") {
				if rel != "internal/sys" && rel != "internal/shmring" {
					t.Errorf("%s imports %s: only internal/sys and internal/shmring may", p.ImportPath, imp)
				}
			}
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			irel := strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/")
			switch {
			case rel == "" && strings.HasPrefix(irel, "prov/"):
				t.Errorf("root package imports provider %s", imp)
			case rel == "provider" && irel != "":
				t.Errorf("provider imports %s: it must be a leaf", imp)
			case rel == "peer" && irel != "provider":
				t.Errorf("peer imports %s: it may import only provider", imp)
			case strings.HasPrefix(rel, "prov/") && rel != "prov/all" && strings.HasPrefix(irel, "prov/") &&
				!strings.HasPrefix(irel, rel):
				t.Errorf("%s imports another provider %s", p.ImportPath, imp)
			case (rel == "prov/lnx" || strings.HasPrefix(rel, "cmd/")) && strings.HasPrefix(irel, "internal/"):
				t.Errorf("%s imports %s: it may use only public packages", p.ImportPath, imp)
			}
		}
	}
}
