#!/usr/bin/env bash
# bench/allock-stall.sh: the stall of the all-lock path.  A checkpoint's
# redo point and pg_switch_wal() take every active insertion lock
# exclusively (WALInsertLockAcquireExclusive()); with 1024 locks that
# writes some 2,000 cache lines where stock writes 22
# (bench/results/*-cachelines).  What do the other sessions feel?
#
#   bench/allock-stall.sh
#
# One cluster (made by the stock initdb, run by the stock and the patched
# server in turn), arms: stock PostgreSQL 18 and walscale at 8 (stock's
# number), 64, 256 and 1024 insertion locks (walscale.insert_locks, set at
# the server's start).  Each run: TRUNCATE + CHECKPOINT, then pgbench
# (CLIENTS clients of one-row INSERTs, synchronous_commit off, --log: every
# transaction's latency and end), while a separate session issues, every
# INTERVAL seconds from the second one on, CHECKPOINT and pg_switch_wal()
# in turn, each between two clock_timestamp() reads of the server, so that
# its start and end are on the clock of the pgbench log.  Each round runs
# every arm once, the order rotated by one from round to round.
#
# bench/allock_stall_report.py then splits each run's transactions:
# "at the start" those whose run overlaps [start, start + WINDOW_MS] of an
# operation, "away" those overlapping no [start - WINDOW_MS, end +
# WINDOW_MS]; per run and operation kind the p50, p99 and max latency of
# each; per arm the medians over the rounds and the ratios to stock.
#
# Writes BENCH_RESULTS (default bench/results/<YYYY-MM-DD>-<host>-allock-stall/):
# report.md, runs.csv (per run and kind), ops.csv (every operation),
# tps.csv, meta.env, and at-start.csv.gz (the transactions at an
# operation's start).  Every transaction's latency, some 30 MB at 30,000
# tps, stays in the scratch directory (latencies.csv.gz, the script's last
# line names it).
#
# Environment: STALL_CLIENTS (8), STALL_SECONDS (12), STALL_ROUNDS (5),
# STALL_INTERVAL (2), STALL_WINDOW_MS (50), STALL_ARMS ("stock 8 64 256
# 1024"); STALL_PG_PATCHED and STALL_PG_STOCK, both or neither, name the
# installations (walscale installed in the first; nothing is built), by
# default the cached builds of scripts/build-postgres.sh, built if missing;
# WALSCALE_CACHE as for every script.  About 8 minutes at the
# defaults on 2 cores.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$repo/bench/cluster.sh"

t_start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%FT%TZ)
clients=${STALL_CLIENTS:-8}
seconds=${STALL_SECONDS:-12}
rounds=${STALL_ROUNDS:-5}
interval=${STALL_INTERVAL:-2}
window_ms=${STALL_WINDOW_MS:-50}
arms=${STALL_ARMS:-stock 8 64 256 1024}
out=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$(hostname -s)-allock-stall}
cores=$(nproc)
jobs=$clients
[ "$jobs" -gt "$cores" ] && jobs=$cores

if [ -n "${STALL_PG_PATCHED:-}" ] && [ -n "${STALL_PG_STOCK:-}" ]; then
	# installations given: nothing is built or installed
	PG_PATCHED=$(readlink -f "$STALL_PG_PATCHED") PG_STOCK=$(readlink -f "$STALL_PG_STOCK")
else
	ensure_servers
	install_extension
fi
pg=$PG_STOCK
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain -- patches 'walscale*.c' 'walscale*.h' bench/allock-stall.sh bench/allock_stall_report.py 2>/dev/null | head -c1)
[ -n "$dirty" ] && commit="$commit (with uncommitted changes to the patches, walscale or this script)"

bench_cluster allock-stall 56300 $((clients + 20)) <<EOF
shared_buffers = 256MB
fsync = off
synchronous_commit = off
full_page_writes = off
checkpoint_timeout = 1d
max_wal_size = 8GB
autovacuum = off
log_min_messages = warning
include_if_exists = 'arm.conf'
EOF
cur_bin=
stop() {
	[ -n "$cur_bin" ] || return 0
	run "$cur_bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
	cur_bin=
}
trap 'stop 2>/dev/null || true' EXIT

# start the server of an arm: stock, or walscale at that many locks
start_arm() {
	local arm=$1 bin=$PG_PATCHED/bin
	stop
	if [ "$arm" = stock ]; then
		bin=$PG_STOCK/bin
		: >"$dir/arm.conf"
	else
		printf "shared_preload_libraries = 'walscale'\nwalscale.insert_locks = %s\n" "$arm" >"$dir/arm.conf"
	fi
	run cp "$dir/arm.conf" "$data/arm.conf"
	run "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w start >/dev/null ||
		{ tail -n 20 "$dir/server.log" >&2; exit 1; }
	cur_bin=$bin
	if [ "$arm" != stock ]; then
		local got i
		sql "CREATE EXTENSION IF NOT EXISTS walscale" >/dev/null 2>&1
		for i in $(seq 100); do
			got=$(sql "SELECT insert_locks FROM walscale_settings")
			[ "$got" = "$arm" ] && return 0
			sleep 0.1
		done
		echo "allock-stall: walscale_settings says $got locks, not $arm" >&2
		exit 1
	fi
}

