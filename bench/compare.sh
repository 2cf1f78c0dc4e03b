#!/usr/bin/env bash
# Side-by-side comparison of libfabric's C fi_pingpong and this project's
# cmd/fi_pingpong, in one run on one machine, on loopback.
#
#   bench/compare.sh
#
# For every configuration (provider/endpoint) both implement, and every size
# the provider allows, the C pair and the Go pair run with identical
# arguments, interleaved (C then Go, Go then C on the next repetition), so
# that both see the same machine conditions. fi_pingpong times connection
# setup inside its loop and has no warm-up, so every point is run twice,
# with N/5 and N iterations, and the figure reported is the steady-state
# one-way latency
#     usec = (T_N - T_N/5) / (2 * (N - N/5)),  T = usec/xfer * 2 * iterations
# (usec/xfer as printed: half a round trip), with MB/sec = size / usec
# (fi_pingpong's convention: both directions, decimal MB). The table shows
# the medians over the repetitions and the Go/C ratios: < 1 means Go is
# faster for usec/xfer, > 1 means Go is faster for MB/sec, and the paired
# ratio (the median over the repetitions of Go/C within one repetition,
# whose two points ran seconds apart, so that a change of the machine's
# speed between repetitions cancels out); then, with both
# tcp/msg and tcp/rdm measured, the rdm/msg ratio of each side per size
# (the cost of the RDM layer; CONFIGS="tcp/msg tcp/rdm" for just those). The same figures
# are drawn (bench/plot, a module of its own so that the library keeps its
# single dependency) into $OUT/compare.svg and $OUT/compare.png: latency and
# bandwidth against size, C and Go side by side, one row per configuration.
#
# env:
#   REPS=3            repetitions of every point
#   ITERS=10000       iterations N for sizes <= 4 KiB (64 KiB: N/5, 1 MiB: N/50;
#                     at least 10); the correction run uses N/5
#   CONFIGS="udp/dgram tcp/msg tcp/rdm shm/rdm"   configurations to try (see configs below);
#                     one that the Go library does not implement yet is skipped
#   SIZES="1 64 1024 4096 65536 1048576"   capped by each provider's limit
#   OUT=dir           logs and raw.tsv (default /tmp/compare-<date>)
#   PP_ARGS=""        more arguments for both tools of every pair (PP_ARGS="-m tagged":
#                     tagged messages instead of untagged)
#   C_PINGPONG=path   the C tool (default: fi_pingpong in PATH)
#   GO_PINGPONG=path  our tool (default: built from ./cmd/fi_pingpong)
#   PORT_BASE=n       first control port (default: random in 20000-29999)
#   SETTLE=0.3        seconds between the server listening and the client start
#   RT=0              1: both tools of every pair run under SCHED_FIFO (chrt -f 10;
#                     root), so that other processes' load on a shared machine does
#                     not enter the figures (two busy-polling processes own the
#                     two cores of this machine while a pair runs; the kernel's
#                     RT throttling leaves others 5%). Quote which mode you used.
#   PLOT=1            draw the plot (0: do not; the go command fetches
#                     gonum.org/v1/plot the first time)
#   PLOT_OUT="$OUT/compare.svg $OUT/compare.png"   plot files (.svg, .png, .pdf)
set -u
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)

REPS=${REPS:-3}
ITERS=${ITERS:-10000}
CONFIGS=${CONFIGS:-"udp/dgram tcp/msg tcp/rdm shm/rdm"}
SIZES=${SIZES:-"1 64 1024 4096 65536 1048576"}
OUT=${OUT:-/tmp/compare-$(date +%Y%m%d-%H%M%S)}
SETTLE=${SETTLE:-0.3}
PORT=${PORT_BASE:-$((20000 + RANDOM % 10000))}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd) # absolute: the builds and the plot run elsewhere
RAW=$OUT/raw.tsv
PLOT=${PLOT:-1}
PLOT_OUT=${PLOT_OUT:-"$OUT/compare.svg $OUT/compare.png"}
START=$(date -u '+%Y-%m-%d %H:%M UTC')

