#!/usr/bin/env bash
# The cost of the C<->Go crossings of the C plugin (cabi/, issue 8), in one
# run on one machine, on loopback:
#
#   bench/cabi.sh
#   bench/cabi.sh --summary raw.tsv...   (the table of earlier runs, pooled)
#
# For every configuration and size three pairs run with identical
# arguments, in rotating order (so that none always goes first):
#   C       libfabric's C fi_pingpong over the C provider (-p udp / tcp)
#   plugin  the same C fi_pingpong over our Go provider through the plugin
#           (-p goudp / gotcp, FI_PROVIDER_PATH = a fresh cabi/build.sh)
#   Go      our cmd/fi_pingpong over the Go provider directly (-p udp / tcp)
# The plugin and Go pairs run the same Go provider code; what differs is
# the harness (the C tool) and the cgo crossing of every call (fi_send,
# fi_recv, each fi_cq_read poll ...). So, per one-way transfer,
#     plugin - Go  = the crossings (plus the C harness's own cost; the
#                    C pair shows how cheap that harness is)
#     plugin - C   = what a C application pays for our provider over C's.
# Like bench/compare.sh (same method, same figures), every point is run
# with N/5 and N iterations and the setup-corrected steady-state one-way
# latency is reported:
#     usec = (T_N - T_N/5) / (2 * (N - N/5)),  T = usec/xfer * 2 * iterations.
# The table shows, per implementation, the median of that figure and, in
# parentheses, the minimum over the repetitions of the uncorrected usec/xfer
# of the N-iteration run: on a shared machine a busy-polling pair loses
# whole scheduler slices to other load, which inflates single points by
# 10-100x (and the correction, a difference of two runs, amplifies it); the
# minimum is then the better estimate of the quiet-machine figure (it keeps
# setup/N, a few hundredths of a usec, the same for all three). The
# differences are given for both.
#
# env:
#   REPS=3        repetitions of every point
#   ITERS=10000   iterations N for sizes <= 4 KiB (64 KiB: N/5; at least 10)
#   CONFIGS="udp/dgram tcp/msg"
#   SIZES="1 64 1024 4096 65536"   capped by each provider's limit (udp 1472)
#   OUT=dir       logs, raw.tsv, summary.txt (default /tmp/cabi-bench-<date>)
#   PORT_BASE=n   first control port (default: random in 20000-29999)
#   SETTLE=0.3    seconds between the server listening and the client start
set -u
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)

# summary RAW...: the table of raw.tsv files (pooled).
summary() {
	awk -F'\t' '
	function minv(key,    i, m) {
		m = raw[key, 1]
		for (i = 2; i <= cnt[key]; i++) if (raw[key, i] < m) m = raw[key, i]
		return m
	}
	function median(key,    n, i, j, v, a) {
		n = cnt[key]
		for (i = 1; i <= n; i++) a[i] = val[key, i]
		for (i = 2; i <= n; i++) {
			v = a[i]; j = i - 1
			while (j >= 1 && a[j] > v) { a[j + 1] = a[j]; j-- }
			a[j + 1] = v
		}
		if (n % 2) return a[(n + 1) / 2]
		return (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function f(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.2f", x) }
	FNR == 1 { next }
	{
		key = $1 SUBSEP $2 SUBSEP $3
		val[key, ++cnt[key]] = $6
		raw[key, cnt[key]] = $7
		if (!(($2 SUBSEP $3) in seen)) { seen[$2, $3] = 1; order[++no] = $2 SUBSEP $3 }
	}
	END {
		printf "one-way usec/xfer: setup-corrected median (minimum of the raw figure) over the repetitions\n"
		printf "%-10s %7s | %16s %16s %16s | %18s %18s | %4s\n", "config", "size", "C", "plugin", "Go", "plugin-Go", "plugin-C", "reps"
		for (k = 1; k <= no; k++) {
			split(order[k], p, SUBSEP)
			c = "C" SUBSEP order[k]; q = "plugin" SUBSEP order[k]; g = "Go" SUBSEP order[k]
			if (!(c in cnt) || !(q in cnt) || !(g in cnt)) continue
			cu = median(c); qu = median(q); gu = median(g)
			cm = minv(c); qm = minv(q); gm = minv(g)
			reps = cnt[c]; if (cnt[q] < reps) reps = cnt[q]; if (cnt[g] < reps) reps = cnt[g]
			printf "%-10s %7s | %7s (%6s) %7s (%6s) %7s (%6s) | %+8.2f (%+7.2f) %+8.2f (%+7.2f) | %4d\n", p[1], p[2],
				f(cu), f(cm), f(qu), f(qm), f(gu), f(gm), qu - gu, qm - gm, qu - cu, qm - cm, reps
		}
	}' "$@"
}

if [ "${1:-}" = --summary ]; then
	shift
	summary "$@"
	exit
fi

REPS=${REPS:-3}
ITERS=${ITERS:-10000}
CONFIGS=${CONFIGS:-"udp/dgram tcp/msg"}
SIZES=${SIZES:-"1 64 1024 4096 65536"}
OUT=${OUT:-/tmp/cabi-bench-$(date +%Y%m%d-%H%M%S)}
SETTLE=${SETTLE:-0.3}
PORT=${PORT_BASE:-$((20000 + RANDOM % 10000))}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
RAW=$OUT/raw.tsv

# name | provider | endpoint | extra env | max message size (0: none)
config_line() {
	case "$1" in
	udp/dgram) echo "udp|dgram||1472" ;;
	tcp/msg) echo "tcp|msg|FI_TCP_NODELAY=1|0" ;;
	*) return 1 ;;
	esac
}

