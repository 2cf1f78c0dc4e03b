# Side-by-side table of one C provider and the Go provider that mirrors it,
# for one runfabtests.sh set, and the gate's verdict. mawk-compatible.
#
#   awk -v set=quick -v cprov=tcp -v goprov=gotcp -v ctime=196 -v gotime=150 \
#       -v havec=1 -v havego=1 -v viol=FILE -f compare.awk EXCLUDE CRES GORES
#
# EXCLUDE  scripts/fabtests/exclude.txt: "test | Go provider (or *) | reason"
# CRES     the C results: "test | C provider | result [| require: why]"
#          (the checked-in record's format); lines of other providers are
#          ignored
# GORES    the Go provider's results: "test|result" (parse.awk)
# havec, havego: 0 when that side did not run (its column shows "-").
# ctime, gotime: seconds, or "" when unknown.
#
# A row fails the gate (one line "set goprov: test: why" appended to viol) when
#   - the C provider passes it and ours fails it, or
#   - it is marked "require" (whatever C did: ours must pass it) and ours
#     does not pass it, or
#   - the C provider passes it and it is missing from our run (a run that
#     died or timed out part-way);
# unless the exclusion list names it for our provider. A notrun of ours
# where C passes is reported, not failed; mark the test "require" once our
# provider has the feature.

BEGIN { FS = "|" }

function trim(s) {
	gsub(/^[ \t]+/, "", s)
	gsub(/[ \t]+$/, "", s)
	return s
}

function add(t) {
	if (!(t in seen)) {
		seen[t] = 1
		order[++n] = t
	}
}

function count(col, r) {
	if (r == "pass") pass[col]++
	else if (r == "fail") fail[col]++
	else if (r == "notrun" || r == "excluded") notrun[col]++
}

function totals(col, have) {
	if (!have) return "-"
	return (pass[col] + 0) "/" (notrun[col] + 0) "/" (fail[col] + 0)
}

function row(a, b, c, d,   s) {
	s = sprintf("%-" w "s  %-8s %-8s %s", a, b, c, d)
	sub(/[ \t]+$/, "", s)
	print s
}

FILENAME == ARGV[1] {
	if ($0 ~ /^[ \t]*(#|$)/) next
	t = trim($1); p = trim($2)
	why = ""
	for (i = 3; i <= NF; i++) why = why (i > 3 ? "|" : "") $i
	why = trim(why)
	if (t == "" || p == "" || why == "") {
		printf "%s:%d: want \"test | provider | reason\": %s\n", FILENAME, FNR, $0 >> viol
		next
	}
	if (p == goprov || p == "*") excl[t] = why
	next
}

FILENAME == ARGV[2] {
	if ($0 ~ /^[ \t]*(#|$)/) next
	if (trim($2) != cprov) next
	t = trim($1)
	add(t)
	c[t] = trim($3)
	m = ""
	for (i = 4; i <= NF; i++) m = m (i > 4 ? "|" : "") $i
	m = trim(m)
	if (m ~ /^require/) {
		sub(/^require:?[ \t]*/, "", m)
		req[t] = (m == "" ? "marked require" : m)
	}
	next
}

FILENAME == ARGV[3] {
	t = trim($1)
	if (t == "") next
	add(t)
	g[t] = trim($2)
	next
}

END {
	w = 52
	for (i = 1; i <= n; i++) if (length(order[i]) > w) w = length(order[i])
	printf "\n== %s: %s (C) | %s (Go)\n", set, cprov, goprov
	row("test", cprov, goprov, "note")
	bad = 0
	for (i = 1; i <= n; i++) {
		t = order[i]
		cr = (t in c) ? c[t] : (havec ? "missing" : "-")
		gr = (t in g) ? g[t] : (havego ? "missing" : "-")
		count("c", cr); count("g", gr)
		note = ""; failed = ""
		if (t in excl) {
			note = "excluded: " excl[t]
			if (gr == "pass") note = note " (passes now: drop the exclusion?)"
		} else if (havego && (t in req) && gr != "pass") {
			failed = "required (" req[t] "), ours: " gr
		} else if (havego && cr == "pass" && gr == "fail") {
			failed = "passes for C, fails for ours"
		} else if (havego && cr == "pass" && gr == "missing") {
			failed = "passes for C, missing from our run"
		} else if (havego && havec && cr == "pass" && gr == "notrun") {
			note = "notrun for ours, passes for C"
		} else if (havec && cr == "missing") {
			note = "not in the C results"
		} else if (havego && gr == "pass" && (t in req)) {
			note = "required: passes"
		} else if (havego && havec && cr != "pass" && gr == "pass") {
			note = "passes for ours only"
		}
		if (failed != "") {
			note = "FAIL: " failed
			printf "%s %s: %s: %s\n", set, goprov, t, failed >> viol
			bad++
		}
		row(t, cr, gr, note)
	}
	row("total pass/notrun/fail", totals("c", havec), totals("g", havego), "")
	row("time (s)", (havec && ctime != "" ? ctime : "-"), (havego && gotime != "" ? gotime : "-"), "")
	if (havego) printf "gate %s %s: %s\n", set, goprov, (bad ? bad " failing" : "ok")
}