# name | provider | endpoint | extra env (both tools) | max message size
# (libfabric 1.17: udp 1472; tcp unlimited). FI_TCP_NODELAY=1 because the
# C tcp provider of 1.17 leaves Nagle on by default.
config_line() {
	case "$1" in
	udp/dgram) echo "udp|dgram||1472" ;;
	tcp/msg) echo "tcp|msg|FI_TCP_NODELAY=1|0" ;;
	tcp/rdm) echo "tcp|rdm|FI_TCP_NODELAY=1|0" ;;
	shm/rdm) echo "shm|rdm||0" ;;
	*) return 1 ;;
	esac
}

C_PP=${C_PINGPONG:-$(command -v fi_pingpong || true)}
if [ -z "$C_PP" ]; then
	echo "compare.sh: the C fi_pingpong is not installed (apt-get install libfabric-bin)" >&2
	exit 1
fi
GO_PP=${GO_PINGPONG:-}
if [ -z "$GO_PP" ]; then
	GO_PP=$OUT/fi_pingpong-go
	(cd "$ROOT" && go build -o "$GO_PP" ./cmd/fi_pingpong) || { echo "compare.sh: go build failed" >&2; exit 1; }
fi

BASE_ENV=(FI_UDP_IFACE=lo FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo)
RUN_PREFIX=()
if [ "${RT:-0}" = 1 ]; then
	RUN_PREFIX=(chrt -f 10)
	"${RUN_PREFIX[@]}" true || { echo "compare.sh: RT=1 needs chrt -f (root)" >&2; exit 1; }
fi

# is_listening, next_port, stop_pid, run_one: one fi_pingpong pair.
# shellcheck source=bench/pingpong_lib.sh
. "$BENCH_DIR/pingpong_lib.sh"

# point IMPL BIN CFG PROV EP ENV SIZE N REP: two runs, corrected figure.
point() {
	local impl=$1 bin=$2 cfg=$3 prov=$4 ep=$5 envs=$6 size=$7 n=$8 rep=$9
	local n1=$((n / 5)) u1 u2 corr mb log
	log="$OUT/logs/$impl.${cfg//\//_}.$size.r$rep"
	u1=$(run_one "$bin" "$prov" "$ep" "$envs" "$size" "$n1" "$log.n1") || return 1
	u2=$(run_one "$bin" "$prov" "$ep" "$envs" "$size" "$n" "$log.n") || return 1
	corr=$(awk -v u1="$u1" -v u2="$u2" -v a="$n1" -v b="$n" \
		'BEGIN {c = (u2*2*b - u1*2*a) / (2*(b-a)); if (c <= 0) c = u2; printf "%.3f", c}')
	mb=$(awk -v s="$size" -v c="$corr" 'BEGIN {printf "%.2f", s / c}')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$impl" "$cfg" "$size" "$rep" "$n" "$corr" "$mb" "$u2" >>"$RAW"
	printf '  rep %s %-3s %-10s %8s B  %9s usec/xfer (raw %s)  %10s MB/s\n' "$rep" "$impl" "$cfg" "$size" "$corr" "$u2" "$mb"
}

iters_for() {
	local s=$1 n
	if [ "$s" -le 4096 ]; then n=$ITERS
	elif [ "$s" -le 65536 ]; then n=$((ITERS / 5))
	else n=$((ITERS / 50))
	fi
	[ "$n" -lt 10 ] && n=10
	echo "$n"
}

# sizes_for MAX: SIZES capped by a provider limit (0 = none); the first
# size above the limit is replaced by the limit itself (udp: ... 1024 1472).
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

# go_supports PROV EP: our tool validates provider and endpoint type before
# it opens the control port: 61 (FI_ENODATA) means not implemented, a
# timeout waiting for a client means supported.
go_supports() {
	local rc
	next_port
	env "${BASE_ENV[@]}" "$GO_PP" -p "$1" -e "$2" -S 1 -B "$PORT" --timeout 0.05 >/dev/null 2>&1
	rc=$?
	[ "$rc" -ne 61 ]
}