start_arm 8
settings=$(sql "SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name) FROM pg_settings
	WHERE name IN ('shared_buffers', 'wal_buffers', 'fsync', 'synchronous_commit', 'full_page_writes',
		'checkpoint_timeout', 'max_wal_size', 'autovacuum', 'wal_segment_size', 'max_connections')")
sql "CREATE TABLE stall_t (a int8, b text)"
cat >"$dir/insert.sql" <<'EOF'
INSERT INTO stall_t VALUES (1, 'a row of some hundred bytes, as an OLTP row would be, and no more than that for the test');
EOF
mkdir -p "$dir/log"
chown -R "$run_user" "$dir/insert.sql" "$dir/log" 2>/dev/null || true

rm -rf "$out"
mkdir -p "$out"
echo "arm,round,op,start,end" >"$dir/ops.csv"
nops=$(( (seconds - 2) / interval ))
est=$(( rounds * $(echo $arms | wc -w) * (seconds + 6) ))
echo "== allock-stall: arms $arms, $rounds rounds of ${seconds}s runs, $clients clients, an all-lock operation every ${interval}s ($nops a run); ~$(( est / 60 )) min"

clock() { date +%s.%N; }
n=$(echo $arms | wc -w)
for r in $(seq "$rounds"); do
	# the arms rotated by r - 1
	order=$(echo $arms | tr ' ' '\n' | awk -v k=$(( (r - 1) % n )) -v n="$n" '{ a[NR - 1] = $0 } END { for (i = 0; i < n; i++) print a[(i + k) % n] }' | tr '\n' ' ')
	for arm in $order; do
		start_arm "$arm"
		sql "TRUNCATE stall_t" >/dev/null
		sql "CHECKPOINT" >/dev/null
		prefix="$dir/log/$arm-$r"
		run "$PG_STOCK/bin/pgbench" -h "$dir" -p "$port" -n -c "$clients" -j "$jobs" -T "$seconds" \
			-f "$dir/insert.sql" --log --log-prefix="$prefix" postgres >"$dir/pgbench-$arm-$r.out" 2>&1 &
		bpid=$!
		t0=$(clock)
		for i in $(seq "$nops"); do
			# sleep until t0 + i * interval
			sleep "$(awk -v t0="$t0" -v i="$i" -v iv="$interval" -v now="$(clock)" 'BEGIN { d = t0 + i * iv - now; printf "%.3f", (d > 0 ? d : 0) }')"
			if [ $((i % 2)) = 1 ]; then op=checkpoint stmt="CHECKPOINT"; else op=switch stmt="SELECT pg_switch_wal() IS NOT NULL"; fi
			t=$(run "$PG_STOCK/bin/psql" -X -q -At -h "$dir" -p "$port" -d postgres \
				-c "SELECT extract(epoch FROM clock_timestamp())" -c "$stmt" \
				-c "SELECT extract(epoch FROM clock_timestamp())" | grep -v '^t$' | paste -sd,)
			echo "$arm,$r,$op,$t" >>"$dir/ops.csv"
		done
		wait "$bpid" || { cat "$dir/pgbench-$arm-$r.out" >&2; exit 1; }
		tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$dir/pgbench-$arm-$r.out" | head -n 1)
		printf '[%s] round %s/%s  %-5s  %8.0f tps\n' "$(date -u +%T)" "$r" "$rounds" "$arm" "$tps"
		echo "$arm,$r,$tps" >>"$dir/tps.csv"
	done
done
stop

# every transaction: arm, round, end (s since the epoch, us), latency (us)
for f in "$dir"/log/*; do
	b=$(basename "$f")
	arm=${b%%-*}
	r=${b#*-}
	r=${r%%.*}
	awk -v a="$arm" -v r="$r" '{ printf "%s,%s,%s.%06d,%s\n", a, r, $5, $6, $3 }' "$f"
done | { echo "arm,round,end,latency_us"; cat; } | gzip -1 >"$dir/latencies.csv.gz"
cp "$dir/ops.csv" "$out/ops.csv"
{ echo "arm,round,tps"; cat "$dir/tps.csv"; } >"$out/tps.csv"

{
	echo "date=$(date -u +%F)"
	echo "started=$started"
	echo "host=$(hostname)"
	echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "cores=$cores"
	echo "kernel=$(uname -sr)"
	echo "pg_stock=$("$PG_STOCK/bin/postgres" --version) ($PG_STOCK)"
	echo "pg_patched=$("$PG_PATCHED/bin/postgres" --version) ($PG_PATCHED)"
	echo "patches=$(cat "$repo"/patches/pg18/*.patch | sha256sum | cut -c1-12)"
	echo "commit=$commit"
	echo "load_start=$load_start"
	echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "elapsed_s=$(( $(date +%s) - t_start ))"
	echo "arms=$arms"
	echo "rounds=$rounds"
	echo "seconds=$seconds"
	echo "clients=$clients"
	echo "jobs=$jobs"
	echo "interval=$interval"
	echo "window_ms=$window_ms"
	echo "settings=$settings"
	echo "workload=pgbench -n -c $clients -j $jobs -T $seconds --log: INSERT INTO stall_t VALUES (1, <text of 100 bytes>)"
	echo "command=bench/allock-stall.sh"
} >"$out/meta.env"
python3 "$repo/bench/allock_stall_report.py" "$out" "$dir/latencies.csv.gz"
echo "== every transaction: $dir/latencies.csv.gz ($(du -h "$dir/latencies.csv.gz" | cut -f1), left out of $out)"
echo "== done in $(( $(date +%s) - t_start ))s: $out/report.md"
