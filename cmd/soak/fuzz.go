package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// fuzzTarget is one Fuzz function of the module.
type fuzzTarget struct {
	pkg, dir, name string
}

// fuzzResult is one fuzz run.
type fuzzResult struct {
	fuzzTarget
	execs   int64
	elapsed time.Duration
}

var fuzzFunc = regexp.MustCompile(`(?m)^func (Fuzz[A-Za-z0-9_]+)\(\s*\w+ \*testing\.F\)`)

// fuzzTargets lists the Fuzz functions of the module's packages
// (go list from root, then the _test.go files of each package).
func fuzzTargets(root string) ([]fuzzTarget, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-f", "{{.ImportPath}} {{.Dir}}", "./...")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var ts []fuzzTarget
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, dir, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			for _, m := range fuzzFunc.FindAllSubmatch(src, -1) {
				ts = append(ts, fuzzTarget{pkg: pkg, dir: dir, name: string(m[1])})
			}
		}
	}
	return ts, nil
}

// execsLine is the fuzz engine's progress line, e.g.
// "fuzz: elapsed: 3s, execs: 123456 (41152/sec), new interesting: 2 (total: 14)".
var execsLine = regexp.MustCompile(`^fuzz: elapsed: \S+, execs: (\d+) `)

// runFuzz runs one target for d and returns the executions the engine
// reported last. A run that ends with "context deadline exceeded" and no
// failure (a known cmd/go flake when the duration ends while a worker
// minimizes) is run again, twice at most.
func runFuzz(root string, t fuzzTarget, d time.Duration, log io.Writer) (fuzzResult, error) {
	r := fuzzResult{fuzzTarget: t}
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), d+5*time.Minute) // the build included
		cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-fuzz", "^"+t.name+"$",
			"-fuzztime", d.String(), "-parallel", "2", t.pkg)
		cmd.Dir = root
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		cancel()
		r.elapsed = time.Since(start)
		r.execs = -1
		s := bufio.NewScanner(bytes.NewReader(out.Bytes()))
		for s.Scan() {
			if m := execsLine.FindStringSubmatch(s.Text()); m != nil {
				r.execs, _ = strconv.ParseInt(m[1], 10, 64)
			}
		}
		if err == nil {
			if r.execs < 0 {
				return r, fmt.Errorf("%s %s: no execution count in the output:\n%s", t.pkg, t.name, out.Bytes())
			}
			return r, nil
		}
		// The flake reports the target failed with nothing but the
		// deadline (as scripts/test.sh's fuzz smoke judges it).
		flake := bytes.Contains(out.Bytes(), []byte("context deadline exceeded"))
		if !flake || attempt >= 2 {
			return r, fmt.Errorf("%s %s: %v:\n%s", t.pkg, t.name, err, out.Bytes())
		}
		fmt.Fprintf(log, "   %s %s: engine timeout, not a finding; running again\n", t.pkg, t.name)
	}
}

// keepCorpus copies the inputs the fuzz engine keeps in
// $GOCACHE/fuzz/<package>/<target> into the package's
// testdata/fuzz/<target>, where go test runs them as seeds from then on.
// It returns how many files were new.
func keepCorpus(root string, t fuzzTarget) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "env", "GOCACHE").Output()
	if err != nil {
		return 0, fmt.Errorf("go env GOCACHE: %w", err)
	}
	from := filepath.Join(strings.TrimSpace(string(out)), "fuzz", t.pkg, t.name)
	to := filepath.Join(t.dir, "testdata", "fuzz", t.name)
	entries, err := os.ReadDir(from)
	if os.IsNotExist(err) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		dst := filepath.Join(to, e.Name())
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return n, err
		}
		if err := os.MkdirAll(to, 0o755); err != nil {
			return n, err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
