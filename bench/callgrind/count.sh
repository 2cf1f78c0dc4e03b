#!/usr/bin/env bash
# User-space instructions per udp message round, Go (this module's
# main.go over our udp provider) and C (c/cdrv.c over the C libfabric's udp),
# counted by callgrind: each driver runs N and 2N rounds with collection
# only inside its measure* function, and the difference divided by N is one
# round. Deterministic to a few instructions (the loop runs in one
# goroutine; GC off, async preemption off), unlike wall-clock figures on a
# shared machine; kernel time is not counted.
#
#   bench/callgrind/count.sh
#
# Rows: inject (fi_recv + fi_inject + fi_cq_read), send (fi_recv + fi_send
# + fi_cq_read of both CQs), empty (one fi_cq_read poll of an empty CQ).
#
# env: N=10000 rounds; SIZE=64 message size; MODES="inject send empty";
#      KEEP=dir keeps the callgrind files (callgrind_annotate them).
# needs: valgrind, gcc, libfabric-dev (headers, -lfabric), the C udp provider.
set -eu
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
N=${N:-10000}
SIZE=${SIZE:-64}
MODES=${MODES:-"inject send empty"}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
OUT=${KEEP:-$TMP}
mkdir -p "$OUT"
for tool in valgrind gcc; do
	command -v "$tool" >/dev/null || { echo "count.sh: $tool not installed" >&2; exit 1; }
done
(cd "$DIR" && GOFLAGS=-mod=mod go build -o "$TMP/godrv" .)
gcc -O2 -g -o "$TMP/cdrv" "$DIR/c/cdrv.c" -lfabric

# collected BIN TOGGLE FILE ARGS...: instructions collected inside TOGGLE
collected() {
	local bin=$1 toggle=$2 file=$3
	shift 3
	valgrind --tool=callgrind --toggle-collect="$toggle" --callgrind-out-file="$file" "$bin" "$@" 2>&1 |
		sed -n 's/.*Collected : //p'
}

export FI_UDP_IFACE=lo GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1
printf '%-7s %8s %8s %7s\n' mode Go C Go/C
for m in $MODES; do
	g1=$(collected "$TMP/godrv" 'main.measure*' "$OUT/go.$m.1" -n "$N" -mode "$m" -size "$SIZE")
	g2=$(collected "$TMP/godrv" 'main.measure*' "$OUT/go.$m.2" -n $((2 * N)) -mode "$m" -size "$SIZE")
	c1=$(collected "$TMP/cdrv" 'measure_*' "$OUT/c.$m.1" "$N" "$m" "$SIZE")
	c2=$(collected "$TMP/cdrv" 'measure_*' "$OUT/c.$m.2" $((2 * N)) "$m" "$SIZE")
	g=$(((g2 - g1) / N))
	c=$(((c2 - c1) / N))
	printf '%-7s %8d %8d %7s\n' "$m" "$g" "$c" "$(awk -v g="$g" -v c="$c" 'BEGIN { printf "%.2f", g / c }')"
done