C_PP=$(command -v fi_pingpong || true)
[ -n "$C_PP" ] || { echo "cabi.sh: the C fi_pingpong is not installed (libfabric-bin)" >&2; exit 1; }
GO_PP=$OUT/fi_pingpong-go
PLUGIN=$OUT/plugin
(cd "$ROOT" && go build -o "$GO_PP" ./cmd/fi_pingpong) || { echo "cabi.sh: go build failed" >&2; exit 1; }
"$ROOT/cabi/build.sh" "$PLUGIN" || { echo "cabi.sh: cabi/build.sh failed" >&2; exit 1; }

BASE_ENV=(FI_UDP_IFACE=lo FI_TCP_IFACE=lo FI_PROVIDER_PATH="$PLUGIN")

# is_listening, next_port, stop_pid, run_one: one fi_pingpong pair.
# shellcheck source=bench/pingpong_lib.sh
. "$BENCH_DIR/pingpong_lib.sh"

# point IMPL CFG PROV EP ENV SIZE N REP: two runs, corrected figure.
point() {
	local impl=$1 cfg=$2 prov=$3 ep=$4 envs=$5 size=$6 n=$7 rep=$8
	local n1=$((n / 5)) u1 u2 corr log bin=$C_PP p=$prov
	case "$impl" in
	plugin) p=go$prov ;;
	Go) bin=$GO_PP ;;
	esac
	log="$OUT/logs/$impl.${cfg//\//_}.$size.r$rep"
	u1=$(run_one "$bin" "$p" "$ep" "$envs" "$size" "$n1" "$log.n1") || return 1
	u2=$(run_one "$bin" "$p" "$ep" "$envs" "$size" "$n" "$log.n") || return 1
	corr=$(awk -v u1="$u1" -v u2="$u2" -v a="$n1" -v b="$n" \
		'BEGIN {c = (u2*2*b - u1*2*a) / (2*(b-a)); if (c <= 0) c = u2; printf "%.3f", c}')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$impl" "$cfg" "$size" "$rep" "$n" "$corr" "$u2" >>"$RAW"
	printf '  rep %s %-6s %-10s %8s B  %9s usec/xfer (raw %s)\n' "$rep" "$impl" "$cfg" "$size" "$corr" "$u2"
}

iters_for() {
	local s=$1 n
	if [ "$s" -le 4096 ]; then n=$ITERS; else n=$((ITERS / 5)); fi
	[ "$n" -lt 10 ] && n=10
	echo "$n"
}

sizes_for() {
	local max=$1 s out=""
	for s in $SIZES; do
		if [ "$max" -gt 0 ] && [ "$s" -gt "$max" ]; then
			[[ " $out " == *" $max "* ]] || out="$out $max"
			break
		fi
		out="$out $s"
	done
	echo $out
}

printf 'impl\tconfig\tsize\trep\titers\tusec\traw\n' >"$RAW"
echo "# cabi bench: $(date -Is) host=$(hostname) cpus=$(nproc) reps=$REPS iters=$ITERS out=$OUT"
echo "# C: $C_PP ($(dpkg-query -W -f='${Version}' libfabric-bin 2>/dev/null || echo '?'))  Go: $(go version | awk '{print $3}')"
echo "# loadavg: $(cat /proc/loadavg)"

fails=0
impls=(C plugin Go)
for rep in $(seq 1 "$REPS"); do
	for cfg in $CONFIGS; do
		line=$(config_line "$cfg") || { echo "cabi.sh: unknown config $cfg" >&2; exit 1; }
		IFS='|' read -r prov ep envs max <<<"$line"
		for size in $(sizes_for "$max"); do
			n=$(iters_for "$size")
			for k in 0 1 2; do # rotate the order with the repetition
				impl=${impls[$(((k + rep) % 3))]}
				point "$impl" "$cfg" "$prov" "$ep" "$envs" "$size" "$n" "$rep" || fails=$((fails + 1))
			done
		done
	done
done

echo
summary "$RAW" | tee "$OUT/summary.txt"
echo "# loadavg: $(cat /proc/loadavg)  failures: $fails  raw: $RAW"
[ "$fails" -eq 0 ]
