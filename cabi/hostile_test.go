package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofabric/fabric/provider"
)

// TestHostileC runs testdata/hostile.c against each provider: every ops
// entry the C program can reach, called with bad input, must return what
// it expects (see the comment at the top of hostile.c) and the process
// must not crash. The codes are logged (go test -v) as a table.
func TestHostileC(t *testing.T) {
	dir := plugin(t)
	bin := compileC(t, "hostile.c")
	for _, p := range []string{"goudp", "gotcp"} {
		t.Run(p, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// FI_LOG_LEVEL=warn: an entry point that panicked (and answered
			// -FI_EOTHER through recoverRC) logs it, and that is a failure too.
			pr := start(t, ctx, append(env(dir), "FI_LOG_LEVEL=warn"), bin, p, filepath.Join(dir, "libgofabric.so"))
			err := pr.wait(ctx)
			res := parseHostile(pr.stdout())
			var table strings.Builder
			for _, r := range res.rows {
				mark := ""
				if !r.ok() {
					mark = "   <-- want " + r.want
				}
				fmt.Fprintf(&table, "%-40s %6d %s%s\n", r.name, r.rc, errName(r.rc), mark)
			}
			t.Logf("%d calls:\n%s", len(res.rows), table.String())
			if err != nil || ctx.Err() != nil || !res.done {
				crash := ""
				if res.pending != "" {
					crash = "; the last call, which did not return: " + res.pending
				}
				t.Fatalf("hostile %s did not finish (%v%s)\nstderr:\n%s", p, err, crash, pr.stderr())
			}
			for _, r := range res.rows {
				if !r.ok() {
					t.Errorf("%s returned %d %s, want %s", r.name, r.rc, errName(r.rc), r.want)
				}
			}
			if strings.Contains(pr.stderr(), "panic in C entry point") {
				t.Errorf("an entry point panicked (recovered):\n%s", pr.stderr())
			}
			for _, l := range res.bad {
				t.Errorf("malformed line %q", l)
			}
		})
	}
}

type hostileRow struct {
	name string
	rc   int64
	want string // a number, "neg", "le0" or "any"
}

func (r hostileRow) ok() bool {
	switch r.want {
	case "neg":
		return r.rc < 0
	case "le0":
		return r.rc <= 0
	case "any":
		return true
	}
	w, err := strconv.ParseInt(r.want, 10, 64)
	return err == nil && r.rc == w
}

type hostileResult struct {
	rows    []hostileRow
	pending string // a call announced ("> name") without its result
	done    bool
	bad     []string
}

func parseHostile(out string) hostileResult {
	var res hostileResult
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case len(f) == 1 && f[0] == "done":
			res.done = true
		case len(f) == 2 && f[0] == ">":
			res.pending = f[1]
		case len(f) == 3:
			rc, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || f[0] != res.pending {
				res.bad = append(res.bad, l)
				continue
			}
			res.pending = ""
			res.rows = append(res.rows, hostileRow{name: f[0], rc: rc, want: f[2]})
		default:
			res.bad = append(res.bad, l)
		}
	}
	return res
}

// errName names a negative fi errno (for the log).
func errName(rc int64) string {
	if rc >= 0 || rc < -1<<20 {
		return ""
	}
	return "(" + provider.StrError(int(-rc)) + ")"
}
