#!/usr/bin/env bash
# Summarise bench/compare.sh's raw.tsv: per configuration and size, the
# median setup-corrected usec/xfer and MB/sec of the C and the Go
# fi_pingpong over the repetitions, and the Go/C ratios.
#
#   bench/compare_summary.sh raw.tsv [raw2.tsv ...]   (files are pooled)
#
# Columns: usec/xfer and MB/sec medians (C, Go), Go/C ratios (usec: < 1 is
# Go faster; MB/s: > 1 is Go faster), the paired usec ratio "pair" (the
# median over the repetitions of Go/C of one repetition: compare.sh runs
# the two points of a repetition seconds apart, so a change of the
# machine's speed between repetitions cancels out; with files pooled, the
# repetitions of the same number in different files pair too), repetitions,
# and the median of the uncorrected usec/xfer fi_pingpong printed (raw).
# Then, for a provider measured as both X/msg and X/rdm (tcp), the rdm/msg
# ratios of the usec medians per size, ours and C's, with our paired one:
# what the RDM layer costs over the connection-oriented one.
set -u
[ $# -ge 1 ] || { echo "usage: $0 raw.tsv..." >&2; exit 2; }
awk -F'\t' '
function median(key, which,    n, i, j, v, a) {
	n = cnt[key]
	for (i = 1; i <= n; i++) a[i] = val[which, key, i]
	for (i = 2; i <= n; i++) {            # insertion sort (mawk has no asort)
		v = a[i]; j = i - 1
		while (j >= 1 && a[j] > v) { a[j + 1] = a[j]; j-- }
		a[j + 1] = v
	}
	if (n % 2) return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
# pmed: the median over the repetitions present in both of num[rep] /
# den[rep] (usec, by impl, config and size keys); 0 when none pair.
function pmed(nk, dk,    n, r, i, j, v, a) {
	n = 0
	for (r = 1; r <= maxrep; r++)
		if (((nk, r) in byrep) && ((dk, r) in byrep) && byrep[dk, r] > 0) a[++n] = byrep[nk, r] / byrep[dk, r]
	if (n == 0) return 0
	for (i = 2; i <= n; i++) {
		v = a[i]; j = i - 1
		while (j >= 1 && a[j] > v) { a[j + 1] = a[j]; j-- }
		a[j + 1] = v
	}
	if (n % 2) return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
function fmt(x) {
	if (x >= 100) return sprintf("%.0f", x)
	if (x >= 10) return sprintf("%.1f", x)
	return sprintf("%.2f", x)
}
function human(n) {
	if (n >= 1048576 && n % 1048576 == 0) return (n / 1048576) "M"
	if (n >= 1024 && n % 1024 == 0) return (n / 1024) "K"
	return n
}
FNR == 1 { next }
NF >= 8 {
	key = $1 SUBSEP $2 SUBSEP $3
	i = ++cnt[key]
	val["u", key, i] = $6; val["m", key, i] = $7; val["r", key, i] = $8
	byrep[key, $4] = $6
	if ($4 > maxrep) maxrep = $4
	if (!(($2 SUBSEP $3) in seen)) { seen[$2, $3] = 1; order[++norder] = $2 SUBSEP $3 }
}
END {
	printf "%-10s %8s | %10s %10s %7s %6s | %10s %10s %7s | %4s | %9s %9s\n",
		"config", "size", "C usec", "Go usec", "Go/C", "pair", "C MB/s", "Go MB/s", "Go/C", "reps", "C raw", "Go raw"
	for (k = 1; k <= norder; k++) {
		split(order[k], p, SUBSEP)
		c = "C" SUBSEP order[k]; g = "Go" SUBSEP order[k]
		if (!(c in cnt) || !(g in cnt)) continue
		cu = median(c, "u"); gu = median(g, "u")
		cm = median(c, "m"); gm = median(g, "m")
		cr = median(c, "r"); gr = median(g, "r")
		reps = cnt[c] < cnt[g] ? cnt[c] : cnt[g]
		printf "%-10s %8s | %10s %10s %7.2f %6.2f | %10s %10s %7.2f | %4d | %9s %9s\n",
			p[1], human(p[2]), fmt(cu), fmt(gu), gu / cu, pmed(g, c), fmt(cm), fmt(gm), (cm > 0 ? gm / cm : 0), reps, fmt(cr), fmt(gr)
	}
	# The cost of the RDM layer over the MSG layer of one provider: for
	# every provider with both X/msg and X/rdm rows, the ratio of the
	# usec medians per size, ours and C'"'"'s (< 1.1 is the goal for ours).
	hdr = 0
	for (k = 1; k <= norder; k++) {
		split(order[k], p, SUBSEP)
		if (p[1] !~ /\/rdm$/) continue
		m = p[1]; sub(/\/rdm$/, "/msg", m)
		gr = "Go" SUBSEP p[1] SUBSEP p[2]; gm = "Go" SUBSEP m SUBSEP p[2]
		cr = "C" SUBSEP p[1] SUBSEP p[2]; cm = "C" SUBSEP m SUBSEP p[2]
		if (!(gr in cnt) || !(gm in cnt)) continue
		if (!hdr) {
			printf "\n%-10s %8s | %10s %10s %7s %6s | %10s %10s %7s\n", "rdm/msg", "size", "Go msg", "Go rdm", "Go r/m", "pair", "C msg", "C rdm", "C r/m"
			hdr = 1
		}
		gu = median(gr, "u"); gmu = median(gm, "u")
		if ((cr in cnt) && (cm in cnt)) {
			cu = median(cr, "u"); cmu = median(cm, "u")
			printf "%-10s %8s | %10s %10s %7.2f %6.2f | %10s %10s %7.2f\n", p[1], human(p[2]), fmt(gmu), fmt(gu), gu / gmu, pmed(gr, gm), fmt(cmu), fmt(cu), cu / cmu
		} else {
			printf "%-10s %8s | %10s %10s %7.2f %6.2f | %10s %10s %7s\n", p[1], human(p[2]), fmt(gmu), fmt(gu), gu / gmu, pmed(gr, gm), "-", "-", "-"
		}
	}
}' "$@"
