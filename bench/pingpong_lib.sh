# shellcheck shell=bash
# Shared by bench/compare.sh and bench/cabi.sh (sourced, not run): one
# fi_pingpong pair on loopback. The caller sets PORT (the last port used),
# BASE_ENV (an array of NAME=value for both processes) and SETTLE (seconds
# between the server listening and the client start); RUN_PREFIX (an array,
# optional) goes before both commands, e.g. (chrt -f 10).

# is_listening PORT: something listens on TCP PORT (from /proc, so that we
# do not consume the server's only accept by probing it).
is_listening() {
	local hex
	hex=$(printf ':%04X' "$1")
	awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p {f = 1} END {exit !f}' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

next_port() {
	PORT=$((PORT + 1))
	[ "$PORT" -ge 32000 ] && PORT=20001
	while is_listening "$PORT"; do PORT=$((PORT + 1)); done
}

# stop_pid PID GRACE: wait up to GRACE s for our server, then TERM/KILL it
# (that PID only).
stop_pid() {
	local pid=$1 grace=$2 i
	for ((i = 0; i < grace * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return $?; }
		sleep 0.05
	done
	echo "  server $pid still running after ${grace}s: TERM" >&2
	kill -TERM "$pid" 2>/dev/null
	sleep 0.5
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 1
}

# run_one BIN PROV EP ENV SIZE ITERS LOG -> prints the client's usec/xfer,
# or fails. Server and client are the same binary with the same arguments.
run_one() {
	local bin=$1 prov=$2 ep=$3 envs=$4 size=$5 n=$6 log=$7 tmo spid i rc
	next_port
	tmo=$((30 + n / 100))
	local -a e=("${RUN_PREFIX[@]}" env "${BASE_ENV[@]}" $envs)
	local -a args=(-p "$prov" -e "$ep" -S "$size" -I "$n")
	# PP_ARGS: more arguments for both tools (say -m tagged).
	# shellcheck disable=SC2206
	[ -n "${PP_ARGS:-}" ] && args+=($PP_ARGS)
	timeout -k 2 "$tmo" "${e[@]}" "$bin" "${args[@]}" -B "$PORT" </dev/null >"$log.server" 2>&1 &
	spid=$!
	for ((i = 0; i < 500; i++)); do
		is_listening "$PORT" && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.01
	done
	if ! is_listening "$PORT"; then
		echo "  server did not listen on port $PORT (see $log.server)" >&2
		stop_pid "$spid" 0
		return 1
	fi
	sleep "$SETTLE"
	timeout -k 2 "$tmo" "${e[@]}" "$bin" "${args[@]}" -P "$PORT" 127.0.0.1 </dev/null >"$log.client" 2>&1
	rc=$?
	stop_pid "$spid" 5 || rc=${rc:-1}
	[ "$rc" -eq 0 ] || { echo "  FAIL rc=$rc: $bin ${args[*]} (see $log.*)" >&2; return 1; }
	awk '$1 ~ /^[0-9]/ && NF == 8 {u = $7} END {if (u == "") exit 1; print u}' "$log.client"
}