printf 'impl\tconfig\tsize\trep\titers\tusec\tmbps\traw\n' >"$RAW"
echo "# compare: $(date -Is) host=$(hostname) cpus=$(nproc) reps=$REPS iters=$ITERS out=$OUT"
C_VER=$(dpkg-query -W -f='${Version}' libfabric-bin 2>/dev/null || echo '?')
GO_VER=$(go version 2>/dev/null | awk '{print $3}')
echo "# C: $C_PP ($C_VER)  Go: $GO_PP ($GO_VER)"
echo "# loadavg: $(cat /proc/loadavg)  RT=${RT:-0}"

declare -a RUN_CFGS=()
for cfg in $CONFIGS; do
	line=$(config_line "$cfg") || { echo "compare.sh: unknown config $cfg" >&2; exit 1; }
	IFS='|' read -r prov ep _ _ <<<"$line"
	if ! go_supports "$prov" "$ep"; then
		echo "# skipping $cfg: not implemented by the Go library yet"
		continue
	fi
	RUN_CFGS+=("$cfg")
done
[ ${#RUN_CFGS[@]} -gt 0 ] || { echo "compare.sh: nothing to compare" >&2; exit 1; }

# Every size in turn, all configurations at that size one after the
# other, so that the points compared (C and Go; X/msg and X/rdm) run within
# seconds of each other: this machine switches between a fast and a slow
# phase every few minutes, for both tools (see the paired ratios of
# compare_summary.sh).
ALL_SIZES=$(for cfg in "${RUN_CFGS[@]}"; do
	IFS='|' read -r _ _ _ max <<<"$(config_line "$cfg")"
	sizes_for "$max" | tr ' ' '\n'
done | sort -n -u)
fails=0
for rep in $(seq 1 "$REPS"); do
	for size in $ALL_SIZES; do
		for cfg in "${RUN_CFGS[@]}"; do
			IFS='|' read -r prov ep envs max <<<"$(config_line "$cfg")"
			[[ " $(sizes_for "$max") " == *" $size "* ]] || continue
			n=$(iters_for "$size")
			# alternate the order so that neither side always goes first
			if [ $((rep % 2)) -eq 1 ]; then
				point C "$C_PP" "$cfg" "$prov" "$ep" "$envs" "$size" "$n" "$rep" || fails=$((fails + 1))
				point Go "$GO_PP" "$cfg" "$prov" "$ep" "$envs" "$size" "$n" "$rep" || fails=$((fails + 1))
			else
				point Go "$GO_PP" "$cfg" "$prov" "$ep" "$envs" "$size" "$n" "$rep" || fails=$((fails + 1))
				point C "$C_PP" "$cfg" "$prov" "$ep" "$envs" "$size" "$n" "$rep" || fails=$((fails + 1))
			fi
		done
	done
done

echo
"$BENCH_DIR/compare_summary.sh" "$RAW" | tee "$OUT/summary.txt"
echo "# loadavg: $(cat /proc/loadavg)  failures: $fails  raw: $RAW"

# The plot module runs from its own directory (go run -C), so the plot
# files are made absolute first.
abs() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
plot_fail=0
if [ "$PLOT" != 0 ]; then
	plot_args=(-title "fi_pingpong, C libfabric $C_VER vs Go ($GO_VER): $(hostname), $(nproc) CPUs, $START")
	plot_files=()
	for f in $PLOT_OUT; do
		plot_files+=("$(abs "$f")")
		plot_args+=(-o "$(abs "$f")")
	done
	if GOWORK=off go run -C "$BENCH_DIR/plot" . "${plot_args[@]}" "$RAW" >"$OUT/logs/plot" 2>&1; then
		echo "# plot: ${plot_files[*]}"
	else
		plot_fail=1
		cat "$OUT/logs/plot" >&2
		echo "# plot: FAILED (results are in $RAW; PLOT=0 skips the plot)"
	fi
fi
[ "$fails" -eq 0 ] && [ "$plot_fail" -eq 0 ]
