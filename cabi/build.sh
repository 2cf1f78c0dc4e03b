#!/usr/bin/env bash
# Builds the C plugin into OUTDIR (default cabi/out): libgofabric.so (the Go
# providers, -buildmode=c-shared) and one shim lib<name>-fi.so per provider
# (goudp, gotcp ...; the names come from the Go registry: `go run .` prints
# them), linked to libgofabric.so with rpath $ORIGIN. Then
#   FI_PROVIDER_PATH=OUTDIR fi_info -l
# lists them. Needs gcc and libfabric-dev (rdma/*.h).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$here"
export CGO_ENABLED=1 GOWORK=off
# Asynchronous preemption off (GODEBUG=asyncpreemptoff=1 as the plugin's
# default; GODEBUG in the environment still overrides it): the runtime preempts
# a goroutine by signalling the thread that runs it, and a signal that lands
# on a thread of the C application makes its blocking calls on sockets with a
# timeout fail with EINTR even under SA_RESTART (signal(7)); fi_pingpong's
# control socket has SO_RCVTIMEO and failed so. Goroutines are still preempted
# at function calls. (//go:debug does not accept this setting.)
go build -buildmode=c-shared -ldflags=-X=runtime.godebugDefault=asyncpreemptoff=1 -o "$out/libgofabric.so" .
rm -f "$out/libgofabric.h"
CC=${CC:-gcc}
for name in $(go run .); do
	"$CC" -shared -fPIC -O2 -Wall -Werror -DGOFAB_PROV_NAME="\"$name\"" -o "$out/lib$name-fi.so" shim/shim.c \
		-L"$out" -lgofabric -Wl,-rpath,'$ORIGIN'
done
