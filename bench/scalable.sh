#!/usr/bin/env bash
# Message rate of a scalable endpoint's contexts used in parallel
# (fi_scalable_ep, issue 11): BenchmarkScalableMsgRate of each provider
# (fabtest.BenchScalable: transmit context i of one scalable endpoint sends
# 64-byte messages to receive context i of another, one goroutine per
# context pair, 64 in flight), with 1, 2 and 4 pairs.
#
#   bench/scalable.sh
#
# Each pair is one goroutine doing both sides, so one pair keeps one CPU
# busy and, with no lock or cache line shared between contexts on the data
# path, two pairs should give about twice the rate on a machine with two
# free CPUs; four pairs on two CPUs give no more than two. On a shared
# machine other processes take CPUs from the benchmark and hide that
# (a loaded 2-CPU machine gave ctx=1 and ctx=2 the same rate, at half a CPU
# each), so by default (RT=1, as root) every run is under SCHED_FIFO
# (chrt -f 10), as bench/compare.sh's RT mode; quote the mode you used.
#
# The table shows the median msgs/s over the repetitions and its ratio to
# ctx=1 of the same provider.
#
# env:
#   REPS=3                  repetitions of every point (in rotating order)
#   PROVIDERS="shm tcp udp" providers (udp: FI_EP_DGRAM; shm, tcp: FI_EP_RDM)
#   N=3000000               messages per run for shm (tcp and udp: N/10)
#   RT=1                    1: under SCHED_FIFO (needs root); 0: as is
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=${REPS:-3}
PROVIDERS=${PROVIDERS:-"shm tcp udp"}
N=${N:-3000000}
RT=${RT:-1}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

run=()
if [ "$RT" = 1 ]; then
	if [ "$(id -u)" != 0 ] || ! command -v chrt >/dev/null; then
		echo "scalable.sh: RT=1 needs root and chrt (RT=0 runs without)" >&2
		exit 1
	fi
	run=(chrt -f 10)
fi

for p in $PROVIDERS; do
	(cd "$ROOT" && CGO_ENABLED=0 go test -c -o "$TMP/$p.test" "./prov/$p")
done

# one PROVIDER CTX: one run's msgs/s
one() {
	local p=$1 c=$2 n=$N
	[ "$p" = shm ] || n=$((N / 10))
	"${run[@]}" "$TMP/$p.test" -test.run '^$' -test.bench "^BenchmarkScalableMsgRate/ctx=$c\$" \
		-test.benchtime "${n}x" 2>/dev/null | awk '/msgs\/s/ { for (i = 1; i < NF; i++) if ($(i+1) == "msgs/s") print $i }'
}

for rep in $(seq 1 "$REPS"); do
	for p in $PROVIDERS; do
		ctxs="1 2 4"
		[ $((rep % 2)) = 0 ] && ctxs="4 2 1"
		for c in $ctxs; do
			v=$(one "$p" "$c")
			[ -n "$v" ] || { echo "scalable.sh: $p ctx=$c produced no figure" >&2; exit 1; }
			printf '%s\t%s\t%s\n' "$p" "$c" "$v" >>"$TMP/raw.tsv"
		done
	done
done

printf '%-8s %5s %14s %8s\n' provider ctx 'msgs/s' 'x ctx=1'
for p in $PROVIDERS; do
	base=
	for c in 1 2 4; do
		med=$(awk -F'\t' -v p="$p" -v c="$c" '$1 == p && $2 == c { print $3 }' "$TMP/raw.tsv" | sort -g |
			awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		[ -n "$base" ] || base=$med
		printf '%-8s %5s %14.0f %8.2f\n' "$p" "$c" "$med" "$(awk -v a="$med" -v b="$base" 'BEGIN { print a / b }')"
	done
done
echo "# mode: RT=$RT, REPS=$REPS, $(nproc) CPUs, loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
