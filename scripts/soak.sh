#!/usr/bin/env bash
# The soak (issue 13): prints the project's reliability figures, measured as
# it runs, and fails when one is not what it must be (see cmd/soak):
# messages under chaos on tcp RDM and shm (none lost, none duplicated),
# peer processes SIGKILLed with sends in flight (completions within 5 s),
# executions of every fuzz target with no crash, and goroutines, fds and
# /dev/shm files before and after.
#
#   scripts/soak.sh            short mode (CI): 3 s per provider, 1 kill per
#                              provider and size, 1 s per fuzz target; < 90 s
#   scripts/soak.sh --long     long mode: 2 min per provider, 10 kills per
#                              provider and size, 10 min per fuzz target
#                              (16 targets: about 3 hours), keeping the new
#                              corpus entries in the packages' testdata/fuzz
#
# Other arguments go to cmd/soak (-seed, -duration, -kills, -fuzztime, -keep).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
limit=300 # seconds: the short mode, with room for cold fuzz builds
for a in "$@"; do
	case "$a" in
	--long) args+=(-long); limit=$((4 * 3600)) ;;
	*) args+=("$a") ;;
	esac
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/soak" ./cmd/soak
# timeout ends the soak (by its PID) if it overruns its bound; the soak
# kills and reaps its own peer processes.
timeout --kill-after=10 "$limit" "$dir/soak" -root . "${args[@]}"
