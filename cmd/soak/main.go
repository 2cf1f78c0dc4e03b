// Command soak prints gofabric's reliability figures, measured as it runs
// (issue 13), and exits 1 when one of them is not what it must be:
//
//  1. lossless: numbered messages (small ones, and every 16th 256 KiB)
//     between two FI_EP_RDM endpoints of tcp and of shm through the chaos
//     hook (error completions, delays, and reordering: the sender is
//     opened without FI_ORDER_SAS): sent, delivered, reported failed
//     (error completions), lost (must be 0) and duplicated (must be 0);
//  2. kills: a peer process receiving a stream of eager (4 KiB) or large
//     (8 MiB) messages stops progressing and is SIGKILLed with sends in
//     flight, over tcp RDM and shm: every send in flight must complete
//     within 5 s of the kill (max kill-to-last-completion printed), and
//     some in error (else the kill was not mid-transfer);
//  3. fuzz: each Fuzz target of the module (found in the packages'
//     _test.go files) run by go test -fuzz for a duration, with the
//     executions the engine reported; -keep copies the inputs the engine
//     kept in $GOCACHE/fuzz into the package's testdata/fuzz;
//  4. leaks: goroutines, open descriptors and the gofabric files in
//     /dev/shm, before and after parts 1 to 3 (must be equal; /dev/shm
//     is shared with other processes, so the must there is that no file
//     of this soak's endpoints or children is left).
//
// scripts/soak.sh runs it: the short mode (CI) for a few seconds a part,
// -long for minutes a part and 10 minutes a fuzz target.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gofabric/fabric/prov/chaos"
	_ "github.com/gofabric/fabric/prov/shm"
	_ "github.com/gofabric/fabric/prov/tcp"
)

func main() {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(childMain(spec))
	}
	var (
		long     = flag.Bool("long", false, "the long soak: -duration 2m -kills 10 -fuzztime 10m -keep")
		duration = flag.Duration("duration", 3*time.Second, "lossless run per provider")
		kills    = flag.Int("kills", 1, "kill rounds per provider and message size")
		fuzztime = flag.Duration("fuzztime", time.Second, "fuzzing per target (0: no fuzzing)")
		keep     = flag.Bool("keep", false, "copy the fuzz engine's new inputs into the packages' testdata/fuzz")
		root     = flag.String("root", ".", "the module's directory (for the fuzz targets)")
		seed     = flag.Uint64("seed", uint64(time.Now().UnixNano()), "chaos seed")
		errRate  = flag.Float64("error", 0.02, "chaos error completion rate")
		delay    = flag.Float64("delay", 0.02, "chaos delay rate (1 ms)")
		reorder  = flag.Float64("reorder", 0.02, "chaos reorder rate")
		provs    = flag.String("prov", "tcp,shm", "providers")
	)
	flag.Parse()
	if *long {
		*duration, *kills, *fuzztime, *keep = 2*time.Minute, 10, 10*time.Minute, true
	}
	start := time.Now()
	ok := true
	check := func(good bool) string {
		if good {
			return "ok"
		}
		ok = false
		return "FAIL"
	}
	warmUp()
	before := measure()
	var ours []string

	cfg := chaos.Config{Seed: *seed, Error: *errRate, Delay: *delay, DelayTime: time.Millisecond, Reorder: *reorder}
	fmt.Printf("== 1. no message lost under chaos (seed %d; error %g, delay %g, reorder %g: the sender has no FI_ORDER_SAS; %v per provider)\n",
		*seed, cfg.Error, cfg.Delay, cfg.Reorder, *duration)
	fmt.Printf("%-5s %9s %10s %9s %5s %5s %9s  %s\n", "prov", "sent", "delivered", "failed", "lost", "dup", "big", "chaos stats (errors/delayed/reordered)")
	for _, prov := range strings.Split(*provs, ",") {
		r, err := lossless(prov, cfg, *duration)
		ours = append(ours, r.names...)
		if err != nil {
			fmt.Printf("%-5s FAIL: %v\n", prov, err)
			ok = false
			continue
		}
		fmt.Printf("%-5s %9d %10d %9d %5d %5d %9d  %d/%d/%d in %v  %s\n", prov, r.sent, r.delivered, r.failed, r.lost, r.dup,
			r.bigSent, r.errors, r.delayed, r.reordered, r.elapsed.Round(time.Millisecond),
			check(r.lost == 0 && r.dup == 0 && r.sent > 0 && r.delivered+r.failed == r.sent))
	}

	fmt.Printf("== 2. peer kills survived (SIGKILL of a stalled receiver with sends in flight; %d per provider and size)\n", *kills)
	fmt.Printf("%-5s %-12s %5s %9s %11s %12s\n", "prov", "messages", "kills", "inflight", "err compl.", "kill->last")
	for _, prov := range strings.Split(*provs, ",") {
		for _, k := range []struct {
			kind         string
			size, window int
		}{{"eager 4KiB", 4 << 10, 256}, {"large 8MiB", 8 << 20, 4}} {
			r := killResult{prov: prov, kind: k.kind}
			var err error
			for range *kills {
				if err = killRound(prov, k.size, k.window, &r); err != nil {
					break
				}
			}
			ours = append(ours, r.regions...)
			if err != nil {
				fmt.Printf("%-5s %-12s FAIL: %v\n", prov, k.kind, err)
				ok = false
				continue
			}
			fmt.Printf("%-5s %-12s %5d %9d %11d %12v  %s\n", prov, k.kind, r.kills, r.inflight, r.errs,
				r.maxLatency.Round(time.Microsecond), check(r.kills == *kills && (r.kills == 0 || r.errs > 0) && r.maxLatency < 5*time.Second))
		}
	}

	if *fuzztime > 0 {
		fmt.Printf("== 3. hostile inputs per decoder, no crash (go test -fuzz, %v per target)\n", *fuzztime)
		ts, err := fuzzTargets(*root)
		if err != nil {
			fmt.Println("FAIL:", err)
			ok = false
		}
		var total int64
		failed := 0
		for _, t := range ts {
			r, err := runFuzz(*root, t, *fuzztime, os.Stdout)
			if err != nil {
				failed++
				fmt.Printf("%-32s %-18s FAIL: %v\n", strings.TrimPrefix(t.pkg, "github.com/gofabric/fabric/"), t.name, err)
				ok = false
				continue
			}
			total += r.execs
			kept := ""
			if *keep {
				n, err := keepCorpus(*root, t)
				if err != nil {
					kept = "keeping the corpus: " + err.Error() + " " + check(false)
				} else {
					kept = fmt.Sprintf("%d new corpus files kept", n)
				}
			}
			fmt.Printf("%-32s %-18s %12d execs in %6v  %s\n", strings.TrimPrefix(t.pkg, "github.com/gofabric/fabric/"), t.name,
				r.execs, r.elapsed.Round(100*time.Millisecond), kept)
		}
		fmt.Printf("%d targets, %d failed, %d executions %s\n", len(ts), failed, total, check(len(ts) > 0 && err == nil && failed == 0))
	}

	fmt.Println("== 4. resources before and after parts 1 to 3")
	after := settle(before, 5*time.Second)
	fmt.Printf("goroutines  %4d -> %4d  %s\n", before.goroutines, after.goroutines, check(after.goroutines == before.goroutines))
	fmt.Printf("open fds    %4d -> %4d  %s\n", before.fds, after.fds, check(after.fds == before.fds))
	var left []string
	for _, n := range ours {
		f := strings.TrimPrefix(strings.TrimRight(n, "\x00"), "fi_shm://")
		if strings.HasPrefix(f, "gofabric") && slices.Contains(after.shm, f) {
			left = append(left, f)
		}
	}
	fmt.Printf("/dev/shm    %4d -> %4d gofabric files; of this soak's %d regions %d left  %s\n",
		len(before.shm), len(after.shm), countShm(ours), len(left), check(len(left) == 0))
	if !slices.Equal(before.shm, after.shm) {
		fmt.Printf("            (the others come and go with other processes: %d new, %d gone)\n",
			len(diff(after.shm, before.shm)), len(diff(before.shm, after.shm)))
	}

	fmt.Printf("== soak %s in %v\n", map[bool]string{true: "passed", false: "FAILED"}[ok], time.Since(start).Round(100*time.Millisecond))
	if !ok {
		os.Exit(1)
	}
}

func countShm(names []string) int {
	n := 0
	for _, s := range names {
		if strings.HasPrefix(s, "fi_shm://") {
			n++
		}
	}
	return n
}

// diff is what a has that b has not.
func diff(a, b []string) []string {
	var d []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			d = append(d, s)
		}
	}
	return d
}
